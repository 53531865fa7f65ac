/**
 * Sidecar channels of index grids (issue 24 item 2): per-value arrays stored as NanoVDB blind data of class
 * ChannelArray, laid out as NanoVDB's `createNanoGrid(..., channels)` writes them: one record per channel (name,
 * semantic, class ChannelArray, the value's GridType, `valueCount` = the grid's value count with the background slot 0
 * included, `valueSize` = bytes per value), the records after the last leaf, then each channel's values 32-byte aligned,
 * value `i` being the value of index `i` (0: the background). Spec: NANOVDB-FORMAT.md "Blind metadata"; NanoVDB's
 * CreateNanoGrid (index grids with channels).
 */
import { ErrorCode, HsError, err, ok, type Backend, type Result } from '@hs/streams';
import type { ResourceBuffer } from '../../resource-buffer.js';
import { isResource, type SyncResource } from '../../resource.js';
import { GridHandle, type GridStorage } from '../grid/grid-handle.js';
import { computeChecksum, writeChecksum, type ChecksumMode } from '../grid/grid-checksum.js';
import { BlindDataClass, GRID_NAME_SIZE, Grid, GridType } from '../grid/grid-layout.js';
import { blindArrayType, type BlindDataArray, type BlindMetadata } from '../grid/grid-blind-data.js';
import type { GridMetadata } from '../grid/grid-validation.js';
import { canonicalizeNaNs } from '../grid/scalar-io.js';
import { blindDataBytes, writeBlindData, type BlindItem } from './blind-data-writer.js';
import { allocateHostGrid } from './host-grid-buffer.js';

/** Value types a channel holds (one GridType per value; Vec3u8 and Vec3u16 exist only as blind data). */
export type ChannelType =
  | GridType.Float
  | GridType.Double
  | GridType.Int16
  | GridType.Int32
  | GridType.Int64
  | GridType.UInt32
  | GridType.UInt8
  | GridType.Vec3f
  | GridType.Vec3d
  | GridType.Vec4f
  | GridType.Vec4d
  | GridType.RGBA8
  | GridType.Vec3u8
  | GridType.Vec3u16;

/** One sidecar channel to attach. */
export interface GridChannel {
  /** Record name, 1 to 255 UTF-8 bytes, unique in the grid (NanoVDB names its channels `channel_0`, `channel_1`, ...). */
  readonly name: string;
  /** Value type. */
  readonly type: ChannelType;
  /**
   * The values in NanoVDB's order: `components` numbers per value index, `valueCount` indices (the grid's
   * `GridMetadata.valueCount`, background slot 0 first, then each index in the grid's order; `channelValues` builds
   * this from voxels). The array type of `readBlindData`: Float32Array for Float/Vec3f/Vec4f, Float64Array for
   * Double/Vec3d/Vec4d, Int16Array, Int32Array, BigInt64Array (Int64), Uint32Array, Uint8Array for UInt8, RGBA8 and
   * Vec3u8, Uint16Array for Vec3u16.
   */
  readonly values: BlindDataArray;
  /** `GridBlindDataSemantic` code; default 0 (Unknown), as NanoVDB gives a channel of a grid of class Unknown or IndexGrid. */
  readonly semantic?: number;
}

/** Options of `attachChannels`. */
export interface AttachChannelsOptions {
  /** Which grid of the handle (default 0); the result holds that grid alone. */
  readonly grid?: number;
  /** Checksum of the new grid: `full` (default), `partial` or `disabled`. */
  readonly checksum?: ChecksumMode;
}

const CHANNEL_TYPES: readonly number[] = [
  GridType.Float, GridType.Double, GridType.Int16, GridType.Int32, GridType.Int64, GridType.UInt32, GridType.UInt8,
  GridType.Vec3f, GridType.Vec3d, GridType.Vec4f, GridType.Vec4d, GridType.RGBA8, GridType.Vec3u8, GridType.Vec3u16,
];

/** The grid `n` of `handle` when it is an index grid, else the error. */
export function indexGridOf(who: string, handle: GridHandle, n: number): Result<GridMetadata> {
  if (!(handle instanceof GridHandle)) throw new HsError(ErrorCode.InvalidArgument, `${who}: handle must be a GridHandle`);
  const metadata = handle.grid(n);
  if (metadata === undefined) return err(ErrorCode.InvalidArgument, `${who}: grid ${String(n)} does not exist; the handle holds ${handle.gridCount}`);
  if (metadata.gridType !== GridType.OnIndex && metadata.gridType !== GridType.Index) {
    return err(ErrorCode.InvalidArgument, `${who}: grid ${n} is a ${GridType[metadata.gridType] ?? String(metadata.gridType)} grid; channels index the values of an Index or OnIndex grid`);
  }
  return ok(metadata);
}

/**
 * The blind-data record `channel` of grid `grid` of `handle`: by name (the first record of that name, as NanoVDB's
 * `findBlindData`) or by record position (`BlindMetadata.index`). Works for device grids too (the records are read
 * when the handle is validated). Errors: NotFound naming the grid's records; InvalidArgument for a grid out of range.
 * @example
 * ```ts
 * import { GridType, HostResource, attachChannels, gridChannel, pointsToGrid } from '@hs/nanovdb-mr';
 * import { HostBackend, unwrap } from '@hs/streams';
 *
 * const backend = new HostBackend();
 * const resource = new HostResource(backend);
 * const grid = unwrap(pointsToGrid(backend, resource, { space: 'index', coords: new Int32Array([0, 0, 0, 8, 8, 8]) }, { gridType: GridType.OnIndex }));
 * const values = new Float32Array([0, 0.5, 2]); // slot 0 is the background, then one value per active voxel
 * const withDensity = unwrap(attachChannels(backend, resource, grid, [{ name: 'density', type: GridType.Float, values }]));
 * const record = unwrap(gridChannel(withDensity, 'density'));
 * console.log(`channel ${record.index} '${record.name}': ${record.valueCount} ${GridType[record.dataType]} values at byte ${record.dataOffset}`);
 * const missing = gridChannel(withDensity, 'color');
 * if (!missing.ok) console.log(missing.error.message); // NotFound, naming the records the grid has
 * grid.dispose();
 * withDensity.dispose();
 * ```
 */
export function gridChannel(handle: GridHandle, channel: string | number, grid = 0): Result<BlindMetadata> {
  if (!(handle instanceof GridHandle)) throw new HsError(ErrorCode.InvalidArgument, 'gridChannel: handle must be a GridHandle');
  if (handle.grid(grid) === undefined) return err(ErrorCode.InvalidArgument, `gridChannel: grid ${String(grid)} does not exist; the handle holds ${handle.gridCount}`);
  const records = handle.blindMetadata(grid);
  const found = typeof channel === 'number' ? records[channel] : records.find((r) => r.name === channel);
  if (found === undefined) {
    const names = records.length === 0 ? 'none' : records.map((r) => `${r.index} '${r.name}'`).join(', ');
    return err(ErrorCode.NotFound, `grid ${grid} has no blind-data channel ${typeof channel === 'number' ? String(channel) : `'${String(channel)}'`} (records: ${names})`);
  }
  return ok(found);
}

/**
 * The values of one channel in NanoVDB's order for the index grid `grid` of `handle`, from voxels and their values:
 * slot 0 holds `background`, the slot of each listed voxel (its value index, `GridAccessor.getValue`) its value;
 * slots no voxel names (other active voxels, tiles) hold `background`. `coords` are i, j, k triplets, `values`
 * `components` numbers per voxel (bigint for Int64); a NaN of a float channel is stored as the canonical quiet NaN
 * (`CANONICAL_F32_NAN`, as every builder stores it). Host-accessible grids only.
 * Errors: InvalidArgument for a non-index grid, a type that is not a `ChannelType`, lengths that do not match
 * (naming them), a background of the wrong length, or a voxel that is not an indexed (active, for OnIndex) voxel of the
 * grid; NotSupported for device memory.
 * @example
 * ```ts
 * import { GridType, HostResource, channelValues, pointsToGrid } from '@hs/nanovdb-mr';
 * import { HostBackend, unwrap } from '@hs/streams';
 *
 * const backend = new HostBackend();
 * const coords = new Int32Array([5, 0, 0, 0, 0, 0]); // voxels in any order
 * const grid = unwrap(pointsToGrid(backend, new HostResource(backend), { space: 'index', coords }, { gridType: GridType.OnIndex }));
 * // one value per voxel, given in the order of `coords`, laid out in the grid's value-index order
 * const density = unwrap(channelValues(grid, { coords, values: new Float32Array([0.5, 2]) }, GridType.Float, 0));
 * console.log(`channel array: [${[...density]}]`); // background, then (0,0,0), then (5,0,0)
 * grid.dispose();
 * ```
 */
export function channelValues(
  handle: GridHandle,
  voxels: { readonly coords: Int32Array; readonly values: ArrayLike<number> | BigInt64Array },
  type: ChannelType,
  background: number | bigint | readonly number[] = 0,
  grid = 0,
): Result<BlindDataArray> {
  const who = 'channelValues';
  const metadata = indexGridOf(who, handle, grid);
  if (!metadata.ok) return metadata;
  const array = CHANNEL_TYPES.includes(type) ? blindArrayType(type) : undefined;
  if (array === undefined) return err(ErrorCode.InvalidArgument, `${who}: type ${String(type)} is not a channel type (Float, Double, Int16, Int32, Int64, UInt32, UInt8, Vec3f, Vec3d, Vec4f, Vec4d, RGBA8, Vec3u8, Vec3u16)`);
  const [Type, components] = array;
  const { coords, values } = voxels ?? ({} as never);
  if (!(coords instanceof Int32Array) || coords.length % 3 !== 0) return err(ErrorCode.InvalidArgument, `${who}: voxels.coords must be an Int32Array of i, j, k triplets`);
  const n = coords.length / 3;
  if (values?.length !== components * n) {
    return err(ErrorCode.InvalidArgument, `${who}: voxels.values holds ${String(values?.length)} numbers; ${n} voxels of ${GridType[type]} need ${components * n}`);
  }
  const bg = typeof background === 'number' || typeof background === 'bigint' ? new Array<number | bigint>(components).fill(background) : [...background];
  if (bg.length !== components) return err(ErrorCode.InvalidArgument, `${who}: background needs ${components} numbers for ${GridType[type]}, got ${bg.length}`);
  const accessor = handle.accessor(grid);
  if (!accessor.ok) return accessor;
  const count = metadata.value.valueCount;
  const out = new Type(count * components);
  const big = out instanceof BigInt64Array;
  const set = (at: number, v: number | bigint): void => {
    (out as { [i: number]: number | bigint })[at] = big ? BigInt(v) : Number(v);
  };
  for (let s = 0; s < count; s++) for (let c = 0; c < components; c++) set(s * components + c, bg[c] as number | bigint);
  for (let i = 0; i < n; i++) {
    const [x, y, z] = [coords[3 * i] as number, coords[3 * i + 1] as number, coords[3 * i + 2] as number];
    const slot = accessor.value.getValue(x, y, z);
    if (slot === 0 || (metadata.value.gridType === GridType.OnIndex && !accessor.value.isActive(x, y, z))) {
      return err(ErrorCode.InvalidArgument, `${who}: voxel ${i} (${x}, ${y}, ${z}) is not an ${metadata.value.gridType === GridType.OnIndex ? 'active ' : ''}voxel of grid ${grid}; it has no value index`);
    }
    for (let c = 0; c < components; c++) set(slot * components + c, values[i * components + c] as number | bigint);
  }
  canonicalizeNaNs(out);
  return ok(out);
}

/**
 * Writes sidecar channels into an index grid as NanoVDB blind data: a new grid (grid `options.grid` of `handle`, alone:
 * gridIndex 0, gridCount 1) with the same nodes byte for byte, the grid's existing blind data (a long grid name, ...)
 * kept first, then one record per channel (class ChannelArray, semantic `channel.semantic ?? 0`, type `channel.type`,
 * `valueCount` = the grid's value count incl. background slot 0, `valueSize` bytes per value) and each channel's values
 * 32-byte aligned, as NanoVDB's `createNanoGrid(..., channels)` lays them out; gridSize, the blind-metadata offset and
 * count updated and the checksum recomputed. `handle` is left as it was. One allocation through `resource` (its
 * synchronous pair; host-accessible): the new grid, `gridSize` bytes, 32-byte aligned. Read channels back with
 * `gridChannel` + `readBlindData`, convert with `indexToGrid`, export with `channelDLPack`.
 *
 * Checks before anything is allocated: the grid is Index or OnIndex (InvalidArgument otherwise), each channel's type
 * (a `ChannelType`), array type and length (`components * valueCount`; InvalidArgument naming the channel and both
 * sizes) and name (1 to 255 UTF-8 bytes, unique among the grid's records). Errors: NotSupported for a grid in device
 * memory (`copyTo` the host first) or a resource the host cannot read; the resource's `OutOfMemory`. Nothing is left
 * allocated on failure.
 * @throws HsError InvalidArgument when `resource` is not a resource, `handle` not a GridHandle or `channels` not an array.
 * @example
 * ```ts
 * import { GridType, HostResource, attachChannels, gridChannel, pointsToGrid } from '@hs/nanovdb-mr';
 * import { HostBackend, unwrap } from '@hs/streams';
 *
 * const backend = new HostBackend();
 * const resource = new HostResource(backend);
 * const grid = unwrap(pointsToGrid(backend, resource, { space: 'index', coords: new Int32Array([0, 0, 0, 1, 0, 0, 2, 0, 0]) }, { gridType: GridType.OnIndex }));
 * const n = grid.grid()?.valueCount ?? 0; // active voxels + 1 (slot 0: background)
 * const density = new Float32Array(n).map((_, i) => i / n); // one f32 per value index
 * const dense = unwrap(attachChannels(backend, resource, grid, [{ name: 'density', type: GridType.Float, values: density }]));
 * console.log(`${dense.grid()?.gridSize} B with the channel, ${grid.grid()?.gridSize} B without; ${unwrap(gridChannel(dense, 'density')).valueCount} values`);
 * grid.dispose();
 * dense.dispose();
 * ```
 */
export function attachChannels(
  backend: Backend,
  resource: SyncResource,
  handle: GridHandle<GridStorage>,
  channels: readonly GridChannel[],
  options: AttachChannelsOptions = {},
): Result<GridHandle<ResourceBuffer<SyncResource, Uint8ArrayConstructor>>> {
  const who = 'attachChannels';
  if (!isResource(resource)) throw new HsError(ErrorCode.InvalidArgument, `${who}: resource must be a resource (allocate and deallocate)`);
  if (!Array.isArray(channels)) throw new HsError(ErrorCode.InvalidArgument, `${who}: channels must be an array of { name, type, values }`);
  const n = options.grid ?? 0;
  const found = indexGridOf(who, handle, n);
  if (!found.ok) return found;
  const metadata = found.value;
  const checksum = options.checksum ?? 'full';
  if (checksum !== 'full' && checksum !== 'partial' && checksum !== 'disabled') return err(ErrorCode.InvalidArgument, `${who}: checksum must be 'full', 'partial' or 'disabled'`);
  const existing = handle.blindMetadata(n);
  const names = new Set(existing.map((r) => r.name));
  const items: BlindItem[] = [];
  for (const [i, channel] of channels.entries()) {
    const name = channel?.name;
    const label = typeof name === 'string' ? `channel '${name}'` : `channel ${i}`;
    if (typeof name !== 'string' || name.length === 0) return err(ErrorCode.InvalidArgument, `${who}: ${label}: name must be a non-empty string`);
    const nameBytes = new TextEncoder().encode(name);
    if (nameBytes.length > GRID_NAME_SIZE - 1) return err(ErrorCode.InvalidArgument, `${who}: ${label}: the name takes ${nameBytes.length} UTF-8 bytes; at most ${GRID_NAME_SIZE - 1} fit a record`);
    if (names.has(name)) return err(ErrorCode.InvalidArgument, `${who}: ${label}: grid ${n} already has a record of that name; channel names must be unique`);
    names.add(name);
    const array = CHANNEL_TYPES.includes(channel.type) ? blindArrayType(channel.type) : undefined;
    if (array === undefined) {
      return err(ErrorCode.InvalidArgument, `${who}: ${label}: type ${String(channel.type)} is not a channel type (Float, Double, Int16, Int32, Int64, UInt32, UInt8, Vec3f, Vec3d, Vec4f, Vec4d, RGBA8, Vec3u8, Vec3u16)`);
    }
    const [Type, components] = array;
    const values = channel.values;
    if (!(values instanceof Type)) {
      return err(ErrorCode.InvalidArgument, `${who}: ${label}: ${GridType[channel.type]} values come in a ${Type.name}, got ${values === null || typeof values !== 'object' ? String(values) : values.constructor.name}`);
    }
    const expected = components * metadata.valueCount;
    if (values.length !== expected) {
      return err(
        ErrorCode.InvalidArgument,
        `${who}: ${label}: holds ${values.length} numbers; grid ${n} indexes ${metadata.valueCount} values (background slot 0 included), so ${GridType[channel.type]} needs ${components} x ${metadata.valueCount} = ${expected}`,
      );
    }
    const semantic = channel.semantic ?? 0;
    if (!Number.isInteger(semantic) || semantic < 0 || semantic > 22) return err(ErrorCode.InvalidArgument, `${who}: ${label}: semantic ${String(semantic)} is not a GridBlindDataSemantic (0-22)`);
    const valueSize = Type.BYTES_PER_ELEMENT * components;
    const raw = new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
    items.push({ semantic, dataClass: BlindDataClass.ChannelArray, dataType: channel.type, valueSize, valueCount: metadata.valueCount, name, write: (v, at) => new Uint8Array(v.buffer, v.byteOffset + at, raw.length).set(raw) });
  }
  const source = handle.hostBytes();
  if (!source.ok) return err(ErrorCode.NotSupported, `${who}: the grid is in ${handle.memoryKind} memory; copyTo the host, attach, then copyTo back`, source.error);
  const grid = source.value.subarray(metadata.byteOffset, metadata.byteOffset + metadata.gridSize);
  const gv = new DataView(grid.buffer, grid.byteOffset, grid.byteLength);
  const nodesEnd = existing.length === 0 ? metadata.gridSize : Number(gv.getBigInt64(Grid.blindMetadataOffset, true));
  const kept: BlindItem[] = existing.map((r) => ({
    semantic: r.semantic,
    dataClass: r.dataClass,
    dataType: r.dataType,
    valueSize: r.valueSize,
    valueCount: r.valueCount,
    name: r.name,
    write: (v, at) => new Uint8Array(v.buffer, v.byteOffset + at, r.valueCount * r.valueSize).set(grid.subarray(r.dataOffset, r.dataOffset + r.valueCount * r.valueSize)),
  }));
  const all = [...kept, ...items];
  const gridSize = nodesEnd + blindDataBytes(all);
  const made = allocateHostGrid(who, backend, resource, gridSize);
  if (!made.ok) return made;
  const { buffer, bytes } = made.value;
  bytes.set(grid.subarray(0, nodesEnd));
  writeBlindData(bytes, nodesEnd, all);
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  v.setBigUint64(Grid.gridSize, BigInt(gridSize), true);
  v.setUint32(Grid.gridIndex, 0, true);
  v.setUint32(Grid.gridCount, 1, true);
  writeChecksum(bytes, computeChecksum(bytes, gridSize, checksum));
  const result = GridHandle.fromHostBytes(backend, buffer, { checksum: false });
  if (!result.ok) buffer.dispose();
  return result;
}
