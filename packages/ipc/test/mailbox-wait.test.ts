import { readSync } from 'node:fs';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { Graph, compile } from '@hs/compiler';
import { ReadableSource } from '@hs/runtime';
import { ErrorCode, HostBackend, MemoryKind, unwrap } from '@hs/streams';
import { ChannelRuntime, FRAME_BYTES, IpcBoundaries, TopicPublisher, ipcAvailability, resolveMailboxWait, type MailboxWait } from '../src/index.js';
import type { SpinScheduler } from '../src/mailbox/mailbox-wait.js';
import { TopicMailbox, mailboxSupport } from '../src/mailbox/topic-mailbox.js';
import { testRuntimeDirectory } from './fixtures/topic-test-setup.js';

const support = mailboxSupport();
const available = ipcAvailability();
if (!support.ok) console.log(`mailbox wait tests on real mailboxes skipped: ${support.error.detail}`);

describe('resolveMailboxWait: the wait option of mailbox readers', () => {
  it('defaults to park and accepts spin windows in 0..10 000 us', () => {
    expect(unwrap(resolveMailboxWait(undefined, 't'))).toEqual({ kind: 'park' });
    expect(unwrap(resolveMailboxWait({ kind: 'park' }, 't'))).toEqual({ kind: 'park' });
    for (const spinMicroseconds of [0, 0.5, 100, 10_000]) {
      const wait = unwrap(resolveMailboxWait({ kind: 'spin', spinMicroseconds }, 't'));
      expect(wait).toEqual({ kind: 'spin', spinMicroseconds });
      expect(Object.isFrozen(wait)).toBe(true);
    }
  });

  const bad: { name: string; value: unknown; says: RegExp }[] = [
    { name: 'a negative window', value: { kind: 'spin', spinMicroseconds: -1 }, says: /spinMicroseconds .*0\.\.10000, got -1/ },
    { name: 'a window past the cap', value: { kind: 'spin', spinMicroseconds: 10_001 }, says: /got 10001/ },
    { name: 'NaN', value: { kind: 'spin', spinMicroseconds: Number.NaN }, says: /got NaN/ },
    { name: 'Infinity', value: { kind: 'spin', spinMicroseconds: Infinity }, says: /got Infinity/ },
    // Named as the string it is: printed bare, '100' read as if the valid number 100 were refused.
    { name: 'a string window', value: { kind: 'spin', spinMicroseconds: '100' }, says: /got "100" \(a string\)/ },
    { name: 'no window', value: { kind: 'spin' }, says: /got undefined/ },
    { name: 'an unknown kind', value: { kind: 'busy' }, says: /kind must be 'park' or 'spin', got "busy"/ },
    { name: 'null', value: null, says: /got null/ },
    { name: 'a number', value: 100, says: /got 100/ },
  ];
  for (const b of bad) {
    it(`refuses ${b.name} with InvalidArgument naming the caller`, () => {
      const resolved = resolveMailboxWait(b.value as MailboxWait, 'ChannelRuntime.connect');
      expect(resolved.ok).toBe(false);
      if (resolved.ok) return;
      expect(resolved.error.code).toBe(ErrorCode.InvalidArgument);
      expect(resolved.error.detail).toMatch(/^ChannelRuntime\.connect: wait/);
      expect(resolved.error.detail).toMatch(b.says);
    });
  }

  it.skipIf(!available.available)('ChannelRuntime.connect, TopicPublisher.create and IpcBoundaries.prepare reject a malformed wait before opening anything', async () => {
    const backend = new HostBackend();
    const runtimeDirectory = testRuntimeDirectory('hs-ipc-wait-');
    const wait = { kind: 'spin', spinMicroseconds: 1e6 } as const;
    await expect(ChannelRuntime.connect({ backend, topic: 'wait-bad', runtimeDirectory, wait })).rejects.toMatchObject({ code: ErrorCode.InvalidArgument });
    await expect(TopicPublisher.create({ backend, topic: 'wait-bad', memoryKind: MemoryKind.Host, slotCount: 2, slotByteSpan: 64, maxRank: 1, runtimeDirectory, wait })).rejects.toMatchObject({
      code: ErrorCode.InvalidArgument,
    });
    const graph = new Graph('wait-bad');
    const source = graph.add(new ReadableSource('s', Readable.from([new Uint8Array(8)]), { maxFrameBytes: 8, memoryKind: MemoryKind.Host }));
    graph.publish(source.frames, 'wait-bad.frames');
    await expect(IpcBoundaries.prepare(unwrap(compile(graph)), { backend, runtimeDirectory, wait })).rejects.toMatchObject({ code: ErrorCode.InvalidArgument });
    backend.dispose();
  });
});

/** A scheduler whose turns the test runs by hand, on a clock it sets (ms). */
class HandScheduler implements SpinScheduler {
  time = 0;
  readonly queue: (() => void)[] = [];
  now(): number {
    return this.time;
  }
  schedule(poll: () => void): unknown {
    this.queue.push(poll);
    return poll;
  }
  cancel(handle: unknown): void {
    const at = this.queue.indexOf(handle as () => void);
    if (at >= 0) this.queue.splice(at, 1);
  }
  /** Runs the one scheduled poll (a turn of the loop); false when none was scheduled. */
  turn(): boolean {
    const poll = this.queue.shift();
    poll?.();
    return poll !== undefined;
  }
}

/**
 * A publisher's and a subscriber's end of one mailbox in this process, and a count of the rings of the
 * subscriber's doorbell (read through the publisher's copy of its read end, before the watch's poll sees them:
 * the tests below never yield to the event loop while counting).
 */
function mailboxPair(name: string) {
  const address = { topic: `wait-${name}`, topicId: 5, slotCount: 8 };
  const publisher = unwrap(TopicMailbox.create(address));
  const [segment, ownBell, peerBell] = publisher.descriptors as [number, number, number];
  const subscriber = unwrap(TopicMailbox.open(address, publisher.token, { segment, ownBell, peerBell }));
  const frame = (marker: number): Uint8Array => {
    const bytes = new Uint8Array(FRAME_BYTES).fill(marker);
    return bytes;
  };
  const rings = (): number => {
    try {
      return readSync(ownBell, Buffer.alloc(64), 0, 64, null);
    } catch {
      return 0; // EAGAIN: not rung
    }
  };
  const received: number[] = [];
  const onFrame = (view: DataView): boolean => {
    received.push(view.getUint8(0));
    return true;
  };
  const corrupt: unknown[] = [];
  const close = (): void => {
    subscriber.close();
    publisher.close();
  };
  return { publisher, subscriber, frame, rings, received, onFrame, onCorrupt: (e: unknown) => corrupt.push(e), corrupt, close };
}

describe.skipIf(!support.ok)('TopicMailbox.watch with a spin window (hand-run scheduler, no timing)', () => {
  it('polls once per turn within the window without doorbell rings, then parks, and the next frame rings again', () => {
    const m = mailboxPair('spin');
    const s = new HandScheduler();
    unwrap(m.subscriber.watch(m.onFrame, m.onCorrupt, { kind: 'spin', spinMicroseconds: 1000 }, s));
    // The watch's first drain found nothing and opened a window: one poll scheduled, the reader awake.
    expect(m.subscriber.spinning).toBe(true);
    expect(s.queue).toHaveLength(1);

    expect(m.publisher.send(m.frame(1))).toBe(true);
    expect(m.rings()).toBe(0); // an awake reader is not rung
    expect(m.received).toEqual([]);
    expect(s.turn()).toBe(true);
    expect(m.received).toEqual([1]); // taken by the poll
    expect(m.subscriber.spinPolls).toBe(1);

    // The drain re-opened the window at t = 0: polls go on, one per turn, until 1 ms passed.
    s.time = 0.5;
    expect(s.turn()).toBe(true);
    expect(m.subscriber.spinning).toBe(true);
    expect(m.publisher.send(m.frame(2))).toBe(true);
    expect(s.turn()).toBe(true);
    expect(m.received).toEqual([1, 2]); // the window restarted at t = 0.5
    expect(m.rings()).toBe(0);
    s.time = 1.499;
    expect(s.turn()).toBe(true);
    expect(m.subscriber.spinning).toBe(true);
    s.time = 1.5;
    expect(s.turn()).toBe(true);
    // Window over: parked, nothing scheduled.
    expect(m.subscriber.spinning).toBe(false);
    expect(s.queue).toEqual([]);
    expect(m.subscriber.spinPolls).toBe(5);

    expect(m.publisher.send(m.frame(3))).toBe(true);
    expect(m.rings()).toBe(1); // the parked reader's doorbell
    expect(m.received).toEqual([1, 2]);
    m.subscriber.drain(); // what the doorbell's callback does
    expect(m.received).toEqual([1, 2, 3]);
    expect(m.subscriber.spinning).toBe(true); // and a new window
    expect(m.corrupt).toEqual([]);
    m.close();
  });

  it('closing mid-spin cancels the poll: nothing fires afterwards', () => {
    const m = mailboxPair('close');
    const s = new HandScheduler();
    unwrap(m.subscriber.watch(m.onFrame, m.onCorrupt, { kind: 'spin', spinMicroseconds: 5000 }, s));
    expect(s.turn()).toBe(true);
    expect(s.queue).toHaveLength(1);
    expect(m.publisher.send(m.frame(7))).toBe(true);
    const stale = s.queue[0]!;
    m.subscriber.close();
    expect(s.queue).toEqual([]); // cancelled
    expect(m.subscriber.spinning).toBe(false);
    stale(); // even a poll that raced the cancel hands nothing out
    expect(m.received).toEqual([]);
    expect(m.subscriber.spinPolls).toBe(1);
    m.publisher.close();
  });

  it('closing mid-spin on the real event loop leaves no immediate behind and hands nothing out', async () => {
    const m = mailboxPair('loop');
    const immediates = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Immediate').length;
    const before = immediates();
    unwrap(m.subscriber.watch(m.onFrame, m.onCorrupt, { kind: 'spin', spinMicroseconds: 10_000 }));
    expect(m.subscriber.spinning).toBe(true);
    expect(immediates()).toBe(before + 1);
    expect(m.publisher.send(m.frame(4))).toBe(true);
    m.subscriber.close();
    expect(immediates()).toBe(before);
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setTimeout(resolve, 20)); // past the window
    expect(m.received).toEqual([]);
    expect(m.subscriber.spinPolls).toBe(0);
    m.publisher.close();
  });

  it('park (the default) and a zero window never schedule a poll: the reader sleeps on its doorbell at once', () => {
    for (const wait of [undefined, { kind: 'park' } as const, { kind: 'spin', spinMicroseconds: 0 } as const]) {
      const m = mailboxPair('park');
      const s = new HandScheduler();
      unwrap(m.subscriber.watch(m.onFrame, m.onCorrupt, wait, s));
      expect(s.queue).toEqual([]);
      expect(m.publisher.send(m.frame(9))).toBe(true);
      expect(m.rings()).toBe(1);
      m.subscriber.drain();
      expect(m.received).toEqual([9]);
      expect(s.queue).toEqual([]);
      expect(m.subscriber.spinPolls).toBe(0);
      m.close();
    }
  });

  it('a frame that is pending when the window ends is drained instead of parking', () => {
    const m = mailboxPair('late');
    const s = new HandScheduler();
    unwrap(m.subscriber.watch(m.onFrame, m.onCorrupt, { kind: 'spin', spinMicroseconds: 10 }, s));
    s.time = 1; // the window ended
    expect(m.publisher.send(m.frame(6))).toBe(true);
    expect(s.turn()).toBe(true);
    expect(m.received).toEqual([6]);
    expect(m.subscriber.spinning).toBe(true); // that batch opened a new window
    expect(m.rings()).toBe(0);
    m.close();
  });
});
