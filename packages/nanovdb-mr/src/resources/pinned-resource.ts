import { Device, MemoryKind, type Backend } from '@hs/streams';
import { BackendResource } from './backend-resource.js';

/**
 * Page-locked host memory (`MemoryKind.PinnedHost` on `Device.cpu()`, `cudaMallocHost`): synchronous,
 * host- and device-accessible. The synchronous tier is deliberate: pinned allocation synchronizes the
 * device on CUDA, so allocate pinned buffers on the cold path. `allocate(0)` gives `null`.
 * Errors as `BackendResource`. Spec: "Resource (allocator)" (cuda::PinnedResource is a sync resource).
 */
export class PinnedResource extends BackendResource {
  /** @throws HsError InvalidArgument when `backend` is not a Backend. */
  constructor(backend: Backend) {
    super(backend, MemoryKind.PinnedHost, Device.cpu(), 'PinnedResource');
  }
}
