/**
 * Writes per-voxel values of a value grid as `writeGrid` lays the grid out: the background into the root, table
 * entries and inactive leaf voxels, and each voxel's value from the caller's array, for every grid type with value
 * leaves (Float to UInt8, Half, Vec3f/d, Vec4f/d, RGBA8), Mask (no values) and Boolean (a bit per voxel).
 * Spec: NANOVDB-FORMAT.md (leaves) and issue 23 (writing every value type).
 */
import { LeafKind, type ScalarKind, type ValueLayout } from '../grid/grid-layout.js';

/** Values per voxel: numbers (any numeric typed array or array), or a BigInt64Array for exact Int64 values. */
export type VoxelValueArray = ArrayLike<number> | BigInt64Array;

const f32 = new Float32Array(1);
const f32Bits = new Uint32Array(f32.buffer);

/** `x` rounded to f32, then to the nearest IEEE 754 binary16 (ties to even; overflow to infinity), as bits. */
export function numberToHalfBits(x: number): number {
  f32[0] = x;
  const b = f32Bits[0] as number;
  const sign = (b >>> 16) & 0x8000;
  const exp = (b >>> 23) & 0xff;
  let mant = b & 0x7fffff;
  if (exp === 255) return sign | 0x7c00 | (mant !== 0 ? 0x200 : 0);
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

function writeScalar(v: DataView, at: number, kind: ScalarKind, value: number | bigint): void {
  switch (kind) {
    case 'f32':
      return v.setFloat32(at, Number(value), true);
    case 'f64':
      return v.setFloat64(at, Number(value), true);
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

/** Writes one grid's values: `values[components * order[i] + c]` for sorted voxel `i`, `background` elsewhere. */
export class VoxelValueWriter {
  readonly #step: number;

  constructor(
    readonly layout: ValueLayout,
    readonly values: VoxelValueArray,
    /** One number (or bigint) per component. */
    readonly background: readonly (number | bigint)[],
    /** Input index of each sorted voxel. */
    readonly order: Uint32Array,
  ) {
    this.#step = layout.valueSize / layout.components;
  }

  /** Writes the background value at byte `at`. */
  writeBackground(v: DataView, at: number): void {
    const { scalar, components } = this.layout;
    for (let c = 0; c < components; c++) writeScalar(v, at + this.#step * c, scalar, this.background[c] as number | bigint);
  }

  /** Writes sorted voxel `i`'s value as voxel `n` of the leaf at byte `leaf`. */
  writeVoxel(v: DataView, leaf: number, n: number, i: number): void {
    const { scalar, components, leafKind, leafValues, valueSize } = this.layout;
    const first = components * (this.order[i] as number);
    if (leafKind === LeafKind.Bits) {
      const at = leaf + leafValues + (n >> 3);
      if (Number(this.values[first]) !== 0) v.setUint8(at, v.getUint8(at) | (1 << (n & 7)));
      return;
    }
    if (leafKind !== LeafKind.Values) return; // Mask: the active bit is the value
    for (let c = 0; c < components; c++) writeScalar(v, leaf + leafValues + valueSize * n + this.#step * c, scalar, this.values[first + c] as number | bigint);
  }
}
