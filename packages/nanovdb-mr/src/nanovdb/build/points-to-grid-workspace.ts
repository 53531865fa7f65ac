import type { MemoryRange } from '@hs/streams';

/**
 * The scratch layout of a PointsToGrid build (one block from the resource) and the build report kept
 * at its start. The CUDA launchers carve the same layout with `native/src/nanovdb/points-to-grid-workspace.h`;
 * `test/nanovdb/native-layout-headers.test.ts` fails when the two disagree.
 */

/** Bytes before the first scratch region: the report words (at 0) and the GridData template (at 256). */
export const WORKSPACE_HEADER_BYTES = 1024;
/** Byte offset of the 672-byte GridData template in the workspace. */
export const TEMPLATE_OFFSET = 256;
/** Bytes of the report readable on the host (`ReportWord` u32 words, the grid size as a u64 at 14). */
export const REPORT_BYTES = 64;

/** u32 words of the build report, at the start of the workspace. */
export const ReportWord = {
  /** Points handed to the build. */
  given: 0,
  /** Points read (given, clamped to the point capacity). */
  used: 1,
  /** Points with a finite voxel inside the 32-bit index range. */
  valid: 2,
  /** 1 + index of the first point that is NaN, infinite or outside the index range; 0 when none. */
  firstInvalid: 3,
  /** Voxels, leaves, lower nodes and root tiles of all valid points (before clamping). */
  totalVoxels: 4,
  totalLeaves: 5,
  totalLowers: 6,
  totalTiles: 7,
  /** Voxels, leaves, lower nodes and root tiles in the grid (after clamping). */
  voxels: 8,
  leaves: 9,
  lowers: 10,
  tiles: 11,
  /** `Overflow` bits. */
  overflow: 12,
  /** Sorted points kept. */
  cut: 13,
  /** Grid bytes, a u64 in words 14 and 15. */
  gridSize: 14,
  /** Root bounding box scratch (i32x6) of the device build. */
  rootBBox: 16,
} as const;

/** Bits of `ReportWord.overflow`: which capacity cut the build short. */
export enum Overflow {
  Points = 1,
  Uppers = 2,
  Lowers = 4,
  Leaves = 8,
}

/** Bytes reserved for CUB's temporary storage (radix sort, scans) of an `n`-point device build. */
function cubBytes(n: number): number {
  return 2 * n + 8 * 1024 * 1024;
}

function region(bytes: number): number {
  return Math.ceil(bytes / 256) * 256;
}

/**
 * Workspace bytes of a build of `n` points on a backend: the host kernels keep coordinates, 99-bit
 * keys, the sort order (after the sort: each sorted point's input index) and a 64 Ki-entry histogram
 * (40 bytes per point + 256 KiB); the CUDA kernels keep two 64-bit key and value double buffers, per-point
 * node ids, node starts, each sorted point's input index and CUB scratch (66 bytes per point + 8 MiB).
 */
export function workspaceBytes(n: number, backend: 'host' | 'cuda'): number {
  if (backend === 'host') return WORKSPACE_HEADER_BYTES + region(20 * n) + region(12 * n) + 2 * region(4 * n) + 262144;
  return WORKSPACE_HEADER_BYTES + 4 * region(8 * n) + region(16 * n) + 4 * region(4 * n) + region(cubBytes(n));
}

/** Offsets of the host kernels' regions in a workspace for `n` points. */
export function hostRegions(n: number): { keys: number; coords: number; order: number; pingPong: number; histogram: number } {
  const keys = WORKSPACE_HEADER_BYTES;
  const coords = keys + region(20 * n);
  const order = coords + region(12 * n);
  const pingPong = order + region(4 * n);
  return { keys, coords, order, pingPong, histogram: pingPong + region(4 * n) };
}

/** Node and voxel counts of a build. */
export interface LevelCounts {
  /** Active voxels (distinct voxels hit by at least one point). */
  readonly voxels: number;
  /** Leaf nodes (8x8x8 voxels each). */
  readonly leaves: number;
  /** Lower internal nodes (16x16x16 leaves each). */
  readonly lowers: number;
  /** Root tiles, one upper node each. */
  readonly uppers: number;
}

/** The build report as numbers (see `ReportWord`). */
export interface WorkspaceReport {
  readonly given: number;
  readonly used: number;
  readonly valid: number;
  /** Index of the first invalid point, `undefined` when every point was valid. */
  readonly firstInvalid: number | undefined;
  /** Counts over all valid points. */
  readonly total: LevelCounts;
  /** Counts in the grid written (zero before the write kernel ran). */
  readonly kept: LevelCounts;
  /** `Overflow` bits. */
  readonly overflow: number;
  /** Grid bytes written. */
  readonly gridSize: number;
}

/** Reads the report words at the start of `bytes` (at least `REPORT_BYTES` long, 4-byte aligned or not). */
export function readReport(bytes: Uint8Array): WorkspaceReport {
  const v = new DataView(bytes.buffer, bytes.byteOffset, REPORT_BYTES);
  const w = (i: number): number => v.getUint32(4 * i, true);
  const first = w(ReportWord.firstInvalid);
  return {
    given: w(ReportWord.given),
    used: w(ReportWord.used),
    valid: w(ReportWord.valid),
    firstInvalid: first === 0 ? undefined : first - 1,
    total: { voxels: w(ReportWord.totalVoxels), leaves: w(ReportWord.totalLeaves), lowers: w(ReportWord.totalLowers), uppers: w(ReportWord.totalTiles) },
    kept: { voxels: w(ReportWord.voxels), leaves: w(ReportWord.leaves), lowers: w(ReportWord.lowers), uppers: w(ReportWord.tiles) },
    overflow: w(ReportWord.overflow),
    gridSize: w(ReportWord.gridSize) + w(ReportWord.gridSize + 1) * 4294967296,
  };
}

/** The range `[byteOffset, byteOffset + byteLength)` of a block (offsets relative to the block). */
export function subRange(block: MemoryRange, byteOffset: number, byteLength: number, label: string): MemoryRange {
  return { memory: block.memory, byteOffset: block.byteOffset + byteOffset, byteLength, label };
}
