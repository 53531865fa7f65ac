import type { Device, MemoryKind } from '@hs/streams';
import type { DType } from '@hs/tensor';
import type { EdgeDropPolicy } from '../authoring/graph.js';
import type { ParamFieldDomain, ParamMutability } from '../params/param-field.js';
import type { Rate, RateRatio } from '../rates/rate.js';
import type { PortRateSource, QueueDepthSource } from './record-sources.js';

/** One end of an edge: operator and port names. */
export interface PortRef {
  /** Operator name. */
  readonly operator: string;
  /** Port name on that operator. */
  readonly port: string;
}

/** An edge (one flow) as planned. */
export interface PlanEdge {
  /** `producer.port->consumer.port`. */
  readonly id: string;
  /** The producing output. */
  readonly producer: PortRef;
  /** The consuming input. */
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
  /**
   * True when the consumer input was declared `{ crossDevice: true }`: the producer may be on another
   * device, the consumer's stream waits on its readiness event there, and the runtime releases the tensor
   * only after `compute()` settled (no release stream is registered with the producer's pool).
   */
  readonly crossDevice: boolean;
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
  /** The CUDA device the stream is created on. */
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
  /** Which term of the sum. */
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
  /**
   * The provider `RunSession.create` binds to a resource: the output's declared `provider`, else the pool
   * id. A boundary pool's provider is its pool id; its memory comes from the boundary provider, never a binding.
   */
  readonly provider: string;
  /** The output whose tensors live in the pool. */
  readonly producer: PortRef;
  /** Memory kind of the pool's backing allocation. */
  readonly memoryKind: MemoryKind;
  /** CUDA device for CUDA kinds, `cpu` for host kinds. */
  readonly device: Device;
  /** Element type of the pool's tensors. */
  readonly dtype: DType;
  /** Per-slot byte span bound (bytes): declared, or resolved from a byte-span expression. */
  readonly maxByteSpan: number;
  /** `declared`, or `derived` (see `ExecutionPlan.tensorByteSpanDerivations()`). */
  readonly byteSpanSource: 'declared' | 'derived';
  /** `declared`, or the parameter key (`op.params.field`) that selected the memory kind. */
  readonly memoryKindSource: string;
  /** Largest rank a slot's tensor may have (sizes the shape storage of each slot). */
  readonly maxRank: number;
  /** The output's declared representation rank: exact, every allocation from the pool must have it (`maxRank` is the storage bound). */
  readonly rank: number;
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
  /** How `slotCount` and `slotBytes` were derived, term by term. */
  readonly derivation: SlotCountDerivation;
  /** What makes it a boundary pool of an external topic, or `null` for a process-local pool. */
  readonly boundary: BoundaryPoolInfo | null;
}

/**
 * How a pool crosses a process boundary. Spec: "Crossing process boundaries: the generation fence",
 * "Pinned-host readiness follows the writer", "Current limitations" (managed memory never crosses).
 */
export interface BoundaryPoolInfo {
  /** Name of the external topic the pool is published on. */
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
   * the importer waits for on its own stream (cudaDevice, and pinnedHost published with
   * `pinnedHostWriter: 'cudaStream'`: the fence counters lie in the shared segment); `none`: a host writer,
   * complete at commit, no fence (host, and pinnedHost by default: filled by the host writer although its
   * producer has a planned stream).
   */
  readonly fence: 'generation' | 'none';
  /** Slots one subscriber may hold at once. */
  readonly subscriberQueueDepth: number;
  /** Most subscribers attached at once. */
  readonly maxSubscribers: number;
}

/** One external-topic endpoint of the graph. Spec: "Crossing process boundaries: the generation fence". */
export interface TopicEndpointRecord {
  /** External topic name. */
  readonly topic: string;
  /** `publish`: a graph output exported to the topic; `subscribe`: a graph input imported from it. */
  readonly direction: 'publish' | 'subscribe';
  /** The graph output (publish) or input (subscribe) bound to the topic. */
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
  /** `explicit` (given when binding the topic) or `default`. */
  readonly queueDepthSource: 'explicit' | 'default';
  /** Publish: most subscribers at once; subscribe: `null`. */
  readonly maxSubscribers: number | null;
  /** Publish: id of the boundary pool; subscribe: `null` (the slots belong to the publisher). */
  readonly pool: string | null;
  /** Declared dtype (publish) or required dtype (subscribe), or `null` when any. */
  readonly dtype: DType | null;
  /** Declared or required rank, or `null` when any. */
  readonly rank: number | null;
  /**
   * Byte bound of one tensor crossing the topic: publish, the boundary pool's `maxByteSpan`; subscribe,
   * the bound given to `subscribe()` (the import refuses larger descriptors), or `null` when none was.
   * Spec: "Derive slot bytes from deployment parameters" (an imported external-topic bound).
   */
  readonly maxByteSpan: number | null;
  /**
   * Release streams tracked per slot: publish, the boundary pool's `maxReleaseStreams`; subscribe, the
   * device-wide bound for an imported slot in this process (two per CUDA-active operator on the
   * consumer's device, see `importedReleaseStreamCap`; 1 for a host-only consumer).
   * Spec: "Fanout release-stream caps".
   */
  readonly maxReleaseStreams: number;
}

/** How one output's slot byte bound was derived. Spec: "Derive slot bytes from deployment parameters". */
export interface ByteSpanDerivationRecord {
  /** The output whose slot bound was derived. */
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
  /** Field name in the schema. */
  readonly name: string;
  /** Field kind (`integer`, `rate`, `shape`, `enum`, ...). */
  readonly kind: string;
  /** `compileTime`, `recompileRequired` or `runtime`: whether (and how) the value may change after compile(). */
  readonly mutability: ParamMutability;
  /** True when the value is redacted from plans, JSON and diagnostics. */
  readonly sensitive: boolean;
  /** Admitted domain. */
  readonly domain: ParamFieldDomain;
  /** Generation-zero value, or `null` when sensitive. */
  readonly value: unknown;
}

/** An operator's bound parameters. */
export interface PlanParams {
  /** Operator that bound the parameters. */
  readonly operator: string;
  /** Schema id (for example `com.example.Camera`). */
  readonly schema: string;
  /** Schema version. */
  readonly version: number;
  /** One record per schema field, in schema order. */
  readonly fields: readonly PlanParamField[];
}

/** A port's resolved rate. Spec: "Size queue entries from nominal rates". */
export interface PortRateRecord {
  /** The port. */
  readonly port: PortRef;
  /** Whether the port is an input or an output. */
  readonly direction: 'input' | 'output';
  /** Where the rate comes from: `nominal`, `parameter`, `follows`, `upstream`, `expected` or `none`. */
  readonly source: PortRateSource;
  /** Generation-zero rate. */
  readonly active: Rate;
  /** Admitted bounds (equal to `active` for fixed rates). */
  readonly min: Rate;
  /** Upper admitted bound (equal to `active` for fixed rates). */
  readonly max: Rate;
  /** Runtime rate parameter driving it (`op.params.field`), or `null`. */
  readonly parameter: string | null;
  /** The rate is `parameter value × factor` (or `factor` Hz without a parameter); exact rational text. */
  readonly factor: string;
}

/** The accumulation horizon of an edge's input: the period of its consumer's trigger. */
export interface AccumulationHorizonRecord {
  /** Edge id. */
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
  /** Edge id. */
  readonly edge: string;
  /** What demands the entries: a minimum queue, a producer burst, or a window/selector retention of the consumer. */
  readonly kind: 'minimumQueue' | 'producerBurst' | 'windowRetention' | 'selectorRetention';
  /** Scenario name; `*` for every scenario. */
  readonly scenario: string;
  /** Contributors of one group are alternatives (max); groups are summed. */
  readonly group: 'retention' | 'burst';
  /** Queue entries this contributor requires. */
  readonly entries: number;
}

/** A rate term as planned: `factor` Hz, or `parameter value × factor`. */
export interface PlanRateTerm {
  /** Runtime rate parameter (`op.params.field`), or `null` for a fixed rate. */
  readonly parameter: string | null;
  /** Exact rational text (`n` or `n/d`). */
  readonly factor: string;
}

/** How an edge's queue depth was chosen. Spec: "Size queue entries from nominal rates". */
export interface QueueSizingRecipe {
  /** Edge id. */
  readonly edge: string;
  /** `explicit`, `automatic` or `default`: which rule chose the depth. */
  readonly source: QueueDepthSource;
  /** The rate arriving at the edge's input, or `null` without rate evidence. */
  readonly inputRate: {
    /** Where the input's rate comes from. */
    readonly source: PortRateSource;
    /** Generation-zero rate. */
    readonly active: Rate;
    /** Highest admitted rate. */
    readonly max: Rate;
    /** The rate as a term (`parameter value × factor`). */
    readonly term: PlanRateTerm;
  } | null;
  /** The consumer's trigger rate, or `null` when its consumer has no trigger. */
  readonly triggerRate: {
    /** `clock 15 Hz` or `input op.port`. */
    readonly trigger: string;
    /** Generation-zero rate. */
    readonly active: Rate;
    /** Lowest admitted rate (longest horizon). */
    readonly min: Rate;
    /** The rate as a term (`parameter value × factor`). */
    readonly term: PlanRateTerm;
  } | null;
  /** Headroom ratio applied to the nominal arrivals (2/1 by default). */
  readonly headroom: RateRatio;
  /** `ceil(rate × horizon)`, or `null` without rate evidence. */
  readonly nominalArrivals: number | null;
  /** `ceil(nominalArrivals × headroom)`, or `null`. */
  readonly recommendation: number | null;
  /** Entries the semantic hard floor requires (see `HardFloorContributor`). */
  readonly hardFloor: number;
  /** `max(hardFloor, recommendation)`, or `null`. */
  readonly automaticDepth: number | null;
  /** `max(hardFloor, ceil(ceil(maxRate × horizon) × headroom))`, or `null`. */
  readonly admittedCeiling: number | null;
  /** Depth given to `addFlow()`, or `null`. */
  readonly explicitDepth: number | null;
  /** Queue entries used at generation zero. */
  readonly activeDepth: number;
  /** Queue entries allocated: enough for the whole admitted rate domain. */
  readonly admittedDepth: number;
}

/** What a pool's capacity depends on: per-slot bytes joined with final logical provider entries. */
export interface PoolCapacityDependency {
  /** Pool id. */
  readonly pool: string;
  /** Per-slot byte span bound, bytes. */
  readonly perSlotBytes: number;
  /** `declared`, or `derived` from a byte-span expression. */
  readonly byteSpanSource: 'declared' | 'derived';
  /** Edges whose depths size it. */
  readonly edges: readonly string[];
  /** Logical entries at generation zero. */
  readonly activeEntries: number;
  /** Logical entries over the admitted rate domain (the slots materialized). */
  readonly admittedEntries: number;
  /** `perSlotBytes × activeEntries`, bytes. */
  readonly activeLogicalBytes: number;
  /** `perSlotBytes × admittedEntries`, bytes. */
  readonly admittedLogicalBytes: number;
}

/** The physical provider reservation of a pool (not the logical product). */
export interface ProviderAllocationPlan {
  /** Pool id. */
  readonly pool: string;
  /** The provider the reservation comes from (see `TensorAllocationRecord.provider`). */
  readonly provider: string;
  /** Memory kind of the reservation. */
  readonly memoryKind: MemoryKind;
  /** Device of the reservation. */
  readonly device: Device;
  /**
   * The resource tier the provider must have: `streamOrdered` for cudaDevice memory (allocated on the
   * producer stream with `allocateAsync`), `synchronous` otherwise (`allocate` once, before the graph runs).
   */
  readonly tier: 'streamOrdered' | 'synchronous';
  /** Bytes per slot (the byte span rounded up to `alignment`). */
  readonly slotBytes: number;
  /** Slot alignment, bytes. */
  readonly alignment: number;
  /** Slots reserved. */
  readonly slots: number;
  /** `slotBytes × slots`: the one backing allocation, bytes. */
  readonly reservedBytes: number;
}

/**
 * Fusion evidence of one proven edge: the runtime re-validates it against the plan, then skips the
 * readiness record, the consumer's self-wait and its release registration on that edge.
 * Spec: "When the fences disappear: proven linear chains".
 */
export interface FusedEdgeRecord {
  /** Edge id. */
  readonly edge: string;
  /** Pool of the producer output. */
  readonly pool: string;
  /** The one stream both endpoints are bound to. */
  readonly stream: string;
  /** What proves the edge fused; the runtime checks each field again. */
  readonly evidence: {
    /** Successors of the producer output in total (1). */
    readonly acceptedSuccessors: number;
    /** True: neither end crosses a process boundary. */
    readonly processLocal: boolean;
    /** The producer's planned stream. */
    readonly producerStream: string;
    /** The consumer's planned stream (the same as `producerStream`). */
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
