/**
 * Writes a NanoVDB grid from voxel coordinates already sorted into build order (see `voxel-order.ts`):
 * the layout plan (node counts and level offsets, optionally clamped to capacities), the static part
 * of GridData (the header template) and every node. The host builder and the host implementation of
 * the device build's kernels both use it, so every backend writes the same bytes.
 * Spec: NANOVDB-FORMAT.md (buffer order, GridData, TreeData, RootData, nodes, leaves).
 */
import { setBit } from '../grid/bit-mask.js';
import type { VoxelValueWriter } from './voxel-values.js';
import {
  FORMAT_VERSION,
  GRID_DATA_SIZE,
  GRID_MAGIC,
  Grid,
  GridClass,
  GridFlags,
  Internal,
  Leaf,
  ROOT_OFFSET,
  Root,
  Tile,
  Tree,
  internalIndex,
  type InternalLevel,
  leafIndex,
  rootKey,
  type ValueLayout,
} from '../grid/grid-layout.js';

/** What fixes the grid's static header: value layout, map, name and class. */
export interface GridSettings {
  readonly layout: ValueLayout;
  /** Grid class to declare; default IndexGrid for index grids, Unknown otherwise. */
  readonly gridClass?: GridClass;
  /** World units per voxel. */
  readonly voxelSize: number;
  /** World position of voxel (0, 0, 0). */
  readonly origin: readonly [number, number, number];
  /** UTF-8 name, at most 255 bytes. */
  readonly nameBytes: Uint8Array;
}

/** Most nodes of each level a grid may hold; a build that needs more keeps a prefix of its voxels. */
export interface NodeCapacity {
  /** Root tiles, one upper node each. */
  readonly uppers: number;
  readonly lowers: number;
  readonly leaves: number;
}

/** Node counts and the byte offset of each level, from sorted voxels. */
export interface GridPlan {
  /** Sorted coordinates kept (a prefix; the rest would overflow a capacity). */
  readonly cut: number;
  readonly tiles: number;
  readonly lowers: number;
  readonly leaves: number;
  readonly voxels: number;
  readonly upperStart: number;
  readonly lowerStart: number;
  readonly leafStart: number;
  readonly gridSize: number;
  /** Counts over all sorted coordinates, before clamping. */
  readonly total: { readonly tiles: number; readonly lowers: number; readonly leaves: number; readonly voxels: number };
}

/** Bytes of a grid with these node counts. */
export function gridBytes(layout: ValueLayout, tiles: number, lowers: number, leaves: number): number {
  return ROOT_OFFSET + layout.rootDataSize + tiles * (layout.tileSize + layout.upper.size) + lowers * layout.lower.size + leaves * layout.leafSize;
}

/**
 * Counts the voxels, leaves, lower nodes and root tiles of `count` sorted coordinates (`sorted` holds
 * x, y, z triplets in build order, duplicates adjacent) and keeps the longest prefix whose node counts
 * fit `capacity` (no clamping when it is undefined).
 */
export function planGrid(sorted: Int32Array, count: number, layout: ValueLayout, capacity?: NodeCapacity): GridPlan {
  let tiles = 0;
  let lowers = 0;
  let leaves = 0;
  let voxels = 0;
  let cut = count;
  // the counts of the kept prefix, once a capacity is exceeded (-1: not yet)
  let keptTiles = -1;
  let keptLowers = 0;
  let keptLeaves = 0;
  let keptVoxels = 0;
  const capUppers = capacity?.uppers ?? Number.POSITIVE_INFINITY;
  const capLowers = capacity?.lowers ?? Number.POSITIVE_INFINITY;
  const capLeaves = capacity?.leaves ?? Number.POSITIVE_INFINITY;
  let px = 0;
  let py = 0;
  let pz = 0;
  for (let i = 0; i < count; i++) {
    const x = sorted[3 * i] as number;
    const y = sorted[3 * i + 1] as number;
    const z = sorted[3 * i + 2] as number;
    const first = i === 0;
    if (!first && x === px && y === py && z === pz) continue;
    const newLeaf = first || ((x ^ px) | (y ^ py) | (z ^ pz)) >>> 3 !== 0;
    if (newLeaf) {
      if (first || ((x ^ px) | (y ^ py) | (z ^ pz)) >>> 7 !== 0) {
        if (first || ((x ^ px) | (y ^ py) | (z ^ pz)) >>> 12 !== 0) tiles++;
        lowers++;
      }
      leaves++;
    }
    voxels++;
    px = x;
    py = y;
    pz = z;
    if (keptTiles < 0 && (tiles > capUppers || lowers > capLowers || leaves > capLeaves)) {
      // the counts before this voxel: undo its increments
      cut = i;
      keptVoxels = voxels - 1;
      keptLeaves = leaves - (newLeaf ? 1 : 0);
      keptLowers = lowers;
      keptTiles = tiles;
      if (newLeaf && (first || ((x ^ (sorted[3 * i - 3] as number)) | (y ^ (sorted[3 * i - 2] as number)) | (z ^ (sorted[3 * i - 1] as number))) >>> 7 !== 0)) {
        keptLowers--;
        if (first || ((x ^ (sorted[3 * i - 3] as number)) | (y ^ (sorted[3 * i - 2] as number)) | (z ^ (sorted[3 * i - 1] as number))) >>> 12 !== 0) keptTiles--;
      }
    }
  }
  const total = { tiles, lowers, leaves, voxels };
  if (keptTiles < 0) return planOfCounts(layout, count, total);
  return { ...planOfCounts(layout, cut, { tiles: keptTiles, lowers: keptLowers, leaves: keptLeaves, voxels: keptVoxels }), total };
}

/**
 * The plan of `count` sorted coordinates whose node counts are already known (all of them kept), as `planGrid` gives it:
 * the host PointsToGrid write stage takes the counts its sort stage reported instead of walking the voxels again.
 */
export function planOfCounts(layout: ValueLayout, count: number, counts: GridPlan['total']): GridPlan {
  const { tiles, lowers, leaves, voxels } = counts;
  const upperStart = ROOT_OFFSET + layout.rootDataSize + tiles * layout.tileSize;
  const lowerStart = upperStart + tiles * layout.upper.size;
  const leafStart = lowerStart + lowers * layout.lower.size;
  const total = { tiles, lowers, leaves, voxels };
  return { cut: count, tiles, lowers, leaves, voxels, upperStart, lowerStart, leafStart, gridSize: leafStart + leaves * layout.leafSize, total };
}

/**
 * The static part of GridData (672 bytes): magic, version, flags (HasBBox | IsBreadthFirst), grid
 * index and count, name, the map (voxel size on the diagonal, origin as translation, taper 1), voxel
 * size, grid class and type. The build fills gridSize, the world bbox, the blind-metadata offset, data1
 * and the checksum.
 */
export function gridTemplate(s: GridSettings): Uint8Array {
  const bytes = new Uint8Array(GRID_DATA_SIZE);
  const v = new DataView(bytes.buffer);
  const { layout, voxelSize, origin } = s;
  v.setBigUint64(Grid.magic, GRID_MAGIC, true);
  v.setUint32(Grid.version, FORMAT_VERSION, true);
  v.setUint32(Grid.flags, GridFlags.HasBBox | GridFlags.IsBreadthFirst, true);
  v.setUint32(Grid.gridIndex, 0, true);
  v.setUint32(Grid.gridCount, 1, true);
  bytes.set(s.nameBytes, Grid.gridName);
  for (let a = 0; a < 3; a++) {
    const diag = 4 * a; // row-major 3x3: element (a, a)
    v.setFloat32(Grid.matF + 4 * diag, voxelSize, true);
    v.setFloat32(Grid.invMatF + 4 * diag, 1 / voxelSize, true);
    v.setFloat32(Grid.vecF + 4 * a, origin[a] as number, true);
    v.setFloat64(Grid.matD + 8 * diag, voxelSize, true);
    v.setFloat64(Grid.invMatD + 8 * diag, 1 / voxelSize, true);
    v.setFloat64(Grid.vecD + 8 * a, origin[a] as number, true);
    v.setFloat64(Grid.voxelSize + 8 * a, voxelSize, true);
  }
  v.setFloat32(Grid.taperF, 1, true);
  v.setFloat64(Grid.taperD, 1, true);
  v.setUint32(Grid.gridClass, s.gridClass ?? (layout.isIndex ? GridClass.IndexGrid : GridClass.Unknown), true);
  v.setUint32(Grid.gridType, layout.gridType, true);
  return bytes;
}

/** A running index bounding box (plain fields: it is updated once per voxel). */
export class BBox {
  x0 = 2147483647;
  y0 = 2147483647;
  z0 = 2147483647;
  x1 = -2147483648;
  y1 = -2147483648;
  z1 = -2147483648;
  add(x: number, y: number, z: number): void {
    if (x < this.x0) this.x0 = x;
    if (y < this.y0) this.y0 = y;
    if (z < this.z0) this.z0 = z;
    if (x > this.x1) this.x1 = x;
    if (y > this.y1) this.y1 = y;
    if (z > this.z1) this.z1 = z;
  }
  merge(o: BBox): void {
    this.add(o.x0, o.y0, o.z0);
    this.add(o.x1, o.y1, o.z1);
  }
  reset(): void {
    this.x0 = this.y0 = this.z0 = 2147483647;
    this.x1 = this.y1 = this.z1 = -2147483648;
  }
  min(axis: number): number {
    return axis === 0 ? this.x0 : axis === 1 ? this.y0 : this.z0;
  }
  max(axis: number): number {
    return axis === 0 ? this.x1 : axis === 1 ? this.y1 : this.z1;
  }
  /** Writes min then max as i32x3 each. */
  write(v: DataView, at: number): void {
    v.setInt32(at, this.x0, true);
    v.setInt32(at + 4, this.y0, true);
    v.setInt32(at + 8, this.z0, true);
    v.setInt32(at + 12, this.x1, true);
    v.setInt32(at + 16, this.y1, true);
    v.setInt32(at + 20, this.z1, true);
  }
}

/** Writes a non-negative integer below 2^53 as a little-endian u64 without a BigInt. */
function setU64(v: DataView, at: number, value: number): void {
  v.setUint32(at, value >>> 0, true);
  v.setUint32(at + 4, Math.floor(value / 4294967296), true);
}

/** Writes a signed integer of magnitude below 2^53 as a little-endian i64 without a BigInt. */
function setI64(v: DataView, at: number, value: number): void {
  v.setUint32(at, value >>> 0, true);
  v.setInt32(at + 4, Math.floor(value / 4294967296), true);
}

/**
 * Writes the grid of the first `plan.cut` sorted coordinates into `bytes[0, plan.gridSize)` (zeroed
 * first): `template` (from `gridTemplate`) as GridData, then TreeData, root, tiles, nodes and leaves,
 * everything but the checksum (left 0). Without `values`, Float voxels get 1.0 over `background` (the points
 * builders: it goes into the root, every table entry that is not a child and every inactive leaf voxel); with it, the background goes into the root, every table entry that is not a child and
 * every inactive leaf voxel, and sorted voxel `i` gets its value from `values` (which also sizes each leaf and
 * encodes quantized ones when the leaf closes); `plan.gridSize` must then count the leaves `values` sizes.
 */
export function writeGrid(bytes: Uint8Array, sorted: Int32Array, plan: GridPlan, layout: ValueLayout, template: Uint8Array, values?: VoxelValueWriter, background = 0): void {
  bytes.fill(0, 0, plan.gridSize);
  const v = new DataView(bytes.buffer, bytes.byteOffset, plan.gridSize);
  const { upper: U, lower: L } = layout;
  const writeBackground =
    values !== undefined ? (at: number): void => values.writeBackground(v, at) : background !== 0 ? (at: number): void => v.setFloat32(at, background, true) : undefined;
  const fillTable = (node: number, level: InternalLevel): void => {
    if (writeBackground === undefined) return;
    for (let e = 0; e < 1 << (3 * level.log2Dim); e++) writeBackground(node + level.table + level.tableStride * e);
  };
  const rootBox = new BBox();
  const upperBox = new BBox();
  const lowerBox = new BBox();
  const leafBox = new BBox();
  let tile = -1;
  let lower = -1;
  let leaf = -1;
  let upperAt = 0;
  let lowerAt = 0;
  let leafAt = 0;
  let activeBefore = 0;
  let nextLeafAt = plan.leafStart;
  // active voxels of the open leaf in each 64-bit word of its value mask (the voxels come in mask order)
  const wordCounts = new Int32Array(8);
  const closeLeaf = (): void => {
    if (leaf < 0) return;
    v.setInt32(leafAt + Leaf.bboxMin, leafBox.x0, true);
    v.setInt32(leafAt + Leaf.bboxMin + 4, leafBox.y0, true);
    v.setInt32(leafAt + Leaf.bboxMin + 8, leafBox.z0, true);
    bytes[leafAt + Leaf.bboxDif] = leafBox.x1 - leafBox.x0;
    bytes[leafAt + Leaf.bboxDif + 1] = leafBox.y1 - leafBox.y0;
    bytes[leafAt + Leaf.bboxDif + 2] = leafBox.z1 - leafBox.z0;
    bytes[leafAt + Leaf.flags] = GridFlags.HasBBox;
    values?.closeLeaf(v, leafAt);
    if (layout.isIndex) {
      setU64(v, leafAt + layout.leafValues, activeBefore + 1);
      // seven cumulative 9-bit counts (after words 0..6) packed at bits 9w of a u64: two u32 halves
      let lo = 0;
      let hi = 0;
      let running = 0;
      for (let w = 0; w < 8; w++) {
        running += wordCounts[w] as number;
        wordCounts[w] = 0;
        if (w === 7) break;
        const at = 9 * w;
        if (at + 9 <= 32) lo |= running << at;
        else if (at >= 32) hi |= running << (at - 32);
        else {
          lo |= running << at;
          hi |= running >>> (32 - at);
        }
      }
      v.setUint32(leafAt + layout.leafValues + 8, lo >>> 0, true);
      v.setUint32(leafAt + layout.leafValues + 12, hi >>> 0, true);
      activeBefore += running;
    }
    lowerBox.merge(leafBox);
    leafBox.reset();
  };
  const closeLower = (): void => {
    if (lower < 0) return;
    lowerBox.write(v, lowerAt + Internal.bbox);
    upperBox.merge(lowerBox);
    lowerBox.reset();
  };
  const closeUpper = (): void => {
    if (tile < 0) return;
    upperBox.write(v, upperAt + Internal.bbox);
    rootBox.merge(upperBox);
    upperBox.reset();
  };

  for (let i = 0; i < plan.cut; i++) {
    const x = sorted[3 * i] as number;
    const y = sorted[3 * i + 1] as number;
    const z = sorted[3 * i + 2] as number;
    const first = i === 0;
    const px = first ? 0 : (sorted[3 * i - 3] as number);
    const py = first ? 0 : (sorted[3 * i - 2] as number);
    const pz = first ? 0 : (sorted[3 * i - 1] as number);
    if (!first && x === px && y === py && z === pz) continue;
    const newLeaf = first || x >> 3 !== px >> 3 || y >> 3 !== py >> 3 || z >> 3 !== pz >> 3;
    const newLower = newLeaf && (first || x >> 7 !== px >> 7 || y >> 7 !== py >> 7 || z >> 7 !== pz >> 7);
    const newTile = newLower && (first || x >> 12 !== px >> 12 || y >> 12 !== py >> 12 || z >> 12 !== pz >> 12);
    if (newLeaf) closeLeaf();
    if (newLower) closeLower();
    if (newTile) {
      closeUpper();
      tile++;
      upperAt = plan.upperStart + tile * U.size;
      const tileAt = ROOT_OFFSET + layout.rootDataSize + tile * layout.tileSize;
      v.setBigUint64(tileAt + Tile.key, rootKey(x, y, z), true);
      setI64(v, tileAt + Tile.child, upperAt - ROOT_OFFSET);
      bytes[upperAt + Internal.flags] = GridFlags.HasBBox;
      fillTable(upperAt, U);
    }
    if (newLower) {
      lower++;
      lowerAt = plan.lowerStart + lower * L.size;
      const entry = internalIndex(U, x, y, z);
      setBit(bytes, upperAt + U.childMask, entry);
      setI64(v, upperAt + U.table + U.tableStride * entry, lowerAt - upperAt);
      bytes[lowerAt + Internal.flags] = GridFlags.HasBBox;
      fillTable(lowerAt, L);
    }
    if (newLeaf) {
      leaf++;
      leafAt = values === undefined ? plan.leafStart + leaf * layout.leafSize : nextLeafAt;
      if (values !== undefined) nextLeafAt += values.leafBytes(leaf);
      const entry = internalIndex(L, x, y, z);
      setBit(bytes, lowerAt + L.childMask, entry);
      setI64(v, lowerAt + L.table + L.tableStride * entry, leafAt - lowerAt);
      if (values !== undefined) values.openLeaf(v, leafAt);
      else if (writeBackground !== undefined) for (let m = 0; m < 512; m++) writeBackground(leafAt + layout.leafValues + 4 * m);
    }
    const n = leafIndex(x, y, z);
    setBit(bytes, leafAt + Leaf.valueMask, n);
    wordCounts[n >> 6]! += 1;
    if (values !== undefined) values.writeVoxel(v, leafAt, n, i);
    else if (!layout.isIndex) v.setFloat32(leafAt + layout.leafValues + 4 * n, 1, true);
    leafBox.add(x, y, z);
  }
  closeLeaf();
  closeLower();
  closeUpper();
  writeDynamicHeader(v, bytes, plan, layout, template, rootBox);
  writeBackground?.(ROOT_OFFSET + layout.rootBackground);
}

/** GridData's and TreeData's build-dependent fields and the root's bbox and table size (after the nodes are written). */
export function writeDynamicHeader(v: DataView, bytes: Uint8Array, plan: GridPlan, layout: ValueLayout, template: Uint8Array, rootBox: BBox): void {
  bytes.set(template, 0);
  v.setBigUint64(Grid.gridSize, BigInt(plan.gridSize), true);
  if (plan.voxels > 0) {
    const voxelSize = v.getFloat64(Grid.voxelSize, true);
    for (let a = 0; a < 3; a++) {
      const origin = v.getFloat64(Grid.vecD + 8 * a, true);
      v.setFloat64(Grid.worldBBox + 8 * a, origin + voxelSize * rootBox.min(a), true);
      v.setFloat64(Grid.worldBBox + 24 + 8 * a, origin + voxelSize * (rootBox.max(a) + 1), true);
    }
  }
  v.setBigInt64(Grid.blindMetadataOffset, BigInt(plan.gridSize), true);
  v.setBigUint64(Grid.data1, layout.isIndex ? BigInt(plan.voxels + 1) : 0n, true);

  const tree = GRID_DATA_SIZE;
  const rel = (start: number, count: number): bigint => (count === 0 ? 0n : BigInt(start - tree));
  v.setBigInt64(tree + Tree.nodeOffset, rel(plan.leafStart, plan.leaves), true);
  v.setBigInt64(tree + Tree.nodeOffset + 8, rel(plan.lowerStart, plan.lowers), true);
  v.setBigInt64(tree + Tree.nodeOffset + 16, rel(plan.upperStart, plan.tiles), true);
  v.setBigInt64(tree + Tree.nodeOffset + 24, BigInt(ROOT_OFFSET - tree), true);
  v.setUint32(tree + Tree.nodeCount, plan.leaves, true);
  v.setUint32(tree + Tree.nodeCount + 4, plan.lowers, true);
  v.setUint32(tree + Tree.nodeCount + 8, plan.tiles, true);
  v.setBigUint64(tree + Tree.voxelCount, BigInt(plan.voxels), true);

  rootBox.write(v, ROOT_OFFSET + Root.bbox);
  v.setUint32(ROOT_OFFSET + Root.tableSize, plan.tiles, true);
}
