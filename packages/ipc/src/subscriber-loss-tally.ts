import type { BoundaryPublicationStats, TopicSubscriberLoss } from '@hs/runtime';
import type { SubscriberLost } from './subscriber-session.js';

/**
 * What a graph publication tells its session about dropped subscribers (`BoundaryPublication.stats()`,
 * reported in `RunMetrics.topics`): how many were dropped, how many read leases came back from them, and
 * the latest drop with its typed error. Fed by the publisher's `subscriberLost` reports, for host and
 * device topics alike. Spec: "Crossing process boundaries: the generation fence" (a typed error to the
 * side that reclaimed).
 */
export class SubscriberLossTally {
  #lost = 0;
  #reclaimedLeases = 0;
  #last: TopicSubscriberLoss | null = null;

  /** Counts one dropped subscriber (bound: pass it as the publisher's listener). */
  readonly record = (lost: SubscriberLost): void => {
    this.#lost++;
    this.#reclaimedLeases += lost.reclaimedLeases;
    this.#last = { pid: lost.pid, reason: lost.reason, code: lost.error.code, detail: lost.error.detail };
  };

  /** The figures for the session, with `subscribers` attached now. */
  stats(subscribers: number): BoundaryPublicationStats {
    return { subscribers, subscribersLost: this.#lost, reclaimedLeases: this.#reclaimedLeases, lastLoss: this.#last };
  }
}
