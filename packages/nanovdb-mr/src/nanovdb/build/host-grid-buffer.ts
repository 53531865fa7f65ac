import { ErrorCode, err, ok, type Backend, type Result } from '@hs/streams';
import { ResourceBuffer } from '../../resource-buffer.js';
import type { SyncResource } from '../../resource.js';

/** A grid buffer the host writes: the buffer and its bytes, zeroed. */
export interface HostGridBuffer {
  readonly buffer: ResourceBuffer<SyncResource, Uint8ArrayConstructor>;
  readonly bytes: Uint8Array;
}

/**
 * Allocates `gridSize` bytes for a grid the host writes (32-byte aligned, as NanoVDB's data) from `resource` and
 * zeroes them. Errors: the resource's (`OutOfMemory`, …); NotSupported, naming `who`, for a resource the host cannot
 * read (the buffer is freed).
 */
export function allocateHostGrid(who: string, backend: Backend, resource: SyncResource, gridSize: number): Result<HostGridBuffer> {
  const made = ResourceBuffer.allocate(backend, resource, gridSize, { alignment: 32 });
  if (!made.ok) return made;
  const buffer = made.value;
  const view = buffer.hostView();
  if (!view.ok) {
    buffer.dispose();
    return err(ErrorCode.NotSupported, `${who}: needs a host-accessible resource (host, pinned or managed memory)`, view.error);
  }
  view.value.fill(0);
  return ok({ buffer, bytes: view.value });
}
