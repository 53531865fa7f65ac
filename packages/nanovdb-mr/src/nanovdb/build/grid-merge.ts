/**
 * Merges grids whose root tiles are disjoint and ordered (every key of part p below every key of part p + 1 in
 * build order) into one grid: what a points build split by root tile across devices gives back. The merged grid
 * holds each level's nodes of the parts in part order, so it is byte for byte the grid one build of all the points
 * writes. Host bytes in, host bytes out; the caller owns both.
 * Spec: NANOVDB-FORMAT.md (buffer order, TreeData, RootData, tiles, internal tables, OnIndex leaf offsets).
 */
import { ErrorCode, err, ok, type Result } from '@hs/streams';
import { computeChecksum, writeChecksum, type ChecksumMode } from '../grid/grid-checksum.js';
import { FLOAT_LAYOUT, GRID_DATA_SIZE, GRID_MAGIC, Grid, GridType, ON_INDEX_LAYOUT, ROOT_OFFSET, Root, Tile, Tree, type InternalLevel, type ValueLayout } from '../grid/grid-layout.js';
import { BBox, planOfCounts, writeDynamicHeader, type GridPlan } from './grid-writer.js';
import { readI64Number, readU64Number, writeI64Number } from '../grid/scalar-io.js';

/** One part's node counts and level starts, read from its header. */
interface PartLayout {
  readonly bytes: Uint8Array;
  readonly view: DataView;
  readonly plan: GridPlan;
}

/** What merging `parts` gives: the merged plan and the value layout. */
export interface MergePlan {
  readonly layout: ValueLayout;
  readonly plan: GridPlan;
  /** Bytes of the merged grid. */
  readonly gridSize: number;
}

/** Key bits that order root tiles as the build does: the top bit of each 20-bit tile coordinate flipped (the 2^31 bias). */
const KEY_BIAS = (1n << 19n) | (1n << 40n) | (1n << 61n);

function layoutOf(gridType: number): ValueLayout | undefined {
  return gridType === GridType.Float ? FLOAT_LAYOUT : gridType === GridType.OnIndex ? ON_INDEX_LAYOUT : undefined;
}

/** The header fields every part must share: flags, index and count, name, map, voxel size, class and type. */
const SHARED_FIELDS: readonly (readonly [number, number])[] = [
  [Grid.version, Grid.gridSize],
  [Grid.gridName, Grid.worldBBox],
  [Grid.voxelSize, Grid.blindMetadataOffset],
];

/**
 * Checks `parts` (OnIndex or Float grids as the points builders write them: breadth-first, no active tiles, no blind
 * data, the same header settings, root tiles ordered across the parts) and plans their merge. InvalidArgument naming
 * the part and the field otherwise.
 */
export function planGridMerge(parts: readonly Uint8Array[]): Result<MergePlan> {
  const who = 'mergeGridsByRootTiles';
  if (parts.length === 0) return err(ErrorCode.InvalidArgument, `${who}: no grids to merge`);
  const layouts: PartLayout[] = [];
  let layout: ValueLayout | undefined;
  for (let p = 0; p < parts.length; p++) {
    const bytes = parts[p] as Uint8Array;
    if (!(bytes instanceof Uint8Array) || bytes.byteLength < ROOT_OFFSET) return err(ErrorCode.InvalidArgument, `${who}: part ${p} is not a grid's bytes`);
    const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (v.getBigUint64(Grid.magic, true) !== GRID_MAGIC) return err(ErrorCode.InvalidArgument, `${who}: part ${p} has no grid magic`);
    const own = layoutOf(v.getUint32(Grid.gridType, true));
    if (own === undefined) return err(ErrorCode.InvalidArgument, `${who}: part ${p} is grid type ${v.getUint32(Grid.gridType, true)}; only Float and OnIndex grids merge`);
    layout ??= own;
    if (own !== layout) return err(ErrorCode.InvalidArgument, `${who}: part ${p} is of another grid type than part 0`);
    if (p > 0) {
      const first = parts[0] as Uint8Array;
      for (const [from, to] of SHARED_FIELDS) {
        for (let b = from; b < to; b++) if (bytes[b] !== first[b]) return err(ErrorCode.InvalidArgument, `${who}: part ${p}'s header differs from part 0's at byte ${b} (name, map, class or flags)`);
      }
    }
    const tree = GRID_DATA_SIZE;
    if (v.getUint32(tree + Tree.tileCount, true) !== 0 || v.getUint32(tree + Tree.tileCount + 4, true) !== 0 || v.getUint32(tree + Tree.tileCount + 8, true) !== 0) {
      return err(ErrorCode.InvalidArgument, `${who}: part ${p} has active tiles; only points-built grids merge`);
    }
    const plan = planOfPart(layout, v);
    const gridSize = readU64Number(v, Grid.gridSize);
    if (plan.gridSize !== gridSize || bytes.byteLength < gridSize || v.getUint32(tree + Tree.nodeCount + 8, true) !== plan.tiles) {
      return err(ErrorCode.InvalidArgument, `${who}: part ${p}'s gridSize ${gridSize} does not match its node counts (blind data or a short buffer)`);
    }
    layouts.push({ bytes, view: v, plan });
  }
  const L = layout as ValueLayout;
  // the parts' root tiles must be ordered across parts (within a part the build ordered them)
  let lastKey = -1n;
  for (let p = 0; p < layouts.length; p++) {
    const { view, plan } = layouts[p] as PartLayout;
    if (plan.tiles === 0) continue;
    const tileStart = ROOT_OFFSET + L.rootDataSize;
    const first = view.getBigUint64(tileStart + Tile.key, true) ^ KEY_BIAS;
    if (first <= lastKey) return err(ErrorCode.InvalidArgument, `${who}: part ${p}'s first root tile does not follow the previous parts' tiles in build order`);
    lastKey = view.getBigUint64(tileStart + (plan.tiles - 1) * L.tileSize + Tile.key, true) ^ KEY_BIAS;
  }
  const total = { tiles: 0, lowers: 0, leaves: 0, voxels: 0 };
  for (const { plan } of layouts) {
    total.tiles += plan.tiles;
    total.lowers += plan.lowers;
    total.leaves += plan.leaves;
    total.voxels += plan.voxels;
  }
  const plan = planOfCounts(L, 0, total);
  return ok({ layout: L, plan, gridSize: plan.gridSize });
}

/** The level fields `shiftChildren` reads: node size, child mask, table and its stride, children per axis. */
export type ChildTable = Pick<InternalLevel, 'size' | 'childMask' | 'table' | 'tableStride' | 'log2Dim'>;

/** Adds `delta` to the i64 table entry of every child of each of `count` nodes of `level` in `out` from `start`. */
export function shiftChildren(out: DataView, start: number, count: number, level: ChildTable, delta: number): void {
  if (delta === 0) return;
  const words = (1 << (3 * level.log2Dim)) >>> 5;
  for (let n = 0; n < count; n++) {
    const node = start + n * level.size;
    for (let w = 0; w < words; w++) {
      let bits = out.getUint32(node + level.childMask + 4 * w, true);
      while (bits !== 0) {
        const low = bits & -bits;
        const e = 32 * w + 31 - Math.clz32(low);
        bits ^= low;
        const at = node + level.table + level.tableStride * e;
        writeI64Number(out, at, readI64Number(out, at) + delta);
      }
    }
  }
}

/** A part's own plan (node counts and level starts), from the counts in its header (`v` views its bytes from 0). */
export function planOfPart(layout: ValueLayout, v: DataView): GridPlan {
  return planOfCounts(layout, 0, {
    tiles: v.getUint32(ROOT_OFFSET + Root.tableSize, true),
    lowers: v.getUint32(GRID_DATA_SIZE + Tree.nodeCount + 4, true),
    leaves: v.getUint32(GRID_DATA_SIZE + Tree.nodeCount, true),
    voxels: readU64Number(v, GRID_DATA_SIZE + Tree.voxelCount),
  });
}

/** The nodes of the parts placed so far, at each level (advanced by `placePart`). */
export interface MergeCursor {
  tiles: number;
  lowers: number;
  leaves: number;
  voxels: number;
}

/** Where a placed part's levels go in the merged grid, how far each moves, and the voxels of the parts before it. */
export interface PartPlacement {
  readonly upperAt: number;
  readonly lowerAt: number;
  readonly leafAt: number;
  readonly upperShift: number;
  readonly lowerShift: number;
  readonly leafShift: number;
  readonly voxelBase: number;
}

/**
 * Places the next part (`bytes` from offset 0, its own plan `own`, at least one root tile) in the merge `plan`
 * after the parts `cursor` counts: grows `rootBox` by the part's root box, copies its root tiles into `head` (`v`
 * views it) at their merged place with their child offsets moved, advances `cursor` and returns where the part's
 * node levels go. Both merges (host bytes and device memory) place parts with it.
 */
export function placePart(plan: GridPlan, layout: ValueLayout, own: GridPlan, bytes: Uint8Array, head: Uint8Array, v: DataView, rootBox: BBox, cursor: MergeCursor): PartPlacement {
  const pv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  rootBox.add(pv.getInt32(ROOT_OFFSET + Root.bbox, true), pv.getInt32(ROOT_OFFSET + Root.bbox + 4, true), pv.getInt32(ROOT_OFFSET + Root.bbox + 8, true));
  rootBox.add(pv.getInt32(ROOT_OFFSET + Root.bbox + 12, true), pv.getInt32(ROOT_OFFSET + Root.bbox + 16, true), pv.getInt32(ROOT_OFFSET + Root.bbox + 20, true));
  const upperAt = plan.upperStart + cursor.tiles * layout.upper.size;
  const lowerAt = plan.lowerStart + cursor.lowers * layout.lower.size;
  const leafAt = plan.leafStart + cursor.leaves * layout.leafSize;
  const upperShift = upperAt - own.upperStart;
  // root tiles: child offsets are from the RootData, which stays put
  const tileStart = ROOT_OFFSET + layout.rootDataSize;
  const tilesAt = tileStart + cursor.tiles * layout.tileSize;
  head.set(bytes.subarray(tileStart, tileStart + own.tiles * layout.tileSize), tilesAt);
  for (let t = 0; t < own.tiles; t++) {
    const at = tilesAt + t * layout.tileSize + Tile.child;
    writeI64Number(v, at, readI64Number(v, at) + upperShift);
  }
  const voxelBase = cursor.voxels;
  cursor.tiles += own.tiles;
  cursor.lowers += own.lowers;
  cursor.leaves += own.leaves;
  cursor.voxels += own.voxels;
  return { upperAt, lowerAt, leafAt, upperShift, lowerShift: lowerAt - own.lowerStart, leafShift: leafAt - own.leafStart, voxelBase };
}

/**
 * Writes the merge of `parts` (see `planGridMerge`, whose plan `merge` is) into `out[0, merge.gridSize)` and stores
 * the checksum `checksum` asks for: root tiles, upper, lower and leaf nodes of the parts in part order at each level,
 * every child offset moved with its nodes, OnIndex leaf offsets moved past the parts before, and the header's
 * counts, bounding boxes, value count and size those of the merged tree.
 */
export function mergeGridsByRootTiles(parts: readonly Uint8Array[], merge: MergePlan, out: Uint8Array, checksum: ChecksumMode): void {
  const { layout, plan } = merge;
  const v = new DataView(out.buffer, out.byteOffset, merge.gridSize);
  const first = parts[0] as Uint8Array;
  // the header template and RootData (background and statistics) of part 0; the build-dependent fields follow
  out.set(first.subarray(0, ROOT_OFFSET + layout.rootDataSize), 0);
  const rootBox = new BBox();
  const cursor: MergeCursor = { tiles: 0, lowers: 0, leaves: 0, voxels: 0 };
  for (const bytes of parts) {
    const own = planOfPart(layout, new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength));
    if (own.tiles === 0) continue;
    const at = placePart(plan, layout, own, bytes, out, v, rootBox, cursor);
    out.set(bytes.subarray(own.upperStart, own.lowerStart), at.upperAt);
    shiftChildren(v, at.upperAt, own.tiles, layout.upper, at.lowerShift - at.upperShift);
    out.set(bytes.subarray(own.lowerStart, own.leafStart), at.lowerAt);
    shiftChildren(v, at.lowerAt, own.lowers, layout.lower, at.leafShift - at.lowerShift);
    out.set(bytes.subarray(own.leafStart, own.gridSize), at.leafAt);
    if (layout.isIndex && at.voxelBase !== 0) {
      for (let f = 0; f < own.leaves; f++) {
        const field = at.leafAt + f * layout.leafSize + layout.leafValues;
        const offset = readU64Number(v, field) + at.voxelBase;
        v.setUint32(field, offset >>> 0, true);
        v.setUint32(field + 4, Math.floor(offset / 4294967296), true);
      }
    }
  }
  writeDynamicHeader(v, out, plan, layout, first.subarray(0, GRID_DATA_SIZE), rootBox);
  writeChecksum(out, computeChecksum(out, merge.gridSize, checksum));
}

/**
 * Merges the grids of a split by space (`planRootTilePartition`: each part built from the points of its run of
 * root tiles, the parts in part order) into `out`, byte for byte the grid one build of all the points writes, and
 * stores the checksum `checksum` asks for. Parts without root tiles (a part none of whose points arrived yet)
 * are left out; when every part is empty the result is part 0's grid. The bytes of `out` past the merged grid are
 * left as they were. For grids the points builders write (OnIndex or Float, no active tiles, no blind data).
 * @param parts - each part's grid bytes from offset 0 (a buffer may be longer than its grid).
 * @param out - where the merged grid goes, from offset 0.
 * @returns the merged grid's size in bytes; InvalidArgument for parts that do not merge (see the checks of the
 *   merge: another grid type or header, active tiles, root tiles out of order across parts) or an `out` shorter
 *   than the merged grid (naming both sizes).
 * @example
 * ```ts
 * import { GridType, HostResource, mergeRootTileGrids, pointsToGrid } from '@hs/nanovdb-mr';
 * import { HostBackend, unwrap } from '@hs/streams';
 *
 * const backend = new HostBackend();
 * const build = (coords: number[]) => unwrap(pointsToGrid(backend, new HostResource(backend), { space: 'index', coords: new Int32Array(coords) }, { gridType: GridType.OnIndex }));
 * const low = build([-9000, 3, 3, 0, 0, 0]); // root tiles in build order: x = -9000 first
 * const high = build([5000, 1, 2]);
 * const out = new Uint8Array(1 << 21); // room for the merged grid (3 root tiles of about 270 KiB each)
 * const size = unwrap(mergeRootTileGrids([unwrap(low.hostBytes()), unwrap(high.hostBytes())], out, 'full'));
 * const one = build([-9000, 3, 3, 0, 0, 0, 5000, 1, 2]);
 * console.log(size, unwrap(one.hostBytes()).every((b, i) => b === out[i])); // the one-build bytes: true
 * ```
 */
export function mergeRootTileGrids(parts: readonly Uint8Array[], out: Uint8Array, checksum: ChecksumMode): Result<number> {
  const who = 'mergeRootTileGrids';
  if (!Array.isArray(parts) || parts.length === 0) return err(ErrorCode.InvalidArgument, `${who}: no grids to merge`);
  if (!(out instanceof Uint8Array)) return err(ErrorCode.InvalidArgument, `${who}: out must be a Uint8Array`);
  const used: Uint8Array[] = [];
  for (let p = 0; p < parts.length; p++) {
    const bytes = parts[p] as Uint8Array;
    if (!(bytes instanceof Uint8Array) || bytes.byteLength < ROOT_OFFSET + Root.tableSize + 4) return err(ErrorCode.InvalidArgument, `${who}: part ${p} is not a grid's bytes`);
    const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (v.getBigUint64(Grid.magic, true) !== GRID_MAGIC) return err(ErrorCode.InvalidArgument, `${who}: part ${p} has no grid magic`);
    if (v.getUint32(ROOT_OFFSET + Root.tableSize, true) !== 0) used.push(bytes);
  }
  if (used.length === 0) used.push(parts[0] as Uint8Array);
  const merge = planGridMerge(used);
  if (!merge.ok) return err(merge.error.code, merge.error.detail.replace('mergeGridsByRootTiles', who));
  const size = merge.value.gridSize;
  if (out.byteLength < size) return err(ErrorCode.InvalidArgument, `${who}: the merged grid takes ${size} bytes, out holds ${out.byteLength}`);
  if (used.length === 1) {
    out.set((used[0] as Uint8Array).subarray(0, size), 0);
    writeChecksum(out, computeChecksum(out, size, checksum));
  } else {
    mergeGridsByRootTiles(used, merge.value, out, checksum);
  }
  return ok(size);
}
