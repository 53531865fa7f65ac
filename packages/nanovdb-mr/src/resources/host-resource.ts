import { Device, MemoryKind, type Backend } from '@hs/streams';
import { BackendResource } from './backend-resource.js';

/**
 * Pageable host memory (`MemoryKind.Host` on `Device.cpu()`): synchronous, host-accessible, not
 * device-accessible. `allocate(0)` gives `null`. Errors as `BackendResource`.
 * Spec: "Resource (allocator)", synchronous tier.
 *
 * @example
 * ```ts
 * const host = new HostResource(backend);
 * const block = unwrap(host.allocate(4096, 64));
 * unwrap(host.deallocate(block, 4096, 64));
 * ```
 */
export class HostResource extends BackendResource {
  /** @throws HsError InvalidArgument when `backend` is not a Backend. */
  constructor(backend: Backend) {
    super(backend, MemoryKind.Host, Device.cpu(), 'HostResource');
  }
}
