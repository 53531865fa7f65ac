import { ErrorCode, type Err, err, errWithContext, ok, type Backend, type Result } from '@hs/streams';
import { ResourceBuffer } from '../../resource-buffer.js';
import type { SyncResource } from '../../resource.js';
import { GridHandle } from '../grid/grid-handle.js';
import { bytesArgumentProblem } from '../grid/grid-validation.js';
import { decodeNvdb, decodeNvdbGrid, encodeNvdb, type NvdbCodec, type NvdbSegment } from './nvdb-codec.js';

/**
 * Reads a `.nvdb` file (see `decodeNvdb`) into one `GridHandle` per segment, each in a buffer from
 * `resource` (which must be host-accessible). Errors: InvalidArgument when `file` is not a Uint8Array,
 * those of `decodeNvdb`, the resource's, NotSupported
 * for a resource the host cannot write. Nothing is left allocated on failure.
 * @example
 * ```ts
 * import { HostBackend, unwrap } from '@hs/streams';
 * import { GridType, HostResource, pointsToGrid, readNvdb, writeNvdb } from '@hs/nanovdb-mr';
 *
 * const backend = new HostBackend();
 * const host = new HostResource(backend);
 * const a = unwrap(pointsToGrid(backend, host, { space: 'index', coords: new Int32Array([0, 0, 0]) }, { gridType: GridType.Float, name: 'a' }));
 * const b = unwrap(pointsToGrid(backend, host, { space: 'index', coords: new Int32Array([8, 8, 8]) }, { gridType: GridType.Float, name: 'b' }));
 * const file = unwrap(writeNvdb([a, b])); // two segments, e.g. a file's contents
 * // one handle per segment, each in a buffer from the resource you pass
 * const handles = unwrap(readNvdb(backend, host, file));
 * console.log(handles.map((h) => `'${h.grid()?.name}' ${h.sizeBytes} bytes`).join(', '));
 * for (const h of [...handles, a, b]) h.dispose();
 * ```
 */
export function readNvdb(backend: Backend, resource: SyncResource, file: Uint8Array): Result<GridHandle<ResourceBuffer<SyncResource, Uint8ArrayConstructor>>[]> {
  const notBytes = bytesArgumentProblem('readNvdb', file);
  if (notBytes !== null) return notBytes;
  const decoded = decodeNvdb(file);
  if (!decoded.ok) return decoded;
  const handles: GridHandle<ResourceBuffer<SyncResource, Uint8ArrayConstructor>>[] = [];
  for (const segment of decoded.value) {
    const handle = holdSegment(backend, resource, segment, 'readNvdb');
    if (!handle.ok) {
      for (const h of handles) h.dispose();
      return handle;
    }
    handles.push(handle.value);
  }
  return ok(handles);
}

/**
 * Reads one grid of a `.nvdb` file, by position among all its grids or by name (see `decodeNvdbGrid`: only that
 * grid's payload is inflated, and it becomes grid 0 of 1), into a `GridHandle` over a buffer from `resource` (host-
 * accessible). Errors: those of `decodeNvdbGrid` (NotFound for a position or name the file lacks), the resource's,
 * NotSupported for a resource the host cannot write. Nothing is left allocated on failure.
 *
 * @example
 * ```ts
 * import { HostBackend, unwrap } from '@hs/streams';
 * import { GridType, HostResource, StatisticsResource, readNvdbGrid, voxelsToGrid, writeNvdb } from '@hs/nanovdb-mr';
 *
 * const backend = new HostBackend();
 * const host = new StatisticsResource(new HostResource(backend));
 * const coords = new Int32Array([0, 0, 0]);
 * const density = unwrap(voxelsToGrid(backend, host, { coords, values: new Float32Array([1]) }, { gridType: GridType.Float, name: 'density' }));
 * const velocity = unwrap(voxelsToGrid(backend, host, { coords, values: new Float32Array([0, 2, 0]) }, { gridType: GridType.Vec3f, name: 'velocity' }));
 * const file = unwrap(writeNvdb([density, velocity], 'zip'));
 * density.dispose();
 * velocity.dispose();
 * const grid = unwrap(readNvdbGrid(backend, host, file, 'velocity')); // only that grid is inflated; it becomes grid 0 of 1
 * const v = unwrap(grid.accessor()).getVector(0, 0, 0, new Float32Array(3));
 * console.log(`velocity ${Array.from(v)}; bytes held: ${host.statistics.bytes.current}, the grid: ${grid.sizeBytes}`);
 * grid.dispose();
 * ```
 */
export function readNvdbGrid(backend: Backend, resource: SyncResource, file: Uint8Array, which: number | string): Result<GridHandle<ResourceBuffer<SyncResource, Uint8ArrayConstructor>>> {
  const decoded = decodeNvdbGrid(file, which);
  return decoded.ok ? holdSegment(backend, resource, decoded.value, 'readNvdbGrid') : decoded;
}

function holdSegment(backend: Backend, resource: SyncResource, segment: NvdbSegment, who: string): Result<GridHandle<ResourceBuffer<SyncResource, Uint8ArrayConstructor>>> {
  const made = ResourceBuffer.allocate(backend, resource, segment.bytes.length, { alignment: 32 });
  if (!made.ok) return made;
  const view = made.value.hostView();
  if (!view.ok) {
    made.value.dispose();
    return err(ErrorCode.NotSupported, `${who}: the resource gives memory the host cannot write; read into host, pinned or managed memory, then copyTo`, view.error);
  }
  view.value.set(segment.bytes);
  const handle = GridHandle.fromHostBytes(backend, made.value, { checksum: false });
  if (!handle.ok) made.value.dispose();
  return handle;
}

/**
 * Encodes every grid of a host-accessible handle as one `.nvdb` segment (see `encodeNvdb`); given several handles,
 * one segment per handle, back to back in one file (NanoVDB's `writeGrids`), which `readNvdb` reads back as the same
 * handles. Errors: those of `encodeNvdb` and `hostBytes` (naming the handle when there are several); InvalidArgument
 * for an empty list or an entry that is not a GridHandle (naming its position).
 *
 * @example
 * ```ts
 * import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
 * import { tmpdir } from 'node:os';
 * import { join } from 'node:path';
 * import { HostBackend, unwrap } from '@hs/streams';
 * import { GridType, HostResource, pointsToGrid, readNvdbMetadata, writeNvdb } from '@hs/nanovdb-mr';
 *
 * const backend = new HostBackend();
 * const host = new HostResource(backend);
 * const density = unwrap(pointsToGrid(backend, host, { space: 'index', coords: new Int32Array([0, 0, 0]) }, { gridType: GridType.Float, name: 'density' }));
 * const velocity = unwrap(pointsToGrid(backend, host, { space: 'index', coords: new Int32Array([1, 1, 1]) }, { gridType: GridType.Float, name: 'velocity' }));
 * const dir = mkdtempSync(join(tmpdir(), 'nvdb-'));
 * writeFileSync(join(dir, 'scene.nvdb'), unwrap(writeNvdb([density, velocity], 'zip')));
 * const names = unwrap(readNvdbMetadata(readFileSync(join(dir, 'scene.nvdb')))).map((g) => g.name); // without inflating them
 * console.log(`scene.nvdb holds ${names.join(', ')}`);
 * rmSync(dir, { recursive: true });
 * density.dispose();
 * velocity.dispose();
 * ```
 */
export function writeNvdb(handles: GridHandle | readonly GridHandle[], codec: NvdbCodec = 'none'): Result<Uint8Array> {
  const list = Array.isArray(handles) ? (handles as readonly GridHandle[]) : [handles as GridHandle];
  if (list.length === 0) return err(ErrorCode.InvalidArgument, 'writeNvdb: no handles to write');
  const files: Uint8Array[] = [];
  const notHandle = handlesProblem('writeNvdb', list);
  if (notHandle !== null) return notHandle;
  for (const [i, handle] of list.entries()) {
    const bytes = handle.hostBytes();
    const file = bytes.ok ? encodeNvdb(bytes.value, handle.grids, codec) : bytes;
    if (!file.ok) return list.length === 1 ? file : errWithContext(file.error, `writeNvdb: handle ${i}`);
    files.push(file.value);
  }
  if (files.length === 1) return ok(files[0] as Uint8Array);
  const out = new Uint8Array(files.reduce((n, f) => n + f.length, 0));
  let at = 0;
  for (const f of files) {
    out.set(f, at);
    at += f.length;
  }
  return ok(out);
}

/** Null when every entry of `list` is a GridHandle; otherwise the InvalidArgument for `who` naming the first that is not. @internal */
export function handlesProblem(who: string, list: readonly unknown[]): Err | null {
  const i = list.findIndex((handle) => !(handle instanceof GridHandle));
  if (i < 0) return null;
  const handle = list[i];
  const got = handle === null || handle === undefined ? String(handle) : typeof handle === 'object' ? 'an object' : `a ${typeof handle}`;
  return err(ErrorCode.InvalidArgument, `${who}: handle ${i} is not a GridHandle (got ${got})`);
}
