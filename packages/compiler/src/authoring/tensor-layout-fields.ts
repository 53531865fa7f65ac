import { parseMemoryKind } from '@hs/streams';
import { DType } from '@hs/tensor';

/** True for a non-negative integer number (a rank, a byte count). */
export function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

/**
 * Checks the argument types of the layout fields that are present (memory kind, dtype, rank) and
 * returns a description of the first bad one, or `null` when all present fields are well-typed.
 */
export function layoutFieldProblem(
  prefix: string,
  fields: { readonly memoryKind?: unknown; readonly dtype?: unknown; readonly rank?: unknown },
): string | null {
  if (fields.memoryKind !== undefined && parseMemoryKind(fields.memoryKind as string) === undefined) {
    return `${prefix}memoryKind ${JSON.stringify(fields.memoryKind)} is not a MemoryKind; use for example MemoryKind.CudaDevice`;
  }
  if (fields.dtype !== undefined && !(fields.dtype instanceof DType)) {
    return `${prefix}dtype must be a DType, for example DType.uint8`;
  }
  if (fields.rank !== undefined && !isCount(fields.rank)) {
    return `${prefix}rank must be a non-negative integer, got ${String(fields.rank)}`;
  }
  return null;
}
