import { ErrorCode, HsError, type MemoryKind } from '@hs/streams';
import type { DType } from '@hs/tensor';
import { TensorByteSpanExpression } from '../byte-span/byte-span-expression.js';
import type { ParameterMemoryKind } from '../params/parameter-memory-kind.js';
import { ParamRef } from '../params/bound-params.js';
import { isCount, layoutFieldProblem } from './tensor-layout-fields.js';

/**
 * The physical layout an output publishes: where the bytes live, the element type and the rank.
 * Spec: "Pool mechanics" and "Current limitations" (producer representation).
 */
export interface TensorRepresentation {
  /** Memory kind of every tensor the output publishes; omit it only when a `memoryKind` derivation selects it. */
  readonly memoryKind?: MemoryKind;
  /** Element type. */
  readonly dtype: DType;
  /** Number of dimensions of every published tensor. */
  readonly rank: number;
}

/**
 * Finite bounds of one pool slot. Zero in either field means "reject allocation", not "unbounded":
 * `compile()` accepts it with a `TENSOR_BOUNDS_ZERO` warning and plans the pool, and at run time every
 * `allocateTensor()` on that output returns `InvalidArgument` naming the pool. A published output needs
 * positive bounds (`TOPIC_BOUNDS_REQUIRED`): subscribers map its slots. A byte-span derivation that
 * resolves to 0 stays an error (`TENSOR_BYTE_SPAN_INVALID`).
 * Spec: "Sized cold, borrowed hot", "Use a parameter byte-span projector for custom formulas".
 */
export interface TensorBounds {
  /** Largest byte span one tensor may cover, in bytes (non-negative integer); omit it only when a `byteSpan` derivation gives it. */
  readonly maxByteSpan?: number;
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
      /** Memory kind, dtype and rank of the published tensors. */
      readonly representation: TensorRepresentation;
      /** Required unless a `byteSpan` derivation gives the slot bound. */
      readonly bounds?: TensorBounds;
      /** Slots come from a pool the plan sizes and the runtime materializes. */
      readonly storage: 'runtimePool';
      /**
       * The provider the pool's backing comes from, by name (letters, digits, `_`, `-`): `RunSession.create`
       * binds it to a resource through `RunSessionOptions.resources.providers[provider]`. Pools that name one
       * provider share one binding (they must have one memory kind and device). Default: the pool id
       * (`pool:<operator>.<port>`). Spec: "Sized cold, borrowed hot" (the plan names each pool's provider).
       */
      readonly provider?: string;
    }
  | {
      /** Memory kind, dtype and rank of the published tensors. */
      readonly representation: TensorRepresentation;
      /** Optional bounds the published tensors promise to stay within. */
      readonly bounds?: TensorBounds;
      /** The operator publishes caller-owned tensors with `ctx.emitTensor()` (the default). */
      readonly storage?: 'passThrough';
    };

/**
 * Parameter-derived parts of an output declaration, resolved once by `compile()`: the slot byte bound
 * and/or the memory kind. Spec: "Derive slot bytes from deployment parameters", "Derive memory kind
 * from deployment parameters".
 */
export interface TensorOutputDerivations {
  /** Slot byte bound; replaces `bounds.maxByteSpan` (runtime-pool outputs only). */
  readonly byteSpan?: TensorByteSpanExpression;
  /** Memory kind; replaces `representation.memoryKind`. */
  readonly memoryKind?: ParameterMemoryKind;
}

/** A validated output declaration, as stored on its `OutputPort` (frozen). */
export interface DeclaredTensorOutput {
  /** Memory kind `null` when a parameter selects it. */
  readonly representation: {
    /** Declared memory kind, or `null` when a parameter selects it. */
    readonly memoryKind: MemoryKind | null;
    /** Element type. */
    readonly dtype: DType;
    /** Rank. */
    readonly rank: number;
  };
  /**
   * Bounds with `maxRank` resolved (default `representation.rank`); `maxByteSpan` is `null` when a
   * derivation gives it; `null` when no bounds apply (pass-through without bounds).
   */
  readonly bounds: {
    /** Per-slot byte bound, bytes; `null` when a derivation gives it. */
    readonly maxByteSpan: number | null;
    /** Largest rank. */
    readonly maxRank: number;
  } | null;
  /** `runtimePool` or `passThrough`. */
  readonly storage: TensorOutputStorage;
  /** The byte-span derivation, or `null`. */
  readonly byteSpan: TensorByteSpanExpression | null;
  /** The memory-kind derivation, or `null`. */
  readonly memoryKind: ParameterMemoryKind | null;
  /** The declared provider name, or `null` for the pool id. */
  readonly provider: string | null;
}

const PROVIDER_PATTERN = /^[A-Za-z0-9_][A-Za-z0-9_-]*$/;

/**
 * Validates the argument types of a `TensorOutputSpec` and returns a frozen copy with defaults
 * applied. Values that are well-typed but unusable (zero bounds, bounds beyond 2^53 - 1) are left for
 * `compile()` to report as diagnostics.
 * @throws HsError `InvalidArgument` for a missing or mistyped field (for example a dtype that is not a
 * `DType`, a negative or fractional rank, `runtimePool` without bounds).
 */
export function declareTensorOutput(where: string, spec: TensorOutputSpec, derivations?: TensorOutputDerivations | TensorByteSpanExpression): DeclaredTensorOutput {
  const fail = (what: string): never => {
    throw new HsError(ErrorCode.InvalidArgument, `${where}: producesTensor() ${what}`);
  };
  if (typeof spec !== 'object' || spec === null) return fail('needs a TensorOutputSpec object');
  const derived: TensorOutputDerivations =
    derivations instanceof TensorByteSpanExpression ? { byteSpan: derivations } : (derivations ?? {});
  if (typeof derived !== 'object' || derived === null) return fail('derivations must be a TensorByteSpanExpression or { byteSpan?, memoryKind? }');
  if (derived.byteSpan !== undefined && !(derived.byteSpan instanceof TensorByteSpanExpression)) fail('derivations.byteSpan must be a TensorByteSpanExpression');
  if (derived.memoryKind !== undefined && !(derived.memoryKind?.ref instanceof ParamRef)) fail('derivations.memoryKind must come from parameterMemoryKind(...)');
  const rep = spec.representation;
  if (typeof rep !== 'object' || rep === null || rep.dtype === undefined || rep.rank === undefined) {
    return fail('needs representation: { memoryKind, dtype, rank }');
  }
  if ((rep.memoryKind === undefined) === (derived.memoryKind === undefined)) {
    fail('needs exactly one memory kind: representation.memoryKind or derivations.memoryKind (parameterMemoryKind)');
  }
  const problem = layoutFieldProblem('representation.', rep);
  if (problem !== null) fail(problem);
  const storage = spec.storage ?? 'passThrough';
  if (storage !== 'runtimePool' && storage !== 'passThrough') {
    fail(`storage ${JSON.stringify(storage)} is not 'runtimePool' or 'passThrough'`);
  }
  if (derived.byteSpan !== undefined && storage !== 'runtimePool') fail("derives its byte span, which needs storage 'runtimePool'");
  const provider = (spec as { provider?: unknown }).provider;
  if (provider !== undefined) {
    if (storage !== 'runtimePool') fail("names a provider, which needs storage 'runtimePool' (a pass-through output has no pool)");
    if (typeof provider !== 'string' || !PROVIDER_PATTERN.test(provider)) {
      fail(`provider ${JSON.stringify(provider)} is not a name of letters, digits, '_' and '-' (not starting with '-'), for example 'frames'`);
    }
  }
  let bounds: DeclaredTensorOutput['bounds'] = null;
  if (spec.bounds !== undefined) {
    const { maxByteSpan, maxRank } = spec.bounds;
    if (derived.byteSpan !== undefined && maxByteSpan !== undefined) fail('gives both bounds.maxByteSpan and a byte-span derivation; keep one');
    if (derived.byteSpan === undefined && !isCount(maxByteSpan)) fail(`bounds.maxByteSpan must be a non-negative integer of bytes, got ${String(maxByteSpan)}`);
    if (maxRank !== undefined && !isCount(maxRank)) fail(`bounds.maxRank must be a non-negative integer, got ${String(maxRank)}`);
    bounds = Object.freeze({ maxByteSpan: maxByteSpan ?? null, maxRank: maxRank ?? rep.rank });
  } else if (derived.byteSpan !== undefined) {
    bounds = Object.freeze({ maxByteSpan: null, maxRank: rep.rank });
  } else if (storage === 'runtimePool') {
    fail("with storage 'runtimePool' needs bounds: { maxByteSpan } or a byte-span derivation so the pool slot can be sized");
  }
  return Object.freeze({
    representation: Object.freeze({ memoryKind: rep.memoryKind ?? null, dtype: rep.dtype, rank: rep.rank }),
    bounds,
    storage,
    byteSpan: derived.byteSpan ?? null,
    memoryKind: derived.memoryKind ?? null,
    provider: (provider as string | undefined) ?? null,
  });
}
