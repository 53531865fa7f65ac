import { ErrorCode } from '@hs/streams';
import { BLIND_METADATA_SIZE, BlindDataClass, BlindMeta, GRID_TYPE_END, GridType } from './grid-layout.js';

/** One field of a grid that fails validation: the field's name, what is wrong, and the error code to report. */
export class GridFault {
  constructor(
    readonly field: string,
    readonly problem: string,
    readonly code: ErrorCode = ErrorCode.InvalidArgument,
  ) {}
}

/** Bytes per value NanoVDB's `GridBlindMetaData::isValid` requires of a blind-data type (other types: any). */
const BLIND_VALUE_SIZES: ReadonlyMap<number, number> = new Map([
  [GridType.Float, 4], [GridType.Double, 8], [GridType.Int16, 2], [GridType.Int32, 4], [GridType.Int64, 8], [GridType.Vec3f, 12], [GridType.Vec3d, 24],
  [GridType.Half, 2], [GridType.RGBA8, 4], [GridType.Fp8, 1], [GridType.Fp16, 2], [GridType.Vec4f, 16], [GridType.Vec4d, 32], [GridType.Vec3u8, 3], [GridType.Vec3u16, 6],
]);
const BLIND_CLASS_END = 5;
const BLIND_SEMANTIC_END = 23;
const Semantic = { Unknown: 0, PointPosition: 1, PointId: 6, WorldCoords: 7, GridCoords: 8, VoxelCoords: 9 } as const;
const INTEGER_TYPES: readonly number[] = [GridType.Int16, GridType.Int32, GridType.Int64, GridType.UInt32, GridType.UInt8];

/**
 * NanoVDB's `GridBlindMetaData::isValid` for record `b` at `record`: class, semantic and type in range, their
 * combination allowed (`isValid(class, semantic, type)`), and the value size its type requires.
 */
export function blindRecordFault(v: DataView, record: number, b: number): GridFault | undefined {
  const semantic = v.getUint32(record + BlindMeta.semantic, true);
  const dataClass = v.getUint32(record + BlindMeta.dataClass, true);
  const dataType = v.getUint32(record + BlindMeta.dataType, true);
  const valueSize = v.getUint32(record + BlindMeta.valueSize, true);
  const field = (name: string, problem: string): GridFault => new GridFault(`blindMetadata[${b}].${name}`, problem);
  if (dataClass >= BLIND_CLASS_END) return field('dataClass', `${dataClass} is not a GridBlindDataClass (0-${BLIND_CLASS_END - 1})`);
  if (semantic >= BLIND_SEMANTIC_END) return field('semantic', `${semantic} is not a GridBlindDataSemantic (0-${BLIND_SEMANTIC_END - 1})`);
  if (dataType >= GRID_TYPE_END) return field('dataType', `${dataType} is not a GridType (0-${GRID_TYPE_END - 1})`);
  const typeIn = (...types: number[]): boolean => types.includes(dataType);
  let fits: boolean;
  if (dataClass === BlindDataClass.IndexArray) fits = (semantic === Semantic.Unknown || semantic === Semantic.PointId) && INTEGER_TYPES.includes(dataType);
  else if (dataClass === BlindDataClass.AttributeArray) {
    if (semantic === Semantic.PointPosition || semantic === Semantic.WorldCoords) fits = typeIn(GridType.Vec3f, GridType.Vec3d);
    else if (semantic === Semantic.GridCoords) fits = typeIn(GridType.Vec3f);
    else if (semantic === Semantic.VoxelCoords) fits = typeIn(GridType.Vec3f, GridType.Vec3u8, GridType.Vec3u16);
    else fits = semantic !== Semantic.PointId;
  } else if (dataClass === BlindDataClass.GridName) fits = semantic === Semantic.Unknown && dataType === GridType.Unknown;
  else fits = true;
  if (!fits) return field('dataType', `class ${dataClass}, semantic ${semantic} and type ${dataType} (${GridType[dataType] ?? 'retired'}) are not a combination NanoVDB allows`);
  const size = BLIND_VALUE_SIZES.get(dataType);
  if (size !== undefined && size !== valueSize) return field('valueSize', `${valueSize} bytes per value, but ${GridType[dataType]} values take ${size}`);
  return undefined;
}

/**
 * The full name of a grid flagged HasLongGridName: the NUL-terminated bytes of its first blind data of class
 * GridName, as NanoVDB's `gridName()` reads it (the records were checked to lie in the grid).
 */
export function longGridName(v: DataView, bytes: Uint8Array, blindOffset: number, blindCount: number): string | GridFault {
  for (let b = 0; b < blindCount; b++) {
    const record = blindOffset + b * BLIND_METADATA_SIZE;
    if (v.getUint32(record + BlindMeta.dataClass, true) !== BlindDataClass.GridName) continue;
    const start = record + Number(v.getBigInt64(record + BlindMeta.dataOffset, true));
    const length = Number(v.getBigUint64(record + BlindMeta.valueCount, true)) * v.getUint32(record + BlindMeta.valueSize, true);
    const text = bytes.subarray(start, start + length);
    const nul = text.indexOf(0);
    if (nul < 0) return new GridFault(`blindMetadata[${b}]`, 'the long grid name is not NUL-terminated within its blind data');
    return new TextDecoder().decode(text.subarray(0, nul));
  }
  return new GridFault('flags', 'HasLongGridName is set, but no blind data of class GridName holds the name');
}
