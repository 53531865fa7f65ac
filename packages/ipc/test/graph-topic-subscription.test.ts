import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { Device, ErrorCode, HostBackend, type HsError, MemoryKind, unwrap } from '@hs/streams';
import { describe, expect, it } from 'vitest';
import { ipcAvailability } from '../src/index.js';
import { TopicGraphSubscription } from '../src/graph/topic-graph-subscription.js';
import { encodeDeviceHello } from '../src/device/device-hello.js';
import { fenceCounterBytes } from '../src/device/fence-counters.js';
import { FRAME_BYTES, Offset } from '../src/wire/frame-layout.js';
import { subscribeEndpoint, testRuntimeDirectory } from './fixtures/topic-test-setup.js';

// A hostile or broken publisher of a device topic, played by a raw socket server in this process: the
// subscription must answer each case with a typed error and never crash or touch device memory.
const available = ipcAvailability();
const dir = testRuntimeDirectory('hs-device-sub-');

const endpoint = subscribeEndpoint('dev', { memoryKind: MemoryKind.CudaDevice, device: Device.cuda(0), transport: 'cudaIpc', stream: 'stream:sink@cuda:0', maxReleaseStreams: 2 });

function helloFrame(edit?: (view: DataView) => void): Buffer {
  const frame = Buffer.alloc(FRAME_BYTES);
  const view = new DataView(frame.buffer, frame.byteOffset, FRAME_BYTES);
  encodeDeviceHello(view, 0, {
    topicId: 7,
    slotCount: 4,
    slotStride: 256,
    allocationBytes: 4 * 256 + fenceCounterBytes(4),
    maxRank: 1,
    producerPid: process.pid,
    deviceOrdinal: 0,
    handle: new Uint8Array(64).fill(0xab),
  });
  edit?.(view);
  return frame;
}

/** Serves `dev.sock` and sends `frame` (or nothing) to each connection; returns a closer. */
async function publisher(frame: Buffer | null): Promise<() => Promise<void>> {
  const sockets: Socket[] = [];
  const server: Server = createServer((socket) => {
    sockets.push(socket);
    socket.on('error', () => undefined);
    if (frame !== null) socket.write(frame);
  });
  await new Promise<void>((resolve) => server.listen(join(dir, 'dev.sock'), resolve));
  return () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    });
}

/** What the subscription's start() rejected with, or null when it attached. */
async function attach(frame: Buffer | null, connectTimeoutMs = 2000): Promise<HsError | null> {
  const close = await publisher(frame);
  const backend = new HostBackend();
  const stream = unwrap(backend.createStream(Device.cuda(0)));
  const subscription = new TopicGraphSubscription(backend, endpoint, stream, { runtimeDirectory: dir, connectTimeoutMs }, () => undefined);
  const started = await subscription.start().then(
    () => null,
    (error: HsError) => error,
  );
  subscription.dispose();
  await close();
  backend.dispose();
  return started;
}

describe.skipIf(!available.available)('TopicGraphSubscription against a broken or hostile publisher', () => {
  it('rejects a HELLO with a bad magic, a wrong allocation size or nonzero reserved bytes with ProtocolError', async () => {
    for (const edit of [
      (v: DataView) => v.setUint32(Offset.magic, 0x12345678, true),
      (v: DataView) => v.setUint32(Offset.segmentBytes, 1024, true),
      (v: DataView) => v.setUint8(Offset.segmentName, 0x2f),
    ]) {
      const started = await attach(helloFrame(edit));
      expect(started?.code).toBe(ErrorCode.ProtocolError);
    }
  });

  it('refuses a host topic for a device input (ProtocolError) and a device HELLO it cannot map on the host backend (NotSupported)', async () => {
    const host = await attach(helloFrame((v) => v.setUint32(Offset.memoryKind, 0, true)));
    expect(host?.code).toBe(ErrorCode.ProtocolError);
    expect(host?.message).toContain('serves host or pinnedHost memory but input sink.frames imports cudaDevice');
    const device = await attach(helloFrame());
    expect(device?.code).toBe(ErrorCode.NotSupported);
    expect(device?.message).toContain('needs the CUDA backend');
  });

  it('refuses a HELLO naming another device than the input is bound to', async () => {
    const started = await attach(helloFrame((v) => v.setUint32(Offset.deviceOrdinal, 3, true)));
    expect(started?.code).toBe(ErrorCode.InvalidArgument);
    expect(started?.message).toContain('lives on cuda:3');
  });

  it('gives up with NotFound when the publisher never sends its HELLO, and when nobody publishes', async () => {
    const silent = await attach(null, 200);
    expect(silent?.code).toBe(ErrorCode.NotFound);
    const backend = new HostBackend();
    const nobody = new TopicGraphSubscription(backend, { ...endpoint, topic: 'nobody' }, unwrap(backend.createStream(Device.cuda(0))), { runtimeDirectory: dir, connectTimeoutMs: 100 }, () => undefined);
    await expect(nobody.start()).rejects.toMatchObject({ code: ErrorCode.NotFound });
    nobody.dispose();
  });
});
