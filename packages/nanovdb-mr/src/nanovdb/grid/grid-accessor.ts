import {
  GRID_DATA_SIZE,
  GridType,
  Tree,
  Internal,
  LOWER,
  Leaf,
  ROOT_OFFSET,
  ROOT_TILE_SIZE,
  UPPER,
  internalIndex,
  leafIndex,
  rootKey,
  valueLayoutOf,
  type InternalLevel,
  type ValueLayout,
} from './grid-layout.js';
import { popcount8, testBit } from './bit-mask.js';
import type { GridMetadata } from './grid-validation.js';

/** Called for each active voxel: its index coordinates and its value (Float) or value index (index grids). */
export type ActiveVoxelVisitor = (x: number, y: number, z: number, value: number) => void;

/**
 * Host-side random access to one validated grid in host-accessible bytes: `getValue` (Float grids: the
 * f32 value; index grids: the value index, 0 for inactive voxels of OnIndex grids), `isActive`, and
 * `forEachActiveVoxel` (leaf voxels in breadth-first node order). Reads only through offsets the
 * validator checked. Root lookup is NanoVDB's linear scan of the tile table.
 * Spec: the host accessors of issue #4 (NanoVDB ReadAccessor semantics, without caching).
 */
export class GridAccessor {
  readonly #v: DataView;
  readonly #layout: ValueLayout;
  readonly #tableSize: number;
  readonly #leafStart: number;
  readonly #leafCount: number;

  /** What validation learned about the grid this accessor reads. */
  readonly metadata: GridMetadata;

  /** `bytes` holds the grid at `metadata.byteOffset` (as returned by `validateGrids` for those bytes). */
  constructor(bytes: Uint8Array, metadata: GridMetadata) {
    this.metadata = metadata;
    this.#v = new DataView(bytes.buffer, bytes.byteOffset + metadata.byteOffset, metadata.gridSize);
    this.#layout = valueLayoutOf(metadata.gridType) as ValueLayout;
    this.#tableSize = this.#v.getUint32(ROOT_OFFSET + 24, true);
    this.#leafCount = metadata.nodeCount[0];
    this.#leafStart = metadata.nodeCount[0] === 0 ? 0 : GRID_DATA_SIZE + Number(this.#v.getBigInt64(GRID_DATA_SIZE + Tree.nodeOffset, true));
  }

  /** The background value (Float) or background index (index grids). */
  get background(): number {
    return this.#read(ROOT_OFFSET + this.#layout.rootBackground);
  }

  /**
   * The value at integer index coordinates: Float grids give the voxel or tile value (background
   * outside the tree); index grids give the value index (OnIndex: 0 when inactive).
   */
  getValue(x: number, y: number, z: number): number {
    const v = this.#v;
    const tile = this.#findTile(x, y, z);
    if (tile < 0) return this.background;
    const child = v.getBigInt64(tile + 8, true);
    if (child === 0n) return this.#read(tile + this.#layout.tileValue);
    const upper = ROOT_OFFSET + Number(child);
    const lower = this.#descend(UPPER, upper, x, y, z);
    if (lower < 0) return this.#read(upper + UPPER.table + 8 * internalIndex(UPPER, x, y, z));
    const leaf = this.#descend(LOWER, lower, x, y, z);
    if (leaf < 0) return this.#read(lower + LOWER.table + 8 * internalIndex(LOWER, x, y, z));
    return this.#leafValue(leaf, leafIndex(x, y, z));
  }

  /** True when the voxel (or the tile covering it) is active. */
  isActive(x: number, y: number, z: number): boolean {
    const v = this.#v;
    const tile = this.#findTile(x, y, z);
    if (tile < 0) return false;
    const child = v.getBigInt64(tile + 8, true);
    if (child === 0n) return v.getUint32(tile + 16, true) !== 0;
    const upper = ROOT_OFFSET + Number(child);
    const lower = this.#descend(UPPER, upper, x, y, z);
    if (lower < 0) return testBit(v, upper + Internal.valueMask, internalIndex(UPPER, x, y, z));
    const leaf = this.#descend(LOWER, lower, x, y, z);
    if (leaf < 0) return testBit(v, lower + Internal.valueMask, internalIndex(LOWER, x, y, z));
    return testBit(v, leaf + Leaf.valueMask, leafIndex(x, y, z));
  }

  /** Visits every active leaf voxel, leaf by leaf in buffer order. Active tiles are not expanded. */
  forEachActiveVoxel(visit: ActiveVoxelVisitor): void {
    const v = this.#v;
    for (let l = 0; l < this.#leafCount; l++) {
      const leaf = this.#leafStart + l * this.#layout.leafSize;
      const ox = v.getInt32(leaf + Leaf.bboxMin, true) & ~7;
      const oy = v.getInt32(leaf + Leaf.bboxMin + 4, true) & ~7;
      const oz = v.getInt32(leaf + Leaf.bboxMin + 8, true) & ~7;
      for (let byte = 0; byte < 64; byte++) {
        const bits = v.getUint8(leaf + Leaf.valueMask + byte);
        if (bits === 0) continue;
        for (let b = 0; b < 8; b++) {
          if ((bits & (1 << b)) === 0) continue;
          const n = byte * 8 + b;
          visit(ox + (n >> 6), oy + ((n >> 3) & 7), oz + (n & 7), this.#leafValue(leaf, n));
        }
      }
    }
  }

  #findTile(x: number, y: number, z: number): number {
    const key = rootKey(x, y, z);
    const base = ROOT_OFFSET + this.#layout.rootDataSize;
    for (let t = 0; t < this.#tableSize; t++) {
      const tile = base + t * ROOT_TILE_SIZE;
      if (this.#v.getBigUint64(tile, true) === key) return tile;
    }
    return -1;
  }

  /** The child node's byte offset, or -1 when the entry holds a value. */
  #descend(level: InternalLevel, node: number, x: number, y: number, z: number): number {
    const i = internalIndex(level, x, y, z);
    if (!testBit(this.#v, node + level.childMask, i)) return -1;
    return node + Number(this.#v.getBigInt64(node + level.table + 8 * i, true));
  }

  #leafValue(leaf: number, n: number): number {
    const v = this.#v;
    if (!this.#layout.isIndex) return v.getFloat32(leaf + this.#layout.leafValues + 4 * n, true);
    const offset = Number(v.getBigUint64(leaf + this.#layout.leafValues, true));
    if (this.metadata.gridType !== GridType.OnIndex) return offset + n; // Index grids index every voxel
    if (!testBit(v, leaf + Leaf.valueMask, n)) return 0;
    const word = n >> 6;
    let below = 0;
    for (let byte = word * 8; byte < (n >> 3); byte++) below += popcount8(v.getUint8(leaf + Leaf.valueMask + byte));
    const partial = v.getUint8(leaf + Leaf.valueMask + (n >> 3)) & ((1 << (n & 7)) - 1);
    below += popcount8(partial);
    const prefix = word === 0 ? 0 : Number((v.getBigUint64(leaf + this.#layout.leafValues + 8, true) >> BigInt(9 * (word - 1))) & 511n);
    return offset + prefix + below;
  }

  #read(at: number): number {
    return this.#layout.isIndex ? Number(this.#v.getBigUint64(at, true)) : this.#v.getFloat32(at, true);
  }
}



