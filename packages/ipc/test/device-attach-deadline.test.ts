import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TopicEndpointRecord } from '@hs/compiler';
import type { TensorPool } from '@hs/pool';
import { Device, ErrorCode, HostBackend, MemoryKind, OK_VOID, err, ok, unwrap, type IpcHandleOperations, type IpcMemoryImport, type Stream, type StreamMemoryOperations } from '@hs/streams';
import { DType } from '@hs/tensor';
import { afterAll, describe, expect, it } from 'vitest';
import { DeviceTopicPublisher, FrameType, GoodbyeReason, decodeDeviceHello, ipcAvailability, type SubscriberLost } from '../src/index.js';
import { TopicGraphSubscription } from '../src/graph/topic-graph-subscription.js';
import { attachFrame, goodbyeReason } from '../src/wire/control-frames.js';
import { readFrameHeader } from '../src/wire/frame-header.js';
import { connectFrameClient } from './fixtures/frame-client.js';

// Issue 21, defect 4 on device topics (wire version 2): a device subscriber sends ATTACH once it imported the
// CUDA IPC handle, the publisher lends nothing before it and drops a connection that sends none within
// attachTimeoutMs. On the host backend with a stand-in for CUDA IPC (the CUDA run:
// tooling/reliability/test/cross-process-topics.cuda.test.ts).
const available = ipcAvailability();
const dir = mkdtempSync(join(tmpdir(), 'hs-ipc-device-attach-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const SLOTS = 4;
const SPAN = 256;

/** Host backend with stand-in CUDA IPC: every export maps back to host-emulated device memory of its size. */
class StandInIpcBackend extends HostBackend {
  readonly #exported = new Map<number, number>();
  readonly ipc: IpcHandleOperations = {
    exportMemory: (memory) => {
      const id = this.#exported.size + 1;
      this.#exported.set(id, memory.byteSize);
      return ok(new Uint8Array(64).fill(id, 0, 1));
    },
    importMemory: (request: IpcMemoryImport) => {
      const size = this.#exported.get(request.handle[0] ?? 0);
      if (size === undefined || request.byteSize > size) return err(ErrorCode.InvalidArgument, 'stand-in: not an exported allocation of that size');
      return this.allocate({ kind: MemoryKind.CudaDevice, device: request.device, byteSize: request.byteSize, alignment: 256 });
    },
    exportEvent: () => err(ErrorCode.NotSupported, 'stand-in'),
    importEvent: () => err(ErrorCode.NotSupported, 'stand-in'),
  };
  override readonly streamMemoryOps: StreamMemoryOperations = { writeValue64: () => OK_VOID, waitValue64: () => OK_VOID };
}

function endpoint(topic: string): TopicEndpointRecord {
  return {
    topic,
    direction: 'subscribe',
    port: { operator: 'sink', port: 'frames' },
    memoryKind: MemoryKind.CudaDevice,
    device: Device.cuda(0),
    transport: 'cudaIpc',
    stream: null,
    queueDepth: 2,
    queueDepthSource: 'default',
    maxSubscribers: null,
    pool: null,
    dtype: DType.uint8,
    rank: 1,
    maxByteSpan: null,
    maxReleaseStreams: 1,
  };
}

async function until(check: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

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
    await Promise.all(silent.map((client) => client.ended));
    for (const client of silent) {
      expect(client.frames).toHaveLength(2);
      const bye = client.frames[1]!;
      expect(readFrameHeader(bye, 0, bye.getUint32(8, true))).toBe(FrameType.Goodbye);
      expect(goodbyeReason(bye, 0)).toBe(GoodbyeReason.AttachTimeout);
    }
    await until(() => lost.length === 8, 'the 8 drops reported');
    expect(lost.every((l) => l.reason === 'attachTimeout' && l.reclaimedLeases === 0 && l.error.code === ErrorCode.ProtocolError)).toBe(true);
    expect(lost[0]!.error.message).toContain('attachTimeoutMs (600 ms)');

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
