import type { Result } from '@hs/streams';
import { Tensor, type DType, type TensorInit } from '@hs/tensor';

/**
 * The one read-only `Tensor` a subscriber lends out for a boundary slot, rebound to each descriptor's
 * layout over the shared segment (no copy) and made stale when its lease is released.
 */
export class ChannelTensor extends Tensor {
  constructor(init: TensorInit) {
    super(init);
  }

  /**
   * Binds the packed layout a descriptor named at `byteOffset` of the segment and marks it host-complete
   * (a host writer published it; nothing to wait on). `byteLimit` bounds the span (the slot's end).
   */
  bindPublished(dtype: DType, shape: readonly number[], byteOffset: number, byteLimit: number): Result<void> {
    const bound = this.bindContiguous(dtype, shape, byteOffset, byteLimit);
    if (bound.ok) this.commitReadiness(null);
    return bound;
  }

  /**
   * Makes the handle stale (the lease was released, the channel closed, or the publisher reclaimed the
   * slot); `why` is the reason its accessors' `InvalidState` gives (null: the generic one).
   */
  retire(why: string | null = null): void {
    this.invalidate(why);
  }
}
