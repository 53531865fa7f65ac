import { join } from 'node:path';
import type { TensorPool } from '@hs/pool';
import { Device, MemoryKind, unwrap, type Stream } from '@hs/streams';
import { DType } from '@hs/tensor';
import { describe, expect, it } from 'vitest';
import { DeviceTopicPublisher, FrameType, GoodbyeReason, decodeDeviceHello, ipcAvailability, type SubscriberLost } from '../src/index.js';
import { TopicGraphSubscription } from '../src/graph/topic-graph-subscription.js';
import { attachFrame, goodbyeReason } from '../src/wire/control-frames.js';
import { readFrameHeader } from '../src/wire/frame-header.js';
import { connectFrameClient } from './fixtures/frame-client.js';
import { StandInIpcBackend, expectDroppedAtAttachDeadline, sleep, subscribeEndpoint, testRuntimeDirectory, until } from './fixtures/topic-test-setup.js';

// Issue 21, defect 4 on device topics (wire version 2): a device subscriber sends ATTACH once it imported the
// CUDA IPC handle, the publisher lends nothing before it and drops a connection that sends none within
// attachTimeoutMs. On the host backend with a stand-in for CUDA IPC (the CUDA run:
// tooling/reliability/test/cross-process-topics.cuda.test.ts).
const available = ipcAvailability();
const dir = testRuntimeDirectory('hs-ipc-device-attach-');
const SLOTS = 4;
const SPAN = 256;

const endpoint = (topic: string) => subscribeEndpoint(topic, { memoryKind: MemoryKind.CudaDevice, device: Device.cuda(0), transport: 'cudaIpc', stream: null, maxReleaseStreams: 1 });

async function openDeviceTopic(topic: string, attachTimeoutMs: number) {
  const backend = new StandInIpcBackend();
  const producer = unwrap(backend.createStream(Device.cuda(0), { label: 'producer' }));
  const pub = await DeviceTopicPublisher.listen({ topic, runtimeDirectory: dir, maxSubscribers: 8, attachTimeoutMs, livenessIntervalMs: 20 });
  const lost: SubscriberLost[] = [];
  pub.on('subscriberLost', (l: SubscriberLost) => lost.push(l));
  const pool: TensorPool = unwrap(pub.attach(backend, { device: Device.cuda(0), producerStream: producer, slotCount: SLOTS, slotByteSpan: SPAN, maxRank: 1 }));
  /** Publishes one tensor when a slot is free (after recycling what came back); the subscriber count, or -1 when every slot is out. */
  const publish = (): number => {
    pool.retire();
    const loan = pool.allocateTensor({ shape: [SPAN], dtype: DType.uint8 });
    if (!loan.ok) return -1;
    unwrap(unwrap(loan.value.write(producer)).commit());
    return unwrap(pub.publish(unwrap(loan.value.emit())));
  };
  return { backend, pub, pool, lost, publish };
}

async function subscribe(backend: StandInIpcBackend, topic: string, connectTimeoutMs = 2000): Promise<TopicGraphSubscription> {
  const consumer: Stream = unwrap(backend.createStream(Device.cuda(0), { label: 'consumer' }));
  const subscription = new TopicGraphSubscription(backend, endpoint(topic), consumer, { runtimeDirectory: dir, connectTimeoutMs }, () => undefined);
  await subscription.start();
  return subscription;
}

describe.skipIf(!available.available)('device topics: the ATTACH deadline (no lease for an unattached device peer)', () => {
  it('8 silent device connections fill maxSubscribers, hold no lease, and are dropped (GOODBYE attach timeout); then a good subscriber gets every frame', async () => {
    const { backend, pub, pool, lost, publish } = await openDeviceTopic('dev-attach-silent', 600);
    const silent = Array.from({ length: 8 }, () => connectFrameClient(join(dir, 'dev-attach-silent.sock')));
    const hellos = await Promise.all(silent.map((client) => client.frame(1)));
    expect(hellos.every((hello) => decodeDeviceHello(hello, 0).ok)).toBe(true);
    expect(pub.subscriberCount).toBe(0);
    // A real subscriber is refused while they squat (each place is taken until the deadline)...
    await expect(subscribe(backend, 'dev-attach-silent', 300)).rejects.toBeDefined();
    // ...and what is published meanwhile is lent to none of them: every slot comes back at once.
    for (let i = 0; i < 2 * SLOTS; i++) expect(publish()).toBe(0);
    pool.retire();
    expect(pool.available).toBe(SLOTS);
    expect(silent.every((client) => client.frames.length === 1)).toBe(true); // the HELLO, no DESCRIPTOR
    // Past the deadline each is told why and dropped, with no lease to reclaim.
    await expectDroppedAtAttachDeadline(silent, lost, 600);

    // The places are free again: a good device subscriber imports, attaches and gets every frame.
    const subscription = await subscribe(backend, 'dev-attach-silent');
    await until(() => pub.subscriberCount === 1, 'the ATTACH');
    const FRAMES = 100;
    let sent = 0;
    let received = 0;
    while (received < FRAMES) {
      if (sent < FRAMES) {
        const to = publish();
        if (to >= 0) {
          expect(to).toBe(1);
          sent++;
        }
      }
      const tensor = subscription.next();
      if (tensor !== undefined) {
        received++;
        tensor.backing!.releaseLease(null);
      } else await sleep(1);
      subscription.poll();
    }
    expect([sent, received, subscription.failure]).toEqual([FRAMES, FRAMES, null]);
    await sleep(700); // past the deadline: an attached subscriber is never dropped for it
    expect(lost).toHaveLength(8);
    subscription.dispose();
    await pub.close();
    backend.dispose();
  }, 20_000);

  it('a connection that attaches late gets only what is published after its ATTACH; ATTACH with USES_MAILBOX is refused (a device topic offers none)', async () => {
    const { backend, pub, lost, publish } = await openDeviceTopic('dev-attach-late', 5000);
    const late = connectFrameClient(join(dir, 'dev-attach-late.sock'));
    const hello = unwrap(decodeDeviceHello(await late.frame(1), 0));
    expect(publish()).toBe(0);
    late.send(attachFrame(hello.topicId, false));
    await until(() => pub.subscriberCount === 1, 'the ATTACH');
    expect(publish()).toBe(1);
    const descriptor = await late.frame(2);
    expect(readFrameHeader(descriptor, 0, hello.topicId)).toBe(FrameType.Descriptor);
    await sleep(20);
    expect(late.frames).toHaveLength(2); // HELLO and one DESCRIPTOR: the publish before its ATTACH went to nobody

    const mailboxPeer = connectFrameClient(join(dir, 'dev-attach-late.sock'));
    await mailboxPeer.frame(1);
    mailboxPeer.send(attachFrame(hello.topicId, true));
    await mailboxPeer.ended;
    expect(goodbyeReason(mailboxPeer.frames[1]!, 0)).toBe(GoodbyeReason.ProtocolViolation);
    await until(() => lost.length === 1, 'the refused ATTACH reported');
    expect(lost[0]).toMatchObject({ reason: 'protocolViolation', reclaimedLeases: 0 });
    expect(lost[0]!.error.detail).toContain('it attached through a mailbox it was not offered');
    expect(pub.subscriberCount).toBe(1);
    await pub.close();
    backend.dispose();
  });
});
