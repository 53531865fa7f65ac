/**
 * The three kernel launches of a stream-ordered PointsToGrid build and their host implementations.
 * On the CUDA backend the launches run the kernels registered under the same names in
 * `native/src/nanovdb/` (`points-to-grid-sort.cu`, `points-to-grid-write.cu`, `grid-checksum.cu`);
 * on the host backend (and in the synchronous host builder)
 * the functions below run instead, writing the same grid bytes and the same report words.
 *
 * - `sort`: points -> voxel coordinates (world points through the inverse voxel size and origin,
 *   rounded), invalid points dropped and the first one reported, voxels sorted into build order,
 *   level totals counted.
 * - `write`: the grid of the longest sorted prefix whose node counts fit the capacities, written into
 *   the output range (GridData from the template the caller put in the workspace), a Float grid's
 *   f32 background in the root, the tables and the inactive voxels.
 * - `checksum`: the CRC32 checksum in the requested mode.
 */
import type { KernelLaunch, MemoryRange } from '@hs/streams';
import { computeChecksum, writeChecksum, type ChecksumMode } from '../grid/grid-checksum.js';
import { GRID_DATA_SIZE, Grid, ON_INDEX_LAYOUT, valueLayoutOf, type ValueLayout } from '../grid/grid-layout.js';
import { planGrid, writeGrid, type NodeCapacity } from './grid-writer.js';
import { Overflow, ReportWord, TEMPLATE_OFFSET, hostRegions } from './points-to-grid-workspace.js';
import { KEY_WORDS, sortByBuildKey } from './voxel-order.js';

/** How the point coordinates are stored: i32 voxel coordinates, or f32/f64 world positions. */
export enum PointEncoding {
  IndexInt32 = 0,
  WorldFloat32 = 1,
  WorldFloat64 = 2,
}

/** Sort-stage inputs: point counts, encoding and the world-to-index map. */
export interface SortParams {
  /** Points handed to the build (reported). */
  readonly given: number;
  /** Points read from the input (given clamped to the point capacity). */
  readonly used: number;
  readonly encoding: PointEncoding;
  /** 1 / voxel size. */
  readonly inverseVoxelSize: number;
  readonly origin: readonly [number, number, number];
}

/** Checksum modes by their kernel parameter (0, 1, 2). */
const CHECKSUM_MODES: readonly ChecksumMode[] = ['full', 'partial', 'disabled'];

/** Scalar parameters of the sort kernel. */
export function sortArgs(p: SortParams): number[] {
  return [p.given, p.used, p.encoding, p.inverseVoxelSize, p.origin[0], p.origin[1], p.origin[2]];
}

/** Scalar parameters of the write kernel. */
export function writeArgs(used: number, layout: ValueLayout, capacity: NodeCapacity, background: number): number[] {
  return [used, layout.gridType, capacity.uppers, capacity.lowers, capacity.leaves, background];
}

/** Scalar parameters of the checksum kernel. */
export function checksumArgs(mode: ChecksumMode): number[] {
  return [CHECKSUM_MODES.indexOf(mode)];
}

/** The sort launch: reads the points, writes the workspace. */
export function sortLaunch(points: MemoryRange, workspace: MemoryRange, p: SortParams): KernelLaunch {
  return {
    name: 'hs.nanovdb.pointsToGrid.sort',
    reads: [points],
    writes: [workspace],
    params: sortArgs(p),
    host: sortOnHost,
  };
}

/** The write launch: reads and writes the workspace (report words), writes the grid into `output`. */
export function writeLaunch(workspace: MemoryRange, output: MemoryRange, used: number, layout: ValueLayout, capacity: NodeCapacity, background: number): KernelLaunch {
  return {
    name: 'hs.nanovdb.pointsToGrid.write',
    reads: [],
    writes: [workspace, output],
    params: writeArgs(used, layout, capacity, background),
    host: writeOnHost,
  };
}

/**
 * The checksum launch over the grid at the start of `grid` (its stored gridSize bytes); the CUDA kernel
 * keeps partial CRCs in `workspace` (after the report header) of a build that has finished writing.
 */
export function checksumLaunch(grid: MemoryRange, workspace: MemoryRange, mode: ChecksumMode): KernelLaunch {
  return { name: 'hs.nanovdb.gridChecksum', reads: [], writes: [grid, workspace], params: checksumArgs(mode), host: checksumOnHost };
}

function words(workspace: Uint8Array): Uint32Array {
  return new Uint32Array(workspace.buffer, workspace.byteOffset, 32);
}

/**
 * The index coordinate of a world coordinate on one axis: `floor((world - origin) * inverseVoxelSize + 0.5)`
 * (NaN for a NaN or infinite input; the caller checks the 32-bit range).
 */
export function voxelCoordinate(world: number, origin: number, inverseVoxelSize: number): number {
  return Math.floor((world - origin) * inverseVoxelSize + 0.5);
}

/** Host implementation of `hs.nanovdb.pointsToGrid.sort` (see the module comment). */
export function sortOnHost(reads: readonly Uint8Array[], writes: readonly Uint8Array[], params: readonly number[]): void {
  const [given, used, encoding, inv, ox, oy, oz] = params as [number, number, PointEncoding, number, number, number, number];
  const input = reads[0] as Uint8Array;
  const ws = writes[0] as Uint8Array;
  const r = hostRegions(used);
  const coords = new Int32Array(ws.buffer, ws.byteOffset + r.coords, 3 * used);
  const origin = [ox, oy, oz];
  let valid = 0;
  let firstInvalid = 0;
  if (encoding === PointEncoding.IndexInt32) {
    coords.set(new Int32Array(input.buffer, input.byteOffset, 3 * used));
    valid = used;
  } else {
    const src = encoding === PointEncoding.WorldFloat32 ? new Float32Array(input.buffer, input.byteOffset, 3 * used) : new Float64Array(input.buffer, input.byteOffset, 3 * used);
    for (let i = 0; i < used; i++) {
      let inRange = true;
      for (let a = 0; a < 3; a++) {
        const c = voxelCoordinate(src[3 * i + a] as number, origin[a] as number, inv);
        // NaN fails both comparisons' complement: keep only c inside [-2^31, 2^31)
        if (!(c >= -2147483648 && c <= 2147483647)) inRange = false;
        coords[3 * valid + a] = c;
      }
      if (inRange) valid++;
      else if (firstInvalid === 0) firstInvalid = i + 1;
    }
  }
  const keys = new Uint32Array(ws.buffer, ws.byteOffset + r.keys, KEY_WORDS * valid);
  const order = new Uint32Array(ws.buffer, ws.byteOffset + r.order, valid);
  const pingPong = new Uint32Array(ws.buffer, ws.byteOffset + r.pingPong, valid);
  const histogram = new Uint32Array(ws.buffer, ws.byteOffset + r.histogram, 65536);
  const sorted = sortByBuildKey(coords.subarray(0, 3 * valid), keys, order, pingPong, histogram);
  // the keys are spent: the sorted coordinates go where they were
  const out = new Int32Array(ws.buffer, ws.byteOffset + r.keys, 3 * valid);
  for (let j = 0; j < valid; j++) {
    const p = sorted[j] as number;
    out[3 * j] = coords[3 * p] as number;
    out[3 * j + 1] = coords[3 * p + 1] as number;
    out[3 * j + 2] = coords[3 * p + 2] as number;
  }
  const { total } = planGrid(out, valid, ON_INDEX_LAYOUT);
  const w = words(ws);
  w.fill(0);
  w[ReportWord.given] = given;
  w[ReportWord.used] = used;
  w[ReportWord.valid] = valid;
  w[ReportWord.firstInvalid] = firstInvalid;
  w[ReportWord.totalVoxels] = total.voxels;
  w[ReportWord.totalLeaves] = total.leaves;
  w[ReportWord.totalLowers] = total.lowers;
  w[ReportWord.totalTiles] = total.tiles;
}

/** Host implementation of `hs.nanovdb.pointsToGrid.write` (see the module comment). */
export function writeOnHost(_reads: readonly Uint8Array[], writes: readonly Uint8Array[], params: readonly number[]): void {
  const [used, gridType, uppers, lowers, leaves, background] = params as [number, number, number, number, number, number];
  const ws = writes[0] as Uint8Array;
  const out = writes[1] as Uint8Array;
  const layout = valueLayoutOf(gridType) as ValueLayout;
  const w = words(ws);
  const valid = w[ReportWord.valid] as number;
  const sorted = new Int32Array(ws.buffer, ws.byteOffset + hostRegions(used).keys, 3 * valid);
  const plan = planGrid(sorted, valid, layout, { uppers, lowers, leaves });
  writeGrid(out, sorted, plan, layout, ws.subarray(TEMPLATE_OFFSET, TEMPLATE_OFFSET + GRID_DATA_SIZE), undefined, background);
  w[ReportWord.voxels] = plan.voxels;
  w[ReportWord.leaves] = plan.leaves;
  w[ReportWord.lowers] = plan.lowers;
  w[ReportWord.tiles] = plan.tiles;
  w[ReportWord.cut] = plan.cut;
  w[ReportWord.overflow] =
    ((w[ReportWord.given] as number) > used ? Overflow.Points : 0) |
    (plan.total.tiles > uppers ? Overflow.Uppers : 0) |
    (plan.total.lowers > lowers ? Overflow.Lowers : 0) |
    (plan.total.leaves > leaves ? Overflow.Leaves : 0);
  w[ReportWord.gridSize] = plan.gridSize >>> 0;
  w[ReportWord.gridSize + 1] = Math.floor(plan.gridSize / 4294967296);
}

/** Host implementation of `hs.nanovdb.gridChecksum`. */
export function checksumOnHost(_reads: readonly Uint8Array[], writes: readonly Uint8Array[], params: readonly number[]): void {
  const grid = writes[0] as Uint8Array;
  const gridSize = Number(new DataView(grid.buffer, grid.byteOffset, GRID_DATA_SIZE).getBigUint64(Grid.gridSize, true));
  writeChecksum(grid, computeChecksum(grid, gridSize, CHECKSUM_MODES[params[0] as number] as ChecksumMode));
}
