import { ErrorCode, HsError, MemoryKind, type Backend, type Device } from '@hs/streams';
import { BackendResource } from './backend-resource.js';

/**
 * Device memory from synchronous device malloc (`MemoryKind.CudaDevice` through `Backend.allocate`,
 * `cudaMalloc`/`cudaFree`): works on devices without memory-pool support. `allocate(0)` gives `null`,
 * as `cudaMalloc(0)` does. To use it where a stream-ordered resource is required, lift it explicitly
 * with `new AsyncFromSync(backend, new MallocResource(backend, device))`. Errors as `BackendResource`.
 * Spec: "B4 — builders on a synchronous resource" (MallocResource).
 * @example
 * ```ts
 * import { Device, HostBackend, unwrap } from '@hs/streams';
 * import { AsyncFromSync, MallocResource, ResourceBuffer } from '@hs/nanovdb-mr';
 *
 * // a device without stream-ordered memory pools: synchronous device malloc still works
 * const backend = new HostBackend({ memoryPools: false });
 * const stream = unwrap(backend.createStream(Device.cuda(0)));
 * const malloc = new MallocResource(backend, Device.cuda(0));
 * const block = unwrap(malloc.allocate(4096, 256));
 * console.log(`${block?.byteLength} bytes of ${block?.memory.kind} memory without a pool`);
 * unwrap(malloc.deallocate(block, 4096, 256));
 * // where a stream-ordered resource is required, lift it explicitly
 * const buffer = unwrap(ResourceBuffer.allocateAsync(backend, stream, new AsyncFromSync(backend, malloc), 256, { noInit: true }));
 * buffer.dispose();
 * await backend.synchronizeStream(stream);
 * unwrap(backend.destroyStream(stream));
 * ```
 */
export class MallocResource extends BackendResource {
  /** @throws HsError InvalidArgument when `backend` is not a Backend or `device` is not a CUDA device. */
  constructor(backend: Backend, device: Device) {
    if (!device?.isCuda) throw new HsError(ErrorCode.InvalidArgument, `MallocResource: needs a CUDA device such as Device.cuda(0), got ${String(device)}`);
    super(backend, MemoryKind.CudaDevice, device, 'MallocResource');
  }
}
