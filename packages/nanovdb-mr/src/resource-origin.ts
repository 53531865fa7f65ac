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
 * import { Device, HostBackend } from '@hs/streams';
 * import { AsyncFromSync, HostResource, MallocResource, StatisticsResource, resourceOrigin, type MemoryBlock } from '@hs/nanovdb-mr';
 *
 * const backend = new HostBackend();
 * // found down the adaptor chain (upstream links), without allocating
 * const stats = new StatisticsResource(new AsyncFromSync(backend, new MallocResource(backend, Device.cuda(0))));
 * const origin = resourceOrigin(stats);
 * console.log(`${origin?.kind} on ${origin?.device.toString()}, this backend: ${origin?.backend === backend}`);
 * // a plain JS resource declares nothing: check its blocks once allocated (block.memory.kind)
 * const host = new HostResource(backend);
 * const plain = { allocate: (b: number, a: number) => host.allocate(b, a), deallocate: (m: MemoryBlock | null, b: number, a: number) => host.deallocate(m, b, a) };
 * console.log(`plain object: ${resourceOrigin(plain)}`);
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
