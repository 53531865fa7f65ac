import { ErrorCode, err, type Result, type Stream } from '@hs/streams';
import type { MemoryBlock, SyncResource } from '../resource.js';
import { ResourceAdaptor } from './resource-adaptor.js';

/** State every copy of one `SharedResource` shares. */
interface SharedState {
  owners: number;
}

/**
 * A reference-counted owner of a resource: `share()` makes another owner over the same state; each owner
 * is released once with `dispose()`; when the last one is released the upstream's `dispose()` (if it has
 * one) runs. A released owner refuses allocation with InvalidState (deallocation still forwards, so blocks
 * can be returned late). Owners sharing state are `equals`. Keeps the upstream's tier.
 * Spec: "shared_resource" (the sharing tier of the ownership rule; SharedResource<R>).
 * @example
 * ```ts
 * import { HostBackend, unwrap } from '@hs/streams';
 * import { HostResource, RegionResource, SharedResource, type MemoryBlock } from '@hs/nanovdb-mr';
 *
 * const backend = new HostBackend();
 * const host = new HostResource(backend);
 * const memory = unwrap(host.allocate(1 << 16, 256));
 * if (memory === null) throw new Error('no memory');
 * const region = new RegionResource(memory);
 * // an arena that gives its memory back when disposed, owned by two consumers together
 * const arena = {
 *   allocate: (bytes: number, alignment: number) => region.allocate(bytes, alignment),
 *   deallocate: (block: MemoryBlock | null, bytes: number, alignment: number) => region.deallocate(block, bytes, alignment),
 *   dispose: () => (unwrap(host.deallocate(memory, 1 << 16, 256)), console.log('arena disposed')),
 * };
 * const a = new SharedResource(arena);
 * const b = unwrap(a.share());
 * console.log(`owners ${a.useCount}, equal: ${a.equals(b)}`);
 * a.dispose(); // b still owns the arena
 * const block = unwrap(b.allocate(512, 64));
 * unwrap(b.deallocate(block, 512, 64));
 * b.dispose(); // the last owner: prints "arena disposed"
 * console.log(`owners ${b.useCount}, allocation refused: ${!b.allocate(512, 64).ok}`);
 * ```
 */
export class SharedResource<R extends SyncResource> extends ResourceAdaptor<R> implements Disposable {
  #state: SharedState;
  #released = false;

  /** Takes ownership of `upstream` (one owner). @throws HsError InvalidArgument when it is not a resource. */
  constructor(upstream: R) {
    super(upstream, 'SharedResource');
    this.#state = { owners: 1 };
  }

  /** Owners still holding the shared state (0 once all released). */
  get useCount(): number {
    return this.#state.owners;
  }

  /** Another owner of the same upstream and state; InvalidState once this owner was released. */
  share(): Result<SharedResource<R>> {
    if (this.#released) return err(ErrorCode.InvalidState, 'SharedResource.share: this owner was disposed');
    const copy = new SharedResource(this.upstream);
    copy.#state = this.#state;
    this.#state.owners++;
    return { ok: true, value: copy };
  }

  /** True when `other` is an owner of the same shared state. */
  equals(other: SyncResource): boolean {
    return other instanceof SharedResource && other.#state === this.#state;
  }

  /** Releases this owner (idempotent); the last release disposes the upstream when it is disposable. */
  dispose(): void {
    if (this.#released) return;
    this.#released = true;
    if (--this.#state.owners === 0) (this.upstream as Partial<Disposable> & { dispose?: () => void }).dispose?.();
  }

  /** Same as `dispose()`. */
  [Symbol.dispose](): void {
    this.dispose();
  }

  protected allocateOn(bytes: number, alignment: number, stream: Stream | null): Result<MemoryBlock | null> {
    if (this.#released) return err(ErrorCode.InvalidState, 'SharedResource: this owner was disposed; allocate through a live owner');
    return this.forwardAllocate(bytes, alignment, stream);
  }

  protected deallocateOn(block: MemoryBlock | null, bytes: number, alignment: number, stream: Stream | null): Result<void> {
    return this.forwardDeallocate(block, bytes, alignment, stream);
  }
}
