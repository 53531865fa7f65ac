/**
 * A pool's bookkeeping of slot indices and counts: a preallocated stack of free slots plus the
 * counters `TensorPool.stats` reports. Taking and returning slots allocates nothing.
 */
export class SlotLedger {
  readonly #free: Int32Array;
  #freeCount: number;
  #loaned = 0;
  #published = 0;
  #highWater = 0;
  #exhaustions = 0;

  constructor(slotCount: number) {
    this.#free = new Int32Array(slotCount);
    // Slot 0 on top, so a quiet pool keeps reusing the lowest slots.
    for (let i = 0; i < slotCount; i++) this.#free[i] = slotCount - 1 - i;
    this.#freeCount = slotCount;
  }

  /** Free slots now. */
  get available(): number {
    return this.#freeCount;
  }
  /** Slots lent out and not yet published (loaned, writing or committed). */
  get loaned(): number {
    return this.#loaned;
  }
  /** Published slots not yet recycled. */
  get published(): number {
    return this.#published;
  }
  /** Most slots ever in use at once. */
  get highWater(): number {
    return this.#highWater;
  }
  /** Allocation requests that found no free slot. */
  get exhaustions(): number {
    return this.#exhaustions;
  }

  /** Pops a free slot index, or returns -1 (and counts an exhaustion). Confirm with `lent` or undo with `untake`. */
  take(): number {
    if (this.#freeCount === 0) {
      this.#exhaustions++;
      return -1;
    }
    return this.#free[--this.#freeCount] as number;
  }

  /** The slot `take()` gave out was lent: count it as loaned. */
  lent(): void {
    this.#loaned++;
    const inUse = this.#free.length - this.#freeCount;
    if (inUse > this.#highWater) this.#highWater = inUse;
  }

  /** Puts back the slot `take()` gave out when its request was invalid. */
  untake(index: number): void {
    this.#free[this.#freeCount++] = index;
  }

  /** A loaned slot was published. */
  markPublished(): void {
    this.#loaned--;
    this.#published++;
  }

  /** A slot returns to the free stack: abandoned while loaned (`wasPublished` false) or recycled after publication. */
  returned(index: number, wasPublished: boolean): void {
    if (wasPublished) this.#published--;
    else this.#loaned--;
    this.#free[this.#freeCount++] = index;
  }
}
