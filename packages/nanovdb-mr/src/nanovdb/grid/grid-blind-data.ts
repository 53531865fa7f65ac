/**
 * A grid's blind data: its GridBlindMetaData records (288 bytes each: data offset, value count, value size, semantic,
 * class, data type, name) and typed copies of each record's values into a caller-supplied typed array, the
 * blind-data-only Vec3u8 and Vec3u16 channel types included. `validateGrids` has checked every record (bounds, and
 * NanoVDB's `GridBlindMetaData::isValid` rules), so these read a validated grid. Spec: NANOVDB-FORMAT.md "Blind
 * metadata"; issue 23 item 1 (Vec3u8 and Vec3u16 as blind-data channel types).
 */
import { ErrorCode, err, ok, type Result } from '@hs/streams';
import { BLIND_METADATA_SIZE, BlindMeta, GRID_NAME_SIZE, Grid, GridType } from './grid-layout.js';
import { requireGridInBytes } from './grid-in-bytes.js';
import type { GridMetadata } from './grid-validation.js';

/** One GridBlindMetaData record of a grid. */
export interface BlindMetadata {
  /** Position of the record in the grid's blind metadata (0-based). */
  readonly index: number;
  /** Record name (UTF-8, at most 255 bytes). */
  readonly name: string;
  /** `GridBlindDataSemantic` code (0-22: Unknown, PointPosition, ..., VoxelCoords = 9, ...). */
  readonly semantic: number;
  /** `GridBlindDataClass` code (0 Unknown, 1 IndexArray, 2 AttributeArray, 3 GridName, 4 ChannelArray). */
  readonly dataClass: number;
  /** `GridType` of one value, Vec3u8 and Vec3u16 included. */
  readonly dataType: GridType;
  /** Values in the record. */
  readonly valueCount: number;
  /** Bytes per value. */
  readonly valueSize: number;
  /** Byte offset of the first value from the grid's start. */
  readonly dataOffset: number;
}

/** The typed array a blind-data type is copied into, and its components per value. */
const CHANNELS: ReadonlyMap<number, readonly [typeof Uint8Array | typeof Uint16Array | typeof Int16Array | typeof Int32Array | typeof Uint32Array | typeof Float32Array | typeof Float64Array | typeof BigInt64Array, number]> = new Map([
  [GridType.Vec3u8, [Uint8Array, 3]],
  [GridType.Vec3u16, [Uint16Array, 3]],
  [GridType.UInt8, [Uint8Array, 1]],
  [GridType.Int16, [Int16Array, 1]],
  [GridType.Int32, [Int32Array, 1]],
  [GridType.UInt32, [Uint32Array, 1]],
  [GridType.Int64, [BigInt64Array, 1]],
  [GridType.Float, [Float32Array, 1]],
  [GridType.Double, [Float64Array, 1]],
  [GridType.Vec3f, [Float32Array, 3]],
  [GridType.Vec3d, [Float64Array, 3]],
  [GridType.Vec4f, [Float32Array, 4]],
  [GridType.Vec4d, [Float64Array, 4]],
  [GridType.RGBA8, [Uint8Array, 4]],
]);

/** A typed-array constructor of a blind-data channel. */
export type BlindArrayConstructor = typeof Uint8Array | typeof Uint16Array | typeof Int16Array | typeof Int32Array | typeof Uint32Array | typeof Float32Array | typeof Float64Array | typeof BigInt64Array;

/** The typed array and components per value of a blind-data type with a typed reading (`readBlindData`), or `undefined`. */
export function blindArrayType(dataType: number): readonly [BlindArrayConstructor, number] | undefined {
  return CHANNELS.get(dataType);
}

/** A typed array `readBlindData` fills. */
export type BlindDataArray = Uint8Array | Uint16Array | Int16Array | Int32Array | Uint32Array | Float32Array | Float64Array | BigInt64Array;

/**
 * The blind-metadata records of the validated grid at `metadata.byteOffset` of `bytes`, in record order.
 * @throws HsError InvalidArgument when `bytes` do not hold the grid `metadata` describes.
 *
 * @example
 * ```ts
 * import { HostBackend, unwrap } from '@hs/streams';
 * import { GridType, HostResource, attachChannels, channelValues, gridBlindMetadata, pointsToGrid } from '@hs/nanovdb-mr';
 *
 * const backend = new HostBackend();
 * const host = new HostResource(backend);
 * const coords = new Int32Array([0, 0, 0, 1, 2, 3, 9, 9, 9]);
 * const topology = unwrap(pointsToGrid(backend, host, { space: 'index', coords }, { gridType: GridType.OnIndex }));
 * const temperature = unwrap(channelValues(topology, { coords, values: [300, 310, 320] }, GridType.Float));
 * const grid = unwrap(attachChannels(backend, host, topology, [{ name: 'temperature', type: GridType.Float, values: temperature }]));
 * const metadata = grid.grid();
 * if (metadata === undefined) throw new Error('no grid');
 * for (const m of gridBlindMetadata(unwrap(grid.hostBytes()), metadata)) console.log(`record ${m.index} '${m.name}': ${GridType[m.dataType]} x ${m.valueCount}`); // the background and one value per voxel
 * grid.dispose();
 * topology.dispose();
 * ```
 */
export function gridBlindMetadata(bytes: Uint8Array, metadata: GridMetadata): BlindMetadata[] {
  requireGridInBytes('gridBlindMetadata', bytes, metadata, 'gridBlindMetadata(unwrap(handle.hostBytes()), handle.grid())');
  const grid = bytes.subarray(metadata.byteOffset, metadata.byteOffset + metadata.gridSize);
  const v = new DataView(grid.buffer, grid.byteOffset, grid.byteLength);
  const first = Number(v.getBigInt64(Grid.blindMetadataOffset, true));
  return Array.from({ length: metadata.blindMetadataCount }, (_, index) => {
    const record = first + index * BLIND_METADATA_SIZE;
    const name = grid.subarray(record + BlindMeta.name, record + BlindMeta.name + GRID_NAME_SIZE);
    const nul = name.indexOf(0);
    return {
      index,
      name: new TextDecoder().decode(name.subarray(0, nul < 0 ? GRID_NAME_SIZE : nul)),
      semantic: v.getUint32(record + BlindMeta.semantic, true),
      dataClass: v.getUint32(record + BlindMeta.dataClass, true),
      dataType: v.getUint32(record + BlindMeta.dataType, true) as GridType,
      valueCount: Number(v.getBigUint64(record + BlindMeta.valueCount, true)),
      valueSize: v.getUint32(record + BlindMeta.valueSize, true),
      dataOffset: record + Number(v.getBigInt64(record + BlindMeta.dataOffset, true)),
    };
  });
}

/**
 * Copies the values of blind-data record `record` (from `gridBlindMetadata`) of the grid at `metadata.byteOffset` of
 * `bytes` into `out`, components in order (x, y, z for Vec3u8/Vec3u16/Vec3f), and returns the elements written
 * (`valueCount * components`). `out` must be the record type's array: Uint8Array for Vec3u8, UInt8 and RGBA8,
 * Uint16Array for Vec3u16, Int16Array, Int32Array, Uint32Array, BigInt64Array (Int64), Float32Array (Float, Vec3f,
 * Vec4f), Float64Array (Double, Vec3d, Vec4d); any other data type (Unknown, GridName, ...) copies its raw bytes into a
 * Uint8Array (as does a record whose value size does not match its type's). Nothing is allocated. Errors: InvalidArgument for `out` of the wrong type or shorter than the values.
 * @throws HsError InvalidArgument when `bytes` do not hold the grid `metadata` describes.
 *
 * @example
 * ```ts
 * import { HostBackend, unwrap } from '@hs/streams';
 * import { GridType, HostResource, attachChannels, channelValues, gridBlindMetadata, pointsToGrid, readBlindData } from '@hs/nanovdb-mr';
 *
 * const backend = new HostBackend();
 * const host = new HostResource(backend);
 * const coords = new Int32Array([0, 0, 0, 1, 2, 3]);
 * const topology = unwrap(pointsToGrid(backend, host, { space: 'index', coords }, { gridType: GridType.OnIndex }));
 * const velocity = unwrap(channelValues(topology, { coords, values: [1, 0, 0, 0, 2, 0] }, GridType.Vec3f));
 * const grid = unwrap(attachChannels(backend, host, topology, [{ name: 'velocity', type: GridType.Vec3f, values: velocity }]));
 * const bytes = unwrap(grid.hostBytes());
 * const metadata = grid.grid();
 * if (metadata === undefined) throw new Error('no grid');
 * const record = gridBlindMetadata(bytes, metadata).find((m) => m.name === 'velocity');
 * if (record === undefined) throw new Error('no velocity channel');
 * const out = new Float32Array(3 * record.valueCount); // reuse across calls: nothing is allocated
 * const written = unwrap(readBlindData(bytes, metadata, record, out));
 * console.log(`${written} floats: ${Array.from(out)}`); // value 0 is the background, then one per voxel
 * grid.dispose();
 * topology.dispose();
 * ```
 */
export function readBlindData(bytes: Uint8Array, metadata: GridMetadata, record: BlindMetadata, out: BlindDataArray): Result<number> {
  requireGridInBytes('readBlindData', bytes, metadata, 'readBlindData(unwrap(handle.hostBytes()), handle.grid(), record, out)');
  const channel = CHANNELS.get(record.dataType);
  const [Type, components] = channel !== undefined && channel[0].BYTES_PER_ELEMENT * channel[1] === record.valueSize ? channel : [Uint8Array, record.valueSize];
  const elements = record.valueCount * components;
  if (!(out instanceof Type)) return err(ErrorCode.InvalidArgument, `readBlindData: record ${record.index} ('${record.name}') of ${GridType[record.dataType] ?? 'raw'} values needs a ${Type.name}, got a ${out.constructor.name}`);
  if (out.length < elements) return err(ErrorCode.InvalidArgument, `readBlindData: record ${record.index} ('${record.name}') has ${elements} elements; out holds ${out.length}`);
  const from = bytes.subarray(metadata.byteOffset + record.dataOffset, metadata.byteOffset + record.dataOffset + record.valueCount * record.valueSize);
  new Uint8Array(out.buffer, out.byteOffset, from.length).set(from); // little-endian, as the hosts hs runs on
  return ok(elements);
}
