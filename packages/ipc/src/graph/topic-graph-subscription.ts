import type { Socket } from 'node:net';
import type { TopicEndpointRecord } from '@hs/compiler';
import type { BoundarySubscription } from '@hs/runtime';
import { ErrorCode, HsError, MemoryKind, OK_VOID, err, unwrap, type Backend, type DeviceMemory, type Event, type MemoryRange, type Result, type Stream } from '@hs/streams';
import type { Tensor } from '@hs/tensor';
import { CudaIpcImport } from '../device/cuda-ipc-import.js';
import { decodeDeviceHello } from '../device/device-hello.js';
import { fenceCounterRanges, segmentHasFenceCounters } from '../device/fence-counters.js';
import { FrameReader } from '../frame-reader.js';
import { TopicMailbox } from '../mailbox/topic-mailbox.js';
import { SharedSegment, subscriberSegmentAccess } from '../shared-segment.js';
import { checkHelloPid, checkedSocketPeer } from '../socket-peer.js';
import { topicDirectory, topicSocketPath } from '../topic-endpoint.js';
import { checkHelloDescriptors, closeDescriptors, hostHelloDescriptors, receiveHello } from '../hello-connection.js';
import { attachFrame, decodeHello, encodeRelease, goodbyeFrame, goodbyeReason, publisherGoodbyeText } from '../wire/control-frames.js';
import { DescriptorDecoder, type TopicGeometry } from '../wire/descriptor-codec.js';
import { readFrameHeader } from '../wire/frame-header.js';
import { DescriptorFlag, FRAME_BYTES, FrameType, GoodbyeReason, Offset, WireMemoryKind } from '../wire/frame-layout.js';
import { TensorDescriptor, isPackedRowMajor } from '../wire/tensor-descriptor.js';
import type { MailboxWait } from '../mailbox/mailbox-wait.js';
import { ImportedSlot } from './imported-slot.js';

/** Between connection attempts while the publisher is not up yet (ms). */
const CONNECT_RETRY_MS = 10;

/** Options of a graph subscription. */
export interface TopicGraphSubscriptionOptions {
  readonly runtimeDirectory?: string;
  /** How long `start()` keeps trying to reach the publisher, in ms. */
  readonly connectTimeoutMs: number;
  /** How the mailbox ring is waited on (checked by `IpcBoundaries.prepare`); default park. */
  readonly wait?: MailboxWait;
}

/** What the subscription keeps of the publisher's HELLO. */
interface AttachedTopic extends TopicGeometry {
  readonly producerPid: number;
  /** True for a device topic (descriptors carry generation fences). */
  readonly device: boolean;
}

/**
 * A graph input fed by a topic of another process, for both transports. A host or pinnedHost topic: the
 * publisher's shared segment is mapped and adopted by the backend; a host writer's descriptor (fence 0)
 * makes the slot tensor host-complete (a host reader's `synchronizeForHost()` returns at once, a stream
 * waits for nothing). A pinnedHost descriptor of a CUDA-stream writer (DEVICE_FENCE, on a segment with
 * fence counters) is handled like a device topic's: the consumer stream waits for the slot's counter in
 * the segment to reach the fence (`streamMemoryOps.waitValue64`), a readiness event is recorded after the
 * wait, and `synchronizeForHost()` resolves once the bytes are complete; an input without a stream refuses
 * it (`NotSupported`). A device topic: the publisher's one CUDA IPC allocation is mapped once
 * (`CudaIpcImport`, its size checked), and only then ATTACH is sent (host topics likewise, once the segment is
 * mapped: the publisher lends nothing before it); for each descriptor the consumer's own stream waits on the device for the slot's
 * generation fence, a readiness event is recorded on that stream right after the wait, and the slot's
 * tensor is handed to the graph, so the consumer's work is ordered after the producer's writes without a
 * host wait on either side. Either way no byte is copied, every descriptor is validated (and checked
 * against the input's declared memory kind, dtype and rank, and the topic's byte bound when
 * `subscribe()` declared one) before use, and the lease the consumer
 * releases returns the slot (RELEASE) once its release stream passed the release event. A GOODBYE
 * `Closed` ends the input normally; a dead publisher or a refused frame is the subscription's typed `failure`.
 * Spec: "Crossing process boundaries: the generation fence", "Pinned-host readiness follows the writer",
 * "Derive slot bytes from deployment parameters" (an imported external-topic bound).
 */
export class TopicGraphSubscription implements BoundarySubscription {
  #socket: Socket | null = null;
  #topic: AttachedTopic | null = null;
  #import: CudaIpcImport | null = null;
  #segment: SharedSegment | null = null;
  #memory: DeviceMemory | null = null;
  /** A pinnedHost segment's fence counters (one 8-byte range per slot), empty without them. */
  #counters: readonly MemoryRange[] = [];
  /** A host topic's mailbox, when the publisher offered one and this addon has doorbells. */
  #mailbox: TopicMailbox | null = null;
  #decoder: DescriptorDecoder | null = null;
  readonly #descriptor = new TensorDescriptor();
  #slots: ImportedSlot[] = [];
  #readiness: Event[] = [];
  #releaseEvents: Event[] = [];
  /** Slots received and not yet taken by `next()`, in arrival order (a ring). */
  #queue = new Int32Array(0);
  #head = 0;
  #count = 0;
  #generations = new Float64Array(0);
  #ended = false;
  #failure: HsError | null = null;
  #disposed = false;
  readonly #release = Buffer.alloc(FRAME_BYTES);
  readonly #releaseView = new DataView(this.#release.buffer, this.#release.byteOffset, FRAME_BYTES);

  constructor(
    private readonly backend: Backend,
    private readonly endpoint: TopicEndpointRecord,
    private readonly consumerStream: Stream | null,
    private readonly options: TopicGraphSubscriptionOptions,
    /** Called when a descriptor or the goodbye arrives (the session's wake). */
    private readonly wake: () => void,
  ) {}

  get ended(): boolean {
    return this.#ended && this.#count === 0;
  }

  get failure(): HsError | null {
    return this.#failure;
  }

  async start(): Promise<void> {
    if (this.endpoint.transport === 'cudaIpc' && this.consumerStream === null) {
      throw new HsError(ErrorCode.InvalidArgument, `topic ${this.endpoint.topic}: a device import needs the consumer's planned stream (compile with deployment.bindTopicDevice)`);
    }
    const dir = unwrap(topicDirectory(this.options.runtimeDirectory));
    const path = unwrap(topicSocketPath(dir, this.endpoint.topic));
    const deadline = performance.now() + this.options.connectTimeoutMs;
    for (;;) {
      const attached = await this.#connect(path, Math.max(1, deadline - performance.now()));
      if (attached.ok || attached.error.code !== ErrorCode.NotFound || performance.now() >= deadline) return unwrap(attached);
      await new Promise((resolve) => setTimeout(resolve, CONNECT_RETRY_MS));
    }
  }

  next(): Tensor | undefined {
    if (this.#count === 0 || this.#failure !== null) return undefined;
    const slot = this.#queue[this.#head] as number;
    this.#head = (this.#head + 1) % this.#queue.length;
    this.#count--;
    return (this.#slots[slot] as ImportedSlot).tensor;
  }

  poll(): void {
    for (const slot of this.#slots) slot.poll();
  }

  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    for (const slot of this.#slots) slot.abandon();
    const socket = this.#socket;
    const topic = this.#topic;
    if (socket !== null && !socket.destroyed && topic !== null) {
      const bye = goodbyeFrame(topic.topicId, GoodbyeReason.Closed);
      socket.end(bye);
    } else socket?.destroy();
    this.#mailbox?.close();
    this.#import?.close();
    if (this.#segment !== null) {
      if (this.#memory !== null) this.backend.free(this.#memory);
      this.#segment.close();
    }
    for (const event of [...this.#readiness, ...this.#releaseEvents]) this.backend.destroyEvent(event);
    this.#readiness = [];
    this.#releaseEvents = [];
  }

  /** One connection attempt: HELLO, peer check, mapping, events. `NotFound` while nobody publishes the topic. */
  async #connect(path: string, timeoutMs: number): Promise<Result<void>> {
    // The addon connects and receives HELLO with its descriptors (Node's sockets drop SCM_RIGHTS), off the JS thread.
    const received = await receiveHello(path, this.endpoint.topic, timeoutMs);
    if (!received.ok) return received;
    const { socket, frame, fds } = received.value;
    socket.setNoDelay(true);
    socket.on('error', () => undefined);
    const attached = this.#disposed
      ? err(ErrorCode.InvalidState, `topic ${this.endpoint.topic}: the subscription was disposed while connecting`)
      : this.#attach(socket, new DataView(frame.buffer, frame.byteOffset, FRAME_BYTES), fds);
    // Mapped (or refused): the descriptors are not needed any more.
    closeDescriptors(fds);
    if (!attached.ok) {
      socket.destroy();
      return attached;
    }
    // Frames after HELLO: Node's socket reads them (the addon read exactly the HELLO's bytes).
    const reader = new FrameReader((view) => this.#onFrame(view));
    socket.on('data', (chunk: Buffer) => reader.push(chunk));
    socket.on('close', () => {
      this.#mailbox?.close();
      // Without a GOODBYE closed first, the publisher is gone or dropped this subscriber: its slots are reclaimed.
      if (this.#topic !== null && !this.#ended) {
        this.#fail(new HsError(ErrorCode.InvalidState, `topic ${this.endpoint.topic}: the publisher (pid ${this.#topic.producerPid}) went away (the connection dropped without a GOODBYE)`));
      }
    });
    return attached;
  }

  /** Validates the HELLO, checks the peer, maps the pool (shared segment or CUDA IPC) and makes the slots. */
  #attach(socket: Socket, view: DataView, fds: readonly number[]): Result<void> {
    const device = view.getUint32(Offset.memoryKind, true) === WireMemoryKind.CudaDevice;
    if (device !== (this.endpoint.transport === 'cudaIpc')) {
      return err(ErrorCode.ProtocolError, `topic ${this.endpoint.topic}: the publisher serves ${device ? 'cudaDevice' : 'host or pinnedHost'} memory but input ${this.#input} imports ${this.endpoint.memoryKind}`);
    }
    const peer = checkedSocketPeer(socket);
    if (!peer.ok) return peer;
    const mapped = device ? this.#mapDevice(view, peer.value.pid, fds) : this.#mapSegment(view, peer.value.pid, fds);
    if (!mapped.ok) return mapped;
    const topic = mapped.value;
    const per = this.endpoint.maxReleaseStreams;
    const stream = this.consumerStream;
    const events: Event[] = [];
    // Topics with fence counters (device, pinnedHost): a readiness event per slot (recorded after a fence
    // wait), then the release events; a host-only consumer has neither.
    const fenced = topic.fenceCounters === true;
    const eventCount = stream === null ? 0 : topic.slotCount * (per + (fenced ? 1 : 0));
    for (let i = 0; i < eventCount; i++) {
      const made = this.backend.createEvent((stream as Stream).device, { label: `topic ${this.endpoint.topic} event ${i}` });
      if (!made.ok) {
        for (const event of events) this.backend.destroyEvent(event);
        this.#unmap();
        return made;
      }
      events.push(made.value);
    }
    this.#readiness = fenced && stream !== null ? events.slice(0, topic.slotCount) : [];
    this.#releaseEvents = fenced && stream !== null ? events.slice(topic.slotCount) : events;
    const memory = (this.#import?.memory ?? this.#memory) as DeviceMemory;
    this.#slots = [];
    for (let slot = 0; slot < topic.slotCount; slot++) {
      const releases = this.#releaseEvents.slice(slot * per, slot * per + per);
      this.#slots.push(new ImportedSlot(this.backend, memory, `topic ${this.endpoint.topic}[slot ${slot}]`, releases, () => this.#returnSlot(slot)));
    }
    this.#topic = topic;
    this.#socket = socket;
    this.#decoder = new DescriptorDecoder(topic);
    this.#queue = new Int32Array(topic.slotCount);
    this.#generations = new Float64Array(topic.slotCount);
    // ATTACH once the pool is mapped (a device topic's handle imported): the publisher lends nothing before
    // it, and drops a connection that does not send it within its attachTimeoutMs. A device topic offers no mailbox.
    const mailbox = this.#mailbox;
    socket.write(attachFrame(topic.topicId, mailbox !== null));
    if (mailbox !== null) {
      const watched = mailbox.watch(
        (frame) => this.#onRingFrame(frame),
        (error) => this.#reject(error),
        this.options.wait,
      );
      if (!watched.ok) return watched;
    }
    return OK_VOID;
  }

  /** A device HELLO: the publisher's CUDA IPC allocation mapped on the input's device. */
  #mapDevice(view: DataView, peerPid: number, fds: readonly number[]): Result<AttachedTopic> {
    const hello = decodeDeviceHello(view, 0);
    if (!hello.ok) return hello;
    const h = hello.value;
    const samePublisher = checkHelloPid(this.endpoint.topic, h.producerPid, peerPid);
    if (!samePublisher.ok) return samePublisher;
    const none = checkHelloDescriptors(this.endpoint.topic, fds, 0, 'a device topic shares its memory by CUDA IPC handle');
    if (!none.ok) return none;
    if (h.deviceOrdinal !== this.endpoint.device.id) {
      return err(ErrorCode.InvalidArgument, `topic ${this.endpoint.topic} lives on cuda:${h.deviceOrdinal} but input ${this.#input} is bound to ${this.endpoint.device.toString()}; hs never copies across devices`);
    }
    const mapped = CudaIpcImport.open(this.backend, { name: `topic ${this.endpoint.topic}`, device: this.endpoint.device, handle: h.handle, slotCount: h.slotCount, slotStride: h.slotStride, allocationBytes: h.allocationBytes });
    if (!mapped.ok) return mapped;
    this.#import = mapped.value;
    return { ok: true, value: { topicId: h.topicId, slotCount: h.slotCount, slotStride: h.slotStride, maxRank: h.maxRank, producerPid: h.producerPid, device: true, fenceCounters: true } };
  }

  /** A host HELLO: the publisher's shared segment mapped and adopted as host or pinnedHost memory. */
  #mapSegment(view: DataView, peerPid: number, fds: readonly number[]): Result<AttachedTopic> {
    const hello = decodeHello(view, 0);
    if (!hello.ok) return hello;
    const h = hello.value;
    const samePublisher = checkHelloPid(this.endpoint.topic, h.producerPid, peerPid);
    if (!samePublisher.ok) return samePublisher;
    const expected = hostHelloDescriptors(this.endpoint.topic, fds, h.mailboxToken !== null);
    if (!expected.ok) return expected;
    const kind = h.memoryKind === WireMemoryKind.PinnedHost ? MemoryKind.PinnedHost : MemoryKind.Host;
    if (kind !== this.endpoint.memoryKind) {
      return err(ErrorCode.ProtocolError, `topic ${this.endpoint.topic}: the publisher sends ${kind} memory but input ${this.#input} imports ${this.endpoint.memoryKind}`);
    }
    if (typeof this.backend.adoptHostMemory !== 'function') return err(ErrorCode.NotSupported, `topic ${this.endpoint.topic}: the ${this.backend.name} backend cannot adopt shared memory`);
    const segment = SharedSegment.fromDescriptor({ fd: expected.value.segment, byteSize: h.segmentBytes, access: subscriberSegmentAccess(kind) });
    if (!segment.ok) return segment;
    const memory = this.backend.adoptHostMemory({ bytes: segment.value.bytes, kind, address: segment.value.address, label: `topic ${this.endpoint.topic} segment` });
    if (!memory.ok) {
      segment.value.close();
      return memory;
    }
    this.#segment = segment.value;
    this.#memory = memory.value;
    // The offered mailbox, when this addon has doorbells; one that fails its checks is an error.
    const offered = expected.value.mailbox;
    if (h.mailboxToken !== null && offered !== null) {
      const opened = TopicMailbox.open({ topic: this.endpoint.topic, topicId: h.topicId, slotCount: h.slotCount }, h.mailboxToken, offered);
      if (opened.ok) this.#mailbox = opened.value;
      else if (opened.error.code !== ErrorCode.NotSupported) {
        this.#unmap();
        return opened;
      }
    }
    const fenceCounters = segmentHasFenceCounters(kind === MemoryKind.PinnedHost, h.slotCount, h.slotStride, h.segmentBytes);
    this.#counters = fenceCounters ? fenceCounterRanges(memory.value, h.slotCount, h.slotStride) : [];
    return { ok: true, value: { topicId: h.topicId, slotCount: h.slotCount, slotStride: h.slotStride, maxRank: h.maxRank, producerPid: h.producerPid, device: false, fenceCounters } };
  }

  /** Releases a mapping made by a failed attach. */
  #unmap(): void {
    this.#mailbox?.close();
    this.#mailbox = null;
    this.#import?.close();
    this.#import = null;
    if (this.#segment !== null) {
      if (this.#memory !== null) this.backend.free(this.#memory);
      this.#segment.close();
    }
    this.#segment = null;
    this.#memory = null;
    this.#counters = [];
  }

  /** `operator.port` of the subscribed input, for messages. */
  get #input(): string {
    return `${this.endpoint.port.operator}.${this.endpoint.port.port}`;
  }

  /** A frame from the mailbox's descriptor ring: only DESCRIPTOR travels there. */
  #onRingFrame(view: DataView): boolean {
    if (this.#failure !== null || this.#disposed) return false;
    if (view.getUint16(Offset.type, true) !== FrameType.Descriptor) return this.#reject(new HsError(ErrorCode.ProtocolError, 'only Descriptor frames travel through the mailbox'));
    return this.#onFrame(view);
  }

  #onFrame(view: DataView): boolean {
    const topic = this.#topic as AttachedTopic;
    if (this.#failure !== null || this.#disposed) return false;
    const type = readFrameHeader(view, 0, topic.topicId);
    if (typeof type !== 'number') return this.#reject(type.error);
    if (type === FrameType.Goodbye) {
      const reason = goodbyeReason(view, 0);
      if (reason === GoodbyeReason.Closed) {
        this.#mailbox?.drain(); // descriptors sent before a closing GOODBYE are still taken
        this.#ended = true;
      } else this.#fail(new HsError(ErrorCode.InvalidState, `topic ${this.endpoint.topic}: the publisher (pid ${topic.producerPid}) ${publisherGoodbyeText(reason)}`));
      this.wake();
      return false;
    }
    if (type !== FrameType.Descriptor) return this.#reject(new HsError(ErrorCode.ProtocolError, `unexpected ${FrameType[type]} frame from the publisher`));
    const d = this.#descriptor;
    const decoded = (this.#decoder as DescriptorDecoder).decode(view, 0, d);
    if (!decoded.ok) return this.#reject(decoded.error);
    const slot = this.#slots[d.slot] as ImportedSlot;
    if (slot.inUse) return this.#reject(new HsError(ErrorCode.ProtocolError, `descriptor rejected: slot ${d.slot} is still held here`));
    const fenced = (d.flags & DescriptorFlag.DeviceFence) !== 0;
    if (topic.device && !fenced) {
      return this.#reject(new HsError(ErrorCode.ProtocolError, 'descriptor rejected: a device topic descriptor must carry a generation fence'));
    }
    // (A fence on a topic without counters was refused by the decoder.)
    if (fenced && !topic.device && this.consumerStream === null) {
      return this.#reject(
        new HsError(
          ErrorCode.NotSupported,
          `descriptor rejected: slot ${d.slot} of pinnedHost topic ${this.endpoint.topic} was written on the producer's CUDA stream (generation fence ${d.fenceValue}), and input ${this.#input} has no stream to wait on it; give the consumer a stream (spec.requireCudaStream())`,
        ),
      );
    }
    if (!isPackedRowMajor(d.rank, d.shape, d.strides)) return this.#reject(new HsError(ErrorCode.ProtocolError, 'descriptor rejected: strides are not packed row-major'));
    const e = this.endpoint;
    if (e.dtype !== null && d.dtype !== e.dtype) return this.#reject(new HsError(ErrorCode.ProtocolError, `the publisher sends ${d.dtype.name} tensors but input ${this.#input} requires ${e.dtype.name}`));
    if (e.rank !== null && d.rank !== e.rank) return this.#reject(new HsError(ErrorCode.ProtocolError, `the publisher sends rank ${d.rank} but input ${this.#input} requires rank ${e.rank}`));
    // The topic's declared bound sized this plan's derived pools (inputMaxByteSpan): a larger tensor is refused.
    if (e.maxByteSpan !== null && d.byteLength > e.maxByteSpan) {
      return this.#reject(
        new HsError(
          ErrorCode.ProtocolError,
          `the publisher sent a tensor of ${d.byteLength} bytes but subscribe() bounds input ${this.#input} to ${e.maxByteSpan} bytes, the bound this plan's pools were sized from; ` +
            "pass the publisher's bounds.maxByteSpan as maxByteSpan and compile again",
        ),
      );
    }
    let readiness: Event | null = null;
    if (fenced) {
      // The consumer's own stream waits for the slot's counter to reach the fence; the readiness event
      // recorded right after is what stream readers wait on and what synchronizeForHost() awaits.
      const stream = this.consumerStream as Stream;
      const waited = topic.device
        ? (this.#import as CudaIpcImport).waitFence(stream, d.slot, d.fenceValue)
        : this.#waitSegmentFence(stream, d.slot, d.fenceValue);
      if (!waited.ok) return this.#reject(waited.error);
      readiness = this.#readiness[d.slot] as Event;
      const recorded = this.backend.recordEvent(readiness, stream);
      if (!recorded.ok) return this.#reject(recorded.error);
    }
    const hStride = topic.slotStride;
    const lent = slot.lend(d.dtype, d.shape.slice(0, d.rank), d.slot * hStride + d.byteOffset, hStride - d.byteOffset, readiness);
    if (!lent.ok) return this.#reject(lent.error);
    this.#generations[d.slot] = d.generation;
    this.#queue[(this.#head + this.#count) % this.#queue.length] = d.slot;
    this.#count++;
    this.wake();
    return true;
  }

  /** Enqueues on `stream` a wait until a pinnedHost slot's counter reached `fenceValue` (no host wait). */
  #waitSegmentFence(stream: Stream, slot: number, fenceValue: number): Result<void> {
    const ops = this.backend.streamMemoryOps;
    if (ops === undefined) {
      return err(ErrorCode.NotSupported, `topic ${this.endpoint.topic}: the ${this.backend.name} backend has no stream memory operations, so it cannot wait on the generation fence of a CUDA-written pinnedHost slot`);
    }
    const waited = ops.waitValue64(stream, this.#counters[slot] as MemoryRange, BigInt(fenceValue));
    return waited.ok ? waited : err(waited.error.code, `generation fence wait (slot ${slot}, value ${fenceValue}): ${waited.error.message}`, waited.error);
  }

  #returnSlot(slot: number): void {
    const socket = this.#socket;
    const topic = this.#topic;
    if (socket === null || topic === null || socket.destroyed || socket.writableEnded) return;
    encodeRelease(this.#releaseView, 0, topic.topicId, slot, this.#generations[slot] as number);
    const mailbox = this.#mailbox;
    if (mailbox !== null) {
      // Room for every held slot exists by construction; a full ring means the publisher stopped reading.
      // (After a failure the mailbox is closed and the release has nowhere to go.)
      if (!mailbox.send(this.#release) && this.#failure === null) this.#reject(new HsError(ErrorCode.ProtocolError, 'the release ring is full: the publisher stopped reading it'));
      return;
    }
    // A queued socket write keeps its buffer: the encoded frame is copied.
    socket.write(Buffer.from(this.#release));
  }

  #reject(error: HsError): boolean {
    const socket = this.#socket;
    const topic = this.#topic;
    if (socket !== null && topic !== null && !socket.destroyed) {
      const bye = goodbyeFrame(topic.topicId, GoodbyeReason.ProtocolViolation);
      socket.end(bye);
    }
    this.#fail(new HsError(error.code, `topic ${this.endpoint.topic}: ${error.detail}; the subscription was closed`, { cause: error }));
    return false;
  }

  /**
   * Ends the subscription with `error` (the first one stays): the publisher reclaims every slot this side
   * holds (it dropped this subscriber, went away, or reads the GOODBYE this side sent), so each slot in use
   * is reclaimed and its tensor reports `InvalidState` with `error`'s text instead of bytes that may change.
   */
  #fail(error: HsError): void {
    this.#failure ??= error;
    this.#mailbox?.close(); // no frame is taken after a failure; the doorbell watch would keep the loop alive
    const why = `${error.detail}; the slot was reclaimed and may be rewritten, so its tensor gives no access any more (views taken before are not protected)`;
    for (const slot of this.#slots) slot.reclaim(why);
    this.wake();
  }
}
