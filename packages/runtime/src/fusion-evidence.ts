import type { ExecutionPlan } from '@hs/compiler';

/** The parts of a plan the re-validation reads. */
export type FusionEvidenceSource = Pick<ExecutionPlan, 'fusedEdges' | 'edge' | 'pool' | 'operator'>;

/**
 * Re-validates the plan's fusion evidence against the plan's own records before the runtime acts on
 * it: the edge carries the named pool, the pool has that edge as its one consumer, the pool's producer
 * stream and both endpoints' streams are the evidence stream, and the evidence says process-local with
 * exactly one accepted successor. Returns the edge ids that passed; every other edge keeps full fences.
 * Spec: "When the fences disappear: proven linear chains".
 */
export function provenFusedEdges(plan: FusionEvidenceSource): Set<string> {
  const proven = new Set<string>();
  for (const record of plan.fusedEdges) {
    const edge = plan.edge(record.edge);
    const pool = plan.pool(record.pool);
    if (edge === undefined || pool === undefined || edge.pool !== pool.id) continue;
    const producer = plan.operator(edge.producer.operator);
    const consumer = plan.operator(edge.consumer.operator);
    const stream = record.stream;
    if (
      pool.consumers.length === 1 &&
      pool.consumers[0] === edge.id &&
      pool.producerStream === stream &&
      producer?.stream === stream &&
      consumer?.stream === stream &&
      record.evidence.processLocal &&
      record.evidence.acceptedSuccessors === 1
    ) {
      proven.add(edge.id);
    }
  }
  return proven;
}
