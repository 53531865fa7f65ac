import type { EdgeDropPolicy } from '@hs/compiler';
import type { BoundaryPublicationStats } from './boundary-provider.js';

/** Per-operator figures of a run. Latencies are compute() wall times in milliseconds. */
export interface OperatorMetrics {
  /** Operator name, as in the graph. */
  readonly name: string;
  /** compute() calls completed (every one, whatever `RunSessionOptions.latencySampleInterval` times). */
  readonly activations: number;
  /** Tensors emitted. */
  readonly emitted: number;
  /** Retry activations: a loan kept with `retainPending()` offered back once its edges had room. */
  readonly retries: number;
  /**
   * Clock ticks missed and not run (the operator was busy, a full edge or an empty `required` input held
   * it back, or the loop was late),
   * under the clock trigger's `skip` policy; 0 without a clock trigger. Spec: "Size queue entries from nominal rates".
   */
  readonly skippedTicks: number;
  /** Mean compute() wall time, in milliseconds (over the timed activations: `RunSessionOptions.latencySampleInterval`). */
  readonly latencyMeanMs: number;
  /** Median compute() wall time over the operator's last 1 024 timed activations, in milliseconds. */
  readonly latencyP50Ms: number;
  /** 99th-percentile compute() wall time over the operator's last 1 024 timed activations, in milliseconds. */
  readonly latencyP99Ms: number;
  /** Longest compute() wall time, in milliseconds. */
  readonly latencyMaxMs: number;
}

/** Per-pool figures of a run. */
export interface PoolMetrics {
  /** Plan pool id, for example `pool:grayscale.gray`. */
  readonly id: string;
  /** Slots materialized for the pool (the plan's admitted count). */
  readonly slotCount: number;
  /** Slots out of the pool now (0 for every pool after a run ended cleanly). */
  readonly outstanding: number;
  /** Most slots out of the pool at once (loaned, queued, being read, or retiring). */
  readonly highWater: number;
  /**
   * `allocateTensor()` calls that returned ResourceExhausted: the producer ran (free slots never gate it)
   * and had to drop or degrade. Spec: "Exhaustion fails fast".
   */
  readonly exhaustions: number;
}

/** Per-edge figures of a run. */
export interface EdgeMetrics {
  /** Plan edge id, for example `source.frames->grayscale.rgba`. */
  readonly id: string;
  /** Active queue depth of the edge, in entries (the current rate generation's depth). */
  readonly queueDepth: number;
  /** Most entries queued at once. */
  readonly highWater: number;
  /** The edge's drop policy, from the plan. */
  readonly dropPolicy: EdgeDropPolicy;
  /** Entries the policy dropped: `dropOldest` evictions or `dropNewest` skips (0 for `block`/`reject`). */
  readonly dropped: number;
  /** Emits refused with `Backpressured` because this edge was full. */
  readonly backpressured: number;
  /** Older entries a newest-entry read released unread (a non-trigger input of a temporal contract without a window or selector). */
  readonly superseded: number;
}

/**
 * Per-topic figures of a run: one entry per output the plan publishes to an external topic. A subscriber
 * the publisher dropped (its process died, it closed, it held a slot past the lease timeout, or it sent
 * a malformed frame) is counted here with the typed errors of the latest drops (`losses`, bounded; `lastLoss`
 * the newest); the producer keeps running.
 * Spec: "Crossing process boundaries: the generation fence".
 */
export interface TopicMetrics extends BoundaryPublicationStats {
  /** The external topic's name. */
  readonly topic: string;
  /** Id of the boundary pool the topic is published from, for example `pool:camera.frames`. */
  readonly poolId: string;
}

/** A snapshot of a session's metrics. Spec: "Pool mechanics" (high-water marks against derived capacity). */
export interface RunMetrics {
  /** Tensors emitted by source operators. */
  readonly frames: number;
  /** Wall time of the run in milliseconds. */
  readonly elapsedMs: number;
  /** One entry per operator of the plan. */
  readonly operators: readonly OperatorMetrics[];
  /** One entry per runtime pool of the plan. */
  readonly pools: readonly PoolMetrics[];
  /** One entry per edge of the plan. */
  readonly edges: readonly EdgeMetrics[];
  /** One entry per published topic of the plan (empty without external topics). */
  readonly topics: readonly TopicMetrics[];
}

/**
 * Renders metrics as aligned text lines for a terminal.
 * @example
 * ```ts
 * import { Readable, Writable } from 'node:stream';
 * import { Graph, compile } from '@hs/compiler';
 * import { ReadableSource, RunSession, WritableSink, formatMetrics } from '@hs/runtime';
 *
 * const graph = new Graph('metrics');
 * const source = graph.add(new ReadableSource('in', Readable.from([new Uint8Array(64), new Uint8Array(64)]), { maxFrameBytes: 64 }));
 * const sink = graph.add(new WritableSink('out', new Writable({ objectMode: true, write(_chunk, _enc, done) { done(); } })));
 * graph.addFlow(source.frames, sink.input);
 * const plan = compile(graph);
 * if (!plan.ok) throw plan.error;
 * const session = RunSession.create(plan.value, { backend: 'host' });
 * if (!session.ok) throw session.error;
 * console.log(formatMetrics(await session.value.run())); // frames, per-operator latency, pool high-water marks
 * session.value.dispose();
 * ```
 */
export function formatMetrics(metrics: RunMetrics): string {
  const lines = [
    `frames: ${metrics.frames} in ${metrics.elapsedMs.toFixed(1)} ms`,
    'operators:',
    ...metrics.operators.map(
      (o) =>
        `  ${o.name.padEnd(20)} activations ${String(o.activations).padStart(6)}  emitted ${String(o.emitted).padStart(6)}  ` +
        (o.skippedTicks === 0 ? '' : `skipped ticks ${o.skippedTicks}  `) +
        `latency mean ${o.latencyMeanMs.toFixed(3)} ms  p50 ${o.latencyP50Ms.toFixed(3)} ms  p99 ${o.latencyP99Ms.toFixed(3)} ms  max ${o.latencyMaxMs.toFixed(3)} ms`,
    ),
    'pools:',
    ...metrics.pools.map(
      (p) => `  ${p.id.padEnd(28)} high-water ${p.highWater}/${p.slotCount} slots  outstanding ${p.outstanding}  exhaustions ${p.exhaustions}`,
    ),
    'edges:',
    ...metrics.edges.map(
      (e) =>
        `  ${e.id.padEnd(40)} high-water ${e.highWater}/${e.queueDepth}` +
        (e.dropPolicy === 'block' && e.backpressured === 0 ? '' : `  ${e.dropPolicy}: dropped ${e.dropped}, backpressured ${e.backpressured}`) +
        (e.superseded === 0 ? '' : `  superseded ${e.superseded}`),
    ),
    ...(metrics.topics.length === 0 ? [] : ['topics:']),
    ...metrics.topics.map(
      (t) =>
        `  ${t.topic.padEnd(28)} subscribers ${t.subscribers}  lost ${t.subscribersLost}  reclaimed leases ${t.reclaimedLeases}` +
        (t.lastLoss === null ? '' : `  last: ${t.lastLoss.code}: ${t.lastLoss.detail}`),
    ),
  ];
  return lines.join('\n');
}
