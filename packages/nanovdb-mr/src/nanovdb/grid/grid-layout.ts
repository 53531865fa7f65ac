// Over 500 lines: NanoVDB's byte layout as one table (every offset and value layout of the grid types, checked against the CUDA headers by one test); split, the facts would drift apart.
/**
 * Byte layout of NanoVDB 32.9 grids (little-endian, breadth-first): sizes and field offsets, as listed
 * in NANOVDB-FORMAT.md. Spec: "Single-space grid storage" (nanovdb-memory-resources); format facts of
 * NanoVDB.h. The CUDA kernels read the same facts from `native/src/nanovdb/grid-layout.h`;
 * `test/nanovdb/native-layout-headers.test.ts` fails when the two disagree.
 */

/** Every node and every grid starts at a multiple of this many bytes. */
export const DATA_ALIGNMENT = 32;
/** "NanoVDB1" read as a little-endian u64: the magic of a grid. */
export const GRID_MAGIC = 0x314244566f6e614en;
/** "NanoVDB0" read as a little-endian u64: the magic of grids written before NanoVDB 32.7, still accepted. */
export const LEGACY_GRID_MAGIC = 0x304244566f6e614en;
/** "NanoVDB2" read as a little-endian u64: the magic of a `.nvdb` file segment. */
export const FILE_MAGIC = 0x324244566f6e614en;
/** The format version hs writes: 32.9.2 as `major << 21 | minor << 10 | patch`. */
export const FORMAT_VERSION = (32 << 21) | (9 << 10) | 2;
/** Major version every readable grid has. */
export const FORMAT_MAJOR = 32;

/** Bytes of GridData. */
export const GRID_DATA_SIZE = 672;
/** Bytes of TreeData (it follows GridData). */
export const TREE_DATA_SIZE = 64;
/** Byte offset of RootData from the grid start. */
export const ROOT_OFFSET = GRID_DATA_SIZE + TREE_DATA_SIZE;
/** Bytes of one root tile. */
export const ROOT_TILE_SIZE = 32;
/** Bytes of an upper internal node (32^3 children). */
export const UPPER_SIZE = 270400;
/** Bytes of a lower internal node (16^3 children). */
export const LOWER_SIZE = 33856;
/** Bytes of a blind-metadata record. */
export const BLIND_METADATA_SIZE = 288;
/** Blind-metadata record field offsets (bytes from the record start). */
export const BlindMeta = {
  /** i64 offset of the data from this record. */
  dataOffset: 0,
  valueCount: 8,
  valueSize: 16,
  semantic: 20,
  dataClass: 24,
  dataType: 28,
  /** NUL-terminated name, 256 bytes. */
  name: 32,
} as const;

/** `GridBlindDataClass` codes. */
export const BlindDataClass = { Unknown: 0, IndexArray: 1, AttributeArray: 2, GridName: 3, ChannelArray: 4 } as const;
/** The blind-data semantics hs writes (`GridBlindDataSemantic` codes). */
export const BlindDataSemantic = { Unknown: 0, PointId: 6 } as const;

/** Bytes of the grid name field, NUL included. */
export const GRID_NAME_SIZE = 256;

/** GridData field offsets (bytes from the grid start). */
export const Grid = {
  magic: 0,
  checksum: 8,
  version: 16,
  flags: 20,
  gridIndex: 24,
  gridCount: 28,
  gridSize: 32,
  gridName: 40,
  matF: 296,
  invMatF: 332,
  vecF: 368,
  taperF: 380,
  matD: 384,
  invMatD: 456,
  vecD: 528,
  taperD: 552,
  worldBBox: 560,
  voxelSize: 608,
  gridClass: 632,
  gridType: 636,
  blindMetadataOffset: 640,
  blindMetadataCount: 648,
  data0: 652,
  data1: 656,
  data2: 664,
} as const;

/** TreeData field offsets (bytes from the TreeData start, which is `GRID_DATA_SIZE`). */
export const Tree = {
  /** i64[4]: leaf, lower, upper, root offsets from the TreeData start. */
  nodeOffset: 0,
  /** u32[3]: leaf, lower, upper counts. */
  nodeCount: 32,
  /** u32[3]: active tiles in lower, upper, root. */
  tileCount: 44,
  voxelCount: 56,
} as const;

/** RootData field offsets (bytes from the RootData start, which is `ROOT_OFFSET`); tiles follow RootData. */
export const Root = {
  /** i32 min[3], then max[3]. */
  bbox: 0,
  /** u32 count of the tiles that follow. */
  tableSize: 24,
} as const;

/** Root tile field offsets (bytes from the tile start; `ROOT_TILE_SIZE` bytes per tile). */
export const Tile = {
  /** u64 `rootKey` of the tile's origin. */
  key: 0,
  /** i64 offset of the tile's upper node from the RootData start; 0 for a value tile. */
  child: 8,
} as const;

/** Internal-node field offsets shared by upper and lower nodes (bytes from the node start). */
export const Internal = {
  bbox: 0,
  flags: 24,
  valueMask: 32,
} as const;

/**
 * NanoVDB 32.9 grid types (`GridType` codes; 21 and 22 are retired, Vec3u8 and Vec3u16 exist only as blind data).
 * @example
 * ```ts
 * import { HostBackend, unwrap } from '@hs/streams';
 * import { GridType, HostResource, voxelsToGrid } from '@hs/nanovdb-mr';
 *
 * const backend = new HostBackend();
 * const coords = new Int32Array([0, 0, 0]);
 * // the value type of a grid: what voxelsToGrid writes, what validation reports
 * const grid = unwrap(voxelsToGrid(backend, new HostResource(backend), { coords, values: new Float32Array([1, 2, 3]) }, { gridType: GridType.Vec3f }));
 * const metadata = grid.grid();
 * if (metadata !== undefined) console.log(`${GridType[metadata.gridType]} (code ${metadata.gridType}), vector: ${metadata.gridType === GridType.Vec3f}`);
 * grid.dispose();
 * ```
 */
export enum GridType {
  /** No value type declared; not readable. */
  Unknown = 0,
  /** 32-bit float values. */
  Float = 1,
  /** 64-bit float values. */
  Double = 2,
  /** Signed 16-bit integer values. */
  Int16 = 3,
  /** Signed 32-bit integer values. */
  Int32 = 4,
  /** Signed 64-bit integer values. */
  Int64 = 5,
  /** Three 32-bit floats per value. */
  Vec3f = 6,
  /** Three 64-bit floats per value. */
  Vec3d = 7,
  /** No values: a voxel's value is its active state. */
  Mask = 8,
  /** IEEE 754 binary16 values (read as numbers). */
  Half = 9,
  /** Unsigned 32-bit integer values. */
  UInt32 = 10,
  /** One bit per voxel, beside the active mask. */
  Boolean = 11,
  /** Four 8-bit channels, red in the lowest byte. */
  RGBA8 = 12,
  /** Floats quantized to 4 bits per voxel per leaf (`code * quantum + minimum`). */
  Fp4 = 13,
  /** Floats quantized to 8 bits per voxel per leaf. */
  Fp8 = 14,
  /** Floats quantized to 16 bits per voxel per leaf. */
  Fp16 = 15,
  /** Floats quantized to 1, 2, 4, 8 or 16 bits, chosen per leaf (leaf flags bits 5-7). */
  FpN = 16,
  /** Four 32-bit floats per value. */
  Vec4f = 17,
  /** Four 64-bit floats per value. */
  Vec4d = 18,
  /** Index grid: every voxel of a leaf gets a value index (dense per leaf). */
  Index = 19,
  /** Index grid: only active voxels get a value index (sparse; what `pointsToGrid` builds). */
  OnIndex = 20,
  /** Voxels hold u16 cumulative point counts into a point array (leaf offset + count). */
  PointIndex = 23,
  /** Three 8-bit quantized floats; a blind-data channel type only. */
  Vec3u8 = 24,
  /** Three 16-bit quantized floats; a blind-data channel type only. */
  Vec3u16 = 25,
  /** Unsigned 8-bit integer values. */
  UInt8 = 26,
}

/** One past the largest `GridType` code NanoVDB 32.9 defines. */
export const GRID_TYPE_END = 27;

/**
 * NanoVDB grid classes (`GridClass` codes).
 * @example
 * ```ts
 * import { HostBackend, unwrap } from '@hs/streams';
 * import { GridClass, GridType, HostResource, voxelsToGrid } from '@hs/nanovdb-mr';
 *
 * const backend = new HostBackend();
 * // declare what the values mean: a fog volume of densities (a level set would be signed distances)
 * const fog = unwrap(voxelsToGrid(backend, new HostResource(backend), { coords: new Int32Array([0, 0, 0]), values: new Float32Array([0.8]) }, { gridType: GridType.Float, gridClass: GridClass.FogVolume }));
 * console.log(`class: ${GridClass[fog.grid()?.gridClass ?? GridClass.Unknown]}`);
 * fog.dispose();
 * ```
 */
export enum GridClass {
  /** No particular meaning declared. */
  Unknown = 0,
  /** Narrow-band signed distance field. */
  LevelSet = 1,
  /** Density volume (fog). */
  FogVolume = 2,
  /** Staggered (face-centred) vector field. */
  Staggered = 3,
  /** Point index grid. */
  PointIndex = 4,
  /** Point data grid. */
  PointData = 5,
  /** Topology only, no values. */
  Topology = 6,
  /** Volume of voxels, each one value. */
  VoxelVolume = 7,
  /** Index grid into external value arrays (`Index`/`OnIndex` grid types). */
  IndexGrid = 8,
  /** Index grid into external tensors of values. */
  TensorGrid = 9,
  /** Each voxel points to a list of primitive ids. */
  VoxelBVH = 10,
}

/** One past the largest `GridClass` code NanoVDB 32.9 defines. */
export const GRID_CLASS_END = 11;

/**
 * GridData flag bits.
 * @example
 * ```ts
 * import { HostBackend, unwrap } from '@hs/streams';
 * import { GridFlags, GridType, HostResource, pointsToGrid } from '@hs/nanovdb-mr';
 *
 * const backend = new HostBackend();
 * const grid = unwrap(pointsToGrid(backend, new HostResource(backend), { space: 'index', coords: new Int32Array([0, 0, 0, 7, 7, 7]) }, { gridType: GridType.Float }));
 * const flags = grid.grid()?.flags ?? 0;
 * const set = Object.entries(GridFlags).filter(([, bit]) => typeof bit === 'number' && (flags & bit) !== 0).map(([name]) => name);
 * console.log(`flags ${flags}: ${set.join(', ')}`); // e.g. HasBBox, IsBreadthFirst
 * grid.dispose();
 * ```
 */
export enum GridFlags {
  /** The name is longer than the 256-byte name field and lives in blind metadata. */
  HasLongGridName = 1,
  /** The bounding boxes are set. */
  HasBBox = 2,
  /** Nodes carry minimum and maximum values. */
  HasMinMax = 4,
  /** Nodes carry average values. */
  HasAverage = 8,
  /** Nodes carry standard deviations. */
  HasStdDeviation = 16,
  /** Nodes are laid out breadth-first (upper, then lower, then leaf nodes). */
  IsBreadthFirst = 32,
}

/** How one value (or one component of a vector value) is stored. */
export type ScalarKind = 'f32' | 'f64' | 'f16' | 'i16' | 'i32' | 'i64' | 'u8' | 'u32' | 'u64' | 'bool';

/** What a leaf stores per voxel. */
export enum LeafKind {
  /** `values[512]` of the value type after min/max/avg/stddev. */
  Values,
  /** Nothing: the value is the active state (Mask). */
  Mask,
  /** A second 512-bit mask holding the values (Boolean). */
  Bits,
  /** Quantized codes after a minimum/quantum header (Fp4, Fp8, Fp16, FpN). */
  Quantized,
  /** u64 offset and prefix sum; values are indices (Index, OnIndex). */
  Index,
  /** u64 offset and point count, then u16 cumulative counts (PointIndex). */
  Point,
}

/** Geometry of one internal-node level. */
export interface InternalLevel {
  /** Bytes of the node. */
  readonly size: number;
  /** Log2 of the child count per axis (5 upper, 4 lower). */
  readonly log2Dim: number;
  /** Log2 of the voxels per axis a child covers (7 upper, 3 lower). */
  readonly childLog2: number;
  /** Offset of the child mask. */
  readonly childMask: number;
  /** Offset of the statistics block (min, max, avg, stddev). */
  readonly stats: number;
  /** Offset of the table of entries (value or i64 child offset). */
  readonly table: number;
  /** Bytes per table entry: the larger of the value and 8, aligned to 8 or the value's alignment. */
  readonly tableStride: number;
  /** Offset of the average (then the standard deviation), after the minimum and maximum at `stats`. */
  readonly average: number;
  /** Mask bytes (valueMask and childMask each). */
  readonly maskBytes: number;
}

/** Where the value-type-dependent fields live for one grid type. */
export interface ValueLayout {
  readonly gridType: GridType;
  /** How a root, tile or internal value (or one component of it) is stored. */
  readonly scalar: ScalarKind;
  /** Components per value: 1, 3 (Vec3f/d) or 4 (Vec4f/d, RGBA8). */
  readonly components: number;
  /** Bytes of one root, tile or internal value. */
  readonly valueSize: number;
  /** Bytes of one average or standard deviation (the type's statistics type). */
  readonly statsSize: number;
  /** Bytes of RootData (tiles follow it). */
  readonly rootDataSize: number;
  /** Offset of the background value in RootData. */
  readonly rootBackground: number;
  /** Offset of a tile's value in the tile. */
  readonly tileValue: number;
  /** Bytes of one root tile. */
  readonly tileSize: number;
  /** The upper internal level (its statistics and table depend on the value type). */
  readonly upper: InternalLevel;
  /** The lower internal level. */
  readonly lower: InternalLevel;
  /** What the leaves store. */
  readonly leafKind: LeafKind;
  /** Bytes of a leaf; for FpN the fixed part, followed by `bits * 64` bytes of codes. */
  readonly leafSize: number;
  /** Offset of the leaf's value array, codes, second mask, or `offset` field (index and point grids). */
  readonly leafValues: number;
  /** Bits per quantized code: 4, 8 or 16; 0 when it is per leaf (FpN) or the leaves are not quantized. */
  readonly quantBits: number;
  /** True for index grids (u64 values that index a side array). */
  readonly isIndex: boolean;
  /** Offsets of the root's minimum (the maximum follows) and average (the standard deviation follows). */
  readonly rootMinimum: number;
  readonly rootAverage: number;
  /** Value leaves: offsets of the leaf's minimum (the maximum follows) and average (the standard deviation follows). */
  readonly leafMinimum: number;
  readonly leafAverage: number;
}

/** Leaf field offsets shared by every value type. */
export const Leaf = {
  bboxMin: 0,
  bboxDif: 12,
  flags: 15,
  valueMask: 16,
  /** Quantized leaves: f32 minimum, f32 quantum, then u16 min/max/avg/dev codes. */
  quantMinimum: 80,
  quantQuantum: 84,
  /** Quantized leaves: u16 codes of the min, max, average (each `(x - minimum) / quantum`) and deviation (`/ quantum`). */
  quantStats: 88,
} as const;

const SCALAR_BYTES: Record<ScalarKind, number> = { f32: 4, f64: 8, f16: 2, i16: 2, i32: 4, i64: 8, u8: 1, u32: 4, u64: 8, bool: 1 };
const alignUp = (n: number, a: number): number => Math.ceil(n / a) * a;

/** Places `values` values (root: background, min, max; nodes: min, max), then avg and stddev, from `at`; returns the end. */
function statsEnd(at: number, values: number, valueSize: number, valueAlign: number, statsSize: number): number {
  const first = alignUp(at, valueAlign);
  return alignUp(first + values * valueSize, statsSize) + 2 * statsSize;
}

function internalLevel(log2Dim: number, childLog2: number, valueSize: number, valueAlign: number, statsSize: number): InternalLevel {
  const maskBytes = (1 << (3 * log2Dim)) / 8;
  const stats = 32 + 2 * maskBytes;
  const table = alignUp(statsEnd(stats, 2, valueSize, valueAlign, statsSize), DATA_ALIGNMENT);
  const tableStride = alignUp(Math.max(valueSize, 8), Math.max(valueAlign, 8));
  const size = alignUp(table + (1 << (3 * log2Dim)) * tableStride, DATA_ALIGNMENT);
  const average = alignUp(stats + 2 * valueSize, statsSize);
  return { size, log2Dim, childLog2, childMask: 32 + maskBytes, stats, average, table, tableStride, maskBytes };
}

/**
 * The layout of one grid type from its value type: the value's storage (`scalar` x `components`), its
 * statistics size (8 when the value's element is 8 bytes wide, 1 for bool, else 4) and what its leaves hold.
 * Every node is aligned to 32 bytes and each field to its own size, as NanoVDB's structs are.
 */
function layoutOf(gridType: GridType, scalar: ScalarKind, components: number, leafKind: LeafKind, quantBits = 0): ValueLayout {
  const element = SCALAR_BYTES[scalar];
  const valueSize = element * components;
  const statsSize = scalar === 'bool' ? 1 : element === 8 ? 8 : 4;
  const align = scalar === 'u8' && components === 4 ? 4 : element; // RGBA8 is a union with a u32
  const rootBackground = alignUp(28, align);
  const rootDataSize = alignUp(statsEnd(28, 3, valueSize, align, statsSize), DATA_ALIGNMENT);
  const tileValue = alignUp(20, align);
  const tileSize = alignUp(tileValue + valueSize, DATA_ALIGNMENT);
  let leafValues: number;
  let leafSize: number;
  switch (leafKind) {
    case LeafKind.Values:
      leafValues = alignUp(statsEnd(80, 2, valueSize, align, statsSize), DATA_ALIGNMENT);
      leafSize = alignUp(leafValues + 512 * valueSize, DATA_ALIGNMENT);
      break;
    case LeafKind.Mask:
      [leafValues, leafSize] = [80, 96];
      break;
    case LeafKind.Bits:
      [leafValues, leafSize] = [80, 160];
      break;
    case LeafKind.Quantized:
      [leafValues, leafSize] = [96, 96 + 64 * quantBits];
      break;
    case LeafKind.Index:
      [leafValues, leafSize] = [80, 96];
      break;
    case LeafKind.Point:
      [leafValues, leafSize] = [80, 96 + 1024];
      break;
  }
  return {
    gridType,
    scalar,
    components,
    valueSize,
    statsSize,
    rootDataSize,
    rootBackground,
    tileValue,
    tileSize,
    upper: internalLevel(5, 7, valueSize, align, statsSize),
    lower: internalLevel(4, 3, valueSize, align, statsSize),
    leafKind,
    leafSize,
    leafValues,
    quantBits,
    isIndex: leafKind === LeafKind.Index,
    rootMinimum: rootBackground + valueSize,
    rootAverage: alignUp(rootBackground + 3 * valueSize, statsSize),
    leafMinimum: alignUp(80, align),
    leafAverage: alignUp(alignUp(80, align) + 2 * valueSize, statsSize),
  };
}

/** Float grids: f32 values. */
export const FLOAT_LAYOUT: ValueLayout = layoutOf(GridType.Float, 'f32', 1, LeafKind.Values);
/** OnIndex grids: u64 value indices of active voxels. */
export const ON_INDEX_LAYOUT: ValueLayout = layoutOf(GridType.OnIndex, 'u64', 1, LeafKind.Index);
/** Index grids: same layout as OnIndex. */
export const INDEX_LAYOUT: ValueLayout = { ...ON_INDEX_LAYOUT, gridType: GridType.Index };

const LAYOUTS: ReadonlyMap<number, ValueLayout> = new Map<number, ValueLayout>([
  [GridType.Float, FLOAT_LAYOUT],
  [GridType.Double, layoutOf(GridType.Double, 'f64', 1, LeafKind.Values)],
  [GridType.Int16, layoutOf(GridType.Int16, 'i16', 1, LeafKind.Values)],
  [GridType.Int32, layoutOf(GridType.Int32, 'i32', 1, LeafKind.Values)],
  [GridType.Int64, layoutOf(GridType.Int64, 'i64', 1, LeafKind.Values)],
  [GridType.UInt32, layoutOf(GridType.UInt32, 'u32', 1, LeafKind.Values)],
  [GridType.UInt8, layoutOf(GridType.UInt8, 'u8', 1, LeafKind.Values)],
  [GridType.Half, layoutOf(GridType.Half, 'f16', 1, LeafKind.Values)],
  [GridType.Vec3f, layoutOf(GridType.Vec3f, 'f32', 3, LeafKind.Values)],
  [GridType.Vec3d, layoutOf(GridType.Vec3d, 'f64', 3, LeafKind.Values)],
  [GridType.Vec4f, layoutOf(GridType.Vec4f, 'f32', 4, LeafKind.Values)],
  [GridType.Vec4d, layoutOf(GridType.Vec4d, 'f64', 4, LeafKind.Values)],
  [GridType.RGBA8, layoutOf(GridType.RGBA8, 'u8', 4, LeafKind.Values)],
  [GridType.Mask, layoutOf(GridType.Mask, 'bool', 1, LeafKind.Mask)],
  [GridType.Boolean, layoutOf(GridType.Boolean, 'bool', 1, LeafKind.Bits)],
  [GridType.Fp4, layoutOf(GridType.Fp4, 'f32', 1, LeafKind.Quantized, 4)],
  [GridType.Fp8, layoutOf(GridType.Fp8, 'f32', 1, LeafKind.Quantized, 8)],
  [GridType.Fp16, layoutOf(GridType.Fp16, 'f32', 1, LeafKind.Quantized, 16)],
  [GridType.FpN, layoutOf(GridType.FpN, 'f32', 1, LeafKind.Quantized, 0)],
  [GridType.Index, INDEX_LAYOUT],
  [GridType.OnIndex, ON_INDEX_LAYOUT],
  [GridType.PointIndex, layoutOf(GridType.PointIndex, 'u64', 1, LeafKind.Point)],
]);

/** The upper level of Float and index grids: 32^3 children of 8-byte entries, each 128 voxels per side. */
export const UPPER: InternalLevel = FLOAT_LAYOUT.upper;
/** The lower level of Float and index grids: 16^3 children of 8-byte entries, each 8 voxels per side. */
export const LOWER: InternalLevel = FLOAT_LAYOUT.lower;

/** The layout of a grid type, or `undefined` for a type that has no grid layout (Unknown, retired, blind-data only). */
export function valueLayoutOf(gridType: number): ValueLayout | undefined {
  return LAYOUTS.get(gridType);
}

/** Bits per code of the quantized leaf at `leaf`: the type's fixed width, or FpN's `1 << (flags >> 5)`. */
export function quantBitsOf(layout: ValueLayout, v: DataView, leaf: number): number {
  return layout.quantBits !== 0 ? layout.quantBits : 1 << (v.getUint8(leaf + Leaf.flags) >> 5);
}

/** Bytes of the leaf at `leaf` (FpN leaves vary with their code width). */
export function leafBytes(layout: ValueLayout, v: DataView, leaf: number): number {
  return layout.gridType === GridType.FpN ? layout.leafSize + 64 * quantBitsOf(layout, v, leaf) : layout.leafSize;
}

/** The root-table key of a coordinate: `(u32)z >> 12 | ((u32)y >> 12) << 21 | ((u32)x >> 12) << 42`. */
export function rootKey(x: number, y: number, z: number): bigint {
  return BigInt((z >>> 12) >>> 0) | (BigInt(y >>> 12) << 21n) | (BigInt(x >>> 12) << 42n);
}

/** Table index of `(x, y, z)` in an internal node of `level`. */
export function internalIndex(level: InternalLevel, x: number, y: number, z: number): number {
  const dimMask = (1 << level.log2Dim) - 1;
  const s = level.childLog2;
  return (((x >> s) & dimMask) << (2 * level.log2Dim)) | (((y >> s) & dimMask) << level.log2Dim) | ((z >> s) & dimMask);
}

/** Voxel index of `(x, y, z)` in a leaf: `(x&7)<<6 | (y&7)<<3 | (z&7)`. */
export function leafIndex(x: number, y: number, z: number): number {
  return ((x & 7) << 6) | ((y & 7) << 3) | (z & 7);
}

/** NanoVDB's rule for which grid types a grid class may have (`isValid(GridType, GridClass)`). */
export function gridClassFitsType(gridClass: number, gridType: number): boolean {
  const floating = [GridType.Float, GridType.Double, GridType.Half, GridType.Fp4, GridType.Fp8, GridType.Fp16, GridType.FpN];
  switch (gridClass) {
    case GridClass.LevelSet:
    case GridClass.FogVolume:
      return floating.includes(gridType);
    case GridClass.Staggered:
      return [GridType.Vec3f, GridType.Vec3d, GridType.Vec4f, GridType.Vec4d].includes(gridType);
    case GridClass.PointIndex:
    case GridClass.PointData:
      return gridType === GridType.PointIndex || gridType === GridType.UInt32;
    case GridClass.Topology:
      return gridType === GridType.Mask;
    case GridClass.IndexGrid:
      return gridType === GridType.Index || gridType === GridType.OnIndex;
    case GridClass.VoxelVolume:
      return [GridType.RGBA8, GridType.Float, GridType.Double, GridType.Vec3f, GridType.Vec3d, GridType.UInt32, GridType.UInt8].includes(gridType);
    default:
      return true;
  }
}
