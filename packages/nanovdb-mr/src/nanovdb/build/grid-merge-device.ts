/**
 * The merge of `mergeGridsByRootTiles` with the parts left in backend memory: from the parts' heads alone (GridData,
 * TreeData, RootData and root tiles) it plans the merged head (written on the host), one copy per part of its node
 * levels into the merged grid and the `hs.nanovdb.gridMerge.shift` launches that move the copied nodes' child and
 * OnIndex value offsets. The bytes equal those `mergeGridsByRootTiles` writes (before the checksum, which the caller
 * computes on the device). Spec: issue 27 item 3; NANOVDB-FORMAT.md (buffer order, tiles, internal tables).
 */
import type { KernelLaunch, MemoryRange } from '@hs/streams';
import { GRID_DATA_SIZE, ROOT_OFFSET, type InternalLevel, type ValueLayout } from '../grid/grid-layout.js';
import { BBox, planOfCounts, writeDynamicHeader, type GridPlan } from './grid-writer.js';
import { readI64Number, writeI64Number } from '../grid/scalar-io.js';
import { placePart, planOfPart, shiftChildren, type MergeCursor } from './grid-merge.js';

/** One part's node bytes `[from, from + bytes)` go to the merged grid at `at`. */
export interface MergeCopy {
  readonly from: number;
  readonly bytes: number;
  readonly at: number;
}

/** A shift over `[at, at + bytes)` of the merged grid with the shift kernel's params. */
export interface MergeShift {
  readonly at: number;
  readonly bytes: number;
  readonly params: readonly number[];
}

/** What one part contributes: its index among the heads, its copies and shifts. */
export interface PartMerge {
  readonly part: number;
  readonly copies: readonly MergeCopy[];
  readonly shifts: readonly MergeShift[];
}

/** The device merge: the merged head bytes, its plan and each part's moves. */
export interface DeviceMergePlan {
  readonly head: Uint8Array;
  readonly plan: GridPlan;
  readonly parts: readonly PartMerge[];
}

/** Bytes of a part's head: everything before its upper nodes (`tiles` root tiles). */
export function headBytes(layout: ValueLayout, tiles: number): number {
  return ROOT_OFFSET + layout.rootDataSize + tiles * layout.tileSize;
}

const internalShift = (level: InternalLevel, count: number, delta: number): number[] => [0, count, level.size, level.childMask, level.table, level.tableStride, level.log2Dim, delta];

/**
 * Plans the merge of parts (points-built grids of `layout`, root tiles ordered across the parts) from their heads
 * (`headBytes` of each, in part order). The merged head holds part 0's header template with the merged counts,
 * bounding boxes and size, and every part's root tiles with their child offsets moved.
 */
export function planDeviceMerge(heads: readonly Uint8Array[], layout: ValueLayout): DeviceMergePlan {
  const owns = heads.map((bytes) => planOfPart(layout, new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)));
  const total = { tiles: 0, lowers: 0, leaves: 0, voxels: 0 };
  for (const own of owns) {
    total.tiles += own.tiles;
    total.lowers += own.lowers;
    total.leaves += own.leaves;
    total.voxels += own.voxels;
  }
  const plan = planOfCounts(layout, 0, total);
  const head = new Uint8Array(headBytes(layout, total.tiles));
  const v = new DataView(head.buffer);
  const first = heads[0] as Uint8Array;
  head.set(first.subarray(0, ROOT_OFFSET + layout.rootDataSize), 0);
  const rootBox = new BBox();
  const parts: PartMerge[] = [];
  const cursor: MergeCursor = { tiles: 0, lowers: 0, leaves: 0, voxels: 0 };
  for (let p = 0; p < heads.length; p++) {
    const own = owns[p] as GridPlan;
    if (own.tiles === 0) continue;
    const at = placePart(plan, layout, own, heads[p] as Uint8Array, head, v, rootBox, cursor);
    const copies: MergeCopy[] = [
      { from: own.upperStart, bytes: own.lowerStart - own.upperStart, at: at.upperAt },
      { from: own.lowerStart, bytes: own.leafStart - own.lowerStart, at: at.lowerAt },
      { from: own.leafStart, bytes: own.gridSize - own.leafStart, at: at.leafAt },
    ].filter((c) => c.bytes > 0);
    const shifts: MergeShift[] = [];
    if (at.lowerShift !== at.upperShift) shifts.push({ at: at.upperAt, bytes: own.tiles * layout.upper.size, params: internalShift(layout.upper, own.tiles, at.lowerShift - at.upperShift) });
    if (own.lowers > 0 && at.leafShift !== at.lowerShift) shifts.push({ at: at.lowerAt, bytes: own.lowers * layout.lower.size, params: internalShift(layout.lower, own.lowers, at.leafShift - at.lowerShift) });
    if (layout.isIndex && at.voxelBase !== 0 && own.leaves > 0) shifts.push({ at: at.leafAt, bytes: own.leaves * layout.leafSize, params: [1, own.leaves, layout.leafSize, layout.leafValues, at.voxelBase] });
    parts.push({ part: p, copies, shifts });
  }
  writeDynamicHeader(v, head, plan, layout, first.subarray(0, GRID_DATA_SIZE), rootBox);
  return { head, plan, parts };
}

/** Host implementation of `hs.nanovdb.gridMerge.shift` (see `shiftLaunch`). */
export function shiftOnHost(_reads: readonly Uint8Array[], writes: readonly Uint8Array[], params: readonly number[]): void {
  const out = writes[0] as Uint8Array;
  const v = new DataView(out.buffer, out.byteOffset, out.byteLength);
  const [mode, count, stride] = params as [number, number, number];
  if (mode === 1) {
    const [, , , field, delta] = params as [number, number, number, number, number];
    for (let r = 0; r < count; r++) writeI64Number(v, r * stride + field, readI64Number(v, r * stride + field) + delta);
    return;
  }
  const [, , , childMask, table, tableStride, log2Dim, delta] = params as [number, number, number, number, number, number, number, number];
  shiftChildren(v, 0, count, { size: stride, childMask, table, tableStride, log2Dim }, delta);
}

/** The shift launch over `nodes` (the merged grid's bytes of the shifted nodes) with a `MergeShift`'s params. */
export function shiftLaunch(nodes: MemoryRange, params: readonly number[]): KernelLaunch {
  return { name: 'hs.nanovdb.gridMerge.shift', reads: [], writes: [nodes], params, host: shiftOnHost };
}

/** Bytes of scratch the checksum kernel needs for a grid of `gridSize` bytes (its header region plus one word per MiB). */
export function checksumScratchBytes(gridSize: number): number {
  const blocks = Math.ceil(Math.max(0, gridSize - ROOT_OFFSET) / 4096);
  return 1024 + 4 * Math.ceil(blocks / 256) + 8;
}
