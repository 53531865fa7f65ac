import type { ExecutionPlan, TensorAllocationRecord } from '@hs/compiler';
import { TensorPool } from '@hs/pool';
import { type Backend, type Device, type Result, type Stream, ErrorCode, err, ok, errWithContext } from '@hs/streams';
import { Channel } from './channel.js';

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
  ) {}

  /**
   * Materializes every stream, pool and channel the plan names.
   * @returns `DeviceError`/`ResourceExhausted`/`InvalidArgument` from the backend or a pool, with the
   *   failing pool or stream named; everything made before the failure is released first.
   */
  static materialize(plan: ExecutionPlan, backend: Backend): Result<SessionResources> {
    const streams = new Map<string, Stream>();
    const pools = new Map<string, TensorPool>();
    const release = (): void => {
      for (const pool of pools.values()) pool.dispose();
      for (const stream of streams.values()) backend.destroyStream(stream);
    };
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
      const eventDevice = eventDeviceOf(plan, record, producerStream);
      if (!eventDevice.ok) {
        release();
        return eventDevice;
      }
      const made = TensorPool.materialize(backend, {
        name: record.id,
        memoryKind: record.memoryKind,
        device: record.device,
        slotCount: record.slotCount,
        slotByteSpan: record.maxByteSpan,
        maxRank: record.maxRank,
        dtype: record.dtype,
        maxReleaseStreams: record.maxReleaseStreams,
        alignment: record.alignment,
        producerStream,
        ...(eventDevice.value === null ? {} : { eventDevice: eventDevice.value }),
      });
      if (!made.ok) {
        release();
        return errWithContext(made.error, `cannot materialize pool ${record.id}`);
      }
      pools.set(record.id, made.value);
    }
    const channels = new Map<string, Channel>();
    for (const edge of plan.edges) channels.set(edge.id, new Channel(edge.id, edge.admittedQueueDepth, edge.queueDepth, edge.dropPolicy));
    return ok(new SessionResources(backend, streams, pools, channels));
  }

  /** Polls every pool's release events once; returns the number of slots recycled. Never waits. */
  retire(): number {
    let recycled = 0;
    for (const pool of this.pools.values()) recycled += pool.retire();
    return recycled;
  }

  /** True when every pool has all its slots back. */
  get allSlotsReturned(): boolean {
    for (const pool of this.pools.values()) if (pool.available !== pool.slotCount) return false;
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

  /** Releases pools and streams (pools first: their slots may still reference the streams). */
  dispose(): void {
    for (const pool of this.pools.values()) pool.dispose();
    for (const stream of this.streams.values()) this.backend.destroyStream(stream);
  }
}

/**
 * The device whose events order a pool's slots: the pool's own CUDA device, else its producer stream's
 * device, else the one device of its stream-owning consumers (host-written pinned memory read by device
 * work); `null` when nobody orders it with streams.
 * @returns `NotSupported` when stream-owning consumers sit on two devices (hs never orders across devices).
 */
function eventDeviceOf(plan: ExecutionPlan, record: TensorAllocationRecord, producerStream: Stream | null): Result<Device | null> {
  if (record.device.isCuda) return ok(record.device);
  if (producerStream !== null) return ok(producerStream.device);
  const devices = new Set<Device>();
  for (const edgeId of record.consumers) {
    const consumer = plan.operator(plan.edge(edgeId)!.consumer.operator)!;
    if (consumer.stream !== null && consumer.device !== null) devices.add(consumer.device);
  }
  if (devices.size > 1) {
    return err(
      ErrorCode.NotSupported,
      `pool ${record.id} is read by streams on ${[...devices].join(' and ')}; one pool's events live on one device — give each device its own producer output`,
    );
  }
  return ok(devices.size === 1 ? [...devices][0]! : null);
}
