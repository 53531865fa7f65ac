import { ErrorCode, HsError, type MemoryKind } from '@hs/streams';
import type { DType } from '@hs/tensor';
import { isCount, layoutFieldProblem } from './tensor-layout-fields.js';

/**
 * The physical layout an output publishes: where the bytes live, the element type and the rank.
 * Spec: "Pool mechanics" and "Current limitations" (producer representation).
 */
export interface TensorRepresentation {
  /** Memory kind of every tensor the output publishes. */
  readonly memoryKind: MemoryKind;
  /** Element type. */
  readonly dtype: DType;
  /** Number of dimensions of every published tensor. */
  readonly rank: number;
}

/**
 * Finite bounds of one pool slot. Zero in either field means "reject allocation", not "unbounded",
 * and `compile()` reports it as `TENSOR_BOUNDS_ZERO`.
 * Spec: "Sized cold, borrowed hot".
 */
export interface TensorBounds {
  /** Largest byte span one tensor may cover, in bytes (non-negative integer). */
  readonly maxByteSpan: number;
  /** Largest rank a tensor may have; default: `representation.rank`. */
  readonly maxRank?: number;
}

/**
 * Where an output's backing memory comes from: `runtimePool` borrows a slot from a pool the runtime
 * materializes before arming (bounds required); `passThrough` publishes caller-supplied backing
 * (`ExecutionContext.emitTensor`) and provisions no storage.
 */
export type TensorOutputStorage = 'runtimePool' | 'passThrough';

/**
 * Declaration passed to `OutputPort.producesTensor()`. `storage` defaults to `passThrough`; a
 * `runtimePool` output must give `bounds`.
 * Spec: "Sized cold, borrowed hot", "Current limitations".
 */
export type TensorOutputSpec =
  | {
      readonly representation: TensorRepresentation;
      readonly bounds: TensorBounds;
      readonly storage: 'runtimePool';
    }
  | {
      readonly representation: TensorRepresentation;
      readonly bounds?: TensorBounds;
      readonly storage?: 'passThrough';
    };

/** A validated output declaration, as stored on its `OutputPort` (frozen). */
export interface DeclaredTensorOutput {
  readonly representation: TensorRepresentation;
  /** Bounds with `maxRank` resolved (default `representation.rank`); `null` when none were given. */
  readonly bounds: { readonly maxByteSpan: number; readonly maxRank: number } | null;
  readonly storage: TensorOutputStorage;
}

/**
 * Validates the argument types of a `TensorOutputSpec` and returns a frozen copy with defaults
 * applied. Values that are well-typed but unusable (zero bounds, bounds beyond 2^53 - 1) are left for
 * `compile()` to report as diagnostics.
 * @throws HsError `InvalidArgument` for a missing or mistyped field (for example a dtype that is not a
 * `DType`, a negative or fractional rank, `runtimePool` without bounds).
 */
export function declareTensorOutput(where: string, spec: TensorOutputSpec): DeclaredTensorOutput {
  const fail = (what: string): never => {
    throw new HsError(ErrorCode.InvalidArgument, `${where}: producesTensor() ${what}`);
  };
  if (typeof spec !== 'object' || spec === null) return fail('needs a TensorOutputSpec object');
  const rep = spec.representation;
  if (typeof rep !== 'object' || rep === null || rep.memoryKind === undefined || rep.dtype === undefined || rep.rank === undefined) {
    return fail('needs representation: { memoryKind, dtype, rank }');
  }
  const problem = layoutFieldProblem('representation.', rep);
  if (problem !== null) fail(problem);
  const storage = spec.storage ?? 'passThrough';
  if (storage !== 'runtimePool' && storage !== 'passThrough') {
    fail(`storage ${JSON.stringify(storage)} is not 'runtimePool' or 'passThrough'`);
  }
  let bounds: DeclaredTensorOutput['bounds'] = null;
  if (spec.bounds !== undefined) {
    const { maxByteSpan, maxRank } = spec.bounds;
    if (!isCount(maxByteSpan)) fail(`bounds.maxByteSpan must be a non-negative integer of bytes, got ${String(maxByteSpan)}`);
    if (maxRank !== undefined && !isCount(maxRank)) fail(`bounds.maxRank must be a non-negative integer, got ${String(maxRank)}`);
    bounds = Object.freeze({ maxByteSpan, maxRank: maxRank ?? rep.rank });
  } else if (storage === 'runtimePool') {
    fail("with storage 'runtimePool' needs bounds: { maxByteSpan } so the pool slot can be sized");
  }
  return Object.freeze({
    representation: Object.freeze({ memoryKind: rep.memoryKind, dtype: rep.dtype, rank: rep.rank }),
    bounds,
    storage,
  });
}
