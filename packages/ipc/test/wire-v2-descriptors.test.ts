// Wire version 2 (issue 21): a host topic's segments are sealed memfds passed with HELLO (SCM_RIGHTS), so a
// same-uid peer cannot ftruncate them under the other side (a SIGBUS there) and no /dev/shm name exists
// while the topic runs; an unsealed descriptor, a HELLO without one and a version 1 HELLO are refused with
// typed errors.
import { spawn } from 'node:child_process';
import { mkdtempSync, openSync, readdirSync, readFileSync, rmSync, ftruncateSync, closeSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ErrorCode, HostBackend, MemoryKind, unwrap } from '@hs/streams';
import { DType } from '@hs/tensor';
import { ChannelRuntime, FRAME_BYTES, SharedSegment, TopicPublisher, WireMemoryKind, encodeHello, ipcAvailability } from '../src/index.js';
import { sendHello } from '../src/hello-connection.js';
import { loadIpcNative } from '../src/ipc-native.js';
import { mailboxSupport } from '../src/mailbox/topic-mailbox.js';
import { Offset } from '../src/wire/frame-layout.js';

const dir = mkdtempSync(join(tmpdir(), 'hs-ipc-v2-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const uid = process.getuid!();
const ownShmNames = (): string[] => readdirSync('/dev/shm').filter((entry) => entry.startsWith(`hs.${uid}.${process.pid}.`));
const F_SEAL_SEAL = 1;
const F_SEAL_SHRINK = 2;
const F_SEAL_GROW = 4;

function helloFrame(version = 2): Buffer {
  const frame = Buffer.alloc(FRAME_BYTES);
  const view = new DataView(frame.buffer, frame.byteOffset, FRAME_BYTES);
  encodeHello(view, 0, { topicId: 5, slotCount: 2, slotStride: 4096, segmentBytes: 8192, memoryKind: WireMemoryKind.Host, maxRank: 1, producerPid: process.pid, mailboxToken: null });
  view.setUint16(Offset.version, version, true);
  return frame;
}

/** A fake publisher in this process (so SO_PEERCRED matches) that sends `hello` with `fds` to every connection. */
async function fakePublisher(topic: string, hello: Buffer, fds: number[]): Promise<Server> {
  const server = createServer((socket: Socket) => {
    socket.on('error', () => undefined);
    socket.resume();
    sendHello(socket, hello, fds);
  });
  await new Promise<void>((resolve) => server.listen(join(dir, `${topic}.sock`), resolve));
  return server;
}

describe.skipIf(!ipcAvailability().available)('wire version 2: sealed segments passed with HELLO', () => {
  it('a sealed segment refuses ftruncate (EPERM) and has no name; a received descriptor maps it', () => {
    const native = unwrap(loadIpcNative());
    const segment = unwrap(SharedSegment.createSealed({ label: 'seal-check', byteSize: 8192 }));
    const seals = native.segmentSeals!(segment.descriptor);
    expect(seals & (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)).toBe(F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
    expect(() => ftruncateSync(segment.descriptor, 0)).toThrow(expect.objectContaining({ code: 'EPERM' }));
    expect(() => ftruncateSync(segment.descriptor, 1 << 20)).toThrow(expect.objectContaining({ code: 'EPERM' }));
    expect(unwrap(segment.unlink())).toBe(false);
    segment.bytes.fill(7);
    const reader = unwrap(SharedSegment.fromDescriptor({ fd: segment.descriptor, byteSize: 8192 }));
    expect(reader.writable).toBe(false);
    expect(reader.bytes[8191]).toBe(7);
    const tooBig = SharedSegment.fromDescriptor({ fd: segment.descriptor, byteSize: 8193 });
    expect(tooBig.ok ? null : tooBig.error).toMatchObject({ code: ErrorCode.InvalidArgument, message: expect.stringMatching(/holds 8192 bytes, fewer than the 8193/) });
    reader.close();
    segment.close();
    expect(segment.descriptor).toBe(-1);
  });

  it('no /dev/shm name while a topic runs; a same-uid hostile peer cannot shrink or grow the segment or the mailbox (EPERM), and both sides survive', async () => {
    const backend = new HostBackend();
    const publisher = await TopicPublisher.create({ backend, topic: 'v2-hostile', runtimeDirectory: dir, memoryKind: MemoryKind.Host, slotCount: 4, slotByteSpan: 64 * 1024, maxRank: 1 });
    const channel = await ChannelRuntime.connect({ backend, topic: 'v2-hostile', runtimeDirectory: dir });
    for (let i = 0; i < 100 && publisher.subscriberCount < 1; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(publisher.subscriberCount).toBe(1);
    expect(ownShmNames()).toEqual([]);
    // The doorbells went once the subscriber attached: only the socket is named.
    expect(readdirSync(dir).filter((entry) => entry.startsWith('v2-hostile'))).toEqual(['v2-hostile.sock']);

    const script = fileURLToPath(new URL('./fixtures/truncating-subscriber.ts', import.meta.url));
    const child = spawn(process.execPath, ['--import', 'tsx', script, publisher.socketPath], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const status = await new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    expect(status).toBe(0);
    const report = JSON.parse(out.trim().split('\n').pop()!) as { results: { seals: number; shrink: string; grow: string }[]; viaProc: string[] };
    // The data segment, and the mailbox offered to it when this addon has doorbells.
    expect(report.results).toHaveLength(mailboxSupport().ok ? 2 : 1);
    for (const r of report.results) {
      expect(r.seals & (F_SEAL_SHRINK | F_SEAL_GROW)).toBe(F_SEAL_SHRINK | F_SEAL_GROW);
      expect(r).toMatchObject({ shrink: 'EPERM', grow: 'EPERM' });
    }
    expect(report.viaProc.length).toBeGreaterThanOrEqual(1);
    for (const line of report.viaProc) expect(line).toMatch(/: EPERM$/);

    // Every page of every slot is still there: the publisher writes them all, the subscriber reads them all.
    for (let frame = 0; frame < 8; frame++) {
      const loan = unwrap(publisher.pool.allocateTensor({ shape: [64 * 1024], dtype: DType.uint8 }));
      const guard = unwrap(loan.write(null));
      unwrap(guard.tensor.mutableHostView()).fill(frame + 1);
      unwrap(guard.commit());
      unwrap(publisher.publish(unwrap(loan.emit())));
      const lease = await channel.receive();
      const bytes = unwrap(lease.tensor.hostView());
      expect(bytes[0]).toBe(frame + 1);
      expect(bytes[bytes.length - 1]).toBe(frame + 1);
      unwrap(lease.release());
      await new Promise((resolve) => setTimeout(resolve, 0));
      publisher.retire();
    }
    // The mappings of this process are the sealed memfds, not /dev/shm files.
    expect(readFileSync('/proc/self/maps', 'utf8')).toMatch(/\/memfd:hs\.v2-hostile/);
    channel.close();
    await publisher.close();
    backend.dispose();
  });

  it('refuses an unsealed descriptor with ProtocolError naming the seals, and a HELLO without a descriptor', async () => {
    const path = join(dir, 'plain-file');
    const fd = openSync(path, 'w+');
    ftruncateSync(fd, 8192);
    const unsealed = await fakePublisher('v2-unsealed', helloFrame(), [fd]);
    const backend = new HostBackend();
    await expect(ChannelRuntime.connect({ backend, topic: 'v2-unsealed', runtimeDirectory: dir })).rejects.toMatchObject({
      code: ErrorCode.ProtocolError,
      message: expect.stringMatching(/not sealed against shrinking and growing \(seals: none; needed F_SEAL_SHRINK\|F_SEAL_GROW\)/),
    });
    const bare = await fakePublisher('v2-bare', helloFrame(), []);
    await expect(ChannelRuntime.connect({ backend, topic: 'v2-bare', runtimeDirectory: dir })).rejects.toMatchObject({
      code: ErrorCode.ProtocolError,
      message: expect.stringMatching(/HELLO came with 0 descriptors, expected 1 \(the data segment\)/),
    });
    closeSync(fd);
    backend.dispose();
    for (const server of [unsealed, bare]) await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('refuses a version 1 HELLO with a ProtocolError naming both versions', async () => {
    const segment = unwrap(SharedSegment.createSealed({ label: 'v1', byteSize: 8192 }));
    const v1 = await fakePublisher('v2-old-peer', helloFrame(1), [segment.descriptor]);
    const backend = new HostBackend();
    await expect(ChannelRuntime.connect({ backend, topic: 'v2-old-peer', runtimeDirectory: dir })).rejects.toMatchObject({
      code: ErrorCode.ProtocolError,
      message: expect.stringMatching(/the peer speaks wire version 1 .*this side speaks wire version 2/),
    });
    backend.dispose();
    segment.close();
    await new Promise<void>((resolve) => v1.close(() => resolve()));
  });
});
