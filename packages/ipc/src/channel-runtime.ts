// Over 500 lines: the standalone subscriber client; connect, receive, release, the lease reclaim and close share one connection state, and its examples run as written.
import type { Socket } from 'node:net';
import { isInsideCompute } from '@hs/runtime';
import { ErrorCode, HsError, MemoryKind, err, ok, unwrap, type Backend, type DeviceMemory, type Result } from '@hs/streams';
import { ChannelTensor } from './channel-tensor.js';
import { FrameReader } from './frame-reader.js';
import { closeDescriptors, hostHelloDescriptors, receiveHello } from './hello-connection.js';
import { TopicMailbox } from './mailbox/topic-mailbox.js';
import { SharedSegment, subscriberSegmentAccess } from './shared-segment.js';
import { checkHelloPid, checkedSocketPeer } from './socket-peer.js';
import { checkTopicName, topicDirectory, topicSocketPath } from './topic-endpoint.js';
import { TopicLease } from './topic-lease.js';
import { attachFrame, decodeHello, encodeRelease, goodbyeFrame, goodbyeReason, publisherGoodbyeText, type TopicHello } from './wire/control-frames.js';
import { DescriptorDecoder } from './wire/descriptor-codec.js';
import { fenceCounterOffset, segmentHasFenceCounters } from './device/fence-counters.js';
import { readFrameHeader } from './wire/frame-header.js';
import { DescriptorFlag, FRAME_BYTES, FrameType, GoodbyeReason, Offset, WireMemoryKind } from './wire/frame-layout.js';
import { resolveMailboxWait, type MailboxWait } from './mailbox/mailbox-wait.js';
import { TensorDescriptor, isPackedRowMajor } from './wire/tensor-descriptor.js';

/** Options of `ChannelRuntime.connect`. */
export interface ChannelRuntimeOptions {
  /** Backend the received tensors belong to; it must implement `adoptHostMemory`. */
  readonly backend: Backend;
  /** Topic name, as the publisher gave it. */
  readonly topic: string;
  /** How long to wait for the publisher's HELLO, in ms; default 2000. */
  readonly connectTimeoutMs?: number;
  /** Directory of the topic socket; default the per-user runtime directory. */
  readonly runtimeDirectory?: string;
  /**
   * How the channel waits for descriptors once its mailbox ring is empty: `{ kind: 'park' }` (default,
   * sleep on the doorbell) or `{ kind: 'spin', spinMicroseconds }` (poll the ring once per event-loop turn
   * for that long first: lower latency for one busy core). See `MailboxWait`.
   */
  readonly wait?: MailboxWait;
}

/** Milliseconds between checks of a CUDA-written slot's fence counter while one is awaited. */
const FENCE_POLL_MS = 1;

/** A `receive()` waiting for the next descriptor or the end of the channel. */
interface Pending {
  readonly resolve: (lease: TopicLease) => void;
  readonly reject: (error: HsError) => void;
}

/**
 * The standalone client of a topic, for processes outside any graph: connects to a publisher's socket
 * (checking that it runs as this user and is the process that sent the HELLO), maps its boundary segment
 * (a sealed memfd received with the HELLO; one that is not sealed against shrinking is refused), and hands out each published tensor as a read-only `TopicLease` whose tensor IS the shared slot
 * (no copy). Every descriptor is validated before use; a malformed one ends the channel with
 * `ProtocolError` and nothing it names is exposed. When the publisher closes the topic (GOODBYE closed),
 * tensors already received are still handed out, then `receive()` rejects with `InvalidState`. When it
 * reclaims this subscriber's slots instead (GOODBYE lease timeout or protocol violation, a connection that
 * drops without a GOODBYE, or a frame this side rejected), every lease held or queued is reclaimed at once:
 * its tensor returns `InvalidState` naming the topic, the slot and why, and `release()` is a no-op (see
 * `TopicLease`; views taken before are not protected). `close()` stales every lease and unmaps.
 *
 * Inside an operator's `compute()` it refuses to connect (`InvalidState`): graphs talk through ports.
 * Spec: "Crossing process boundaries: the generation fence", warning "One graph, one vocabulary".
 *
 * @example
 * ```ts
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
 *   const runtimeDirectory = mkdtempSync(join(tmpdir(), 'hs-topics-'));
 *   const backend = new HostBackend();
 *   // the producer, another process as a rule: three frames, then the end of the topic
 *   const pub = await TopicPublisher.create({ backend, topic: 'camera', memoryKind: MemoryKind.Host, slotCount: 4, slotByteSpan: 64, maxRank: 1, runtimeDirectory });
 *   const channel = await ChannelRuntime.connect({ backend, topic: 'camera', runtimeDirectory });
 *   while (pub.subscriberCount === 0) await new Promise((resolve) => setTimeout(resolve, 1));
 *   for (let frame = 1; frame <= 3; frame++) {
 *     const loan = unwrap(pub.pool.allocateTensor({ shape: [64], dtype: DType.uint8 }));
 *     const guard = unwrap(loan.write(null));
 *     unwrap(guard.tensor.mutableHostView()).fill(frame);
 *     unwrap(guard.commit());
 *     unwrap(pub.publish(unwrap(loan.emit())));
 *   }
 *   await pub.close();
 *
 *   const firstBytes: number[] = [];
 *   try {
 *     for (;;) {
 *       const lease = await channel.receive(); // rejects once the channel ended
 *       firstBytes.push(unwrap(lease.tensor.hostView())[0] ?? -1); // zero copy, read-only by contract
 *       unwrap(lease.release());
 *     }
 *   } catch (error) {
 *     if (error !== channel.closedError) throw error; // the publisher went away: the end of the topic
 *   } finally {
 *     channel.close();
 *     rmSync(runtimeDirectory, { recursive: true, force: true });
 *   }
 *   console.log(`received frames ${firstBytes.join(', ')}, then ${channel.closedError?.message}`);
 * }
 * ```
 */
export class ChannelRuntime {
  readonly #backend: Backend;
  readonly #socket: Socket;
  readonly #segment: SharedSegment;
  readonly #memory: DeviceMemory;
  readonly #hello: TopicHello;
  readonly #decoder: DescriptorDecoder;
  /** The publisher's mailbox when this channel attached through it; else descriptors come over the socket. */
  readonly #mailbox: TopicMailbox | null;
  /** RELEASE frames are encoded here (a mailbox copies it into its ring; the socket path copies it once). */
  readonly #releaseFrame = Buffer.alloc(FRAME_BYTES);
  readonly #releaseView = new DataView(this.#releaseFrame.buffer, this.#releaseFrame.byteOffset, FRAME_BYTES);
  readonly #descriptor = new TensorDescriptor();
  readonly #leases: TopicLease[];
  readonly #tensors: ChannelTensor[];
  /** Received leases not yet handed out (a ring of slot indices; at most slotCount). */
  readonly #queue: Int32Array;
  #head = 0;
  /**
   * Received slots whose bytes are not complete yet (a CUDA-stream writer's generation fence not reached),
   * in arrival order, with the fence value each waits for (0: none, queued behind an earlier fenced one).
   */
  readonly #fenceQueue: Int32Array;
  readonly #fenceValues: Float64Array;
  #fenceHead = 0;
  #fenceCount = 0;
  /** The one timer that re-checks the counters while slots wait (made once, then `refresh()`ed). */
  #fenceTimer: NodeJS.Timeout | null = null;
  #fenceArmed = false;
  /** The segment's bytes, for reading fence counters. */
  readonly #counters: DataView;
  readonly #onFenceTimer = (): void => {
    this.#fenceArmed = false;
    this.#deliverFenced();
  };
  #count = 0;
  #pending: Pending | null = null;
  #closedError: HsError | null = null;
  #received = 0;
  #corked = false;
  /** Uncorks once per turn, so releases made in one synchronous burst leave in one write. */
  readonly #flush = (): void => {
    this.#corked = false;
    this.#socket.uncork();
  };

  private constructor(topic: string, backend: Backend, socket: Socket, segment: SharedSegment, memory: DeviceMemory, hello: TopicHello, mailbox: TopicMailbox | null) {
    this.topic = topic;
    this.#backend = backend;
    this.#socket = socket;
    this.#segment = segment;
    this.#memory = memory;
    this.#hello = hello;
    this.#decoder = new DescriptorDecoder({
      ...hello,
      fenceCounters: segmentHasFenceCounters(hello.memoryKind === WireMemoryKind.PinnedHost, hello.slotCount, hello.slotStride, hello.segmentBytes),
    });
    this.#mailbox = mailbox;
    this.#queue = new Int32Array(hello.slotCount);
    this.#fenceQueue = new Int32Array(hello.slotCount);
    this.#fenceValues = new Float64Array(hello.slotCount);
    this.#counters = new DataView(segment.bytes.buffer, segment.bytes.byteOffset, segment.bytes.byteLength);
    this.#tensors = [];
    this.#leases = [];
    for (let slot = 0; slot < hello.slotCount; slot++) {
      const tensor = new ChannelTensor({ backend, memory, backing: null, name: `topic ${topic} slot ${slot}` });
      this.#tensors.push(tensor);
      this.#leases.push(new TopicLease(this.#releaseSlot, slot, tensor));
    }
    // Frames after HELLO: Node's socket reads them (the addon read exactly the HELLO's bytes).
    const reader = new FrameReader((view) => this.#onFrame(view));
    socket.on('data', (chunk: Buffer) => reader.push(chunk));
    socket.on('close', () => {
      // A GOODBYE, close() or a rejected frame ended the channel already; else the connection dropped, so
      // whatever this channel holds is reclaimed (a publisher that dropped it may rewrite the slots).
      if (this.#closedError !== null) return;
      this.#reclaim(`the connection to the publisher (pid ${hello.producerPid}) dropped without a GOODBYE (the publisher is gone or dropped this subscriber)`);
      this.#shutdown(new HsError(ErrorCode.InvalidState, `topic ${topic}: the publisher (pid ${hello.producerPid}) went away`), false);
    });
  }

  /** The topic name. */
  readonly topic: string;

  /**
   * Connects to `topic`'s publisher and maps its boundary segment.
   * @returns the connected channel.
   * @throws HsError (the promise rejects) `InvalidArgument` for a malformed topic name, timeout or `wait`;
   *   `InvalidState` when called inside an operator's compute(); `NotFound` when nobody publishes the topic
   *   or no HELLO came within `connectTimeoutMs`; `PermissionDenied` for a peer of another user or a
   *   segment it does not own; `ProtocolError` for a malformed HELLO, a pid mismatch, a peer of another
   *   wire version, a HELLO without its segment descriptors or a segment not sealed against shrinking; `NotSupported`
   *   without the addon, for a device boundary or a backend without `adoptHostMemory`. Nothing stays open.
   */
  static connect(options: ChannelRuntimeOptions): Promise<ChannelRuntime> {
    return ChannelRuntime.#open(options).then((opened) => unwrap(opened));
  }

  static async #open(options: ChannelRuntimeOptions): Promise<Result<ChannelRuntime>> {
    if (isInsideCompute()) {
      return err(ErrorCode.InvalidState, 'ChannelRuntime is for standalone processes; inside an operator use ports and addFlow() (one graph, one vocabulary)');
    }
    const topic = checkTopicName(options.topic, 'ChannelRuntime.connect');
    const timeoutMs = options.connectTimeoutMs ?? 2000;
    if (typeof timeoutMs !== 'number' || !(timeoutMs > 0)) throw new HsError(ErrorCode.InvalidArgument, `ChannelRuntime.connect: connectTimeoutMs must be a positive number, got ${String(timeoutMs)}`);
    const wait = resolveMailboxWait(options.wait, 'ChannelRuntime.connect');
    if (!wait.ok) return wait;
    const backend = options.backend;
    if (typeof backend.adoptHostMemory !== 'function') {
      return err(ErrorCode.NotSupported, `ChannelRuntime: the ${backend.name} backend cannot adopt shared memory (no adoptHostMemory)`);
    }
    const dir = topicDirectory(options.runtimeDirectory);
    if (!dir.ok) return dir;
    const path = topicSocketPath(dir.value, topic);
    if (!path.ok) return path;

    // The addon connects and receives HELLO with its descriptors (Node's sockets drop SCM_RIGHTS), off the JS thread.
    const received = await receiveHello(path.value, topic, timeoutMs);
    if (!received.ok) return received;
    const { socket, frame, fds } = received.value;
    socket.setNoDelay(true);
    socket.on('error', () => undefined);
    const fail = (failure: Result<never>): Result<never> => {
      closeDescriptors(fds);
      socket.destroy();
      return failure;
    };
    const hello = decodeHello(new DataView(frame.buffer, frame.byteOffset, FRAME_BYTES), 0);
    if (!hello.ok) return fail(hello);
    const peer = checkedSocketPeer(socket);
    if (!peer.ok) return fail(peer);
    const h = hello.value;
    const samePublisher = checkHelloPid(topic, h.producerPid, peer.value.pid);
    if (!samePublisher.ok) return fail(samePublisher);
    const expected = hostHelloDescriptors(topic, fds, h.mailboxToken !== null);
    if (!expected.ok) return fail(expected);
    const kind = h.memoryKind === WireMemoryKind.PinnedHost ? MemoryKind.PinnedHost : MemoryKind.Host;
    const segment = SharedSegment.fromDescriptor({ fd: expected.value.segment, byteSize: h.segmentBytes, access: subscriberSegmentAccess(kind) });
    if (!segment.ok) return fail(segment);
    const memory = backend.adoptHostMemory({ bytes: segment.value.bytes, kind, address: segment.value.address, label: `topic ${topic} segment` });
    if (!memory.ok) {
      segment.value.close();
      return fail(memory);
    }
    // The mailbox the publisher offered, when this addon has doorbells; a mailbox that exists but fails
    // its checks (a doorbell that is no pipe end, an unsealed segment, a wrong header) is an error, not a reason to fall back.
    let mailbox: TopicMailbox | null = null;
    const offered = expected.value.mailbox;
    if (h.mailboxToken !== null && offered !== null) {
      const opened = TopicMailbox.open({ topic, topicId: h.topicId, slotCount: h.slotCount }, h.mailboxToken, offered);
      if (opened.ok) mailbox = opened.value;
      else if (opened.error.code !== ErrorCode.NotSupported) {
        backend.free(memory.value);
        segment.value.close();
        return fail(opened);
      }
    }
    // Both are mapped: the descriptors are not needed any more.
    closeDescriptors(fds);
    const channel = new ChannelRuntime(topic, backend, socket, segment.value, memory.value, h, mailbox);
    const attach = attachFrame(h.topicId, mailbox !== null);
    socket.write(attach);
    if (mailbox !== null) {
      const watched = mailbox.watch(
        (view) => channel.#onRingFrame(view),
        (error) => channel.#reject(error),
        wait.value,
      );
      if (!watched.ok) {
        channel.close();
        return watched;
      }
    }
    return ok(channel);
  }

  /** Slots of the publisher's boundary pool. */
  get slotCount(): number {
    return this.#hello.slotCount;
  }

  /** The publisher's process id. */
  get producerPid(): number {
    return this.#hello.producerPid;
  }

  /** Tensors received so far. */
  get receivedCount(): number {
    return this.#received;
  }

  /** Leases handed out and not yet released. */
  get heldCount(): number {
    let n = 0;
    for (const lease of this.#leases) if (lease.held) n++;
    return n - this.#count - this.#fenceCount;
  }

  /** Why the channel closed, or null while it is open. */
  get closedError(): HsError | null {
    return this.#closedError;
  }

  /**
   * The next received tensor without waiting: a lease, `null` when none arrived yet, or the close error
   * (`InvalidState` when the publisher went away, `ProtocolError` after a rejected frame).
   */
  tryReceive(): Result<TopicLease | null> {
    if (this.#count > 0) return ok(this.#dequeue());
    if (this.#closedError !== null) return { ok: false, error: this.#closedError };
    return ok(null);
  }

  /**
   * Waits for the next received tensor. One receive may be pending at a time.
   * @returns the next lease (tensors already received are handed out before the end is reported).
   * @throws HsError (the promise rejects) with `closedError` once the channel ended: `InvalidState` when
   *   the publisher went away or `close()` was called, `ProtocolError` after a rejected frame,
   *   `InvalidState` for a second concurrent call. A pinnedHost tensor its producer wrote on a CUDA stream
   *   (a descriptor with a generation fence) is handed out once the slot's fence counter in the segment
   *   reached the fence (checked every millisecond on a timer; the JS thread never blocks), so its bytes
   *   are complete and its tensor is host-complete.
   */
  receive(): Promise<TopicLease> {
    if (this.#count > 0) return Promise.resolve(this.#dequeue());
    if (this.#closedError !== null) return Promise.reject(this.#closedError);
    if (this.#pending !== null) return Promise.reject(new HsError(ErrorCode.InvalidState, `topic ${this.topic}: a receive() is already pending; await it first`));
    return new Promise((resolve, reject) => {
      this.#pending = { resolve, reject };
    });
  }

  /** Says goodbye, unmaps the segment; outstanding leases turn stale (their tensors report InvalidState). Idempotent. */
  close(): void {
    if (this.#segment.closed) return;
    const bye = goodbyeFrame(this.#hello.topicId, GoodbyeReason.Closed);
    if (!this.#socket.destroyed) this.#socket.end(bye);
    this.#shutdown(new HsError(ErrorCode.InvalidState, `topic ${this.topic}: the channel was closed`), true);
  }

  /** For `TopicLease.release`: stales the tensor and sends RELEASE. */
  readonly #releaseSlot = (slot: number, generation: number): void => {
    this.#tensors[slot]!.retire();
    if (this.#socket.destroyed || this.#socket.writableEnded) return;
    encodeRelease(this.#releaseView, 0, this.#hello.topicId, slot, generation);
    const mailbox = this.#mailbox;
    if (mailbox !== null) {
      // Room for every held slot exists by construction; a full ring means the publisher stopped reading.
      // (After the channel closed the mailbox is closed too and the release has nowhere to go.)
      if (!mailbox.send(this.#releaseFrame) && this.#closedError === null) this.#reject(new HsError(ErrorCode.ProtocolError, 'the release ring is full: the publisher stopped reading it'));
      return;
    }
    const frame = Buffer.from(this.#releaseFrame);
    if (!this.#corked) {
      this.#corked = true;
      this.#socket.cork();
      process.nextTick(this.#flush);
    }
    this.#socket.write(frame);
  };

  #dequeue(): TopicLease {
    const slot = this.#queue[this.#head]!;
    this.#head = (this.#head + 1) % this.#queue.length;
    this.#count--;
    return this.#leases[slot]!;
  }

  /** A frame from the mailbox's descriptor ring: only DESCRIPTOR travels there. */
  #onRingFrame(view: DataView): boolean {
    if (this.#closedError !== null) return false;
    if (view.getUint16(Offset.type, true) !== FrameType.Descriptor) return this.#reject(new HsError(ErrorCode.ProtocolError, 'only Descriptor frames travel through the mailbox'));
    return this.#onFrame(view);
  }

  #onFrame(view: DataView): boolean {
    if (this.#closedError !== null) return false;
    const type = readFrameHeader(view, 0, this.#hello.topicId);
    if (typeof type !== 'number') return this.#reject(type.error);
    if (type === FrameType.Goodbye) {
      const reason = goodbyeReason(view, 0);
      const why = `the publisher (pid ${this.#hello.producerPid}) ${publisherGoodbyeText(reason)}`;
      // Descriptors sent before a closing GOODBYE are still handed out; after a reclaim none is readable.
      if (reason === GoodbyeReason.Closed) this.#mailbox?.drain();
      else this.#reclaim(why);
      this.#shutdown(new HsError(ErrorCode.InvalidState, `topic ${this.topic}: ${why}`), false);
      return false;
    }
    if (type !== FrameType.Descriptor) return this.#reject(new HsError(ErrorCode.ProtocolError, `unexpected ${FrameType[type]} frame from the publisher`));
    const d = this.#descriptor;
    const decoded = this.#decoder.decode(view, 0, d);
    if (!decoded.ok) return this.#reject(decoded.error);
    const lease = this.#leases[d.slot]!;
    if (lease.held) return this.#reject(new HsError(ErrorCode.ProtocolError, `descriptor rejected: slot ${d.slot} is still leased here (generation ${lease.generation})`));
    if (!isPackedRowMajor(d.rank, d.shape, d.strides)) {
      return this.#reject(new HsError(ErrorCode.ProtocolError, 'descriptor rejected: strides are not packed row-major (boundary pools publish packed tensors)'));
    }
    const slotStart = d.slot * this.#hello.slotStride;
    const bound = this.#tensors[d.slot]!.bindPublished(d.dtype, d.shape, slotStart + d.byteOffset, this.#hello.slotStride - d.byteOffset);
    if (!bound.ok) return this.#reject(bound.error);
    lease.hold(d.generation);
    this.#received++;
    // A CUDA-stream writer's slot (DEVICE_FENCE; the decoder checked the segment has counters) is handed
    // out once its counter reached the fence; later slots wait behind it, so the order stays the publisher's.
    const fence = (d.flags & DescriptorFlag.DeviceFence) !== 0 ? d.fenceValue : 0;
    if (this.#fenceCount > 0 || (fence > 0 && !this.#fenceReached(d.slot, fence))) {
      this.#fenceQueue[(this.#fenceHead + this.#fenceCount) % this.#fenceQueue.length] = d.slot;
      this.#fenceValues[d.slot] = fence;
      this.#fenceCount++;
      this.#armFencePoll();
      return true;
    }
    this.#deliver(d.slot);
    return true;
  }

  /** Hands a complete slot's lease to a pending `receive()`, or queues it. */
  #deliver(slot: number): void {
    const lease = this.#leases[slot]!;
    const pending = this.#pending;
    if (pending !== null) {
      this.#pending = null;
      pending.resolve(lease);
    } else {
      this.#queue[(this.#head + this.#count) % this.#queue.length] = slot;
      this.#count++;
    }
  }

  /**
   * True when `slot`'s fence counter (a little-endian u64 after the slots) is at least `fence`. Reads the
   * high word, the low word and the high word again: a counter that only grows, written low word first or
   * in one 64-bit store, then never reads as more than was written.
   */
  #fenceReached(slot: number, fence: number): boolean {
    const at = fenceCounterOffset(this.#hello.slotCount, this.#hello.slotStride, slot);
    const view = this.#counters;
    const high = view.getUint32(at + 4, true);
    const low = view.getUint32(at, true);
    if (view.getUint32(at + 4, true) !== high) return false;
    return high * 0x1_0000_0000 + low >= fence;
  }

  /** Hands out, in order, the waiting slots whose fences were reached; re-arms the poll while any wait. */
  #deliverFenced(): void {
    if (this.#closedError !== null) return;
    while (this.#fenceCount > 0) {
      const slot = this.#fenceQueue[this.#fenceHead]!;
      const fence = this.#fenceValues[slot]!;
      if (fence > 0 && !this.#fenceReached(slot, fence)) break;
      this.#fenceHead = (this.#fenceHead + 1) % this.#fenceQueue.length;
      this.#fenceCount--;
      this.#deliver(slot);
    }
    if (this.#fenceCount > 0) this.#armFencePoll();
  }

  #armFencePoll(): void {
    if (this.#fenceArmed) return;
    this.#fenceArmed = true;
    if (this.#fenceTimer === null) this.#fenceTimer = setTimeout(this.#onFenceTimer, FENCE_POLL_MS);
    else this.#fenceTimer.refresh();
  }

  #reject(error: HsError): boolean {
    const bye = goodbyeFrame(this.#hello.topicId, GoodbyeReason.ProtocolViolation);
    if (!this.#socket.destroyed) this.#socket.end(bye);
    this.#reclaim(`this channel rejected a frame from the publisher (${error.detail}) and said goodbye, which ends its claims`);
    this.#shutdown(new HsError(error.code, `topic ${this.topic}: ${error.detail}; the channel was closed`, { cause: error }), false);
    return false;
  }

  /**
   * Ends every claim of this channel, held or queued, because the publisher reclaims (or reclaimed) its
   * slots: each lease is marked reclaimed and its tensor stale with `why` (the slot may be rewritten now).
   */
  #reclaim(why: string): void {
    for (const lease of this.#leases) {
      if (!lease.held) continue;
      lease.reclaim();
      this.#tensors[lease.slot]!.retire(
        `${why}; slot ${lease.slot} of topic ${this.topic} was reclaimed and may be rewritten, so its lease gives no access any more ` +
          '(views taken before are not protected: copy what must outlive a lease)',
      );
    }
    this.#count = 0;
  }

  /**
   * Records why the channel ended and fails a pending receive. Leases still held after a GOODBYE closed stay
   * valid (the mapping is this process's own and nobody writes the slots any more) until `close()`, which
   * (`local`) stales them and unmaps the segment.
   */
  #shutdown(error: HsError, local: boolean): void {
    // No frame is taken after this; the mailbox's doorbell watch would keep the event loop alive.
    this.#mailbox?.close();
    // Slots whose fence was reached by now still count as received; the rest are not handed out (the
    // publisher may be gone): stop polling.
    if (this.#closedError === null && this.#fenceCount > 0) this.#deliverFenced();
    if (this.#fenceTimer !== null) clearTimeout(this.#fenceTimer);
    this.#fenceTimer = null;
    this.#fenceArmed = false;
    this.#fenceCount = 0;
    if (this.#closedError === null) {
      this.#closedError = error;
      const pending = this.#pending;
      this.#pending = null;
      pending?.reject(error);
    }
    if (local && !this.#segment.closed) {
      for (const lease of this.#leases) lease.drop();
      for (const tensor of this.#tensors) tensor.retire();
      this.#count = 0;
      this.#backend.free(this.#memory);
      this.#segment.close();
    }
  }
}
