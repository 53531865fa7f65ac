import { ErrorCode, HsError, MemoryKind, type Backend, type Device } from '@hs/streams';
import { BackendResource } from './backend-resource.js';

/**
 * Unified (managed) memory on one CUDA device (`MemoryKind.CudaManaged`, `cudaMallocManaged`):
 * synchronous, host- and device-accessible; never crosses a process boundary. `allocate(0)` gives
 * `null`. Errors as `BackendResource`. Spec: "Resource (allocator)"; managed handles of #2292.
 */
export class ManagedResource extends BackendResource {
  /** @throws HsError InvalidArgument when `backend` is not a Backend or `device` is not a CUDA device. */
  constructor(backend: Backend, device: Device) {
    if (!device?.isCuda) throw new HsError(ErrorCode.InvalidArgument, `ManagedResource: needs a CUDA device such as Device.cuda(0), got ${String(device)}`);
    super(backend, MemoryKind.CudaManaged, device, 'ManagedResource');
  }
}
