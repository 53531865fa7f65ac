import { ErrorCode, HsError } from '@hs/streams';
import {
  GRID_DATA_SIZE,
  GridType,
  Tree,
  Internal,
  Leaf,
  LeafKind,
  ROOT_OFFSET,
  internalIndex,
  leafBytes,
  leafIndex,
  rootKey,
  valueLayoutOf,
  type InternalLevel,
  type ValueLayout,
} from './grid-layout.js';
import { popcount8, testBit } from './bit-mask.js';
import { readExactScalar, readQuantized, readScalar } from './scalar-io.js';
import { requireGridInBytes } from './grid-in-bytes.js';
import type { GridMetadata } from './grid-validation.js';

/** Called for each active voxel: its index coordinates and its value (as `getValue` gives it; 0 for vector grids). */
export type ActiveVoxelVisitor = (x: number, y: number, z: number, value: number) => void;

/** A typed array a vector value is written into: Float32Array (Vec3f, Vec4f), Float64Array (Vec3d, Vec4d) or Uint8Array (RGBA8), or any of them. */
export type VectorOut = Float32Array | Float64Array | Uint8Array;

/**
 * Host-side random access to one validated grid in host-accessible bytes, for every NanoVDB 32.9 grid type.
 * - `getValue(x, y, z)`: scalar grids give the voxel or tile value as a number (Float, Double, Half, Int16/32,
 *   UInt8/32; Int64 exactly below 2^53, `getBigValue` for all 64 bits; Fp4/Fp8/Fp16/FpN dequantized as NanoVDB does,
 *   `f32(code * quantum + minimum)`; Mask and Boolean 1 or 0; index grids the value index, 0 for inactive voxels of
 *   OnIndex grids; PointIndex the running count of its leaf's points through the voxel, so the voxel's points are
 *   the leaf's `offset + [previous voxel's count, this count)`).
 * - `getVector(x, y, z, out)`: Vec3f/Vec3d/Vec4f/Vec4d/RGBA8 grids write the 3 or 4 components into `out` (no allocation).
 * - `isActive`, `forEachActiveVoxel` (leaf voxels in breadth-first node order).
 * Coordinates are NanoVDB's int32 `Coord`: every lookup converts x, y and z as `x | 0` does (a fraction is
 * truncated, NaN is 0, and a number outside -2^31..2^31-1 wraps), with no check on this hot path; pass integers
 * in that range.
 * Reads only through offsets the validator checked. Root lookup is NanoVDB's linear scan of the tile table.
 * Spec: the host accessors of issue #4 (NanoVDB ReadAccessor semantics, without caching); value types of issue 23.
 *
 * @example
 * ```ts
 * import { HostBackend, unwrap } from '@hs/streams';
 * import { GridAccessor, GridType, HostResource, voxelsToGrid } from '@hs/nanovdb-mr';
 *
 * const backend = new HostBackend();
 * const host = new HostResource(backend);
 * const coords = new Int32Array([1, 2, 3, 4, 5, 6]);
 * const density = unwrap(voxelsToGrid(backend, host, { coords, values: new Float32Array([0.5, 2]) }, { gridType: GridType.Float, background: -1 }));
 * const acc = unwrap(density.accessor());
 * console.log(`density (1,2,3) = ${acc.getValue(1, 2, 3)}, outside = ${acc.getValue(100, 0, 0)}`); // 0.5, the background -1
 * const velocity = unwrap(voxelsToGrid(backend, host, { coords, values: new Float32Array([1, 0, 0, 0, 3, 0]) }, { gridType: GridType.Vec3f }));
 * const v = unwrap(velocity.accessor()).getVector(4, 5, 6, new Float32Array(3)); // writes x, y, z, no allocation
 * console.log(`velocity (4,5,6) = ${Array.from(v)}`);
 * // an accessor over bytes you validated yourself
 * const bytes = unwrap(density.hostBytes());
 * let sum = 0;
 * for (const metadata of density.grids) new GridAccessor(bytes, metadata).forEachActiveVoxel((_x, _y, _z, value) => (sum += value));
 * console.log(`sum of active values: ${sum}`);
 * density.dispose();
 * velocity.dispose();
 * ```
 */
export class GridAccessor {
  readonly #v: DataView;
  readonly #layout: ValueLayout;
  readonly #tableSize: number;
  readonly #leafStart: number;
  readonly #leafCount: number;

  /** What validation learned about the grid this accessor reads. */
  readonly metadata: GridMetadata;

  /**
   * `bytes` holds the grid at `metadata.byteOffset` (as returned by `validateGrids` for those bytes).
   * @throws HsError InvalidArgument when `bytes` is not a Uint8Array, `metadata` not a grid's metadata, or `bytes` are
   *   shorter than that grid.
   */
  constructor(bytes: Uint8Array, metadata: GridMetadata) {
    requireGridInBytes('new GridAccessor', bytes, metadata, 'new GridAccessor(unwrap(handle.hostBytes()), handle.grid())');
    this.metadata = metadata;
    this.#v = new DataView(bytes.buffer, bytes.byteOffset + metadata.byteOffset, metadata.gridSize);
    this.#layout = valueLayoutOf(metadata.gridType) as ValueLayout;
    this.#tableSize = this.#v.getUint32(ROOT_OFFSET + 24, true);
    this.#leafCount = metadata.nodeCount[0];
    this.#leafStart = metadata.nodeCount[0] === 0 ? 0 : GRID_DATA_SIZE + Number(this.#v.getBigInt64(GRID_DATA_SIZE + Tree.nodeOffset, true));
  }

  /** Components of one value: 1 for scalar grids, 3 for Vec3f/Vec3d, 4 for Vec4f/Vec4d/RGBA8. */
  get components(): number {
    return this.#layout.components;
  }

  /** The background value of a scalar grid (see `getValue`). @throws HsError InvalidArgument for a vector grid (use `getBackgroundVector`). */
  get background(): number {
    this.#scalarOnly('background');
    return this.#read(ROOT_OFFSET + this.#layout.rootBackground);
  }

  /** Writes a vector grid's background into `out` and returns it. @throws HsError InvalidArgument as `getVector`. */
  getBackgroundVector<T extends VectorOut>(out: T): T {
    this.#vectorOnly('getBackgroundVector', out);
    this.#readVector(ROOT_OFFSET + this.#layout.rootBackground, out);
    return out;
  }

  /**
   * The value of a scalar grid at integer index coordinates (the voxel's, the covering tile's, or the background
   * outside the tree); see the class notes per grid type.
   * @throws HsError InvalidArgument for a vector grid (use `getVector`).
   */
  getValue(x: number, y: number, z: number): number {
    this.#scalarOnly('getValue');
    const at = this.#locate(x, y, z);
    return at >= 0 ? this.#read(at) : this.#leafValue(this.#foundLeaf, this.#foundVoxel);
  }

  /**
   * The value as a bigint, all 64 bits of Int64, index and PointIndex grids (other scalar grids: their integer value,
   * truncated toward zero).
   * @throws HsError InvalidArgument for a vector grid, or a NaN or infinite value.
   */
  getBigValue(x: number, y: number, z: number): bigint {
    this.#scalarOnly('getBigValue');
    const at = this.#locate(x, y, z);
    const { scalar, leafKind, leafValues, valueSize } = this.#layout;
    if (at >= 0) return toBig(readExactScalar(this.#v, at, scalar));
    if (leafKind === LeafKind.Values) return toBig(readExactScalar(this.#v, this.#foundLeaf + leafValues + valueSize * this.#foundVoxel, scalar));
    return toBig(this.#leafValue(this.#foundLeaf, this.#foundVoxel));
  }

  /**
   * Writes the vector value at integer index coordinates into `out` (components x, y, z[, w]; RGBA8: r, g, b, a as
   * 0-255) and returns `out`. No allocation.
   * @throws HsError InvalidArgument for a scalar grid or an `out` shorter than `components`.
   */
  getVector<T extends VectorOut>(x: number, y: number, z: number, out: T): T {
    this.#vectorOnly('getVector', out);
    const at = this.#locate(x, y, z);
    this.#readVector(at >= 0 ? at : this.#foundLeaf + this.#layout.leafValues + this.#layout.valueSize * this.#foundVoxel, out);
    return out;
  }

  /** True when the voxel (or the tile covering it) is active. */
  isActive(x: number, y: number, z: number): boolean {
    const v = this.#v;
    const tile = this.#findTile(x, y, z);
    if (tile < 0) return false;
    const child = v.getBigInt64(tile + 8, true);
    if (child === 0n) return v.getUint32(tile + 16, true) !== 0;
    const upper = ROOT_OFFSET + Number(child);
    const lower = this.#descend(this.#layout.upper, upper, x, y, z);
    if (lower < 0) return testBit(v, upper + Internal.valueMask, internalIndex(this.#layout.upper, x, y, z));
    const leaf = this.#descend(this.#layout.lower, lower, x, y, z);
    if (leaf < 0) return testBit(v, lower + Internal.valueMask, internalIndex(this.#layout.lower, x, y, z));
    return testBit(v, leaf + Leaf.valueMask, leafIndex(x, y, z));
  }

  /** Visits every active leaf voxel, leaf by leaf in buffer order, with its `getValue` value (0 for vector grids). Active tiles are not expanded. */
  forEachActiveVoxel(visit: ActiveVoxelVisitor): void {
    const v = this.#v;
    const scalar = this.#layout.components === 1;
    let leaf = this.#leafStart;
    for (let l = 0; l < this.#leafCount; l++, leaf += leafBytes(this.#layout, v, leaf)) {
      const ox = v.getInt32(leaf + Leaf.bboxMin, true) & ~7;
      const oy = v.getInt32(leaf + Leaf.bboxMin + 4, true) & ~7;
      const oz = v.getInt32(leaf + Leaf.bboxMin + 8, true) & ~7;
      for (let byte = 0; byte < 64; byte++) {
        const bits = v.getUint8(leaf + Leaf.valueMask + byte);
        if (bits === 0) continue;
        for (let b = 0; b < 8; b++) {
          if ((bits & (1 << b)) === 0) continue;
          const n = byte * 8 + b;
          visit(ox + (n >> 6), oy + ((n >> 3) & 7), oz + (n & 7), scalar ? this.#leafValue(leaf, n) : 0);
        }
      }
    }
  }

  #foundLeaf = 0;
  #foundVoxel = 0;

  /** The byte offset of the root, tile or internal value covering the voxel, or -1 with `#foundLeaf`/`#foundVoxel` set. */
  #locate(x: number, y: number, z: number): number {
    const v = this.#v;
    const { upper: U, lower: L } = this.#layout;
    const tile = this.#findTile(x, y, z);
    if (tile < 0) return ROOT_OFFSET + this.#layout.rootBackground;
    const child = v.getBigInt64(tile + 8, true);
    if (child === 0n) return tile + this.#layout.tileValue;
    const upper = ROOT_OFFSET + Number(child);
    const lower = this.#descend(U, upper, x, y, z);
    if (lower < 0) return upper + U.table + U.tableStride * internalIndex(U, x, y, z);
    const leaf = this.#descend(L, lower, x, y, z);
    if (leaf < 0) return lower + L.table + L.tableStride * internalIndex(L, x, y, z);
    this.#foundLeaf = leaf;
    this.#foundVoxel = leafIndex(x, y, z);
    return -1;
  }

  #findTile(x: number, y: number, z: number): number {
    const key = rootKey(x, y, z);
    const base = ROOT_OFFSET + this.#layout.rootDataSize;
    for (let t = 0; t < this.#tableSize; t++) {
      const tile = base + t * this.#layout.tileSize;
      if (this.#v.getBigUint64(tile, true) === key) return tile;
    }
    return -1;
  }

  /** The child node's byte offset, or -1 when the entry holds a value. */
  #descend(level: InternalLevel, node: number, x: number, y: number, z: number): number {
    const i = internalIndex(level, x, y, z);
    if (!testBit(this.#v, node + level.childMask, i)) return -1;
    return node + Number(this.#v.getBigInt64(node + level.table + level.tableStride * i, true));
  }

  #leafValue(leaf: number, n: number): number {
    const v = this.#v;
    const layout = this.#layout;
    switch (layout.leafKind) {
      case LeafKind.Values:
        return readScalar(v, leaf + layout.leafValues + layout.valueSize * n, layout.scalar);
      case LeafKind.Mask:
        return testBit(v, leaf + Leaf.valueMask, n) ? 1 : 0;
      case LeafKind.Bits:
        return testBit(v, leaf + layout.leafValues, n) ? 1 : 0;
      case LeafKind.Quantized:
        return readQuantized(v, layout, leaf, n);
      case LeafKind.Point:
        return v.getUint16(leaf + layout.leafValues + 16 + 2 * n, true);
      case LeafKind.Index:
        return this.#indexValue(leaf, n);
    }
  }

  #indexValue(leaf: number, n: number): number {
    const v = this.#v;
    const offset = Number(v.getBigUint64(leaf + this.#layout.leafValues, true));
    if (this.metadata.gridType !== GridType.OnIndex) return offset + n; // Index grids index every voxel
    if (!testBit(v, leaf + Leaf.valueMask, n)) return 0;
    const word = n >> 6;
    let below = 0;
    for (let byte = word * 8; byte < n >> 3; byte++) below += popcount8(v.getUint8(leaf + Leaf.valueMask + byte));
    below += popcount8(v.getUint8(leaf + Leaf.valueMask + (n >> 3)) & ((1 << (n & 7)) - 1));
    const prefix = word === 0 ? 0 : Number((v.getBigUint64(leaf + this.#layout.leafValues + 8, true) >> BigInt(9 * (word - 1))) & 511n);
    return offset + prefix + below;
  }

  #read(at: number): number {
    return readScalar(this.#v, at, this.#layout.scalar);
  }

  #readVector(at: number, out: VectorOut): void {
    const { scalar, components } = this.#layout;
    const step = scalar === 'f64' ? 8 : scalar === 'f32' ? 4 : 1;
    for (let c = 0; c < components; c++) out[c] = readScalar(this.#v, at + step * c, scalar);
  }

  #scalarOnly(who: string): void {
    if (this.#layout.components !== 1) {
      throw new HsError(ErrorCode.InvalidArgument, `GridAccessor.${who}: the grid is ${GridType[this.metadata.gridType]}, a vector type; use getVector / getBackgroundVector with a typed array`);
    }
  }

  #vectorOnly(who: string, out: VectorOut): void {
    const n = this.#layout.components;
    if (n === 1) throw new HsError(ErrorCode.InvalidArgument, `GridAccessor.${who}: the grid is ${GridType[this.metadata.gridType]}, a scalar type; use getValue`);
    if (!(out instanceof Float32Array || out instanceof Float64Array || out instanceof Uint8Array) || out.length < n) {
      throw new HsError(ErrorCode.InvalidArgument, `GridAccessor.${who}: out must be a Float32Array, Float64Array or Uint8Array of at least ${n} elements`);
    }
  }
}

/** A stored value as a bigint: 64-bit integers as they are, other numbers truncated toward zero. */
function toBig(x: number | bigint): bigint {
  if (typeof x === 'bigint') return x;
  if (!Number.isFinite(x)) throw new HsError(ErrorCode.InvalidArgument, `GridAccessor.getBigValue: the value ${x} has no integer value; use getValue`);
  return BigInt(Math.trunc(x));
}
