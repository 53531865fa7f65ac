import { ErrorCode, OK_VOID, err, type Result } from '@hs/streams';
import type { Tensor } from '@hs/tensor';

/**
 * One received tensor, held until `release()`. The tensor is read-only and lives in the publisher's shared
 * segment (zero copy); after `release()` (or the channel closing) it turns stale and its accessors report
 * `InvalidState`. Each slot reuses one lease object, so do not keep it past `release()`.
 * Spec: "Crossing process boundaries: the generation fence" (an importer's claim on an exporter slot).
 */
export class TopicLease {
  #generation = 0;
  #held = false;

  /** @internal Made by `ChannelRuntime`, one per slot; `onRelease` sends the RELEASE frame. */
  constructor(
    private readonly onRelease: (slot: number, generation: number) => void,
    /** Slot index in the publisher's boundary pool. */
    readonly slot: number,
    /** The read-only tensor over the slot. */
    readonly tensor: Tensor,
  ) {}

  /** Publication count of the slot this lease carries. */
  get generation(): number {
    return this.#generation;
  }

  /** True until `release()` or the channel closes. */
  get held(): boolean {
    return this.#held;
  }

  /** @internal For the channel: the lease now carries `generation`. */
  hold(generation: number): void {
    this.#generation = generation;
    this.#held = true;
  }

  /** @internal For the channel: the lease ends without a release frame (the channel closed). */
  drop(): void {
    this.#held = false;
  }

  /**
   * Returns the slot to the publisher (a RELEASE frame); the tensor turns stale. `InvalidState` when the
   * lease was already released or its channel closed.
   */
  release(): Result<void> {
    if (!this.#held) return err(ErrorCode.InvalidState, `lease of slot ${this.slot} generation ${this.#generation} was already released (or its channel closed)`);
    this.#held = false;
    this.onRelease(this.slot, this.#generation);
    return OK_VOID;
  }
}
