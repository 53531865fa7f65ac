import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ErrorCode } from '@hs/streams';
import { SubscriberLeases, dropLapsedSubscribers, type LeaseHolder, type LivenessLoss } from '../src/subscriber-leases.js';
import { encodeRelease, goodbyeReason } from '../src/wire/control-frames.js';
import { FRAME_BYTES, GoodbyeReason } from '../src/wire/frame-layout.js';

function release(slot: number, generation: number): DataView {
  const view = new DataView(new ArrayBuffer(FRAME_BYTES));
  encodeRelease(view, 0, 7, slot, generation);
  return view;
}

describe('SubscriberLeases: the leases one subscriber holds', () => {
  it('a RELEASE of the held generation ends the lease and names the slot', () => {
    const leases = new SubscriberLeases(4);
    leases.hold(2, 5, 0);
    leases.hold(3, 1, 0);
    expect(leases.count).toBe(2);
    expect(leases.releaseFrame(release(2, 5))).toBe(2);
    expect(leases.count).toBe(1);
    // Released once: a second RELEASE of it is refused.
    expect(leases.releaseFrame(release(2, 5))).toMatch(/slot 2 generation 5, but the subscriber holds no lease there/);
  });

  it('refuses a RELEASE of another generation, of a slot out of range, or with reserved bytes set, and keeps the lease', () => {
    const leases = new SubscriberLeases(4);
    leases.hold(1, 9, 0);
    expect(leases.releaseFrame(release(1, 8))).toMatch(/holds generation 9/);
    expect(leases.releaseFrame(release(4, 9))).toMatch(/slot 4 is out of range \(the topic has 4 slots\)/);
    expect(leases.releaseFrame(release(1, 0))).toMatch(/generation is not a positive safe integer/);
    const dirty = release(1, 9);
    dirty.setUint8(200, 1);
    expect(leases.releaseFrame(dirty)).toMatch(/reserved bytes 24\.\.255 are not zero/);
    expect(leases.count).toBe(1);
    expect(leases.releaseFrame(release(1, 9))).toBe(1);
  });

  it('finds an overdue lease and reclaims every lease at once', () => {
    const leases = new SubscriberLeases(3);
    leases.hold(0, 1, 100);
    leases.hold(2, 4, 50);
    expect(leases.overdueSlot(120, 100)).toBe(-1);
    expect(leases.overdueSlot(160, 100)).toBe(2);
    const reclaimed: number[] = [];
    expect(leases.reclaimAll((slot) => reclaimed.push(slot))).toBe(2);
    expect(reclaimed).toEqual([0, 2]);
    expect(leases.count).toBe(0);
    expect(leases.overdueSlot(1e9, 1)).toBe(-1);
  });
});

describe('dropLapsedSubscribers: one liveness pass (clock injected)', () => {
  /** A subscriber record of this (live) process over a socket stand-in that records the GOODBYE it is sent. */
  function holder(attached: boolean, acceptedAtMs: number) {
    const sent: number[] = [];
    const socket = { end: (frame: Buffer) => sent.push(goodbyeReason(new DataView(frame.buffer, frame.byteOffset, FRAME_BYTES), 0)), destroy: () => sent.push(-1) };
    const sub: LeaseHolder = { socket: socket as unknown as Socket, pid: process.pid, attached, acceptedAtMs, leases: new SubscriberLeases(2) };
    return { sub, sent };
  }
  const limits = { attachTimeoutMs: 2000, leaseTimeoutMs: 5000 };

  it('drops a connection unattached past attachTimeoutMs with GOODBYE attach timeout (ProtocolError naming the timeout), not before', () => {
    const silent = holder(false, 1000);
    const attached = holder(true, 0);
    const dropped: LivenessLoss[] = [];
    dropLapsedSubscribers([silent.sub, attached.sub], 'cam', 9, limits, (_, loss) => dropped.push(loss), 3000);
    expect(dropped).toEqual([]); // exactly at the deadline: still in time
    dropLapsedSubscribers([silent.sub, attached.sub], 'cam', 9, limits, (sub, loss) => {
      expect(sub).toBe(silent.sub);
      dropped.push(loss);
    }, 3001);
    expect(dropped.map((l) => [l.reason, l.error.code])).toEqual([['attachTimeout', ErrorCode.ProtocolError]]);
    expect(dropped[0]!.error.message).toContain('attachTimeoutMs (2000 ms)');
    expect(silent.sent).toEqual([GoodbyeReason.AttachTimeout]);
    expect(attached.sent).toEqual([]); // attached long ago, holding nothing: fine
  });

  it('still applies the lease timeout to attached subscribers', () => {
    const slow = holder(true, 0);
    slow.sub.leases.hold(1, 4, 100);
    const dropped: LivenessLoss[] = [];
    dropLapsedSubscribers([slow.sub], 'cam', 9, limits, (_, loss) => dropped.push(loss), 5101);
    expect(dropped.map((l) => l.reason)).toEqual(['leaseTimeout']);
    expect(slow.sent).toEqual([GoodbyeReason.LeaseTimeout]);
  });
});
