import { ErrorCode, err, errWithContext, ok, type Backend, type Result } from '@hs/streams';
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
 * const velocity = unwrap(readNvdbGrid(backend, new HostResource(backend), readFileSync('sim.nvdb'), 'velocity'));
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
 * for an empty list.
 *
 * @example
 * ```ts
 * writeFileSync('scene.nvdb', unwrap(writeNvdb([density, velocity], 'zip')));
 * unwrap(readNvdbMetadata(readFileSync('scene.nvdb'))).map((g) => g.name); // both grids, without inflating them
 * ```
 */
export function writeNvdb(handles: GridHandle | readonly GridHandle[], codec: NvdbCodec = 'none'): Result<Uint8Array> {
  const list = Array.isArray(handles) ? (handles as readonly GridHandle[]) : [handles as GridHandle];
  if (list.length === 0) return err(ErrorCode.InvalidArgument, 'writeNvdb: no handles to write');
  const files: Uint8Array[] = [];
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
