import { createConnection, type Socket } from 'node:net';
import { ErrorCode, HostBackend, HsError, MemoryKind, unwrap } from '@hs/streams';
import { DType } from '@hs/tensor';
import { describe, expect, it } from 'vitest';
import { ChannelRuntime, TopicPublisher, ipcAvailability, type SubscriberLost } from '../src/index.js';
import { connectFrameClient } from './fixtures/frame-client.js';
import { expectDroppedAtAttachDeadline, sleep, testRuntimeDirectory, until } from './fixtures/topic-test-setup.js';

// Issue 21, defect 4: connections that never ATTACH must not pin leases or hold places under
// maxSubscribers past the attach deadline, so silent or reconnecting squatters cannot lock out or slow down
// a real subscriber.
const dir = testRuntimeDirectory('hs-ipc-attach-');

async function openTopic(topic: string, attachTimeoutMs: number) {
  const backend = new HostBackend();
  const pub = await TopicPublisher.create({ backend, topic, memoryKind: MemoryKind.Host, slotCount: 4, slotByteSpan: 64, maxRank: 1, maxSubscribers: 8, attachTimeoutMs, livenessIntervalMs: 20, runtimeDirectory: dir });
  const lost: SubscriberLost[] = [];
  pub.on('subscriberLost', (l: SubscriberLost) => lost.push(l));
  /** Publishes one tensor when a slot is free; false when every slot is still out. */
  const publish = (): boolean => {
    const loan = pub.pool.allocateTensor({ shape: [64], dtype: DType.uint8 });
    if (!loan.ok) return false;
    const guard = unwrap(loan.value.write(null));
    unwrap(guard.commit());
    unwrap(pub.publish(unwrap(loan.value.emit())));
    return true;
  };
  return { backend, pub, lost, publish };
}

/** A subscriber that releases every tensor as it arrives; `received` counts them. */
function drain(channel: ChannelRuntime): { received: () => number; done: Promise<HsError> } {
  let received = 0;
  const done = (async () => {
    for (;;) {
      const lease = await channel.receive().catch((error: HsError) => error);
      if (lease instanceof HsError) return lease;
      received++;
      unwrap(lease.release());
    }
  })();
  return { received: () => received, done };
}

/** Connections that never send ATTACH, each reconnecting 5 ms after the publisher dropped or refused it. */
function squatters(path: string, count: number): { connections: () => number; stop: () => void } {
  let stopped = false;
  let connections = 0;
  const live = new Set<Socket>();
  const connect = (): void => {
    if (stopped) return;
    connections++;
    const socket = createConnection(path);
    live.add(socket);
    socket.on('error', () => undefined);
    socket.resume(); // takes the HELLO (and the GOODBYE) and says nothing
    socket.on('close', () => {
      live.delete(socket);
      setTimeout(connect, 5);
    });
  };
  for (let i = 0; i < count; i++) connect();
  return {
    connections: () => connections,
    stop: () => {
      stopped = true;
      for (const socket of live) socket.destroy();
    },
  };
}

/** Frames the good subscriber receives per second while the publisher offers one every ms for `ms`. */
async function rateOver(ms: number, publish: () => boolean, received: () => number): Promise<{ published: number; perSecond: number }> {
  const start = received();
  const started = performance.now();
  let published = 0;
  const timer = setInterval(() => {
    if (publish()) published++;
  }, 1);
  await sleep(ms);
  clearInterval(timer);
  await sleep(20); // what is in flight arrives
  return { published, perSecond: ((received() - start) * 1000) / (performance.now() - started - 20) };
}

describe.skipIf(!ipcAvailability().available)('the ATTACH deadline: unattached connections hold no lease and no place for long', () => {
  it('8 silent connections fill maxSubscribers, hold no lease, and are dropped (GOODBYE attach timeout); then a real subscriber gets every frame', async () => {
    const { backend, pub, lost, publish } = await openTopic('attach-silent', 600);
    const silent = Array.from({ length: 8 }, () => connectFrameClient(pub.socketPath));
    await Promise.all(silent.map((client) => client.frame(1))); // each got its HELLO: all 8 places taken
    expect(pub.subscriberCount).toBe(0);
    // A real subscriber is refused while they squat...
    await expect(ChannelRuntime.connect({ backend, topic: 'attach-silent', runtimeDirectory: dir, connectTimeoutMs: 1000 })).rejects.toMatchObject({ code: ErrorCode.NotFound });
    // ...and what is published meanwhile is lent to none of them: every slot recycles at once.
    for (let i = 0; i < 8; i++) expect(publish()).toBe(true);
    expect(pub.occupancy).toBe(0);
    expect(silent.every((client) => client.frames.length === 1)).toBe(true); // no DESCRIPTOR, only the HELLO
    // Past the deadline each is told why and dropped.
    await expectDroppedAtAttachDeadline(silent, lost, 600);

    const channel = await ChannelRuntime.connect({ backend, topic: 'attach-silent', runtimeDirectory: dir });
    await until(() => pub.subscriberCount === 1, 'attach');
    const good = drain(channel);
    let sent = 0;
    while (sent < 100) {
      if (publish()) sent++;
      else await sleep(1);
    }
    await until(() => good.received() === 100, 'every frame');
    await sleep(700); // past the deadline: an attached subscriber is never dropped for it
    expect(lost).toHaveLength(8);
    channel.close();
    await good.done;
    await pub.close();
    backend.dispose();
  });

  it('7 reconnecting squatters leave a good subscriber at (close to) its squatter-free rate', async () => {
    const { backend, pub, lost, publish } = await openTopic('attach-squat', 500);
    const channel = await ChannelRuntime.connect({ backend, topic: 'attach-squat', runtimeDirectory: dir });
    await until(() => pub.subscriberCount === 1, 'attach');
    const good = drain(channel);
    const baseline = await rateOver(1500, publish, good.received);
    const squat = squatters(pub.socketPath, 7);
    await until(() => lost.length >= 7, 'the first squatters dropped');
    const squatted = await rateOver(1500, publish, good.received);
    const reconnects = squat.connections();
    squat.stop();
    const ratio = squatted.perSecond / baseline.perSecond;
    console.log(
      `good subscriber: ${baseline.perSecond.toFixed(1)} frames/s alone, ${squatted.perSecond.toFixed(1)} frames/s beside 7 reconnecting squatters ` +
        `(ratio ${ratio.toFixed(3)}; ${reconnects} squatter connections, ${lost.length} dropped)`,
    );
    expect(baseline.perSecond).toBeGreaterThan(20);
    expect(reconnects).toBeGreaterThan(7); // they did come back
    expect(ratio).toBeGreaterThan(0.7);
    expect(pub.subscriberCount).toBe(1);
    expect(lost.every((l) => l.reason === 'attachTimeout' && l.reclaimedLeases === 0)).toBe(true);
    channel.close();
    await good.done;
    await pub.close();
    backend.dispose();
  }, 30_000);
});
