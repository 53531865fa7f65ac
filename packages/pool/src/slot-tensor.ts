import type { Event, Result, Stream } from '@hs/streams';
import { Tensor, type DType, type TensorInit } from '@hs/tensor';

/**
 * The one `Tensor` object a pool slot lends out again and again: rebound to each request's shape and
 * dtype, committed, and made stale when the slot is recycled.
 */
export class SlotTensor extends Tensor {
  constructor(init: TensorInit) {
    super(init);
  }

  /** Binds a packed layout of `shape` at the slot's `byteOffset`, at most `byteLimit` bytes; opens the write phase. */
  bind(dtype: DType, shape: readonly number[], byteOffset: number, byteLimit: number): Result<void> {
    return this.bindContiguous(dtype, shape, byteOffset, byteLimit);
  }

  /**
   * Ends the write phase with a readiness event recorded on the producer stream, or host-complete
   * (`null`); with `deferredOn`, the event is retained unrecorded (a proven fused edge).
   */
  commit(readiness: Event | null, deferredOn: Stream | null = null): void {
    this.commitReadiness(readiness, deferredOn);
  }

  /** Makes the handle stale. */
  retire(): void {
    this.invalidate();
  }
}
