import { ErrorCode, HsError, err, type Backend, type Result } from '@hs/streams';
import { ResourceBuffer } from '../../resource-buffer.js';
import { isResource, type SyncResource } from '../../resource.js';
import { GridHandle } from '../grid/grid-handle.js';
import { computeChecksum, writeChecksum } from '../grid/grid-checksum.js';
import { BlindDataClass, BlindDataSemantic, GRID_CLASS_END, Grid, GridClass, GridFlags, GridType, LeafKind, gridClassFitsType, valueLayoutOf } from '../grid/grid-layout.js';
import { blindDataBytes, writeBlindData, type BlindItem } from './blind-data-writer.js';
import { hasStatistics, writeGridStatistics } from '../grid/grid-statistics.js';
import { countVoxelNodes } from './grid-node-count.js';
import { gridBytes, planGrid, writeGrid, gridTemplate } from './grid-writer.js';
import { checkGridBytes, resolveGridOptions, type PointsToGridOptions } from './points-to-grid-options.js';
import { KEY_WORDS, sameNode, sortVoxelsAnyWidth } from './voxel-order.js';
import { VoxelValueWriter, type VoxelValueArray } from './voxel-values.js';

/** Grid types `voxelsToGrid` writes: every type whose leaves hold plain values, Mask, Boolean and the quantized float types. */
export type ValueGridType =
  | GridType.Float
  | GridType.Double
  | GridType.Int16
  | GridType.Int32
  | GridType.Int64
  | GridType.UInt32
  | GridType.UInt8
  | GridType.Half
  | GridType.Vec3f
  | GridType.Vec3d
  | GridType.Vec4f
  | GridType.Vec4d
  | GridType.RGBA8
  | GridType.Mask
  | GridType.Boolean
  | GridType.Fp4
  | GridType.Fp8
  | GridType.Fp16
  | GridType.FpN
  | GridType.PointIndex;

/** Voxels and their values. */
export interface VoxelValues {
  /** i, j, k triplets of index coordinates (3 elements per voxel). */
  readonly coords: Int32Array;
  /**
   * `components` values per voxel, in voxel order (1 for scalar types, 3 for Vec3f/Vec3d, 4 for Vec4f/Vec4d/RGBA8
   * as r, g, b, a in 0-255; Boolean: non-zero is true). Int64: a BigInt64Array keeps all 64 bits. Mask and
   * PointIndex: ignored (a PointIndex voxel listed k times holds k points).
   */
  readonly values?: VoxelValueArray;
}

/** Options of `voxelsToGrid`. */
export interface VoxelsToGridOptions extends Omit<PointsToGridOptions, 'gridType' | 'name' | 'background'> {
  /** The value type of the grid written (every NanoVDB type but Index and OnIndex, which `pointsToGrid` builds). */
  readonly gridType: ValueGridType;
  /** Grid name, any length: 256 UTF-8 bytes or more are stored whole as GridName blind data (HasLongGridName); default empty. */
  readonly name?: string;
  /** Value of every voxel not set, one number (scalar types) or `components` numbers; default 0. Int64: number or bigint. */
  readonly background?: number | bigint | readonly number[];
  /** Grid class; default Unknown (Topology for Mask). It must fit the type as NanoVDB requires (e.g. LevelSet: a float type). */
  readonly gridClass?: GridClass;
  /**
   * FpN only: the absolute error each decoded value may have, in value units; each leaf gets the fewest bits that meet
   * it. Default NanoVDB's: LevelSet `0.1 * background / 3`, FogVolume 0.01, otherwise 0 (exact, usually 16 bits).
   */
  readonly tolerance?: number;
  /**
   * Store NanoVDB's statistics (min, max, average, standard deviation) in every node and set HasMinMax, HasAverage and
   * HasStdDeviation; default false. Every type with values (scalar, Half, vector, RGBA8, Fp4/Fp8/Fp16/FpN); not Mask,
   * Boolean or PointIndex. Vectors by NanoVDB's convention (`gridStatistics`); quantized leaves as u16 codes.
   */
  readonly statistics?: boolean;
}

/**
 * Builds a NanoVDB grid of any value type on the host from voxels and their values: each voxel becomes active with
 * its value (the first one given for a voxel listed twice); every other voxel reads `background`. PointIndex grids
 * take one coordinate per point instead: each voxel holds the running count of its leaf's points through it, each
 * leaf its first point and point count, and one blind-data array (semantic PointId, class IndexArray, u32) lists the
 * indices of the caller's points grouped voxel by voxel in leaf order, as NanoVDB's PointsToGrid with `PointID` does. Nodes are laid out
 * breadth-first in the same order as `pointsToGrid`'s (HasBBox | IsBreadthFirst, tight bounding boxes, no statistics),
 * and the grid validates in NanoVDB (`CheckMode::Full`). Half values are rounded to f32, then to binary16 (ties to even).
 * Fp4, Fp8, Fp16 and FpN leaves are quantized from f32 values exactly as NanoVDB's host builder does without dithering
 * (per leaf minimum and quantum over all 512 voxels, inactive ones holding the background; the same codes, byte for
 * byte), so `getValue` returns `f32(code * quantum + minimum)`.
 *
 * Two allocations through `resource` (its synchronous pair; host-accessible): a workspace of 40 bytes per voxel plus
 * 256 KiB, returned before the call ends, and the grid. With `maxGridBytes`, the nodes' bytes (fixed-size leaves;
 * an FpN leaf without its codes) are counted from `coords` and a grid above the cap is refused before anything is
 * allocated; the exact size (FpN codes, blind data) is checked again before the grid is allocated.
 *
 * Errors: InvalidArgument for a grid type it does not write (Index, OnIndex), `statistics` for a type without
 * statistics (Mask, Boolean, PointIndex), a negative or NaN `tolerance`, more
 * than 65535 points in one PointIndex leaf (its counts are u16), a
 * `values` length that is not `components` per voxel, a background of the wrong length, a grid class outside 0-10 or
 * that does not fit the type, a grid above `maxGridBytes` (naming its bytes, node counts and the cap), and the options
 * `pointsToGrid` checks (voxel size, origin, name, checksum, `maxGridBytes`); NotSupported
 * for a resource the host cannot read; the resource's `OutOfMemory`. Nothing is left allocated on failure.
 * @throws HsError InvalidArgument when `resource` is not a resource or `voxels.coords` is not an Int32Array.
 * Spec: issue 23 (write every value type); NANOVDB-FORMAT.md (buffer order, leaves).
 *
 * @example
 * ```ts
 * import { GridClass, GridType, HostResource, voxelsToGrid } from '@hs/nanovdb-mr';
 * import { HostBackend, unwrap } from '@hs/streams';
 *
 * const backend = new HostBackend();
 * const resource = new HostResource(backend);
 * const coords = new Int32Array([0, 0, 0, 1, 0, 0]); // two voxels, i, j, k triplets
 * const velocity = new Float32Array([1, 0, 0, 0.5, 0.5, 0]); // 3 components per voxel
 * const grid = unwrap(voxelsToGrid(backend, resource, { coords, values: velocity }, { gridType: GridType.Vec3f, gridClass: GridClass.Staggered }));
 * const v = unwrap(grid.accessor()).getVector(1, 0, 0, new Float32Array(3));
 * // a level set of doubles whose background is 3 voxels' distance
 * const levelSet = unwrap(voxelsToGrid(backend, resource, { coords, values: new Float64Array([-0.5, 0.5]) }, { gridType: GridType.Double, background: 3, gridClass: GridClass.LevelSet }));
 * console.log(`velocity at (1,0,0): ${[...v]}; level set outside: ${unwrap(levelSet.accessor()).getValue(9, 9, 9)}`);
 * grid.dispose();
 * levelSet.dispose();
 * ```
 */
export function voxelsToGrid(
  backend: Backend,
  resource: SyncResource,
  voxels: VoxelValues,
  options: VoxelsToGridOptions,
): Result<GridHandle<ResourceBuffer<SyncResource, Uint8ArrayConstructor>>> {
  const who = 'voxelsToGrid';
  if (!isResource(resource)) throw new HsError(ErrorCode.InvalidArgument, `${who}: resource must be a resource (allocate and deallocate)`);
  if (!(voxels?.coords instanceof Int32Array)) throw new HsError(ErrorCode.InvalidArgument, `${who}: voxels.coords must be an Int32Array of i, j, k triplets`);
  const layout = valueLayoutOf(options?.gridType);
  const writes = layout !== undefined && layout.leafKind !== LeafKind.Index;
  if (!writes) return err(ErrorCode.InvalidArgument, `${who}: gridType ${String(options?.gridType)} is not one it writes (every type but Index and OnIndex, which pointsToGrid builds)`);
  const { coords } = voxels;
  if (coords.length % 3 !== 0) return err(ErrorCode.InvalidArgument, `${who}: coords holds ${coords.length} numbers, not a whole number of i, j, k triplets`);
  const n = coords.length / 3;
  const values = voxels.values ?? new Uint8Array(layout.components * n).fill(1);
  if (values.length !== layout.components * n) {
    return err(ErrorCode.InvalidArgument, `${who}: values holds ${values.length} numbers; ${n} voxels of ${GridType[layout.gridType]} need ${layout.components * n}`);
  }
  const bg = options.background ?? 0;
  const background = typeof bg === 'number' || typeof bg === 'bigint' ? new Array<number | bigint>(layout.components).fill(bg) : [...bg];
  if (background.length !== layout.components) return err(ErrorCode.InvalidArgument, `${who}: background needs ${layout.components} numbers for ${GridType[layout.gridType]}, got ${background.length}`);
  const points = layout.leafKind === LeafKind.Point;
  const gridClass = options.gridClass ?? (layout.gridType === GridType.Mask ? GridClass.Topology : points ? GridClass.PointIndex : GridClass.Unknown);
  if (!Number.isInteger(gridClass) || gridClass < 0 || gridClass >= GRID_CLASS_END || !gridClassFitsType(gridClass, layout.gridType)) {
    return err(ErrorCode.InvalidArgument, `${who}: gridClass ${String(gridClass)} does not fit grid type ${GridType[layout.gridType]} (NanoVDB's rule: LevelSet and FogVolume need a float type, Staggered a vector type, Topology Mask, ...)`);
  }
  if (options.statistics === true && !hasStatistics(layout.gridType)) {
    return err(ErrorCode.InvalidArgument, `${who}: statistics are written for grids with values (scalar, vector and quantized), not ${GridType[layout.gridType]}`);
  }
  const settings = resolveGridOptions(who, { ...options, gridType: GridType.Float, gridClass: GridClass.Unknown, background: 0 }, true); // the class and background were checked above
  if (!settings.ok) return settings;
  const tolerance = options.tolerance ?? defaultTolerance(gridClass, Number(background[0]));
  if (typeof tolerance !== 'number' || !(tolerance >= 0)) return err(ErrorCode.InvalidArgument, `${who}: tolerance must be a non-negative number, got ${String(tolerance)}`);

  if (settings.value.maxGridBytes !== Number.POSITIVE_INFINITY) {
    // before anything is allocated: the nodes' bytes from the coordinates (every leaf at its fixed size, an FpN leaf without codes)
    const counts = countVoxelNodes(who, coords, 1, [0, 0, 0]);
    if (!counts.ok) return counts;
    const capped = checkGridBytes(who, gridBytes(layout, counts.value.uppers, counts.value.lowers, counts.value.leaves), counts.value, settings.value);
    if (!capped.ok) return capped;
  }
  const made = ResourceBuffer.allocate(backend, resource, 4 * (KEY_WORDS * n + 5 * n + 65536));
  if (!made.ok) return made;
  const workspace = made.value;
  try {
    const view = workspace.hostView();
    if (!view.ok) return err(ErrorCode.NotSupported, `${who}: needs a host-accessible resource (host, pinned or managed memory)`, view.error);
    const ws = view.value;
    const words = (at: number, count: number): Uint32Array => new Uint32Array(ws.buffer, ws.byteOffset + 4 * at, count);
    const counts = words(KEY_WORDS * n + 2 * n, 65536);
    const sorted = new Int32Array(ws.buffer, ws.byteOffset + 4 * (KEY_WORDS * n + 2 * n + 65536), 3 * n);
    const order = sortVoxelsAnyWidth(coords, n, sorted, words(KEY_WORDS * n, n), words(0, KEY_WORDS * n), words(KEY_WORDS * n + n, n), counts);
    const counted = planGrid(sorted, n, layout);
    const writer = new VoxelValueWriter(layout, values, background, order, tolerance);
    const nodesEnd = counted.leafStart + writer.planLeaves(sorted, n, counted.leaves);
    if (points && mostPointsInALeaf(sorted, n) > 0xffff) return err(ErrorCode.InvalidArgument, `${who}: a PointIndex leaf holds more than 65535 points (its counts are u16); use smaller voxels`);
    const blind = blindItems(points ? order : undefined, settings.value.longName);
    const plan = { ...counted, gridSize: nodesEnd + blindDataBytes(blind) };
    // FpN codes and blind data are known only now: the exact size, before the grid is allocated
    const capped = checkGridBytes(who, plan.gridSize, { uppers: counted.tiles, lowers: counted.lowers, leaves: counted.leaves }, settings.value);
    if (!capped.ok) return capped;
    const grid = ResourceBuffer.allocate(backend, resource, plan.gridSize, { alignment: 32 });
    if (!grid.ok) return grid;
    const gridView = grid.value.hostView();
    if (!gridView.ok) {
      grid.value.dispose();
      return err(ErrorCode.NotSupported, `${who}: needs a host-accessible resource (host, pinned or managed memory)`, gridView.error);
    }
    const bytes = gridView.value;
    writeGrid(bytes, sorted, plan, layout, gridTemplate({ ...settings.value, layout, gridClass }), writer);
    writeBlindData(bytes, nodesEnd, blind);
    const header = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (points) header.setBigUint64(Grid.data1, BigInt(n), true); // the point count
    if (settings.value.longName !== undefined) header.setUint32(Grid.flags, header.getUint32(Grid.flags, true) | GridFlags.HasLongGridName, true);
    if (options.statistics === true) writeGridStatistics(bytes.subarray(0, plan.gridSize), layout.gridType);
    writeChecksum(bytes, computeChecksum(bytes, plan.gridSize, settings.value.checksum));
    const handle = GridHandle.fromHostBytes(backend, grid.value, { checksum: false });
    if (!handle.ok) grid.value.dispose();
    return handle;
  } finally {
    workspace.dispose();
  }
}

/** NanoVDB's default FpN tolerance (its AbsDiff oracle): a tenth of a level set's half-width of 3 voxels, 1% of a fog volume's range, else exact. */
function defaultTolerance(gridClass: GridClass, background: number): number {
  if (gridClass === GridClass.LevelSet) return Math.fround(Math.fround(Math.fround(0.1) * Math.fround(background)) / 3);
  return gridClass === GridClass.FogVolume ? Math.fround(0.01) : 0;
}

/** The most points (sorted coordinates, duplicates included) any one leaf receives. */
function mostPointsInALeaf(sorted: Int32Array, count: number): number {
  let most = 0;
  let run = 0;
  for (let i = 0; i < count; i++) {
    run = i > 0 && sameNode(sorted, i, i - 1, 3) ? run + 1 : 1;
    if (run > most) most = run;
  }
  return most;
}

/**
 * The grid's blind data: for a PointIndex grid the u32 indices of the caller's points in voxel order (semantic
 * PointId, class IndexArray), and for a name of 256 bytes or more the whole name, NUL-terminated (class GridName).
 */
function blindItems(pointIds: Uint32Array | undefined, longName: Uint8Array | undefined): BlindItem[] {
  const items: BlindItem[] = [];
  if (pointIds !== undefined) {
    items.push({
      semantic: BlindDataSemantic.PointId,
      dataClass: BlindDataClass.IndexArray,
      dataType: GridType.UInt32,
      valueSize: 4,
      valueCount: pointIds.length,
      name: 'point indices',
      write: (v, at) => pointIds.forEach((id, i) => v.setUint32(at + 4 * i, id, true)),
    });
  }
  if (longName !== undefined) {
    items.push({
      semantic: BlindDataSemantic.Unknown,
      dataClass: BlindDataClass.GridName,
      dataType: GridType.Unknown,
      valueSize: 1,
      valueCount: longName.length + 1,
      name: 'grid name',
      write: (v, at) => longName.forEach((c, i) => v.setUint8(at + i, c)),
    });
  }
  return items;
}
