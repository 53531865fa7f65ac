/**
 * Point attributes in backend memory for the stream-ordered builds (`pointsToGridAsync`, `BoundedPointsToGrid`):
 * the span types, their checks (all before any allocation) and the layout of an OnIndex grid's sidecar channel
 * (issue 24 item 1).
 */
import { ErrorCode, err, ok, type MemoryRange, type Result } from '@hs/streams';
import type { ElementSpan } from '../../element-span.js';
import { BLIND_METADATA_SIZE, BlindDataClass, DATA_ALIGNMENT, Grid, GridClass, GridType, gridClassFitsType, valueLayoutOf, type ValueLayout } from '../grid/grid-layout.js';
import { blindArrayType } from '../grid/grid-blind-data.js';
import { writeBlindRecord } from './blind-data-writer.js';
import { resolveGridOptions, type PointsToGridOptions, type ResolvedGridOptions } from './points-to-grid-options.js';
import type { AttributeChannelType, AttributeGridType } from './point-attributes.js';
import { ATTRIBUTE_ARRAYS, REDUCED_COMPONENTS, REDUCTIONS, type PointAttributeElement, type PointReduction, type ReducedValueType } from './point-reduce.js';

/** One attribute per point in backend memory and its reduction (the device form of `PointAttributes`). */
export interface PointAttributeSpan {
  /**
   * A `ResourceBuffer` or `BufferView` of any `PointAttributeArray` element type (f32, f64, i8, u8, i16, u16, i32,
   * u32), `channels` elements per point in point order (point `i`'s channel `c` at `channels * i + c`), its address
   * a multiple of the element size, in the memory of the build's backend.
   */
  readonly values: ElementSpan<PointAttributeElement>;
  /** Channels per point, 1 to 4: 1 for Float, Double and Int32 grids, 3 for Vec3f, 4 for RGBA8 (any for `count` and Mask). */
  readonly channels: number;
  /** How the points of one voxel become its value (the accumulation of `pointAttributesToGrid`). */
  readonly reduction: PointReduction;
}

/** Options of a stream-ordered build of an attribute grid: `PointsToGridOptions` with the attribute grid types. */
export interface PointAttributeGridOptions extends Omit<PointsToGridOptions, 'gridType' | 'background'> {
  /**
   * Float, Double, Int32 (1 channel), Vec3f (3), RGBA8 (4), Mask (voxels only) or OnIndex (the values in the sidecar
   * channel `channel`), as `pointAttributesToGrid` builds them.
   */
  readonly gridType: AttributeGridType;
  /** The attribute and its reduction (required). */
  readonly attributes: PointAttributeSpan;
  /** OnIndex only: the sidecar channel's record name (1-255 UTF-8 bytes) and value type. */
  readonly channel?: {
    /** The blind-data record's name. */
    readonly name: string;
    /** The channel's value type: Float, Double, Int32, Vec3f or RGBA8. */
    readonly type: AttributeChannelType;
  };
  /** Grid class; default IndexGrid for OnIndex, Topology for Mask, otherwise Unknown (it must fit the type, as `voxelsToGrid` checks). */
  readonly gridClass?: GridClass;
  /**
   * The value of inactive voxels as `voxelsToGrid` takes it (one number, or one per component; Mask 0 or 1); for
   * OnIndex the value of the channel's slot 0. Default 0.
   */
  readonly background?: number | readonly number[];
}

/** A checked attribute build. */
export interface AttributeBuild {
  /** The grid options, `layout` the grid type's (OnIndex for a channel build). */
  readonly settings: ResolvedGridOptions;
  /** The attribute's bytes (`null` for no points). */
  readonly range: MemoryRange | null;
  readonly element: PointAttributeElement;
  readonly channels: number;
  readonly reduction: PointReduction;
  /** The value type the reduce stage writes; `null` for a Mask grid (no values). */
  readonly valueType: ReducedValueType | null;
  /** Bytes per reduced value (0 for Mask). */
  readonly valueSize: number;
  /** What the write stage takes as background. */
  readonly background: number | readonly number[];
  /** OnIndex: the channel record's name and its slot-0 bytes. */
  readonly channel?: { readonly name: string; readonly type: AttributeChannelType; readonly slot0: Uint8Array };
}

/** Type guard: options of an attribute build (they carry `attributes`). */
export function isAttributeBuild(options: PointsToGridOptions | PointAttributeGridOptions): options is PointAttributeGridOptions {
  return typeof options === 'object' && options !== null && 'attributes' in options && options.attributes !== undefined;
}

const CHANNEL_TYPES: readonly number[] = [GridType.Float, GridType.Double, GridType.Int32, GridType.Vec3f, GridType.RGBA8];

/**
 * Checks an attribute build of `points` points against its options: the grid type and channel, the attribute's
 * element type, channels (matching the value type unless `count` or Mask), reduction, length (`channels` per point)
 * and alignment, and the grid options; InvalidArgument naming what is wrong, prefixed with `who`.
 */
export function resolveAttributeBuild(who: string, options: PointAttributeGridOptions, points: number): Result<AttributeBuild> {
  const values = options.attributes?.values;
  const element = values?.element as PointAttributeElement;
  if (values === null || typeof values !== 'object' || !ATTRIBUTE_ARRAYS.includes(element) || typeof values.size !== 'number') {
    return err(ErrorCode.InvalidArgument, `${who}: attributes.values must be a ResourceBuffer or BufferView of Float32Array, Float64Array, Int8Array, Uint8Array, Int16Array, Uint16Array, Int32Array or Uint32Array elements`);
  }
  const layout = resolveAttributeLayout(who, { ...options, attributes: { element, channels: options.attributes.channels, reduction: options.attributes.reduction } });
  if (!layout.ok) return layout;
  const range = attributeRange(who, values, layout.value, points, true);
  return range.ok ? ok({ ...layout.value, range: range.value }) : range;
}

/** The attribute layout a bounded build is made for: the element type, channels and reduction (the span comes with each build). */
export interface PointAttributeLayout {
  /** The attribute's element type: one of the `PointAttributeArray` constructors. */
  readonly element: PointAttributeElement;
  /** Channels per point, 1 to 4 (as `PointAttributeSpan.channels`). */
  readonly channels: number;
  /** How the points of one voxel become its value. */
  readonly reduction: PointReduction;
}

/**
 * InvalidArgument unless `span` holds `layout`'s elements, `channels * points` of them (at least that many unless
 * `exact`), from an address that is a multiple of the element size; its range (`null` for none) otherwise.
 */
export function attributeRange(who: string, span: ElementSpan<PointAttributeElement>, layout: Omit<AttributeBuild, 'range'>, points: number, exact: boolean): Result<MemoryRange | null> {
  const { element, channels } = layout;
  if (span === null || typeof span !== 'object' || span.element !== element || typeof span.size !== 'number') {
    return err(ErrorCode.InvalidArgument, `${who}: attributes.values must be a ResourceBuffer or BufferView of ${element.name} elements`);
  }
  if (exact ? span.size !== channels * points : span.size < channels * points) {
    return err(ErrorCode.InvalidArgument, `${who}: attributes.values holds ${span.size} numbers; ${points} points of ${channels} channels need ${channels * points}`);
  }
  const range = span.data;
  if (range !== null) {
    const address = range.memory.address + BigInt(range.byteOffset);
    if (address % BigInt(element.BYTES_PER_ELEMENT) !== 0n) {
      return err(ErrorCode.InvalidArgument, `${who}: attributes.values start at address ${address}, not a multiple of their ${element.BYTES_PER_ELEMENT}-byte element size`);
    }
  }
  return ok(range);
}

/**
 * Checks the grid type, channel, attribute layout (element type, channels matching the value type unless `count` or
 * Mask, reduction) and grid options of an attribute build; InvalidArgument naming what is wrong, prefixed with `who`.
 */
export function resolveAttributeLayout(
  who: string,
  options: Omit<PointAttributeGridOptions, 'attributes'> & { readonly attributes: PointAttributeLayout },
): Result<Omit<AttributeBuild, 'range'>> {
  const gridType = options.gridType;
  const onIndex = gridType === GridType.OnIndex;
  const channel = options.channel;
  if (onIndex && (typeof channel?.name !== 'string' || channel.name.length === 0 || !CHANNEL_TYPES.includes(channel.type))) {
    return err(ErrorCode.InvalidArgument, `${who}: an OnIndex grid takes options.channel = { name, type: Float | Double | Int32 | Vec3f | RGBA8 }, the sidecar channel its values go into`);
  }
  if (!onIndex && channel !== undefined) return err(ErrorCode.InvalidArgument, `${who}: options.channel is for OnIndex grids`);
  const valueType = (onIndex ? channel?.type : gridType) as ReducedValueType | GridType.Mask;
  if (valueType !== GridType.Mask && REDUCED_COMPONENTS[valueType] === undefined) {
    return err(ErrorCode.InvalidArgument, `${who}: gridType must be Float, Double, Int32, Vec3f, RGBA8, Mask or OnIndex, got ${String(gridType)}`);
  }
  const components = valueType === GridType.Mask ? 0 : REDUCED_COMPONENTS[valueType];
  const { element, channels, reduction } = options.attributes ?? ({} as PointAttributeLayout);
  if (!ATTRIBUTE_ARRAYS.includes(element)) {
    return err(ErrorCode.InvalidArgument, `${who}: the attribute element type must be Float32Array, Float64Array, Int8Array, Uint8Array, Int16Array, Uint16Array, Int32Array or Uint32Array`);
  }
  if (!Number.isInteger(channels) || channels < 1 || channels > 4) return err(ErrorCode.InvalidArgument, `${who}: attributes.channels must be 1, 2, 3 or 4, got ${String(channels)}`);
  if (!REDUCTIONS.includes(reduction)) return err(ErrorCode.InvalidArgument, `${who}: attributes.reduction must be one of ${REDUCTIONS.join(', ')}, got ${String(reduction)}`);
  const outChannels = reduction === 'count' || components === 0 ? components : channels;
  if (outChannels !== components) return err(ErrorCode.InvalidArgument, `${who}: a ${GridType[valueType]} grid takes ${components} channels per voxel, the attribute has ${channels}`);
  const gridClass = options.gridClass ?? (onIndex ? GridClass.IndexGrid : gridType === GridType.Mask ? GridClass.Topology : GridClass.Unknown);
  if (!Number.isInteger(gridClass) || !gridClassFitsType(gridClass, gridType)) {
    return err(ErrorCode.InvalidArgument, `${who}: gridClass ${String(gridClass)} does not fit grid type ${GridType[gridType]} (NanoVDB's rule: LevelSet and FogVolume need a float type, IndexGrid an index type, ...)`);
  }
  const bg = options.background ?? 0;
  const bgList = typeof bg === 'number' ? [bg] : Array.isArray(bg) ? bg : [Number.NaN];
  if (!bgList.every((b) => typeof b === 'number' && Number.isFinite(b)) || (onIndex && typeof bg !== 'number')) {
    return err(ErrorCode.InvalidArgument, `${who}: background must be a finite number${onIndex ? '' : ' or one per component'}`);
  }
  const base = resolveGridOptions(who, { ...options, gridType: onIndex ? GridType.OnIndex : GridType.Float, gridClass: onIndex ? GridClass.IndexGrid : GridClass.Unknown, background: 0 });
  if (!base.ok) return base;
  const layout = valueLayoutOf(gridType) as ValueLayout;
  const settings: ResolvedGridOptions = { ...base.value, layout, gridClass, background: gridType === GridType.Float && typeof bg === 'number' ? Math.fround(bg) : 0 };
  const valueSize = valueType === GridType.Mask ? 0 : (valueLayoutOf(valueType) as ValueLayout).valueSize;
  const common = { settings, element, channels, reduction, valueType: valueType === GridType.Mask ? null : valueType, valueSize };
  if (!onIndex) return ok({ ...common, background: bg });
  const [Type, n] = blindArrayType(valueType) as readonly [new (length: number) => ArrayLike<number> & { readonly buffer: ArrayBufferLike; fill(v: number): unknown }, number];
  const slot = new Type(n);
  slot.fill(bg as number);
  const named = channel as { readonly name: string; readonly type: AttributeChannelType };
  if (new TextEncoder().encode(named.name).length > 255) return err(ErrorCode.InvalidArgument, `${who}: channel '${named.name}': the name takes more than 255 UTF-8 bytes`);
  return ok({ ...common, background: 0, channel: { name: named.name, type: named.type, slot0: new Uint8Array(slot.buffer) } });
}

/** Where an OnIndex grid's sidecar channel goes: after the nodes, one record, then slot 0 and the voxels' values. */
export interface ChannelPlacement {
  /** Bytes of the grid with the channel. */
  readonly gridSize: number;
  /** Where the values of voxels 0.. start (after slot 0) and their bytes. */
  readonly valuesOffset: number;
  readonly valuesBytes: number;
  /** Host bytes to copy into the grid at `offset`: the record and slot 0, GridData's gridSize and blind-metadata fields, the zero padding. */
  readonly patches: readonly { readonly offset: number; readonly bytes: Uint8Array }[];
}

/**
 * The channel's blind-metadata record with `valueCount` values followed by its slot 0 (the background), as
 * `attachChannels` writes them: what `placeChannel` patches into an async build's grid, and (value count 0, set on
 * the device) the template a bounded build uploads once.
 */
export function channelHead(build: Omit<AttributeBuild, 'range'>, valueCount: number): Uint8Array {
  const channel = build.channel as NonNullable<AttributeBuild['channel']>;
  const head = new Uint8Array(BLIND_METADATA_SIZE + build.valueSize);
  writeBlindRecord(head, 0, BLIND_METADATA_SIZE, {
    semantic: 0,
    dataClass: BlindDataClass.ChannelArray,
    dataType: channel.type,
    valueSize: build.valueSize,
    valueCount,
    name: channel.name,
    write: (v, at) => new Uint8Array(v.buffer, v.byteOffset + at, build.valueSize).set(channel.slot0),
  });
  return head;
}

/**
 * The channel's placement in a grid of `nodesBytes` node bytes and `voxels` active voxels (value count
 * `voxels + 1`): the record and slot 0 right after the nodes, the voxels' values (written by the reduce stage) after
 * slot 0, the data padded with zeros to 32 bytes, and GridData's gridSize and blind-metadata offset and count, as
 * `attachChannels` lays them out. The patches are host bytes for the caller to copy in stream order after the write
 * stage and before the checksum.
 */
export function placeChannel(build: Omit<AttributeBuild, 'range'>, nodesBytes: number, voxels: number): ChannelPlacement {
  const valueCount = voxels + 1;
  const dataBytes = build.valueSize * valueCount;
  const padded = Math.ceil(dataBytes / DATA_ALIGNMENT) * DATA_ALIGNMENT;
  const gridSize = nodesBytes + BLIND_METADATA_SIZE + padded;
  const head = channelHead(build, valueCount);
  const size = new Uint8Array(8);
  new DataView(size.buffer).setBigUint64(0, BigInt(gridSize), true);
  const meta = new Uint8Array(12);
  const mv = new DataView(meta.buffer);
  mv.setBigInt64(0, BigInt(nodesBytes), true);
  mv.setUint32(8, 1, true);
  const patches = [
    { offset: nodesBytes, bytes: head },
    { offset: Grid.gridSize, bytes: size },
    { offset: Grid.blindMetadataOffset, bytes: meta },
  ];
  const tail = padded - dataBytes;
  if (tail > 0) patches.push({ offset: nodesBytes + BLIND_METADATA_SIZE + dataBytes, bytes: new Uint8Array(tail) });
  return { gridSize, valuesOffset: nodesBytes + BLIND_METADATA_SIZE + build.valueSize, valuesBytes: build.valueSize * voxels, patches };
}
