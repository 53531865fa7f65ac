import type { Operator } from '../authoring/operator.js';
import type { OutputPort } from '../authoring/ports.js';
import type { FusedEdgeRecord, TensorAllocationRecord } from '../plan/plan-records.js';
import type { GraphIndex } from './graph-index.js';
import type { ResolvedTopics } from './resolve-topics.js';
import { compareText } from './text-order.js';

/**
 * Proves strict linear device-tensor chains: an edge is fused when its producer output has exactly
 * one accepted successor in total (a topic publication counts as one, in another process), the output is
 * a runtime pool written on the producer's stream, and both endpoints' final stream bindings are the
 * same stream. Under `perPartition` that stops fusion at every partition boundary; under
 * `sharedProcessDevice` a cross-partition edge may stay fused when the streams are equal. Each proof
 * is recorded as evidence the runtime re-validates. Mixed fan-out gets none, and so does an edge whose
 * consumer input has a window or selector in its temporal contract: those entries are held past one
 * activation or several at once, so their release streams stay tracked. A cross-device input is never fused.
 * Spec: "When the fences disappear: proven linear chains".
 */
export function proveFusedEdges(
  index: GraphIndex,
  streamOf: ReadonlyMap<Operator, string>,
  pools: ReadonlyMap<OutputPort, TensorAllocationRecord>,
  topics: ResolvedTopics,
): FusedEdgeRecord[] {
  const fused: FusedEdgeRecord[] = [];
  for (const edge of index.edges) {
    // A topic subscriber is one more successor, in another process: mixed fanout keeps every fence.
    const successors = (index.fromOutput.get(edge.flow.output)?.length ?? 0) + (topics.publications.has(edge.flow.output) ? 1 : 0);
    const pool = pools.get(edge.flow.output);
    const producerStream = streamOf.get(edge.producer) ?? null;
    const consumerStream = streamOf.get(edge.consumer) ?? null;
    const contract = index.specs.get(edge.consumer)?.contract ?? null;
    const retained = [...(contract?.windows ?? []), ...(contract?.selectors ?? [])].some((r) => r.input === edge.flow.input);
    if (edge.flow.input.crossDevice || retained || successors !== 1 || pool === undefined || producerStream === null || pool.producerStream !== producerStream || consumerStream !== producerStream) continue;
    fused.push({
      edge: edge.id,
      pool: pool.id,
      stream: producerStream,
      evidence: { acceptedSuccessors: 1, processLocal: true, producerStream, consumerStream },
    });
  }
  return fused.sort((a, b) => compareText(a.edge, b.edge));
}
