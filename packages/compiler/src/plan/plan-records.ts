import type { Device, MemoryKind } from '@hs/streams';
import type { DType } from '@hs/tensor';
import type { Operator } from '../authoring/operator.js';
import type { EdgeDropPolicy } from '../authoring/graph.js';
import type { TensorOutputStorage } from '../authoring/tensor-output-spec.js';
import type { QueueDepthSource } from '../compile/queue-depths.js';
import type { PortRateSource } from '../compile/resolve-rates.js';
import type { ParamFieldDomain, ParamMutability } from '../params/param-field.js';
import type { Rate, RateRatio } from '../rates/rate.js';

/** One end of an edge: operator and port names. */
export interface PortRef {
  readonly operator: string;
  readonly port: string;
}

/** An input as planned. */
export interface PlanInput {
  readonly name: string;
  /** True when it may stay unconnected. */
  readonly optional: boolean;
  /** Required memory kind, or `null` when any is accepted. */
  readonly memoryKind: MemoryKind | null;
  /** Required dtype, or `null` when any is accepted. */
  readonly dtype: DType | null;
  /** Required rank, or `null` when any is accepted. */
  readonly rank: number | null;
  /** Id of the edge feeding it, or `null` when unconnected or fed by a topic. */
  readonly edge: string | null;
  /** Name of the external topic it subscribes to, or `null`. */
  readonly topic: string | null;
}

/** An output's tensor declaration as planned. */
export interface PlanTensorOutput {
  readonly memoryKind: MemoryKind;
  readonly dtype: DType;
  readonly rank: number;
  readonly storage: TensorOutputStorage;
  /** Declared slot bound in bytes; `null` when no bounds were given (pass-through). */
  readonly maxByteSpan: number | null;
  /** Declared (or defaulted) largest rank; `null` when no bounds were given. */
  readonly maxRank: number | null;
}

/** An output as planned. */
export interface PlanOutput {
  readonly name: string;
  /** What it publishes, or `null` when `producesTensor()` was not called. */
  readonly tensor: PlanTensorOutput | null;
  /** Bound CUDA device for CUDA kinds, `cpu` for host kinds, `null` without a tensor or binding. */
  readonly device: Device | null;
  /** Ids of the edges it feeds, sorted. */
  readonly edges: readonly string[];
  /** Id of its pool (`runtimePool` outputs), else `null`. */
  readonly pool: string | null;
  /** Name of the external topic it publishes to, or `null`. */
  readonly topic: string | null;
}

/** An operator as planned. */
export interface PlanOperator {
  readonly name: string;
  /** The authored instance the runtime calls (not in JSON, not frozen). */
  readonly operator: Operator;
  /** Id of its execution partition. */
  readonly partition: string;
  /** Its one device when CUDA-active, else `null`. */
  readonly device: Device | null;
  /** Id of its planned stream when CUDA-active, else `null`. */
  readonly stream: string | null;
  readonly cudaActive: boolean;
  /** In declaration order. */
  readonly inputs: readonly PlanInput[];
  /** In declaration order. */
  readonly outputs: readonly PlanOutput[];
}

/** An edge (one flow) as planned. */
export interface PlanEdge {
  /** `producer.port->consumer.port`. */
  readonly id: string;
  readonly producer: PortRef;
  readonly consumer: PortRef;
  /** Active queue entries (generation zero). */
  readonly queueDepth: number;
  /** Entries the admitted rate domain may need: the channel's capacity (equals `queueDepth` unless automatic). */
  readonly admittedQueueDepth: number;
  /** `explicit` (given to `addFlow()`), `automatic` (rate-and-contract sizing) or `default` (`defaultQueueDepth`). */
  readonly queueDepthSource: QueueDepthSource;
  /** Id of the producer output's pool, or `null` (pass-through or no tensor). */
  readonly pool: string | null;
  /** What an emit onto this edge does when its queue is full (`block` unless given to `addFlow()`). */
  readonly dropPolicy: EdgeDropPolicy;
  /**
   * True when the consumer is host-only (no planned stream) and the producer CUDA-active: the runtime
   * waits on the host for the producer's readiness before the consumer's `compute()` — the only hidden
   * host wait hs makes. Spec: "Host access".
   */
  readonly hostWait: boolean;
}

/** An execution partition: a linear chain of operators with one serial callback owner. */
export interface PlanPartition {
  /** `partition:<head operator>`. */
  readonly id: string;
  /** Operator names in topological order. */
  readonly operators: readonly string[];
  /** True when no operator is CUDA-active; such a partition has no stream. */
  readonly hostOnly: boolean;
  /** Ids of the streams its operators submit to. */
  readonly streams: readonly string[];
}

/** A planned compute stream, materialized and owned by the runtime. */
export interface PlanStream {
  /** `stream:<partition head>@cuda:N` or `stream:shared@cuda:N`. */
  readonly id: string;
  readonly device: Device;
  /** Ids of the partitions that submit to it. */
  readonly partitions: readonly string[];
}

/** Names of the slot-count terms. */
export type SlotCountTermName =
  | 'maxConsumerQueueDepth'
  | 'consumerInHand'
  | 'retainedHistory'
  | 'retirement'
  | 'producerLoan'
  /** A slot whose release is on its way back from another process (boundary pools only). */
  | 'boundaryReturn';

/** One term of a slot-count sum. */
export interface SlotCountTerm {
  readonly term: SlotCountTermName;
  /** Slots this term contributes (active generation). */
  readonly value: number;
  /** Slots this term contributes over the admitted rate domain. */
  readonly admittedValue: number;
  /** Where the value comes from. */
  readonly source: string;
}

/** How a pool's slot count (and slot bytes) was derived. */
export interface SlotCountDerivation {
  /** The summed terms, in order. */
  readonly terms: readonly SlotCountTerm[];
  /** One line, for example `slotCount = 2 (...) + 1 (...) + 1 (...) + 1 (...) = 5; slotBytes = ...`. */
  readonly text: string;
}

/**
 * Everything the runtime needs to materialize one output's pool before arming.
 * Spec: "Sized cold, borrowed hot", "Fanout release-stream caps".
 */
export interface TensorAllocationRecord {
  /** `pool:operator.port`. */
  readonly id: string;
  readonly producer: PortRef;
  readonly memoryKind: MemoryKind;
  /** CUDA device for CUDA kinds, `cpu` for host kinds. */
  readonly device: Device;
  readonly dtype: DType;
  /** Per-slot byte span bound (bytes): declared, or resolved from a byte-span expression. */
  readonly maxByteSpan: number;
  /** `declared`, or `derived` (see `ExecutionPlan.tensorByteSpanDerivations()`). */
  readonly byteSpanSource: 'declared' | 'derived';
  /** `declared`, or the parameter key (`op.params.field`) that selected the memory kind. */
  readonly memoryKindSource: string;
  readonly maxRank: number;
  /** Slot alignment in bytes (256). */
  readonly alignment: number;
  /** Bytes per slot: `maxByteSpan` rounded up to `alignment`. */
  readonly slotBytes: number;
  /** Slots materialized: the admitted logical entries (max admitted consumer depth + retained history + retirement + producer loan). */
  readonly slotCount: number;
  /** Logical entries the active generation needs (max active consumer depth + the same other terms). */
  readonly activeSlotCount: number;
  /** Provider reservation: `slotBytes * slotCount` (bytes). */
  readonly totalBytes: number;
  /** Logical payload capacity, active: `maxByteSpan * activeSlotCount` (bytes). */
  readonly activeLogicalBytes: number;
  /** Logical payload capacity, admitted: `maxByteSpan * slotCount` (bytes). */
  readonly admittedLogicalBytes: number;
  /** Release streams tracked per slot (see `releaseStreamCap`). Spec: "Fanout release-stream caps". */
  readonly maxReleaseStreams: number;
  /** How `maxReleaseStreams` was computed. */
  readonly releaseStreamCap: ReleaseStreamCapDerivation;
  /** Id of the stream that writes the slots, or `null` for a host writer. */
  readonly producerStream: string | null;
  /** Ids of the edges that consume it, sorted. */
  readonly consumers: readonly string[];
  readonly derivation: SlotCountDerivation;
  /** What makes it a boundary pool of an external topic, or `null` for a process-local pool. */
  readonly boundary: BoundaryPoolInfo | null;
}

/**
 * How a pool crosses a process boundary. Spec: "Crossing process boundaries: the generation fence",
 * "Pinned-host readiness follows the writer", "Current limitations" (managed memory never crosses).
 */
export interface BoundaryPoolInfo {
  readonly topic: string;
  /** `posixShm` (host, pinnedHost: one shared segment, registered with CUDA for pinnedHost) or `cudaIpc` (cudaDevice: one allocation exported once; slots are offsets). */
  readonly transport: 'posixShm' | 'cudaIpc';
  /**
   * `direct`: the output's own runtime pool is shared and its loans are published as they are;
   * `copy`: a pass-through output, whose tensors are copied into this pool when emitted (one
   * same-device copy on the producer stream for device memory, one device-to-host copy for host memory).
   */
  readonly staging: 'direct' | 'copy';
  /**
   * `generation`: slots are written on the producer stream, so each commit records a generation fence
   * the importer waits for on its own stream; `none`: a host writer, complete at commit, no fence.
   */
  readonly fence: 'generation' | 'none';
  /** Slots one subscriber may hold at once. */
  readonly subscriberQueueDepth: number;
  /** Most subscribers attached at once. */
  readonly maxSubscribers: number;
}

/** One external-topic endpoint of the graph. Spec: "Crossing process boundaries: the generation fence". */
export interface TopicEndpointRecord {
  readonly topic: string;
  /** `publish`: a graph output exported to the topic; `subscribe`: a graph input imported from it. */
  readonly direction: 'publish' | 'subscribe';
  readonly port: PortRef;
  /** Memory kind crossing the boundary (publish: the output's; subscribe: the input's required kind). */
  readonly memoryKind: MemoryKind;
  /** Endpoint device: the CUDA device of cudaDevice and pinnedHost endpoints, `cpu` for host ones. */
  readonly device: Device;
  /** `posixShm` or `cudaIpc` (see `BoundaryPoolInfo.transport`). */
  readonly transport: 'posixShm' | 'cudaIpc';
  /** The endpoint operator's planned stream, or `null` when it is host-only. */
  readonly stream: string | null;
  /** Publish: slots one subscriber may hold; subscribe: imported entries queued before the consumer. */
  readonly queueDepth: number;
  readonly queueDepthSource: 'explicit' | 'default';
  /** Publish: most subscribers at once; subscribe: `null`. */
  readonly maxSubscribers: number | null;
  /** Publish: id of the boundary pool; subscribe: `null` (the slots belong to the publisher). */
  readonly pool: string | null;
  /** Declared dtype (publish) or required dtype (subscribe), or `null` when any. */
  readonly dtype: DType | null;
  /** Declared or required rank, or `null` when any. */
  readonly rank: number | null;
}

/** How one output's slot byte bound was derived. Spec: "Derive slot bytes from deployment parameters". */
export interface ByteSpanDerivationRecord {
  readonly output: PortRef;
  /** Readable expression with resolved leaves. */
  readonly expression: string;
  /** Resolved per-slot bytes. */
  readonly bytes: number;
  /** Parameter keys and input keys it read, sorted. */
  readonly dependencies: readonly string[];
  /** Projector ids it ran, sorted. */
  readonly projectors: readonly string[];
}

/** One field of an operator's bound parameters as planned (sensitive values redacted as `null`). */
export interface PlanParamField {
  readonly name: string;
  readonly kind: string;
  readonly mutability: ParamMutability;
  readonly sensitive: boolean;
  /** Admitted domain. */
  readonly domain: ParamFieldDomain;
  /** Generation-zero value, or `null` when sensitive. */
  readonly value: unknown;
}

/** An operator's bound parameters. */
export interface PlanParams {
  readonly operator: string;
  readonly schema: string;
  readonly version: number;
  readonly fields: readonly PlanParamField[];
}

/** A port's resolved rate. Spec: "Size queue entries from nominal rates". */
export interface PortRateRecord {
  readonly port: PortRef;
  readonly direction: 'input' | 'output';
  readonly source: PortRateSource;
  /** Generation-zero rate. */
  readonly active: Rate;
  /** Admitted bounds (equal to `active` for fixed rates). */
  readonly min: Rate;
  readonly max: Rate;
  /** Runtime rate parameter driving it (`op.params.field`), or `null`. */
  readonly parameter: string | null;
  /** The rate is `parameter value × factor` (or `factor` Hz without a parameter); exact rational text. */
  readonly factor: string;
}

/** The accumulation horizon of an edge's input: the period of its consumer's trigger. */
export interface AccumulationHorizonRecord {
  readonly edge: string;
  /** `clock 15 Hz` or `input op.port`. */
  readonly trigger: string;
  /** Horizon in seconds (exact rational text) at generation zero. */
  readonly seconds: string;
  /** Longest horizon over the admitted domain (seconds). */
  readonly admittedSeconds: string;
}

/** One semantic hard-floor contributor of an edge. */
export interface HardFloorContributor {
  readonly edge: string;
  readonly kind: 'minimumQueue' | 'producerBurst' | 'windowRetention' | 'selectorRetention';
  /** Scenario name; `*` for every scenario. */
  readonly scenario: string;
  /** Contributors of one group are alternatives (max); groups are summed. */
  readonly group: 'retention' | 'burst';
  readonly entries: number;
}

/** A rate term as planned: `factor` Hz, or `parameter value × factor`. */
export interface PlanRateTerm {
  readonly parameter: string | null;
  /** Exact rational text (`n` or `n/d`). */
  readonly factor: string;
}

/** How an edge's queue depth was chosen. Spec: "Size queue entries from nominal rates". */
export interface QueueSizingRecipe {
  readonly edge: string;
  readonly source: QueueDepthSource;
  readonly inputRate: { readonly source: PortRateSource; readonly active: Rate; readonly max: Rate; readonly term: PlanRateTerm } | null;
  readonly triggerRate: { readonly trigger: string; readonly active: Rate; readonly min: Rate; readonly term: PlanRateTerm } | null;
  readonly headroom: RateRatio;
  /** `ceil(rate × horizon)`, or `null` without rate evidence. */
  readonly nominalArrivals: number | null;
  /** `ceil(nominalArrivals × headroom)`, or `null`. */
  readonly recommendation: number | null;
  readonly hardFloor: number;
  /** `max(hardFloor, recommendation)`, or `null`. */
  readonly automaticDepth: number | null;
  /** `max(hardFloor, ceil(ceil(maxRate × horizon) × headroom))`, or `null`. */
  readonly admittedCeiling: number | null;
  readonly explicitDepth: number | null;
  readonly activeDepth: number;
  readonly admittedDepth: number;
}

/** What a pool's capacity depends on: per-slot bytes joined with final logical provider entries. */
export interface PoolCapacityDependency {
  readonly pool: string;
  readonly perSlotBytes: number;
  readonly byteSpanSource: 'declared' | 'derived';
  /** Edges whose depths size it. */
  readonly edges: readonly string[];
  readonly activeEntries: number;
  readonly admittedEntries: number;
  readonly activeLogicalBytes: number;
  readonly admittedLogicalBytes: number;
}

/** The physical provider reservation of a pool (not the logical product). */
export interface ProviderAllocationPlan {
  readonly pool: string;
  readonly slotBytes: number;
  readonly alignment: number;
  readonly slots: number;
  readonly reservedBytes: number;
}

/**
 * Fusion evidence of one proven edge: the runtime re-validates it against the plan, then skips the
 * readiness record, the consumer's self-wait and its release registration on that edge.
 * Spec: "When the fences disappear: proven linear chains".
 */
export interface FusedEdgeRecord {
  readonly edge: string;
  readonly pool: string;
  /** The one stream both endpoints are bound to. */
  readonly stream: string;
  readonly evidence: {
    /** Successors of the producer output in total (1). */
    readonly acceptedSuccessors: number;
    readonly processLocal: boolean;
    readonly producerStream: string;
    readonly consumerStream: string;
  };
}

/** How a pool's per-slot release-stream cap was computed. Spec: "Fanout release-stream caps". */
export interface ReleaseStreamCapDerivation {
  /** The device whose events order the pool (`cuda:N`), or `null` when no stream ever registers. */
  readonly domain: string | null;
  /** CUDA-active operators on that device other than the producer. */
  readonly otherCudaOperators: number;
  /** Streams reserved for each of them (2: runtime stream and one application-selected stream). */
  readonly streamsPerOtherOperator: number;
  /** 1 when the producer's stream is on the domain device. */
  readonly producerStreams: number;
  /** Descriptor-staging streams (none in hs yet). */
  readonly stagingStreams: number;
  /** `max(1, otherCudaOperators × streamsPerOtherOperator + producerStreams + stagingStreams)`. */
  readonly cap: number;
}
