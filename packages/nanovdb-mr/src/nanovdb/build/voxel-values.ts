/**
 * Writes per-voxel values of a value grid as `writeGrid` lays the grid out: the background into the root, table
 * entries and inactive leaf voxels, and each voxel's value from the caller's array, for every grid type with value
 * leaves (Float to UInt8, Half, Vec3f/d, Vec4f/d, RGBA8), Mask (no values) and Boolean (a bit per voxel).
 * Spec: NANOVDB-FORMAT.md (leaves) and issue 23 (writing every value type).
 */
import { GridType, Leaf, LeafKind, leafIndex, type ValueLayout } from '../grid/grid-layout.js';
import { sameNode, sameVoxel } from './voxel-order.js';
import { writeScalar } from '../grid/scalar-io.js';
import { fpnBits, quantizeLeaf } from './leaf-quantizer.js';

/** Values per voxel: numbers (any numeric typed array or array), or a BigInt64Array for exact Int64 values. */
export type VoxelValueArray = ArrayLike<number> | BigInt64Array;

/** Writes one grid's values: `values[components * order[i] + c]` for sorted voxel `i`, `background` elsewhere. */
export class VoxelValueWriter {
  readonly #step: number;
  /** Quantized grids: the current leaf's 512 values. */
  readonly #leaf = new Float32Array(512);
  /** FpN: bits per leaf, from `planLeaves`. */
  #leafBits = new Uint8Array(0);
  #leafCount = 0;
  /** PointIndex: the sorted voxels (a voxel listed k times holds k points), points in this leaf and before it. */
  #sorted: Int32Array = new Int32Array(0);
  #inLeaf = 0;
  #before = 0;

  constructor(
    readonly layout: ValueLayout,
    readonly values: VoxelValueArray,
    /** One number (or bigint) per component. */
    readonly background: readonly (number | bigint)[],
    /** Input index of each sorted voxel. */
    readonly order: Uint32Array,
    /** FpN: the absolute error each decoded value may have. */
    readonly tolerance = 0,
  ) {
    this.#step = layout.valueSize / layout.components;
  }

  /**
   * FpN: chooses each leaf's code width from its values (`sorted` voxels in build order, `count` of them) and
   * returns the bytes of all leaves; other types: the fixed leaf size times `leaves`.
   */
  planLeaves(sorted: Int32Array, count: number, leaves: number): number {
    this.#sorted = sorted.subarray(0, 3 * count);
    if (this.layout.gridType !== GridType.FpN) return leaves * this.layout.leafSize;
    this.#leafBits = new Uint8Array(leaves);
    let leaf = -1;
    let bytes = 0;
    const close = (): void => {
      if (leaf < 0) return;
      const bits = fpnBits(this.#leaf, this.tolerance);
      this.#leafBits[leaf] = bits;
      bytes += this.layout.leafSize + 64 * bits;
    };
    for (let i = 0; i < count; i++) {
      if (i > 0 && sameVoxel(sorted, i, i - 1)) continue;
      if (i === 0 || !sameNode(sorted, i, i - 1, 3)) {
        close();
        leaf++;
        this.#leaf.fill(Number(this.background[0]));
      }
      this.#leaf[leafIndex(sorted[3 * i] as number, sorted[3 * i + 1] as number, sorted[3 * i + 2] as number)] = Number(this.values[this.order[i] as number]);
    }
    close();
    return bytes;
  }

  /** Bytes of leaf `index` (FpN: after `planLeaves`). */
  leafBytes(index: number): number {
    return this.layout.gridType === GridType.FpN ? this.layout.leafSize + 64 * (this.#leafBits[index] as number) : this.layout.leafSize;
  }

  /** Starts a leaf: inactive voxels hold the background. */
  openLeaf(v: DataView, leaf: number): void {
    const { leafKind, leafValues, valueSize } = this.layout;
    if (leafKind === LeafKind.Values) for (let m = 0; m < 512; m++) this.writeBackground(v, leaf + leafValues + valueSize * m);
    else if (leafKind === LeafKind.Quantized) this.#leaf.fill(Number(this.background[0]));
  }

  /**
   * Ends the leaf at `leaf`: quantized leaves are encoded (FpN: with its planned width, recorded in the flags); point
   * leaves get their first point's index and point count, and each inactive voxel the running count of the last
   * active voxel before it (0 before the first).
   */
  closeLeaf(v: DataView, leaf: number): void {
    if (this.layout.leafKind === LeafKind.Point) {
      let running = 0;
      for (let n = 0; n < 512; n++) {
        const at = leaf + this.layout.leafValues + 16 + 2 * n;
        if ((v.getUint8(leaf + Leaf.valueMask + (n >> 3)) & (1 << (n & 7))) !== 0) running = v.getUint16(at, true);
        else v.setUint16(at, running, true);
      }
      v.setBigUint64(leaf + this.layout.leafValues, BigInt(this.#before), true);
      v.setBigUint64(leaf + this.layout.leafValues + 8, BigInt(this.#inLeaf), true);
      this.#before += this.#inLeaf;
      this.#inLeaf = 0;
      return;
    }
    if (this.layout.leafKind !== LeafKind.Quantized) return;
    const bits = this.layout.quantBits !== 0 ? this.layout.quantBits : (this.#leafBits[this.#leafCount] as number);
    this.#leafCount++;
    if (this.layout.quantBits === 0) v.setUint8(leaf + Leaf.flags, v.getUint8(leaf + Leaf.flags) | (Math.log2(bits) << 5));
    quantizeLeaf(v, leaf, this.#leaf, bits);
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
    if (leafKind === LeafKind.Quantized) {
      this.#leaf[n] = Number(this.values[first]);
      return;
    }
    if (leafKind === LeafKind.Point) {
      let end = i + 1;
      while (3 * end < this.#sorted.length && sameVoxel(this.#sorted, end, i)) end++;
      this.#inLeaf += end - i;
      v.setUint16(leaf + leafValues + 16 + 2 * n, this.#inLeaf, true);
      return;
    }
    if (leafKind !== LeafKind.Values) return; // Mask: the active bit is the value
    for (let c = 0; c < components; c++) writeScalar(v, leaf + leafValues + valueSize * n + this.#step * c, scalar, this.values[first + c] as number | bigint);
  }
}
