import type { Tensor } from '@hs/tensor';

/**
 * The bounded queue behind one plan edge: a fixed-capacity ring of tensors (the edge's admitted depth),
 * allocated when the session is created, of which the active rate generation's depth is usable.
 * `push` never grows it; the scheduler checks `hasRoom` before activating a producer.
 * Spec: "Size queue entries from nominal rates" (an explicit depth is exact authority; a new rate
 * generation changes the active depth without reallocation).
 */
export class Channel {
  private readonly ring: (Tensor | undefined)[];
  private head = 0;
  private count = 0;
  /** Most entries ever queued at once. */
  highWater = 0;
  /** Entries usable in the published rate generation (1..capacity). */
  activeDepth: number;

  constructor(
    /** Plan edge id. */
    readonly edgeId: string,
    /** Capacity in entries (the edge's admitted queue depth). */
    readonly capacity: number,
    activeDepth: number = capacity,
  ) {
    this.ring = new Array<Tensor | undefined>(capacity).fill(undefined);
    this.activeDepth = activeDepth;
  }

  /** Entries queued now. */
  get length(): number {
    return this.count;
  }

  /** True when one more entry fits. */
  get hasRoom(): boolean {
    return this.count < this.activeDepth;
  }

  /** Appends a tensor; returns false (and stores nothing) when the active depth is reached. */
  push(tensor: Tensor): boolean {
    if (this.count >= this.activeDepth) return false;
    this.ring[(this.head + this.count) % this.capacity] = tensor;
    this.count += 1;
    if (this.count > this.highWater) this.highWater = this.count;
    return true;
  }

  /** Removes and returns the oldest tensor, or `undefined` when empty. */
  shift(): Tensor | undefined {
    if (this.count === 0) return undefined;
    const t = this.ring[this.head];
    this.ring[this.head] = undefined;
    this.head = (this.head + 1) % this.capacity;
    this.count -= 1;
    return t;
  }
}
