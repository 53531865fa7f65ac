import { describe, expect, it } from 'vitest';
import { SubscriberLeases } from '../src/subscriber-leases.js';
import { encodeRelease } from '../src/wire/control-frames.js';
import { FRAME_BYTES } from '../src/wire/frame-layout.js';

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
