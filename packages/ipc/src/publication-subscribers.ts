import type { BoundaryPublicationStats } from '@hs/runtime';
import { ErrorCode, HsError } from '@hs/streams';
import { SubscriberLossTally } from './subscriber-loss-tally.js';
import type { SubscriberLost } from './subscriber-session.js';

/** What a graph publication watches on its publisher: `TopicPublisher` and `DeviceTopicPublisher` alike. */
export interface WatchedPublisher {
  readonly topic: string;
  /** Subscribers attached now. */
  readonly subscriberCount: number;
  on(event: 'subscriberLost', listener: (lost: SubscriberLost) => void): unknown;
  off(event: 'subscriberLost', listener: (lost: SubscriberLost) => void): unknown;
}

/** How long `awaitAttached` sleeps between checks for the subscribers it waits for (ms). */
const SUBSCRIBER_POLL_MS = 5;

/**
 * The subscriber side of a graph publication (host or device topic), shared by `GraphPublication` and
 * `DeviceGraphPublication`: it listens to the publisher's `subscriberLost` events from construction to
 * `detach()`, counts them for `stats()` (the session's `RunMetrics.topics`), and waits for the subscribers
 * a run starts with. Spec: "Crossing process boundaries: the generation fence" (a typed error to the side
 * that reclaimed).
 */
export class PublicationSubscribers {
  readonly #losses = new SubscriberLossTally();

  constructor(private readonly publisher: WatchedPublisher) {
    publisher.on('subscriberLost', this.#losses.record);
  }

  /**
   * Resolves once `count` subscribers attached (at once for 0), polling every 5 ms; rejects with HsError
   * `NotFound` naming how many came when `timeoutMs` (ms) passed first.
   */
  async awaitAttached(count: number, timeoutMs: number): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    while (this.publisher.subscriberCount < count) {
      if (performance.now() >= deadline) {
        throw new HsError(ErrorCode.NotFound, `topic ${this.publisher.topic}: ${this.publisher.subscriberCount} of the ${count} awaited subscribers attached within ${timeoutMs} ms`);
      }
      await new Promise((resolve) => setTimeout(resolve, SUBSCRIBER_POLL_MS));
    }
  }

  /** Subscribers attached now, and the ones dropped so far with their reclaimed leases and latest loss. */
  stats(): BoundaryPublicationStats {
    return this.#losses.stats(this.publisher.subscriberCount);
  }

  /** Stops listening to the publisher (the session is done with it). Idempotent. */
  detach(): void {
    this.publisher.off('subscriberLost', this.#losses.record);
  }
}
