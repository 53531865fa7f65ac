import { Device, MemoryKind, type Backend } from '@hs/streams';
import { BackendResource } from './backend-resource.js';

/**
 * Pageable host memory (`MemoryKind.Host` on `Device.cpu()`): synchronous, host-accessible, not
 * device-accessible. `allocate(0)` gives `null`. Errors as `BackendResource`.
 * Spec: "Resource (allocator)", synchronous tier.
 *
 * @example
 * ```ts
 * import { HostBackend, unwrap } from '@hs/streams';
 * import { HostResource } from '@hs/nanovdb-mr';
 *
 * const backend = new HostBackend();
 * const host = new HostResource(backend);
 * const block = unwrap(host.allocate(4096, 64));
 * if (block !== null) {
 *   const bytes = unwrap(backend.hostView(block.memory)).subarray(block.byteOffset, block.byteOffset + block.byteLength);
 *   bytes.fill(7); // pageable host memory: the host writes it directly
 *   console.log(`${block.byteLength} host bytes, first ${bytes[0]}; device-accessible: ${host.deviceAccessible}`);
 * }
 * unwrap(host.deallocate(block, 4096, 64)); // the same size and alignment as allocated
 * ```
 */
export class HostResource extends BackendResource {
  /** @throws HsError InvalidArgument when `backend` is not a Backend. */
  constructor(backend: Backend) {
    super(backend, MemoryKind.Host, Device.cpu(), 'HostResource');
  }
}
