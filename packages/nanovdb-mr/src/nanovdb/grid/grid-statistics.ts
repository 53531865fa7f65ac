/**
 * Grid statistics as NanoVDB computes them (`tools::updateGridStats`, StatsMode::All): per node the minimum and
 * maximum of its active values and their average and population standard deviation, accumulated in f64 with
 * Welford's update, nodes combined pairwise in NanoVDB's order (a node's active tiles in mask order, each counted by
 * the voxels it covers, then its children in mask order; the root's tiles in table order). `gridStatistics` reads them
 * for a grid; the builders write them into every node with the same arithmetic, so NanoVDB's stored statistics and
 * hs's agree bit for bit. Scalar grids (Float, Double, Int16, Int32, Int64, UInt32, UInt8, Half), vector grids (Vec3f,
 * Vec3d, Vec4f, Vec4d, RGBA8: extrema by squared length, mean and deviation of squared lengths, as NanoVDB's
 * `Stats<Vec, 1>` does) and quantized grids (Fp4, Fp8, Fp16, FpN: of the dequantized values, kept as f32 in the
 * internal nodes and root and as u16 codes of the leaf's quantum in the leaves, as `LeafFnBase` keeps them). NanoVDB
 * cannot build Half grids, so their statistics follow the scalar rule with f16 extrema and f32 average and deviation.
 * Spec: issue 23 item 3 (grid statistics on request and on build).
 */
import { ErrorCode, err, ok, type Result } from '@hs/streams';
import {
  GridFlags,
  GridType,
  Grid,
  Internal,
  Leaf,
  LeafKind,
  ROOT_OFFSET,
  Root,
  valueLayoutOf,
  type InternalLevel,
  type ScalarKind,
  type ValueLayout,
} from './grid-layout.js';
import { requireGridInBytes } from './grid-in-bytes.js';
import type { GridMetadata } from './grid-validation.js';
import { readExactScalar, readQuantized, readScalar, writeScalar } from './scalar-io.js';

/** Statistics of a grid's active values. */
export interface GridStatistics {
  /**
   * Smallest active value: a number, a bigint for Int64 grids, and for vector grids (Vec3f, Vec3d, Vec4f, Vec4d, RGBA8)
   * the components of the vector of smallest squared length (NanoVDB orders vectors by `lengthSqr()`; the first one
   * met wins a tie).
   */
  readonly min: number | bigint | readonly number[];
  /** Largest active value, as `min` gives it. */
  readonly max: number | bigint | readonly number[];
  /**
   * Mean of the active values, every active tile counted once per voxel it covers; for vector grids the mean of their
   * squared lengths (NanoVDB's convention), for quantized grids of their dequantized values.
   */
  readonly average: number;
  /** Population standard deviation of the same (squared lengths for vector grids). */
  readonly standardDeviation: number;
  /** Active values counted (voxels, tiles by the voxels they cover). */
  readonly count: number;
}

const STATS_TYPES: ReadonlySet<GridType> = new Set([
  GridType.Float, GridType.Double, GridType.Int16, GridType.Int32, GridType.Int64, GridType.UInt32, GridType.UInt8, GridType.Half,
  GridType.Vec3f, GridType.Vec3d, GridType.Vec4f, GridType.Vec4d, GridType.RGBA8, GridType.Fp4, GridType.Fp8, GridType.Fp16, GridType.FpN,
]);

/** True for the grid types whose statistics hs computes and writes (every type with values but Boolean, index and point grids). */
export function hasStatistics(gridType: GridType): boolean {
  return STATS_TYPES.has(gridType);
}

const f = Math.fround;
const F32_MAX = 3.4028234663852886e38;

/** `numeric_limits<T>::lowest()` and `max()` of each scalar value type with statistics (Half: IEEE binary16). */
const SCALAR_LIMITS: Partial<Record<ScalarKind, readonly [number | bigint, number | bigint]>> = {
  f32: [-F32_MAX, F32_MAX],
  f64: [-Number.MAX_VALUE, Number.MAX_VALUE],
  f16: [-65504, 65504],
  i16: [-32768, 32767],
  i32: [-2147483648, 2147483647],
  i64: [-(2n ** 63n), 2n ** 63n - 1n],
  u32: [0, 4294967295],
  u8: [0, 255],
};

/**
 * The key NanoVDB orders and averages a value by: the value itself for scalars, `lengthSqr()` in the vector's
 * element type for vectors (f32 arithmetic for Vec3f/Vec4f; RGBA8's `0.0000153787005f * (r*r + g*g + b*b)` cut to u8).
 */
function keyAt(v: DataView, at: number, layout: ValueLayout): number | bigint {
  const { scalar, components } = layout;
  if (components === 1) return readExactScalar(v, at, scalar);
  if (scalar === 'u8') {
    const sum = v.getUint8(at) ** 2 + v.getUint8(at + 1) ** 2 + v.getUint8(at + 2) ** 2;
    return Math.trunc(f(f(0.0000153787005) * sum));
  }
  let sum = 0;
  for (let c = 0; c < components; c++) {
    const x = readScalar(v, at + c * (layout.valueSize / components), scalar);
    sum = scalar === 'f32' ? f(sum + f(x * x)) : sum + x * x;
  }
  return sum;
}

/** A float converted to u16 as x86-64 converts it (through i32: NaN and out-of-range give 0, then the low 16 bits). */
function toU16(x: number): number {
  return Number.isNaN(x) || Math.abs(x) >= 2 ** 31 ? 0 : Math.trunc(x) & 0xffff;
}

/**
 * NanoVDB's running statistics: extrema by key (for vectors also where the extreme vector is stored, so it is copied
 * byte for byte), then f64 Welford mean and sum of squared deviations of the keys.
 */
class RunningStats {
  count = 0;
  average = 0;
  aux = 0;
  /**
   * NanoVDB's start: `numeric_limits<T>::max()` and `lowest()` of the value type (for vectors `Pair(max)` and
   * `Pair(lowest)` of the element type), so a NaN value never becomes an extreme and a leaf of +inf values keeps the
   * type's max as its minimum, as NanoVDB stores it.
   */
  min: number | bigint | undefined;
  max: number | bigint | undefined;
  minAt = -1;
  maxAt = -1;

  constructor(lowest?: number | bigint, highest?: number | bigint) {
    this.min = highest;
    this.max = lowest;
  }

  #extrema(min: number | bigint, minAt: number, max: number | bigint, maxAt: number): void {
    if (this.min === undefined || min < this.min) [this.min, this.minAt] = [min, minAt];
    if (this.max === undefined || max > this.max) [this.max, this.maxAt] = [max, maxAt];
  }

  add(value: number | bigint, at: number): void {
    this.#extrema(value, at, value, at);
    this.count += 1;
    const x = Number(value);
    const delta = x - this.average;
    this.average += delta / this.count;
    this.aux += delta * (x - this.average);
  }

  addTile(value: number | bigint, at: number, n: number): void {
    const denom = 1 / (this.count + n);
    const delta = Number(value) - this.average;
    this.average += denom * delta * n;
    this.aux += denom * delta * delta * this.count * n;
    this.#extrema(value, at, value, at);
    this.count += n;
  }

  merge(o: RunningStats): void {
    if (o.count === 0) return;
    const denom = 1 / (this.count + o.count);
    const delta = o.average - this.average;
    this.average += denom * delta * o.count;
    this.aux += o.aux + denom * delta * delta * this.count * o.count;
    this.#extrema(o.min as number | bigint, o.minAt, o.max as number | bigint, o.maxAt);
    this.count += o.count;
  }

  get standardDeviation(): number {
    return Math.sqrt(this.count < 2 ? 0 : this.aux / this.count);
  }
}

/** Walks the tree in NanoVDB's order; with `store`, writes each node's statistics (min, max, avg, stddev) into it. */
class StatisticsWalk {
  readonly vector: boolean;
  readonly real: ScalarKind;

  constructor(
    readonly v: DataView,
    readonly layout: ValueLayout,
    readonly store: boolean,
  ) {
    this.vector = layout.components > 1;
    this.real = layout.statsSize === 8 ? 'f64' : 'f32';
  }

  stats(): RunningStats {
    const { scalar } = this.layout;
    if (!this.vector) {
      const [lowest, highest] = SCALAR_LIMITS[scalar] ?? [undefined, undefined];
      return new RunningStats(lowest, highest);
    }
    const highest = scalar === 'u8' ? 255 : scalar === 'f32' ? F32_MAX : Number.MAX_VALUE;
    return new RunningStats(scalar === 'u8' ? 0 : -highest, highest);
  }

  /** Writes an extreme: a scalar from its key, a vector copied from where it is stored (or NanoVDB's initial splat). */
  #extreme(to: number, key: number | bigint, from: number): void {
    const { scalar, components, valueSize } = this.layout;
    if (!this.vector) return writeScalar(this.v, to, scalar, key);
    const step = valueSize / components;
    for (let c = 0; c < components; c++) {
      if (from >= 0) writeScalar(this.v, to + step * c, scalar, readScalar(this.v, from + step * c, scalar));
      else writeScalar(this.v, to + step * c, scalar, key);
    }
  }

  #put(minAt: number, averageAt: number, s: RunningStats): void {
    if (!this.store || s.count === 0) return;
    const { valueSize, statsSize } = this.layout;
    this.#extreme(minAt, s.min as number | bigint, s.minAt);
    this.#extreme(minAt + valueSize, s.max as number | bigint, s.maxAt);
    writeScalar(this.v, averageAt, this.real, s.average);
    writeScalar(this.v, averageAt + statsSize, this.real, s.standardDeviation);
  }

  /** A quantized leaf's statistics as `LeafFnBase::setMin/Max/Avg/Dev` store them: u16 codes of its quantum. */
  #putQuantized(at: number, s: RunningStats): void {
    if (!this.store || s.count === 0) return;
    const v = this.v;
    const minimum = v.getFloat32(at + Leaf.quantMinimum, true);
    const quantum = v.getFloat32(at + Leaf.quantQuantum, true);
    const code = (x: number): number => toU16(f(f(f(x - minimum) / quantum) + 0.5));
    v.setUint16(at + Leaf.quantStats, code(Number(s.min)), true);
    v.setUint16(at + Leaf.quantStats + 2, code(Number(s.max)), true);
    v.setUint16(at + Leaf.quantStats + 4, code(f(s.average)), true);
    v.setUint16(at + Leaf.quantStats + 6, toU16(f(f(f(s.standardDeviation) / quantum) + 0.5)), true);
  }

  leaf(at: number): RunningStats {
    const s = this.stats();
    const { v, layout } = this;
    const quantized = layout.leafKind === LeafKind.Quantized;
    for (let n = 0; n < 512; n++) {
      if ((v.getUint8(at + Leaf.valueMask + (n >> 3)) & (1 << (n & 7))) === 0) continue;
      if (quantized) s.add(readQuantized(v, layout, at, n), -1);
      else {
        const value = at + layout.leafValues + layout.valueSize * n;
        s.add(keyAt(v, value, layout), value);
      }
    }
    if (quantized) this.#putQuantized(at, s);
    else this.#put(at + layout.leafMinimum, at + layout.leafAverage, s);
    return s;
  }

  internal(at: number, level: InternalLevel, child: (at: number) => RunningStats, childVoxels: number): RunningStats {
    const s = this.stats();
    const v = this.v;
    const entries = 1 << (3 * level.log2Dim);
    for (let e = 0; e < entries; e++) {
      const value = at + level.table + level.tableStride * e;
      if ((v.getUint8(at + Internal.valueMask + (e >> 3)) & (1 << (e & 7))) !== 0) s.addTile(keyAt(v, value, this.layout), value, childVoxels);
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
    const s = this.stats();
    const lower = (at: number): RunningStats => this.internal(at, layout.lower, (leaf) => this.leaf(leaf), 512);
    const upper = (at: number): RunningStats => this.internal(at, layout.upper, lower, 128 ** 3);
    const tiles = v.getUint32(ROOT_OFFSET + Root.tableSize, true);
    for (let t = 0; t < tiles; t++) {
      const tile = ROOT_OFFSET + layout.rootDataSize + t * layout.tileSize;
      const child = v.getBigInt64(tile + 8, true);
      if (child !== 0n) s.merge(upper(ROOT_OFFSET + Number(child)));
      else if (v.getUint32(tile + 16, true) !== 0) s.addTile(keyAt(v, tile + layout.tileValue, layout), tile + layout.tileValue, 4096 ** 3);
    }
    if (this.store && tiles === 0) { // an empty root: NanoVDB stores the background as min and max, 0 as avg and stddev
      const background = ROOT_OFFSET + layout.rootBackground;
      this.#extreme(ROOT_OFFSET + layout.rootMinimum, keyAt(v, background, layout), background);
      this.#extreme(ROOT_OFFSET + layout.rootMinimum + layout.valueSize, keyAt(v, background, layout), background);
    }
    this.#put(ROOT_OFFSET + layout.rootMinimum, ROOT_OFFSET + layout.rootAverage, s);
    return s;
  }
}

/**
 * The statistics of a validated grid's active values, computed from its nodes as NanoVDB's `updateGridStats` does
 * (so they equal the root statistics NanoVDB stores, as f64 before they are stored in the grid's statistics type).
 * `bytes` holds the grid at `metadata.byteOffset`. For vector grids `min` and `max` are vectors (components as
 * numbers) and `average` and `standardDeviation` are of squared lengths; for Fp4/Fp8/Fp16/FpN they are of the
 * dequantized values. Errors: NotSupported for a grid type without statistics (Mask, Boolean, index and point grids);
 * InvalidArgument for a grid with no active value.
 * As in NanoVDB, a NaN value is never an extreme (it still makes `average` and `standardDeviation` NaN) and the
 * extremes start from the value type's limits, so a grid of +inf values alone reports the type's max as `min`.
 * @throws HsError InvalidArgument when `bytes` is not a Uint8Array, `metadata` not a grid's metadata (a handle passed alone),
 *   or `bytes` do not hold that grid.
 *
 * @example
 * ```ts
 * import { HostBackend, unwrap } from '@hs/streams';
 * import { GridType, HostResource, gridStatistics, voxelsToGrid } from '@hs/nanovdb-mr';
 *
 * const backend = new HostBackend();
 * const coords = new Int32Array([0, 0, 0, 1, 0, 0, 2, 0, 0, 3, 0, 0]);
 * const handle = unwrap(voxelsToGrid(backend, new HostResource(backend), { coords, values: new Float32Array([1, 2, 3, 6]) }, { gridType: GridType.Float }));
 * const metadata = handle.grid();
 * if (metadata === undefined) throw new Error('no grid');
 * const s = unwrap(gridStatistics(unwrap(handle.hostBytes()), metadata));
 * console.log(`min ${s.min}, max ${s.max}, average ${s.average}, standard deviation ${s.standardDeviation.toFixed(3)}`);
 * handle.dispose();
 * ```
 */
export function gridStatistics(bytes: Uint8Array, metadata: GridMetadata): Result<GridStatistics> {
  requireGridInBytes('gridStatistics', bytes, metadata, 'gridStatistics(handle.hostBytes(), handle.grid())');
  if (!hasStatistics(metadata.gridType)) {
    return err(ErrorCode.NotSupported, `gridStatistics: grid type ${GridType[metadata.gridType]} has no statistics; Mask, Boolean, index and point grids have none`);
  }
  const v = new DataView(bytes.buffer, bytes.byteOffset + metadata.byteOffset, metadata.gridSize);
  const layout = valueLayoutOf(metadata.gridType) as ValueLayout;
  const s = new StatisticsWalk(v, layout, false).root();
  if (s.count === 0) return err(ErrorCode.InvalidArgument, 'gridStatistics: the grid has no active values');
  const { components, scalar, valueSize } = layout;
  const extreme = (key: number | bigint, at: number): number | bigint | readonly number[] =>
    components === 1 ? key : Array.from({ length: components }, (_, c) => (at >= 0 ? readScalar(v, at + (valueSize / components) * c, scalar) : Number(key)));
  return ok({ min: extreme(s.min as number | bigint, s.minAt), max: extreme(s.max as number | bigint, s.maxAt), average: s.average, standardDeviation: s.standardDeviation, count: s.count });
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
