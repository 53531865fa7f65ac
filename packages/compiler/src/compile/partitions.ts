import type { Operator } from '../authoring/operator.js';
import type { GraphIndex } from './graph-index.js';

/** An execution partition before streams are assigned. */
export interface PartitionDraft {
  /** `partition:<head operator>`. */
  readonly id: string;
  /** Operators in topological order; the first is the head. */
  readonly operators: readonly Operator[];
  /** True when no operator in it is CUDA-active. */
  readonly hostOnly: boolean;
}

/** Partitions and the partition of each operator. */
export interface Partitioning {
  /** In topological order of their heads. */
  readonly partitions: readonly PartitionDraft[];
  readonly partitionOf: ReadonlyMap<Operator, PartitionDraft>;
}

/**
 * Splits the graph into execution partitions at forks and joins: an operator joins its producer's
 * partition when the edge between them is the producer's only outgoing edge and the operator's only
 * incoming edge; every other operator heads a new partition. Each partition is therefore a linear
 * chain with one serial callback owner.
 * Spec: "One stream per active execution partition and device".
 */
export function partitionGraph(index: GraphIndex, order: readonly Operator[], cudaActive: ReadonlyMap<Operator, boolean>): Partitioning {
  const members = new Map<Operator, Operator[]>();
  const headOf = new Map<Operator, Operator>();
  for (const op of order) {
    const incoming = index.incoming.get(op) ?? [];
    const producer = incoming.length === 1 ? (incoming[0]?.producer ?? null) : null;
    const head = producer !== null && index.outgoing.get(producer)?.length === 1 ? headOf.get(producer) : undefined;
    if (head === undefined) {
      headOf.set(op, op);
      members.set(op, [op]);
    } else {
      headOf.set(op, head);
      members.get(head)?.push(op);
    }
  }
  const partitions: PartitionDraft[] = [];
  const partitionOf = new Map<Operator, PartitionDraft>();
  for (const [head, operators] of members) {
    const partition = { id: `partition:${head.name}`, operators, hostOnly: !operators.some((op) => cudaActive.get(op) === true) };
    partitions.push(partition);
    for (const op of operators) partitionOf.set(op, partition);
  }
  return { partitions, partitionOf };
}
