import { Device, MEMORY_KINDS, type Backend, type MemoryKind } from '@hs/streams';
import type { SyncResource } from './resource.js';

/** Where a resource's blocks come from, as far as the resource declares it. */
export interface ResourceOrigin {
  /** Memory kind of every block. */
  readonly kind: MemoryKind;
  /** Device of every block (`Device.cpu()` for host and pinned memory). */
  readonly device: Device;
  /** The backend the blocks are allocated from; `null` when the resource does not name one (a `RegionResource`). */
  readonly backend: Backend | null;
}

/** Longest adaptor chain followed before giving up (a cycle of `upstream` links). */
const MAX_CHAIN = 64;

/**
 * The declared origin of a resource's blocks, found without allocating: the first resource down its
 * adaptor chain (`upstream` links of `ResourceAdaptor`, `AsyncFromSync`, refs and shared owners) that
 * declares a `kind` (a `MemoryKind`) and a `device` (a `Device`), with its `backend` when it has one.
 * The concrete resources of this package all declare it. `null` for a plain JS resource that declares
 * nothing: its blocks can only be checked once allocated (`MemoryBlock.memory.kind` and `.device`).
 *
 * @example
 * ```ts
 * const stats = new StatisticsResource(new AsyncFromSync(backend, new MallocResource(backend, Device.cuda(0))));
 * resourceOrigin(stats); // { kind: 'cudaDevice', device: Device.cuda(0), backend }
 * ```
 */
export function resourceOrigin(resource: SyncResource): ResourceOrigin | null {
  let link: unknown = resource;
  for (let depth = 0; depth < MAX_CHAIN && typeof link === 'object' && link !== null; depth++) {
    const candidate = link as { kind?: unknown; device?: unknown; backend?: unknown; upstream?: unknown };
    if (MEMORY_KINDS.includes(candidate.kind as MemoryKind) && candidate.device instanceof Device) {
      const backend = typeof candidate.backend === 'object' && candidate.backend !== null ? (candidate.backend as Backend) : null;
      return { kind: candidate.kind as MemoryKind, device: candidate.device, backend };
    }
    link = candidate.upstream;
  }
  return null;
}
