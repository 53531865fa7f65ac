import { ErrorCode, HsError, type MemoryRange, type Result, type Stream } from '@hs/streams';
import type { Tensor } from '@hs/tensor';
import type { PoolSlot } from './pool-slot.js';

/**
 * Write authority over a lent slot, from `TensorLoan.write` to `commit()`. Issue device writes on
 * `stream` into `range` (or fill `tensor.mutableHostView()` for a host-written pool), then `commit()`.
 * Dropping the guard uncommitted (`abandon()` or `using`) returns the slot; after commit it does nothing.
 * Spec: "Emit: commit records readiness".
 */
export interface WriteGuard extends Disposable {
  /** The tensor being written (writable until commit). */
  readonly tensor: Tensor;
  /** Bytes to write: the tensor's span inside the pool backing, labelled with the slot name. @throws HsError `InvalidState` when stale. */
  readonly range: MemoryRange;
  /** The stream writes must be issued on: the pool's producer stream, `null` for a host writer. */
  readonly stream: Stream | null;
  /**
   * Ends the write phase: records the slot's readiness event on the producer stream (never
   * synchronizes), or marks the tensor host-complete for a host writer. The tensor turns read-only.
   * `InvalidState` when already committed or stale; backend record errors are passed through.
   */
  commit(): Result<void>;
  /** Returns the slot to the pool unless the guard already committed (then nothing happens). */
  abandon(): void;
}

/** The reusable write-guard object of one slot; `issue` re-arms it for the slot's current generation. */
export class PoolWriteGuard implements WriteGuard {
  readonly #slot: PoolSlot;
  #generation = -1;

  constructor(slot: PoolSlot) {
    this.#slot = slot;
  }

  /** Binds the guard to the generation its write phase belongs to. */
  issue(generation: number): void {
    this.#generation = generation;
  }

  get tensor(): Tensor {
    return this.#slot.tensor;
  }

  get range(): MemoryRange {
    if (this.#generation !== this.#slot.generation) {
      throw new HsError(ErrorCode.InvalidState, `${this.#slot.tensor.name}: range of a stale write guard; its slot was abandoned or recycled`);
    }
    return this.#slot.tensor.data();
  }

  get stream(): Stream | null {
    return this.#slot.producerStream;
  }

  commit(): Result<void> {
    return this.#slot.commit(this.#generation);
  }

  abandon(): void {
    this.#slot.abandonGuard(this.#generation);
  }

  [Symbol.dispose](): void {
    this.abandon();
  }
}
