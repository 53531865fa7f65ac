import type { ExecutionPlan, TensorAllocationRecord } from '@hs/compiler';
import { isInsideCompute, type BoundaryProvider, type BoundaryPublication, type BoundarySubscription, type PublicationRequest, type SubscriptionRequest } from '@hs/runtime';
import { Device, ErrorCode, HsError, OK_VOID, err, ok, type Backend, type Event, type Result } from '@hs/streams';
import { DeviceGraphPublication } from '../device/device-graph-publication.js';
import { DeviceTopicPublisher } from '../device/device-topic-publisher.js';
import { TopicPublisher } from '../topic-publisher.js';
import { resolveMailboxWait, type MailboxWait } from '../mailbox/mailbox-wait.js';
import { GraphPublication } from './graph-publication.js';
import { TopicGraphSubscription } from './topic-graph-subscription.js';

/**
 * The event device and release-stream count of a shared-memory boundary pool whose slots are also read in
 * this process on CUDA streams (`record.releaseStreamCap.domain`, the device the compiler ordered the
 * pool on), or nothing when only host code and other processes read it.
 */
function localReleaseOrdering(record: TensorAllocationRecord): { eventDevice?: Device; maxReleaseStreams?: number } {
  const domain = record.releaseStreamCap.domain;
  const device = domain === null ? undefined : Device.parse(domain);
  return device === undefined || !device.isCuda ? {} : { eventDevice: device, maxReleaseStreams: record.maxReleaseStreams };
}

/** Options of `IpcBoundaries.prepare`. */
export interface IpcBoundariesOptions {
  /** The backend the session will run on (pass the same instance to `RunSession.create`). */
  readonly backend: Backend;
  /** Directory of the topic sockets; default the per-user runtime directory. */
  readonly runtimeDirectory?: string;
  /** Subscribers each publication waits for before the run starts; default 0 (start at once). */
  readonly awaitSubscribers?: number;
  /** How long a publication waits for them, in ms; default 30 000. */
  readonly subscriberTimeoutMs?: number;
  /** How long a subscription keeps trying to reach its publisher when the run starts, in ms; default 10 000. */
  readonly connectTimeoutMs?: number;
  /** Longest a subscriber may hold one slot before the publisher reclaims it, in ms; default 5000. */
  readonly leaseTimeoutMs?: number;
  /** Longest a connection may go without ATTACH before it is dropped, in ms, host and device topics; default 2000 (see `TopicPublisherOptions.attachTimeoutMs`). */
  readonly attachTimeoutMs?: number;
  /** How often a publisher checks its subscribers' liveness, in ms; default 250. */
  readonly livenessIntervalMs?: number;
  /**
   * How subscribed host inputs wait for descriptors once their mailbox ring is empty: `{ kind: 'park' }`
   * (default) or `{ kind: 'spin', spinMicroseconds }` (see `MailboxWait`).
   */
  readonly wait?: MailboxWait;
}

/**
 * The `@hs/ipc` implementation of the runtime's `BoundaryProvider`: pass it as
 * `RunSessionOptions.boundaries` to run a plan with external topics. `prepare()` creates every
 * publication's shared segment, boundary pool and socket before the session exists (the asynchronous
 * part); the session then lends those pools and feeds subscribed inputs from topic subscriptions opened
 * when the run starts (`ChannelRuntime` is the client for processes outside any graph).
 *
 * Host and pinnedHost topics written by a host writer travel through POSIX shared memory
 * (`TopicPublisher`, `ChannelRuntime`); cudaDevice topics through one CUDA IPC allocation per pool with a
 * generation fence per slot (`DeviceTopicPublisher`; the importer waits on its own stream). A pinnedHost
 * boundary of a graph is host-written by default: its descriptors carry no fence; published with
 * `pinnedHostWriter: 'cudaStream'` its pool is written on the producer's stream and each publish records
 * a generation fence in the segment (`TopicPublisher.bindProducerStream`). A
 * subscribed pinnedHost input also reads topics a standalone `TopicPublisher` writes on a CUDA stream
 * (fenced descriptors): it waits for each fence on its own stream.
 * Spec: "Crossing process boundaries: the generation fence".
 *
 * @example
 * ```ts
 * import { mkdtempSync, rmSync } from 'node:fs';
 * import { tmpdir } from 'node:os';
 * import { join } from 'node:path';
 * import { Readable } from 'node:stream';
 * import { Graph, compile } from '@hs/compiler';
 * import { ReadableSource, RunSession } from '@hs/runtime';
 * import { HostBackend, MemoryKind, unwrap } from '@hs/streams';
 * import { ChannelRuntime, IpcBoundaries, ipcAvailability } from '@hs/ipc';
 *
 * const ipc = ipcAvailability();
 * if (!ipc.available) console.log(ipc.reason);
 * else {
 *   const runtimeDirectory = mkdtempSync(join(tmpdir(), 'hs-topics-'));
 *   const frames = [1, 2, 3].map((n) => new Uint8Array(256).fill(n));
 *   const graph = new Graph('producer');
 *   const source = graph.add(new ReadableSource('camera', Readable.from(frames), { maxFrameBytes: 256, memoryKind: MemoryKind.Host }));
 *   graph.publish(source.frames, 'camera.frames'); // an external topic: other processes subscribe to it
 *   const plan = unwrap(compile(graph));
 *
 *   const backend = new HostBackend();
 *   // every publication's segment, pool and socket before the session; the run waits for one subscriber
 *   const boundaries = await IpcBoundaries.prepare(plan, { backend, runtimeDirectory, awaitSubscribers: 1 });
 *   const session = unwrap(RunSession.create(plan, { backend, boundaries }));
 *   const channel = await ChannelRuntime.connect({ backend, topic: 'camera.frames', runtimeDirectory }); // a process outside any graph
 *   const running = session.run();
 *   const received: number[] = [];
 *   for (const _ of frames) {
 *     const lease = await channel.receive();
 *     received.push(unwrap(lease.tensor.hostView())[0] ?? -1);
 *     unwrap(lease.release());
 *   }
 *   const metrics = await running;
 *   console.log(`subscriber got frames ${received.join(', ')}; the run took ${metrics.frames} frames`);
 *   channel.close();
 *   session.dispose(); // closes the publishers the session took
 *   await boundaries.dispose(); // and any it did not
 *   rmSync(runtimeDirectory, { recursive: true, force: true });
 * }
 * ```
 */
export class IpcBoundaries implements BoundaryProvider {
  readonly #publishers: Map<string, TopicPublisher | DeviceTopicPublisher>;
  readonly #handedOut = new Set<string>();

  private constructor(
    private readonly plan: ExecutionPlan,
    private readonly options: IpcBoundariesOptions,
    publishers: Map<string, TopicPublisher | DeviceTopicPublisher>,
  ) {
    this.#publishers = publishers;
  }

  /**
   * Creates the publishers of every boundary pool of `plan` (a device topic listens now and allocates
   * its CUDA IPC pool when the session lends it).
   * @returns the provider, every publisher listening.
   * @throws HsError (the promise rejects) `InvalidArgument` when `options.backend` is missing, a count
   *   option is not a positive number or `wait` is malformed; `InvalidState` inside an operator's `compute()`; `NotSupported`
   *   without the IPC addon; the publisher's (`AlreadyExists` for a topic a live process publishes,
   *   `PermissionDenied`, `OutOfMemory`). Everything created before a failure is closed first.
   */
  static async prepare(plan: ExecutionPlan, options: IpcBoundariesOptions): Promise<IpcBoundaries> {
    if (typeof options !== 'object' || options === null || typeof options.backend !== 'object' || options.backend === null) {
      throw new HsError(ErrorCode.InvalidArgument, 'IpcBoundaries.prepare(plan, options): options.backend is required (the backend the session runs on)');
    }
    for (const key of ['awaitSubscribers', 'subscriberTimeoutMs', 'connectTimeoutMs'] as const) {
      const value = options[key];
      if (value !== undefined && (typeof value !== 'number' || !(value >= 0) || (key !== 'awaitSubscribers' && value === 0))) {
        throw new HsError(ErrorCode.InvalidArgument, `IpcBoundaries.prepare: ${key} must be a ${key === 'awaitSubscribers' ? 'non-negative' : 'positive'} number, got ${String(value)}`);
      }
    }
    const wait = resolveMailboxWait(options.wait, 'IpcBoundaries.prepare');
    if (!wait.ok) throw wait.error;
    if (isInsideCompute()) {
      throw new HsError(ErrorCode.InvalidState, 'IpcBoundaries.prepare() inside an operator\'s compute(): topics are declared on the graph (publish/subscribe) and run by the session (one graph, one vocabulary)');
    }
    const publishers = new Map<string, TopicPublisher | DeviceTopicPublisher>();
    try {
      for (const record of plan.pools) {
        const boundary = record.boundary;
        if (boundary === null) continue;
        if (boundary.transport === 'cudaIpc') {
          // The CUDA IPC pool needs the session's producer stream: listen now, attach in publish().
          const listening = await DeviceTopicPublisher.listen({
            topic: boundary.topic,
            maxSubscribers: boundary.maxSubscribers,
            ...(options.attachTimeoutMs === undefined ? {} : { attachTimeoutMs: options.attachTimeoutMs }),
            ...(options.leaseTimeoutMs === undefined ? {} : { leaseTimeoutMs: options.leaseTimeoutMs }),
            ...(options.livenessIntervalMs === undefined ? {} : { livenessIntervalMs: options.livenessIntervalMs }),
            ...(options.runtimeDirectory === undefined ? {} : { runtimeDirectory: options.runtimeDirectory }),
          });
          publishers.set(record.id, listening);
          continue;
        }
        const created = await TopicPublisher.create({
          backend: options.backend,
          topic: boundary.topic,
          memoryKind: record.memoryKind,
          slotCount: record.slotCount,
          slotByteSpan: record.maxByteSpan,
          maxRank: record.maxRank,
          rank: record.rank,
          dtype: record.dtype,
          maxSubscribers: boundary.maxSubscribers,
          // In-process consumers on CUDA streams (a published output also read locally) register release
          // streams on the pool: its events live on their device, as the plan's release-stream cap says.
          ...localReleaseOrdering(record),
          ...(options.attachTimeoutMs === undefined ? {} : { attachTimeoutMs: options.attachTimeoutMs }),
          ...(options.leaseTimeoutMs === undefined ? {} : { leaseTimeoutMs: options.leaseTimeoutMs }),
          ...(options.livenessIntervalMs === undefined ? {} : { livenessIntervalMs: options.livenessIntervalMs }),
          ...(options.runtimeDirectory === undefined ? {} : { runtimeDirectory: options.runtimeDirectory }),
        });
        publishers.set(record.id, created);
      }
    } catch (failure) {
      await Promise.all([...publishers.values()].map((p) => p.close()));
      throw failure;
    }
    return new IpcBoundaries(plan, options, publishers);
  }

  /** The prepared publisher of boundary pool `poolId` (for metrics and tests), or `undefined`. */
  publisher(poolId: string): TopicPublisher | DeviceTopicPublisher | undefined {
    return this.#publishers.get(poolId);
  }

  publish(request: PublicationRequest): Result<BoundaryPublication> {
    const checked = this.#sameSession(request.plan, request.backend);
    if (!checked.ok) return checked;
    const publisher = this.#publishers.get(request.record.id);
    if (publisher === undefined) return err(ErrorCode.NotFound, `pool ${request.record.id} was not prepared by this IpcBoundaries (prepare() with the same plan)`);
    if (this.#handedOut.has(request.record.id)) return err(ErrorCode.InvalidState, `pool ${request.record.id} is already lent to a session; prepare() again for a new one`);
    const awaitSubscribers = this.options.awaitSubscribers ?? 0;
    const subscriberTimeoutMs = this.options.subscriberTimeoutMs ?? 30_000;
    if (publisher instanceof DeviceTopicPublisher) {
      const { record, producerStream } = request;
      if (producerStream === null) return err(ErrorCode.InvalidArgument, `pool ${record.id}: a device boundary is written on its producer's planned stream, and the plan gives it none`);
      publisher.onActivity = request.wake;
      const pool = publisher.attach(request.backend, {
        device: record.device,
        producerStream,
        slotCount: record.slotCount,
        slotByteSpan: record.maxByteSpan,
        maxRank: record.maxRank,
        rank: record.rank,
        dtype: record.dtype,
        maxReleaseStreams: record.maxReleaseStreams,
      });
      if (!pool.ok) return pool;
      this.#handedOut.add(record.id);
      return ok(new DeviceGraphPublication(request.backend, publisher, pool.value, producerStream, awaitSubscribers, subscriberTimeoutMs));
    }
    // A pinnedHost output published in place with the CUDA-stream writer: the pool is written on the
    // producer's planned stream, and each publish records a generation fence on it.
    if (request.record.producerStream !== null) {
      if (request.producerStream === null) return err(ErrorCode.InvalidArgument, `pool ${request.record.id}: a CUDA-written pinnedHost boundary is written on its producer's planned stream, and the session gives it none`);
      const bound = publisher.bindProducerStream(request.producerStream);
      if (!bound.ok) return bound;
    }
    // A pass-through output whose operator has a CUDA stream copies device-to-host into its host-written
    // slots on that stream: one completion event per slot, on the operator's device.
    const copyEvents: Event[] = [];
    const copyDevice = request.record.boundary?.staging === 'copy' ? (request.plan.operator(request.endpoint.port.operator)?.device ?? null) : null;
    for (let i = 0; copyDevice !== null && i < request.record.slotCount; i++) {
      const made = request.backend.createEvent(copyDevice, { label: `topic ${request.endpoint.topic} copy ${i}` });
      if (!made.ok) {
        for (const event of copyEvents) request.backend.destroyEvent(event);
        return made;
      }
      copyEvents.push(made.value);
    }
    this.#handedOut.add(request.record.id);
    return ok(new GraphPublication(request.backend, publisher, awaitSubscribers, subscriberTimeoutMs, copyEvents, request.wake));
  }

  subscribe(request: SubscriptionRequest): Result<BoundarySubscription> {
    const checked = this.#sameSession(request.plan, request.backend);
    if (!checked.ok) return checked;
    const connectTimeoutMs = this.options.connectTimeoutMs ?? 10_000;
    const directory = this.options.runtimeDirectory === undefined ? {} : { runtimeDirectory: this.options.runtimeDirectory };
    return ok(new TopicGraphSubscription(request.backend, request.endpoint, request.consumerStream, { connectTimeoutMs, ...directory, ...(this.options.wait === undefined ? {} : { wait: this.options.wait }) }, request.wake));
  }

  /** Closes the publishers no session took (a session closes its own). Idempotent. */
  async dispose(): Promise<void> {
    const unused = [...this.#publishers].filter(([id]) => !this.#handedOut.has(id)).map(([, p]) => p);
    await Promise.all(unused.map((p) => p.close()));
  }

  #sameSession(plan: ExecutionPlan, backend: Backend): Result<void> {
    if (plan !== this.plan) return err(ErrorCode.InvalidArgument, `IpcBoundaries was prepared for plan ${this.plan.name}, not this plan ${plan.name}`);
    if (backend !== this.options.backend) return err(ErrorCode.InvalidArgument, 'IpcBoundaries was prepared for another backend; pass the same backend instance to RunSession.create');
    return OK_VOID;
  }
}
