import type { BoundaryPublicationStats, TopicSubscriberLoss } from '@hs/runtime';
import type { SubscriberLost } from './subscriber-session.js';

/** How many of the latest drops a tally lists (`BoundaryPublicationStats.losses`); older ones are only counted. */
export const SUBSCRIBER_LOSS_HISTORY = 64;

const NO_LOSSES: readonly TopicSubscriberLoss[] = Object.freeze([]);

/**
 * What a graph publication tells its session about dropped subscribers (`BoundaryPublication.stats()`,
 * reported in `RunMetrics.topics`): how many were dropped, how many read leases came back from them, and
 * the latest `SUBSCRIBER_LOSS_HISTORY` drops with their typed errors, oldest first (`lastLoss` is the
 * newest), so a burst of drops keeps every cause. Fed by the publisher's `subscriberLost` reports, for
 * host and device topics alike. Spec: "Crossing process boundaries: the generation fence" (a typed error
 * to the side that reclaimed).
 */
export class SubscriberLossTally {
  #lost = 0;
  #reclaimedLeases = 0;
  /** Ring of the latest drops; `#next` is where the next one goes once it is full. */
  readonly #ring: TopicSubscriberLoss[] = [];
  #next = 0;
  /** The ring in order, made at most once per change (stats() runs every metrics snapshot). */
  #snapshot: readonly TopicSubscriberLoss[] | null = NO_LOSSES;

  /** @param capacity drops listed at most (a positive integer). */
  constructor(private readonly capacity = SUBSCRIBER_LOSS_HISTORY) {}

  /** Counts one dropped subscriber (bound: pass it as the publisher's listener). */
  readonly record = (lost: SubscriberLost): void => {
    this.#lost++;
    this.#reclaimedLeases += lost.reclaimedLeases;
    const loss: TopicSubscriberLoss = Object.freeze({ pid: lost.pid, reason: lost.reason, code: lost.error.code, detail: lost.error.detail });
    if (this.#ring.length < this.capacity) this.#ring.push(loss);
    else this.#ring[this.#next] = loss;
    this.#next = (this.#next + 1) % this.capacity;
    this.#snapshot = null;
  };

  /** The listed drops, oldest first. */
  get losses(): readonly TopicSubscriberLoss[] {
    if (this.#snapshot === null) {
      const full = this.#ring.length === this.capacity;
      this.#snapshot = Object.freeze(full ? [...this.#ring.slice(this.#next), ...this.#ring.slice(0, this.#next)] : [...this.#ring]);
    }
    return this.#snapshot;
  }

  /** The figures for the session, with `subscribers` attached now. */
  stats(subscribers: number): BoundaryPublicationStats {
    const losses = this.losses;
    return { subscribers, subscribersLost: this.#lost, reclaimedLeases: this.#reclaimedLeases, lastLoss: losses[losses.length - 1] ?? null, losses };
  }
}
