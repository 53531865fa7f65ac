import { checkOptionFields, unwrap, type Result, type Stream } from '@hs/streams';
import type { MemoryBlock, SyncResource } from '../resource.js';
import { ResourceAdaptor } from './resource-adaptor.js';

/** One allocation a `TrackingResource` has seen and not yet seen returned. */
export interface TrackedAllocation {
  /** The block the upstream returned. */
  readonly block: MemoryBlock;
  /** Requested bytes. */
  readonly bytes: number;
  /** Requested alignment, bytes. */
  readonly alignment: number;
  /** Stack of the allocate call when `captureStacks` is on; otherwise `undefined`. */
  readonly stack: string | undefined;
}

/** Options for `new TrackingResource(...)`. */
export interface TrackingResourceOptions {
  /** Record the JS stack of every allocation (costly; for leak hunting). Default false. */
  readonly captureStacks?: boolean;
}

/**
 * Records every outstanding (allocated, not yet deallocated) block with its size and, optionally, the
 * stack that allocated it, and prints a leak report. 0-byte requests (a `null` block) are not tracked.
 * A block returned that was never seen is still forwarded (the upstream decides). Keeps the upstream's tier.
 * Spec: RMM's tracking adaptor (nanovdb-memory-resources: adaptors, "outstanding allocations with stacks").
 * @example
 * ```ts
 * import { HostBackend, unwrap } from '@hs/streams';
 * import { HostResource, ResourceBuffer, TrackingResource } from '@hs/nanovdb-mr';
 *
 * const backend = new HostBackend();
 * // leak hunting: record the stack of every allocation
 * const tracking = new TrackingResource(new HostResource(backend), { captureStacks: true });
 * const kept = unwrap(ResourceBuffer.allocate(backend, tracking, 4096));
 * unwrap(ResourceBuffer.allocate(backend, tracking, 128)).dispose();
 * console.log(`${tracking.outstanding.length} outstanding, ${tracking.outstandingBytes} bytes`);
 * console.log(tracking.leakReport().split('\n')[0]); // one line per outstanding allocation, its stack below
 * kept.dispose();
 * console.log(tracking.leakReport()); // "no leaks"
 * ```
 */
export class TrackingResource<R extends SyncResource> extends ResourceAdaptor<R> {
  readonly #outstanding = new Map<MemoryBlock, TrackedAllocation>();
  readonly #captureStacks: boolean;
  #outstandingBytes = 0;

  /** @throws HsError InvalidArgument when `upstream` is not a resource, or `options` is not an object or holds a field that is not an option. */
  constructor(upstream: R, options: TrackingResourceOptions = {}) {
    super(upstream, 'TrackingResource');
    unwrap(checkOptionFields('TrackingResource', options, ['captureStacks']));
    this.#captureStacks = options.captureStacks === true;
  }

  /** Outstanding allocations in allocation order (a fresh array). */
  get outstanding(): readonly TrackedAllocation[] {
    return [...this.#outstanding.values()];
  }

  /** Bytes of the outstanding allocations. */
  get outstandingBytes(): number {
    return this.#outstandingBytes;
  }

  /** A human-readable leak report: one line per outstanding allocation (with its stack when captured), or `no leaks`. */
  leakReport(): string {
    if (this.#outstanding.size === 0) return 'no leaks';
    const lines = [`${this.#outstanding.size} outstanding allocation(s), ${this.#outstandingBytes} bytes:`];
    for (const a of this.#outstanding.values()) {
      lines.push(`  ${a.bytes} bytes (alignment ${a.alignment}) at 0x${(a.block.memory.address + BigInt(a.block.byteOffset)).toString(16)}`);
      if (a.stack !== undefined) lines.push(a.stack.split('\n').slice(1).map((l) => `    ${l.trim()}`).join('\n'));
    }
    return lines.join('\n');
  }

  protected allocateOn(bytes: number, alignment: number, stream: Stream | null): Result<MemoryBlock | null> {
    const made = this.forwardAllocate(bytes, alignment, stream);
    if (made.ok && made.value !== null) {
      const stack = this.#captureStacks ? new Error('allocated here').stack : undefined;
      this.#outstanding.set(made.value, { block: made.value, bytes, alignment, stack });
      this.#outstandingBytes += bytes;
    }
    return made;
  }

  protected deallocateOn(block: MemoryBlock | null, bytes: number, alignment: number, stream: Stream | null): Result<void> {
    const done = this.forwardDeallocate(block, bytes, alignment, stream);
    if (done.ok && block !== null) {
      const tracked = this.#outstanding.get(block);
      if (tracked !== undefined) {
        this.#outstanding.delete(block);
        this.#outstandingBytes -= tracked.bytes;
      }
    }
    return done;
  }
}
