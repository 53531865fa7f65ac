import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { Device, ErrorCode, MemoryKind, unwrap } from '@hs/streams';
import { DType, type Tensor } from '@hs/tensor';
import { describe, expect, it } from 'vitest';
import { DeviceTopicPublisher, FRAME_BYTES, encodeDeviceHello, fenceCounterBytes, ipcAvailability, type SubscriberLost } from '../src/index.js';
import { TopicGraphSubscription } from '../src/graph/topic-graph-subscription.js';
import { Offset } from '../src/wire/frame-layout.js';
import { StandInIpcBackend, subscribeEndpoint, testRuntimeDirectory, until } from './fixtures/topic-test-setup.js';

// Issue 21: the CUDA IPC path gets the host path's size and lease checks. The device topic runs on the host
// backend with a stand-in for CUDA IPC: its importMemory keeps the CUDA backend's contract (a byteSize
// above the allocation the handle maps is InvalidArgument, nothing mapped), which the CUDA backend
// enforces with cuMemGetAddressRange (the H200 run: ipc-two-process, cross-process-topics.cuda).
const available = ipcAvailability();
if (!available.available) console.log(`device import checks skipped: ${available.reason}`);
const dir = testRuntimeDirectory('hs-ipc-device-import-');

const endpoint = (topic: string) => subscribeEndpoint(topic, { memoryKind: MemoryKind.CudaDevice, device: Device.cuda(0), transport: 'cudaIpc', stream: null, maxReleaseStreams: 1 });

/** A hostile publisher: a socket of this process that sends `hello` (a device HELLO, no descriptors) to every connection. */
async function hostilePublisher(topic: string, hello: Buffer): Promise<Server> {
  const server = createServer((socket) => {
    socket.on('error', () => undefined);
    socket.write(hello);
  });
  await new Promise<void>((resolve) => server.listen(join(dir, `${topic}.sock`), resolve));
  return server;
}

function deviceHello(fields: { slotCount: number; slotStride: number; allocationBytes?: number; handle: Uint8Array }): Buffer {
  const frame = Buffer.alloc(FRAME_BYTES);
  const view = new DataView(frame.buffer, frame.byteOffset, FRAME_BYTES);
  encodeDeviceHello(view, 0, {
    topicId: 7,
    slotCount: fields.slotCount,
    slotStride: fields.slotStride,
    allocationBytes: fields.allocationBytes ?? fields.slotCount * fields.slotStride + fenceCounterBytes(fields.slotCount),
    maxRank: 1,
    producerPid: process.pid,
    deviceOrdinal: 0,
    handle: fields.handle,
  });
  return frame;
}

async function subscribeTo(backend: StandInIpcBackend, topic: string): Promise<TopicGraphSubscription> {
  const consumer = unwrap(backend.createStream(Device.cuda(0), { label: 'consumer' }));
  const subscription = new TopicGraphSubscription(backend, endpoint(topic), consumer, { runtimeDirectory: dir, connectTimeoutMs: 2000 }, () => undefined);
  await subscription.start();
  return subscription;
}

describe.skipIf(!available.available)('the CUDA IPC path checks announced sizes and leases like the host path', () => {
  it('a hostile HELLO announcing more slots than its handle exports is a ProtocolError naming allocation bytes; nothing stays mapped', async () => {
    const backend = new StandInIpcBackend();
    // The handle maps 2 slots of 1 KiB and their counters; HELLO claims 64 such slots (consistent with itself).
    const handle = backend.exportBytes(2 * 1024 + fenceCounterBytes(2));
    const server = await hostilePublisher('dev-oversize', deviceHello({ slotCount: 64, slotStride: 1024, handle }));
    const refused = subscribeTo(backend, 'dev-oversize');
    await expect(refused).rejects.toMatchObject({ code: ErrorCode.ProtocolError });
    await expect(refused).rejects.toThrow(/allocation bytes 66048 exceed the allocation its handle maps/);
    expect(backend.imported.size).toBe(0);
    server.close();
    backend.dispose();
  });

  it('a HELLO whose slot count x stride overflows 53 bits is refused naming the slot stride, before anything is mapped', async () => {
    const backend = new StandInIpcBackend();
    const handle = backend.exportBytes(4096);
    const hello = deviceHello({ slotCount: 65536, slotStride: 1024, handle });
    // 65536 slots of 2^46 bytes: 2^62 bytes, far past what a double counts exactly.
    hello.writeBigUInt64LE(2n ** 46n, Offset.slotStride);
    hello.writeBigUInt64LE(2n ** 53n - 1n, Offset.segmentBytes);
    const server = await hostilePublisher('dev-overflow', hello);
    const refused = subscribeTo(backend, 'dev-overflow');
    await expect(refused).rejects.toMatchObject({ code: ErrorCode.ProtocolError });
    await expect(refused).rejects.toThrow(/slot stride 70368744177664 x 65536 slots overflows a 53-bit byte count/);
    expect(backend.imported.size).toBe(0);
    server.close();
    backend.dispose();
  });

  it('allocation bytes that are not the slots plus their counters are refused naming the field', async () => {
    const backend = new StandInIpcBackend();
    const handle = backend.exportBytes(1 << 20);
    const server = await hostilePublisher('dev-mismatch', deviceHello({ slotCount: 2, slotStride: 1024, allocationBytes: 1 << 20, handle }));
    await expect(subscribeTo(backend, 'dev-mismatch')).rejects.toThrow(/device hello rejected: allocation bytes 1048576 are not 2 slots of 1024 bytes/);
    expect(backend.imported.size).toBe(0);
    server.close();
    backend.dispose();
  });

  it('after a lease-timeout GOODBYE the lent device tensor returns InvalidState on every later call and its release is a no-op', async () => {
    const backend = new StandInIpcBackend();
    const producer = unwrap(backend.createStream(Device.cuda(0), { label: 'producer' }));
    // the lease must outlive the descriptor's delivery on a loaded machine (at 100 ms CI reclaimed it before the subscriber read it)
    const pub = await DeviceTopicPublisher.listen({ topic: 'dev-reclaim', runtimeDirectory: dir, leaseTimeoutMs: 1500, livenessIntervalMs: 10 });
    const lost: SubscriberLost[] = [];
    pub.on('subscriberLost', (l: SubscriberLost) => lost.push(l));
    const pool = unwrap(pub.attach(backend, { device: Device.cuda(0), producerStream: producer, slotCount: 2, slotByteSpan: 64, maxRank: 1 }));
    const subscription = await subscribeTo(backend, 'dev-reclaim');
    expect(backend.imported.size).toBe(1);
    await until(() => pub.subscriberCount === 1, 'HELLO');
    const loan = unwrap(pool.allocateTensor({ shape: [64], dtype: DType.uint8 }));
    unwrap(unwrap(loan.write(producer)).commit());
    const published = unwrap(loan.emit());
    expect(unwrap(pub.publish(published))).toBe(1);
    let tensor: Tensor | undefined;
    await until(() => (tensor ??= subscription.next()) !== undefined, 'the descriptor');
    const consumer = unwrap(backend.createStream(Device.cuda(0), { label: 'reader' }));
    expect(tensor!.backing!.registerReleaseStream(consumer).ok).toBe(true);

    await until(() => subscription.failure !== null, 'the lease-timeout GOODBYE');
    expect(lost).toEqual([expect.objectContaining({ reason: 'leaseTimeout', reclaimedLeases: 1 })]);
    expect(subscription.failure!.code).toBe(ErrorCode.InvalidState);
    for (const attempt of [tensor!.backing!.acquireLease(), tensor!.backing!.registerReleaseStream(consumer), tensor!.backing!.acquireLease()]) {
      expect(attempt.ok ? 'access' : attempt.error.code).toBe(ErrorCode.InvalidState);
      if (!attempt.ok) expect(attempt.error.message).toContain('leaseTimeoutMs');
    }
    await expect(tensor!.synchronizeForHost()).rejects.toMatchObject({ code: ErrorCode.InvalidState });
    expect(() => tensor!.backing!.releaseLease(consumer)).not.toThrow();
    subscription.dispose();
    expect(backend.imported.size).toBe(0);
    published.dispose();
    await pub.close();
    backend.dispose();
  });
});
