import { ErrorCode, HsError, MemoryKind, type Backend, type Device } from '@hs/streams';
import { BackendResource } from './backend-resource.js';

/**
 * Unified (managed) memory on one CUDA device (`MemoryKind.CudaManaged`, `cudaMallocManaged`):
 * synchronous, host- and device-accessible; never crosses a process boundary. `allocate(0)` gives
 * `null`. Errors as `BackendResource`. Spec: "Resource (allocator)"; managed handles of #2292.
 * @example
 * ```ts
 * import { Device, HostBackend, unwrap } from '@hs/streams';
 * import { ManagedResource, ResourceBuffer } from '@hs/nanovdb-mr';
 *
 * const backend = new HostBackend();
 * // unified memory: the host fills it and device work reads it, with no explicit copy
 * const managed = new ManagedResource(backend, Device.cuda(0));
 * const weights = unwrap(ResourceBuffer.allocate(backend, managed, 256, { element: Float32Array }));
 * unwrap(weights.hostView()).fill(0.5);
 * console.log(`${weights.size} floats on ${managed.device.toString()}, host ${managed.hostAccessible}, device ${managed.deviceAccessible}`);
 * weights.dispose();
 * ```
 */
export class ManagedResource extends BackendResource {
  /** @throws HsError InvalidArgument when `backend` is not a Backend or `device` is not a CUDA device. */
  constructor(backend: Backend, device: Device) {
    if (!device?.isCuda) throw new HsError(ErrorCode.InvalidArgument, `ManagedResource: needs a CUDA device such as Device.cuda(0), got ${String(device)}`);
    super(backend, MemoryKind.CudaManaged, device, 'ManagedResource');
  }
}
