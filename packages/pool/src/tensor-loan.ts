import type { Result, Stream } from '@hs/streams';
import type { Tensor } from '@hs/tensor';
import type { PoolSlot } from './pool-slot.js';
import type { WriteGuard } from './write-guard.js';

/**
 * A borrowed pool slot, from `TensorPool.allocateTensor` to `emit()`. Lifecycle: `write(stream)` gives
 * a write guard, the guard's `commit()` records readiness, `emit()` publishes. Dropping the loan
 * early (`abandon()` or `using`) returns the slot; after `emit()` abandoning does nothing.
 * Spec: "Emit: commit records readiness".
 */
export interface TensorLoan extends Disposable {
  /**
   * Opens the write phase. `stream` must be the pool's producer stream (`null` for a host-written
   * pool): any other stream returns `NotSupported`. `InvalidState` when the write phase was already
   * opened or the loan is stale.
   */
  write(stream: Stream | null): Result<WriteGuard>;
  /**
   * Publishes the committed tensor: read-only, with its readiness contract, its `backing` the slot.
   * The slot is then held only by read leases: whoever keeps the tensor (a channel, a consumer) takes
   * one with `tensor.backing.acquireLease()` before the pool's next `retire()`, which recycles a
   * published slot without leases once its release events completed.
   * `InvalidState` before the write guard committed, after a previous emit, or on a stale loan.
   */
  emit(): Result<Tensor>;
  /** Returns the slot to the pool unless the tensor was already emitted (then nothing happens). */
  abandon(): void;
  /**
   * Runtime option for a proven fused edge (its sole consumer runs on the producer stream): the write
   * guard's `commit()` retains the slot's readiness event without recording it. Readers on the
   * producer stream need no wait; any other reader, or host access, records it lazily
   * (`Tensor.readinessFor`). No effect for a host-written pool. `InvalidState` unless the loan is
   * lent and not yet committed. Spec: "When the fences disappear: proven linear chains".
   */
  deferReadiness(): Result<void>;
}

/** The reusable loan object of one slot; `issue` re-arms it for the slot's current generation. */
export class PoolTensorLoan implements TensorLoan {
  readonly #slot: PoolSlot;
  #generation = -1;

  constructor(slot: PoolSlot) {
    this.#slot = slot;
  }

  /** Binds the loan to the generation it is lent in. */
  issue(generation: number): void {
    this.#generation = generation;
  }

  write(stream: Stream | null): Result<WriteGuard> {
    return this.#slot.beginWrite(this.#generation, stream);
  }

  emit(): Result<Tensor> {
    return this.#slot.publish(this.#generation);
  }

  abandon(): void {
    this.#slot.abandonLoan(this.#generation);
  }

  deferReadiness(): Result<void> {
    return this.#slot.deferReadiness(this.#generation);
  }

  [Symbol.dispose](): void {
    this.abandon();
  }
}
