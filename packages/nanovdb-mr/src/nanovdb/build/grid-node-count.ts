import { ErrorCode, HsError, err, ok, type Result } from '@hs/streams';
import { GridType, LOWER, UPPER, valueLayoutOf } from '../grid/grid-layout.js';
import { gridBytes } from './grid-writer.js';
import { voxelCoordinate } from './points-to-grid-kernels.js';
import type { LevelCounts } from './points-to-grid-workspace.js';
import { invalidPointMessage, resolveGridOptions } from './points-to-grid-options.js';

/** Options of `countGridNodes`: the world-to-index map of the build it predicts. */
export interface CountGridNodesOptions {
  /** World units per voxel, a positive number from 2^-126 to 2^126 (float32's normal range); default 1. */
  readonly voxelSize?: number;
  /** World position of voxel (0, 0, 0); default the origin. */
  readonly origin?: readonly [number, number, number];
}

const UPPER_SHIFT = UPPER.log2Dim + UPPER.childLog2;
const LOWER_SHIFT = LOWER.log2Dim + LOWER.childLog2;
const LEAF_SHIFT = LOWER.childLog2;

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/**
 * Bytes of a breadth-first NanoVDB grid of `gridType` with these node counts, without blind data: GridData,
 * TreeData, the root with one tile per upper node, then the upper nodes, lower nodes and leaves
 * (NANOVDB-FORMAT.md, buffer order). For an OnIndex grid built by `pointsToGrid` this equals its `gridSize`.
 * @param gridType - any grid type with fixed-size leaves (every type but FpN, whose leaves vary with their code width).
 * @param nodes - non-negative integer node counts (a `LevelCounts` will do; its `voxels` is not needed).
 * @returns the size in bytes (a multiple of 32).
 * @throws HsError InvalidArgument for FpN, a code with no grid layout, or a count that is not a non-negative safe integer.
 * Spec: "Single-space grid storage" (nanovdb-memory-resources), sizing a grid before it is built.
 * @example
 * ```ts
 * import { GridType, countGridNodes, gridByteSize } from '@hs/nanovdb-mr';
 * import { unwrap } from '@hs/streams';
 *
 * const positions = new Float32Array([0, 0, 0, 10, 0, 0, 100, 50, 3]);
 * const nodes = unwrap(countGridNodes(positions, { voxelSize: 0.5 }));
 * // the same topology costs different bytes per value type: OnIndex leaves hold offsets, Vec3f leaves 512 vectors
 * console.log(`OnIndex ${gridByteSize(GridType.OnIndex, nodes)} B, Float ${gridByteSize(GridType.Float, nodes)} B, Vec3f ${gridByteSize(GridType.Vec3f, nodes)} B`);
 * ```
 */
export function gridByteSize(gridType: GridType, nodes: Pick<LevelCounts, 'uppers' | 'lowers' | 'leaves'>): number {
  const layout = valueLayoutOf(gridType);
  if (layout === undefined || gridType === GridType.FpN) {
    throw new HsError(ErrorCode.InvalidArgument, `gridByteSize: gridType must be a grid type with fixed-size leaves (not FpN, Unknown or a blind-data type), got ${String(gridType)}`);
  }
  if (!isCount(nodes?.uppers) || !isCount(nodes.lowers) || !isCount(nodes.leaves)) {
    throw new HsError(ErrorCode.InvalidArgument, 'gridByteSize: nodes must be { uppers, lowers, leaves }, each a non-negative integer');
  }
  return gridBytes(layout, nodes.uppers, nodes.lowers, nodes.leaves);
}

/**
 * Counts the active voxels and nodes the grid of these world points would have, without building it: the
 * distinct voxels and upper, lower and leaf keys of the points' voxels, which map exactly as in `pointsToGrid`
 * (`round((p - origin) / voxelSize)` per axis). Host memory only: one short string per distinct voxel and node, so it
 * costs far less than a build whose grid is large (a
 * build allocates 270 400 bytes per upper node). Pass the counts to `gridByteSize` for the grid's bytes.
 * @param positions - x, y, z triplets in world units (length a multiple of 3).
 * @returns the counts (all 0 for no points), or InvalidArgument for a bad voxel size or origin, a length
 *   that is not a multiple of 3, or a NaN/infinite coordinate or a voxel outside the 32-bit index range
 *   (naming the first such point, as `pointsToGrid` does).
 * @throws HsError InvalidArgument when `positions` is not a Float32Array or Float64Array.
 * Spec: PointsToGrid (nanovdb-memory-resources), sizing its output before it is built.
 * @example
 * ```ts
 * import { DEFAULT_CLI_MAX_GRID_BYTES, GridType, countGridNodes, gridByteSize } from '@hs/nanovdb-mr';
 * import { unwrap } from '@hs/streams';
 *
 * // 8000 points spread over a 2 m cube: how large would the grid be at 1 mm voxels, before building anything?
 * const positions = new Float64Array(3 * 8000).map((_, i) => ((i * 7919) % 2000) / 1000);
 * const nodes = unwrap(countGridNodes(positions, { voxelSize: 1e-3 }));
 * const bytes = gridByteSize(GridType.Float, nodes);
 * console.log(`${nodes.voxels} voxels in ${nodes.leaves} leaves: ${bytes} B, ${bytes > DEFAULT_CLI_MAX_GRID_BYTES ? 'over' : 'under'} the CLI's 256 MiB cap`);
 * ```
 */
export function countGridNodes(positions: Float32Array | Float64Array, options: CountGridNodesOptions = {}): Result<LevelCounts> {
  const who = 'countGridNodes';
  if (!(positions instanceof Float32Array) && !(positions instanceof Float64Array)) {
    throw new HsError(ErrorCode.InvalidArgument, `${who}: positions must be a Float32Array or Float64Array of x, y, z triplets`);
  }
  if (positions.length % 3 !== 0) return err(ErrorCode.InvalidArgument, `${who}: positions holds ${positions.length} numbers, not a multiple of 3 (x, y, z per point)`);
  const settings = resolveGridOptions(who, { gridType: GridType.OnIndex, ...options });
  if (!settings.ok) return settings;
  return countVoxelNodes(who, positions, settings.value.voxelSize, settings.value.origin);
}

/**
 * The counts of `countGridNodes` for index coordinates (an Int32Array, used as they are) or world positions (mapped
 * by `voxelSize` and `origin`); InvalidArgument, prefixed with `who`, naming the first point that maps to no voxel.
 */
export function countVoxelNodes(who: string, points: Int32Array | Float32Array | Float64Array, voxelSize: number, origin: readonly [number, number, number]): Result<LevelCounts> {
  const inv = 1 / voxelSize;
  const index = points instanceof Int32Array;
  const uppers = new Set<string>();
  const lowers = new Set<string>();
  const leaves = new Set<string>();
  const voxels = new Set<string>();
  const c = [0, 0, 0];
  for (let i = 0; i < points.length / 3; i++) {
    for (let a = 0; a < 3; a++) {
      const v = index ? (points[3 * i + a] as number) : voxelCoordinate(points[3 * i + a] as number, origin[a] as number, inv);
      if (!(v >= -2147483648 && v <= 2147483647)) {
        const point = { coordinates: [...points.subarray(3 * i, 3 * i + 3)], voxelSize };
        return err(ErrorCode.InvalidArgument, invalidPointMessage(who, i, point));
      }
      c[a] = v;
    }
    const [x, y, z] = c as [number, number, number];
    voxels.add(`${x},${y},${z}`);
    leaves.add(`${x >> LEAF_SHIFT},${y >> LEAF_SHIFT},${z >> LEAF_SHIFT}`);
    lowers.add(`${x >> LOWER_SHIFT},${y >> LOWER_SHIFT},${z >> LOWER_SHIFT}`);
    uppers.add(`${x >> UPPER_SHIFT},${y >> UPPER_SHIFT},${z >> UPPER_SHIFT}`);
  }
  return ok({ voxels: voxels.size, leaves: leaves.size, lowers: lowers.size, uppers: uppers.size });
}
