/**
 * The kernel launches of a stream-ordered PointsToGrid build and their host implementations.
 * On the CUDA backend the launches run the kernels registered under the same names in
 * `native/src/nanovdb/` (`points-to-grid-sort.cu`, `points-to-grid-reduce.cu`, `points-to-grid-write.cu`,
 * `points-to-grid-channel.cu`, `grid-checksum.cu`);
 * on the host backend (and in the synchronous host builder)
 * the functions below run instead, writing the same grid bytes and the same report words.
 *
 * - `sort`: points -> voxel coordinates (world points through the inverse voxel size and origin,
 *   rounded), invalid points dropped and the first one reported, voxels sorted into build order
 *   (stable: the points of one voxel in input order), each sorted point's input index kept for the
 *   reduce stage (`point-reduce.ts`), level totals counted.
 * - `write`: the grid of the longest sorted prefix whose node counts fit the capacities, written into
 *   the output range (GridData from the template the caller put in the workspace): the background in
 *   the root, the tables and the inactive voxels, and at each active voxel its value from a values
 *   range (one value per voxel in build order), or without one a Float grid's 1.0 (OnIndex and Mask
 *   grids store no voxel values).
 * - `channel` (a bounded OnIndex build with a sidecar channel only): the channel appended after the nodes from the
 *   report's grid size, on the device (`channelLaunch`).
 * - `checksum`: the CRC32 checksum in the requested mode.
 */
import { ErrorCode, HsError, type KernelLaunch, type MemoryRange } from '@hs/streams';
import { CHECKSUM_MODES, computeChecksum, writeChecksum, type ChecksumMode } from '../grid/grid-checksum.js';
import { BLIND_METADATA_SIZE, BlindMeta, DATA_ALIGNMENT, GRID_DATA_SIZE, Grid, GridType, ON_INDEX_LAYOUT, valueLayoutOf, type ValueLayout } from '../grid/grid-layout.js';
import { readScalar, writeScalar } from '../grid/scalar-io.js';
import { planGrid, planOfCounts, writeGrid, type NodeCapacity } from './grid-writer.js';
import { flatWritable, writeGridFlat, writeGridOfKeys } from './grid-writer-flat.js';
import { Overflow, ReportWord, TEMPLATE_OFFSET, hostRegions } from './points-to-grid-workspace.js';
import { countKeyLevels, sortPackedKeys, type SortedKeys } from './packed-voxel-keys.js';
import { KEY_WORDS, sameVoxel, sortByBuildKey, sortVoxels } from './voxel-order.js';
import { VoxelValueWriter } from './voxel-values.js';

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

/** Scalar parameters of the sort kernel. */
export function sortArgs(p: SortParams): number[] {
  return [p.given, p.used, p.encoding, p.inverseVoxelSize, p.origin[0], p.origin[1], p.origin[2]];
}

/**
 * Grid types the write stage writes, and whether a values range comes with the launch: required for Double,
 * Int32, Vec3f and RGBA8, optional for Float (without it active voxels hold 1.0), none for Mask and OnIndex.
 */
const WRITE_VALUES: ReadonlyMap<GridType, 'required' | 'optional' | 'none'> = new Map([
  [GridType.Float, 'optional'],
  [GridType.Double, 'required'],
  [GridType.Int32, 'required'],
  [GridType.Vec3f, 'required'],
  [GridType.RGBA8, 'required'],
  [GridType.Mask, 'none'],
  [GridType.OnIndex, 'none'],
] as const);

/** Bytes of the background's launch encoding: its stored bytes, zero-padded to whole u32 words. */
function backgroundWordCount(layout: ValueLayout): number {
  return Math.ceil(layout.valueSize / 4);
}

/**
 * The background as the write kernel takes it: the bytes the grid stores for it (each component through
 * `writeScalar`, exactly as `voxelsToGrid` writes its `background` option) read as little-endian u32 words,
 * zero-padded: Float, Int32, RGBA8 (r | g << 8 | b << 16 | a << 24) and Mask (0 or 1) one word, Double and
 * OnIndex two, Vec3f three (x, y, z bits).
 * @throws HsError InvalidArgument for a background of neither one nor `layout.components` numbers, or a non-zero
 * OnIndex background.
 */
export function backgroundWords(layout: ValueLayout, background: number | readonly number[]): number[] {
  const parts = typeof background === 'number' ? new Array<number>(layout.components).fill(background) : background;
  if (parts.length !== layout.components) {
    throw new HsError(ErrorCode.InvalidArgument, `pointsToGrid write: background needs 1 or ${layout.components} numbers for ${GridType[layout.gridType]}, got ${parts.length}`);
  }
  if (layout.isIndex && parts[0] !== 0) throw new HsError(ErrorCode.InvalidArgument, "pointsToGrid write: an OnIndex grid's background is value index 0");
  const words = backgroundWordCount(layout);
  const v = new DataView(new ArrayBuffer(4 * words));
  const step = layout.valueSize / layout.components;
  parts.forEach((part, c) => writeScalar(v, step * c, layout.scalar, part));
  return Array.from({ length: words }, (_, w) => v.getUint32(4 * w, true));
}

/** The background components a `backgroundWords` encoding holds, as `VoxelValueWriter` takes them. */
function backgroundOf(layout: ValueLayout, words: readonly number[]): number[] {
  const v = new DataView(new ArrayBuffer(4 * words.length));
  words.forEach((w, i) => v.setUint32(4 * i, w, true));
  const step = layout.valueSize / layout.components;
  return Array.from({ length: layout.components }, (_, c) => readScalar(v, step * c, layout.scalar));
}

/**
 * Scalar parameters of the write kernel: `[used, gridType, capacity uppers, lowers, leaves, ...backgroundWords]`
 * (see `backgroundWords`: 6 to 8 numbers).
 * @throws HsError InvalidArgument for a grid type the write stage does not write (see `writeLaunch`) or a bad background.
 */
export function writeArgs(used: number, layout: ValueLayout, capacity: NodeCapacity, background: number | readonly number[]): number[] {
  if (!WRITE_VALUES.has(layout.gridType)) {
    throw new HsError(ErrorCode.InvalidArgument, `pointsToGrid write: grid type ${GridType[layout.gridType]} is not one it writes (Float, Double, Int32, Vec3f, RGBA8, Mask, OnIndex)`);
  }
  return [used, layout.gridType, capacity.uppers, capacity.lowers, capacity.leaves, ...backgroundWords(layout, background)];
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

/**
 * The write launch: reads `values` when given, reads and writes the workspace (report words), writes the grid into
 * `output` (which must hold a grid of `capacity`). `values` holds one value per voxel in build order (the sorted
 * unique voxels: an OnIndex grid's value index minus 1), `layout.valueSize` bytes each stored as the grid's leaves
 * store them (Float f32, Double f64, Int32 i32, Vec3f 3 x f32, RGBA8 4 x u8, little-endian), for at least `used`
 * voxels (a grid of `used` points has at most that many), from a 4-byte aligned offset; leaf voxel `k` of the
 * grid gets `values[k]`, so a grid cut to a prefix by `capacity` keeps the prefix of the values. Every value is
 * kept bit for bit but a float NaN (any sign, payload or signalling bit), which both writers store as the canonical
 * quiet NaN (`CANONICAL_F32_NAN`; the kernel by its bits, the host writer through `writeScalar`), so host and
 * device grids agree byte for byte.
 * `values` is required for Double, Int32, Vec3f and RGBA8, optional for Float (without it every active voxel holds
 * 1.0), and refused for Mask and OnIndex. `background` is what `voxelsToGrid`'s option of that name takes (one
 * number, or one per component; RGBA8 components 0-255, Mask 0 or 1, OnIndex 0) and the grid holds the same bytes.
 * @throws HsError InvalidArgument for another grid type, `values` missing or refused for the type, too short or
 * misaligned, or a bad background.
 */
export function writeLaunch(
  workspace: MemoryRange,
  output: MemoryRange,
  used: number,
  layout: ValueLayout,
  capacity: NodeCapacity,
  background: number | readonly number[],
  values?: MemoryRange,
): KernelLaunch {
  const params = writeArgs(used, layout, capacity, background);
  const rule = WRITE_VALUES.get(layout.gridType);
  const name = GridType[layout.gridType];
  if (values === undefined && rule === 'required') throw new HsError(ErrorCode.InvalidArgument, `pointsToGrid write: a ${name} grid needs a values range`);
  if (values !== undefined) {
    if (rule === 'none') throw new HsError(ErrorCode.InvalidArgument, `pointsToGrid write: a ${name} grid stores no voxel values; pass no values range`);
    if (values.byteLength < used * layout.valueSize || values.byteOffset % 4 !== 0) {
      throw new HsError(
        ErrorCode.InvalidArgument,
        `pointsToGrid write: values must hold ${used} values of ${layout.valueSize} bytes from a 4-byte aligned offset, got ${values.byteLength} bytes at offset ${values.byteOffset}`,
      );
    }
  }
  return {
    name: 'hs.nanovdb.pointsToGrid.write',
    reads: values === undefined ? [] : [values],
    writes: [workspace, output],
    params,
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

function words32(workspace: Uint8Array): Uint32Array {
  return new Uint32Array(workspace.buffer, workspace.byteOffset, 32);
}

/**
 * The index coordinate of a world coordinate on one axis: `floor((world - origin) * inverseVoxelSize + 0.5)`
 * (NaN for a NaN or infinite input; the caller checks the 32-bit range).
 */
export function voxelCoordinate(world: number, origin: number, inverseVoxelSize: number): number {
  return Math.floor((world - origin) * inverseVoxelSize + 0.5);
}

/**
 * The voxels of `used` world points (f32 or f64 triplets in `input`) written to `coords`, the invalid ones (NaN,
 * infinite, outside the 32-bit index range) dropped: how many were kept, 1 + the index of the first dropped (0: none)
 * and, once one was dropped, the input index of each kept point (null while kept point i is input point i).
 */
function voxelsOfWorld(
  input: Uint8Array,
  encoding: PointEncoding,
  used: number,
  inv: number,
  [ox, oy, oz]: readonly [number, number, number],
  coords: Int32Array,
): { valid: number; firstInvalid: number; inputOf: Uint32Array | null } {
  let valid = 0;
  let firstInvalid = 0;
  let inputOf: Uint32Array | null = null;
  const src = encoding === PointEncoding.WorldFloat32 ? new Float32Array(input.buffer, input.byteOffset, 3 * used) : new Float64Array(input.buffer, input.byteOffset, 3 * used);
  for (let i = 0; i < used; i++) {
    const cx = voxelCoordinate(src[3 * i] as number, ox, inv);
    const cy = voxelCoordinate(src[3 * i + 1] as number, oy, inv);
    const cz = voxelCoordinate(src[3 * i + 2] as number, oz, inv);
    coords[3 * valid] = cx;
    coords[3 * valid + 1] = cy;
    coords[3 * valid + 2] = cz;
    // NaN fails both comparisons' complement: keep only c inside [-2^31, 2^31)
    if (cx >= -2147483648 && cx <= 2147483647 && cy >= -2147483648 && cy <= 2147483647 && cz >= -2147483648 && cz <= 2147483647) {
      if (inputOf !== null) inputOf[valid] = i;
      valid++;
    } else if (firstInvalid === 0) {
      firstInvalid = i + 1;
      inputOf = new Uint32Array(used).map((_, j) => j);
    }
  }
  return { valid, firstInvalid, inputOf };
}

/** Writes the sort stage's report words: point counts, the first invalid point and the level totals. */
function writeSortReport(ws: Uint8Array, given: number, used: number, valid: number, firstInvalid: number, total: { voxels: number; leaves: number; lowers: number; tiles: number }): void {
  const w = words32(ws);
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

/** Host implementation of `hs.nanovdb.pointsToGrid.sort` (see the module comment). */
export function sortOnHost(reads: readonly Uint8Array[], writes: readonly Uint8Array[], params: readonly number[]): void {
  const [given, used, encoding, inv, ox, oy, oz, noOrder] = params as [number, number, PointEncoding, number, number, number, number, number?];
  // params[7] === 1 (the synchronous host builder only): no stage after this one reads the input indices
  const wantOrder = noOrder !== 1;
  const input = reads[0] as Uint8Array;
  const ws = writes[0] as Uint8Array;
  const r = hostRegions(used);
  const coords = new Int32Array(ws.buffer, ws.byteOffset + r.coords, 3 * used);
  const direct = encoding === PointEncoding.IndexInt32;
  const { valid, firstInvalid, inputOf } = direct ? { valid: used, firstInvalid: 0, inputOf: null } : voxelsOfWorld(input, encoding, used, inv, [ox, oy, oz], coords);
  const word = (offset: number, count: number): Uint32Array => new Uint32Array(ws.buffer, ws.byteOffset + offset, count);
  const order = word(r.order, valid);
  const histogram = word(r.histogram, 65536);
  // the sorted coordinates go to the start of the keys region, where the write and reduce stages read them
  const out = new Int32Array(ws.buffer, ws.byteOffset + r.keys, 3 * valid);
  const points = direct ? new Int32Array(input.buffer, input.byteOffset, 3 * valid) : coords.subarray(0, 3 * valid);
  // packed keys under the sorted coordinates (unpacked over them last to first), their ping-pong copy after them
  const levels = new Float64Array(4);
  const packed = sortVoxels(points, valid, out, wantOrder ? order : null, { keys: word(r.keys, 2 * valid), keys2: word(r.keys + 12 * valid, 2 * valid), index2: word(r.pingPong, valid) }, histogram, levels);
  if (!packed) {
    // a box wider than 64 key bits: the five-word build key
    if (direct) coords.set(points);
    const sorted = sortByBuildKey(coords.subarray(0, 3 * valid), word(r.keys, KEY_WORDS * valid), order, word(r.pingPong, valid), histogram);
    // the keys are spent: the sorted coordinates go where they were
    for (let j = 0; j < valid; j++) {
      const p = sorted[j] as number;
      out[3 * j] = coords[3 * p] as number;
      out[3 * j + 1] = coords[3 * p + 1] as number;
      out[3 * j + 2] = coords[3 * p + 2] as number;
    }
    if (sorted !== order) order.set(sorted);
  }
  // then the reduce stage finds each sorted point's input index in the order region
  if (inputOf !== null && wantOrder) for (let j = 0; j < valid; j++) order[j] = inputOf[order[j] as number] as number;
  // the level totals: counted by the packed sort, or walked over the sorted voxels
  const total = packed ? { voxels: levels[0] as number, leaves: levels[1] as number, lowers: levels[2] as number, tiles: levels[3] as number } : planGrid(out, valid, ON_INDEX_LAYOUT).total;
  writeSortReport(ws, given, used, valid, firstInvalid, total);
}

/**
 * The synchronous host builder's sort (`pointsToGrid`: no capacities, no reduce stage), taking `sortOnHost`'s reads,
 * writes and parameters: the voxels of the points, their packed keys sorted into leaf order only (the voxels of a leaf
 * in any order: the leaf's mask does not depend on it), no sorted coordinates, and the report words `sortOnHost` writes
 * but the voxel total (0; `writeLeafKeysOnHost` counts the voxels). The keys stay in the workspace for
 * `writeLeafKeysOnHost`. Null, having written only the report's point counts, when there is no valid point or the
 * cloud's box spans more than 64 key bits: then `sortOnHost` and `writeOnHost` build.
 */
export function sortLeafKeysOnHost(reads: readonly Uint8Array[], writes: readonly Uint8Array[], params: readonly number[]): SortedKeys | null {
  const [given, used, encoding, inv, ox, oy, oz] = params as [number, number, PointEncoding, number, number, number, number];
  const input = reads[0] as Uint8Array;
  const ws = writes[0] as Uint8Array;
  const r = hostRegions(used);
  const direct = encoding === PointEncoding.IndexInt32;
  const coords = direct ? new Int32Array(input.buffer, input.byteOffset, 3 * used) : new Int32Array(ws.buffer, ws.byteOffset + r.coords, 3 * used);
  const { valid, firstInvalid } = direct ? { valid: used, firstInvalid: 0 } : voxelsOfWorld(input, encoding, used, inv, [ox, oy, oz], coords);
  const word = (offset: number, count: number): Uint32Array => new Uint32Array(ws.buffer, ws.byteOffset + offset, count);
  const sorted = valid === 0 ? null : sortPackedKeys(coords, valid, null, { keys: word(r.keys, 2 * valid), keys2: word(r.keys + 12 * valid, 2 * valid), index2: word(r.pingPong, valid) }, word(r.histogram, 65536), 'leaf');
  const levels = new Float64Array(4);
  if (sorted !== null) countKeyLevels(sorted, valid, levels);
  writeSortReport(ws, given, used, valid, firstInvalid, { voxels: 0, leaves: levels[1] as number, lowers: levels[2] as number, tiles: levels[3] as number });
  return sorted;
}

/**
 * The synchronous host builder's write after `sortLeafKeysOnHost`: `writeOnHost`'s writes and parameters (the grid of
 * every sorted voxel: the capacities must hold the report's totals), the grid written from the sorted keys
 * (`writeGridOfKeys`, the bytes `writeOnHost` writes for the same points). False, writing nothing, when the grid's
 * memory or layout does not suit the flat writer (`flatWritable`): then `sortOnHost` and `writeOnHost` build.
 */
export function writeLeafKeysOnHost(writes: readonly Uint8Array[], params: readonly number[], sorted: SortedKeys): boolean {
  const [, gridType, , , , ...words] = params as [number, number, number, number, number, ...number[]];
  const ws = writes[0] as Uint8Array;
  const out = writes[1] as Uint8Array;
  const layout = valueLayoutOf(gridType) as ValueLayout;
  const w = words32(ws);
  const valid = w[ReportWord.valid] as number;
  const plan = planOfCounts(layout, valid, { tiles: w[ReportWord.totalTiles] as number, lowers: w[ReportWord.totalLowers] as number, leaves: w[ReportWord.totalLeaves] as number, voxels: 0 });
  if (!flatWritable(out, plan, layout)) return false;
  writeGridOfKeys(out, sorted, valid, plan, layout, ws.subarray(TEMPLATE_OFFSET, TEMPLATE_OFFSET + GRID_DATA_SIZE), backgroundOf(layout, words)[0]);
  return true;
}

/**
 * Host implementation of `hs.nanovdb.pointsToGrid.write` (see the module comment and `writeLaunch`): reads the
 * values range when `reads` has one, and writes through `writeGrid`'s `VoxelValueWriter` for every grid type with
 * values and for Mask, as `voxelsToGrid` does.
 */
export function writeOnHost(reads: readonly Uint8Array[], writes: readonly Uint8Array[], params: readonly number[]): void {
  const [used, gridType, uppers, lowers, leaves, ...words] = params as [number, number, number, number, number, ...number[]];
  const ws = writes[0] as Uint8Array;
  const out = writes[1] as Uint8Array;
  const layout = valueLayoutOf(gridType) as ValueLayout;
  const w = words32(ws);
  const valid = w[ReportWord.valid] as number;
  const sorted = new Int32Array(ws.buffer, ws.byteOffset + hostRegions(used).keys, 3 * valid);
  // the sort stage's totals: when they fit the capacities every voxel is kept and the plan needs no second walk
  const total = { tiles: w[ReportWord.totalTiles] as number, lowers: w[ReportWord.totalLowers] as number, leaves: w[ReportWord.totalLeaves] as number, voxels: w[ReportWord.totalVoxels] as number };
  const plan = total.tiles <= uppers && total.lowers <= lowers && total.leaves <= leaves ? planOfCounts(layout, valid, total) : planGrid(sorted, valid, layout, { uppers, lowers, leaves });
  const template = ws.subarray(TEMPLATE_OFFSET, TEMPLATE_OFFSET + GRID_DATA_SIZE);
  const background = backgroundOf(layout, words);
  const values = reads[0];
  if (layout.isIndex || (values === undefined && layout.gridType === GridType.Float)) {
    writeGridFlat(out, sorted, plan, layout, template, background[0]);
  } else {
    writeGrid(out, sorted, plan, layout, template, new VoxelValueWriter(layout, voxelValues(layout, values, used), background, voxelOfSorted(sorted, valid)));
  }
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

/** The values range as the elements `VoxelValueWriter` reads (`components` per voxel, `used` voxels); Mask: none. */
function voxelValues(layout: ValueLayout, values: Uint8Array | undefined, used: number): ArrayLike<number> {
  if (values === undefined) return [];
  const count = layout.components * used;
  switch (layout.scalar) {
    case 'f32':
      return new Float32Array(values.buffer, values.byteOffset, count);
    case 'f64':
      return new Float64Array(values.buffer.slice(values.byteOffset, values.byteOffset + 8 * count)); // a 4-byte aligned range may not be 8-byte aligned
    case 'i32':
      return new Int32Array(values.buffer, values.byteOffset, count);
    default:
      return values.subarray(0, count); // RGBA8: u8 components
  }
}

/** For each of the `count` sorted points, the index of its voxel among the distinct sorted voxels. */
function voxelOfSorted(sorted: Int32Array, count: number): Uint32Array {
  const voxel = new Uint32Array(count);
  for (let i = 1; i < count; i++) voxel[i] = (voxel[i - 1] as number) + (sameVoxel(sorted, i, i - 1) ? 0 : 1);
  return voxel;
}

/**
 * Bytes of an OnIndex grid's one sidecar channel of `voxels` voxels of `valueSize` bytes (value count `voxels + 1`):
 * the record, then the data padded to 32 bytes, as `attachChannels` appends it.
 */
export function channelBytes(valueSize: number, voxels: number): number {
  return BLIND_METADATA_SIZE + Math.ceil((valueSize * (voxels + 1)) / DATA_ALIGNMENT) * DATA_ALIGNMENT;
}

/**
 * The channel launch of a bounded OnIndex build with a sidecar channel (after the write stage, before the checksum):
 * reads the reduce stage's `values` (voxel k's value at `k * valueSize`, room for `voxelCapacity` values) and `head`
 * (the channel's 288-byte record, its `dataOffset` 288 and name, type and sizes set, followed by slot 0's
 * `valueSize` bytes), and appends the channel right after the nodes the write stage wrote (the report's grid size,
 * known only on the device): the record with its value count set to voxels + 1, slot 0, the kept voxels' values and
 * zero padding to 32 bytes; then GridData's gridSize, blind-metadata offset and count (1) and the report's grid size,
 * the bytes `attachChannels` writes. `grid` must hold the worst case: the nodes of the capacities plus
 * `channelBytes(valueSize, voxelCapacity)`. A channel that would not fit is not written (the ranges above rule that
 * out). CUDA: `native/src/nanovdb/points-to-grid-channel.cu`.
 * @throws HsError InvalidArgument for a value size outside 1-255 or ranges too small for `voxelCapacity`.
 */
export function channelLaunch(workspace: MemoryRange, grid: MemoryRange, values: MemoryRange, head: MemoryRange, valueSize: number, voxelCapacity: number): KernelLaunch {
  if (!Number.isInteger(valueSize) || valueSize < 1 || valueSize > 255 || !Number.isSafeInteger(voxelCapacity) || voxelCapacity < 0) {
    throw new HsError(ErrorCode.InvalidArgument, `pointsToGrid channel: valueSize must be 1-255 and voxelCapacity a count, got ${valueSize} and ${voxelCapacity}`);
  }
  if (values.byteLength < valueSize * voxelCapacity || head.byteLength < BLIND_METADATA_SIZE + valueSize) {
    throw new HsError(ErrorCode.InvalidArgument, `pointsToGrid channel: values must hold ${voxelCapacity} values of ${valueSize} bytes and head ${BLIND_METADATA_SIZE + valueSize} bytes`);
  }
  return { name: 'hs.nanovdb.pointsToGrid.channel', reads: [values, head], writes: [workspace, grid], params: [valueSize, voxelCapacity], host: channelOnHost };
}

/** Host implementation of `hs.nanovdb.pointsToGrid.channel` (see `channelLaunch`): the same bytes as the kernel. */
export function channelOnHost(reads: readonly Uint8Array[], writes: readonly Uint8Array[], params: readonly number[]): void {
  const [valueSize, voxelCapacity] = params as [number, number];
  const values = reads[0] as Uint8Array;
  const head = reads[1] as Uint8Array;
  const ws = writes[0] as Uint8Array;
  const grid = writes[1] as Uint8Array;
  const w = new DataView(ws.buffer, ws.byteOffset, 64);
  const nodesEnd = w.getUint32(4 * ReportWord.gridSize, true) + w.getUint32(4 * ReportWord.gridSize + 4, true) * 4294967296;
  const voxels = w.getUint32(4 * ReportWord.voxels, true);
  const total = channelBytes(valueSize, voxels);
  if (voxels > voxelCapacity || nodesEnd + total > grid.byteLength) return;
  const headBytes = BLIND_METADATA_SIZE + valueSize;
  const out = grid.subarray(nodesEnd, nodesEnd + total);
  out.set(head.subarray(0, headBytes));
  out.set(values.subarray(0, valueSize * voxels), headBytes);
  out.fill(0, headBytes + valueSize * voxels);
  const gridSize = nodesEnd + total;
  const g = new DataView(grid.buffer, grid.byteOffset, grid.byteLength);
  g.setBigUint64(nodesEnd + BlindMeta.valueCount, BigInt(voxels + 1), true);
  g.setBigUint64(Grid.gridSize, BigInt(gridSize), true);
  g.setBigInt64(Grid.blindMetadataOffset, BigInt(nodesEnd), true);
  g.setUint32(Grid.blindMetadataCount, 1, true);
  w.setUint32(4 * ReportWord.gridSize, gridSize >>> 0, true);
  w.setUint32(4 * ReportWord.gridSize + 4, Math.floor(gridSize / 4294967296), true);
}

/** Host implementation of `hs.nanovdb.gridChecksum`. */
export function checksumOnHost(_reads: readonly Uint8Array[], writes: readonly Uint8Array[], params: readonly number[]): void {
  const grid = writes[0] as Uint8Array;
  const gridSize = Number(new DataView(grid.buffer, grid.byteOffset, GRID_DATA_SIZE).getBigUint64(Grid.gridSize, true));
  writeChecksum(grid, computeChecksum(grid, gridSize, CHECKSUM_MODES[params[0] as number] as ChecksumMode));
}
