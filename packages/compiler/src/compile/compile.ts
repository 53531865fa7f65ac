import { ErrorCode, HsError, ok, type Err, type Result } from '@hs/streams';
import { Graph } from '../authoring/graph.js';
import type { Operator } from '../authoring/operator.js';
import type { OutputPort } from '../authoring/ports.js';
import { ExecutionPlan } from '../plan/execution-plan.js';
import type { PlanEdge, PlanOperator, PlanPartition, TensorAllocationRecord } from '../plan/plan-records.js';
import { buildAllocationRecords } from './allocation-records.js';
import { resolveCompileOptions, type CompileOptions } from './compile-options.js';
import { CompileError, DiagnosticLog } from './diagnostics.js';
import { indexGraph, type GraphIndex, type IndexedEdge } from './graph-index.js';
import { partitionGraph, type PartitionDraft, type Partitioning } from './partitions.js';
import { placeOperators, type Placement } from './placement.js';
import { resolveQueueDepths, type ResolvedQueueDepth } from './queue-depths.js';
import { assignStreams, type StreamAssignment } from './streams.js';
import { compareText } from './text-order.js';
import { validateGraphStructure } from './validate-graph.js';
import { validateTensorContracts } from './validate-tensor-contracts.js';

/**
 * Compiles `graph` into an immutable `ExecutionPlan`: validates structure, queue depths, tensor
 * bounds and layouts, and device bindings; splits execution partitions at forks and joins; plans one
 * stream per (partition, device) (or per device under `sharedProcessDevice`); sizes one pool per
 * `runtimePool` output. Deterministic: the same graph and options give an identical plan.
 *
 * Returns `err(CompileError)` (code `ErrorCode.CompileError`) carrying every diagnostic found when any
 * check fails; warnings of a successful compile are in `plan.diagnostics`.
 * Spec: "One stream per active execution partition and device", "Sized cold, borrowed hot",
 * "Current limitations".
 * @throws HsError `InvalidArgument` when `graph` is not a `Graph` or `options` is not an object.
 */
export function compile(graph: Graph, options?: CompileOptions): Result<ExecutionPlan> {
  if (!(graph instanceof Graph)) throw new HsError(ErrorCode.InvalidArgument, 'compile(graph, options): graph must be a Graph');
  const log = new DiagnosticLog();
  const planOptions = resolveCompileOptions(options, log);
  const index = indexGraph(graph);
  const structure = validateGraphStructure(index, log);
  const depths = resolveQueueDepths(index.edges, planOptions.defaultQueueDepth, log);
  validateTensorContracts(index, log);
  // Name-keyed bindings are ambiguous while names repeat, so placement waits for unique names.
  const placement = structure.namesUnique ? placeOperators(index, planOptions, log) : null;
  if (log.hasErrors || structure.order === null || placement === null) return failure(graph, log);

  const order = structure.order;
  const partitioning = partitionGraph(index, order, placement.cudaActive);
  const streams = assignStreams(partitioning.partitions, placement.operatorDevice, planOptions.computeStreamPolicy);
  const pools = buildAllocationRecords(index, { order, depths, outputDevice: placement.outputDevice, streamOf: streams.streamOf }, log);
  if (log.hasErrors) return failure(graph, log);

  const edges = planEdges(index, order, depths, pools);
  return ok(
    new ExecutionPlan({
      name: graph.name,
      options: planOptions,
      operators: order.map((op) => planOperator(index, op, partitioning, placement, streams, edges, pools)),
      edges,
      partitions: planPartitions(partitioning, streams),
      streams: streams.streams.map((s) => ({ id: s.id, device: s.device, partitions: [...s.partitions] })),
      pools: [...pools.values()],
      diagnostics: [...log.entries],
    }),
  );
}

function failure(graph: Graph, log: DiagnosticLog): Err {
  return { ok: false, error: new CompileError(graph.name, log.entries) };
}

function planEdges(
  index: GraphIndex,
  order: readonly Operator[],
  depths: ReadonlyMap<IndexedEdge, ResolvedQueueDepth>,
  pools: ReadonlyMap<OutputPort, TensorAllocationRecord>,
): PlanEdge[] {
  const position = new Map(order.map((op, i) => [op, i]));
  const at = (op: Operator): number => position.get(op) ?? 0;
  return [...index.edges]
    .sort((a, b) => at(a.producer) - at(b.producer) || at(a.consumer) - at(b.consumer) || compareText(a.id, b.id))
    .map((edge) => {
      const depth = depths.get(edge) as ResolvedQueueDepth;
      return {
        id: edge.id,
        producer: { operator: edge.producer.name, port: edge.flow.output.name },
        consumer: { operator: edge.consumer.name, port: edge.flow.input.name },
        queueDepth: depth.queueDepth,
        queueDepthSource: depth.source,
        pool: pools.get(edge.flow.output)?.id ?? null,
      };
    });
}

function planOperator(
  index: GraphIndex,
  op: Operator,
  partitioning: Partitioning,
  placement: Placement,
  streams: StreamAssignment,
  edges: readonly PlanEdge[],
  pools: ReadonlyMap<OutputPort, TensorAllocationRecord>,
): PlanOperator {
  const spec = index.specs.get(op);
  const cudaActive = placement.cudaActive.get(op) === true;
  return {
    name: op.name,
    operator: op,
    partition: (partitioning.partitionOf.get(op) as PartitionDraft).id,
    device: cudaActive ? (placement.operatorDevice.get(op) ?? null) : null,
    stream: cudaActive ? (streams.streamOf.get(op) ?? null) : null,
    cudaActive,
    inputs: (spec?.inputs ?? []).map((port) => ({
      name: port.name,
      optional: port.optional,
      memoryKind: port.requirements.memoryKind ?? null,
      dtype: port.requirements.dtype ?? null,
      rank: port.requirements.rank ?? null,
      edge: edges.find((e) => e.consumer.operator === op.name && e.consumer.port === port.name)?.id ?? null,
    })),
    outputs: (spec?.outputs ?? []).map((port) => ({
      name: port.name,
      tensor:
        port.tensor === null
          ? null
          : {
              memoryKind: port.tensor.representation.memoryKind,
              dtype: port.tensor.representation.dtype,
              rank: port.tensor.representation.rank,
              storage: port.tensor.storage,
              maxByteSpan: port.tensor.bounds?.maxByteSpan ?? null,
              maxRank: port.tensor.bounds?.maxRank ?? null,
            },
      device: placement.outputDevice.get(port) ?? null,
      edges: edges
        .filter((e) => e.producer.operator === op.name && e.producer.port === port.name)
        .map((e) => e.id)
        .sort(compareText),
      pool: pools.get(port)?.id ?? null,
    })),
  };
}

function planPartitions(partitioning: Partitioning, streams: StreamAssignment): PlanPartition[] {
  return partitioning.partitions.map((p) => ({
    id: p.id,
    operators: p.operators.map((op) => op.name),
    hostOnly: p.hostOnly,
    streams: [...(streams.streamsOfPartition.get(p) ?? [])],
  }));
}
