import type { PlanOptions } from '../compile/compile-options.js';
import type { Diagnostic } from '../compile/diagnostics.js';
import { deepFreeze } from './deep-freeze.js';
import { PLAN_JSON_SCHEMA, toCanonicalJson, type JsonValue } from './plan-json.js';
import type {
  AccumulationHorizonRecord,
  ByteSpanDerivationRecord,
  FusedEdgeRecord,
  HardFloorContributor,
  PlanEdge,
  PlanParams,
  PlanPartition,
  PlanStream,
  PoolCapacityDependency,
  PortRateRecord,
  ProviderAllocationPlan,
  QueueSizingRecipe,
  TensorAllocationRecord,
  TopicEndpointRecord,
} from './plan-records.js';
import type { PlanOperator } from './operator-records.js';
import { renderPlanText } from './plan-text.js';
import { renderPlanDot, renderPlanMermaid } from './plan-graph-rendering.js';

/**
 * The records an `ExecutionPlan` is built from, and the fields every plan carries (the class below
 * takes them from this interface, so each field is declared and documented once, here).
 */
export interface ExecutionPlanRecords {
  /** Graph name. */
  readonly name: string;
  /** Compile options with defaults applied (the stream policy is frozen here). */
  readonly options: PlanOptions;
  /** Operators in topological order (ties by name). */
  readonly operators: readonly PlanOperator[];
  /** Edges by producer, then consumer, then id. */
  readonly edges: readonly PlanEdge[];
  /** Execution partitions, split at forks and joins. */
  readonly partitions: readonly PlanPartition[];
  /** Planned compute streams. */
  readonly streams: readonly PlanStream[];
  /** One tensor allocation record per `runtimePool` output and per published pass-through output (boundary pools carry `boundary`). */
  readonly pools: readonly TensorAllocationRecord[];
  /** External-topic endpoints (publications and subscriptions), sorted by topic. */
  readonly topics: readonly TopicEndpointRecord[];
  /** Bound parameters per operator (sensitive values redacted). */
  readonly params: readonly PlanParams[];
  /** Resolved port rates. */
  readonly portRates: readonly PortRateRecord[];
  /** Byte-span derivations of derived outputs. */
  readonly byteSpanDerivations: readonly ByteSpanDerivationRecord[];
  /** Accumulation horizons of edges with a temporal contract and a rate. */
  readonly accumulationHorizons: readonly AccumulationHorizonRecord[];
  /** Hard-floor contributors, per edge. */
  readonly hardFloorContributors: readonly HardFloorContributor[];
  /** One queue-sizing recipe per edge, in edge order. */
  readonly queueSizingRecipes: readonly QueueSizingRecipe[];
  /** Per pool: per-slot bytes joined with logical entries. */
  readonly poolCapacityDependencies: readonly PoolCapacityDependency[];
  /** Per pool: the provider reservation. */
  readonly providerAllocationPlans: readonly ProviderAllocationPlan[];
  /** Fusion evidence of proven linear-chain edges, sorted by edge id. */
  readonly fusedEdges: readonly FusedEdgeRecord[];
  /** Warnings of the successful compile. */
  readonly diagnostics: readonly Diagnostic[];
}

/** The field names of `ExecutionPlanRecords` in declaration order; `satisfies` keeps the list complete and exact. */
const RECORD_FIELDS = Object.keys({
  name: true,
  options: true,
  operators: true,
  edges: true,
  partitions: true,
  streams: true,
  pools: true,
  topics: true,
  params: true,
  portRates: true,
  byteSpanDerivations: true,
  accumulationHorizons: true,
  hardFloorContributors: true,
  queueSizingRecipes: true,
  poolCapacityDependencies: true,
  providerAllocationPlans: true,
  fusedEdges: true,
  diagnostics: true,
} satisfies Record<keyof ExecutionPlanRecords, true>) as readonly (keyof ExecutionPlanRecords)[];

/** The record fields of `source` (and nothing else), as a new plain object. */
function recordFields(source: ExecutionPlanRecords): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const field of RECORD_FIELDS) fields[field] = source[field];
  return fields;
}

// Declaration merging: the class carries the record fields declared (and documented) once above.
export interface ExecutionPlan extends ExecutionPlanRecords {}

/**
 * The immutable result of `compile()`: every operator's partition, device and stream, every edge's
 * queue depth, every pool's geometry, as concrete records the runtime consumes without re-deriving
 * anything. All data is deeply frozen (operator instances, devices and dtypes are shared, not frozen).
 * Its record fields are those of `ExecutionPlanRecords`.
 *
 * Orders: operators and partitions topologically (ties by name); edges by producer, then consumer,
 * then id; streams in partition order (`sharedProcessDevice`: by device ordinal); pools in producer order.
 * @example
 * ```ts
 * import { Graph, Operator, Rate, compile, type InputPort, type OperatorSpec, type OutputPort } from '@hs/compiler';
 * import { MemoryKind, unwrap } from '@hs/streams';
 * import { DType } from '@hs/tensor';
 *
 * const GRAY = { memoryKind: MemoryKind.Host, dtype: DType.uint8, rank: 2 };
 * class Camera extends Operator {
 *   frames!: OutputPort;
 *   setup(spec: OperatorSpec): void {
 *     this.frames = spec.output('frames').producesTensor({ representation: GRAY, bounds: { maxByteSpan: 640 * 480 }, storage: 'runtimePool' }).nominalRate(Rate.hz(30));
 *   }
 *   compute(): void {}
 * }
 * class Recorder extends Operator {
 *   frames!: InputPort;
 *   setup(spec: OperatorSpec): void {
 *     this.frames = spec.input('frames', GRAY);
 *     spec.temporalContract({ trigger: { clock: Rate.hz(10) } });
 *   }
 *   compute(): void {}
 * }
 *
 * const graph = new Graph('capture');
 * graph.addFlow(graph.add(new Camera('camera')).frames, graph.add(new Recorder('recorder')).frames);
 * const plan = unwrap(compile(graph));
 * const pool = plan.pool('pool:camera.frames');
 * console.log(`pool ${pool?.id}: ${pool?.slotCount} slots x ${pool?.slotBytes} B = ${pool?.totalBytes} B in ${pool?.memoryKind}`);
 * console.log(plan.toText().split('\n')[0]); // also toJSON() (canonical, via JSON.stringify), toDot(), toMermaid()
 * ```
 */
export class ExecutionPlan {
  readonly #operatorByName: ReadonlyMap<string, PlanOperator>;
  readonly #edgeById: ReadonlyMap<string, PlanEdge>;
  readonly #poolById: ReadonlyMap<string, TensorAllocationRecord>;
  readonly #recipeByEdge: ReadonlyMap<string, QueueSizingRecipe>;

  /** @internal Built by `compile()`. */
  constructor(records: ExecutionPlanRecords) {
    Object.assign(this, recordFields(deepFreeze({ ...records })));
    this.#operatorByName = new Map(this.operators.map((r) => [r.name, r]));
    this.#edgeById = new Map(this.edges.map((r) => [r.id, r]));
    this.#poolById = new Map(this.pools.map((r) => [r.id, r]));
    this.#recipeByEdge = new Map(this.queueSizingRecipes.map((r) => [r.edge, r]));
    Object.freeze(this);
  }

  /** The operator record named `name`, or `undefined`. */
  operator(name: string): PlanOperator | undefined {
    return this.#operatorByName.get(name);
  }

  /** The edge record with id `producer.port->consumer.port`, or `undefined`. */
  edge(id: string): PlanEdge | undefined {
    return this.#edgeById.get(id);
  }

  /** The topic endpoint records of topic `name` (one publication, or this graph's subscriptions). */
  topic(name: string): readonly TopicEndpointRecord[] {
    return this.topics.filter((t) => t.topic === name);
  }

  /** The pool record with id `pool:operator.port` (or `boundary:<topic>`), or `undefined`. */
  pool(id: string): TensorAllocationRecord | undefined {
    return this.#poolById.get(id);
  }

  /** Tensor allocation records (same as `pools`). Spec: "Derive slot bytes from deployment parameters". */
  tensorAllocations(): readonly TensorAllocationRecord[] {
    return this.pools;
  }

  /** Byte-span derivations: resolved per-slot bytes of derived outputs. */
  tensorByteSpanDerivations(): readonly ByteSpanDerivationRecord[] {
    return this.byteSpanDerivations;
  }

  /** The planned compute streams (same as `streams`), for budgeting device resources. */
  cudaComputeStreams(): readonly PlanStream[] {
    return this.streams;
  }

  /** The queue-sizing recipe of edge `id`, or `undefined`. */
  queueSizingRecipe(id: string): QueueSizingRecipe | undefined {
    return this.#recipeByEdge.get(id);
  }

  /**
   * Canonical JSON data (called by `JSON.stringify(plan)`): keys sorted at every level, a `schema`
   * marker (`hs.execution-plan/1`), stable ids, devices as `cpu`/`cuda:N`, dtypes by name, no operator
   * instances. Inspection output, not a reload format.
   */
  toJSON(): JsonValue {
    return toCanonicalJson({ schema: PLAN_JSON_SCHEMA, ...recordFields(this) });
  }

  /** The plan as a Graphviz DOT digraph: partitions (clusters) with streams, queue depths, pool sizes, fused edges in bold. */
  toDot(): string {
    return renderPlanDot(this);
  }

  /** The plan as a Mermaid flowchart: partitions (subgraphs) with streams, queue depths, pool sizes, fused edges as thick links. */
  toMermaid(): string {
    return renderPlanMermaid(this);
  }

  /** A readable multi-line summary: partitions and streams, operators, edges with depths, pools with derivations, diagnostics. */
  toText(): string {
    return renderPlanText(this);
  }
}
