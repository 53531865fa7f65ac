import { ErrorCode, HsError, ok, type Err, MemoryKind, type Result } from '@hs/streams';
import { Graph } from '../authoring/graph.js';
import type { Operator } from '../authoring/operator.js';
import type { OutputPort } from '../authoring/ports.js';
import { ExecutionPlan } from '../plan/execution-plan.js';
import type { PlanEdge, PlanParams, PlanPartition, PortRateRecord, TensorAllocationRecord } from '../plan/plan-records.js';
import type { PlanOperator, PlanRetention, PlanSchedule } from '../plan/operator-records.js';
import { DEFAULT_SCENARIO, type InputRetention, type TemporalContract } from '../authoring/operator-spec.js';
import { buildAllocationRecords } from './allocation-records.js';
import { resolveCompileOptions, type CompileOptions } from './compile-options.js';
import { CompileError, DiagnosticLog } from './diagnostics.js';
import { indexGraph, type GraphIndex, type IndexedEdge } from './graph-index.js';
import { partitionGraph, type PartitionDraft, type Partitioning } from './partitions.js';
import { placeOperators, type Placement } from './placement.js';
import { resolveQueueDepths, type ResolvedQueueDepth } from './queue-depths.js';
import { resolveByteSpans, type ResolvedByteSpan } from './resolve-byte-spans.js';
import { resolveMemoryKinds, type ResolvedMemoryKind } from './resolve-memory-kinds.js';
import { resolveRates, type RateResolution, type ResolvedRate } from './resolve-rates.js';
import { validateParams } from './validate-params.js';
import { proveFusedEdges } from './fused-edges.js';
import { formatRational } from '../rates/rational.js';
import { assignStreams, type StreamAssignment } from './streams.js';
import { compareText } from './text-order.js';
import { validateGraphStructure } from './validate-graph.js';
import { validateTensorContracts } from './validate-tensor-contracts.js';
import { validateTemporalContracts } from './validate-temporal-contracts.js';
import { resolveTopics, type ResolvedTopics } from './resolve-topics.js';
import { buildTopicEndpoints } from './topic-endpoints.js';

/**
 * Compiles `graph` into an immutable `ExecutionPlan`: validates structure, parameters, tensor bounds
 * and layouts, and device bindings; resolves parameter-derived memory kinds and byte spans, port
 * rates and rate-aware queue depths; splits execution partitions at forks and joins; plans one
 * stream per (partition, device) (or per device under `sharedProcessDevice`); sizes one pool per
 * `runtimePool` output. Deterministic: the same graph and options give an identical plan, whatever
 * order the graph was built in.
 *
 * Returns `err(CompileError)` (code `ErrorCode.CompileError`) carrying every diagnostic found when any
 * check fails; warnings of a successful compile are in `plan.diagnostics`.
 * Spec: "One stream per active execution partition and device", "Sized cold, borrowed hot",
 * "Derive slot bytes from deployment parameters", "Derive memory kind from deployment parameters",
 * "Size queue entries from nominal rates", "Current limitations".
 * @throws HsError `InvalidArgument` when `graph` is not a `Graph` or `options` is not an object.
 * @example
 * ```ts
 * import { CompileError, Graph, Operator, compile, type OperatorSpec } from '@hs/compiler';
 * import { Device, MemoryKind } from '@hs/streams';
 * import { DType } from '@hs/tensor';
 *
 * class Renderer extends Operator {
 *   setup(spec: OperatorSpec): void {
 *     const representation = { memoryKind: MemoryKind.CudaDevice, dtype: DType.uint8, rank: 3 };
 *     spec.output('image').producesTensor({ representation, bounds: { maxByteSpan: 8 << 20 }, storage: 'runtimePool' });
 *   }
 *   compute(): void {}
 * }
 *
 * const graph = new Graph('render');
 * graph.add(new Renderer('renderer'));
 * // The compiler never guesses a device: a runtime pool in cudaDevice memory needs its own output binding.
 * const result = compile(graph, { deployment: { bindTensorOutputDevice: { 'renderer.image': Device.cuda(0) } } });
 * if (!result.ok) {
 *   if (result.error instanceof CompileError) for (const d of result.error.diagnostics) console.error(`${d.severity} ${d.code}: ${d.message}`);
 *   throw result.error;
 * }
 * const plan = result.value;
 * console.log(`${plan.streams.length} stream, ${plan.pools[0]?.slotCount} slots of ${plan.pools[0]?.slotBytes} B; warnings: ${plan.diagnostics.map((d) => d.code).join(', ')}`);
 * ```
 */
export function compile(graph: Graph, options?: CompileOptions): Result<ExecutionPlan> {
  if (!(graph instanceof Graph)) throw new HsError(ErrorCode.InvalidArgument, 'compile(graph, options): graph must be a Graph');
  const log = new DiagnosticLog();
  const planOptions = resolveCompileOptions(options, log);
  const index = indexGraph(graph);
  const structure = validateGraphStructure(index, log);
  const validParams = validateParams(index, log);
  const kinds = resolveMemoryKinds(index, validParams, log);
  validateTensorContracts(index, kinds, log);
  const topics = resolveTopics(index, kinds, planOptions.defaultQueueDepth, log);
  validateTemporalContracts(index, topics, log);
  // Name-keyed bindings are ambiguous while names repeat, so placement waits for unique names.
  const placement = structure.namesUnique ? placeOperators(index, planOptions, kinds, topics, log) : null;
  if (structure.order === null) return failure(graph, log);
  const order = structure.order;
  const rates = resolveRates(index, order, validParams, log);
  const depths = resolveQueueDepths(index, rates, planOptions.defaultQueueDepth, planOptions.headroomRatio, log);
  const spans = resolveByteSpans(index, order, validParams, topics, log);
  if (log.hasErrors || placement === null) return failure(graph, log);

  const partitioning = partitionGraph(index, order, placement.cudaActive);
  const streams = assignStreams(partitioning.partitions, placement.operatorDevice, planOptions.computeStreamPolicy);
  const pools = buildAllocationRecords(
    index,
    { order, depths, outputDevice: placement.outputDevice, streamOf: streams.streamOf, kinds, spans, operatorDevice: placement.operatorDevice, topics },
    log,
  );
  if (log.hasErrors) return failure(graph, log);

  const edges = planEdges(index, order, depths, pools, placement.cudaActive);
  const edgeOrder = edges.map((e) => e.id);
  const depthById = new Map([...depths].map(([edge, depth]) => [edge.id, depth]));
  const orderedDepths = edgeOrder.map((id) => depthById.get(id) as ResolvedQueueDepth);
  const poolRecords = [...pools.values()];
  return ok(
    new ExecutionPlan({
      name: graph.name,
      options: planOptions,
      operators: order.map((op) => planOperator(index, op, partitioning, placement, streams, pools, kinds, spans, topics)),
      edges,
      partitions: planPartitions(partitioning, streams),
      streams: streams.streams.map((s) => ({ id: s.id, device: s.device, partitions: [...s.partitions] })),
      pools: poolRecords,
      topics: buildTopicEndpoints(topics, placement.topicDevice, streams.streamOf, pools, placement.operatorDevice),
      params: planParams(index, order),
      portRates: portRateRecords(index, order, rates),
      byteSpanDerivations: order.flatMap((op) =>
        (index.specs.get(op)?.outputs ?? []).flatMap((port) => {
          const derivation = spans.get(port)?.derivation;
          return derivation === undefined || derivation === null ? [] : [derivation];
        }),
      ),
      accumulationHorizons: orderedDepths.flatMap((d) => (d.horizon === null ? [] : [d.horizon])),
      hardFloorContributors: orderedDepths.flatMap((d) => d.contributors),
      queueSizingRecipes: orderedDepths.map((d) => d.recipe),
      poolCapacityDependencies: poolRecords.map((p) => ({
        pool: p.id,
        perSlotBytes: p.maxByteSpan,
        byteSpanSource: p.byteSpanSource,
        edges: p.consumers,
        activeEntries: p.activeSlotCount,
        admittedEntries: p.slotCount,
        activeLogicalBytes: p.activeLogicalBytes,
        admittedLogicalBytes: p.admittedLogicalBytes,
      })),
      providerAllocationPlans: poolRecords.map((p) => ({
        pool: p.id,
        provider: p.provider,
        memoryKind: p.memoryKind,
        device: p.device,
        tier: p.memoryKind === MemoryKind.CudaDevice ? ('streamOrdered' as const) : ('synchronous' as const),
        slotBytes: p.slotBytes,
        alignment: p.alignment,
        slots: p.slotCount,
        reservedBytes: p.totalBytes,
      })),
      fusedEdges: proveFusedEdges(index, streams.streamOf, pools, topics),
      diagnostics: [...log.entries],
    }),
  );
}

function failure(graph: Graph, log: DiagnosticLog): Err {
  return { ok: false, error: new CompileError(graph.name, log.entries) };
}

function planParams(index: GraphIndex, order: readonly Operator[]): PlanParams[] {
  const out: PlanParams[] = [];
  for (const op of order) {
    const bound = index.specs.get(op)?.boundParams ?? null;
    if (bound === null) continue;
    out.push({
      operator: op.name,
      schema: bound.schema.id,
      version: bound.schema.version,
      fields: Object.entries(bound.schema.fields)
        .sort(([a], [b]) => compareText(a, b))
        .map(([name, field]) => ({
          name,
          kind: field.domain.kind,
          mutability: field.mutability,
          sensitive: field.sensitive,
          domain: field.domain,
          value: field.sensitive ? null : copyValue(bound.values[name]),
        })),
    });
  }
  return out;
}

function portRateRecords(index: GraphIndex, order: readonly Operator[], rates: RateResolution): PortRateRecord[] {
  const out: PortRateRecord[] = [];
  for (const op of order) {
    const spec = index.specs.get(op);
    const add = (port: { name: string }, direction: 'input' | 'output', rate: ResolvedRate | undefined): void => {
      if (rate === undefined) return;
      out.push({
        port: { operator: op.name, port: port.name },
        direction,
        source: rate.source,
        active: rate.active,
        min: rate.min,
        max: rate.max,
        parameter: rate.term.parameter?.key ?? null,
        factor: formatRational(rate.term.factor),
      });
    };
    for (const input of spec?.inputs ?? []) add(input, 'input', rates.inputs.get(input));
    for (const output of spec?.outputs ?? []) add(output, 'output', rates.outputs.get(output));
  }
  return out;
}

function planEdges(
  index: GraphIndex,
  order: readonly Operator[],
  depths: ReadonlyMap<IndexedEdge, ResolvedQueueDepth>,
  pools: ReadonlyMap<OutputPort, TensorAllocationRecord>,
  cudaActive: ReadonlyMap<Operator, boolean>,
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
        admittedQueueDepth: depth.admittedQueueDepth,
        queueDepthSource: depth.source,
        pool: edge.flow.output.tensor?.storage === 'runtimePool' ? (pools.get(edge.flow.output)?.id ?? null) : null,
        dropPolicy: edge.flow.dropPolicy,
        hostWait: cudaActive.get(edge.producer) === true && cudaActive.get(edge.consumer) !== true,
        crossDevice: edge.flow.input.crossDevice,
      };
    });
}

function planOperator(
  index: GraphIndex,
  op: Operator,
  partitioning: Partitioning,
  placement: Placement,
  streams: StreamAssignment,
  pools: ReadonlyMap<OutputPort, TensorAllocationRecord>,
  kinds: ReadonlyMap<OutputPort, ResolvedMemoryKind>,
  spans: ReadonlyMap<OutputPort, ResolvedByteSpan | null>,
  topics: ResolvedTopics,
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
      edge: index.intoInput.get(port)?.[0]?.id ?? null,
      topic: topics.subscriptions.get(port)?.topic ?? null,
    })),
    outputs: (spec?.outputs ?? []).map((port) => ({
      name: port.name,
      tensor:
        port.tensor === null
          ? null
          : {
              memoryKind: kinds.get(port)?.memoryKind as MemoryKind,
              dtype: port.tensor.representation.dtype,
              rank: port.tensor.representation.rank,
              storage: port.tensor.storage,
              maxByteSpan: spans.get(port)?.bytes ?? null,
              maxRank: port.tensor.bounds?.maxRank ?? null,
            },
      device: placement.outputDevice.get(port) ?? null,
      edges: (index.fromOutput.get(port) ?? []).map((e) => e.id),
      pool: port.tensor?.storage === 'runtimePool' ? (pools.get(port)?.id ?? null) : null,
      topic: topics.publications.get(port)?.topic ?? null,
    })),
    schedule: planSchedule(spec?.contract ?? null),
  };
}

/** The plan record of a temporal contract (ports by name). */
function planSchedule(contract: TemporalContract | null): PlanSchedule | null {
  if (contract === null) return null;
  const trigger = contract.trigger;
  const retention = (r: InputRetention): PlanRetention => ({ port: r.input.name, entries: r.entries, scenario: r.scenario ?? DEFAULT_SCENARIO });
  return {
    trigger: 'input' in trigger ? { kind: 'input', port: trigger.input.name } : { kind: 'clock', rate: trigger.clock, missedTicks: trigger.missedTicks ?? 'skip' },
    required: (contract.required ?? []).map((p) => p.name),
    windows: (contract.windows ?? []).map(retention),
    selectors: (contract.selectors ?? []).map(retention),
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

/** A plan-owned copy of a parameter value (arrays are copied so freezing the plan leaves the caller's value alone). */
function copyValue(value: unknown): unknown {
  return Array.isArray(value) ? [...(value as unknown[])] : (value ?? null);
}
