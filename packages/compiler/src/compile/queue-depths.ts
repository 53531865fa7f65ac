import { DiagnosticCode, type DiagnosticLog } from './diagnostics.js';
import type { IndexedEdge } from './graph-index.js';

/** Where an edge's queue depth came from. */
export type QueueDepthSource = 'explicit' | 'default';

/** An edge's resolved queue depth. */
export interface ResolvedQueueDepth {
  readonly queueDepth: number;
  readonly source: QueueDepthSource;
}

/** True for a queue depth hs accepts: a positive safe integer (entries). */
export function isValidQueueDepth(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 1;
}

/**
 * Resolves every edge's queue depth: the explicit `addFlow()` depth when given (exact authority),
 * else `defaultQueueDepth`. Reports `QUEUE_DEPTH_INVALID` for an explicit depth that is not a
 * positive safe integer. Spec: "Size queue entries from nominal rates" (explicit depth is exact).
 */
export function resolveQueueDepths(
  edges: readonly IndexedEdge[],
  defaultQueueDepth: number,
  log: DiagnosticLog,
): Map<IndexedEdge, ResolvedQueueDepth> {
  const depths = new Map<IndexedEdge, ResolvedQueueDepth>();
  for (const edge of edges) {
    const requested = edge.flow.queueDepth;
    if (requested === undefined) {
      depths.set(edge, { queueDepth: defaultQueueDepth, source: 'default' });
    } else if (isValidQueueDepth(requested)) {
      depths.set(edge, { queueDepth: requested, source: 'explicit' });
    } else {
      log.error(
        DiagnosticCode.QueueDepthInvalid,
        { kind: 'edge', edge: edge.id },
        `edge ${edge.id}: queueDepth ${String(requested)} is not a positive integer of entries (at most 2^53 - 1); ` +
          `pass addFlow(..., { queueDepth: N }) with N >= 1, or omit it to use defaultQueueDepth`,
      );
    }
  }
  return depths;
}
