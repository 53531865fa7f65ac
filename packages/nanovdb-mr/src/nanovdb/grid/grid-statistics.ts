/**
 * Grid statistics as NanoVDB computes them (`tools::updateGridStats`, StatsMode::All): per node the minimum and
 * maximum of its active values and their average and population standard deviation, accumulated in f64 with
 * Welford's update, nodes combined pairwise in NanoVDB's order (a node's active tiles in mask order, each counted by
 * the voxels it covers, then its children in mask order; the root's tiles in table order). `gridStatistics` reads them
 * for a grid; the builders write them into every node with the same arithmetic, so NanoVDB's stored statistics and
 * hs's agree bit for bit. Scalar grids with plain value leaves only (Float, Double, Int16, Int32, Int64, UInt32, UInt8).
 * Spec: issue 23 item 3 (grid statistics on request and on build).
 */
import { ErrorCode, err, ok, type Result } from '@hs/streams';
import {
  GridFlags,
  GridType,
  Grid,
  Internal,
  Leaf,
  ROOT_OFFSET,
  Root,
  valueLayoutOf,
  type InternalLevel,
  type ValueLayout,
} from './grid-layout.js';
import type { GridMetadata } from './grid-validation.js';
import { readExactScalar, writeScalar } from './scalar-io.js';

/** Statistics of a grid's active values. */
export interface GridStatistics {
  /** Smallest active value (a bigint for Int64 grids). */
  readonly min: number | bigint;
  /** Largest active value (a bigint for Int64 grids). */
  readonly max: number | bigint;
  /** Mean of the active values, every active tile counted once per voxel it covers. */
  readonly average: number;
  /** Population standard deviation of the same. */
  readonly standardDeviation: number;
  /** Active values counted (voxels, tiles by the voxels they cover). */
  readonly count: number;
}

const STATS_TYPES: ReadonlySet<GridType> = new Set([GridType.Float, GridType.Double, GridType.Int16, GridType.Int32, GridType.Int64, GridType.UInt32, GridType.UInt8]);

/** True for the grid types whose statistics hs computes and writes. */
export function hasStatistics(gridType: GridType): boolean {
  return STATS_TYPES.has(gridType);
}

/** NanoVDB's running statistics: extrema, then f64 Welford mean and sum of squared deviations. */
class RunningStats {
  count = 0;
  average = 0;
  aux = 0;
  min: number | bigint | undefined;
  max: number | bigint | undefined;

  #extrema(min: number | bigint, max: number | bigint): void {
    if (this.min === undefined || min < this.min) this.min = min;
    if (this.max === undefined || max > this.max) this.max = max;
  }

  add(value: number | bigint): void {
    this.#extrema(value, value);
    this.count += 1;
    const x = Number(value);
    const delta = x - this.average;
    this.average += delta / this.count;
    this.aux += delta * (x - this.average);
  }

  addTile(value: number | bigint, n: number): void {
    const denom = 1 / (this.count + n);
    const delta = Number(value) - this.average;
    this.average += denom * delta * n;
    this.aux += denom * delta * delta * this.count * n;
    this.#extrema(value, value);
    this.count += n;
  }

  merge(o: RunningStats): void {
    if (o.count === 0) return;
    const denom = 1 / (this.count + o.count);
    const delta = o.average - this.average;
    this.average += denom * delta * o.count;
    this.aux += o.aux + denom * delta * delta * this.count * o.count;
    this.#extrema(o.min as number | bigint, o.max as number | bigint);
    this.count += o.count;
  }

  get standardDeviation(): number {
    return Math.sqrt(this.count < 2 ? 0 : this.aux / this.count);
  }
}

/** Walks the tree in NanoVDB's order; with `store`, writes each node's statistics (min, max, avg, stddev) into it. */
class StatisticsWalk {
  constructor(
    readonly v: DataView,
    readonly layout: ValueLayout,
    readonly store: boolean,
  ) {}

  #put(minAt: number, averageAt: number, s: RunningStats): void {
    if (!this.store || s.count === 0) return;
    const { scalar, valueSize, statsSize } = this.layout;
    writeScalar(this.v, minAt, scalar, s.min as number | bigint);
    writeScalar(this.v, minAt + valueSize, scalar, s.max as number | bigint);
    const real = statsSize === 8 ? 'f64' : 'f32';
    writeScalar(this.v, averageAt, real, s.average);
    writeScalar(this.v, averageAt + statsSize, real, s.standardDeviation);
  }

  leaf(at: number): RunningStats {
    const s = new RunningStats();
    const { leafValues, valueSize, scalar } = this.layout;
    for (let n = 0; n < 512; n++) if ((this.v.getUint8(at + Leaf.valueMask + (n >> 3)) & (1 << (n & 7))) !== 0) s.add(readExactScalar(this.v, at + leafValues + valueSize * n, scalar));
    this.#put(at + this.layout.leafMinimum, at + this.layout.leafAverage, s);
    return s;
  }

  internal(at: number, level: InternalLevel, child: (at: number) => RunningStats, childVoxels: number): RunningStats {
    const s = new RunningStats();
    const v = this.v;
    const entries = 1 << (3 * level.log2Dim);
    for (let e = 0; e < entries; e++) {
      if ((v.getUint8(at + Internal.valueMask + (e >> 3)) & (1 << (e & 7))) !== 0) s.addTile(readExactScalar(v, at + level.table + level.tableStride * e, this.layout.scalar), childVoxels);
    }
    for (let e = 0; e < entries; e++) {
      if ((v.getUint8(at + level.childMask + (e >> 3)) & (1 << (e & 7))) !== 0) s.merge(child(at + Number(v.getBigInt64(at + level.table + level.tableStride * e, true))));
    }
    this.#put(at + level.stats, at + level.average, s);
    return s;
  }

  root(): RunningStats {
    const v = this.v;
    const { layout } = this;
    const s = new RunningStats();
    const lower = (at: number): RunningStats => this.internal(at, layout.lower, (leaf) => this.leaf(leaf), 512);
    const upper = (at: number): RunningStats => this.internal(at, layout.upper, lower, 128 ** 3);
    const tiles = v.getUint32(ROOT_OFFSET + Root.tableSize, true);
    for (let t = 0; t < tiles; t++) {
      const tile = ROOT_OFFSET + layout.rootDataSize + t * layout.tileSize;
      const child = v.getBigInt64(tile + 8, true);
      if (child !== 0n) s.merge(upper(ROOT_OFFSET + Number(child)));
      else if (v.getUint32(tile + 16, true) !== 0) s.addTile(readExactScalar(v, tile + layout.tileValue, layout.scalar), 4096 ** 3);
    }
    if (this.store && s.count === 0) { // an empty root: NanoVDB stores the background as min and max, 0 as avg and stddev
      const background = readExactScalar(v, ROOT_OFFSET + layout.rootBackground, layout.scalar);
      writeScalar(v, ROOT_OFFSET + layout.rootMinimum, layout.scalar, background);
      writeScalar(v, ROOT_OFFSET + layout.rootMinimum + layout.valueSize, layout.scalar, background);
    }
    this.#put(ROOT_OFFSET + layout.rootMinimum, ROOT_OFFSET + layout.rootAverage, s);
    return s;
  }
}

/**
 * The statistics of a validated grid's active values, computed from its nodes as NanoVDB's `updateGridStats` does
 * (so they equal the root statistics NanoVDB stores, as f64 before they are stored in the grid's statistics type).
 * `bytes` holds the grid at `metadata.byteOffset`. Errors: NotSupported for a grid type without plain scalar values
 * (vectors, Half, Mask, Boolean, quantized, index and point grids); InvalidArgument for a grid with no active value.
 *
 * @example
 * ```ts
 * const s = unwrap(gridStatistics(unwrap(handle.hostBytes()), handle.grid()!));
 * console.log(s.min, s.max, s.average, s.standardDeviation);
 * ```
 */
export function gridStatistics(bytes: Uint8Array, metadata: GridMetadata): Result<GridStatistics> {
  if (!hasStatistics(metadata.gridType)) {
    return err(ErrorCode.NotSupported, `gridStatistics: grid type ${GridType[metadata.gridType]} has no plain scalar values; statistics cover Float, Double, Int16, Int32, Int64, UInt32 and UInt8`);
  }
  const v = new DataView(bytes.buffer, bytes.byteOffset + metadata.byteOffset, metadata.gridSize);
  const s = new StatisticsWalk(v, valueLayoutOf(metadata.gridType) as ValueLayout, false).root();
  if (s.count === 0) return err(ErrorCode.InvalidArgument, 'gridStatistics: the grid has no active values');
  return ok({ min: s.min as number | bigint, max: s.max as number | bigint, average: s.average, standardDeviation: s.standardDeviation, count: s.count });
}

/**
 * Writes NanoVDB's statistics into every node of the grid at the start of `grid` (a type `hasStatistics` accepts)
 * and sets HasMinMax, HasAverage and HasStdDeviation in its flags. Write the checksum after.
 */
export function writeGridStatistics(grid: Uint8Array, gridType: GridType): void {
  const v = new DataView(grid.buffer, grid.byteOffset, grid.byteLength);
  new StatisticsWalk(v, valueLayoutOf(gridType) as ValueLayout, true).root();
  v.setUint32(Grid.flags, v.getUint32(Grid.flags, true) | GridFlags.HasMinMax | GridFlags.HasAverage | GridFlags.HasStdDeviation, true);
}
