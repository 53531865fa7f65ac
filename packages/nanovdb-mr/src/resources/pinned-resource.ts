import { Device, MemoryKind, type Backend } from '@hs/streams';
import { BackendResource } from './backend-resource.js';

/**
 * Page-locked host memory (`MemoryKind.PinnedHost` on `Device.cpu()`, `cudaMallocHost`): synchronous,
 * host- and device-accessible. The synchronous tier is deliberate: pinned allocation synchronizes the
 * device on CUDA, so allocate pinned buffers on the cold path. `allocate(0)` gives `null`.
 * Errors as `BackendResource`. Spec: "Resource (allocator)" (cuda::PinnedResource is a sync resource).
 * @example
 * ```ts
 * import { Device, HostBackend, unwrap } from '@hs/streams';
 * import { DeviceResource, PinnedResource, ResourceBuffer } from '@hs/nanovdb-mr';
 *
 * const backend = new HostBackend();
 * const stream = unwrap(backend.createStream(Device.cuda(0)));
 * // allocate pinned staging once, on the cold path (pinned allocation synchronizes the device on CUDA)
 * const staging = unwrap(ResourceBuffer.allocate(backend, new PinnedResource(backend), 1024, { element: Float32Array }));
 * unwrap(staging.hostView()).fill(1.5);
 * const onDevice = unwrap(ResourceBuffer.allocateAsync(backend, stream, new DeviceResource(backend, Device.cuda(0)), 1024, { noInit: true, element: Float32Array }));
 * if (staging.data !== null && onDevice.data !== null) unwrap(backend.memcpyAsync(stream, onDevice.data, staging.data)); // an async upload from pinned memory
 * await backend.synchronizeStream(stream);
 * console.log(`uploaded ${onDevice.sizeBytes} bytes from pinned memory`);
 * onDevice.dispose();
 * staging.dispose();
 * await backend.synchronizeStream(stream);
 * unwrap(backend.destroyStream(stream));
 * ```
 */
export class PinnedResource extends BackendResource {
  /** @throws HsError InvalidArgument when `backend` is not a Backend. */
  constructor(backend: Backend) {
    super(backend, MemoryKind.PinnedHost, Device.cpu(), 'PinnedResource');
  }
}
