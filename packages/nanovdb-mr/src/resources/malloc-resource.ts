import { ErrorCode, HsError, MemoryKind, type Backend, type Device } from '@hs/streams';
import { BackendResource } from './backend-resource.js';

/**
 * Device memory from synchronous device malloc (`MemoryKind.CudaDevice` through `Backend.allocate`,
 * `cudaMalloc`/`cudaFree`): works on devices without memory-pool support. `allocate(0)` gives `null`,
 * as `cudaMalloc(0)` does. To use it where a stream-ordered resource is required, lift it explicitly
 * with `new AsyncFromSync(backend, new MallocResource(backend, device))`. Errors as `BackendResource`.
 * Spec: "B4 — builders on a synchronous resource" (MallocResource).
 */
export class MallocResource extends BackendResource {
  /** @throws HsError InvalidArgument when `backend` is not a Backend or `device` is not a CUDA device. */
  constructor(backend: Backend, device: Device) {
    if (!device?.isCuda) throw new HsError(ErrorCode.InvalidArgument, `MallocResource: needs a CUDA device such as Device.cuda(0), got ${String(device)}`);
    super(backend, MemoryKind.CudaDevice, device, 'MallocResource');
  }
}
