// Issue 21, defects 1 and 2: segment sizes are checked against what Node.js can map and against what the
// creator announced, and a segment is allocated in full at create (a full /dev/shm is OutOfMemory, never
// SIGBUS). Every case here used to abort the process (a double free in the addon) or kill it with SIGBUS.
import { spawnSync } from 'node:child_process';
import { constants } from 'node:buffer';
import { existsSync, mkdtempSync, readdirSync, rmSync, truncateSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ErrorCode, HostBackend, MemoryKind, unwrap } from '@hs/streams';
import { ChannelRuntime, FRAME_BYTES, SharedSegment, TopicPublisher, WireMemoryKind, encodeHello, ipcAvailability } from '../src/index.js';
import { sendHello } from '../src/hello-connection.js';
import { loadIpcNative } from '../src/ipc-native.js';

const available = ipcAvailability();
const uid = process.getuid!();
const name = (tag: string): string => `/hs-test-${process.pid}-size-${tag}`;
const shmPath = (segmentName: string): string => `/dev/shm${segmentName}`;
const dir = mkdtempSync(join(tmpdir(), 'hs-ipc-sizes-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SLOT_STRIDE = 1024;
const SLOTS = 4;
const GiB = 1024 * 1024 * 1024;
/** One byte above the largest ArrayBuffer: 4 GiB + 1 on Node 20. From Node 22 on MAX_LENGTH is 2^53 - 1, and no safe integer exceeds it. */
const OVERSIZE = constants.MAX_LENGTH + 1;
const oversizeExpressible = Number.isSafeInteger(OVERSIZE);

/** A fake publisher in this process (so SO_PEERCRED matches) whose HELLO announces `segmentBytes`. */
async function helloServer(topic: string, segment: SharedSegment, segmentBytes: number): Promise<Server> {
  const server = createServer((socket: Socket) => {
    const hello = new DataView(new ArrayBuffer(FRAME_BYTES));
    encodeHello(hello, 0, {
      topicId: 9,
      slotCount: SLOTS,
      slotStride: SLOT_STRIDE,
      segmentBytes,
      memoryKind: WireMemoryKind.Host,
      maxRank: 1,
      producerPid: process.pid,
      mailboxToken: null,
    });
    socket.on('error', () => undefined);
    socket.resume();
    sendHello(socket, Buffer.from(hello.buffer), [segment.descriptor]);
  });
  await new Promise<void>((resolve) => server.listen(join(dir, `${topic}.sock`), resolve));
  return server;
}

const closeServer = (server: Server): Promise<void> => new Promise((resolve) => server.close(() => resolve()));

describe.skipIf(!available.available)('segment sizes', () => {
  it.skipIf(!oversizeExpressible)(`refuses a segment of buffer.constants.MAX_LENGTH + 1 bytes (${OVERSIZE}) with InvalidArgument, leaving nothing behind (skipped where that is not a safe integer)`, () => {
    const created = SharedSegment.create({ name: name('huge'), byteSize: OVERSIZE });
    expect(created.ok ? null : created.error.code).toBe(ErrorCode.InvalidArgument);
    expect(created.ok ? '' : created.error.message).toMatch(/largest ArrayBuffer this Node\.js can map .*buffer\.constants\.MAX_LENGTH/);
    expect(existsSync(shmPath(name('huge')))).toBe(false);
    // The addon checks on its own, before it maps anything.
    const native = unwrap(loadIpcNative());
    expect(() => native.createSegment(name('huge'), OVERSIZE, constants.MAX_LENGTH)).toThrow(
      expect.objectContaining({ code: 'EINVAL', message: expect.stringMatching(/more than the largest ArrayBuffer/) }),
    );
    expect(existsSync(shmPath(name('huge')))).toBe(false);
    // Still alive, and segments still work.
    const small = unwrap(SharedSegment.create({ name: name('after'), byteSize: 4096 }));
    unwrap(small.unlink());
    small.close();
  });

  it('maps only the announced size of a segment whose file is larger (8 GiB: above MAX_LENGTH on Node 20)', () => {
    const created = unwrap(SharedSegment.create({ name: name('large'), byteSize: 8192 }));
    created.bytes[8191] = 7;
    truncateSync(shmPath(name('large')), 8 * GiB); // sparse: no memory is used
    const opened = SharedSegment.open({ name: name('large'), byteSize: 8192 });
    if (!opened.ok) throw opened.error;
    expect(opened.value.byteSize).toBe(8192);
    expect(opened.value.bytes.length).toBe(8192);
    expect(opened.value.bytes[8191]).toBe(7);
    opened.value.close();
    if (oversizeExpressible) {
      // Announcing more than an ArrayBuffer holds is refused before anything is mapped, here and in the addon.
      truncateSync(shmPath(name('large')), OVERSIZE);
      const whole = SharedSegment.open({ name: name('large'), byteSize: OVERSIZE });
      expect(whole.ok ? null : whole.error.code).toBe(ErrorCode.InvalidArgument);
      const native = unwrap(loadIpcNative());
      expect(() => native.openSegment(name('large'), OVERSIZE, constants.MAX_LENGTH, false)).toThrow(expect.objectContaining({ code: 'EINVAL' }));
    }
    unwrap(created.unlink());
    created.close();
  });

  it.skipIf(8 * GiB <= constants.MAX_LENGTH)('rejects a topic of 8 x 1 GiB slots with InvalidArgument before making its segment (skipped where MAX_LENGTH is 8 GiB or more)', async () => {
    const backend = new HostBackend();
    await expect(
      TopicPublisher.create({ backend, topic: 'sizes-8g', memoryKind: MemoryKind.Host, slotCount: 8, slotByteSpan: GiB, maxRank: 1, runtimeDirectory: dir }),
    ).rejects.toMatchObject({ code: ErrorCode.InvalidArgument, detail: expect.stringMatching(/largest ArrayBuffer this Node\.js can map/) });
    expect(readdirSync('/dev/shm').filter((entry) => entry.startsWith(`hs.${uid}.${process.pid}.`))).toEqual([]);
    backend.dispose();
  });

  it('refuses a segment whose file is smaller than announced, naming both sizes', () => {
    const created = unwrap(SharedSegment.create({ name: name('short'), byteSize: 4096 }));
    const opened = SharedSegment.open({ name: name('short'), byteSize: 4097 });
    expect(opened.ok ? null : opened.error.code).toBe(ErrorCode.InvalidArgument);
    expect(opened.ok ? '' : opened.error.message).toMatch(/its file holds 4096 bytes, fewer than the 4097 bytes announced for it/);
    truncateSync(shmPath(name('short')), 0);
    const empty = SharedSegment.open({ name: name('short'), byteSize: 4096 });
    expect(empty.ok ? '' : empty.error.message).toMatch(/holds 0 bytes, fewer than the 4096 bytes announced/);
    unwrap(created.unlink());
    created.close();
  });

  it('a subscriber maps the size HELLO announced: a larger segment only that far, a segment short of HELLO is refused', async () => {
    // Wire version 2 passes sealed segments, which nobody can truncate: a hostile publisher can only send one
    // larger or smaller than it announces.
    const large = unwrap(SharedSegment.createSealed({ label: 'sizes-large', byteSize: 4 * SLOTS * SLOT_STRIDE }));
    const honest = await helloServer('sizes-honest', large, SLOTS * SLOT_STRIDE);
    const backend = new HostBackend();
    const channel = await ChannelRuntime.connect({ backend, topic: 'sizes-honest', runtimeDirectory: dir });
    expect(channel.slotCount).toBe(SLOTS);
    channel.close();
    await closeServer(honest);

    const segment = unwrap(SharedSegment.createSealed({ label: 'sizes-short', byteSize: SLOTS * SLOT_STRIDE }));
    const lying = await helloServer('sizes-lying', segment, 2 * SLOTS * SLOT_STRIDE);
    await expect(ChannelRuntime.connect({ backend, topic: 'sizes-lying', runtimeDirectory: dir })).rejects.toMatchObject({
      code: ErrorCode.InvalidArgument,
      detail: expect.stringMatching(new RegExp(`holds ${SLOTS * SLOT_STRIDE} bytes, fewer than the ${2 * SLOTS * SLOT_STRIDE} bytes announced`)),
    });
    await closeServer(lying);
    backend.dispose();
    large.close();
    segment.close();
  });
});

/**
 * A private mount namespace whose /dev/shm is a 1 MiB tmpfs (shm_open always uses /dev/shm): as root
 * `unshare -m`, else an unprivileged user namespace `unshare -rm`. Null when neither works here.
 */
function smallShmNamespace(): string[] | null {
  const prefix = uid === 0 ? ['-m'] : ['-rm'];
  const probe = spawnSync('unshare', [...prefix, 'sh', '-c', 'mount -t tmpfs -o size=1m hs-test /dev/shm'], { encoding: 'utf8' });
  return probe.status === 0 ? prefix : null;
}
const namespace = available.available ? smallShmNamespace() : null;

describe('a full /dev/shm', () => {
  it.skipIf(namespace === null)('is OutOfMemory at create (never SIGBUS later), naming the size and /dev/shm, with nothing left behind (skipped where `unshare -m`/`-rm` cannot mount a tmpfs)', () => {
    const fixture = fileURLToPath(new URL('./fixtures/full-shm.ts', import.meta.url));
    const script = `mount -t tmpfs -o size=1m hs-test /dev/shm && exec "$0" --import tsx "$1" "$2"`;
    const child = spawnSync('unshare', [...(namespace as string[]), 'sh', '-c', script, process.execPath, fixture, dir], { encoding: 'utf8', timeout: 60_000 });
    expect(child.signal).toBeNull();
    expect(child.status, child.stderr).toBe(0);
    const result = JSON.parse(child.stdout.trim().split('\n').pop() as string) as Record<string, unknown>;
    expect(result.tooLarge).toMatchObject({ code: ErrorCode.OutOfMemory, message: expect.stringMatching(new RegExp(`of ${2 << 20} bytes: No space left on device; /dev/shm cannot hold it`)) });
    expect(result.leftBySegment).toEqual([]);
    // Wire version 2: a topic's segment is a sealed memfd, which a full /dev/shm does not limit.
    expect(result.publisher).toBe('ok');
    expect(result.leftByPublisher).toEqual([]);
    expect(result.fits).toBe('ok');
  });
});
