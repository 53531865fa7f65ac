import type { EdgeDropPolicy } from '@hs/compiler';
import type { Tensor } from '@hs/tensor';

/**
 * The bounded queue behind one plan edge: a fixed-capacity ring of tensors (the edge's admitted depth),
 * allocated when the session is created, of which the active rate generation's depth is usable.
 * `push` never grows it; the scheduler checks `hasRoom` before activating a producer when the edge's
 * drop policy is `block`; `offer` applies the edge's drop policy to a full queue.
 * A selector input makes it keep only the newest entries (`keepNewest`): an arrival past them evicts
 * the oldest to the consumer's `evict` hook, except while an activation reads them (`pinned`).
 * Spec: "Size queue entries from nominal rates" (an explicit depth is exact authority; a new rate
 * generation changes the active depth without reallocation; selector retention).
 */
export class Channel {
  private readonly ring: (Tensor | undefined)[];
  private head = 0;
  private count = 0;
  /** Most entries ever queued at once. */
  highWater = 0;
  /** Entries usable in the published rate generation (1..capacity). */
  activeDepth: number;
  /** Entries dropped by the policy (`dropOldest` evictions, `dropNewest` skips). */
  dropped = 0;
  /** Emits refused with `Backpressured` because this edge was full. */
  backpressured = 0;
  /** Older entries a newest-entry read released unread (a non-trigger input of a temporal contract). */
  superseded = 0;
  /** Selector retention: entries kept (0: none); an arrival past them evicts the oldest through `evict`. */
  keepNewest = 0;
  /** True while an activation reads the selector's entries: arrivals queue instead of evicting. */
  pinned = false;
  /** Takes an entry a selector evicted (the consumer releases its lease on the right stream). */
  evict: ((tensor: Tensor) => void) | null = null;
  /** True when a full queue stops its producer's activation (`block`); the other policies never wait. */
  readonly gatesProducer: boolean;
  /** True when an emit onto the full queue is refused (`block`, `reject`) rather than dropping. */
  readonly refusesWhenFull: boolean;

  constructor(
    /** Plan edge id. */
    readonly edgeId: string,
    /** Capacity in entries (the edge's admitted queue depth). */
    readonly capacity: number,
    activeDepth: number = capacity,
    /** What an emit onto the full queue does. */
    readonly dropPolicy: EdgeDropPolicy = 'block',
  ) {
    this.gatesProducer = dropPolicy === 'block';
    this.refusesWhenFull = dropPolicy === 'block' || dropPolicy === 'reject';
    this.ring = new Array<Tensor | undefined>(capacity).fill(undefined);
    this.activeDepth = activeDepth;
  }

  /** Entries queued now. */
  get length(): number {
    return this.count;
  }

  /** True once its consumer went away (a tap whose loop ended): it takes nothing and never stalls the producer. */
  closed = false;

  /** True when one more entry fits (always, once closed; always for an unpinned selector at its retention). */
  get hasRoom(): boolean {
    return this.closed || this.count < this.activeDepth || this.evictsOnPush;
  }

  /** Appends a tensor (a selector first evicts its oldest past retention); returns false (and stores nothing) when the active depth is reached. */
  push(tensor: Tensor): boolean {
    if (this.evictsOnPush) this.evict!(this.shift()!);
    if (this.count >= this.activeDepth) return false;
    const at = this.head + this.count;
    this.ring[at < this.capacity ? at : at - this.capacity] = tensor;
    this.count += 1;
    if (this.count > this.highWater) this.highWater = this.count;
    return true;
  }

  /**
   * Queues `tensor` under the drop policy, for a channel that may be full: with room it is pushed;
   * full under `dropOldest` the oldest entry is evicted and returned (the caller gives back its lease)
   * and `tensor` pushed; full under `dropNewest` nothing is queued and `tensor` itself is returned.
   * Callers check `refusesWhenFull` first: a full `block`/`reject` queue is never offered to.
   * @returns the entry that left the queue (to release), or `undefined` when none did.
   */
  offer(tensor: Tensor): Tensor | undefined {
    if (this.push(tensor)) return undefined;
    this.dropped += 1;
    if (this.dropPolicy === 'dropNewest') return tensor;
    const evicted = this.shift();
    this.push(tensor);
    return evicted;
  }

  /**
   * Removes every queued tensor and gives back its lease without a release stream (nobody received
   * them). Used when a run fails, is abandoned, or a tap closes.
   */
  discardAll(): void {
    for (let tensor = this.shift(); tensor !== undefined; tensor = this.shift()) tensor.backing?.releaseLease(null);
  }

  /** The entry `index` places after the oldest (0: the oldest), or `undefined` past the end. */
  at(index: number): Tensor | undefined {
    return index < this.count ? this.ring[(this.head + index) % this.capacity] : undefined;
  }

  private get evictsOnPush(): boolean {
    return this.keepNewest > 0 && !this.pinned && this.count >= this.keepNewest;
  }

  /** Removes and returns the oldest tensor, or `undefined` when empty. */
  shift(): Tensor | undefined {
    if (this.count === 0) return undefined;
    const t = this.ring[this.head];
    this.ring[this.head] = undefined;
    this.head = this.head + 1 === this.capacity ? 0 : this.head + 1;
    this.count -= 1;
    return t;
  }
}
