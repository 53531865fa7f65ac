import { EventEmitter } from 'node:events';
import { randomBytes } from 'node:crypto';
import { TensorPool } from '@hs/pool';
import { ErrorCode, err, ok, unwrap, type Backend, type Device, type Result, type Stream } from '@hs/streams';
import type { DType, Tensor } from '@hs/tensor';
import { TopicSocket, claimTopicSocket } from '../publisher-socket.js';
import { SubscriberSessions, type SubscriberLost } from '../subscriber-session.js';
import { resolveDeviceListenOptions, type DeviceTopicListenOptions, type SubscriberLimits } from '../topic-options.js';
import { encodeDescriptor } from '../wire/descriptor-codec.js';
import { DescriptorFlag, FRAME_BYTES } from '../wire/frame-layout.js';
import { CudaIpcExport } from './cuda-ipc-export.js';
import { encodeDeviceHello } from './device-hello.js';

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
  /** The exact rank every allocation must have (0..`maxRank`, checked by the pool); any up to `maxRank` when omitted. */
  readonly rank?: number;
  /** The only dtype allocations may use; any dtype when omitted. */
  readonly dtype?: DType;
  /** Release streams per slot for in-process consumers of the same pool (default 8). */
  readonly maxReleaseStreams?: number;
}

const SLOT_ALIGNMENT = 256;

/**
 * The exporting side of a device topic: a boundary pool in ONE `cudaMalloc` allocation exported once
 * as a CUDA IPC handle (slots are offsets), written on the producer's stream. `publish()` enqueues the
 * slot's generation fence on the producer stream (a 64-bit stream memory operation writing the
 * generation into the slot's counter) and only then sends the descriptor, flagged `DEVICE_FENCE`, to
 * every attached subscriber, taking one read lease each; a slot recycles after every subscriber released it.
 * A subscriber attaches by sending ATTACH once it imported the handle (wire version 2): before that it is
 * sent no descriptor and lent no lease, and a connection that sends no ATTACH within `attachTimeoutMs` is
 * dropped (GOODBYE attach timeout), so silent connections neither pin slots nor hold places under
 * `maxSubscribers` past the deadline. Subscribers that close, die, hold a slot past `leaseTimeoutMs` or
 * send a malformed frame are dropped and their slots reclaimed, with a `subscriberLost` event (a
 * `SubscriberLost`, as `TopicPublisher` emits it). No host thread waits on either side.
 *
 * Two phases because a graph session creates its streams synchronously: `listen()` (async: claims the
 * socket) before the session, `attach()` (sync: allocation, export, pool) inside it. Subscribers that
 * connect before `attach()` get their HELLO once it ran.
 * Spec: "Crossing process boundaries: the generation fence", warning on returning slots across processes.
 *
 * @example
 * ```ts
 * import { mkdtempSync, rmSync } from 'node:fs';
 * import { tmpdir } from 'node:os';
 * import { join } from 'node:path';
 * import { Device, selectBackend, unwrap } from '@hs/streams';
 * import { DType } from '@hs/tensor';
 * import { DeviceTopicPublisher, ipcAvailability, type SubscriberLost } from '@hs/ipc';
 *
 * const ipc = ipcAvailability();
 * if (!ipc.available) console.log(ipc.reason);
 * else {
 *   const runtimeDirectory = mkdtempSync(join(tmpdir(), 'hs-topics-'));
 *   const backend = unwrap(selectBackend()); // CUDA when it sees a device, else host (HS_BACKEND chooses)
 *   const producerStream = unwrap(backend.createStream(Device.cuda(0)));
 *   const pub = await DeviceTopicPublisher.listen({ topic: 'depth', runtimeDirectory }); // the socket, before any session
 *   pub.on('subscriberLost', (lost: SubscriberLost) => console.warn(lost.error.message));
 *   const pool = pub.attach(backend, { device: Device.cuda(0), producerStream, slotCount: 4, slotByteSpan: 512 * 512 * 4, maxRank: 2 });
 *   if (!pool.ok) console.log(pool.error.message); // the host backend: a device boundary needs CUDA IPC
 *   else {
 *     const loan = unwrap(pool.value.allocateTensor({ shape: [512, 512], dtype: DType.float32 }));
 *     unwrap(unwrap(loan.write(producerStream)).commit()); // kernels write the slot on producerStream
 *     const sent = unwrap(pub.publish(unwrap(loan.emit()))); // the generation fence, then the descriptor
 *     console.log(`published to ${sent} subscriber(s) from one CUDA IPC allocation`);
 *   }
 *   await pub.close();
 *   await backend.synchronizeStream(producerStream);
 *   unwrap(backend.destroyStream(producerStream));
 *   backend.dispose();
 *   rmSync(runtimeDirectory, { recursive: true, force: true });
 * }
 * ```
 */
export class DeviceTopicPublisher extends EventEmitter {
  /** The listening socket, with the exit hook that removes its path. */
  readonly #socket: TopicSocket;
  readonly #topicId: number;
  /** Accept (held until `attach()`), HELLO, releases, liveness and drops of the subscribers. */
  readonly #sessions: SubscriberSessions;
  readonly #frame = Buffer.alloc(FRAME_BYTES);
  readonly #frameView = new DataView(this.#frame.buffer, this.#frame.byteOffset, FRAME_BYTES);
  #export: CudaIpcExport | null = null;
  #pool: TensorPool | null = null;
  #closed = false;
  /** Called when a subscriber is sent its HELLO or attaches, a release arrives or a subscriber is dropped (the session's wake). */
  onActivity: () => void = () => undefined;
  /**
   * Called when a subscriber is dropped and its slots reclaimed (not for the goodbyes of `close()`), right
   * after the `subscriberLost` event, with the same `SubscriberLost` record.
   * @deprecated Listen to the `subscriberLost` event instead (`publisher.on('subscriberLost', …)`), as on
   *   `TopicPublisher`; this callback keeps working.
   */
  onSubscriberLost: (lost: SubscriberLost) => void = () => undefined;

  private constructor(
    /** The topic name. */
    readonly topic: string,
    socket: TopicSocket,
    limits: SubscriberLimits,
  ) {
    super();
    this.#socket = socket;
    this.#topicId = randomBytes(4).readUInt32LE(0) || 1;
    this.#sessions = new SubscriberSessions({
      ...limits,
      topicId: this.#topicId,
      onAccepted: () => this.onActivity(),
      onAttached: () => this.onActivity(),
      // The session retires the pool's slots on its own turn; the wake makes it run one.
      onLeasesReturned: () => this.onActivity(),
      onLost: (lost) => {
        this.emit('subscriberLost', lost);
        this.onSubscriberLost(lost);
      },
    });
    socket.serve((connection) => this.#sessions.accept(connection));
  }

  /**
   * Claims the topic's socket (a stale one of a crashed publisher is removed) and listens.
   * @returns the publisher, listening; `attach()` gives it its pool.
   * @throws HsError (the promise rejects) `InvalidArgument` for a malformed topic name or option;
   *   `NotSupported` without the IPC addon; `AlreadyExists` when a live publisher serves the topic;
   *   `PermissionDenied` for an unsafe runtime directory or a stale socket that cannot be removed.
   */
  static async listen(options: DeviceTopicListenOptions): Promise<DeviceTopicPublisher> {
    const limits = resolveDeviceListenOptions(options);
    const claimed = unwrap(await claimTopicSocket(options.runtimeDirectory, limits.topic));
    const socket = unwrap(await TopicSocket.listen(claimed.socketPath, limits.topic));
    return new DeviceTopicPublisher(limits.topic, socket, limits);
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
      ...(spec.rank === undefined ? {} : { rank: spec.rank }),
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
    this.#sessions.open({ slotCount: spec.slotCount, hello: () => hello });
    return pool;
  }

  /**
   * Subscribers attached: sent HELLO, and their ATTACH was read (a device subscriber sends it once it
   * imported the handle). One still on its way is not counted and is sent nothing: it receives what is
   * published after its ATTACH was read (wait for this count before publishing what it must see).
   */
  get subscriberCount(): number {
    return this.#sessions.attachedCount;
  }

  /**
   * Publishes a tensor just emitted from the pool: enqueues the slot's generation fence on the producer
   * stream, then sends a `DEVICE_FENCE` descriptor to every attached subscriber with one read lease each
   * (a connection whose ATTACH was not read yet gets nothing and holds nothing). Returns the number of
   * subscribers it went to. `InvalidArgument` for a tensor of another pool, `InvalidState` before
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
    const generation = this.#sessions.nextGeneration(slot);
    const fenced = exported.recordFence(slot, generation);
    if (!fenced.ok) return fenced;
    this.#sessions.recordPublished(slot, generation, tensor);
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
    for (const sub of this.#sessions.subscribers) {
      if (!this.#sessions.lend(sub, backing, slot, generation, now)) continue;
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
    this.#sessions.close();
    await this.#socket.close();
    this.#pool?.dispose();
    this.#export?.dispose();
  }
}
