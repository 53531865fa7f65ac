import { ErrorCode, HsError } from '@hs/streams';

/**
 * Shape and stride arithmetic for tensors: validation and the byte span a layout covers. All counts are
 * elements except where a name says bytes. Internal to @hs/tensor.
 */

/**
 * Throws when `value` is not an array of numbers (a programmer error: wrong argument type).
 * @throws HsError `InvalidArgument`.
 */
export function assertNumberList(value: unknown, what: string): asserts value is readonly number[] {
  let wellTyped = Array.isArray(value);
  for (let i = 0; wellTyped && i < (value as unknown[]).length; i++) {
    wellTyped = typeof (value as unknown[])[i] === 'number';
  }
  if (!wellTyped) throw new HsError(ErrorCode.InvalidArgument, `${what} must be an array of numbers`);
}

/** Describes the first dimension that is not a non-negative safe integer, or `null` when all are. */
export function describeDimsProblem(dims: readonly number[], what: string): string | null {
  for (let i = 0; i < dims.length; i++) {
    const d = dims[i] as number;
    if (!Number.isSafeInteger(d) || d < 0) {
      return `${what}[${i}] is ${String(d)}; every entry must be a non-negative safe integer`;
    }
  }
  return null;
}

/**
 * Bytes spanned by a packed row-major tensor of `shape` with `itemSize`-byte elements: 0 when any
 * dimension is 0. May exceed `Number.MAX_SAFE_INTEGER`; callers check with `Number.isSafeInteger`.
 */
export function contiguousByteSize(shape: readonly number[], itemSize: number): number {
  let bytes = itemSize;
  for (let i = 0; i < shape.length; i++) bytes *= shape[i] as number;
  return bytes;
}

/**
 * Bytes spanned by a strided tensor (non-negative strides in elements): from its first element to the
 * end of its last. 0 when any dimension is 0. May exceed `Number.MAX_SAFE_INTEGER`.
 */
export function stridedByteSize(shape: readonly number[], strides: readonly number[], itemSize: number): number {
  let last = 0;
  for (let i = 0; i < shape.length; i++) {
    const d = shape[i] as number;
    if (d === 0) return 0;
    last += (d - 1) * (strides[i] as number);
  }
  return (last + 1) * itemSize;
}

/** Row-major strides in elements for `shape`, frozen. */
export function contiguousStrides(shape: readonly number[]): readonly number[] {
  const strides = new Array<number>(shape.length);
  let step = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    strides[i] = step;
    step *= Math.max(1, shape[i] as number);
  }
  return Object.freeze(strides);
}

/** True when both lists have the same length and entries. */
export function sameDims(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** `[2, 3]` style text for messages. */
export function formatDims(dims: readonly number[]): string {
  return `[${dims.join(', ')}]`;
}
