import type { ExecutionPlan, TensorAllocationRecord } from '@hs/compiler';
import { TensorPool } from '@hs/pool';
import { type Backend, type Device, type Err, type Result, type Stream, ErrorCode, err, ok, errWithContext } from '@hs/streams';
import type { BoundaryProvider, BoundaryPublication, BoundarySubscription } from './boundary-provider.js';
import { Channel } from './channel.js';
import { bindPoolResources, type PoolResourceBindings } from './pool-resource-bindings.js';

/** What `SessionResources.materialize` takes besides the plan and backend. */
export interface MaterializeOptions {
  /** The process-boundary provider, or `null`. */
  readonly boundaries: BoundaryProvider | null;
  /** The session's pool resource bindings. */
  readonly resources: PoolResourceBindings | undefined;
  /** Called by boundaries when a descriptor or release arrives. */
  readonly wake: () => void;
}

/** One subscribed input: the provider's subscription and the local channel it fills. */
export interface ImportedTopic {
  readonly topic: string;
  readonly subscription: BoundarySubscription;
  readonly channel: Channel;
}

/**
 * Everything a session owns, created cold from the plan before the graph is armed: one stream per
 * planned stream, one pool per tensor allocation record, one channel per edge. Spec: "Sized cold,
 * borrowed hot" — a failure leaves nothing half-built.
 */
export class SessionResources {
  private constructor(
    readonly backend: Backend,
    /** Planned stream id -> backend stream. */
    readonly streams: ReadonlyMap<string, Stream>,
    /** Allocation record id -> materialized pool. */
    readonly pools: ReadonlyMap<string, TensorPool>,
    /** Edge id -> channel. */
    readonly channels: ReadonlyMap<string, Channel>,
    /** Boundary pool id -> its publication (the pool is also in `pools`). */
    readonly publications: ReadonlyMap<string, BoundaryPublication>,
    /** `operator.port` of a subscribed input -> its import. */
    readonly imports: ReadonlyMap<string, ImportedTopic>,
  ) {
    this.#poolList = [...pools.values()];
    this.#publicationList = [...publications.values()];
    this.#importList = [...imports.values()];
  }

  /** The values of `pools`, `publications` and `imports` (fixed at creation), for the per-turn loops without map iterators. */
  readonly #poolList: readonly TensorPool[];
  readonly #publicationList: readonly BoundaryPublication[];
  readonly #importList: readonly ImportedTopic[];

  /**
   * Materializes every stream, pool and channel the plan names; pool backings from the resources bound
   * to their providers (all bindings checked first, before anything is allocated); boundary pools and
   * subscribed inputs through `boundaries` (`wake` is handed to them to call when a descriptor or release
   * arrives).
   * @returns the binding errors of `bindPoolResources`; `DeviceError`/`ResourceExhausted`/`InvalidArgument` from the backend or a pool, with the
   *   failing pool or stream named; `NotSupported` when the plan has topic endpoints and no provider was
   *   given; the provider's errors; everything made before the failure is released first.
   */
  static materialize(plan: ExecutionPlan, backend: Backend, options: MaterializeOptions): Result<SessionResources> {
    const { boundaries, wake } = options;
    const missing = missingDevice(plan, backend);
    if (missing !== null) return missing;
    const bound = bindPoolResources(plan, backend, options.resources);
    if (!bound.ok) return bound;
    const streams = new Map<string, Stream>();
    const pools = new Map<string, TensorPool>();
    const publications = new Map<string, BoundaryPublication>();
    const imports = new Map<string, ImportedTopic>();
    const release = (): void => {
      for (const imported of imports.values()) imported.subscription.dispose();
      for (const [id, pool] of pools) if (!publications.has(id)) pool.dispose();
      for (const publication of publications.values()) publication.dispose();
      for (const stream of streams.values()) backend.destroyStream(stream);
    };
    if (plan.topics.length > 0 && boundaries === null) {
      return err(
        ErrorCode.NotSupported,
        `plan ${plan.name} has external topics (${[...new Set(plan.topics.map((t) => t.topic))].join(', ')}); ` +
          'pass RunSessionOptions.boundaries (the boundary provider of @hs/ipc) to run it',
      );
    }
    for (const planned of plan.streams) {
      const made = backend.createStream(planned.device, { label: planned.id });
      if (!made.ok) {
        release();
        return errWithContext(made.error, `cannot create planned stream ${planned.id}`);
      }
      streams.set(planned.id, made.value);
    }
    for (const record of plan.pools) {
      const producerStream = record.producerStream === null ? null : streams.get(record.producerStream);
      if (producerStream === undefined) {
        release();
        return err(ErrorCode.InvalidArgument, `pool ${record.id} names unknown stream ${String(record.producerStream)}`);
      }
      if (record.boundary !== null && boundaries !== null) {
        const endpoint = plan.topics.find((t) => t.direction === 'publish' && t.topic === record.boundary?.topic);
        const published = endpoint === undefined ? err(ErrorCode.InvalidArgument, `pool ${record.id} names topic ${record.boundary.topic}, which has no publish endpoint in the plan`) : boundaries.publish({ plan, backend, record, endpoint, producerStream, wake });
        if (!published.ok) {
          release();
          return errWithContext(published.error, `cannot publish topic ${record.boundary.topic}`);
        }
        publications.set(record.id, published.value);
        pools.set(record.id, published.value.pool);
        continue;
      }
      const eventDevice = eventDeviceOf(plan, record, producerStream);
      if (!eventDevice.ok) {
        release();
        return eventDevice;
      }
      const releaseDevices = releaseDevicesOf(plan, record, eventDevice.value);
      const made = TensorPool.materialize(backend, {
        name: record.id,
        memoryKind: record.memoryKind,
        device: record.device,
        slotCount: record.slotCount,
        slotByteSpan: record.maxByteSpan,
        maxRank: record.maxRank,
        rank: record.rank,
        dtype: record.dtype,
        maxReleaseStreams: record.maxReleaseStreams,
        alignment: record.alignment,
        producerStream,
        ...(eventDevice.value === null ? {} : { eventDevice: eventDevice.value }),
        releaseDevices,
        resource: bound.value.get(record.id)!,
      });
      if (!made.ok) {
        release();
        return errWithContext(made.error, `cannot materialize pool ${record.id}`);
      }
      pools.set(record.id, made.value);
    }
    for (const endpoint of plan.topics) {
      if (endpoint.direction !== 'subscribe' || boundaries === null) continue;
      const key = `${endpoint.port.operator}.${endpoint.port.port}`;
      const consumer = plan.operator(endpoint.port.operator);
      const consumerStream = consumer?.stream === null || consumer === undefined ? null : (streams.get(consumer.stream) ?? null);
      const subscribed = boundaries.subscribe({ plan, backend, endpoint, consumerStream, wake });
      if (!subscribed.ok) {
        release();
        return errWithContext(subscribed.error, `cannot subscribe ${key} to topic ${endpoint.topic}`);
      }
      const channel = new Channel(`topic:${endpoint.topic}->${key}`, endpoint.queueDepth);
      imports.set(key, { topic: endpoint.topic, subscription: subscribed.value, channel });
    }
    const channels = new Map<string, Channel>();
    for (const edge of plan.edges) channels.set(edge.id, new Channel(edge.id, edge.admittedQueueDepth, edge.queueDepth, edge.dropPolicy));
    return ok(new SessionResources(backend, streams, pools, channels, publications, imports));
  }

  /**
   * Polls the boundaries (arrived releases, liveness), moves imported tensors into their channels while
   * they have room (releasing them unread once their consumer finished and closed the channel), then
   * polls every pool's release events once; returns the number of slots recycled.
   * Never waits.
   */
  retire(): number {
    for (let i = 0; i < this.#publicationList.length; i++) (this.#publicationList[i] as BoundaryPublication).poll();
    for (let i = 0; i < this.#importList.length; i++) {
      const imported = this.#importList[i] as ImportedTopic;
      imported.subscription.poll();
      while (imported.channel.hasRoom) {
        const tensor = imported.subscription.next();
        if (tensor === undefined) break;
        // A closed channel's consumer finished: nobody reads the tensor, its slot goes back at once.
        if (imported.channel.closed) tensor.backing?.releaseLease(null);
        else imported.channel.push(tensor);
      }
    }
    let recycled = 0;
    for (let i = 0; i < this.#poolList.length; i++) recycled += (this.#poolList[i] as TensorPool).retire();
    return recycled;
  }

  /** The first typed error a subscription ended with (its publisher died, a hostile descriptor), or `null`. */
  importFailure(): Result<never> | null {
    if (this.#importList.length === 0) return null;
    for (const [key, imported] of this.imports) {
      const failure = imported.subscription.failure;
      if (failure !== null) return errWithContext(failure, `input ${key} (topic ${imported.topic})`);
    }
    return null;
  }

  /** True when every pool has all its slots back. */
  get allSlotsReturned(): boolean {
    for (let i = 0; i < this.#poolList.length; i++) {
      const pool = this.#poolList[i] as TensorPool;
      if (pool.available !== pool.slotCount) return false;
    }
    return true;
  }

  /** Names every pool with slots still out, as `pool:a.out 2/5 out, ...`, for diagnostics. */
  describeOutstanding(): string {
    const out: string[] = [];
    for (const [id, pool] of this.pools) {
      if (pool.available !== pool.slotCount) out.push(`${id} ${pool.slotCount - pool.available}/${pool.slotCount} out`);
    }
    return out.length === 0 ? 'none out' : out.join(', ');
  }

  /** Releases imports, pools and publications, then streams (pools first: their slots may still reference the streams). */
  dispose(): void {
    for (const imported of this.imports.values()) {
      imported.channel.discardAll();
      imported.subscription.dispose();
    }
    for (const [id, pool] of this.pools) if (!this.publications.has(id)) pool.dispose();
    for (const publication of this.publications.values()) publication.dispose();
    for (const stream of this.streams.values()) this.backend.destroyStream(stream);
  }
}

/**
 * The device whose events order a pool's slots: the pool's own CUDA device, else its producer stream's
 * device, else the one device of its stream-owning consumers (host-written pinned memory read by device
 * work; a `{ crossDevice: true }` consumer counts only when no other one owns a stream); `null` when nobody
 * orders it with streams.
 * @returns `NotSupported` when stream-owning consumers sit on two devices without a cross-device input.
 */
function eventDeviceOf(plan: ExecutionPlan, record: TensorAllocationRecord, producerStream: Stream | null): Result<Device | null> {
  if (record.device.isCuda) return ok(record.device);
  if (producerStream !== null) return ok(producerStream.device);
  const devices = new Set<Device>();
  for (const edgeId of record.consumers) {
    const edge = plan.edge(edgeId)!;
    const consumer = plan.operator(edge.consumer.operator)!;
    if (!edge.crossDevice && consumer.stream !== null && consumer.device !== null) devices.add(consumer.device);
  }
  if (devices.size > 1) {
    return err(
      ErrorCode.NotSupported,
      `pool ${record.id} is read by streams on ${[...devices].join(' and ')}; one pool's events live on one device — give each device its own producer output, or read it on the other device through a { crossDevice: true } input (DeviceCopy)`,
    );
  }
  if (devices.size === 1) return ok([...devices][0]!);
  return ok(releaseDevicesOf(plan, record, null)[0] ?? null);
}

/**
 * The devices besides `eventDevice` whose streams read a pool through `{ crossDevice: true }` inputs (a
 * `DeviceCopy` on another GPU): the pool gives their streams release events of their own device, so those
 * readers release in stream order. Distinct, in edge order.
 */
function releaseDevicesOf(plan: ExecutionPlan, record: TensorAllocationRecord, eventDevice: Device | null): Device[] {
  const devices: Device[] = [];
  for (const edgeId of record.consumers) {
    const edge = plan.edge(edgeId)!;
    const consumer = plan.operator(edge.consumer.operator)!;
    if (edge.crossDevice && consumer.stream !== null && consumer.device !== null && consumer.device.isCuda && consumer.device !== eventDevice && !devices.includes(consumer.device)) devices.push(consumer.device);
  }
  return devices;
}

/**
 * InvalidArgument naming the first planned stream or CUDA pool on a device `backend` does not have, and how
 * to get one (a host backend emulates as many devices as asked for); null when the backend has them all.
 */
function missingDevice(plan: ExecutionPlan, backend: Backend): Err | null {
  let first: string | null = null;
  let missing = 0;
  let highest = -1;
  const check = (what: string, device: Device): void => {
    if (!device.isCuda || backend.devices.includes(device)) return;
    first ??= `${what} on ${device.toString()}`;
    missing += 1;
    highest = Math.max(highest, device.id);
  };
  for (const stream of plan.streams) check(`stream ${stream.id}`, stream.device);
  for (const record of plan.pools) check(`pool ${record.id}`, record.device);
  if (first === null) return null;
  const has = backend.devices.length === 0 ? 'no CUDA device' : `only ${backend.devices.map(String).join(', ')}`;
  const how =
    backend.name === 'host'
      ? `a host backend emulates as many devices as you ask for: pass RunSessionOptions.hostOptions: { deviceCount: ${highest + 1} } or a new HostBackend({ deviceCount: ${highest + 1} })`
      : `run it on a machine with cuda:${highest}, or bind the plan to ${backend.devices.map(String).join(', ') || 'no CUDA device'} in compile()'s deployment`;
  return err(ErrorCode.InvalidArgument, `plan ${plan.name} places ${first}${missing > 1 ? ` (and ${missing - 1} more)` : ''}, but the ${backend.name} backend has ${has}; ${how}`);
}
