import { spawn, spawnSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, readFileSync, readdirSync, readlinkSync, rmSync, symlinkSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { Device, ErrorCode, HostBackend, MemoryKind, err, unwrap } from '@hs/streams';
import { DType, type Tensor } from '@hs/tensor';
import {
  ChannelRuntime,
  DescriptorDecoder,
  DescriptorFlag,
  FRAME_BYTES,
  FrameType,
  GoodbyeReason,
  SharedSegment,
  TensorDescriptor,
  TopicPublisher,
  WireMemoryKind,
  decodeHello,
  encodeAttach,
  encodeDescriptor,
  encodeHello,
  ipcAvailability,
  type MailboxWait,
  type SubscriberLost,
  type TopicHello,
} from '../src/index.js';
import { FrameReader } from '../src/frame-reader.js';
import { TopicGraphSubscription } from '../src/graph/topic-graph-subscription.js';
import { FrameRing } from '../src/mailbox/frame-ring.js';
import { DESCRIPTOR_RING_CONTROL, MAILBOX_MAGIC, MailboxHeader, RELEASE_RING_CONTROL, RING_ENTRIES, RingWord, mailboxByteSize, mailboxCapacity, releaseEntries } from '../src/mailbox/mailbox-layout.js';
import { TopicMailbox, doorbellError, mailboxSupport, type MailboxAddress, type ReceivedMailbox } from '../src/mailbox/topic-mailbox.js';
import { errnoErrorCode as errnoErrorCodeOf } from '../src/ipc-native.js';
import { receiveHello, sendHello } from '../src/hello-connection.js';
import { encodeGoodbye, encodeRelease } from '../src/wire/control-frames.js';
import { Offset } from '../src/wire/frame-layout.js';
import { subscribeEndpoint, testRuntimeDirectory } from './fixtures/topic-test-setup.js';

const available = ipcAvailability();
const support = mailboxSupport();
const skipReason = !available.available ? available.reason : !support.ok ? support.error.detail : null;
if (skipReason !== null) console.log(`topic mailbox tests skipped: ${skipReason}`);

const base = testRuntimeDirectory('hs-ipc-mailbox-');
const consumerScript = fileURLToPath(new URL('./fixtures/mailbox-consumer-no-close.ts', import.meta.url));
const exitingPublisherScript = fileURLToPath(new URL('./fixtures/publisher-exit-without-close.ts', import.meta.url));
const MAILBOX_NAME = /\.m[0-9a-f]{16}$/;

/** A fresh 0700 runtime directory per test, so its listing is this test's alone. */
const runtimeDirectory = (): string => mkdtempSync(join(base, 'rt-'));

async function until(condition: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const started = performance.now();
  while (!condition()) {
    if (performance.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Mailbox segment names of this process's publishers in /dev/shm. */
function shmMailboxNames(): string[] {
  return readdirSync('/dev/shm').filter((n) => n.startsWith(`hs.${process.getuid!()}.${process.pid}.`) && MAILBOX_NAME.test(n));
}

/** Mappings of mailbox segments (or of the named segment) in process `pid`. */
function mappings(pid: number, pattern: RegExp = /\/memfd:hs\.[A-Za-z0-9._-]*\.m[0-9a-f]{16}/): string[] {
  return readFileSync(`/proc/${pid}/maps`, 'utf8').split('\n').filter((line) => pattern.test(line));
}

/** Open descriptors of this process whose target contains `fragment`. */
function openDescriptors(fragment: string): string[] {
  const out: string[] = [];
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      if (target.includes(fragment)) out.push(target);
    } catch {
      // closed between the listing and the readlink (the listing's own descriptor)
    }
  }
  return out;
}

/** Fills a tensor: its index in the first 4 bytes, then byte i = (index + i) & 0xff. */
function fill(bytes: Uint8Array, index: number): void {
  new DataView(bytes.buffer, bytes.byteOffset, 4).setUint32(0, index, true);
  for (let i = 4; i < bytes.length; i++) bytes[i] = (index + i) & 0xff;
}

/** Publishes one tensor of `bytes` bytes carrying pattern `index`; false when the pool is exhausted. */
function publishOne(pub: TopicPublisher, index: number, bytes: number): boolean {
  const loan = pub.pool.allocateTensor({ shape: [bytes], dtype: DType.uint8 });
  if (!loan.ok) {
    expect(loan.error.code).toBe(ErrorCode.ResourceExhausted);
    return false;
  }
  const guard = unwrap(loan.value.write(null));
  fill(unwrap(guard.tensor.mutableHostView()), index);
  unwrap(guard.commit());
  unwrap(pub.publish(unwrap(loan.value.emit())));
  return true;
}

function frame(write: (view: DataView) => void): Buffer {
  const bytes = Buffer.alloc(FRAME_BYTES);
  write(new DataView(bytes.buffer, bytes.byteOffset, FRAME_BYTES));
  return bytes;
}

/** A hand-driven subscriber on the topic socket: every frame it gets is queued as a private copy. */
interface RawClient {
  readonly socket: Socket;
  /** The descriptors its HELLO carried (wire version 2: the data segment, then the mailbox). */
  readonly fds: readonly number[];
  /** The next frame (waits for it), or null once the connection closed with nothing left. */
  next(): Promise<DataView | null>;
  readonly closed: Promise<void>;
}

async function rawClient(socketPath: string): Promise<RawClient> {
  const received = unwrap(await receiveHello(socketPath, 'raw', 5000));
  const socket = received.socket;
  const frames: DataView[] = [new DataView(received.frame.buffer.slice(received.frame.byteOffset, received.frame.byteOffset + FRAME_BYTES))];
  const waiters: ((frame: DataView | null) => void)[] = [];
  let ended = false;
  const reader = new FrameReader((view) => {
    const copy = new DataView(view.buffer.slice(view.byteOffset, view.byteOffset + FRAME_BYTES));
    const waiter = waiters.shift();
    if (waiter !== undefined) waiter(copy);
    else frames.push(copy);
    return true;
  });
  socket.on('data', (chunk: Buffer) => reader.push(chunk));
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) =>
    socket.on('close', () => {
      ended = true;
      for (const waiter of waiters.splice(0)) waiter(null);
      resolve();
    }),
  );
  return {
    socket,
    fds: received.fds,
    closed,
    next: () => {
      const queued = frames.shift();
      if (queued !== undefined) return Promise.resolve(queued);
      if (ended) return Promise.resolve(null);
      return new Promise((resolve) => waiters.push(resolve));
    },
  };
}

/** The mailbox descriptors of a raw client's HELLO (segment, its doorbell read end, the publisher's write end). */
function receivedMailbox(client: RawClient): ReceivedMailbox {
  expect(client.fds).toHaveLength(4);
  return { segment: client.fds[1]!, ownBell: client.fds[2]!, peerBell: client.fds[3]! };
}

/** A write end of the subscriber's doorbell, reopened through /proc from the read end in `mailboxFds` (a pipe reopens in the mode asked for). */
function subscriberBell(mailboxFds: readonly number[]): number {
  return openSync(`/proc/self/fd/${mailboxFds[1]!}`, constants.O_WRONLY | constants.O_NONBLOCK);
}

async function helloOf(client: RawClient): Promise<TopicHello> {
  const view = await client.next();
  expect(view).not.toBeNull();
  return unwrap(decodeHello(view!, 0));
}

interface Topic {
  readonly backend: HostBackend;
  readonly pub: TopicPublisher;
  readonly dir: string;
  readonly topic: string;
  readonly lost: SubscriberLost[];
  /** Closes the publisher and checks that nothing of the topic stays behind. */
  finish(): Promise<void>;
}

async function openTopic(topic: string, slotCount = 4, slotByteSpan = 4096, liveness: { leaseTimeoutMs?: number; livenessIntervalMs?: number } = {}, wait?: MailboxWait): Promise<Topic> {
  const backend = new HostBackend();
  const dir = runtimeDirectory();
  const pub = await TopicPublisher.create({ backend, topic, memoryKind: MemoryKind.Host, slotCount, slotByteSpan, maxRank: 1, runtimeDirectory: dir, ...liveness, ...(wait === undefined ? {} : { wait }) });
  const lost: SubscriberLost[] = [];
  pub.on('subscriberLost', (e: SubscriberLost) => lost.push(e));
  return {
    backend,
    pub,
    dir,
    topic,
    lost,
    finish: async () => {
      await pub.close();
      backend.dispose();
      expect(readdirSync(dir)).toEqual([]);
      expect(shmMailboxNames()).toEqual([]);
      expect(mappings(process.pid)).toEqual([]);
      expect(openDescriptors(dir)).toEqual([]);
    },
  };
}

/** A host graph input bound to `topic` (as the compiler plans it for a host-only consumer). */
const hostInput = (topic: string) => subscribeEndpoint(topic, { memoryKind: MemoryKind.Host, device: Device.cpu(), transport: 'posixShm', stream: null, queueDepth: 4, maxReleaseStreams: 1 });

describe.skipIf(skipReason !== null)('topic mailboxes: descriptors and releases through shared-memory rings', () => {
  const waits: { name: string; wait: MailboxWait | undefined }[] = [
    { name: 'parking', wait: undefined },
    { name: 'spinning', wait: { kind: 'spin', spinMicroseconds: 200 } },
  ];
  for (const w of waits) it(`ChannelRuntime receives 2000 tensors bit-exact through the mailbox (${w.name} on both ends); nothing but the topic socket has a name, everything goes at close`, async () => {
    const t = await openTopic(`mb-e2e-${w.name}`, 4, 4096, {}, w.wait);
    const channel = await ChannelRuntime.connect({ backend: t.backend, topic: t.topic, runtimeDirectory: t.dir, ...(w.wait === undefined ? {} : { wait: w.wait }) });
    await until(() => t.pub.subscriberCount === 1, 'attach');
    // Attached through the mailbox: both ends map it, and only the topic socket keeps a name.
    expect(readdirSync(t.dir)).toEqual([`${t.topic}.sock`]);
    expect(shmMailboxNames()).toEqual([]);
    expect(mappings(process.pid)).toHaveLength(2);
    expect(openDescriptors(t.dir)).toEqual([]); // the doorbells are anonymous pipes: no file of the directory is open

    const total = 2000;
    let mismatches = 0;
    const consumer = (async () => {
      for (let received = 0; received < total; received++) {
        const lease = await channel.receive();
        const bytes = unwrap(lease.tensor.hostView());
        const index = new DataView(bytes.buffer, bytes.byteOffset, 4).getUint32(0, true);
        if (index !== received || bytes.length !== 64 + (index % 61) * 64) mismatches++;
        for (let i = 4; i < bytes.length; i++) if (bytes[i] !== ((index + i) & 0xff)) { mismatches++; break; }
        unwrap(lease.release());
      }
    })();
    for (let i = 0; i < total; ) {
      if (publishOne(t.pub, i, 64 + (i % 61) * 64)) i++;
      else await tick();
      if ((i & 7) === 0) await tick();
    }
    await consumer;
    expect(mismatches).toBe(0);
    expect(channel.receivedCount).toBe(total);
    await until(() => t.pub.occupancy === 0, 'every slot back');
    expect(t.pub.pool.stats.available).toBe(4);
    channel.close();
    expect(mappings(process.pid)).toHaveLength(1); // the subscriber's end is gone at once
    await until(() => t.pub.subscriberCount === 0, 'the publisher saw the goodbye');
    expect(t.lost).toMatchObject([{ reason: 'closed', reclaimedLeases: 0 }]);
    await t.finish();
  }, 60_000);

  it('a graph input (TopicGraphSubscription) takes descriptors and returns slots through the mailbox', async () => {
    const t = await openTopic('mb-graph');
    let wakes = 0;
    const subscription = new TopicGraphSubscription(t.backend, hostInput(t.topic), null, { runtimeDirectory: t.dir, connectTimeoutMs: 2000 }, () => wakes++);
    await subscription.start();
    await until(() => t.pub.subscriberCount === 1, 'attach');
    expect(readdirSync(t.dir)).toEqual([`${t.topic}.sock`]);
    expect(mappings(process.pid)).toHaveLength(2);
    for (let round = 0; round < 5; round++) {
      for (let i = 0; i < 4; i++) expect(publishOne(t.pub, round * 4 + i, 200)).toBe(true);
      for (let i = 0; i < 4; i++) {
        let tensor: Tensor | undefined;
        await until(() => (tensor = subscription.next()) !== undefined, 'a descriptor arrived');
        const bytes = unwrap(tensor!.hostView());
        expect(new DataView(bytes.buffer, bytes.byteOffset, 4).getUint32(0, true)).toBe(round * 4 + i);
        tensor!.backing!.releaseLease(null);
      }
      await until(() => t.pub.occupancy === 0, 'the input returned its slots');
    }
    expect(subscription.failure).toBeNull();
    expect(wakes).toBeGreaterThanOrEqual(20);
    subscription.dispose();
    await until(() => t.lost.length === 1, 'the goodbye arrived');
    expect(t.lost[0]).toMatchObject({ reason: 'closed', reclaimedLeases: 0 });
    await t.finish();
  });

  /** Runs the no-close consumer fixture against `t` for `frames` tensors; resolves with its exit code (or 'hung') and its lines. */
  async function childRun(t: Topic, frames: number, mode: 'mailbox' | 'no-doorbells') {
    const child = spawn(process.execPath, ['--import', 'tsx', consumerScript, t.dir, t.topic, String(frames), mode], { stdio: ['ignore', 'pipe', 'inherit'] });
    const lines: Record<string, unknown>[] = [];
    let buffered = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        lines.push(JSON.parse(buffered.slice(0, nl)) as Record<string, unknown>);
        buffered = buffered.slice(nl + 1);
      }
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    await until(() => t.pub.subscriberCount === 1, 'the child attached', 30_000);
    // Through the mailbox the child maps it (its name already gone); on the socket path it maps none.
    const mapped = mappings(child.pid!).length;
    for (let i = 0; i < frames; ) {
      if (publishOne(t.pub, i, 1024)) i++;
      else await tick();
    }
    await until(() => lines.some((l) => 'received' in l || 'error' in l), 'the child received everything', 30_000);
    const summary = lines.find((l) => 'received' in l || 'error' in l);
    await until(() => t.pub.occupancy === 0, 'every slot back');
    await t.pub.close();
    const code = await Promise.race([exited, new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 20_000))]);
    if (code === 'hung') child.kill('SIGKILL');
    t.backend.dispose();
    return { code, mapped, summary, last: lines.at(-1) };
  }

  it('a subscriber process that never calls close() still exits once the publisher closes (the doorbell watch is stopped)', async () => {
    const t = await openTopic('mb-child');
    const run = await childRun(t, 200, 'mailbox');
    expect(run.mapped).toBe(1);
    expect(run.summary).toEqual({ received: 200, mismatches: 0 });
    expect(run.code).toBe(0);
    expect(run.last).toEqual({ ended: ErrorCode.InvalidState });
    expect(readdirSync(t.dir)).toEqual([]);
    expect(shmMailboxNames()).toEqual([]);
  }, 60_000);

  it('a subscriber whose addon has no doorbells declines the offered mailbox and gets every tensor over the socket', async () => {
    const t = await openTopic('mb-child-socket');
    const run = await childRun(t, 200, 'no-doorbells');
    expect(run.mapped).toBe(0);
    expect(run.summary).toEqual({ received: 200, mismatches: 0 });
    expect(run.code).toBe(0);
    expect(readdirSync(t.dir)).toEqual([]);
    expect(shmMailboxNames()).toEqual([]);
  }, 60_000);

  it('a tensor published before the publisher read the ATTACH goes to nobody (no lease); the first one after it is received', async () => {
    const t = await openTopic('mb-early-publish');
    const channel = await ChannelRuntime.connect({ backend: t.backend, topic: t.topic, runtimeDirectory: t.dir });
    expect(t.pub.subscriberCount).toBe(0); // its ATTACH is still in the socket
    expect(publishOne(t.pub, 6, 64)).toBe(true);
    expect(t.pub.occupancy).toBe(0); // an unattached connection holds no lease: the slot recycled at once
    await until(() => t.pub.subscriberCount === 1, 'attach');
    expect(publishOne(t.pub, 7, 64)).toBe(true);
    expect(t.pub.occupancy).toBe(1);
    const lease = await channel.receive();
    const bytes = unwrap(lease.tensor.hostView());
    expect(new DataView(bytes.buffer, bytes.byteOffset, 4).getUint32(0, true)).toBe(7);
    expect(t.pub.subscriberCount).toBe(1);
    expect(mappings(process.pid)).toHaveLength(2); // it went through the mailbox
    unwrap(lease.release());
    await until(() => t.pub.occupancy === 0, 'released');
    channel.close();
    await until(() => t.lost.length === 1, 'goodbye');
    await t.finish();
  });

  it('a hostile peer cannot squat a doorbell: the names wire version 1 used, planted between HELLO and ATTACH, are never opened', async () => {
    const t = await openTopic('mb-squat');
    const raw = await rawClient(t.pub.socketPath);
    const hello = await helloOf(raw);
    const token = hello.mailboxToken!;
    // A same-uid squatter that learnt the token plants the old doorbell names: a FIFO of its own and a symlink.
    const stem = join(t.dir, `${t.topic}.${process.pid}.${token}`);
    expect(spawnSync('mkfifo', ['-m', '0600', `${stem}.pub`]).status).toBe(0);
    symlinkSync('/dev/null', `${stem}.sub`);
    const mailbox = unwrap(TopicMailbox.open({ topic: t.topic, topicId: hello.topicId, slotCount: hello.slotCount }, token, receivedMailbox(raw)));
    const slots: [number, number][] = [];
    unwrap(mailbox.watch((view) => (slots.push([view.getUint32(Offset.slot, true), Number(view.getBigUint64(Offset.generation, true))]), true), () => undefined));
    raw.socket.write(frame((v) => encodeAttach(v, 0, hello.topicId, true)));
    await until(() => t.pub.subscriberCount === 1, 'attach');
    for (let i = 0; i < 3; i++) expect(publishOne(t.pub, i, 64)).toBe(true);
    await until(() => slots.length === 3, 'the descriptors through the mailbox');
    for (const [slot, generation] of slots) expect(mailbox.send(frame((v) => encodeRelease(v, 0, hello.topicId, slot, generation)))).toBe(true);
    await until(() => t.pub.occupancy === 0, 'the releases through the mailbox');
    expect(t.lost).toEqual([]);
    // Neither side opened the planted names: only the squatter's own files are there.
    expect(openDescriptors(t.dir)).toEqual([]);
    expect(readdirSync(t.dir).sort()).toEqual([`${t.topic}.${process.pid}.${token}.pub`, `${t.topic}.${process.pid}.${token}.sub`, `${t.topic}.sock`]);
    mailbox.close();
    raw.socket.end();
    await raw.closed;
    rmSync(`${stem}.pub`);
    rmSync(`${stem}.sub`);
    await t.finish();
  });

  it('a subscriber that declines the mailbox gets descriptors over the socket, and its RELEASE frames return the slots', async () => {
    const t = await openTopic('mb-socket');
    const raw = await rawClient(t.pub.socketPath);
    const hello = await helloOf(raw);
    const token = hello.mailboxToken!;
    expect(token).toMatch(/^[0-9a-f]{16}$/);
    // Offered, not attached yet: the mailbox segment (a sealed memfd) and both doorbells (pipe ends) came with
    // HELLO, so nothing of the mailbox has a name between HELLO and ATTACH: no FIFO, no /dev/shm segment.
    expect(readdirSync(t.dir)).toEqual([`${t.topic}.sock`]);
    expect(shmMailboxNames()).toEqual([]);
    expect(raw.fds).toHaveLength(4);
    expect(raw.fds.slice(2).map((fd) => readlinkSync(`/proc/self/fd/${fd}`))).toEqual([expect.stringMatching(/^pipe:\[\d+\]$/), expect.stringMatching(/^pipe:\[\d+\]$/)]);
    // Not attached yet: it is not counted, sent nothing and lent nothing.
    expect(publishOne(t.pub, 0, 100)).toBe(true);
    expect(t.pub.subscriberCount).toBe(0);
    expect(t.pub.occupancy).toBe(0);
    raw.socket.write(frame((v) => encodeAttach(v, 0, hello.topicId, false)));
    await until(() => t.pub.subscriberCount === 1, 'attach');
    expect(readdirSync(t.dir)).toEqual([`${t.topic}.sock`]);
    expect(shmMailboxNames()).toEqual([]);
    expect(mappings(process.pid)).toEqual([]); // the declined mailbox was closed, not only unlinked

    const decoder = new DescriptorDecoder(hello);
    const d = new TensorDescriptor();
    for (let i = 1; i <= 3; i++) expect(publishOne(t.pub, i, 100 * i)).toBe(true);
    expect(t.pub.occupancy).toBe(3);
    const held: [number, number][] = [];
    // Only what was published after the ATTACH, over the socket the ATTACH chose.
    for (let i = 1; i <= 3; i++) {
      const view = (await raw.next())!;
      unwrap(decoder.decode(view, 0, d));
      expect(d.byteLength).toBe(100 * i);
      held.push([d.slot, d.generation]);
    }
    for (const [slot, generation] of held) raw.socket.write(frame((v) => encodeRelease(v, 0, hello.topicId, slot, generation)));
    await until(() => t.pub.occupancy === 0, 'released over the socket');
    expect(t.lost).toEqual([]);
    raw.socket.end();
    await raw.closed;
    await t.finish();
  });

  it('a publisher that cannot make a mailbox offers none: ChannelRuntime attaches over the socket, a claim to a mailbox is dropped', async () => {
    const create = vi.spyOn(TopicMailbox, 'create').mockReturnValue(err(ErrorCode.NotSupported, 'no doorbells in this test'));
    try {
      const t = await openTopic('mb-none-offered');
      const channel = await ChannelRuntime.connect({ backend: t.backend, topic: t.topic, runtimeDirectory: t.dir });
      await until(() => t.pub.subscriberCount === 1, 'attach');
      expect(mappings(process.pid)).toEqual([]);
      for (let i = 0; i < 20; i++) {
        while (!publishOne(t.pub, i, 512)) await tick();
        const lease = await channel.receive();
        const bytes = unwrap(lease.tensor.hostView());
        expect(new DataView(bytes.buffer, bytes.byteOffset, 4).getUint32(0, true)).toBe(i);
        unwrap(lease.release());
      }
      const raw = await rawClient(t.pub.socketPath);
      const hello = await helloOf(raw);
      expect(hello.mailboxToken).toBeNull();
      raw.socket.write(frame((v) => encodeAttach(v, 0, hello.topicId, true)));
      await until(() => t.lost.length === 1, 'dropped');
      expect(t.lost[0]!.error.detail).toMatch(/attached through a mailbox it was not offered/);
      await raw.closed;
      await until(() => t.pub.occupancy === 0, 'every slot back');
      channel.close();
      await until(() => t.pub.subscriberCount === 0, 'goodbye');
      await t.finish();
    } finally {
      create.mockRestore();
    }
  });

  it('a mailbox offered to a connection that never attaches has no name, and a publisher process that exits without close() leaves nothing in the runtime directory', async () => {
    const dir = runtimeDirectory();
    const child = spawn(process.execPath, ['--import', 'tsx', exitingPublisherScript, dir, 'mb-exit'], { stdio: ['pipe', 'pipe', 'inherit'] });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    await new Promise<void>((resolve) => child.stdout!.once('data', () => resolve()));
    const raw = await rawClient(join(dir, 'mb-exit.sock'));
    const hello = await helloOf(raw);
    const token = hello.mailboxToken!;
    expect(token).toMatch(/^[0-9a-f]{16}$/);
    expect(raw.fds).toHaveLength(4);
    expect(readdirSync(dir)).toEqual(['mb-exit.sock']);
    // The segment has no name at all (a sealed memfd passed with HELLO).
    expect(readdirSync('/dev/shm').filter((n) => n.startsWith(`hs.${process.getuid!()}.${child.pid}.`))).toEqual([]);
    child.stdin!.write('exit\n');
    expect(await exited).toBe(0);
    await raw.closed;
    expect(readdirSync(dir)).toEqual([]);
  }, 60_000);

  it('TopicMailbox.create leaves nothing behind when a doorbell pipe cannot be made (EMFILE is ResourceExhausted)', () => {
    const native = unwrap(support);
    const pipesBefore = openDescriptors('pipe:').length;
    const real = native.createDoorbellPipe.bind(native);
    let calls = 0;
    const pipe = vi.spyOn(native, 'createDoorbellPipe').mockImplementation(() => {
      if (++calls === 2) throw Object.assign(new Error('cannot create a doorbell pipe: Too many open files'), { code: 'EMFILE' });
      return real();
    });
    try {
      const made = TopicMailbox.create({ topic: 'mb-create', topicId: 9, slotCount: 4 });
      expect(made.ok ? null : made.error.code).toBe(ErrorCode.ResourceExhausted);
      expect(made.ok ? '' : made.error.message).toContain('ulimit -n');
    } finally {
      pipe.mockRestore();
    }
    expect(calls).toBe(2);
    expect(openDescriptors('pipe:')).toHaveLength(pipesBefore); // the first pipe was closed again
    expect(mappings(process.pid)).toEqual([]);
  });

  it('doorbell errors map errno names as segments do: EMFILE ResourceExhausted, EPERM PermissionDenied naming what a doorbell is', () => {
    const thrown = (code: string): Error => Object.assign(new Error(`cannot adopt the doorbell read end: ${code}`), { code });
    const failure = (code: string): { code: ErrorCode; message: string } => {
      const r = doorbellError(thrown(code), 'topic t: the doorbell');
      return r.ok ? { code: ErrorCode.InvalidState, message: 'ok' } : { code: r.error.code, message: r.error.message };
    };
    expect(failure('EMFILE').code).toBe(ErrorCode.ResourceExhausted);
    expect(failure('ENFILE').code).toBe(ErrorCode.ResourceExhausted);
    expect(failure('EPERM')).toEqual({ code: ErrorCode.PermissionDenied, message: expect.stringContaining('a doorbell is the end of a pipe the publisher passed with HELLO') });
    expect(failure('EBADF').code).toBe(errnoErrorCodeOf('EBADF'));
  });

  describe('protocol violations before and around ATTACH drop the subscriber and remove its mailbox', () => {
    const cases: { name: string; detail: RegExp; frames: (hello: TopicHello) => Buffer[]; publishFirst?: boolean }[] = [
      {
        name: 'RELEASE before ATTACH',
        detail: /first frame of a subscriber must be Attach, got Release/,
        frames: (h) => [frame((v) => encodeRelease(v, 0, h.topicId, 0, 1))],
      },
      {
        name: 'DESCRIPTOR before ATTACH',
        detail: /first frame of a subscriber must be Attach, got Descriptor/,
        frames: (h) => [
          frame((v) =>
            encodeDescriptor(v, 0, { topicId: h.topicId, slot: 0, generation: 1, fenceValue: 0, flags: DescriptorFlag.HostWriter, dtype: DType.uint8, shape: [4], strides: [1], byteOffset: 0, byteLength: 4 }),
          ),
        ],
      },
      {
        name: 'ATTACH with an unknown flag bit',
        detail: /attach rejected: flags 0x3 have unknown bits/,
        frames: (h) => [
          frame((v) => {
            encodeAttach(v, 0, h.topicId, true);
            v.setUint32(Offset.attachFlags, 3, true);
          }),
        ],
      },
      {
        name: 'ATTACH with a reserved byte set',
        detail: /reserved bytes 16\.\.255 are not zero/,
        frames: (h) => [
          frame((v) => {
            encodeAttach(v, 0, h.topicId, false);
            v.setUint8(200, 1);
          }),
        ],
      },
      {
        name: 'a second ATTACH (socket path) while it holds a lease',
        detail: /an attached subscriber may only send Release and Goodbye frames, got Attach/,
        frames: (h) => [frame((v) => encodeAttach(v, 0, h.topicId, false))],
        publishFirst: true,
      },
    ];
    for (const c of cases) {
      it(c.name, async () => {
        const t = await openTopic(`mb-bad-${cases.indexOf(c)}`);
        const raw = await rawClient(t.pub.socketPath);
        const hello = await helloOf(raw);
        let leases = 0;
        if (c.publishFirst === true) {
          raw.socket.write(frame((v) => encodeAttach(v, 0, hello.topicId, false)));
          await until(() => t.pub.subscriberCount === 1, 'attach');
          expect(publishOne(t.pub, 0, 64)).toBe(true);
          expect((await raw.next())!.getUint16(Offset.type, true)).toBe(FrameType.Descriptor);
          expect(t.pub.occupancy).toBe(1);
          leases = 1;
        }
        for (const f of c.frames(hello)) raw.socket.write(f);
        await until(() => t.lost.length === 1, 'dropped');
        expect(t.lost[0]).toMatchObject({ reason: 'protocolViolation', pid: process.pid, reclaimedLeases: leases });
        expect(t.lost[0]!.error.code).toBe(ErrorCode.ProtocolError);
        expect(t.lost[0]!.error.detail).toMatch(c.detail);
        // The publisher says why, then ends the connection.
        const bye = await raw.next();
        expect(bye?.getUint16(Offset.type, true)).toBe(FrameType.Goodbye);
        expect(bye?.getUint32(Offset.reason, true)).toBe(GoodbyeReason.ProtocolViolation);
        await raw.closed;
        expect(t.pub.subscriberCount).toBe(0);
        expect(t.pub.occupancy).toBe(0);
        expect(readdirSync(t.dir)).toEqual([`${t.topic}.sock`]);
        expect(shmMailboxNames()).toEqual([]);
        expect(mappings(process.pid)).toEqual([]);
        await t.finish();
      });
    }
  });

  describe('a hostile subscriber behind the mailbox', () => {
    /** A raw subscriber that attaches through the mailbox, plus a second mapping and its own descriptor of the publisher's doorbell. */
    async function hostileAttach(t: Topic) {
      const raw = await rawClient(t.pub.socketPath);
      const hello = await helloOf(raw);
      const token = hello.mailboxToken!;
      const address: MailboxAddress = { topic: t.topic, topicId: hello.topicId, slotCount: hello.slotCount };
      const mailbox = unwrap(TopicMailbox.open(address, token, receivedMailbox(raw)));
      const alias = unwrap(SharedSegment.fromDescriptor({ fd: raw.fds[1]!, byteSize: mailboxByteSize(mailboxCapacity(hello.slotCount)), access: 'readWrite' }));
      const native = unwrap(support);
      // Its own descriptor of the publisher's doorbell: the write end that came with HELLO, duplicated.
      const bell = native.adoptDoorbell(raw.fds[3]!, false);
      const descriptors: number[] = [];
      unwrap(mailbox.watch((view) => (descriptors.push(view.getUint32(Offset.slot, true)), true), () => undefined));
      raw.socket.write(frame((v) => encodeAttach(v, 0, hello.topicId, true)));
      const dispose = (): void => {
        mailbox.close();
        alias.close();
        native.closeDoorbell(bell);
        raw.socket.destroy();
      };
      return { raw, hello, mailbox, alias, bell, native, descriptors, dispose };
    }

    const attacks: { name: string; detail: RegExp; attack: (h: Awaited<ReturnType<typeof hostileAttach>>) => void }[] = [
      {
        name: 'corrupts its release ring tail (far beyond the capacity) and rings the doorbell',
        detail: /ring tail is beyond the ring's capacity \(corrupted control block\)/,
        attack: (h) => {
          Atomics.store(new Uint32Array(h.alias.bytes.buffer, h.alias.bytes.byteOffset + RELEASE_RING_CONTROL + RingWord.tail, 1), 0, 0x40000000);
          h.native.ringDoorbell(h.bell);
        },
      },
      {
        name: 'sends a DESCRIPTOR through its release ring',
        detail: /only Release frames travel through the mailbox, got Descriptor/,
        attack: (h) =>
          void h.mailbox.send(
            frame((v) =>
              encodeDescriptor(v, 0, { topicId: h.hello.topicId, slot: 0, generation: 1, fenceValue: 0, flags: DescriptorFlag.HostWriter, dtype: DType.uint8, shape: [4], strides: [1], byteOffset: 0, byteLength: 4 }),
            ),
          ),
      },
      {
        name: 'releases through the ring a generation it was never sent',
        detail: /release of slot \d+ generation 7, but the subscriber holds generation 1/,
        attack: (h) => void h.mailbox.send(frame((v) => encodeRelease(v, 0, h.hello.topicId, h.descriptors[0]!, 7))),
      },
    ];
    for (const a of attacks) {
      it(`${a.name}: dropped, its leases reclaimed, publishing goes on to the others`, async () => {
        const t = await openTopic(`mb-hostile-${attacks.indexOf(a)}`);
        const good = await ChannelRuntime.connect({ backend: t.backend, topic: t.topic, runtimeDirectory: t.dir });
        const h = await hostileAttach(t);
        await until(() => t.pub.subscriberCount === 2, 'both attached');
        for (let i = 0; i < 2; i++) expect(publishOne(t.pub, i, 256)).toBe(true);
        await until(() => h.descriptors.length === 2, 'the hostile end got its descriptors through the ring');
        expect(t.pub.occupancy).toBe(2);
        const kept = [await good.receive(), await good.receive()];
        a.attack(h);
        await until(() => t.lost.length === 1, 'dropped');
        expect(t.lost[0]).toMatchObject({ reason: 'protocolViolation', reclaimedLeases: 2 });
        expect(t.lost[0]!.error.detail).toMatch(a.detail);
        expect((await h.raw.next())?.getUint32(Offset.reason, true)).toBe(GoodbyeReason.ProtocolViolation);
        await h.raw.closed;
        expect(t.pub.subscriberCount).toBe(1);
        expect(t.pub.occupancy).toBe(2); // only the good subscriber's leases are left
        h.dispose();
        expect(mappings(process.pid)).toHaveLength(2); // the good subscriber's mailbox, both ends
        for (const lease of kept) unwrap(lease.release());
        for (let i = 2; i < 12; i++) {
          while (!publishOne(t.pub, i, 256)) await tick();
          const lease = await good.receive();
          const bytes = unwrap(lease.tensor.hostView());
          expect(new DataView(bytes.buffer, bytes.byteOffset, 4).getUint32(0, true)).toBe(i);
          unwrap(lease.release());
        }
        await until(() => t.pub.occupancy === 0, 'every slot back');
        good.close();
        await until(() => t.pub.subscriberCount === 0, 'the good subscriber left');
        await t.finish();
      });
    }

    it('a publisher that cannot watch the doorbell of the mailbox a subscriber attached through: GOODBYE closed, reported as its own failure (mailboxFailed)', async () => {
      const t = await openTopic('mb-watch-fails');
      const h = await hostileAttach(t);
      // The ATTACH is written but not read yet: the publisher's own watch is the next one.
      const spy = vi.spyOn(h.native, 'watchDoorbell').mockImplementationOnce(() => {
        throw new Error('EMFILE: too many open files');
      });
      await until(() => t.lost.length === 1, 'dropped');
      spy.mockRestore();
      expect(t.lost[0]).toMatchObject({ reason: 'mailboxFailed', reclaimedLeases: 0 });
      expect(t.lost[0]!.error.code).toBe(ErrorCode.InvalidState);
      expect(t.lost[0]!.error.detail).toMatch(/cannot serve the mailbox it attached through \(mailbox [0-9a-f]{16}: its doorbell cannot be watched: EMFILE/);
      expect((await h.raw.next())?.getUint32(Offset.reason, true)).toBe(GoodbyeReason.Closed);
      await h.raw.closed;
      expect(t.pub.subscriberCount).toBe(0);
      expect(publishOne(t.pub, 0, 64)).toBe(true); // publishing goes on, to nobody
      h.dispose();
      await t.finish();
    });

    it('a subscriber dropped for a lease timeout: releases it had put in its ring count as releases, only the held slot is reclaimed', async () => {
      const t = await openTopic('mb-timeout-release', 4, 4096, { leaseTimeoutMs: 200, livenessIntervalMs: 20 });
      const h = await hostileAttach(t);
      await until(() => t.pub.subscriberCount === 1, 'attached');
      for (let i = 0; i < 2; i++) expect(publishOne(t.pub, i, 256)).toBe(true);
      await until(() => h.descriptors.length === 2, 'both descriptors through the ring');
      // Release the first slot into the ring without waking the publisher (its doorbell is /dev/null here),
      // as a subscriber that died right after writing it would leave it; hold the second past the timeout.
      const silent = openSync('/dev/null', 'w');
      const capacity = mailboxCapacity(h.hello.slotCount);
      const ring = new FrameRing(h.native, h.alias.bytes, RELEASE_RING_CONTROL, releaseEntries(capacity), capacity);
      expect(ring.push(frame((v) => encodeRelease(v, 0, h.hello.topicId, h.descriptors[0]!, 1)), silent)).toBe(true);
      closeSync(silent);
      await until(() => t.lost.length === 1, 'dropped for the lease timeout');
      expect(t.lost[0]).toMatchObject({ reason: 'leaseTimeout', reclaimedLeases: 1 });
      expect(t.lost[0]!.error.detail).toMatch(/held slot \d+ longer than 200 ms/);
      expect(t.pub.occupancy).toBe(0);
      h.dispose();
      await t.finish();
    });
  });

  describe('ordering: a GOODBYE on the socket comes after the ring frames sent before it', () => {
    it('a release put in the ring just before close() counts: nothing is reclaimed', async () => {
      const t = await openTopic('mb-order-release');
      const channel = await ChannelRuntime.connect({ backend: t.backend, topic: t.topic, runtimeDirectory: t.dir });
      await until(() => t.pub.subscriberCount === 1, 'attach');
      expect(publishOne(t.pub, 0, 64)).toBe(true);
      const lease = await channel.receive();
      unwrap(lease.release());
      channel.close();
      await until(() => t.lost.length === 1, 'the goodbye arrived');
      expect(t.lost[0]).toMatchObject({ reason: 'closed', reclaimedLeases: 0 });
      expect(t.pub.occupancy).toBe(0);
      await t.finish();
    });

    it('descriptors put in the ring just before the publisher closes are still handed out', async () => {
      const t = await openTopic('mb-order-descriptor');
      const channel = await ChannelRuntime.connect({ backend: t.backend, topic: t.topic, runtimeDirectory: t.dir });
      await until(() => t.pub.subscriberCount === 1, 'attach');
      for (let i = 0; i < 3; i++) expect(publishOne(t.pub, i, 128)).toBe(true);
      await t.pub.close();
      for (let i = 0; i < 3; i++) {
        const lease = await channel.receive();
        const bytes = unwrap(lease.tensor.hostView());
        expect(new DataView(bytes.buffer, bytes.byteOffset, 4).getUint32(0, true)).toBe(i);
      }
      await expect(channel.receive()).rejects.toMatchObject({ code: ErrorCode.InvalidState });
      channel.close();
      t.backend.dispose();
      expect(readdirSync(t.dir)).toEqual([]);
      expect(shmMailboxNames()).toEqual([]);
      expect(mappings(process.pid)).toEqual([]);
    });
  });

  describe('a hostile subscriber that writes its ring before ATTACH', () => {
    const early: { name: string; detail: RegExp; write: (mailbox: TopicMailbox, alias: SharedSegment, hello: TopicHello) => void }[] = [
      {
        name: 'a RELEASE in the ring',
        detail: /release of slot 0 generation 1, but the subscriber holds no lease there/,
        write: (mailbox, _alias, hello) => void mailbox.send(frame((v) => encodeRelease(v, 0, hello.topicId, 0, 1))),
      },
      {
        name: 'a corrupted ring tail',
        detail: /corrupted control block/,
        write: (_mailbox, alias) => Atomics.store(new Uint32Array(alias.bytes.buffer, alias.bytes.byteOffset + RELEASE_RING_CONTROL + RingWord.tail, 1), 0, 0x7fffffff),
      },
    ];
    for (const e of early) {
      it(`${e.name}: dropped at ATTACH and never counted as a subscriber`, async () => {
        const t = await openTopic(`mb-early-${early.indexOf(e)}`);
        const raw = await rawClient(t.pub.socketPath);
        const hello = await helloOf(raw);
        const token = hello.mailboxToken!;
        const mailbox = unwrap(TopicMailbox.open({ topic: t.topic, topicId: hello.topicId, slotCount: hello.slotCount }, token, receivedMailbox(raw)));
        const alias = unwrap(SharedSegment.fromDescriptor({ fd: raw.fds[1]!, byteSize: mailboxByteSize(mailboxCapacity(hello.slotCount)), access: 'readWrite' }));
        e.write(mailbox, alias, hello);
        raw.socket.write(frame((v) => encodeAttach(v, 0, hello.topicId, true)));
        await until(() => t.lost.length === 1, 'dropped');
        expect(t.lost[0]).toMatchObject({ reason: 'protocolViolation', reclaimedLeases: 0 });
        expect(t.lost[0]!.error.detail).toMatch(e.detail);
        await raw.closed;
        expect(t.pub.subscriberCount).toBe(0);
        // Published with nobody attached: the slot recycles at once.
        expect(publishOne(t.pub, 0, 64)).toBe(true);
        expect(t.pub.occupancy).toBe(0);
        mailbox.close();
        alias.close();
        await t.finish();
      });
    }
  });

  it('every subscriber whose descriptor ring overflows in one publish is dropped, and that publish counts none of them', async () => {
    // Two slots: each ring holds two descriptors. Both hostile subscribers read the descriptors in place
    // (without moving their ring head) and release them, so the third publish finds both rings full.
    const t = await openTopic('mb-overflow', 2, 256);
    const peers = [];
    for (let i = 0; i < 2; i++) {
      const raw = await rawClient(t.pub.socketPath);
      const hello = await helloOf(raw);
      const token = hello.mailboxToken!;
      const mailbox = unwrap(TopicMailbox.open({ topic: t.topic, topicId: hello.topicId, slotCount: hello.slotCount }, token, receivedMailbox(raw)));
      const alias = unwrap(SharedSegment.fromDescriptor({ fd: raw.fds[1]!, byteSize: mailboxByteSize(mailboxCapacity(hello.slotCount)), access: 'readWrite' }));
      raw.socket.write(frame((v) => encodeAttach(v, 0, hello.topicId, true)));
      peers.push({ raw, hello, mailbox, alias });
    }
    await until(() => t.pub.subscriberCount === 2, 'both attached');
    for (let i = 0; i < 2; i++) expect(publishOne(t.pub, i, 64)).toBe(true);
    for (const p of peers) {
      for (let entry = 0; entry < 2; entry++) {
        const at = new DataView(p.alias.bytes.buffer, p.alias.bytes.byteOffset + RING_ENTRIES + entry * FRAME_BYTES, FRAME_BYTES);
        const slot = at.getUint32(Offset.slot, true);
        const generation = Number(at.getBigUint64(Offset.generation, true));
        expect(p.mailbox.send(frame((v) => encodeRelease(v, 0, p.hello.topicId, slot, generation)))).toBe(true);
      }
    }
    await until(() => t.pub.occupancy === 0, 'the in-place releases came back');
    const loan = unwrap(t.pub.pool.allocateTensor({ shape: [64], dtype: DType.uint8 }));
    unwrap(unwrap(loan.write(null)).commit());
    expect(unwrap(t.pub.publish(unwrap(loan.emit())))).toBe(0);
    expect(t.lost.map((l) => l.reason)).toEqual(['protocolViolation', 'protocolViolation']);
    for (const l of t.lost) expect(l.error.detail).toMatch(/descriptor ring is full/);
    expect(t.pub.subscriberCount).toBe(0);
    expect(t.pub.occupancy).toBe(0);
    for (const p of peers) {
      await p.raw.closed;
      p.mailbox.close();
      p.alias.close();
    }
    await t.finish();
  });

  describe('ChannelRuntime against a hostile publisher that offers a mailbox', () => {
    /**
     * A fake publisher in this process (so SO_PEERCRED matches): a real pool segment and a real mailbox
     * (made by `TopicMailbox.create`), tampered with by `tamper`, offered in its HELLO; it records the
     * frames the subscriber sends and answers nothing by itself.
     */
    async function fakePublisher(topic: string, tamper: (m: { dir: string; token: string; mailboxFds: readonly number[]; alias: (byteSize: number) => SharedSegment }) => readonly number[] | void) {
      const dir = runtimeDirectory();
      const segment = unwrap(SharedSegment.createSealed({ label: `hs.pool-${topic}`, byteSize: 4 * 1024 }));
      const mailbox = unwrap(TopicMailbox.create({ topic, topicId: 5, slotCount: 4 }));
      const token = mailbox.token;
      // The fake keeps the mailbox's descriptors (segment, the subscriber's doorbell ends) to pass them with each HELLO.
      const mailboxFds = mailbox.descriptors;
      // A second read/write mapping of the mailbox.
      const alias = (byteSize: number): SharedSegment => unwrap(SharedSegment.fromDescriptor({ fd: mailboxFds[0]!, byteSize, access: 'readWrite' }));
      const names = { dir, token, mailboxFds, alias };
      const sent = tamper(names) ?? mailboxFds;
      const got: DataView[] = [];
      const peers: Socket[] = [];
      const server = createServer((socket) => {
        peers.push(socket);
        const reader = new FrameReader((view) => (got.push(new DataView(view.buffer.slice(view.byteOffset, view.byteOffset + FRAME_BYTES))), true));
        socket.on('data', (chunk: Buffer) => reader.push(chunk));
        socket.on('error', () => undefined);
        sendHello(
          socket,
          frame((v) => encodeHello(v, 0, { topicId: 5, slotCount: 4, slotStride: 1024, segmentBytes: 4 * 1024, memoryKind: WireMemoryKind.Host, maxRank: 1, producerPid: process.pid, mailboxToken: token })),
          [segment.descriptor, ...sent],
        );
      });
      await new Promise<void>((resolve) => server.listen(join(dir, `${topic}.sock`), resolve));
      const close = async (): Promise<void> => {
        for (const peer of peers) peer.destroy();
        await new Promise<void>((resolve) => server.close(() => resolve()));
        mailbox.close();
        segment.close();
      };
      return { ...names, mailbox, segment, got, peers, close };
    }

    /** What of the fake's this process has mapped or open (the fake's own mappings and doorbell pipes included). */
    const held = (f: { token: string; segment: SharedSegment }) => ({
      mailboxMaps: mappings(process.pid, new RegExp(`\\.m${f.token}`)).length,
      poolMaps: mappings(process.pid, new RegExp(f.segment.name.replace(/\./g, '\\.'))).length,
      pipes: openDescriptors('pipe:').length,
    });

    const refusals: { name: string; code: ErrorCode; detail: RegExp; tamper: Parameters<typeof fakePublisher>[1] }[] = [
      {
        name: 'a mailbox header that does not match (wrong magic)',
        code: ErrorCode.ProtocolError,
        detail: /has a header that does not match the topic/,
        tamper: (m) => {
          const alias = m.alias(64);
          new DataView(alias.bytes.buffer, alias.bytes.byteOffset).setUint32(MailboxHeader.magic, MAILBOX_MAGIC ^ 1, true);
          alias.close();
        },
      },
      {
        name: 'a mailbox header whose capacity does not fit the slot count',
        code: ErrorCode.ProtocolError,
        detail: /does not match the topic \(magic, version, 4 entries/,
        tamper: (m) => {
          const alias = m.alias(64);
          new DataView(alias.bytes.buffer, alias.bytes.byteOffset).setUint32(MailboxHeader.capacity, 1 << 30, true);
          alias.close();
        },
      },
      {
        name: 'a regular file in place of a doorbell end',
        code: ErrorCode.PermissionDenied,
        detail: /a doorbell is the end of a pipe the publisher passed with HELLO/,
        tamper: (m) => [m.mailboxFds[0]!, openSync(join(base, `not-a-pipe-${m.token}`), 'w'), m.mailboxFds[2]!],
      },
      {
        name: 'the two doorbell ends swapped (a write end where the read end belongs)',
        code: ErrorCode.PermissionDenied,
        detail: /subscriber's doorbell \(read end\).*a doorbell is the end of a pipe/,
        tamper: (m) => [m.mailboxFds[0]!, m.mailboxFds[2]!, m.mailboxFds[1]!],
      },
    ];
    for (const r of refusals) {
      it(`refuses ${r.name} with ${r.code}, and keeps nothing of it`, async () => {
        const topic = `mb-fake-${refusals.indexOf(r)}`;
        const f = await fakePublisher(topic, r.tamper);
        const before = held(f);
        expect(before).toMatchObject({ mailboxMaps: 1, poolMaps: 1 }); // the fake's own
        const backend = new HostBackend();
        await expect(ChannelRuntime.connect({ backend, topic, runtimeDirectory: f.dir })).rejects.toMatchObject({ code: r.code, detail: expect.stringMatching(r.detail) });
        await until(() => f.peers[0]?.destroyed === true || f.peers[0]?.readableEnded === true, 'the subscriber hung up');
        expect(held(f)).toEqual(before);
        expect(f.got).toEqual([]); // it never attached
        backend.dispose();
        await f.close();
      });
    }

    async function attachedToFake(topic: string) {
      const f = await fakePublisher(topic, () => undefined);
      const backend = new HostBackend();
      const channel = await ChannelRuntime.connect({ backend, topic, runtimeDirectory: f.dir });
      await until(() => f.got.length === 1, 'ATTACH');
      expect(f.got[0]!.getUint16(Offset.type, true)).toBe(FrameType.Attach);
      expect(f.got[0]!.getUint32(Offset.attachFlags, true)).toBe(1);
      const descriptor = (slot: number, generation: number): Buffer =>
        frame((v) => encodeDescriptor(v, 0, { topicId: 5, slot, generation, fenceValue: 0, flags: DescriptorFlag.HostWriter, dtype: DType.uint8, shape: [16], strides: [1], byteOffset: 0, byteLength: 16 }));
      return { f, backend, channel, descriptor };
    }

    it('rejects a ring tail the publisher pushed beyond the capacity (ProtocolError) and says so on the socket', async () => {
      const { f, backend, channel } = await attachedToFake('mb-fake-corrupt');
      const native = unwrap(support);
      const alias = f.alias(RING_ENTRIES);
      const bell = subscriberBell(f.mailboxFds);
      Atomics.store(new Uint32Array(alias.bytes.buffer, alias.bytes.byteOffset + DESCRIPTOR_RING_CONTROL + RingWord.tail, 1), 0, 1000);
      native.ringDoorbell(bell);
      await expect(channel.receive()).rejects.toMatchObject({ code: ErrorCode.ProtocolError, detail: expect.stringMatching(/corrupted control block/) });
      await until(() => f.got.length === 2, 'GOODBYE');
      expect(f.got[1]!.getUint32(Offset.reason, true)).toBe(GoodbyeReason.ProtocolViolation);
      native.closeDoorbell(bell);
      alias.close();
      channel.close();
      backend.dispose();
      await f.close();
    });

    it('a graph input fails with ProtocolError on a corrupted descriptor ring and says so on the socket', async () => {
      const f = await fakePublisher('mb-fake-graph', () => undefined);
      const backend = new HostBackend();
      const subscription = new TopicGraphSubscription(backend, hostInput('mb-fake-graph'), null, { runtimeDirectory: f.dir, connectTimeoutMs: 2000 }, () => undefined);
      await subscription.start();
      await until(() => f.got.length === 1, 'ATTACH');
      expect(f.got[0]!.getUint32(Offset.attachFlags, true)).toBe(1);
      const native = unwrap(support);
      const alias = f.alias(RING_ENTRIES);
      const bell = subscriberBell(f.mailboxFds);
      Atomics.store(new Uint32Array(alias.bytes.buffer, alias.bytes.byteOffset + DESCRIPTOR_RING_CONTROL + RingWord.tail, 1), 0, 0xfffffff0);
      native.ringDoorbell(bell);
      await until(() => subscription.failure !== null, 'the input failed');
      expect(subscription.failure!.code).toBe(ErrorCode.ProtocolError);
      expect(subscription.failure!.detail).toMatch(/corrupted control block/);
      await until(() => f.got.length === 2, 'GOODBYE');
      expect(f.got[1]!.getUint32(Offset.reason, true)).toBe(GoodbyeReason.ProtocolViolation);
      expect(subscription.next()).toBeUndefined();
      native.closeDoorbell(bell);
      alias.close();
      subscription.dispose();
      expect(mappings(process.pid, new RegExp(`\\.m${f.token}`))).toHaveLength(1); // the fake's own
      backend.dispose();
      await f.close();
    });

    it('rejects anything but a DESCRIPTOR in the descriptor ring', async () => {
      const { f, backend, channel } = await attachedToFake('mb-fake-type');
      expect(f.mailbox.send(frame((v) => encodeAttach(v, 0, 5, true)))).toBe(true);
      await expect(channel.receive()).rejects.toMatchObject({ detail: expect.stringMatching(/only Descriptor frames travel through the mailbox/) });
      channel.close();
      backend.dispose();
      await f.close();
    });

    it('a lease released after the publisher said goodbye sends no protocol-violation GOODBYE back', async () => {
      const { f, backend, channel, descriptor } = await attachedToFake('mb-fake-late-release');
      expect(f.mailbox.send(descriptor(0, 1))).toBe(true);
      const lease = await channel.receive();
      f.peers[0]!.write(frame((v) => encodeGoodbye(v, 0, 5, GoodbyeReason.Closed)));
      await expect(channel.receive()).rejects.toMatchObject({ code: ErrorCode.InvalidState });
      unwrap(lease.release());
      channel.close();
      await until(() => f.got.length >= 2, 'the subscriber closed');
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(f.got.map((v) => [v.getUint16(Offset.type, true), v.getUint32(Offset.reason, true)])).toEqual([
        [FrameType.Attach, 1],
        [FrameType.Goodbye, GoodbyeReason.Closed],
      ]);
      backend.dispose();
      await f.close();
    });
  });
});
