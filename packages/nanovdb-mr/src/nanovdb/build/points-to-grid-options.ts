import { ErrorCode, err, ok, type Err, type Result } from '@hs/streams';
import type { ChecksumMode } from '../grid/grid-checksum.js';
import { FLOAT_LAYOUT, GRID_CLASS_END, GRID_NAME_SIZE, ON_INDEX_LAYOUT, GridClass, GridType, gridClassFitsType } from '../grid/grid-layout.js';
import type { GridSettings } from './grid-writer.js';

/**
 * The `maxGridBytes` the hs command lines pass by default (`--max-grid-bytes`): 256 MiB (268 435 456 bytes), so every
 * entry point refuses the same grids. The builders themselves have no cap unless given one.
 * @example
 * ```ts
 * import { DEFAULT_CLI_MAX_GRID_BYTES, GridType, HostResource, pointsToGrid } from '@hs/nanovdb-mr';
 * import { HostBackend } from '@hs/streams';
 *
 * const backend = new HostBackend();
 * const positions = new Float32Array([0, 0, 0, 1000, 1000, 1000]); // two points 1.7 km apart
 * // at a 1e-4 voxel size they need far more than 256 MiB of nodes: refused before anything is allocated
 * const built = pointsToGrid(backend, new HostResource(backend), { space: 'world', positions }, { gridType: GridType.Float, voxelSize: 1e-4, maxGridBytes: DEFAULT_CLI_MAX_GRID_BYTES });
 * console.log(built.ok ? `built ${built.value.grid()?.gridSize} B` : built.error.message);
 * ```
 */
export const DEFAULT_CLI_MAX_GRID_BYTES = 256 * 2 ** 20;

/** Options of every PointsToGrid build (host, stream-ordered and capacity-bounded). */
export interface PointsToGridOptions {
  /** `GridType.OnIndex` (value indices of active voxels) or `GridType.Float` (1.0 at active voxels over `background`). */
  readonly gridType: GridType.Float | GridType.OnIndex;
  /** World units per voxel, a positive number from 2^-126 to 2^126 (float32's normal range, for the map and its inverse); default 1. */
  readonly voxelSize?: number;
  /** World position of voxel (0, 0, 0); default the origin. */
  readonly origin?: readonly [number, number, number];
  /** Grid name, at most 255 UTF-8 bytes; default empty. */
  readonly name?: string;
  /** Checksum to store: `full` (default), `partial` (head only) or `disabled`. */
  readonly checksum?: ChecksumMode;
  /**
   * Grid class to declare; default IndexGrid for OnIndex, Unknown for Float. It must fit the type as NanoVDB requires:
   * a Float grid may be LevelSet, FogVolume, VoxelVolume or any class without a type rule; OnIndex IndexGrid or TensorGrid.
   */
  readonly gridClass?: GridClass;
  /**
   * Float grids only: the value of every inactive voxel (rounded to f32), written where NanoVDB writes it: the root's
   * background, every internal-node table entry that is not a child, and every inactive voxel of a leaf; so the
   * accessor reads it for any inactive voxel. Default 0, as NanoVDB's PointsToGrid writes. Every builder and backend
   * writes it (the CUDA write kernel takes it as a parameter): the grids are byte-identical.
   */
  readonly background?: number;
  /**
   * The most bytes the grid may take, a positive integer; default no cap. A build whose grid would be larger fails
   * with InvalidArgument naming the grid's size, its node counts and the cap, before the grid is allocated (see each
   * builder for what it allocates before it knows the size). The CLIs pass 256 MiB (`--max-grid-bytes`).
   */
  readonly maxGridBytes?: number;
}

/** Resolved options: the grid settings and the checksum mode. */
export interface ResolvedGridOptions extends GridSettings {
  readonly checksum: ChecksumMode;
  /** The whole name when it is 256 UTF-8 bytes or longer (then `nameBytes` holds its first 255), for blind data. */
  readonly longName?: Uint8Array;
  /** The f32 background of a Float grid (0 for OnIndex). */
  readonly background: number;
  /** The cap on the grid's bytes; `Infinity` for none. */
  readonly maxGridBytes: number;
}

/** Smallest normal float32 (2^-126): the grid's float map stores the voxel size and its inverse as float32. */
const FLOAT32_MIN_NORMAL = 2 ** -126;

/**
 * Null for a voxel size a grid can store: a number whose float32 value and inverse are both normal, finite float32
 * numbers (2^-126 to 2^126, as NanoVDB's float map holds both), else InvalidArgument naming `who` and the range.
 */
export function voxelSizeProblem(who: string, voxelSize: unknown): Err | null {
  if (typeof voxelSize !== 'number' || !Number.isFinite(voxelSize) || voxelSize <= 0) {
    return err(ErrorCode.InvalidArgument, `${who}: voxelSize must be a positive finite number, got ${typeof voxelSize === 'string' ? `the string '${voxelSize}'` : String(voxelSize)}`);
  }
  if (voxelSize < FLOAT32_MIN_NORMAL || voxelSize > 1 / FLOAT32_MIN_NORMAL) {
    return err(ErrorCode.InvalidArgument, `${who}: voxelSize ${voxelSize} is outside 2^-126..2^126 (about 1.2e-38 to 8.5e37): the grid's float32 map stores the voxel size and its inverse, which would become 0 or Infinity`);
  }
  return null;
}

/**
 * Checks and defaults `options`; InvalidArgument naming the bad option, prefixed with `who`. Names of 256 bytes or
 * more are refused unless `longNames` (a builder that stores them as blind data).
 */
export function resolveGridOptions(who: string, options: PointsToGridOptions, longNames = false): Result<ResolvedGridOptions> {
  const layout = options?.gridType === GridType.Float ? FLOAT_LAYOUT : options?.gridType === GridType.OnIndex ? ON_INDEX_LAYOUT : undefined;
  if (layout === undefined) return err(ErrorCode.InvalidArgument, `${who}: gridType must be GridType.Float or GridType.OnIndex, got ${String(options?.gridType)}`);
  const voxelSize = options.voxelSize ?? 1;
  const badVoxelSize = voxelSizeProblem(who, voxelSize);
  if (badVoxelSize !== null) return badVoxelSize;
  const origin = options.origin ?? [0, 0, 0];
  if (!Array.isArray(origin) || origin.length !== 3 || !origin.every((c) => typeof c === 'number' && Number.isFinite(c))) {
    return err(ErrorCode.InvalidArgument, `${who}: origin must be three finite numbers`);
  }
  const fullName = new TextEncoder().encode(options.name ?? '');
  const long = fullName.length >= GRID_NAME_SIZE;
  if (long && !longNames) return err(ErrorCode.InvalidArgument, `${who}: the name has ${fullName.length} UTF-8 bytes; at most ${GRID_NAME_SIZE - 1} fit`);
  const nameBytes = long ? fullName.subarray(0, GRID_NAME_SIZE - 1) : fullName;
  const gridClass = options.gridClass ?? (layout.isIndex ? GridClass.IndexGrid : GridClass.Unknown);
  if (!Number.isInteger(gridClass) || gridClass < 0 || gridClass >= GRID_CLASS_END || !gridClassFitsType(gridClass, layout.gridType)) {
    return err(ErrorCode.InvalidArgument, `${who}: gridClass ${String(gridClass)} does not fit grid type ${GridType[layout.gridType]} (NanoVDB's rule: LevelSet and FogVolume need a float type, IndexGrid an index type, ...)`);
  }
  const background = options.background ?? 0;
  if (typeof background !== 'number' || !Number.isFinite(background)) return err(ErrorCode.InvalidArgument, `${who}: background must be a finite number, got ${String(background)}`);
  if (layout.isIndex && background !== 0) return err(ErrorCode.InvalidArgument, `${who}: background is for Float grids; an OnIndex grid's background is value index 0`);
  const maxGridBytes = options.maxGridBytes ?? Number.POSITIVE_INFINITY;
  if (maxGridBytes !== Number.POSITIVE_INFINITY && !(Number.isSafeInteger(maxGridBytes) && maxGridBytes > 0)) {
    return err(ErrorCode.InvalidArgument, `${who}: maxGridBytes must be a positive integer (bytes), got ${String(options.maxGridBytes)}`);
  }
  const checksum = options.checksum ?? 'full';
  if (checksum !== 'full' && checksum !== 'partial' && checksum !== 'disabled') return err(ErrorCode.InvalidArgument, `${who}: checksum must be 'full', 'partial' or 'disabled'`);
  return ok({ layout, gridClass, voxelSize, origin: origin as readonly [number, number, number], nameBytes, checksum, background: Math.fround(background), maxGridBytes, ...(long ? { longName: fullName } : {}) });
}

/**
 * InvalidArgument when a grid of `bytes` bytes (`nodes` its upper, lower and leaf counts) is above the resolved
 * `maxGridBytes`: `<who>: the grid takes <n> bytes (<MiB> MiB: <u> upper, <l> lower nodes, <f> leaves), above
 * maxGridBytes <cap>; use a larger voxel size or fewer points, or raise maxGridBytes`.
 */
export function checkGridBytes(who: string, bytes: number, nodes: { readonly uppers: number; readonly lowers: number; readonly leaves: number }, settings: ResolvedGridOptions): Result<void> {
  if (bytes <= settings.maxGridBytes) return ok(undefined);
  const { uppers, lowers, leaves } = nodes;
  return err(
    ErrorCode.InvalidArgument,
    `${who}: the grid takes ${bytes} bytes (${(bytes / 2 ** 20).toFixed(1)} MiB: ${uppers} upper, ${lowers} lower nodes, ${leaves} leaves), above maxGridBytes ${settings.maxGridBytes}; use a larger voxel size or fewer points, or raise maxGridBytes`,
  );
}

/**
 * The message of an InvalidArgument for point `index` (0-based) that maps to no voxel. With the point's
 * world coordinates and the voxel size it says which of the two happened: a NaN or infinite coordinate,
 * or a finite point whose voxel index falls outside the 32-bit range (suggesting a larger voxel size);
 * without them (the point is not readable on the host) it names both possibilities.
 */
export function invalidPointMessage(who: string, index: number, point?: { readonly coordinates: readonly number[]; readonly voxelSize: number }): string {
  if (point === undefined) {
    return `${who}: point ${index} has a non-finite coordinate or maps to a voxel outside the 32-bit index range; remove NaN and infinite points first, or use a larger voxel size or another origin`;
  }
  const at = `(${point.coordinates.join(', ')})`;
  if (!point.coordinates.every(Number.isFinite)) return `${who}: point ${index} has a non-finite coordinate ${at}; remove NaN and infinite points first`;
  return `${who}: point ${index} ${at} maps to a voxel index outside the 32-bit range (-2^31 to 2^31 - 1) at voxel size ${point.voxelSize}; use a larger voxel size or another origin`;
}
