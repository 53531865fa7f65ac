import { randomBytes } from 'node:crypto';
import { existsSync, unlinkSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { TensorPool } from '@hs/pool';
import { ErrorCode, HsError, OK_VOID, err, ok, type Backend, type Device, type Result, type Stream } from '@hs/streams';
import type { DType, Tensor } from '@hs/tensor';
import { FrameReader } from '../frame-reader.js';
import { checkedSocketPeer } from '../socket-peer.js';
import { SubscriberLeases, dropLapsedSubscribers } from '../subscriber-leases.js';
import { checkTopicName, topicDirectory, topicSocketPath } from '../topic-endpoint.js';
import type { SubscriberLossReason, SubscriberLost } from '../topic-publisher.js';
import { goodbyeFrame } from '../wire/control-frames.js';
import { encodeDescriptor } from '../wire/descriptor-codec.js';
import { readFrameHeader } from '../wire/frame-header.js';
import { DescriptorFlag, FRAME_BYTES, FrameType, GoodbyeReason } from '../wire/frame-layout.js';
import { CudaIpcExport } from './cuda-ipc-export.js';
import { encodeDeviceHello } from './device-hello.js';

/** Where `DeviceTopicPublisher.listen` serves a topic. */
export interface DeviceTopicListenOptions {
  /** Topic name (letters, digits, `_`, `-`, `.`; it names the socket). */
  readonly topic: string;
  /** Most subscribers at once (more are refused); default 8. */
  readonly maxSubscribers?: number;
  /** Longest a subscriber may hold one slot before it is dropped and its slots reclaimed, in ms; default 5000. */
  readonly leaseTimeoutMs?: number;
  /** How often subscriber pids and lease ages are checked, in ms; default 250. */
  readonly livenessIntervalMs?: number;
  /** Directory of the topic socket; default the per-user runtime directory. */
  readonly runtimeDirectory?: string;
}

/** The pool `DeviceTopicPublisher.attach` materializes: one CUDA IPC allocation, written on `producerStream`. */
export interface DeviceTopicPoolSpec {
  /** The CUDA device of the allocation. */
  readonly device: Device;
  /** The stream that writes the slots; commits and generation fences are recorded on it. */
  readonly producerStream: Stream;
  /** Slots in the pool. */
  readonly slotCount: number;
  /** Largest tensor one slot holds, bytes. */
  readonly slotByteSpan: number;
  /** Largest rank an allocation may have. */
  readonly maxRank: number;
  /** The only dtype allocations may use; any dtype when omitted. */
  readonly dtype?: DType;
  /** Release streams per slot for in-process consumers of the same pool (default 8). */
  readonly maxReleaseStreams?: number;
}

interface Subscriber {
  readonly socket: Socket;
  readonly pid: number;
  /** The read leases it holds, by slot. */
  readonly leases: SubscriberLeases;
  gone: boolean;
}

const SLOT_ALIGNMENT = 256;

/**
 * The exporting side of a device topic: a boundary pool in ONE `cudaMalloc` allocation exported once
 * as a CUDA IPC handle (slots are offsets), written on the producer's stream. `publish()` enqueues the
 * slot's generation fence on the producer stream (a 64-bit stream memory operation writing the
 * generation into the slot's counter) and only then sends the descriptor, flagged `DEVICE_FENCE`, to
 * every subscriber, taking one read lease each; a slot recycles after every subscriber released it.
 * Subscribers that close, die, hold a slot past `leaseTimeoutMs` or send a malformed frame are dropped
 * and their slots reclaimed (`subscriberLost`). No host thread waits on either side.
 *
 * Two phases because a graph session creates its streams synchronously: `listen()` (async: claims the
 * socket) before the session, `attach()` (sync: allocation, export, pool) inside it. Subscribers that
 * connect before `attach()` get their HELLO once it ran.
 * Spec: "Crossing process boundaries: the generation fence", warning on returning slots across processes.
 */
export class DeviceTopicPublisher {
  readonly #server: Server;
  readonly #socketPath: string;
  readonly #topicId: number;
  readonly #maxSubscribers: number;
  readonly #leaseTimeoutMs: number;
  readonly #subscribers = new Set<Subscriber>();
  readonly #waiting: Socket[] = [];
  readonly #liveness: NodeJS.Timeout;
  readonly #onExit: () => void;
  readonly #frame = Buffer.alloc(FRAME_BYTES);
  readonly #frameView = new DataView(this.#frame.buffer, this.#frame.byteOffset, FRAME_BYTES);
  #export: CudaIpcExport | null = null;
  #pool: TensorPool | null = null;
  #hello: Buffer | null = null;
  #generations = new Float64Array(0);
  #published: (Tensor | null)[] = [];
  #closed = false;
  /** Called when a subscriber attaches or a release arrives (the session's wake). */
  onActivity: () => void = () => undefined;
  /**
   * Called when a subscriber is dropped and its slots reclaimed (not for the goodbyes of `close()`): its
   * pid, why, how many read leases came back, and the typed error (`InvalidState` closed or process gone,
   * `ResourceExhausted` lease timeout, `ProtocolError` a malformed frame), as `TopicPublisher`'s
   * `subscriberLost` event carries them.
   */
  onSubscriberLost: (lost: SubscriberLost) => void = () => undefined;

  private constructor(
    /** The topic name. */
    readonly topic: string,
    server: Server,
    socketPath: string,
    maxSubscribers: number,
    leaseTimeoutMs: number,
    livenessIntervalMs: number,
  ) {
    this.#server = server;
    this.#socketPath = socketPath;
    this.#topicId = randomBytes(4).readUInt32LE(0) || 1;
    this.#maxSubscribers = maxSubscribers;
    this.#leaseTimeoutMs = leaseTimeoutMs;
    server.on('connection', (socket) => this.#accept(socket));
    this.#liveness = setInterval(() => dropLapsedSubscribers(this.#subscribers, this.topic, this.#topicId, this.#leaseTimeoutMs, (sub, loss) => this.#drop(sub, loss)), livenessIntervalMs);
    this.#liveness.unref();
    this.#onExit = () => {
      if (existsSync(this.#socketPath)) unlinkSync(this.#socketPath);
    };
    process.on('exit', this.#onExit);
  }

  /**
   * Claims the topic's socket (a stale one of a crashed publisher is removed) and listens.
   * `AlreadyExists` when a live publisher serves the topic; `PermissionDenied` for an unsafe runtime directory.
   * @throws HsError `InvalidArgument` for a malformed topic name or option.
   */
  static async listen(options: DeviceTopicListenOptions): Promise<Result<DeviceTopicPublisher>> {
    const topic = checkTopicName(options.topic, 'DeviceTopicPublisher.listen');
    const maxSubscribers = options.maxSubscribers ?? 8;
    const leaseTimeoutMs = options.leaseTimeoutMs ?? 5000;
    const livenessIntervalMs = options.livenessIntervalMs ?? 250;
    if (!Number.isSafeInteger(maxSubscribers) || maxSubscribers < 1 || !(leaseTimeoutMs > 0) || !(livenessIntervalMs > 0)) {
      throw new HsError(ErrorCode.InvalidArgument, 'DeviceTopicPublisher.listen: maxSubscribers, leaseTimeoutMs and livenessIntervalMs must be positive');
    }
    const dir = topicDirectory(options.runtimeDirectory);
    if (!dir.ok) return dir;
    const path = topicSocketPath(dir.value, topic);
    if (!path.ok) return path;
    if (existsSync(path.value)) {
      const live = await new Promise<boolean>((resolve) => {
        const probe = createConnection(path.value);
        probe.once('connect', () => {
          probe.destroy();
          resolve(true);
        });
        probe.once('error', () => resolve(false));
      });
      if (live) return err(ErrorCode.AlreadyExists, `topic ${topic} is already published (a live publisher answers on ${path.value})`);
      unlinkSync(path.value);
    }
    const server = createServer();
    const listening = await new Promise<Result<void>>((resolve) => {
      server.once('error', (cause) => resolve(err(ErrorCode.AlreadyExists, `topic ${topic}: cannot listen on ${path.value}: ${cause.message}`, cause)));
      server.listen(path.value, () => resolve(OK_VOID));
    });
    if (!listening.ok) return listening;
    return ok(new DeviceTopicPublisher(topic, server, path.value, maxSubscribers, leaseTimeoutMs, livenessIntervalMs));
  }

  /**
   * Allocates and exports the boundary pool on `backend` (the CUDA backend) and announces it to every
   * subscriber. `InvalidState` when already attached or closed; `NotSupported` without CUDA IPC or stream
   * memory operations; allocation and pool errors otherwise, with nothing left behind.
   */
  attach(backend: Backend, spec: DeviceTopicPoolSpec): Result<TensorPool> {
    if (this.#closed || this.#pool !== null) return err(ErrorCode.InvalidState, `topic ${this.topic}: attach() after close() or a second time`);
    const slotStride = Math.max(SLOT_ALIGNMENT, Math.ceil(spec.slotByteSpan / SLOT_ALIGNMENT) * SLOT_ALIGNMENT);
    const exported = CudaIpcExport.create(backend, { name: `topic ${this.topic}`, device: spec.device, slotCount: spec.slotCount, slotStride, producerStream: spec.producerStream });
    if (!exported.ok) return exported;
    const pool = TensorPool.materialize(backend, {
      name: `topic ${this.topic}`,
      memoryKind: exported.value.memory.kind,
      device: spec.device,
      slotCount: spec.slotCount,
      slotByteSpan: spec.slotByteSpan,
      maxRank: spec.maxRank,
      ...(spec.dtype === undefined ? {} : { dtype: spec.dtype }),
      ...(spec.maxReleaseStreams === undefined ? {} : { maxReleaseStreams: spec.maxReleaseStreams }),
      alignment: SLOT_ALIGNMENT,
      producerStream: spec.producerStream,
      resource: exported.value.resource(),
    });
    if (!pool.ok) {
      exported.value.dispose();
      return pool;
    }
    this.#export = exported.value;
    this.#pool = pool.value;
    this.#generations = new Float64Array(spec.slotCount);
    this.#published = new Array<Tensor | null>(spec.slotCount).fill(null);
    const hello = Buffer.alloc(FRAME_BYTES);
    encodeDeviceHello(new DataView(hello.buffer, hello.byteOffset, FRAME_BYTES), 0, {
      topicId: this.#topicId,
      slotCount: spec.slotCount,
      slotStride,
      allocationBytes: exported.value.byteSize,
      maxRank: spec.maxRank,
      producerPid: process.pid,
      deviceOrdinal: spec.device.id,
      handle: exported.value.handle,
    });
    this.#hello = hello;
    for (const socket of this.#waiting.splice(0)) this.#accept(socket);
    return pool;
  }

  /** Subscribers attached (HELLO sent). */
  get subscriberCount(): number {
    return this.#subscribers.size;
  }

  /**
   * Publishes a tensor just emitted from the pool: enqueues the slot's generation fence on the producer
   * stream, then sends a `DEVICE_FENCE` descriptor to every subscriber with one read lease each. Returns
   * the subscriber count. `InvalidArgument` for a tensor of another pool, `InvalidState` before
   * `attach()`/after `close()`, `DeviceError` when the fence cannot be enqueued. Never waits.
   */
  publish(tensor: Tensor): Result<number> {
    const pool = this.#pool;
    const exported = this.#export;
    if (this.#closed || pool === null || exported === null) return err(ErrorCode.InvalidState, `topic ${this.topic}: publish() before attach() or after close()`);
    if (tensor.memory !== exported.memory) return err(ErrorCode.InvalidArgument, `topic ${this.topic}: "${tensor.name}" is not a tensor of this topic's pool`);
    const backing = tensor.backing;
    if (backing === null) return err(ErrorCode.InvalidState, `topic ${this.topic}: publish() needs the tensor returned by loan.emit()`);
    const slot = exported.slotOf(tensor.byteOffset);
    const generation = (this.#generations[slot] as number) + 1;
    const fenced = exported.recordFence(slot, generation);
    if (!fenced.ok) return fenced;
    this.#generations[slot] = generation;
    this.#published[slot] = tensor;
    encodeDescriptor(this.#frameView, 0, {
      topicId: this.#topicId,
      slot,
      generation,
      fenceValue: generation,
      flags: DescriptorFlag.DeviceFence,
      dtype: tensor.dtype,
      shape: tensor.shape,
      strides: tensor.strides,
      byteOffset: tensor.byteOffset - slot * exported.slotStride,
      byteLength: tensor.byteSize,
    });
    const now = performance.now();
    // A queued socket write keeps its buffer, so the encoded frame is copied once per publish and that
    // copy goes to every subscriber.
    let frame: Buffer | null = null;
    let sent = 0;
    for (const sub of this.#subscribers) {
      if (sub.gone || !backing.acquireLease().ok) continue;
      sub.leases.hold(slot, generation, now);
      frame ??= Buffer.from(this.#frame);
      sub.socket.write(frame);
      sent++;
    }
    return ok(sent);
  }

  /**
   * Says goodbye to every subscriber, reclaims their leases, stops listening, removes the socket, and
   * disposes the pool and the exported allocation. Idempotent.
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
    for (const socket of this.#waiting.splice(0)) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
    if (existsSync(this.#socketPath)) unlinkSync(this.#socketPath);
    this.#pool?.dispose();
    this.#export?.dispose();
  }

  #accept(socket: Socket): void {
    const peer = checkedSocketPeer(socket);
    if (!peer.ok || this.#closed || this.#subscribers.size >= this.#maxSubscribers) {
      socket.destroy();
      return;
    }
    const hello = this.#hello;
    if (hello === null) {
      this.#waiting.push(socket);
      socket.on('error', () => undefined);
      return;
    }
    const slotCount = this.#generations.length;
    const sub: Subscriber = { socket, pid: peer.value.pid, leases: new SubscriberLeases(slotCount), gone: false };
    this.#subscribers.add(sub);
    socket.setNoDelay(true);
    const reader = new FrameReader((view) => this.#onFrame(sub, view));
    socket.on('data', (chunk: Buffer) => reader.push(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      if (!sub.gone) this.#drop(sub, { reason: 'closed', error: new HsError(ErrorCode.InvalidState, `topic ${this.topic}: subscriber pid ${sub.pid} closed its connection`) });
    });
    socket.write(hello);
    this.onActivity();
  }

  #onFrame(sub: Subscriber, view: DataView): boolean {
    const type = readFrameHeader(view, 0, this.#topicId);
    if (typeof type !== 'number') return this.#violation(sub, type.error.detail);
    if (type === FrameType.Goodbye) {
      sub.socket.end();
      this.#drop(sub, { reason: 'closed', error: new HsError(ErrorCode.InvalidState, `topic ${this.topic}: subscriber pid ${sub.pid} said goodbye`) });
      return false;
    }
    if (type !== FrameType.Release) return this.#violation(sub, `a subscriber may only send Release and Goodbye frames, got ${FrameType[type]}`);
    const slot = sub.leases.releaseFrame(view);
    if (typeof slot === 'string') return this.#violation(sub, slot);
    this.#published[slot]?.backing?.releaseLease(null);
    this.onActivity();
    return true;
  }

  #violation(sub: Subscriber, detail: string): boolean {
    const bye = goodbyeFrame(this.#topicId, GoodbyeReason.ProtocolViolation);
    sub.socket.end(bye);
    this.#drop(sub, { reason: 'protocolViolation', error: new HsError(ErrorCode.ProtocolError, `topic ${this.topic}: subscriber pid ${sub.pid} dropped: ${detail}`) });
    return false;
  }

  /** Removes a subscriber and gives back every lease it held (reported through `onSubscriberLost` when `loss` is given). */
  #drop(sub: Subscriber, loss: { reason: SubscriberLossReason; error: HsError } | null): void {
    if (sub.gone) return;
    sub.gone = true;
    this.#subscribers.delete(sub);
    const reclaimed = sub.leases.reclaimAll((slot) => this.#published[slot]?.backing?.releaseLease(null));
    if (loss !== null) this.onSubscriberLost({ pid: sub.pid, reason: loss.reason, reclaimedLeases: reclaimed, error: loss.error });
    this.onActivity();
  }
}
