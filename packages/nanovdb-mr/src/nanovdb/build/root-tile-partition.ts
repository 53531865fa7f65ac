/**
 * Plans a split of world points by space: contiguous runs of root tiles (the 4096-voxel span of an upper node) in
 * build-key order, one run per part, with about equal point counts, and answers which part any later point belongs
 * to. A build of each part's points merges (`mergeRootTileGrids`) into the grid one build of all points writes.
 * Spec: issue 27 item 4 (the flagship split by space across devices).
 */
import { ErrorCode, err, ok, type Result } from '@hs/streams';
import { voxelCoordinate } from './points-to-grid-kernels.js';
import { voxelSizeProblem } from './points-to-grid-options.js';

/** Options of `planRootTilePartition`: the world-to-index mapping of the builds the parts feed. */
export interface RootTilePartitionOptions {
  /** World units per voxel, as the builds use it; default 1. */
  readonly voxelSize?: number;
  /** World position of voxel (0, 0, 0), as the builds use it; default the origin. */
  readonly origin?: readonly [number, number, number];
}

/** `(c + 2^31) >> 12`: the tile coordinate whose order is the build key's order on that axis. */
export function tileCoord(c: number): number {
  return ((c ^ 0x80000000) >>> 12) & 0x1fffff;
}

/**
 * A split of space into parts by root tile (see `planRootTilePartition`). `partOf` allocates nothing, so it may
 * run on every point of every frame.
 * @example
 * ```ts
 * import { planRootTilePartition } from '@hs/nanovdb-mr';
 * import { unwrap } from '@hs/streams';
 *
 * const split = unwrap(planRootTilePartition(new Float64Array([0, 0, 0, 1, 1, 1, 5000, 0, 0, 9000, 0, 0]), 2));
 * // part 0 owns the tile at the origin, part 1 the two tiles along +x; a later point goes where its tile lies
 * console.log(split.pointCounts, split.tileCounts, split.partOf(4500, 7, 7)); // [2, 2] [1, 2] 1
 * ```
 */
export class RootTilePartition {
  /** How many parts. */
  readonly partCount: number;
  /** Points of the planning cloud in each part. */
  readonly pointCounts: readonly number[];
  /** Root tiles of the planning cloud in each part. */
  readonly tileCounts: readonly number[];
  private readonly startHigh: Float64Array;
  private readonly startLow: Float64Array;
  private readonly inverseVoxelSize: number;
  private readonly origin: readonly [number, number, number];

  /** Made by `planRootTilePartition`. @internal */
  constructor(
    partCount: number,
    pointCounts: readonly number[],
    tileCounts: readonly number[],
    startHigh: Float64Array,
    startLow: Float64Array,
    inverseVoxelSize: number,
    origin: readonly [number, number, number],
  ) {
    this.partCount = partCount;
    this.pointCounts = Object.freeze(pointCounts.slice());
    this.tileCounts = Object.freeze(tileCounts.slice());
    this.startHigh = startHigh;
    this.startLow = startLow;
    this.inverseVoxelSize = inverseVoxelSize;
    this.origin = origin;
  }

  /**
   * The part that owns world point `(x, y, z)`: the last part whose first root tile is not after the point's tile
   * in build order (points outside the planning cloud's tiles go to the part whose run covers their key); -1 for a
   * point that maps to no voxel (a non-finite coordinate or an index outside the 32-bit range).
   */
  partOf(x: number, y: number, z: number): number {
    const [ox, oy, oz] = this.origin;
    const inv = this.inverseVoxelSize;
    const cx = voxelCoordinate(x, ox, inv);
    const cy = voxelCoordinate(y, oy, inv);
    const cz = voxelCoordinate(z, oz, inv);
    if (!(cx >= -2147483648 && cx <= 2147483647 && cy >= -2147483648 && cy <= 2147483647 && cz >= -2147483648 && cz <= 2147483647)) return -1;
    const high = tileCoord(cx) * 2097152 + tileCoord(cy);
    const low = tileCoord(cz);
    let part = this.partCount - 1;
    while (part > 0) {
      const h = this.startHigh[part] as number;
      if (h < high || (h === high && (this.startLow[part] as number) <= low)) break;
      part--;
    }
    return part;
  }
}

/**
 * Plans how to split world points by space into `parts` parts: every root tile the points touch goes, in build-key
 * order, to one contiguous run per part, part p taking tiles until the running point count reaches (p + 1) / parts
 * of all points (so a part may get no tile when one tile holds many points, or when there are fewer tiles than
 * parts). Each part's build then writes root tiles that all follow the previous parts' tiles, which is what
 * `mergeRootTileGrids` needs to give back, byte for byte, the grid one build of all the points writes.
 * @param positions - world points, x, y, z triplets (the builds' `{ space: 'world' }` points).
 * @param parts - how many parts, an integer from 1 to 1024.
 * @returns the partition; InvalidArgument for a bad `parts`, voxel size or origin, a coordinate count that is not
 *   a whole number of triplets, or a point that maps to no voxel (naming its index).
 * @example
 * ```ts
 * import { planRootTilePartition } from '@hs/nanovdb-mr';
 * import { unwrap } from '@hs/streams';
 *
 * // three points in three root tiles along x (a tile spans 4096 voxels)
 * const positions = new Float64Array([0, 0, 0, 5000, 1, 2, -9000, 3, 3]);
 * const split = unwrap(planRootTilePartition(positions, 2, { voxelSize: 1 }));
 * console.log(split.pointCounts, split.partOf(-9000, 3, 3), split.partOf(5000, 1, 2)); // [2, 1] 0 1
 * ```
 */
export function planRootTilePartition(positions: Float32Array | Float64Array, parts: number, options: RootTilePartitionOptions = {}): Result<RootTilePartition> {
  const who = 'planRootTilePartition';
  if (!(positions instanceof Float32Array || positions instanceof Float64Array)) return err(ErrorCode.InvalidArgument, `${who}: positions must be a Float32Array or Float64Array`);
  if (positions.length % 3 !== 0) return err(ErrorCode.InvalidArgument, `${who}: ${positions.length} coordinates is not a whole number of x, y, z triplets`);
  if (!Number.isSafeInteger(parts) || parts < 1 || parts > 1024) return err(ErrorCode.InvalidArgument, `${who}: parts must be an integer from 1 to 1024, got ${String(parts)}`);
  const voxelSize = options.voxelSize ?? 1;
  const badVoxelSize = voxelSizeProblem(who, voxelSize);
  if (badVoxelSize !== null) return badVoxelSize;
  const origin = options.origin ?? [0, 0, 0];
  if (!Array.isArray(origin) || origin.length !== 3 || !origin.every((c) => typeof c === 'number' && Number.isFinite(c))) return err(ErrorCode.InvalidArgument, `${who}: origin must be three finite numbers`);
  const inv = 1 / voxelSize;
  const [ox, oy, oz] = origin;
  // tiles by key: x-y half, then z half (exact numbers, 40 and 20 bits)
  const tiles = new Map<number, Map<number, number>>();
  const n = positions.length / 3;
  for (let i = 0; i < n; i++) {
    const cx = voxelCoordinate(positions[3 * i] as number, ox, inv);
    const cy = voxelCoordinate(positions[3 * i + 1] as number, oy, inv);
    const cz = voxelCoordinate(positions[3 * i + 2] as number, oz, inv);
    if (!(cx >= -2147483648 && cx <= 2147483647 && cy >= -2147483648 && cy <= 2147483647 && cz >= -2147483648 && cz <= 2147483647)) {
      return err(ErrorCode.InvalidArgument, `${who}: point ${i} has a non-finite coordinate or maps to a voxel outside the 32-bit index range at voxel size ${voxelSize}`);
    }
    const high = tileCoord(cx) * 2097152 + tileCoord(cy);
    const low = tileCoord(cz);
    let inner = tiles.get(high);
    if (inner === undefined) {
      inner = new Map();
      tiles.set(high, inner);
    }
    inner.set(low, (inner.get(low) ?? 0) + 1);
  }
  const ordered: { high: number; low: number; count: number }[] = [];
  for (const [high, inner] of tiles) for (const [low, count] of inner) ordered.push({ high, low, count });
  ordered.sort((a, b) => a.high - b.high || a.low - b.low);
  const pointCounts = new Array<number>(parts).fill(0);
  const tileCounts = new Array<number>(parts).fill(0);
  const startHigh = new Float64Array(parts).fill(Number.POSITIVE_INFINITY);
  const startLow = new Float64Array(parts).fill(Number.POSITIVE_INFINITY);
  startHigh[0] = Number.NEGATIVE_INFINITY;
  startLow[0] = Number.NEGATIVE_INFINITY;
  let running = 0;
  let part = 0;
  for (const tile of ordered) {
    while (part < parts - 1 && running >= ((part + 1) * n) / parts) {
      part++;
      startHigh[part] = tile.high;
      startLow[part] = tile.low;
    }
    pointCounts[part]! += tile.count;
    tileCounts[part]! += 1;
    running += tile.count;
  }
  // parts after the last tile's own start after every key: they get no point
  return ok(new RootTilePartition(parts, pointCounts, tileCounts, startHigh, startLow, inv, origin as readonly [number, number, number]));
}
