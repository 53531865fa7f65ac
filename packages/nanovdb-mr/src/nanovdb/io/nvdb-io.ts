import { ErrorCode, err, ok, type Backend, type Result } from '@hs/streams';
import { ResourceBuffer } from '../../resource-buffer.js';
import type { SyncResource } from '../../resource.js';
import { GridHandle } from '../grid/grid-handle.js';
import { bytesArgumentProblem } from '../grid/grid-validation.js';
import { decodeNvdb, encodeNvdb, type NvdbCodec } from './nvdb-codec.js';

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
  const fail = <T>(r: Result<T> & { ok: false }): Result<never> => {
    for (const h of handles) h.dispose();
    return r;
  };
  for (const segment of decoded.value) {
    const made = ResourceBuffer.allocate(backend, resource, segment.bytes.length, { alignment: 32 });
    if (!made.ok) return fail(made);
    const view = made.value.hostView();
    if (!view.ok) {
      made.value.dispose();
      return fail(err(ErrorCode.NotSupported, 'readNvdb: the resource gives memory the host cannot write; read into host, pinned or managed memory, then copyTo', view.error));
    }
    view.value.set(segment.bytes);
    const handle = GridHandle.fromHostBytes(backend, made.value, { checksum: false });
    if (!handle.ok) {
      made.value.dispose();
      return fail(handle);
    }
    handles.push(handle.value);
  }
  return ok(handles);
}

/** Encodes every grid of a host-accessible handle as one `.nvdb` segment (see `encodeNvdb`). */
export function writeNvdb(handle: GridHandle, codec: NvdbCodec = 'none'): Result<Uint8Array> {
  const bytes = handle.hostBytes();
  if (!bytes.ok) return bytes;
  return encodeNvdb(bytes.value, handle.grids, codec);
}
