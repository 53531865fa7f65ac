import {
  ErrorCode,
  HsError,
  OK_VOID,
  err,
  ok,
  type Backend,
  type Event,
  type Ok,
  type Result,
  type Stream,
} from '@hs/streams';
import type { DType, Tensor, TensorBacking } from '@hs/tensor';
import { ReleaseTracker } from './release-tracker.js';
import type { SlotLedger } from './slot-ledger.js';
import { SlotTensor } from './slot-tensor.js';
import { PoolTensorLoan, type TensorLoan } from './tensor-loan.js';
import { PoolWriteGuard, type WriteGuard } from './write-guard.js';
import type { PoolInventory } from './pool-inventory.js';
import type { ResolvedPoolSpec } from './pool-spec.js';

/** Where a slot is in its lend, write, commit, publish, recycle cycle. */
export enum SlotState {
  Free,
  Loaned,
  Writing,
  Committed,
  Published,
}

/**
 * One preallocated pool slot: a fixed byte span of the pool's backing, its reusable tensor, loan and
 * write-guard objects (with their `Ok` wrappers), its readiness event, its release tracker and its read
 * leases. Implements `TensorBacking` for the tensor it publishes.
 *
 * Stale handles: `generation` advances every time the slot returns to the free stack; the loan and
 * guard remember the generation they were issued in and fail with `InvalidState` once it moved on.
 * Because the handle objects are reused, a handle kept past its slot's next lend looks valid again:
 * the check covers use between return and re-lend.
 * Spec: "Sized cold, borrowed hot", "Emit: commit records readiness", "Fanout release-stream caps".
 */
export class PoolSlot implements TensorBacking {
  state = SlotState.Free;
  generation = 0;
  readonly tensor: SlotTensor;
  readonly loanResult: Ok<TensorLoan>;
  readonly guardResult: Ok<WriteGuard>;
  readonly tensorResult: Ok<Tensor>;

  readonly #spec: ResolvedPoolSpec;
  readonly #backend: Backend;
  readonly #ledger: SlotLedger;
  readonly #index: number;
  readonly #byteOffset: number;
  /** `null` for a host-only pool (host writer, no events). */
  readonly #readiness: Event | null;
  readonly #tracker: ReleaseTracker;
  readonly #loan: PoolTensorLoan;
  readonly #guard: PoolWriteGuard;
  readonly #label: string;
  #leases = 0;
  /** Where the last `gatherReleaseEvents` wrote this slot's release events in the polled list; `-1`: not a candidate. */
  #polledAt = -1;
  /** Set by `TensorLoan.deferReadiness()` for the current lend: commit retains the readiness event unrecorded. */
  #deferReadiness = false;

  constructor(backend: Backend, spec: ResolvedPoolSpec, inventory: PoolInventory, ledger: SlotLedger, index: number) {
    this.#spec = spec;
    this.#backend = backend;
    this.#ledger = ledger;
    this.#index = index;
    this.#byteOffset = inventory.block.byteOffset + index * spec.slotStride;
    this.#label = `${spec.name}[slot ${index}]`;
    this.#readiness = inventory.readinessEvents[index] ?? null;
    this.#tracker = new ReleaseTracker(backend, this.#label, inventory.releaseEvents, index * spec.maxReleaseStreams, spec.slotCount * spec.maxReleaseStreams, spec.maxReleaseStreams);
    this.tensor = new SlotTensor({ backend, memory: inventory.memory, backing: this, name: this.#label });
    this.#loan = new PoolTensorLoan(this);
    this.#guard = new PoolWriteGuard(this);
    this.loanResult = ok<TensorLoan>(this.#loan);
    this.guardResult = ok<WriteGuard>(this.#guard);
    this.tensorResult = ok<Tensor>(this.tensor);
  }

  /** The pool's producer stream (`null`: host writer). */
  get producerStream(): Stream | null {
    return this.#spec.producerStream;
  }

  /** Published with no read lease left: retirement may recycle it once its release events completed. */
  get retirable(): boolean {
    return this.state === SlotState.Published && this.#leases === 0;
  }

  /** Distinct release streams registered since the slot was last lent. */
  get releaseStreamCount(): number {
    return this.#tracker.count;
  }

  /** Lends a free slot for `shape` and `dtype` (already checked against rank and declared dtype). */
  lend(dtype: DType, shape: readonly number[]): Result<void> {
    const bound = this.tensor.bind(dtype, shape, this.#byteOffset, this.#spec.slotByteSpan);
    if (!bound.ok) return bound;
    this.state = SlotState.Loaned;
    this.#deferReadiness = false;
    this.#loan.issue(this.generation);
    return OK_VOID;
  }

  /** `TensorLoan.deferReadiness`. */
  deferReadiness(generation: number): Result<void> {
    if (generation !== this.generation || (this.state !== SlotState.Loaned && this.state !== SlotState.Writing)) {
      return this.#lifecycleError(generation, 'deferReadiness()');
    }
    this.#deferReadiness = true;
    return OK_VOID;
  }

  /** `TensorLoan.write`. */
  beginWrite(generation: number, stream: Stream | null): Result<WriteGuard> {
    if (generation !== this.generation || this.state !== SlotState.Loaned) return this.#lifecycleError(generation, 'write()');
    if (stream !== this.#spec.producerStream) return this.#wrongWriter(stream);
    this.state = SlotState.Writing;
    this.#guard.issue(generation);
    return this.guardResult;
  }

  /** `WriteGuard.commit`: records readiness on the producer stream, or marks host-complete. Never waits. */
  commit(generation: number): Result<void> {
    if (generation !== this.generation || this.state !== SlotState.Writing) return this.#lifecycleError(generation, 'commit()');
    const producer = this.#spec.producerStream;
    const readiness = this.#readiness;
    if (producer !== null && readiness !== null && this.#deferReadiness) {
      this.tensor.commit(readiness, producer);
    } else if (producer !== null && readiness !== null) {
      const recorded = this.#backend.recordEvent(readiness, producer);
      if (!recorded.ok) return recorded;
      this.tensor.commit(readiness);
    } else {
      this.tensor.commit(null);
    }
    this.state = SlotState.Committed;
    return OK_VOID;
  }

  /** `TensorLoan.emit`: publishes the committed tensor with no read lease yet (holders take theirs). */
  publish(generation: number): Result<Tensor> {
    if (generation !== this.generation || this.state !== SlotState.Committed) return this.#lifecycleError(generation, 'emit()');
    this.state = SlotState.Published;
    this.#leases = 0;
    this.#ledger.markPublished();
    return this.tensorResult;
  }

  /** `TensorLoan.abandon`: returns a slot that was lent but not published; otherwise nothing. */
  abandonLoan(generation: number): void {
    if (generation !== this.generation) return;
    if (this.state === SlotState.Loaned || this.state === SlotState.Writing || this.state === SlotState.Committed) {
      this.#returnToFree(false);
    }
  }

  /** `WriteGuard.abandon`: returns the slot when its write phase was never committed; otherwise nothing. */
  abandonGuard(generation: number): void {
    if (generation === this.generation && this.state === SlotState.Writing) this.#returnToFree(false);
  }

  /**
   * For the pool's batched poll: when the slot is retirable and every registered reader released, writes
   * its release events into `list` from `at` on and returns the index after them (the slot is then a
   * candidate of this poll); otherwise `-1`, and the slot is no candidate.
   */
  gatherReleaseEvents(list: Event[], at: number): number {
    const next = this.retirable ? this.#tracker.gather(list, at) : -1;
    this.#polledAt = next < 0 ? -1 : at;
    return next;
  }

  /**
   * Recycles a candidate of the last `gatherReleaseEvents` poll when its release events all completed
   * per `completed` (the flags of the polled list); true if it did.
   */
  tryRecycle(completed: Uint8Array): boolean {
    if (this.#polledAt < 0 || !this.retirable || !this.#tracker.allReleasedAt(completed, this.#polledAt)) return false;
    this.#returnToFree(true);
    return true;
  }

  /** Makes the slot's handles stale for good (the pool is being disposed). */
  shutdown(): void {
    this.state = SlotState.Free;
    this.generation++;
    this.tensor.retire();
  }

  registerReleaseStream(stream: Stream): Result<void> {
    if (this.state !== SlotState.Published) return this.#notPublished('registerReleaseStream');
    if (typeof stream !== 'object' || stream === null) {
      return err(ErrorCode.InvalidArgument, `${this.#label}: registerReleaseStream takes the consumer's Stream, got ${String(stream)}`);
    }
    const { eventDevice, releaseDevices } = this.#spec;
    const device = stream.device === eventDevice ? 0 : eventDevice === null ? -1 : releaseDevices.indexOf(stream.device) + 1;
    if (device <= 0 && stream.device !== eventDevice) {
      return err(
        ErrorCode.NotSupported,
        eventDevice === null
          ? `${this.#label}: pool "${this.#spec.name}" is host-only (no event device), so stream "${stream.label}" cannot be tracked; give the pool an eventDevice`
          : `${this.#label}: release stream "${stream.label}" is on ${String(stream.device)}, but the pool's events are on ${eventDevice.toString()}${releaseDevices.length === 0 ? '' : ` and ${releaseDevices.map(String).join(', ')}`}; add ${String(stream.device)} to the pool's releaseDevices (a graph does it for a { crossDevice: true } input)`,
      );
    }
    return this.#tracker.register(stream, device);
  }

  acquireLease(): Result<void> {
    if (this.state !== SlotState.Published) return this.#notPublished('acquireLease');
    this.#leases++;
    return OK_VOID;
  }

  releaseLease(releaseStream: Stream | null): void {
    if (this.state !== SlotState.Published || this.#leases === 0) {
      throw new HsError(ErrorCode.InvalidState, `${this.#label}: releaseLease without a held lease; release each lease exactly once`);
    }
    if (releaseStream !== null) this.#tracker.release(releaseStream);
    this.#leases--;
  }

  #returnToFree(wasPublished: boolean): void {
    this.state = SlotState.Free;
    this.generation++;
    this.#leases = 0;
    this.tensor.retire();
    this.#tracker.reset();
    this.#ledger.returned(this.#index, wasPublished);
  }

  /** `write()` on a stream other than the pool's producer stream. */
  #wrongWriter(stream: Stream | null): Result<never> {
    const producer = this.#spec.producerStream;
    return err(
      ErrorCode.NotSupported,
      producer === null
        ? `${this.#label}: pool "${this.#spec.name}" is written by the host; call write(null)`
        : `${this.#label}: pool "${this.#spec.name}" accepts writes only on its producer stream "${producer.label}", not "${stream?.label ?? 'host (null)'}"`,
    );
  }

  #notPublished(what: string): Result<never> {
    return err(ErrorCode.InvalidState, `${this.#label}: ${what} needs a published tensor, but this slot is not published (stale handle?)`);
  }

  #lifecycleError(generation: number, what: string): Result<never> {
    if (generation !== this.generation) {
      return err(ErrorCode.InvalidState, `${this.#label}: ${what} on a stale handle; its slot was abandoned, recycled or disposed`);
    }
    const hint: Record<SlotState, string> = {
      [SlotState.Free]: 'the slot is free',
      [SlotState.Loaned]: 'call write(stream) and commit() first',
      [SlotState.Writing]: 'commit() the write guard first',
      [SlotState.Committed]: 'the write phase is already committed',
      [SlotState.Published]: 'the tensor was already emitted',
    };
    return err(ErrorCode.InvalidState, `${this.#label}: ${what} is not allowed now: ${hint[this.state]}`);
  }
}
