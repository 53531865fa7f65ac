/**
 * Per-point attributes reduced into the voxels of a value grid (issue 24 item 1, host path): the points are
 * sorted into build order (a stable radix sort, so the points of one voxel keep their input order), each run of
 * points in one voxel is one segment, and each segment is reduced on its own. No atomics, no order dependence
 * beyond the input order: the same points give the same bytes every time.
 */
import { ErrorCode, HsError, err, type Backend, type Result } from '@hs/streams';
import type { ResourceBuffer } from '../../resource-buffer.js';
import type { SyncResource } from '../../resource.js';
import type { GridHandle } from '../grid/grid-handle.js';
import { GridType } from '../grid/grid-layout.js';
import { voxelCoordinate } from './points-to-grid-kernels.js';
import { invalidPointMessage, resolveGridOptions } from './points-to-grid-options.js';
import type { IndexPoints, WorldPoints } from './points-to-grid.js';
import { KEY_WORDS, sameVoxel, sortVoxelsAnyWidth } from './voxel-order.js';
import { voxelsToGrid, type VoxelsToGridOptions } from './voxels-to-grid.js';
import { pointsToGrid } from './points-to-grid.js';
import { attachChannels, channelValues } from './grid-channels.js';
import { ATTRIBUTE_ARRAYS, REDUCTIONS, reduceSegment, toValueType, type PointAttributeArray, type PointReduction, type ReducedValueType } from './point-reduce.js';

export type { PointAttributeArray, PointReduction } from './point-reduce.js';

/** One attribute per point and its reduction. */
export interface PointAttributes {
  /** `channels` numbers per point, in point order (point `i`'s channel `c` at `channels * i + c`). */
  readonly values: PointAttributeArray;
  /** Channels per point, 1 to 4: 1 for Float, Double and Int32 grids, 3 for Vec3f, 4 for RGBA8 (any for `count` and Mask). */
  readonly channels: number;
  /** How the points of one voxel become its value (see `pointAttributesToGrid` for the accumulation). */
  readonly reduction: PointReduction;
}

/** Grid types the attribute builder writes (OnIndex: the values go into a sidecar channel, see `channel`). */
export type AttributeGridType = GridType.Float | GridType.Double | GridType.Int32 | GridType.Vec3f | GridType.RGBA8 | GridType.Mask | GridType.OnIndex;

/** The value types of an attribute channel of an OnIndex grid. */
export type AttributeChannelType = GridType.Float | GridType.Double | GridType.Int32 | GridType.Vec3f | GridType.RGBA8;

/** Options of `pointAttributesToGrid`: those of `voxelsToGrid` for the attribute grid types, and the world-to-index map. */
export interface PointAttributesToGridOptions extends Omit<VoxelsToGridOptions, 'gridType'> {
  /**
   * The value type written: Float, Double, Int32 (1 channel), Vec3f (3), RGBA8 (4) or Mask (voxels only); or OnIndex:
   * an OnIndex grid of the voxels with the reduced values in the sidecar channel `channel` (NanoVDB's layout, see
   * `attachChannels`; `background` goes into its slot 0).
   */
  readonly gridType: AttributeGridType;
  /** OnIndex only: the channel's name and value type (Float, Double, Int32, Vec3f or RGBA8, rounded as for those grids). */
  readonly channel?: {
    /** The blind-data record's name, unique in the grid (NanoVDB names its channels `channel_0`, ...). */
    readonly name: string;
    /** The channel's value type. */
    readonly type: AttributeChannelType;
  };
}

const COMPONENTS: Readonly<Record<Exclude<AttributeGridType, GridType.OnIndex>, number>> = {
  [GridType.Float]: 1,
  [GridType.Double]: 1,
  [GridType.Int32]: 1,
  [GridType.Vec3f]: 3,
  [GridType.RGBA8]: 4,
  [GridType.Mask]: 0,
};
/**
 * Builds a value grid on the host from points and one attribute per point: each voxel holding points gets the
 * reduction of its points' attribute, channel by channel. Accumulation: `sum` and `mean` add in float64 in input
 * order (the mean divides that sum by the count), `min`, `max` and `last` (the point that comes last in the input)
 * keep a value of the attribute exactly, `count` is the number of points; then each result is rounded to the grid's
 * value type (Float, Vec3f: nearest f32; Int32, RGBA8: nearest integer, ties away from zero, clamped to the type's
 * range; Double: as is). Mask grids take the voxels only. OnIndex grids (`options.channel`) hold the voxels as `pointsToGrid` builds
 * them and the reduced values in a sidecar channel (`attachChannels`: two grid allocations, the first freed), so
 * `indexToGrid` of it gives the Float/Vec3f/... grid this function builds. Points map to voxels as in `pointsToGrid`; the grid is
 * written by `voxelsToGrid` (the same layout, so the same topology as `pointsToGrid`'s grid of the same points).
 *
 * Checks before anything is allocated: the attribute's array type (one of `PointAttributeArray`), `channels` (an
 * integer 1 to 4, matching the grid type unless the reduction is `count` or the grid a Mask), its length
 * (`channels` per point) and the reduction; points mapping to no voxel (named). The sort and reduction scratch is
 * host memory of the call (about 36 bytes per point plus 256 KiB); the grid and the build's workspace come from
 * `resource` (see `voxelsToGrid`).
 * @returns the grid; InvalidArgument naming the bad attribute, option or point; `voxelsToGrid`'s errors.
 * @throws HsError InvalidArgument when `points` is malformed.
 * Spec: issue 24 item 1 (values on voxels), PointsToGrid with the injected resource (nanovdb-memory-resources).
 * @example
 * ```ts
 * import { GridType, HostResource, pointAttributesToGrid } from '@hs/nanovdb-mr';
 * import { HostBackend, unwrap } from '@hs/streams';
 *
 * const backend = new HostBackend();
 * const positions = new Float32Array([0.01, 0, 0, 0.03, 0, 0, 0.52, 0, 0]); // two points in voxel 0, one in voxel 5
 * const intensity = new Float32Array([10, 20, 7]);
 * // the mean intensity per voxel of 0.1 world units
 * const grid = unwrap(pointAttributesToGrid(backend, new HostResource(backend), { space: 'world', positions }, { values: intensity, channels: 1, reduction: 'mean' }, { gridType: GridType.Float, voxelSize: 0.1 }));
 * const acc = unwrap(grid.accessor());
 * console.log(`voxel 0: ${acc.getValue(0, 0, 0)}, voxel 5: ${acc.getValue(5, 0, 0)}`); // 15 and 7
 * const wrong = pointAttributesToGrid(backend, new HostResource(backend), { space: 'world', positions }, { values: new Float32Array(2), channels: 1, reduction: 'sum' }, { gridType: GridType.Float, voxelSize: 0.1 });
 * if (!wrong.ok) console.log(wrong.error.message); // the attribute's length, refused before anything is allocated
 * grid.dispose();
 * ```
 */
export function pointAttributesToGrid(
  backend: Backend,
  resource: SyncResource,
  points: IndexPoints | WorldPoints,
  attributes: PointAttributes,
  options: PointAttributesToGridOptions,
): Result<GridHandle<ResourceBuffer<SyncResource, Uint8ArrayConstructor>>> {
  const who = 'pointAttributesToGrid';
  const data = points?.space === 'index' ? points.coords : points?.space === 'world' ? points.positions : undefined;
  if (!(data instanceof Int32Array || data instanceof Float32Array || data instanceof Float64Array) || (points.space === 'index') !== data instanceof Int32Array) {
    throw new HsError(ErrorCode.InvalidArgument, `${who}: points must be { space: 'index', coords: Int32Array } or { space: 'world', positions: Float32Array | Float64Array }`);
  }
  if (data.length % 3 !== 0) return err(ErrorCode.InvalidArgument, `${who}: ${data.length} coordinates is not a whole number of x, y, z triplets`);
  const onIndex = options?.gridType === GridType.OnIndex;
  const channel = options?.channel;
  if (onIndex && (typeof channel?.name !== 'string' || channel.name.length === 0 || !CHANNEL_TYPES.includes(channel.type))) {
    return err(ErrorCode.InvalidArgument, `${who}: an OnIndex grid takes options.channel = { name, type: Float | Double | Int32 | Vec3f | RGBA8 }, the sidecar channel its values go into`);
  }
  const gridType = (onIndex ? channel?.type : options?.gridType) as Exclude<AttributeGridType, GridType.OnIndex>;
  const components = COMPONENTS[gridType];
  if (components === undefined) return err(ErrorCode.InvalidArgument, `${who}: gridType must be Float, Double, Int32, Vec3f, RGBA8, Mask or OnIndex, got ${String(gridType)}`);
  const { values, channels, reduction } = attributes ?? ({} as PointAttributes);
  if (!ATTRIBUTE_ARRAYS.some((T) => values instanceof T)) {
    return err(ErrorCode.InvalidArgument, `${who}: attributes.values must be a Float32Array, Float64Array, Int8Array, Uint8Array, Int16Array, Uint16Array, Int32Array or Uint32Array`);
  }
  if (!Number.isInteger(channels) || channels < 1 || channels > 4) return err(ErrorCode.InvalidArgument, `${who}: attributes.channels must be 1, 2, 3 or 4, got ${String(channels)}`);
  if (!REDUCTIONS.includes(reduction)) return err(ErrorCode.InvalidArgument, `${who}: attributes.reduction must be one of ${REDUCTIONS.join(', ')}, got ${String(reduction)}`);
  const n = data.length / 3;
  if (values.length !== channels * n) return err(ErrorCode.InvalidArgument, `${who}: attributes.values holds ${values.length} numbers; ${n} points of ${channels} channels need ${channels * n}`);
  const outChannels = reduction === 'count' || components === 0 ? components : channels;
  if (outChannels !== components) return err(ErrorCode.InvalidArgument, `${who}: a ${GridType[gridType]} grid takes ${components} channels per voxel, the attribute has ${channels}`);
  const settings = resolveGridOptions(who, { gridType: GridType.Float, voxelSize: options.voxelSize, origin: options.origin });
  if (!settings.ok) return settings;

  const coords = new Int32Array(3 * n);
  if (data instanceof Int32Array) coords.set(data);
  else {
    const inv = 1 / settings.value.voxelSize;
    for (let i = 0; i < n; i++) {
      for (let a = 0; a < 3; a++) {
        const c = voxelCoordinate(data[3 * i + a] as number, settings.value.origin[a] as number, inv);
        if (!(c >= -2147483648 && c <= 2147483647)) {
          return err(ErrorCode.InvalidArgument, invalidPointMessage(who, i, { coordinates: [...data.subarray(3 * i, 3 * i + 3)], voxelSize: settings.value.voxelSize }));
        }
        coords[3 * i + a] = c;
      }
    }
  }
  const sorted = new Int32Array(3 * n);
  const order = sortVoxelsAnyWidth(coords, n, sorted, new Uint32Array(n), new Uint32Array(KEY_WORDS * n), new Uint32Array(n), new Uint32Array(65536));
  const voxelCoords: number[] = [];
  const voxelValues: number[] = [];
  for (let start = 0; start < n; ) {
    let end = start + 1;
    while (end < n && sameVoxel(sorted, start, end)) end++;
    voxelCoords.push(sorted[3 * start] as number, sorted[3 * start + 1] as number, sorted[3 * start + 2] as number);
    for (let c = 0; c < components; c++) voxelValues.push(toValueType(gridType as ReducedValueType, reduceSegment((j) => values[channels * (order[j] as number) + c] as number, start, end, reduction)));
    start = end;
  }
  const voxels = { coords: new Int32Array(voxelCoords), ...(components === 0 ? {} : { values: new Float64Array(voxelValues) }) };
  if (onIndex) return onIndexWithChannel(backend, resource, voxels.coords, new Float64Array(voxelValues), options, settings.value.voxelSize, settings.value.origin);
  return voxelsToGrid(backend, resource, voxels, { ...options, gridType, voxelSize: settings.value.voxelSize, origin: settings.value.origin });
}

const CHANNEL_TYPES: readonly number[] = [GridType.Float, GridType.Double, GridType.Int32, GridType.Vec3f, GridType.RGBA8];

/** The OnIndex grid of `coords` (unique voxels) with `values` in sidecar channel `options.channel`: two grid allocations, the first freed. */
function onIndexWithChannel(
  backend: Backend,
  resource: SyncResource,
  coords: Int32Array,
  values: Float64Array,
  options: PointAttributesToGridOptions,
  voxelSize: number,
  origin: readonly [number, number, number],
): Result<GridHandle<ResourceBuffer<SyncResource, Uint8ArrayConstructor>>> {
  const channel = options.channel as { readonly name: string; readonly type: AttributeChannelType };
  const topology = pointsToGrid(backend, resource, { space: 'index', coords }, {
    gridType: GridType.OnIndex,
    voxelSize,
    origin,
    ...(options.name === undefined ? {} : { name: options.name }),
    ...(options.gridClass === undefined ? {} : { gridClass: options.gridClass }),
    ...(options.maxGridBytes === undefined ? {} : { maxGridBytes: options.maxGridBytes }),
    ...(options.checksum === undefined ? {} : { checksum: options.checksum }),
  });
  if (!topology.ok) return topology;
  try {
    const bg = options.background ?? 0;
    const background = typeof bg === 'bigint' ? Number(bg) : bg;
    const array = channelValues(topology.value, { coords, values }, channel.type, background);
    if (!array.ok) return array;
    return attachChannels(backend, resource, topology.value, [{ name: channel.name, type: channel.type, values: array.value }], options.checksum === undefined ? {} : { checksum: options.checksum });
  } finally {
    topology.value.dispose();
  }
}
