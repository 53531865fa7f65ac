import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Device, ErrorCode, HostBackend, OK_VOID, err, ok, unwrap, type IpcHandleOperations, type MemoryRange, type Stream, type StreamMemoryOperations } from '@hs/streams';
import { DType } from '@hs/tensor';
import { DeviceTopicPublisher, FrameType, GoodbyeReason, decodeDeviceHello, fenceCounterOffset, ipcAvailability, type SubscriberLost } from '../src/index.js';
import { attachFrame, goodbyeReason } from '../src/wire/control-frames.js';
import { readFrameHeader } from '../src/wire/frame-header.js';
import { Offset } from '../src/wire/frame-layout.js';
import { connectFrameClient as subscriber } from './fixtures/frame-client.js';

// DeviceTopicPublisher on the host backend, with stand-ins for the two CUDA capabilities it needs (an IPC
// handle and the 64-bit fence write): the socket, HELLO, descriptor, pool layout and subscriber-loss paths
// without a GPU. The CUDA run is tooling/reliability/test/cross-process-topics.cuda.test.ts.
const available = ipcAvailability();
const dir = mkdtempSync(join(tmpdir(), 'hs-ipc-device-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const SLOTS = 3;
const SPAN = 1000;
const STRIDE = 1024;

/** A host backend that "exports" its emulated device memory and records the fence writes instead of enqueuing them. */
class StandInIpcBackend extends HostBackend {
  readonly fences: { target: MemoryRange; value: bigint }[] = [];
  readonly ipc: IpcHandleOperations = {
    exportMemory: () => ok(new Uint8Array(64).fill(0xcd)),
    importMemory: () => err(ErrorCode.NotSupported, 'stand-in'),
    exportEvent: () => err(ErrorCode.NotSupported, 'stand-in'),
    importEvent: () => err(ErrorCode.NotSupported, 'stand-in'),
  };
  override readonly streamMemoryOps: StreamMemoryOperations = {
    writeValue64: (_stream: Stream, target: MemoryRange, value: bigint) => {
      this.fences.push({ target, value });
      return OK_VOID;
    },
    waitValue64: () => OK_VOID,
  };
}

async function until(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

describe.skipIf(!available.available)('DeviceTopicPublisher on the host backend (stand-in CUDA IPC)', () => {
  it('holds subscribers until attach(), lends nothing before their ATTACH, backs its pool with the exported slot region at offset 0, and fences before each descriptor', async () => {
    const backend = new StandInIpcBackend();
    const producer = unwrap(backend.createStream(Device.cuda(0), { label: 'producer' }));
    const pub = await DeviceTopicPublisher.listen({ topic: 'dev-frames', runtimeDirectory: dir });
    let activity = 0;
    pub.onActivity = () => activity++;
    const client = subscriber(join(dir, 'dev-frames.sock'));
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect([client.frames.length, pub.subscriberCount]).toEqual([0, 0]);

    const pool = unwrap(pub.attach(backend, { device: Device.cuda(0), producerStream: producer, slotCount: SLOTS, slotByteSpan: SPAN, maxRank: 1 }));
    const hello = unwrap(decodeDeviceHello(await client.frame(1), 0));
    expect([hello.slotCount, hello.slotStride, hello.deviceOrdinal, hello.handle[0]]).toEqual([SLOTS, STRIDE, 0, 0xcd]);
    expect([pool.backing.byteOffset, pool.backing.byteLength, pool.backing.memory.byteSize]).toEqual([0, SLOTS * STRIDE, hello.allocationBytes]);
    // HELLO sent, no ATTACH read yet: not counted, and a publish goes to nobody (no lease, no descriptor).
    expect([pub.subscriberCount, activity]).toEqual([0, 1]);

    const loans = [0, 1, 2].map(() => unwrap(pool.allocateTensor({ shape: [SPAN], dtype: DType.uint8 })));
    const published = loans.map((loan) => {
      unwrap(unwrap(loan.write(producer)).commit());
      return unwrap(loan.emit());
    });
    expect(published.map((t) => t.byteOffset)).toEqual([0, STRIDE, 2 * STRIDE]);
    expect(unwrap(pub.publish(published[0]!))).toBe(0);
    client.socket.write(attachFrame(hello.topicId, false));
    await until(() => pub.subscriberCount === 1);
    expect(activity).toBe(2);
    expect(unwrap(pub.publish(published[1]!))).toBe(1);
    const descriptor = await client.frame(2);
    expect(readFrameHeader(descriptor, 0, hello.topicId)).toBe(FrameType.Descriptor);
    expect(descriptor.getUint32(Offset.slot, true)).toBe(1);
    expect(backend.fences.map((f) => [f.target.byteOffset, f.value])).toEqual([
      [fenceCounterOffset(SLOTS, STRIDE, 0), 1n],
      [fenceCounterOffset(SLOTS, STRIDE, 1), 1n],
    ]);

    // A second ATTACH is a protocol violation: the subscriber is dropped, and its lease comes back.
    const viaEvent: SubscriberLost[] = [];
    const viaCallback: SubscriberLost[] = [];
    pub.on('subscriberLost', (lost: SubscriberLost) => viaEvent.push(lost));
    pub.onSubscriberLost = (lost) => viaCallback.push(lost);
    client.socket.write(attachFrame(hello.topicId, false));
    await client.ended;
    expect(goodbyeReason(client.frames[2]!, 0)).toBe(GoodbyeReason.ProtocolViolation);
    expect(viaEvent).toHaveLength(1);
    expect(viaCallback).toEqual(viaEvent);
    expect(viaEvent[0]).toMatchObject({ pid: process.pid, reason: 'protocolViolation', reclaimedLeases: 1 });
    expect(viaEvent[0]!.error.detail).toContain('an attached subscriber may only send Release and Goodbye frames, got Attach');
    expect([pub.subscriberCount, activity]).toEqual([0, 3]);

    await pub.close();
    expect(existsSync(join(dir, 'dev-frames.sock'))).toBe(false);
    for (const tensor of published) tensor.dispose();
  });

  it('refuses a topic a live publisher serves, replaces a stale socket, and closes subscribers still waiting for attach()', async () => {
    const first = await DeviceTopicPublisher.listen({ topic: 'dev-busy', runtimeDirectory: dir });
    await expect(DeviceTopicPublisher.listen({ topic: 'dev-busy', runtimeDirectory: dir })).rejects.toMatchObject({ code: ErrorCode.AlreadyExists });
    const waiting = subscriber(join(dir, 'dev-busy.sock'));
    await new Promise((resolve) => setTimeout(resolve, 20));
    await first.close();
    await waiting.ended;
    expect(waiting.frames).toHaveLength(0);

    writeFileSync(join(dir, 'dev-stale.sock'), '');
    const replaced = await DeviceTopicPublisher.listen({ topic: 'dev-stale', runtimeDirectory: dir });
    const attach = replaced.attach(new HostBackend(), { device: Device.cuda(0), producerStream: unwrap(new HostBackend().createStream(Device.cuda(0))), slotCount: 1, slotByteSpan: 64, maxRank: 1 });
    expect(attach.ok ? null : attach.error.code).toBe(ErrorCode.NotSupported);
    await replaced.close();
  });
});
