import type { Device, MemoryKind } from '@hs/streams';
import type { DType } from '@hs/tensor';
import type { Operator } from '../authoring/operator.js';
import type { TensorOutputStorage } from '../authoring/tensor-output-spec.js';
import type { QueueDepthSource } from '../compile/queue-depths.js';

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
  /** Id of the edge feeding it, or `null` when unconnected. */
  readonly edge: string | null;
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
  /** Queue entries. */
  readonly queueDepth: number;
  /** `explicit` when given to `addFlow()`, else `default` (`defaultQueueDepth`). */
  readonly queueDepthSource: QueueDepthSource;
  /** Id of the producer output's pool, or `null` (pass-through or no tensor). */
  readonly pool: string | null;
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
export type SlotCountTermName = 'maxConsumerQueueDepth' | 'consumerInHand' | 'retirement' | 'producerLoan';

/** One term of a slot-count sum. */
export interface SlotCountTerm {
  readonly term: SlotCountTermName;
  /** Slots this term contributes. */
  readonly value: number;
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
  /** Declared byte span bound (bytes). */
  readonly maxByteSpan: number;
  readonly maxRank: number;
  /** Slot alignment in bytes (256). */
  readonly alignment: number;
  /** Bytes per slot: `maxByteSpan` rounded up to `alignment`. */
  readonly slotBytes: number;
  /** Slots: max consumer queue depth + 1 consumer in hand + 1 retirement + 1 producer loan. */
  readonly slotCount: number;
  /** `slotBytes * slotCount` (bytes). */
  readonly totalBytes: number;
  /** Release streams tracked per slot (8). */
  readonly maxReleaseStreams: number;
  /** Id of the stream that writes the slots, or `null` for a host writer. */
  readonly producerStream: string | null;
  /** Ids of the edges that consume it, sorted. */
  readonly consumers: readonly string[];
  readonly derivation: SlotCountDerivation;
}
