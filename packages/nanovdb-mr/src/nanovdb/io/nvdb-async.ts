import { unwrap, type Backend } from '@hs/streams';
import type { ResourceBuffer } from '../../resource-buffer.js';
import type { SyncResource } from '../../resource.js';
import type { GridHandle } from '../grid/grid-handle.js';
import { bytesArgumentProblem } from '../grid/grid-validation.js';
import { deflateToBlosc, inflateBloscSegments } from './nvdb-blosc.js';
import { decodeNvdb, type NvdbSegment } from './nvdb-codec.js';
import { readNvdb, writeNvdb } from './nvdb-io.js';
import type { NvdbCodec } from './nvdb-segment.js';

/**
 * `decodeNvdb` for files of any codec, BLOSC included: BLOSC payloads are decoded by a WebAssembly c-blosc (the
 * `numcodecs` package, imported on first use), then every segment is validated as `decodeNvdb` does.
 * @throws (rejects with) HsError: InvalidArgument when `file` is not a Uint8Array or naming the segment, grid and field
 *   of a bad header, BLOSC chunk or grid; NotSupported when numcodecs cannot be loaded or a grid type has no layout.
 * Spec: NANOVDB-FORMAT.md ".nvdb files"; issue 23 item 3 (BLOSC).
 *
 * @example
 * ```ts
 * const [segment] = await decodeNvdbAsync(readFileSync('smoke-blosc.nvdb'));
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
 * const [handle] = await readNvdbAsync(backend, new HostResource(backend), readFileSync('smoke-blosc.nvdb'));
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
 * them. Rejects with the errors of `writeNvdb`, or NotSupported when numcodecs cannot be loaded.
 *
 * @example
 * ```ts
 * writeFileSync('smoke.nvdb', await writeNvdbAsync([density, temperature], 'blosc'));
 * ```
 */
export async function writeNvdbAsync(handles: GridHandle | readonly GridHandle[], codec: NvdbCodec = 'none'): Promise<Uint8Array> {
  const file = unwrap(writeNvdb(handles, codec === 'blosc' ? 'none' : codec));
  return codec === 'blosc' ? deflateToBlosc(file) : file;
}

