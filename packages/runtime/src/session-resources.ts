import type { ExecutionPlan } from '@hs/compiler';
import { TensorPool } from '@hs/pool';
import { type Backend, type Result, type Stream, ErrorCode, err, ok } from '@hs/streams';
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
        return err(made.error.code, `cannot create planned stream ${planned.id}: ${made.error.message}`, made.error);
      }
      streams.set(planned.id, made.value);
    }
    for (const record of plan.pools) {
      const producerStream = record.producerStream === null ? null : streams.get(record.producerStream);
      if (producerStream === undefined) {
        release();
        return err(ErrorCode.InvalidArgument, `pool ${record.id} names unknown stream ${String(record.producerStream)}`);
      }
      const made = TensorPool.materialize(backend, {
        name: record.id,
        memoryKind: record.memoryKind,
        device: record.device,
        slotCount: record.slotCount,
        slotByteSpan: record.slotBytes,
        maxRank: record.maxRank,
        dtype: record.dtype,
        maxReleaseStreams: record.maxReleaseStreams,
        alignment: record.alignment,
        producerStream,
      });
      if (!made.ok) {
        release();
        return err(made.error.code, `cannot materialize pool ${record.id}: ${made.error.message}`, made.error);
      }
      pools.set(record.id, made.value);
    }
    const channels = new Map<string, Channel>();
    for (const edge of plan.edges) channels.set(edge.id, new Channel(edge.id, edge.queueDepth));
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
    for (const pool of this.pools.values()) if (pool.available !== pool.stats.slotCount) return false;
    return true;
  }

  /** Releases pools and streams (pools first: their slots may still reference the streams). */
  dispose(): void {
    for (const pool of this.pools.values()) pool.dispose();
    for (const stream of this.streams.values()) this.backend.destroyStream(stream);
  }
}
