import { ErrorCode, HsError, MEMORY_KINDS, type MemoryKind } from '@hs/streams';
import { ParamRef } from './bound-params.js';

/** One case of an enum-to-memory-kind mapping: source enum value → concrete memory kind. */
export interface MemoryKindCase {
  /** The enum field's value. */
  readonly value: string;
  /** The memory kind that value selects. */
  readonly memoryKind: MemoryKind;
}

/**
 * A memory kind chosen by a generation-zero parameter: an exhaustive mapping from an enum field's
 * values, or (without cases) a direct `memoryKindParam` field. Resolved once by `compile()` and frozen
 * into the allocation record. Spec: "Derive memory kind from deployment parameters".
 */
export interface ParameterMemoryKind {
  /** The enum or memory-kind field that selects the kind. */
  readonly ref: ParamRef;
  /** The mapping; `null` for a direct memory-kind field. */
  readonly cases: readonly MemoryKindCase[] | null;
}

/**
 * One mapping case.
 * @throws HsError `InvalidArgument` for a non-string value or an unknown memory kind.
 */
export function memoryKindCase(value: string, memoryKind: MemoryKind): MemoryKindCase {
  if (typeof value !== 'string' || !MEMORY_KINDS.includes(memoryKind)) {
    throw new HsError(ErrorCode.InvalidArgument, `memoryKindCase(value, memoryKind) takes an enum value name and a concrete MemoryKind, got ${JSON.stringify([value, memoryKind])}`);
  }
  return Object.freeze({ value, memoryKind });
}

/**
 * Selects an output's memory kind from parameter `ref`: with `cases`, the enum field's value is mapped
 * (the cases must cover every admitted value once, no extras: `MEMORY_KIND_MAPPING_INVALID`); without,
 * `ref` must name a `memoryKindParam` field.
 * @throws HsError `InvalidArgument` when `ref` is not a `ParamRef` or `cases` is not an array of cases.
 */
export function parameterMemoryKind(ref: ParamRef, cases?: readonly MemoryKindCase[]): ParameterMemoryKind {
  if (!(ref instanceof ParamRef)) throw new HsError(ErrorCode.InvalidArgument, 'parameterMemoryKind(ref, cases?) takes params.ref(field)');
  if (cases !== undefined && !Array.isArray(cases)) throw new HsError(ErrorCode.InvalidArgument, 'parameterMemoryKind: cases must be an array of memoryKindCase(...)');
  return Object.freeze({ ref, cases: cases === undefined ? null : Object.freeze([...cases]) });
}
