/**
 * One stored value (or one component of a vector value) read and written by its `ScalarKind`, little-endian: the
 * accessor, the builders' value writer and the statistics all go through these. 64-bit integers are read as numbers
 * (exact below 2^53) by `readScalar` and as bigints by `readExactScalar`; binary16 is converted both ways here.
 */
import { Leaf, quantBitsOf, type ScalarKind, type ValueLayout } from './grid-layout.js';

/** One stored scalar as a number (i64/u64 exact below 2^53; f16 decoded from IEEE 754 binary16; bool 1 or 0). */
export function readScalar(v: DataView, at: number, kind: ScalarKind): number {
  switch (kind) {
    case 'f32':
      return v.getFloat32(at, true);
    case 'f64':
      return v.getFloat64(at, true);
    case 'f16':
      return halfToNumber(v.getUint16(at, true));
    case 'i16':
      return v.getInt16(at, true);
    case 'i32':
      return v.getInt32(at, true);
    case 'i64':
      return Number(v.getBigInt64(at, true));
    case 'u8':
      return v.getUint8(at);
    case 'u32':
      return v.getUint32(at, true);
    case 'u64':
      return Number(v.getBigUint64(at, true));
    case 'bool':
      return v.getUint8(at) !== 0 ? 1 : 0;
  }
}

/** One stored scalar with 64-bit integers as bigints (every other kind as `readScalar` gives it). */
export function readExactScalar(v: DataView, at: number, kind: ScalarKind): number | bigint {
  if (kind === 'i64') return v.getBigInt64(at, true);
  if (kind === 'u64') return v.getBigUint64(at, true);
  return readScalar(v, at, kind);
}

/** Voxel `n` of the quantized leaf at `leaf` dequantized as NanoVDB does: `f32(f32(code * quantum) + minimum)`. */
export function readQuantized(v: DataView, layout: ValueLayout, leaf: number, n: number): number {
  const bits = quantBitsOf(layout, v, leaf);
  const bit = n * bits;
  const code = bits === 16 ? v.getUint16(leaf + layout.leafValues + 2 * n, true) : (v.getUint8(leaf + layout.leafValues + (bit >> 3)) >> (bit & 7)) & ((1 << bits) - 1);
  return Math.fround(Math.fround(code * v.getFloat32(leaf + Leaf.quantQuantum, true)) + v.getFloat32(leaf + Leaf.quantMinimum, true));
}

/** IEEE 754 binary16 bits as a number. */
export function halfToNumber(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exponent = (h >> 10) & 0x1f;
  const fraction = h & 0x3ff;
  if (exponent === 0) return sign * fraction * 2 ** -24;
  if (exponent === 31) return fraction === 0 ? sign * Infinity : NaN;
  return sign * (1024 + fraction) * 2 ** (exponent - 25);
}

const f32 = new Float32Array(1);
const f32Bits = new Uint32Array(f32.buffer);

/**
 * The one NaN hs stores wherever a builder writes a floating-point NaN: the quiet NaN with a clear sign and an
 * empty payload. A JS number's NaN bits depend on how V8 produced and stores it (tier, payload kept or not) and a
 * GPU's on its instructions, so every float store of a builder goes through these, on the host here and on the
 * device through `native/src/nanovdb/canonical-nan.h`; host and device grids of NaN-bearing values then match
 * byte for byte.
 */
export const CANONICAL_F32_NAN = 0x7fc00000;
/** The high word of the canonical f64 NaN (its low word is 0). */
export const CANONICAL_F64_NAN_HIGH = 0x7ff80000;
/** The canonical binary16 NaN. */
export const CANONICAL_F16_NAN = 0x7e00;

/** `DataView.setFloat32` (little-endian) that stores a NaN as `CANONICAL_F32_NAN`. */
export function setFloat32Canonical(v: DataView, at: number, x: number): void {
  if (x !== x) v.setUint32(at, CANONICAL_F32_NAN, true);
  else v.setFloat32(at, x, true);
}

/** `DataView.setFloat64` (little-endian) that stores a NaN as the canonical f64 NaN. */
export function setFloat64Canonical(v: DataView, at: number, x: number): void {
  if (x !== x) {
    v.setUint32(at, 0, true);
    v.setUint32(at + 4, CANONICAL_F64_NAN_HIGH, true);
  } else {
    v.setFloat64(at, x, true);
  }
}

/**
 * Rewrites every NaN of a Float32Array or Float64Array as the canonical NaN, in place, reading bits (not
 * numbers, whose NaN bits V8 may change on the way); any other array is left as it is.
 */
export function canonicalizeNaNs(values: ArrayBufferView): void {
  if (values instanceof Float32Array) {
    const words = new Uint32Array(values.buffer, values.byteOffset, values.length);
    for (let i = 0; i < words.length; i++) if (((words[i] as number) & 0x7fffffff) > 0x7f800000) words[i] = CANONICAL_F32_NAN;
  } else if (values instanceof Float64Array) {
    const words = new Uint32Array(values.buffer, values.byteOffset, 2 * values.length);
    for (let i = 0; i < words.length; i += 2) {
      const high = (words[i + 1] as number) & 0x7fffffff;
      if (high > 0x7ff00000 || (high === 0x7ff00000 && words[i] !== 0)) {
        words[i] = 0;
        words[i + 1] = CANONICAL_F64_NAN_HIGH;
      }
    }
  }
}

/** `x` rounded to f32, then to the nearest IEEE 754 binary16 (ties to even; overflow to infinity; NaN as `CANONICAL_F16_NAN`), as bits. */
export function numberToHalfBits(x: number): number {
  f32[0] = x;
  const b = f32Bits[0] as number;
  const sign = (b >>> 16) & 0x8000;
  const exp = (b >>> 23) & 0xff;
  let mant = b & 0x7fffff;
  if (exp === 255) return mant !== 0 ? CANONICAL_F16_NAN : sign | 0x7c00;
  const e = exp - 112; // rebias 127 -> 15
  if (e >= 31) return sign | 0x7c00;
  let shift = 13;
  let base = e << 10;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    shift = 14 - e;
    base = 0;
  }
  let half = base | (mant >>> shift);
  const rem = mant & ((1 << shift) - 1);
  const halfway = 1 << (shift - 1);
  if (rem > halfway || (rem === halfway && (half & 1) !== 0)) half++;
  return sign | half;
}

/** Writes one scalar of `kind` (numbers are converted as DataView converts them; Half rounds to nearest even; a float NaN is stored canonical). */
export function writeScalar(v: DataView, at: number, kind: ScalarKind, value: number | bigint): void {
  switch (kind) {
    case 'f32':
      return setFloat32Canonical(v, at, Number(value));
    case 'f64':
      return setFloat64Canonical(v, at, Number(value));
    case 'f16':
      return v.setUint16(at, numberToHalfBits(Number(value)), true);
    case 'i16':
      return v.setInt16(at, Number(value), true);
    case 'i32':
      return v.setInt32(at, Number(value), true);
    case 'i64':
      return v.setBigInt64(at, typeof value === 'bigint' ? value : BigInt(Math.trunc(value)), true);
    case 'u8':
      return v.setUint8(at, Number(value));
    case 'u32':
      return v.setUint32(at, Number(value), true);
    case 'u64':
      return v.setBigUint64(at, typeof value === 'bigint' ? value : BigInt(Math.trunc(value)), true);
    case 'bool':
      return v.setUint8(at, Number(value) !== 0 ? 1 : 0);
  }
}

/** A little-endian u64 at `at` as a number (exact below 2^53, the byte offsets and counts of a grid). @internal */
export function readU64Number(v: DataView, at: number): number {
  return v.getUint32(at, true) + v.getUint32(at + 4, true) * 4294967296;
}

/** A little-endian i64 at `at` as a number (exact within +-2^53: child offsets). @internal */
export function readI64Number(v: DataView, at: number): number {
  return v.getUint32(at, true) + v.getInt32(at + 4, true) * 4294967296;
}

/** Writes `value` (a whole number within +-2^53) as a little-endian i64 at `at`. @internal */
export function writeI64Number(v: DataView, at: number, value: number): void {
  v.setUint32(at, value >>> 0, true);
  v.setInt32(at + 4, Math.floor(value / 4294967296), true);
}
