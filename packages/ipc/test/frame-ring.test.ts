import { closeSync, readSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { unwrap } from '@hs/streams';
import { FRAME_BYTES, SharedSegment } from '../src/index.js';
import { DrainOutcome, FrameRing } from '../src/mailbox/frame-ring.js';
import { DESCRIPTOR_RING_CONTROL, RING_ENTRIES, RingWord, mailboxByteSize, mailboxCapacity } from '../src/mailbox/mailbox-layout.js';
import { mailboxSupport } from '../src/mailbox/topic-mailbox.js';

const support = mailboxSupport();
if (!support.ok) console.log(`FrameRing tests skipped: ${support.error.detail}`);

/** A ring of `capacity` entries over a plain 0600 segment (no mailbox header), and a doorbell whose rings can be counted. */
function plainRing(name: string, capacity: number) {
  const native = unwrap(support);
  const segment = unwrap(SharedSegment.create({ name: `/hs.${process.getuid!()}.${process.pid}.ring-${name}`, byteSize: mailboxByteSize(capacity) }));
  // The doorbell pipe's read end counts the rings without going through the addon's drain.
  const [counter, bell] = native.createDoorbellPipe();
  const writer = new FrameRing(native, segment.bytes, DESCRIPTOR_RING_CONTROL, RING_ENTRIES, capacity);
  const reader = new FrameRing(native, segment.bytes, DESCRIPTOR_RING_CONTROL, RING_ENTRIES, capacity);
  const control = new Uint32Array(segment.bytes.buffer, segment.bytes.byteOffset + DESCRIPTOR_RING_CONTROL, 48);
  const staging = new Uint32Array(FRAME_BYTES / 4);
  const view = new DataView(staging.buffer);
  const frame = (marker: number): Uint8Array => new Uint8Array(FRAME_BYTES).fill(marker & 0xff).map((b, i) => (i < 4 ? (marker >>> (8 * i)) & 0xff : b));
  const drainAll = (limit = Infinity): { markers: number[]; outcome: DrainOutcome } => {
    const markers: number[] = [];
    const outcome = reader.drain(staging, view, (v) => {
      markers.push(v.getUint32(0, true));
      // Every byte past the marker is the frame's fill byte: the whole entry was copied.
      for (let i = 4; i < FRAME_BYTES; i++) if (v.getUint8(i) !== (v.getUint32(0, true) & 0xff)) throw new Error(`byte ${i} of frame ${v.getUint32(0, true)} differs`);
      return markers.length < limit;
    });
    return { markers, outcome };
  };
  const rings = (): number => {
    const got = Buffer.alloc(64);
    try {
      return readSync(counter, got, 0, 64, null);
    } catch {
      return 0; // EAGAIN: the doorbell holds no ring
    }
  };
  const dispose = (): void => {
    closeSync(counter);
    native.closeDoorbell(bell);
    segment.unlink();
    segment.close();
  };
  return { writer, reader, control, bell, frame, drainAll, rings, dispose };
}

describe.skipIf(!support.ok)('FrameRing (one direction of a topic mailbox, over a plain segment)', () => {
  it('sizes rings to the next power of two of the slot count', () => {
    expect([1, 2, 3, 4, 5, 8, 9, 1000].map(mailboxCapacity)).toEqual([1, 2, 4, 4, 8, 8, 16, 1024]);
    expect(mailboxByteSize(4)).toBe(RING_ENTRIES + 2 * 4 * FRAME_BYTES);
  });

  it('push returns false once the ring is full and writes nothing; drain hands frames out in order', () => {
    const r = plainRing('full', 4);
    for (let i = 0; i < 4; i++) expect(r.writer.push(r.frame(i + 1), r.bell)).toBe(true);
    expect(Atomics.load(r.control, RingWord.tail / 4)).toBe(4);
    const entries = new Uint8Array(r.control.buffer, r.control.byteOffset - DESCRIPTOR_RING_CONTROL + RING_ENTRIES, 4 * FRAME_BYTES);
    const before = entries.slice();
    expect(r.writer.push(r.frame(99), r.bell)).toBe(false);
    expect(entries).toEqual(before);
    expect(Atomics.load(r.control, RingWord.tail / 4)).toBe(4);
    expect(r.drainAll()).toEqual({ markers: [1, 2, 3, 4], outcome: DrainOutcome.Drained });
    expect(Atomics.load(r.control, RingWord.head / 4)).toBe(4);
    // Room again once the head moved.
    expect(r.writer.push(r.frame(5), r.bell)).toBe(true);
    expect(r.drainAll()).toEqual({ markers: [5], outcome: DrainOutcome.Drained });
    r.dispose();
  });

  it('keeps order across many wrap-arounds, and a handler that stops leaves the rest for the next drain', () => {
    const r = plainRing('wrap', 8);
    let next = 0;
    const seen: number[] = [];
    for (let round = 0; round < 50; round++) {
      const burst = 1 + (round % 8);
      for (let i = 0; i < burst; i++) expect(r.writer.push(r.frame(next++), r.bell)).toBe(true);
      const first = r.drainAll(1);
      expect(first.outcome).toBe(DrainOutcome.Stopped);
      seen.push(...first.markers);
      // The stopped drain published a head one entry on, so the rest is still there.
      expect(Atomics.load(r.control, RingWord.head / 4)).toBe(seen.length);
      seen.push(...r.drainAll().markers);
    }
    expect(seen).toEqual(Array.from({ length: next }, (_, i) => i));
    r.dispose();
  });

  it('park is true only when nothing is left; a commit rings a parked reader once and a busy one not at all', () => {
    const r = plainRing('park', 4);
    expect(r.rings()).toBe(0);
    expect(r.reader.park()).toBe(true);
    expect(Atomics.load(r.control, RingWord.parked / 4)).toBe(1);
    expect(r.writer.push(r.frame(1), r.bell)).toBe(true);
    expect(Atomics.load(r.control, RingWord.parked / 4)).toBe(0);
    expect(r.rings()).toBe(1);
    expect(r.writer.push(r.frame(2), r.bell)).toBe(true);
    expect(r.rings()).toBe(0); // the reader was woken already and has not parked since
    // Parking with frames pending says "drain again first".
    expect(r.reader.park()).toBe(false);
    expect(r.drainAll().markers).toEqual([1, 2]);
    expect(r.reader.park()).toBe(true);
    expect(r.writer.push(r.frame(3), r.bell)).toBe(true);
    expect(r.rings()).toBe(1);
    r.dispose();
  });

  it('reports a tail beyond the capacity as Corrupt and hands out nothing', () => {
    const r = plainRing('corrupt', 4);
    expect(r.writer.push(r.frame(1), r.bell)).toBe(true);
    expect(r.drainAll().markers).toEqual([1]);
    for (const tail of [1 + 5, 0xffffffff, 0x80000000]) {
      Atomics.store(r.control, RingWord.tail / 4, tail);
      expect(r.drainAll()).toEqual({ markers: [], outcome: DrainOutcome.Corrupt });
      expect(Atomics.load(r.control, RingWord.head / 4)).toBe(1);
    }
    // Exactly a full ring ahead is still legal.
    for (let i = 0; i < 4; i++) expect(r.writer.push(r.frame(2 + i), r.bell)).toBe(true);
    expect(r.drainAll().markers).toEqual([2, 3, 4, 5]);
    r.dispose();
  });

  it('a reader head the peer moved past the tail reads as a full ring: the writer writes nothing', () => {
    const r = plainRing('head', 4);
    Atomics.store(r.control, RingWord.head / 4, 3);
    expect(r.writer.push(r.frame(1), r.bell)).toBe(false);
    expect(Atomics.load(r.control, RingWord.tail / 4)).toBe(0);
    r.dispose();
  });

  it('a doorbell pipe whose writer closed wakes its watch once and is not polled again; a ring to a closed reader returns', async () => {
    const native = unwrap(support);
    const [read, write] = native.createDoorbellPipe();
    let wakes = 0;
    const watch = native.watchDoorbell(read, () => wakes++);
    native.closeDoorbell(write);
    // End of file: a poll that kept reporting it would wake the watch on every turn of the loop.
    for (let turn = 0; turn < 50 && wakes === 0; turn++) await new Promise((resolve) => setTimeout(resolve, 2));
    for (let turn = 0; turn < 20; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(wakes).toBe(1);
    native.unwatchDoorbell(watch);
    native.closeDoorbell(read);
    const [closedRead, ringing] = native.createDoorbellPipe();
    native.closeDoorbell(closedRead);
    expect(() => native.ringDoorbell(ringing)).not.toThrow(); // EPIPE counts as rung (and Node ignores SIGPIPE)
    native.closeDoorbell(ringing);
  });
});
