import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ErrorCode, OK_VOID } from '@hs/streams';
import type { Tensor, TensorBacking } from '@hs/tensor';
import { FRAME_BYTES, FrameType, GoodbyeReason, ipcAvailability } from '../src/index.js';
import { SubscriberSessions, type SubscriberLost } from '../src/subscriber-session.js';
import { attachFrame, encodeRelease, goodbyeReason } from '../src/wire/control-frames.js';
import { readFrameHeader } from '../src/wire/frame-header.js';
import { connectFrameClient as connect } from './fixtures/frame-client.js';

// The subscriber protocol both publishers share, driven over a real Unix socket in this process (so the
// SO_PEERCRED check passes) with a stand-in slot backing: what the host tests of TopicPublisher and the GPU
// tests of DeviceTopicPublisher exercise through their publishers.
const available = ipcAvailability();
const dir = mkdtempSync(join(tmpdir(), 'hs-ipc-session-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const TOPIC_ID = 0x51;
const SLOTS = 4;

/** A slot backing that counts the read leases taken on it. */
function countingBacking(): TensorBacking & { leases: number } {
  const backing = {
    leases: 0,
    registerReleaseStream: () => OK_VOID,
    acquireLease: () => {
      backing.leases++;
      return OK_VOID;
    },
    releaseLease: () => {
      backing.leases--;
    },
  };
  return backing;
}

function release(slot: number, generation: number): Buffer {
  const frame = Buffer.alloc(FRAME_BYTES);
  encodeRelease(new DataView(frame.buffer, frame.byteOffset, FRAME_BYTES), 0, TOPIC_ID, slot, generation);
  return frame;
}

/** A HELLO stand-in: a frame of its own type is not needed here, only that one arrives first. */
function helloFrame(): Buffer {
  return Buffer.alloc(FRAME_BYTES, 0x11);
}

async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 2));
}

let opened: { server: Server; sessions: SubscriberSessions }[] = [];
afterEach(async () => {
  for (const { server, sessions } of opened.splice(0)) {
    sessions.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

async function serve(name: string, maxSubscribers = 4) {
  const path = join(dir, `${name}.sock`);
  const lost: SubscriberLost[] = [];
  const returned: boolean[] = [];
  let accepted = 0;
  const sessions = new SubscriberSessions({
    topic: name,
    topicId: TOPIC_ID,
    maxSubscribers,
    leaseTimeoutMs: 60_000,
    livenessIntervalMs: 60_000,
    attachTimeoutMs: 60_000,
    onAccepted: () => accepted++,
    onLeasesReturned: (closing) => returned.push(closing),
    onLost: (l) => lost.push(l),
  });
  const server = createServer((socket) => sessions.accept(socket));
  await new Promise<void>((resolve) => server.listen(path, resolve));
  opened.push({ server, sessions });
  return { path, sessions, lost, returned, accepted: () => accepted };
}

/** Lends `generation` of `slot` (on `backing`) to every subscriber, as a publish does. */
function publish(sessions: SubscriberSessions, backing: TensorBacking, slot: number): number {
  const generation = sessions.nextGeneration(slot);
  sessions.recordPublished(slot, generation, { backing } as unknown as Tensor);
  for (const sub of sessions.subscribers) sessions.lend(sub, backing, slot, generation, performance.now());
  return generation;
}

describe.skipIf(!available.available)('SubscriberSessions: the subscriber protocol of both publishers', () => {
  it('holds a connection until open() (a device topic before attach()), then sends HELLO, and counts it attached after its ATTACH', async () => {
    const { path, sessions, accepted } = await serve('held');
    const client = connect(path);
    await until(() => client.socket.readyState === 'open');
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(client.frames).toHaveLength(0);
    expect(sessions.attachedCount).toBe(0);
    sessions.open({ slotCount: SLOTS, hello: () => helloFrame() });
    const hello = await client.frame(1);
    expect(hello.getUint8(0)).toBe(0x11);
    expect([sessions.attachedCount, accepted()]).toEqual([0, 1]);
    client.send(attachFrame(TOPIC_ID, false));
    await until(() => sessions.attachedCount === 1);
  });

  it('returns a released lease, and drops a subscriber that releases what it does not hold (GOODBYE protocol violation)', async () => {
    const { path, sessions, lost, returned } = await serve('release');
    sessions.open({ slotCount: SLOTS, hello: () => helloFrame() });
    const client = connect(path);
    await client.frame(1);
    client.send(attachFrame(TOPIC_ID, false));
    await until(() => sessions.attachedCount === 1);
    const backing = countingBacking();
    const generation = publish(sessions, backing, 2);
    expect([generation, backing.leases]).toEqual([1, 1]);
    client.send(release(2, generation));
    await until(() => backing.leases === 0);
    expect(returned).toEqual([false]);
    expect(publish(sessions, backing, 2)).toBe(2);
    client.send(release(2, 1)); // generation 2 is held, not 1
    const bye = await client.frame(2);
    expect(readFrameHeader(bye, 0, TOPIC_ID)).toBe(FrameType.Goodbye);
    expect(goodbyeReason(bye, 0)).toBe(GoodbyeReason.ProtocolViolation);
    await until(() => lost.length === 1);
    expect(lost[0]).toMatchObject({ reason: 'protocolViolation', reclaimedLeases: 1 });
    expect(lost[0]!.error.code).toBe(ErrorCode.ProtocolError);
    expect(lost[0]!.error.message).toContain('release of slot 2 generation 1');
    expect([backing.leases, sessions.attachedCount, sessions.subscribers.size]).toEqual([0, 0, 0]);
  });

  it('counts a subscriber only after its ATTACH and refuses any other first frame', async () => {
    const { path, sessions, lost } = await serve('attach');
    sessions.open({ slotCount: SLOTS, hello: () => helloFrame() });
    const good = connect(path);
    await good.frame(1);
    expect([sessions.subscribers.size, sessions.attachedCount]).toEqual([1, 0]);
    good.send(attachFrame(TOPIC_ID, false));
    await until(() => sessions.attachedCount === 1);
    const bad = connect(path);
    await bad.frame(1);
    bad.send(release(0, 1));
    await bad.ended;
    expect(goodbyeReason(bad.frames[1]!, 0)).toBe(GoodbyeReason.ProtocolViolation);
    expect(lost.map((l) => [l.reason, l.error.detail])).toEqual([['protocolViolation', `topic attach: subscriber pid ${process.pid} dropped: the first frame of a subscriber must be Attach, got Release`]]);
    expect(sessions.attachedCount).toBe(1);
  });

  it('reclaims the leases of a subscriber whose connection closed and reports it closed (InvalidState)', async () => {
    const { path, sessions, lost, returned } = await serve('closed');
    sessions.open({ slotCount: SLOTS, hello: () => helloFrame() });
    const client = connect(path);
    await client.frame(1);
    client.send(attachFrame(TOPIC_ID, false));
    await until(() => sessions.attachedCount === 1);
    const backing = countingBacking();
    publish(sessions, backing, 0);
    publish(sessions, backing, 3);
    client.socket.destroy();
    await until(() => lost.length === 1);
    expect(lost[0]).toMatchObject({ pid: process.pid, reason: 'closed', reclaimedLeases: 2 });
    expect(lost[0]!.error.code).toBe(ErrorCode.InvalidState);
    expect([backing.leases, returned]).toEqual([0, [false]]);
  });

  it('refuses a subscriber past maxSubscribers; close() says GOODBYE (closed) to the rest, reclaims their leases and reports no loss', async () => {
    const { path, sessions, lost, returned } = await serve('limits', 1);
    sessions.open({ slotCount: SLOTS, hello: () => helloFrame() });
    const first = connect(path);
    await first.frame(1);
    first.send(attachFrame(TOPIC_ID, false));
    await until(() => sessions.attachedCount === 1);
    const second = connect(path);
    await second.ended;
    expect(second.frames).toHaveLength(0);
    const backing = countingBacking();
    publish(sessions, backing, 1);
    sessions.close();
    const bye = await first.frame(2);
    expect(goodbyeReason(bye, 0)).toBe(GoodbyeReason.Closed);
    expect([backing.leases, returned, lost]).toEqual([0, [true], []]);
    const late = connect(path);
    await late.ended;
    expect(late.frames).toHaveLength(0);
  });
});
