import { EventEmitter } from 'node:events';
import { existsSync, unlinkSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { randomBytes } from 'node:crypto';
import { TensorPool } from '@hs/pool';
import { Device, ErrorCode, HsError, MemoryKind, OK_VOID, err, ok, type Backend, type DeviceMemory, type Result } from '@hs/streams';
import type { DType, Tensor } from '@hs/tensor';
import type { SyncResource } from '@hs/nanovdb-mr';
import { FrameReader } from './frame-reader.js';
import { TopicMailbox } from './mailbox/topic-mailbox.js';
import { SharedSegment } from './shared-segment.js';
import { checkedSocketPeer } from './socket-peer.js';
import { SubscriberLeases, dropLapsedSubscribers } from './subscriber-leases.js';
import { checkTopicName, reapStaleDoorbells, reapStaleSegments, segmentPrefix, topicDirectory, topicSocketPath } from './topic-endpoint.js';
import { attachUsesMailbox, encodeHello, goodbyeFrame, type TopicHello } from './wire/control-frames.js';
import { encodeDescriptor } from './wire/descriptor-codec.js';
import { readFrameHeader } from './wire/frame-header.js';
import { DescriptorFlag, FRAME_BYTES, FrameType, GoodbyeReason, MAX_DESCRIPTOR_RANK, WireMemoryKind } from './wire/frame-layout.js';

/** Options of `TopicPublisher.create`. */
export interface TopicPublisherOptions {
  /** Backend the boundary pool's tensors belong to; it must implement `adoptHostMemory`. */
  readonly backend: Backend;
  /** Topic name, 1..64 characters of `[A-Za-z0-9._-]`. */
  readonly topic: string;
  /** `host` or `pinnedHost` (a device boundary is not part of this publisher). */
  readonly memoryKind: MemoryKind;
  /** Slots in the boundary pool, 1..65536. */
  readonly slotCount: number;
  /** Largest tensor one slot holds, in bytes (positive). */
  readonly slotByteSpan: number;
  /** Largest rank, 1..8. */
  readonly maxRank: number;
  /** The only dtype tensors may have; any when omitted. */
  readonly dtype?: DType;
  /** Most subscribers at once (more are refused with a GOODBYE); default 8. */
  readonly maxSubscribers?: number;
  /**
   * Longest a subscriber may hold one tensor, in ms, before it is dropped and its slots reclaimed (a hung
   * importer); default 5000. `Infinity` disables the limit (a dead importer is still reclaimed).
   */
  readonly leaseTimeoutMs?: number;
  /** How often subscriber pids and lease ages are checked, in ms; default 250. */
  readonly livenessIntervalMs?: number;
  /** Directory of the topic socket; default the per-user runtime directory (see `topicDirectory`). */
  readonly runtimeDirectory?: string;
  /**
   * The CUDA device whose events order in-process readers of the slots that run on CUDA streams (their
   * release streams: a slot is reused only after those streams passed it). Omit it when only host code and
   * other processes read the slots.
   */
  readonly eventDevice?: Device;
  /** Release streams each slot tracks for those readers; default the pool's (8). */
  readonly maxReleaseStreams?: number;
}

/**
 * Why a subscriber's slots were reclaimed. `mailboxFailed` is the publisher's own failure: the subscriber
 * attached through its mailbox, but this process could not watch the mailbox's doorbell (for example out of
 * file descriptors); the subscriber is told `GOODBYE` closed, not accused of a protocol violation.
 */
export type SubscriberLossReason = 'closed' | 'processGone' | 'leaseTimeout' | 'protocolViolation' | 'mailboxFailed';

/** The `subscriberLost` event: a subscriber went away or was dropped and its slots came back. */
export interface SubscriberLost {
  /** The subscriber's process id (from SO_PEERCRED). */
  readonly pid: number;
  /** What ended it: the socket closed, the process vanished, a lease timed out, a bad frame, or this publisher could not serve its mailbox. */
  readonly reason: SubscriberLossReason;
  /** Read leases that were reclaimed (slots the subscriber still held). */
  readonly reclaimedLeases: number;
  /** `InvalidState` (closed, process gone, mailbox failed), `ResourceExhausted` (lease timeout) or `ProtocolError`. */
  readonly error: HsError;
}

interface Subscriber {
  readonly socket: Socket;
  readonly pid: number;
  /** False until its ATTACH arrived: nothing is sent to it and it does not count in `subscriberCount`. */
  attached: boolean;
  /**
   * Descriptors published between its HELLO and its ATTACH (at most one per slot, each holding its lease),
   * sent through the path the ATTACH picks, so a tensor published right after the subscriber's `connect()`
   * returned reaches it although its ATTACH was not read yet.
   */
  readonly early: Buffer[];
  /** The mailbox offered to it (kept when it attached through it), or null: descriptors go over the socket. */
  mailbox: TopicMailbox | null;
  /** The read leases it holds, by slot. */
  readonly leases: SubscriberLeases;
  gone: boolean;
  /** True while the socket is corked for this turn's descriptors. */
  corked: boolean;
}

const DEFAULT_ALIGNMENT = 256;
const MAX_SLOTS = 65536;

function positiveInteger(value: unknown, what: string, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1 || value > max) {
    throw new HsError(ErrorCode.InvalidArgument, `TopicPublisher: ${what} must be an integer in 1..${max}, got ${String(value)}`);
  }
  return value;
}

/**
 * The exporting side of a topic: a boundary pool of `slotCount` slots in one POSIX shared-memory segment
 * (mode 0600), and a Unix socket that subscribers (`ChannelRuntime`) connect to. The pool is an ordinary
 * `TensorPool` (`publisher.pool`) whose memory IS the segment, so a tensor written through a loan is
 * published with no copy of its bytes: `publish()` sends a 256-byte descriptor to every subscriber and
 * holds one read lease per subscriber; the slot recycles only after every subscriber released it.
 *
 * A producer that outruns slot return gets `ResourceExhausted` from `pool.allocateTensor()` at once. A
 * subscriber that closes its socket, whose process dies, that holds a tensor past `leaseTimeoutMs` or that
 * sends a malformed frame is dropped and its leases reclaimed within `livenessIntervalMs` (socket close:
 * at once), with a `subscriberLost` event. Subscribers must run as the same user (SO_PEERCRED).
 *
 * Events: `subscriberLost` (a `SubscriberLost`), and `slotsReturned` (the number of slots a release or a
 * reclaim just freed), so a producer that got `ResourceExhausted` can resume without polling.
 *
 * Spec: "Crossing process boundaries: the generation fence", "Pinned-host readiness follows the writer",
 * warning "Returning slots across processes can limit throughput", "Exhaustion fails fast".
 *
 * @example
 * ```ts
 * const pub = unwrap(await TopicPublisher.create({ backend, topic: 'camera', memoryKind: MemoryKind.Host,
 *   slotCount: 8, slotByteSpan: 1 << 20, maxRank: 3 }));
 * const loan = unwrap(pub.pool.allocateTensor({ shape: [480, 640], dtype: DType.uint8 }));
 * const guard = unwrap(loan.write(null));
 * unwrap(guard.tensor.mutableHostView()).fill(7);
 * unwrap(guard.commit());
 * unwrap(pub.publish(unwrap(loan.emit())));
 * ```
 */
export class TopicPublisher extends EventEmitter {
  readonly #backend: Backend;
  readonly #segment: SharedSegment;
  readonly #memory: DeviceMemory;
  readonly #pool: TensorPool;
  readonly #server: Server;
  readonly #socketPath: string;
  readonly #topicId: number;
  readonly #slotStride: number;
  readonly #maxSubscribers: number;
  readonly #leaseTimeoutMs: number;
  readonly #subscribers = new Set<Subscriber>();
  #attachedCount = 0;
  readonly #generations: Float64Array;
  readonly #published: (Tensor | null)[];
  /** HELLO of this topic without a mailbox; each subscriber's HELLO adds its mailbox token. */
  readonly #hello: TopicHello;
  readonly #runtimeDirectory: string;
  /** Where each publish encodes its descriptor once (mailboxes copy it; socket writes copy it once). */
  readonly #frame = Buffer.alloc(FRAME_BYTES);
  /** Subscribers whose descriptor ring was full during the current publish (dropped once it is done). */
  readonly #overflowed: Subscriber[] = [];
  readonly #liveness: NodeJS.Timeout;
  readonly #onExit: () => void;
  #closed = false;
  #publishedTotal = 0;
  #flushScheduled = false;
  /**
   * Uncorks every subscriber socket once per turn: descriptors published in one synchronous burst leave in
   * one write, and a single publish leaves as soon as the current operation returns.
   */
  readonly #flush = (): void => {
    this.#flushScheduled = false;
    for (const sub of this.#subscribers) {
      if (!sub.corked) continue;
      sub.corked = false;
      sub.socket.uncork();
    }
  };

  private constructor(init: {
    backend: Backend;
    topic: string;
    segment: SharedSegment;
    memory: DeviceMemory;
    pool: TensorPool;
    server: Server;
    socketPath: string;
    runtimeDirectory: string;
    topicId: number;
    slotStride: number;
    memoryKind: WireMemoryKind;
    maxRank: number;
    maxSubscribers: number;
    leaseTimeoutMs: number;
    livenessIntervalMs: number;
  }) {
    super();
    this.topic = init.topic;
    this.#backend = init.backend;
    this.#segment = init.segment;
    this.#memory = init.memory;
    this.#pool = init.pool;
    this.#server = init.server;
    this.#socketPath = init.socketPath;
    this.#topicId = init.topicId;
    this.#slotStride = init.slotStride;
    this.#maxSubscribers = init.maxSubscribers;
    this.#leaseTimeoutMs = init.leaseTimeoutMs;
    this.#generations = new Float64Array(init.pool.slotCount);
    this.#published = new Array<Tensor | null>(init.pool.slotCount).fill(null);
    this.#runtimeDirectory = init.runtimeDirectory;
    this.#hello = {
      topicId: init.topicId,
      slotCount: init.pool.slotCount,
      slotStride: init.slotStride,
      segmentBytes: init.segment.byteSize,
      memoryKind: init.memoryKind,
      maxRank: init.maxRank,
      producerPid: process.pid,
      segmentName: init.segment.name,
      mailboxToken: null,
    };
    this.#server.on('connection', (socket) => this.#accept(socket));
    this.#liveness = setInterval(() => dropLapsedSubscribers(this.#subscribers, this.topic, this.#topicId, this.#leaseTimeoutMs, (sub, loss) => this.#drop(sub, loss)), init.livenessIntervalMs);
    this.#liveness.unref();
    // Last-chance cleanup when the process exits without close(): names only (the OS drops mappings).
    this.#onExit = () => {
      this.#segment.unlink();
      // Mailboxes offered to subscribers that had not attached yet still have their names.
      for (const sub of this.#subscribers) sub.mailbox?.unlinkNames();
      if (existsSync(this.#socketPath)) unlinkSync(this.#socketPath);
    };
    process.on('exit', this.#onExit);
  }

  /** The topic name. */
  readonly topic: string;

  /**
   * Creates the segment, the boundary pool over it and the listening socket. Returns `NotSupported`
   * without the IPC addon or when `backend` cannot adopt host memory, `AlreadyExists` when a live
   * publisher already serves the topic, `PermissionDenied` for an unsafe runtime directory,
   * `OutOfMemory` when /dev/shm cannot hold the pool; nothing is left behind on failure.
   * @throws HsError `InvalidArgument` for malformed options (topic name, counts, memory kind).
   */
  static async create(options: TopicPublisherOptions): Promise<Result<TopicPublisher>> {
    const topic = checkTopicName(options.topic, 'TopicPublisher.create');
    const slotCount = positiveInteger(options.slotCount, 'slotCount', MAX_SLOTS);
    const slotByteSpan = positiveInteger(options.slotByteSpan, 'slotByteSpan');
    const maxRank = positiveInteger(options.maxRank, 'maxRank', MAX_DESCRIPTOR_RANK);
    const maxSubscribers = positiveInteger(options.maxSubscribers ?? 8, 'maxSubscribers', 1024);
    const livenessIntervalMs = positiveInteger(options.livenessIntervalMs ?? 250, 'livenessIntervalMs', 60_000);
    const leaseTimeoutMs = options.leaseTimeoutMs ?? 5000;
    if (typeof leaseTimeoutMs !== 'number' || !(leaseTimeoutMs > 0)) {
      throw new HsError(ErrorCode.InvalidArgument, `TopicPublisher: leaseTimeoutMs must be a positive number of ms (or Infinity), got ${String(leaseTimeoutMs)}`);
    }
    const kind = options.memoryKind;
    if (kind !== MemoryKind.Host && kind !== MemoryKind.PinnedHost) {
      throw new HsError(ErrorCode.InvalidArgument, `TopicPublisher: memoryKind must be host or pinnedHost, got ${String(kind)} (managed memory never crosses a process)`);
    }
    const backend = options.backend;
    if (typeof backend.adoptHostMemory !== 'function') {
      return err(ErrorCode.NotSupported, `TopicPublisher: the ${backend.name} backend cannot adopt shared memory (no adoptHostMemory), so it cannot back a boundary pool`);
    }

    const dir = topicDirectory(options.runtimeDirectory);
    if (!dir.ok) return dir;
    const socketPath = topicSocketPath(dir.value, topic);
    if (!socketPath.ok) return socketPath;
    const free = await claimSocketPath(socketPath.value, topic);
    if (!free.ok) return free;
    reapStaleSegments();
    reapStaleDoorbells(dir.value);

    const slotStride = Math.ceil(slotByteSpan / DEFAULT_ALIGNMENT) * DEFAULT_ALIGNMENT;
    const totalBytes = slotStride * slotCount;
    const topicId = randomBytes(4).readUInt32LE(0) || 1;
    const segmentName = `${segmentPrefix(process.pid)}${topicId.toString(16)}.${randomBytes(4).toString('hex')}`;
    const segment = SharedSegment.create({ name: segmentName, byteSize: totalBytes });
    if (!segment.ok) return segment;
    const cleanup: (() => void)[] = [() => segment.value.close(), () => segment.value.unlink()];
    const fail = <T>(failure: Result<T>): Result<never> => {
      for (const step of cleanup.reverse()) step();
      return failure as Result<never>;
    };

    const adopted = backend.adoptHostMemory({ bytes: segment.value.bytes, kind, address: segment.value.address, label: `topic ${topic} segment` });
    if (!adopted.ok) return fail(adopted);
    cleanup.push(() => backend.free(adopted.value));
    const resource: SyncResource = {
      hostAccessible: true,
      deviceAccessible: kind === MemoryKind.PinnedHost,
      allocate: (bytes) =>
        bytes > totalBytes
          ? err(ErrorCode.OutOfMemory, `topic ${topic}: the boundary segment holds ${totalBytes} bytes, ${bytes} were requested`)
          : ok({ memory: adopted.value, byteOffset: 0, byteLength: bytes, label: `topic ${topic} slots` }),
      deallocate: () => OK_VOID,
    };
    const pool = TensorPool.materialize(backend, {
      name: `topic ${topic}`,
      memoryKind: kind,
      device: Device.cpu(),
      slotCount,
      slotByteSpan,
      maxRank,
      ...(options.dtype === undefined ? {} : { dtype: options.dtype }),
      alignment: DEFAULT_ALIGNMENT,
      producerStream: null,
      resource,
      ...(options.eventDevice === undefined ? {} : { eventDevice: options.eventDevice }),
      ...(options.maxReleaseStreams === undefined ? {} : { maxReleaseStreams: options.maxReleaseStreams }),
    });
    if (!pool.ok) return fail(pool);
    cleanup.push(() => pool.value.dispose());

    const server = createServer({ pauseOnConnect: false });
    const listening = await new Promise<Result<void>>((resolve) => {
      server.once('error', (cause) => resolve(err(ErrorCode.AlreadyExists, `topic ${topic}: cannot listen on ${socketPath.value}: ${cause.message}`, cause)));
      server.listen(socketPath.value, () => resolve(OK_VOID));
    });
    if (!listening.ok) return fail(listening);
    return ok(
      new TopicPublisher({
        backend,
        topic,
        segment: segment.value,
        memory: adopted.value,
        pool: pool.value,
        server,
        socketPath: socketPath.value,
        runtimeDirectory: dir.value,
        topicId,
        slotStride,
        memoryKind: kind === MemoryKind.PinnedHost ? WireMemoryKind.PinnedHost : WireMemoryKind.Host,
        maxRank,
        maxSubscribers,
        leaseTimeoutMs,
        livenessIntervalMs,
      }),
    );
  }

  /** The boundary pool: `allocateTensor` -> `write(null)` -> `commit()` -> `emit()`, then `publish()`. */
  get pool(): TensorPool {
    return this.#pool;
  }

  /**
   * Subscribers that attached (connected, checked and sent ATTACH). One still on its way (its ATTACH not
   * read yet) is not counted, but what is published meanwhile is held for it and sent once it attached.
   */
  get subscriberCount(): number {
    return this.#attachedCount;
  }

  /** Slots not free: lent, being written, or published and not yet returned by every subscriber. */
  get occupancy(): number {
    return this.#pool.slotCount - this.#pool.available;
  }

  /** Tensors published so far. */
  get publishedCount(): number {
    return this.#publishedTotal;
  }

  /** The socket path subscribers connect to. */
  get socketPath(): string {
    return this.#socketPath;
  }

  /**
   * Publishes a tensor just emitted from `pool`: sends its descriptor (slot, generation, layout, host-writer
   * flag) to every subscriber and takes one read lease for each (a subscriber whose ATTACH was not read yet
   * gets it right after). Returns the number of subscribers it went to; with none, the slot recycles at the
   * next `retire()`. `InvalidArgument` for a tensor of another pool or layout the wire cannot carry,
   * `InvalidState` after `close()` or for a tensor not in its published state. Never waits and never copies
   * tensor bytes.
   */
  publish(tensor: Tensor): Result<number> {
    if (this.#closed) return err(ErrorCode.InvalidState, `topic ${this.topic}: publish() after close()`);
    if (tensor.memory !== this.#memory) return err(ErrorCode.InvalidArgument, `topic ${this.topic}: "${tensor.name}" is not a tensor of this topic's pool; allocate it from publisher.pool`);
    const backing = tensor.backing;
    if (backing === null || !tensor.readOnly) return err(ErrorCode.InvalidState, `topic ${this.topic}: publish() needs the tensor returned by loan.emit()`);
    const slot = Math.floor((tensor.byteOffset - this.#pool.backing.byteOffset) / this.#slotStride);
    const slotStart = this.#pool.backing.byteOffset + slot * this.#slotStride;
    // The pool's own lease keeps the slot published while descriptors are written.
    const own = backing.acquireLease();
    if (!own.ok) return own;
    const generation = this.#generations[slot]! + 1;
    encodeDescriptor(new DataView(this.#frame.buffer, this.#frame.byteOffset, FRAME_BYTES), 0, {
      topicId: this.#topicId,
      slot,
      generation,
      fenceValue: 0,
      flags: DescriptorFlag.HostWriter,
      dtype: tensor.dtype,
      shape: tensor.shape,
      strides: tensor.strides,
      byteOffset: tensor.byteOffset - slotStart,
      byteLength: tensor.byteSize,
    });
    this.#generations[slot] = generation;
    this.#published[slot] = tensor;
    this.#publishedTotal++;
    const now = performance.now();
    let sent = 0;
    // A queued socket write keeps its buffer, so socket subscribers share one copy per publish.
    let socketFrame: Buffer | null = null;
    for (const sub of this.#subscribers) {
      if (sub.gone) continue;
      const lease = backing.acquireLease();
      if (!lease.ok) continue;
      sub.leases.hold(slot, generation, now);
      sent++;
      if (!sub.attached) {
        sub.early.push(Buffer.from(this.#frame));
        continue;
      }
      if (sub.mailbox !== null) {
        // A full descriptor ring means the subscriber released slots it never read: it is dropped below.
        if (!sub.mailbox.send(this.#frame)) this.#overflowed.push(sub);
        continue;
      }
      if (!sub.corked) {
        sub.corked = true;
        sub.socket.cork();
      }
      socketFrame ??= Buffer.from(this.#frame);
      sub.socket.write(socketFrame);
    }
    backing.releaseLease(null);
    if (this.#overflowed.length > 0) {
      const overflowed = this.#overflowed.splice(0);
      sent -= overflowed.length;
      for (const sub of overflowed) this.#violation(sub, 'its descriptor ring is full (it released slots it had not read)');
    }
    if (sent === 0) this.#pool.retire();
    else if (!this.#flushScheduled) {
      this.#flushScheduled = true;
      process.nextTick(this.#flush);
    }
    return ok(sent);
  }

  /** Recycles slots whose leases all came back; returns how many. Called after every release as well. */
  retire(): number {
    return this.#pool.retire();
  }

  /** Recycles what came back and tells `slotsReturned` listeners (only when some slot was freed). */
  #retireAndNotify(): void {
    const freed = this.#pool.retire();
    if (freed > 0 && this.listenerCount('slotsReturned') > 0) this.emit('slotsReturned', freed);
  }

  /**
   * Says goodbye to every subscriber, stops listening, reclaims all leases, disposes the pool and removes
   * the socket and the segment name. Idempotent.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#liveness);
    process.off('exit', this.#onExit);
    const bye = goodbyeFrame(this.#topicId, GoodbyeReason.Closed);
    for (const sub of [...this.#subscribers]) {
      sub.socket.end(bye);
      this.#drop(sub, null);
    }
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
    if (existsSync(this.#socketPath)) unlinkSync(this.#socketPath);
    this.#pool.dispose();
    this.#backend.free(this.#memory);
    this.#segment.unlink();
    this.#segment.close();
  }

  #accept(socket: Socket): void {
    const peer = checkedSocketPeer(socket);
    if (!peer.ok || this.#closed || this.#subscribers.size >= this.#maxSubscribers) {
      socket.destroy();
      return;
    }
    const slotCount = this.#pool.slotCount;
    // Without doorbells in the addon, or when /dev/shm refuses the mailbox, the subscriber gets the socket path.
    const mailbox = TopicMailbox.create({ directory: this.#runtimeDirectory, topic: this.topic, topicId: this.#topicId, publisherPid: process.pid, slotCount });
    const sub: Subscriber = {
      socket,
      pid: peer.value.pid,
      attached: false,
      early: [],
      mailbox: mailbox.ok ? mailbox.value : null,
      leases: new SubscriberLeases(slotCount),
      gone: false,
      corked: false,
    };
    this.#subscribers.add(sub);
    socket.setNoDelay(true);
    const reader = new FrameReader((view) => this.#onFrame(sub, view));
    socket.on('data', (chunk: Buffer) => reader.push(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      if (sub.gone) return;
      this.#drop(sub, { reason: 'closed', error: new HsError(ErrorCode.InvalidState, `topic ${this.topic}: subscriber pid ${sub.pid} closed its connection`) });
    });
    const hello = Buffer.alloc(FRAME_BYTES);
    encodeHello(new DataView(hello.buffer, hello.byteOffset, FRAME_BYTES), 0, { ...this.#hello, mailboxToken: sub.mailbox?.token ?? null });
    socket.write(hello);
  }

  /** A frame from the subscriber's socket: ATTACH first, then RELEASE or GOODBYE. */
  #onFrame(sub: Subscriber, view: DataView): boolean {
    const type = readFrameHeader(view, 0, this.#topicId);
    if (typeof type !== 'number') return this.#violation(sub, type.error.detail);
    if (type === FrameType.Goodbye) {
      sub.socket.end();
      this.#drop(sub, { reason: 'closed', error: new HsError(ErrorCode.InvalidState, `topic ${this.topic}: subscriber pid ${sub.pid} said goodbye`) });
      return false;
    }
    if (!sub.attached) {
      if (type !== FrameType.Attach) return this.#violation(sub, `the first frame of a subscriber must be Attach, got ${FrameType[type]}`);
      return this.#attach(sub, view);
    }
    if (type !== FrameType.Release) return this.#violation(sub, `an attached subscriber may only send Release and Goodbye frames, got ${FrameType[type]}`);
    return this.#release(sub, view);
  }

  /** ATTACH: the subscriber starts receiving descriptors, through its mailbox or the socket. */
  #attach(sub: Subscriber, view: DataView): boolean {
    const usesMailbox = attachUsesMailbox(view, 0);
    if (typeof usesMailbox !== 'boolean') return this.#violation(sub, usesMailbox.error.detail);
    const mailbox = sub.mailbox;
    if (usesMailbox) {
      if (mailbox === null) return this.#violation(sub, 'it attached through a mailbox it was not offered');
      const watched = mailbox.watch(
        (frame) => this.#onRingFrame(sub, frame),
        (error) => this.#violation(sub, error.detail),
      );
      if (!watched.ok) return this.#mailboxFailed(sub, watched.error);
      // The watch drained what the subscriber wrote before its ATTACH; a bad frame there dropped it.
      if (sub.gone) return false;
      mailbox.unlinkNames();
    } else if (mailbox !== null) {
      mailbox.close();
      sub.mailbox = null;
    }
    sub.attached = true;
    this.#attachedCount++;
    for (const frame of sub.early.splice(0)) {
      if (sub.mailbox === null) sub.socket.write(frame);
      else if (!sub.mailbox.send(frame)) return this.#violation(sub, 'its descriptor ring is full (it released slots it had not read)');
    }
    return true;
  }

  /** A frame from the subscriber's release ring: only RELEASE travels there. */
  #onRingFrame(sub: Subscriber, view: DataView): boolean {
    if (sub.gone) return false;
    const type = readFrameHeader(view, 0, this.#topicId);
    if (typeof type !== 'number') return this.#violation(sub, type.error.detail);
    if (type !== FrameType.Release) return this.#violation(sub, `only Release frames travel through the mailbox, got ${FrameType[type]}`);
    return this.#release(sub, view);
  }

  #release(sub: Subscriber, view: DataView): boolean {
    const slot = sub.leases.releaseFrame(view);
    if (typeof slot === 'string') return this.#violation(sub, slot);
    this.#published[slot]!.backing!.releaseLease(null);
    this.#retireAndNotify();
    return true;
  }

  #violation(sub: Subscriber, detail: string): boolean {
    const bye = goodbyeFrame(this.#topicId, GoodbyeReason.ProtocolViolation);
    sub.socket.end(bye);
    this.#drop(sub, { reason: 'protocolViolation', error: new HsError(ErrorCode.ProtocolError, `topic ${this.topic}: subscriber pid ${sub.pid} dropped: ${detail}`) });
    return false;
  }

  /** This publisher cannot serve the mailbox `sub` attached through: GOODBYE (closed) and drop it, naming why. */
  #mailboxFailed(sub: Subscriber, cause: HsError): boolean {
    sub.socket.end(goodbyeFrame(this.#topicId, GoodbyeReason.Closed));
    const error = new HsError(ErrorCode.InvalidState, `topic ${this.topic}: subscriber pid ${sub.pid} dropped: this publisher cannot serve the mailbox it attached through (${cause.detail})`, { cause });
    this.#drop(sub, { reason: 'mailboxFailed', error });
    return false;
  }

  /** Removes a subscriber and gives back every lease it held; emits `subscriberLost` when `loss` is given. */
  #drop(sub: Subscriber, loss: { reason: SubscriberLossReason; error: HsError } | null): void {
    if (sub.gone) return;
    // Releases the subscriber put in its ring before it went away (closed, died, timed out) count as
    // releases, not reclaims. One dropped for a protocol violation is not read any further, and at close()
    // (no loss) every lease is reclaimed anyway.
    if (loss !== null && loss.reason !== 'protocolViolation') sub.mailbox?.drain();
    if (sub.gone) return; // a bad frame in that drain dropped it already
    sub.gone = true;
    this.#subscribers.delete(sub);
    if (sub.attached) this.#attachedCount--;
    sub.mailbox?.close();
    const reclaimed = sub.leases.reclaimAll((slot) => this.#published[slot]!.backing!.releaseLease(null));
    if (!this.#closed) this.#retireAndNotify();
    if (loss !== null) {
      const event: SubscriberLost = { pid: sub.pid, reason: loss.reason, reclaimedLeases: reclaimed, error: loss.error };
      this.emit('subscriberLost', event);
    }
  }
}

/**
 * Makes sure `path` is free for a new publisher: a socket a live publisher answers on is `AlreadyExists`;
 * a stale one (its publisher crashed) is removed.
 */
async function claimSocketPath(path: string, topic: string): Promise<Result<void>> {
  if (!existsSync(path)) return OK_VOID;
  const live = await new Promise<boolean>((resolve) => {
    const probe = createConnection(path);
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
  if (live) return err(ErrorCode.AlreadyExists, `topic ${topic} is already published (a live publisher answers on ${path})`);
  try {
    unlinkSync(path);
  } catch (cause) {
    return err(ErrorCode.PermissionDenied, `topic ${topic}: the stale socket ${path} cannot be removed: ${(cause as Error).message}`, cause);
  }
  return OK_VOID;
}
