import { EventEmitter } from 'node:events';
import { randomBytes } from 'node:crypto';
import { TensorPool } from '@hs/pool';
import { Device, ErrorCode, MemoryKind, err, ok, unwrap, type Backend, type DeviceMemory, type MemoryRange, type Result, type Stream, type StreamMemoryOperations } from '@hs/streams';
import type { Tensor } from '@hs/tensor';
import { RegionResource } from '@hs/nanovdb-mr';
import { TopicMailbox } from './mailbox/topic-mailbox.js';
import { TopicSocket, claimTopicSocket } from './publisher-socket.js';
import { SharedSegment } from './shared-segment.js';
import { fenceCounterBytes, fenceCounterRanges } from './device/fence-counters.js';
import { SubscriberSessions, type SubscriberSession } from './subscriber-session.js';
import { holdPublisherLiveness, reapStaleDoorbells, reapStaleSegments } from './topic-endpoint.js';
import type { MailboxWait } from './mailbox/mailbox-wait.js';
import { resolveTopicPublisherOptions, type TopicPublisherOptions } from './topic-options.js';
import { encodeHello, type TopicHello } from './wire/control-frames.js';
import { encodeDescriptor } from './wire/descriptor-codec.js';
import { DescriptorFlag, FRAME_BYTES, WireMemoryKind } from './wire/frame-layout.js';

const DEFAULT_ALIGNMENT = 256;

/**
 * The exporting side of a topic: a boundary pool of `slotCount` slots in one sealed shared-memory segment
 * (a memfd with no name, passed to each subscriber with its HELLO; nobody can shrink it), and a Unix socket that subscribers (`ChannelRuntime`) connect to. The pool is an ordinary
 * `TensorPool` (`publisher.pool`) whose memory IS the segment, so a tensor written through a loan is
 * published with no copy of its bytes: `publish()` sends a 256-byte descriptor to every subscriber and
 * holds one read lease per subscriber; the slot recycles only after every subscriber released it.
 *
 * A producer that outruns slot return gets `ResourceExhausted` from `pool.allocateTensor()` at once. A
 * subscriber that closes its socket, whose process dies, that holds a tensor past `leaseTimeoutMs` or that
 * sends a malformed frame is dropped and its leases reclaimed within `livenessIntervalMs` (socket close:
 * at once), with a `subscriberLost` event; so is a connection that sends no ATTACH within `attachTimeoutMs`
 * (it holds no lease and takes a place under `maxSubscribers` only until then). Subscribers must run as
 * the same user (SO_PEERCRED).
 *
 * Readiness follows the writer: by default the host writer fills the slots (`write(null)`; descriptors
 * carry fence 0). A pinnedHost publisher created with `producerStream` is the CUDA-stream writer: loans are
 * written with `write(producerStream)`, and `publish()` enqueues the slot's generation fence on that stream
 * (a 64-bit stream memory write into the slot's counter, which lies after the slots in the segment) before
 * the descriptor goes out, carrying fence value = generation; importers wait for it on their own stream.
 *
 * Events: `subscriberLost` (a `SubscriberLost`), and `slotsReturned` (the number of slots a release or a
 * reclaim just freed), so a producer that got `ResourceExhausted` can resume without polling.
 *
 * Spec: "Crossing process boundaries: the generation fence", "Pinned-host readiness follows the writer",
 * warning "Returning slots across processes can limit throughput", "Exhaustion fails fast".
 *
 * @example
 * ```ts
 * import { once } from 'node:events';
 * import { mkdtempSync, rmSync } from 'node:fs';
 * import { tmpdir } from 'node:os';
 * import { join } from 'node:path';
 * import { HostBackend, MemoryKind, unwrap } from '@hs/streams';
 * import { DType } from '@hs/tensor';
 * import { ChannelRuntime, TopicPublisher, ipcAvailability } from '@hs/ipc';
 *
 * const ipc = ipcAvailability();
 * if (!ipc.available) console.log(ipc.reason);
 * else {
 *   const runtimeDirectory = mkdtempSync(join(tmpdir(), 'hs-topics-')); // omit it for the per-user default
 *   const backend = new HostBackend();
 *   const pub = await TopicPublisher.create({ backend, topic: 'camera', memoryKind: MemoryKind.Host, slotCount: 8, slotByteSpan: 480 * 640, maxRank: 2, runtimeDirectory });
 *   const channel = await ChannelRuntime.connect({ backend, topic: 'camera', runtimeDirectory }); // another process, usually
 *   while (pub.subscriberCount === 0) await new Promise((resolve) => setTimeout(resolve, 1)); // its ATTACH was read
 *
 *   const loan = unwrap(pub.pool.allocateTensor({ shape: [480, 640], dtype: DType.uint8 })); // ResourceExhausted when slots are out
 *   const guard = unwrap(loan.write(null)); // the host writer
 *   unwrap(guard.tensor.mutableHostView()).fill(7); // straight into the shared slot, no copy
 *   unwrap(guard.commit());
 *   const sent = unwrap(pub.publish(unwrap(loan.emit()))); // a 256-byte descriptor to each subscriber
 *
 *   const lease = await channel.receive();
 *   unwrap(lease.release());
 *   const [freed] = await once(pub, 'slotsReturned'); // every subscriber released it
 *   console.log(`published to ${sent} subscriber(s); ${freed} slot(s) back, ${pub.occupancy} in use`);
 *   channel.close();
 *   await pub.close();
 *   rmSync(runtimeDirectory, { recursive: true, force: true });
 * }
 * ```
 */
export class TopicPublisher extends EventEmitter {
  readonly #backend: Backend;
  readonly #segment: SharedSegment;
  readonly #memory: DeviceMemory;
  #pool: TensorPool;
  /** Materializes a boundary pool over the segment with the given producer stream (see `bindProducerStream`). */
  readonly #makePool: (producerStream: Stream | null) => Result<TensorPool>;
  /** The listening socket, with the exit hook that removes the names of the topic. */
  readonly #socket: TopicSocket;
  readonly #topicId: number;
  readonly #slotStride: number;
  /** The CUDA-stream writer's stream (pinnedHost), or `null` for the host writer. */
  #producerStream: Stream | null;
  /** The stream memory operations that record its fences (with `#producerStream`). */
  #memoryOps: StreamMemoryOperations | null;
  /** Per slot, the 8-byte range of its fence counter in the segment (pinnedHost; empty for host topics). */
  readonly #counters: readonly MemoryRange[];
  /** Accept, HELLO, ATTACH, releases, liveness and drops of the subscribers; the mailbox each is offered. */
  readonly #sessions: SubscriberSessions;
  /** HELLO of this topic without a mailbox; each subscriber's HELLO adds its mailbox token. */
  readonly #hello: TopicHello;
  /** Where each publish encodes its descriptor once (mailboxes copy it; socket writes copy it once). */
  readonly #frame = Buffer.alloc(FRAME_BYTES);
  /** Subscribers whose descriptor ring was full during the current publish (dropped once it is done). */
  readonly #overflowed: SubscriberSession[] = [];
  #closed = false;
  #publishedTotal = 0;
  #flushScheduled = false;
  /**
   * Uncorks every subscriber socket once per turn: descriptors published in one synchronous burst leave in
   * one write, and a single publish leaves as soon as the current operation returns.
   */
  readonly #flush = (): void => {
    this.#flushScheduled = false;
    for (const sub of this.#sessions.subscribers) {
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
    makePool: (producerStream: Stream | null) => Result<TensorPool>;
    socket: TopicSocket;
    runtimeDirectory: string;
    topicId: number;
    slotStride: number;
    memoryKind: WireMemoryKind;
    maxRank: number;
    maxSubscribers: number;
    attachTimeoutMs: number;
    leaseTimeoutMs: number;
    livenessIntervalMs: number;
    wait: MailboxWait;
    producerStream: Stream | null;
    memoryOps: StreamMemoryOperations | null;
    counters: readonly MemoryRange[];
  }) {
    super();
    this.#producerStream = init.producerStream;
    this.#memoryOps = init.memoryOps;
    this.#counters = init.counters;
    this.topic = init.topic;
    this.#backend = init.backend;
    this.#segment = init.segment;
    this.#memory = init.memory;
    this.#pool = init.pool;
    this.#makePool = init.makePool;
    this.#socket = init.socket;
    this.#topicId = init.topicId;
    this.#slotStride = init.slotStride;
    this.#hello = {
      topicId: init.topicId,
      slotCount: init.pool.slotCount,
      slotStride: init.slotStride,
      segmentBytes: init.segment.byteSize,
      memoryKind: init.memoryKind,
      maxRank: init.maxRank,
      producerPid: process.pid,
      mailboxToken: null,
    };
    const { topic, topicId } = init;
    this.#sessions = new SubscriberSessions({
      topic,
      topicId,
      maxSubscribers: init.maxSubscribers,
      attachTimeoutMs: init.attachTimeoutMs,
      leaseTimeoutMs: init.leaseTimeoutMs,
      livenessIntervalMs: init.livenessIntervalMs,
      wait: init.wait,
      // Without doorbells in the addon, or when /dev/shm refuses the mailbox, the subscriber gets the socket path.
      offerMailbox: (slotCount) => {
        const mailbox = TopicMailbox.create({ topic, topicId, slotCount });
        return mailbox.ok ? mailbox.value : null;
      },
      // close() reclaims every lease and disposes the pool: nothing to recycle or tell then.
      onLeasesReturned: (closing) => {
        if (!closing) this.#retireAndNotify();
      },
      onLost: (lost) => this.emit('subscriberLost', lost),
    });
    this.#sessions.open({
      slotCount: init.pool.slotCount,
      hello: (mailbox) => {
        const hello = Buffer.alloc(FRAME_BYTES);
        encodeHello(new DataView(hello.buffer, hello.byteOffset, FRAME_BYTES), 0, { ...this.#hello, mailboxToken: mailbox?.token ?? null });
        return hello;
      },
      // Wire version 2: the data segment (and the mailbox) travel with HELLO as sealed descriptors.
      // and, with a mailbox, its segment and the subscriber's doorbell ends (nothing of a mailbox has a name).
      descriptors: (mailbox) => [this.#segment.descriptor, ...(mailbox?.descriptors ?? [])],
    });
    // The exit hook removes the socket path, the topic's only name (the OS drops mappings and descriptors).
    this.#socket.serve((socket) => this.#sessions.accept(socket));
  }

  /** The topic name. */
  readonly topic: string;

  /**
   * Creates the segment, the boundary pool over it and the listening socket.
   * @returns the publisher, listening.
   * @throws HsError (the promise rejects) `InvalidArgument` for malformed options (topic name, counts,
   *   memory kind); `NotSupported` without the IPC addon or when `backend` cannot adopt host memory;
   *   `AlreadyExists` when a live publisher already serves the topic; `PermissionDenied` for an unsafe
   *   runtime directory; `OutOfMemory` when /dev/shm cannot hold the pool. Nothing is left behind.
   */
  static create(options: TopicPublisherOptions): Promise<TopicPublisher> {
    return TopicPublisher.#create(options).then((created) => unwrap(created));
  }

  static async #create(options: TopicPublisherOptions): Promise<Result<TopicPublisher>> {
    const { topic, slotCount, slotByteSpan, maxRank, rank, maxSubscribers, livenessIntervalMs, attachTimeoutMs, leaseTimeoutMs, memoryKind: kind, wait } = resolveTopicPublisherOptions(options);
    const backend = options.backend;
    if (typeof backend.adoptHostMemory !== 'function') {
      return err(ErrorCode.NotSupported, `TopicPublisher: the ${backend.name} backend cannot adopt shared memory (no adoptHostMemory), so it cannot back a boundary pool`);
    }
    const producerStream = options.producerStream ?? null;
    const memoryOps = producerStream === null ? null : (backend.streamMemoryOps ?? null);
    if (producerStream !== null && kind !== MemoryKind.PinnedHost) {
      return err(ErrorCode.InvalidArgument, `TopicPublisher: topic ${topic} is ${kind} memory, which only the host writer fills; a producerStream (the CUDA-stream writer) needs pinnedHost memory`);
    }
    if (producerStream !== null && memoryOps === null) {
      return err(ErrorCode.NotSupported, `TopicPublisher: the ${backend.name} backend has no stream memory operations, so a CUDA-stream writer cannot record generation fences on topic ${topic}; use the host writer (producerStream null)`);
    }

    const claimed = await claimTopicSocket(options.runtimeDirectory, topic);
    if (!claimed.ok) return claimed;
    const { directory, socketPath } = claimed.value;
    // The liveness lock before the first segment: reapers of any PID namespace then see this process alive.
    const liveness = holdPublisherLiveness();
    if (!liveness.ok) return liveness;
    reapStaleSegments();
    reapStaleDoorbells(directory);

    const slotStride = Math.ceil(slotByteSpan / DEFAULT_ALIGNMENT) * DEFAULT_ALIGNMENT;
    const totalBytes = slotStride * slotCount;
    // A pinnedHost segment holds one generation-fence counter per slot after the slots (zero from the
    // start: a new segment is zero-filled), whichever writer fills it; a host segment holds the slots only.
    const segmentBytes = totalBytes + (kind === MemoryKind.PinnedHost ? fenceCounterBytes(slotCount) : 0);
    const topicId = randomBytes(4).readUInt32LE(0) || 1;
    // A sealed memfd, no /dev/shm name (wire version 2): subscribers receive it with HELLO, and nobody can
    // shrink it under this process's mapping.
    const segment = SharedSegment.createSealed({ label: `hs.${topic}`, byteSize: segmentBytes });
    if (!segment.ok) return segment;
    const cleanup: (() => void)[] = [() => segment.value.close()];
    const fail = <T>(failure: Result<T>): Result<never> => {
      for (const step of cleanup.reverse()) step();
      return failure as Result<never>;
    };

    const adopted = backend.adoptHostMemory({ bytes: segment.value.bytes, kind, address: segment.value.address, label: `topic ${topic} segment` });
    if (!adopted.ok) return fail(adopted);
    cleanup.push(() => backend.free(adopted.value));
    // The pool takes the whole segment as its one backing block: slot i at byte i * slotStride (the wire's layout).
    const resource = new RegionResource({ memory: adopted.value, byteOffset: 0, byteLength: totalBytes, label: `topic ${topic} slots` }, { label: `topic ${topic} slots` });
    const makePool = (writer: Stream | null): Result<TensorPool> => TensorPool.materialize(backend, {
      name: `topic ${topic}`,
      memoryKind: kind,
      device: Device.cpu(),
      slotCount,
      slotByteSpan,
      maxRank,
      ...(rank === null ? {} : { rank }),
      ...(options.dtype === undefined ? {} : { dtype: options.dtype }),
      alignment: DEFAULT_ALIGNMENT,
      producerStream: writer,
      resource,
      ...(options.eventDevice === undefined ? {} : { eventDevice: options.eventDevice }),
      ...(options.maxReleaseStreams === undefined ? {} : { maxReleaseStreams: options.maxReleaseStreams }),
    });
    const pool = makePool(producerStream);
    if (!pool.ok) return fail(pool);
    cleanup.push(() => pool.value.dispose());

    const socket = await TopicSocket.listen(socketPath, topic);
    if (!socket.ok) return fail(socket);
    return ok(
      new TopicPublisher({
        backend,
        topic,
        segment: segment.value,
        memory: adopted.value,
        pool: pool.value,
        makePool,
        socket: socket.value,
        runtimeDirectory: directory,
        topicId,
        slotStride,
        memoryKind: kind === MemoryKind.PinnedHost ? WireMemoryKind.PinnedHost : WireMemoryKind.Host,
        maxRank,
        maxSubscribers,
        attachTimeoutMs,
        leaseTimeoutMs,
        livenessIntervalMs,
        wait,
        producerStream,
        memoryOps,
        counters: kind === MemoryKind.PinnedHost ? fenceCounterRanges(adopted.value, slotCount, slotStride) : [],
      }),
    );
  }

  /**
   * The boundary pool: `allocateTensor` -> `write(null)` (host writer) or `write(producerStream)` (the
   * CUDA-stream writer) -> `commit()` -> `emit()`, then `publish()`.
   */
  get pool(): TensorPool {
    return this.#pool;
  }

  /**
   * Makes this pinnedHost publisher the CUDA-stream writer after `create()` (a graph session lends it once
   * the producer's planned stream exists): the boundary pool is materialized again over the same segment
   * with `stream` as its producer stream, so `pool` changes; publishes then record generation fences on
   * `stream`. Only before the first `allocateTensor()`: `InvalidState` once a slot was lent or published,
   * or after `close()`; `InvalidArgument` for a host topic or when a producer stream is already bound;
   * `NotSupported` without `backend.streamMemoryOps`; the pool's errors (a stream of another device than
   * `eventDevice`). On failure the host writer's pool is made again.
   */
  bindProducerStream(stream: Stream): Result<void> {
    if (this.#closed) return err(ErrorCode.InvalidState, `topic ${this.topic}: bindProducerStream() after close()`);
    if (this.#counters.length === 0) return err(ErrorCode.InvalidArgument, `topic ${this.topic} is host memory, which only the host writer fills`);
    if (this.#producerStream !== null) return err(ErrorCode.InvalidArgument, `topic ${this.topic} is already written on stream "${this.#producerStream.label}"`);
    if (this.#publishedTotal > 0 || this.#pool.available !== this.#pool.slotCount) {
      return err(ErrorCode.InvalidState, `topic ${this.topic}: bindProducerStream() after slots were lent or published; bind the writer before the first allocateTensor()`);
    }
    const ops = this.#backend.streamMemoryOps;
    if (ops === undefined) return err(ErrorCode.NotSupported, `topic ${this.topic}: the ${this.#backend.name} backend has no stream memory operations, so a CUDA-stream writer cannot record generation fences`);
    // The segment's region backs one pool at a time: the host-writer pool goes first.
    this.#pool.dispose();
    const pool = this.#makePool(stream);
    if (!pool.ok) {
      const restored = this.#makePool(null);
      if (restored.ok) this.#pool = restored.value;
      return pool;
    }
    this.#pool = pool.value;
    this.#producerStream = stream;
    this.#memoryOps = ops;
    return { ok: true, value: undefined };
  }

  /**
   * Subscribers that attached (connected, checked and sent ATTACH, and this publisher read it). One still
   * on its way is not counted and is sent nothing: it receives what is published after its ATTACH was read
   * (wait for this count before publishing what a new subscriber must see). A connection that sends no
   * ATTACH within `attachTimeoutMs` is dropped.
   */
  get subscriberCount(): number {
    return this.#sessions.attachedCount;
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
    return this.#socket.socketPath;
  }

  /**
   * Publishes a tensor just emitted from `pool`: sends its descriptor (slot, generation, layout, host-writer
   * flag) to every attached subscriber and takes one read lease for each (a connection whose ATTACH was not
   * read yet gets nothing and holds nothing). Returns the number of subscribers it went to; with none, the slot recycles at the
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
    const generation = this.#sessions.nextGeneration(slot);
    const producer = this.#producerStream;
    if (producer !== null) {
      // The generation fence, on the producer stream after the writes its commit covered: the slot's
      // counter in the segment becomes `generation` once they completed. Importers wait for it on their stream.
      const fenced = (this.#memoryOps as StreamMemoryOperations).writeValue64(producer, this.#counters[slot] as MemoryRange, BigInt(generation));
      if (!fenced.ok) {
        backing.releaseLease(null);
        return err(fenced.error.code, `topic ${this.topic}: generation fence write (slot ${slot}, generation ${generation}): ${fenced.error.message}`, fenced.error);
      }
    }
    encodeDescriptor(new DataView(this.#frame.buffer, this.#frame.byteOffset, FRAME_BYTES), 0, {
      topicId: this.#topicId,
      slot,
      generation,
      fenceValue: producer === null ? 0 : generation,
      flags: producer === null ? DescriptorFlag.HostWriter : DescriptorFlag.DeviceFence,
      dtype: tensor.dtype,
      shape: tensor.shape,
      strides: tensor.strides,
      byteOffset: tensor.byteOffset - slotStart,
      byteLength: tensor.byteSize,
    });
    this.#sessions.recordPublished(slot, generation, tensor);
    this.#publishedTotal++;
    const now = performance.now();
    let sent = 0;
    // A queued socket write keeps its buffer, so socket subscribers share one copy per publish.
    let socketFrame: Buffer | null = null;
    for (const sub of this.#sessions.subscribers) {
      if (!this.#sessions.lend(sub, backing, slot, generation, now)) continue;
      sent++;
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
      for (const sub of overflowed) this.#sessions.violation(sub, 'its descriptor ring is full (it released slots it had not read)');
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
   * Says goodbye to every subscriber, stops listening, reclaims all leases, disposes the pool, unmaps the
   * segment and removes the socket. Idempotent.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#sessions.close();
    await this.#socket.close();
    this.#pool.dispose();
    this.#backend.free(this.#memory);
    this.#segment.close();
  }
}
