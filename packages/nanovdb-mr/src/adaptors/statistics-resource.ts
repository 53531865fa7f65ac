import { ErrorCode, err, type Result, type Stream } from '@hs/streams';
import type { MemoryBlock, SyncResource } from '../resource.js';
import { ResourceAdaptor } from './resource-adaptor.js';

/** One counter: the current value, its peak and the running total of increments. */
export interface Counter {
  /** Value now (bytes or allocations outstanding). */
  readonly current: number;
  /** Highest `current` seen. */
  readonly peak: number;
  /** Sum of every increment (bytes or allocations ever made). */
  readonly total: number;
}

/** A snapshot of a `StatisticsResource` scope: requested bytes and allocation counts. */
export interface ResourceStatistics {
  /** Bytes requested by successful allocations (current, peak, total). */
  readonly bytes: Counter;
  /** Successful allocate calls, 0-byte ones included (current = allocations not yet deallocated). */
  readonly allocations: Counter;
}

class MutableCounter implements Counter {
  current = 0;
  peak = 0;
  total = 0;

  add(n: number): void {
    this.current += n;
    this.total += n;
    if (this.current > this.peak) this.peak = this.current;
  }

  /** Folds a finished nested scope into this one: its peak on top of this scope's current value. */
  absorb(inner: Counter): void {
    this.peak = Math.max(this.peak, this.current + inner.peak);
    this.current += inner.current;
    this.total += inner.total;
  }

  snapshot(): Counter {
    return { current: this.current, peak: this.peak, total: this.total };
  }
}

interface Scope {
  readonly bytes: MutableCounter;
  readonly allocations: MutableCounter;
}

/**
 * Counts what passes through to `upstream`: requested bytes and allocations (current, peak, total), in a
 * stack of nested scopes. `pushCounters()` opens a fresh scope (for example around one build);
 * `popCounters()` closes it, returns its counts and folds them into the enclosing scope. Only successful
 * calls count; a failed allocation changes nothing. Keeps the upstream's tier; the async pair counts at
 * call time (a stream-ordered free counts when it is enqueued).
 * Spec: RMM's statistics adaptor; the balanced-accounting acceptance of nanovdb-memory-resources.
 *
 * @example
 * ```ts
 * import { HostBackend, unwrap } from '@hs/streams';
 * import { GridType, HostResource, StatisticsResource, pointsToGrid } from '@hs/nanovdb-mr';
 *
 * const backend = new HostBackend();
 * const stats = new StatisticsResource(new HostResource(backend));
 * stats.pushCounters(); // a scope around one build
 * const grid = unwrap(pointsToGrid(backend, stats, { space: 'index', coords: new Int32Array([0, 0, 0, 100, 0, 0]) }, { gridType: GridType.Float }));
 * const build = unwrap(stats.popCounters()); // folded into the outer scope
 * console.log(`build: peak ${build.bytes.peak} bytes, ${build.allocations.total} allocations, ${build.bytes.current} held by the grid`);
 * grid.dispose();
 * console.log(`after dispose: ${stats.statistics.bytes.current} bytes outstanding`);
 * ```
 */
export class StatisticsResource<R extends SyncResource> extends ResourceAdaptor<R> {
  readonly #scopes: Scope[] = [{ bytes: new MutableCounter(), allocations: new MutableCounter() }];

  /** @throws HsError InvalidArgument when `upstream` is not a resource. */
  constructor(upstream: R) {
    super(upstream, 'StatisticsResource');
  }

  /** Counts of the innermost scope (a fresh snapshot). */
  get statistics(): ResourceStatistics {
    const top = this.#top();
    return { bytes: top.bytes.snapshot(), allocations: top.allocations.snapshot() };
  }

  /** Open scopes, at least 1. */
  get depth(): number {
    return this.#scopes.length;
  }

  /** Opens a nested scope with zeroed counters; returns the new depth. */
  pushCounters(): number {
    return this.#scopes.push({ bytes: new MutableCounter(), allocations: new MutableCounter() });
  }

  /**
   * Closes the innermost scope, returns its counts and folds them into the enclosing one.
   * InvalidState when only the outermost scope is open.
   */
  popCounters(): Result<ResourceStatistics> {
    if (this.#scopes.length === 1) return err(ErrorCode.InvalidState, 'StatisticsResource.popCounters: no nested scope is open; call pushCounters() first');
    const inner = this.#scopes.pop() as Scope;
    const outer = this.#top();
    outer.bytes.absorb(inner.bytes);
    outer.allocations.absorb(inner.allocations);
    return { ok: true, value: { bytes: inner.bytes.snapshot(), allocations: inner.allocations.snapshot() } };
  }

  protected allocateOn(bytes: number, alignment: number, stream: Stream | null): Result<MemoryBlock | null> {
    const made = this.forwardAllocate(bytes, alignment, stream);
    if (made.ok) {
      const top = this.#top();
      top.bytes.add(bytes);
      top.allocations.add(1);
    }
    return made;
  }

  protected deallocateOn(block: MemoryBlock | null, bytes: number, alignment: number, stream: Stream | null): Result<void> {
    const done = this.forwardDeallocate(block, bytes, alignment, stream);
    if (done.ok) {
      const top = this.#top();
      top.bytes.current -= bytes;
      top.allocations.current -= 1;
    }
    return done;
  }

  #top(): Scope {
    return this.#scopes[this.#scopes.length - 1] as Scope;
  }
}
