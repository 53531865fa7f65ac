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
  /** Offset of the table of 8-byte entries (value or child offset). */
  readonly table: number;
  /** Mask bytes (valueMask and childMask each). */
  readonly maskBytes: number;
}

/** The upper level: 32^3 children, each 128 voxels per side (a node spans 4096). */
export const UPPER: InternalLevel = { size: UPPER_SIZE, log2Dim: 5, childLog2: 7, childMask: 4128, stats: 8224, table: 8256, maskBytes: 4096 };
/** The lower level: 16^3 children, each 8 voxels per side (a node spans 128). */
export const LOWER: InternalLevel = { size: LOWER_SIZE, log2Dim: 4, childLog2: 3, childMask: 544, stats: 1056, table: 1088, maskBytes: 512 };

/** Leaf field offsets shared by every value type. */
export const Leaf = {
  bboxMin: 0,
  bboxDif: 12,
  flags: 15,
  valueMask: 16,
} as const;

/** NanoVDB grid types hs reads and builds (`GridType` codes). */
export enum GridType {
  /** One 32-bit float value per voxel and tile. */
  Float = 1,
  /** Index grid: every voxel of a leaf gets a value index (dense per leaf). */
  Index = 19,
  /** Index grid: only active voxels get a value index (sparse; what `pointsToGrid` builds). */
  OnIndex = 20,
}

/** NanoVDB grid classes (`GridClass` codes). */
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
}

/** GridData flag bits. */
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

/** Where the value-type-dependent fields live for one grid type. */
export interface ValueLayout {
  readonly gridType: GridType;
  /** Bytes of RootData (tiles follow it). */
  readonly rootDataSize: number;
  /** Offset of the background value in RootData. */
  readonly rootBackground: number;
  /** Offset of a tile's value in the tile. */
  readonly tileValue: number;
  /** Bytes of a leaf. */
  readonly leafSize: number;
  /** Offset of the leaf's value array (Float) or its `offset` field (index grids). */
  readonly leafValues: number;
  /** True for index grids (u64 values that index a side array). */
  readonly isIndex: boolean;
}

/** Float grids: f32 values. */
export const FLOAT_LAYOUT: ValueLayout = { gridType: GridType.Float, rootDataSize: 64, rootBackground: 28, tileValue: 20, leafSize: 2144, leafValues: 96, isIndex: false };
/** OnIndex grids: u64 value indices of active voxels. */
export const ON_INDEX_LAYOUT: ValueLayout = { gridType: GridType.OnIndex, rootDataSize: 96, rootBackground: 32, tileValue: 24, leafSize: 96, leafValues: 80, isIndex: true };
/** Index grids: same layout as OnIndex. */
export const INDEX_LAYOUT: ValueLayout = { ...ON_INDEX_LAYOUT, gridType: GridType.Index };

/** The layout of a grid type, or `undefined` for a type hs does not read. */
export function valueLayoutOf(gridType: number): ValueLayout | undefined {
  switch (gridType) {
    case GridType.Float:
      return FLOAT_LAYOUT;
    case GridType.OnIndex:
      return ON_INDEX_LAYOUT;
    case GridType.Index:
      return INDEX_LAYOUT;
    default:
      return undefined;
  }
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
