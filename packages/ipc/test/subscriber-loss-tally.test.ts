import { describe, expect, it } from 'vitest';
import { ErrorCode, HsError } from '@hs/streams';
import { SUBSCRIBER_LOSS_HISTORY, SubscriberLossTally } from '../src/subscriber-loss-tally.js';
import type { SubscriberLost } from '../src/subscriber-session.js';

const loss = (pid: number): SubscriberLost => ({ pid, reason: 'processGone', reclaimedLeases: 1, error: new HsError(ErrorCode.InvalidState, `subscriber process ${pid} is gone`) });

describe('SubscriberLossTally', () => {
  it('starts empty', () => {
    expect(new SubscriberLossTally().stats(2)).toEqual({ subscribers: 2, subscribersLost: 0, reclaimedLeases: 0, lastLoss: null, losses: [] });
  });

  it('keeps every drop of a burst, oldest first, lastLoss the newest', () => {
    const tally = new SubscriberLossTally();
    for (const pid of [10, 11, 12]) tally.record(loss(pid));
    const stats = tally.stats(0);
    expect(stats.losses?.map((l) => l.pid)).toEqual([10, 11, 12]);
    expect(stats.lastLoss).toEqual({ pid: 12, reason: 'processGone', code: ErrorCode.InvalidState, detail: 'subscriber process 12 is gone' });
    expect(stats).toMatchObject({ subscribersLost: 3, reclaimedLeases: 3 });
    // Unchanged between drops: the same frozen list, not a copy per snapshot.
    expect(tally.stats(0).losses).toBe(stats.losses);
    expect(Object.isFrozen(stats.losses)).toBe(true);
  });

  it(`lists at most the last ${SUBSCRIBER_LOSS_HISTORY} drops and counts them all`, () => {
    const tally = new SubscriberLossTally();
    const total = SUBSCRIBER_LOSS_HISTORY + 6;
    for (let pid = 0; pid < total; pid++) tally.record(loss(pid));
    const stats = tally.stats(0);
    expect(stats.subscribersLost).toBe(total);
    expect(stats.losses).toHaveLength(SUBSCRIBER_LOSS_HISTORY);
    expect(stats.losses?.map((l) => l.pid)).toEqual(Array.from({ length: SUBSCRIBER_LOSS_HISTORY }, (_, i) => i + 6));
    expect(stats.lastLoss?.pid).toBe(total - 1);
  });
});
