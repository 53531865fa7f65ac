import type { Device, MemoryKind } from '@hs/streams';
import type { DType } from '@hs/tensor';
import type { MissedTickPolicy } from '../authoring/operator-spec.js';
import type { Operator } from '../authoring/operator.js';
import type { TensorOutputStorage } from '../authoring/tensor-output-spec.js';
import type { Rate } from '../rates/rate.js';

/** An input as planned. */
export interface PlanInput {
  /** Port name. */
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
  /** Memory kind of the published tensors (declared, or selected by a parameter). */
  readonly memoryKind: MemoryKind;
  /** Element type of the published tensors. */
  readonly dtype: DType;
  /** Rank of the published tensors. */
  readonly rank: number;
  /** `runtimePool` (slots from a planned pool) or `passThrough` (caller-owned tensors). */
  readonly storage: TensorOutputStorage;
  /** Declared slot bound in bytes; `null` when no bounds were given (pass-through). */
  readonly maxByteSpan: number | null;
  /** Declared (or defaulted) largest rank; `null` when no bounds were given. */
  readonly maxRank: number | null;
}

/** An output as planned. */
export interface PlanOutput {
  /** Port name. */
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
  /** Operator name, unique in the graph. */
  readonly name: string;
  /** The authored instance the runtime calls (not in JSON, not frozen). */
  readonly operator: Operator;
  /** Id of its execution partition. */
  readonly partition: string;
  /** Its one device when CUDA-active, else `null`. */
  readonly device: Device | null;
  /** Id of its planned stream when CUDA-active, else `null`. */
  readonly stream: string | null;
  /** True when a port names a CUDA memory kind or the operator called `spec.requireCudaStream()`. */
  readonly cudaActive: boolean;
  /** In declaration order. */
  readonly inputs: readonly PlanInput[];
  /** In declaration order. */
  readonly outputs: readonly PlanOutput[];
  /** Its temporal contract as the runtime schedules it, or `null` (no contract: it runs when every connected input holds an entry). */
  readonly schedule: PlanSchedule | null;
}

/** One window or selector of a planned temporal contract. */
export interface PlanRetention {
  /** Input port name. */
  readonly port: string;
  /** Entries: a window consumes up to this many at once, a selector keeps the newest this many. */
  readonly entries: number;
  /** The scenario it belongs to (`default` unless named). */
  readonly scenario: string;
}

/**
 * An operator's temporal contract as planned: the runtime's only scheduling authority for it.
 * Spec: "Size queue entries from nominal rates".
 */
export interface PlanSchedule {
  /** An input trigger (by port name) or a clock (exact rate, missed-tick policy). */
  readonly trigger:
    | {
        /** An input trigger. */
        readonly kind: 'input';
        /** The trigger input's port name. */
        readonly port: string;
      }
    | {
        /** A clock trigger. */
        readonly kind: 'clock';
        /** The clock's exact nominal rate. */
        readonly rate: Rate;
        /** What a tick missed while the operator was busy or the loop late does: `skip` (counted) or `catchUp`. */
        readonly missedTicks: MissedTickPolicy;
      };
  /** Inputs that must hold an entry for an activation to start, by port name (the trigger input is implied). */
  readonly required: readonly string[];
  /** Windows, in declaration order. */
  readonly windows: readonly PlanRetention[];
  /** Selectors, in declaration order. */
  readonly selectors: readonly PlanRetention[];
}
