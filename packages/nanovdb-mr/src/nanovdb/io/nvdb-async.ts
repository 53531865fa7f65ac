import { unwrap, type Backend } from '@hs/streams';
import type { ResourceBuffer } from '../../resource-buffer.js';
import type { SyncResource } from '../../resource.js';
import type { GridHandle } from '../grid/grid-handle.js';
import { bytesArgumentProblem } from '../grid/grid-validation.js';
import { deflateToBlosc, inflateBloscSegments } from './nvdb-blosc.js';
import { decodeNvdb, type NvdbSegment } from './nvdb-codec.js';
import { readNvdb, writeNvdb } from './nvdb-io.js';
import { checkWriterCodec, type NvdbCodec } from './nvdb-segment.js';

/**
 * `decodeNvdb` for files of any codec, BLOSC included: BLOSC payloads are decoded by a WebAssembly c-blosc (the
 * `numcodecs` package, imported on first use), then every segment is validated as `decodeNvdb` does.
 * @throws (rejects with) HsError: InvalidArgument when `file` is not a Uint8Array or naming the segment, grid and field
 *   of a bad header, BLOSC chunk or grid; NotSupported when numcodecs cannot be loaded or a grid type has no layout.
 * Spec: NANOVDB-FORMAT.md ".nvdb files"; issue 23 item 3 (BLOSC).
 *
 * @example
 * ```ts
 * import { HostBackend, unwrap } from '@hs/streams';
 * import { GridType, HostResource, decodeNvdbAsync, voxelsToGrid, writeNvdbAsync } from '@hs/nanovdb-mr';
 *
 * const backend = new HostBackend();
 * const grid = unwrap(voxelsToGrid(backend, new HostResource(backend), { coords: new Int32Array([0, 0, 0]), values: new Float32Array([2]) }, { gridType: GridType.Float, name: 'smoke' }));
 * const file = await writeNvdbAsync(grid, 'blosc'); // e.g. the contents of a BLOSC-compressed .nvdb from NanoVDB
 * grid.dispose();
 * const [segment] = await decodeNvdbAsync(file); // BLOSC decoded by c-blosc in WebAssembly, then validated
 * console.log(`${segment?.grids.length} grid '${segment?.grids[0]?.name}', ${segment?.bytes.length} bytes decoded from ${file.length}`);
 * ```
 */
export async function decodeNvdbAsync(file: Uint8Array): Promise<NvdbSegment[]> {
  const notBytes = bytesArgumentProblem('decodeNvdbAsync', file);
  if (notBytes !== null) throw notBytes.error;
  const plain = await inflateBloscSegments(file);
  return unwrap(decodeNvdb(plain)); // a failed Result rejects with its HsError
}

/**
 * `readNvdb` for files of any codec, BLOSC included (see `decodeNvdbAsync`): one `GridHandle` per segment in a buffer
 * from `resource` (host-accessible). Rejects with the errors of `decodeNvdbAsync` and `readNvdb`; nothing is left
 * allocated on failure.
 *
 * @example
 * ```ts
 * import { HostBackend, unwrap } from '@hs/streams';
 * import { GridType, HostResource, readNvdbAsync, voxelsToGrid, writeNvdbAsync } from '@hs/nanovdb-mr';
 *
 * const backend = new HostBackend();
 * const host = new HostResource(backend);
 * const built = unwrap(voxelsToGrid(backend, host, { coords: new Int32Array([4, 4, 4]), values: new Float32Array([0.75]) }, { gridType: GridType.Float }));
 * const file = await writeNvdbAsync(built, 'blosc'); // e.g. readFileSync('smoke-blosc.nvdb')
 * built.dispose();
 * const [handle] = await readNvdbAsync(backend, host, file); // any codec, BLOSC included
 * if (handle === undefined) throw new Error('empty file');
 * console.log(`value at (4,4,4): ${unwrap(handle.accessor()).getValue(4, 4, 4)}`);
 * handle.dispose();
 * ```
 */
export async function readNvdbAsync(backend: Backend, resource: SyncResource, file: Uint8Array): Promise<GridHandle<ResourceBuffer<SyncResource, Uint8ArrayConstructor>>[]> {
  const notBytes = bytesArgumentProblem('readNvdbAsync', file);
  if (notBytes !== null) throw notBytes.error;
  const plain = await inflateBloscSegments(file);
  return unwrap(readNvdb(backend, resource, plain));
}

/**
 * `writeNvdb` with every codec, BLOSC included: BLOSC payloads are compressed as NanoVDB writes them (c-blosc through
 * WebAssembly, level 9, byte shuffle, LZ4, 256 KiB blocks, chunks of at most 1 GiB), so NanoVDB built with BLOSC reads
 * them. Rejects with the errors of `writeNvdb`, InvalidArgument for a codec that is not 'none', 'zip' or 'blosc', or
 * NotSupported when numcodecs cannot be loaded.
 *
 * @example
 * ```ts
 * import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
 * import { tmpdir } from 'node:os';
 * import { join } from 'node:path';
 * import { HostBackend, unwrap } from '@hs/streams';
 * import { GridType, HostResource, voxelsToGrid, writeNvdbAsync } from '@hs/nanovdb-mr';
 *
 * const backend = new HostBackend();
 * const host = new HostResource(backend);
 * const coords = new Int32Array([0, 0, 0, 1, 0, 0]);
 * const density = unwrap(voxelsToGrid(backend, host, { coords, values: new Float32Array([0.5, 1]) }, { gridType: GridType.Float, name: 'density' }));
 * const temperature = unwrap(voxelsToGrid(backend, host, { coords, values: new Float32Array([300, 320]) }, { gridType: GridType.Float, name: 'temperature' }));
 * const dir = mkdtempSync(join(tmpdir(), 'nvdb-'));
 * const path = join(dir, 'smoke.nvdb');
 * writeFileSync(path, await writeNvdbAsync([density, temperature], 'blosc')); // as NanoVDB built with BLOSC writes it
 * console.log(`smoke.nvdb: ${statSync(path).size} bytes for ${density.sizeBytes + temperature.sizeBytes} bytes of grids`);
 * rmSync(dir, { recursive: true });
 * density.dispose();
 * temperature.dispose();
 * ```
 */
export async function writeNvdbAsync(handles: GridHandle | readonly GridHandle[], codec: NvdbCodec = 'none'): Promise<Uint8Array> {
  checkWriterCodec('writeNvdbAsync', codec);
  const file = unwrap(writeNvdb(handles, codec === 'blosc' ? 'none' : codec));
  return codec === 'blosc' ? deflateToBlosc(file) : file;
}

