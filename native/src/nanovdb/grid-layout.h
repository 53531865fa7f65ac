// Byte layout of NanoVDB 32.9 grids (little-endian, breadth-first): the sizes, field offsets and codes
// the kernels over grids use. The C++ twin of packages/nanovdb-mr/src/nanovdb/grid/grid-layout.ts (facts from
// NANOVDB-FORMAT.md); packages/nanovdb-mr/test/nanovdb/native-layout-headers.test.ts reads every
// constexpr below and fails when it and its TypeScript twin disagree. Offsets are bytes from the start
// of the structure named by their prefix.
#pragma once
#include <cstdint>

namespace hs::nanovdb {

// ---- grid ---------------------------------------------------------------------------------------
/** "NanoVDB1" read as a little-endian u64: the magic of a grid. */
constexpr uint64_t kGridMagic = 0x314244566f6e614eull;
/** The format version hs writes: 32.9.2 as `major << 21 | minor << 10 | patch`. */
constexpr uint32_t kFormatVersion = (32u << 21) | (9u << 10) | 2u;
/** Every node and every grid starts at a multiple of this many bytes. */
constexpr uint64_t kDataAlignment = 32;

// ---- sizes --------------------------------------------------------------------------------------
constexpr uint64_t kGridDataSize = 672;
constexpr uint64_t kTreeDataSize = 64;
/** RootData follows GridData and TreeData. */
constexpr uint64_t kRootOffset = kGridDataSize + kTreeDataSize;
constexpr uint64_t kRootTileSize = 32;
constexpr uint64_t kUpperSize = 270400;
constexpr uint64_t kLowerSize = 33856;

// ---- GridData fields ----------------------------------------------------------------------------
/** u32 head CRC, then u32 tail CRC. */
constexpr uint64_t kGridChecksum = 8;
/** The head CRC covers [kGridVersion, kRootOffset). */
constexpr uint64_t kGridVersion = 16;
constexpr uint64_t kGridGridSize = 32;
/** f64[3] translation of the map (the grid's origin). */
constexpr uint64_t kGridVecD = 528;
/** f64 min[3], then max[3]. */
constexpr uint64_t kGridWorldBBox = 560;
constexpr uint64_t kGridVoxelSize = 608;
constexpr uint64_t kGridGridType = 636;
constexpr uint64_t kGridBlindMetadataOffset = 640;
/** u32 count of blind-metadata records. */
constexpr uint64_t kGridBlindMetadataCount = 648;
/** u64; for index grids the value count, background slot 0 included. */
constexpr uint64_t kGridData1 = 656;

// ---- GridBlindMetaData (one 288-byte record per blind-data array) ---------------------------------
constexpr uint64_t kBlindMetadataSize = 288;
/** u64 values in the record's array. */
constexpr uint64_t kBlindValueCount = 8;

// ---- TreeData fields (TreeData starts at kGridDataSize) -----------------------------------------
/** i64[4] leaf, lower, upper, root offsets from the TreeData start (0 for an empty level). */
constexpr uint64_t kTreeNodeOffset = 0;
/** u32[3] leaf, lower, upper counts. */
constexpr uint64_t kTreeNodeCount = 32;
constexpr uint64_t kTreeVoxelCount = 56;

// ---- RootData and its tiles ---------------------------------------------------------------------
/** i32 min[3], then max[3]. */
constexpr uint64_t kRootDataBBox = 0;
constexpr uint64_t kRootDataTableSize = 24;
constexpr uint64_t kTileKey = 0;
/** i64 offset of the tile's upper node from the RootData start; 0 for a value tile. */
constexpr uint64_t kTileChild = 8;

// ---- internal nodes (upper 32^3 children, lower 16^3) -------------------------------------------
constexpr uint64_t kInternalBBox = 0;
constexpr uint64_t kInternalFlags = 24;
constexpr uint64_t kInternalValueMask = 32;
/** Log2 of the children per axis, and of the voxels per axis one child covers. */
constexpr uint32_t kUpperLog2Dim = 5, kUpperChildLog2 = 7;
constexpr uint32_t kLowerLog2Dim = 4, kLowerChildLog2 = 3;
/** Bytes of the value mask and of the child mask, each. */
constexpr uint64_t kUpperMaskBytes = 4096, kLowerMaskBytes = 512;
constexpr uint64_t kUpperChildMask = 4128, kLowerChildMask = 544;
/** The table of 8-byte entries: a value, or the i64 offset of the child from this node's start. */
constexpr uint64_t kUpperTable = 8256, kLowerTable = 1088;

// ---- leaves (8^3 voxels) ------------------------------------------------------------------------
constexpr uint32_t kLeafLog2Dim = 3;
constexpr uint64_t kLeafBBoxMin = 0;
/** u8[3] max - min per axis. */
constexpr uint64_t kLeafBBoxDif = 12;
constexpr uint64_t kLeafFlags = 15;
constexpr uint64_t kLeafValueMask = 16;

/** The HasBBox bit, of GridData's flags and of every node's flags. */
constexpr uint8_t kHasBBox = 2;

// ---- value layouts of the grid types hs builds on the device ------------------------------------
// Per type: RootData bytes and the background's offset in it, leaf bytes and the offset of its voxel
// values. Every type below has kRootTileSize tiles and its tables at kUpperTable and kLowerTable; the
// internal nodes are kUpperSize and kLowerSize with kTableEntrySize entries except where a type names
// its own (Vec3f: 16-byte entries, the 12-byte value aligned to 8).
constexpr uint32_t kGridTypeFloat = 1;
constexpr uint32_t kGridTypeDouble = 2;
constexpr uint32_t kGridTypeInt32 = 4;
constexpr uint32_t kGridTypeVec3f = 6;
constexpr uint32_t kGridTypeMask = 8;
constexpr uint32_t kGridTypeRGBA8 = 12;
constexpr uint32_t kGridTypeOnIndex = 20;
/** Bytes of an internal-node table entry of every type but Vec3f. */
constexpr uint64_t kTableEntrySize = 8;
constexpr uint64_t kFloatRootDataSize = 64;
/** f32 background, from the RootData start. */
constexpr uint64_t kFloatRootBackground = 28;
constexpr uint64_t kFloatLeafSize = 2144;
/** f32[512] voxel values. */
constexpr uint64_t kFloatLeafValues = 96;
constexpr uint64_t kDoubleRootDataSize = 96, kDoubleRootBackground = 32, kDoubleLeafSize = 4224, kDoubleLeafValues = 128;
constexpr uint64_t kInt32RootDataSize = 64, kInt32RootBackground = 28, kInt32LeafSize = 2144, kInt32LeafValues = 96;
constexpr uint64_t kVec3fRootDataSize = 96, kVec3fRootBackground = 28, kVec3fLeafSize = 6272, kVec3fLeafValues = 128;
constexpr uint64_t kVec3fUpperSize = 532544, kVec3fLowerSize = 66624, kVec3fTableEntrySize = 16;
/** RGBA8 values are 4 u8 (r, g, b, a), aligned as a u32. */
constexpr uint64_t kRgba8RootDataSize = 64, kRgba8RootBackground = 28, kRgba8LeafSize = 2144, kRgba8LeafValues = 96;
/** Mask leaves hold no values (the value mask is the value); the background is one bool byte. */
constexpr uint64_t kMaskRootDataSize = 64, kMaskRootBackground = 28, kMaskLeafSize = 96;
constexpr uint64_t kOnIndexRootDataSize = 96;
constexpr uint64_t kOnIndexLeafSize = 96;
/** u64 value index of the leaf's first active voxel. */
constexpr uint64_t kOnIndexLeafOffset = 80;
/** u64: seven cumulative 9-bit active counts, after value-mask words 0..6. */
constexpr uint64_t kOnIndexLeafPrefixSum = 88;

// ---- checksum -----------------------------------------------------------------------------------
/** The tail CRC is the CRC of the CRCs of [kRootOffset, gridSize) in blocks of this many bytes. */
constexpr uint64_t kChecksumBlockBytes = 4096;
/** A checksum half that is not computed (both halves: checksum disabled). */
constexpr uint32_t kChecksumNone = 0xffffffffu;

// The sizes follow from the dimensions: masks of one bit per child, tables of 8-byte entries.
static_assert(kUpperChildLog2 == kLowerLog2Dim + kLowerChildLog2 && kLowerChildLog2 == kLeafLog2Dim);
static_assert(kUpperMaskBytes * 8 == 1u << (3 * kUpperLog2Dim) && kLowerMaskBytes * 8 == 1u << (3 * kLowerLog2Dim));
static_assert(kUpperChildMask == kInternalValueMask + kUpperMaskBytes && kLowerChildMask == kInternalValueMask + kLowerMaskBytes);
static_assert(kUpperSize == kUpperTable + kTableEntrySize * (1u << (3 * kUpperLog2Dim)) && kLowerSize == kLowerTable + kTableEntrySize * (1u << (3 * kLowerLog2Dim)));
static_assert(kVec3fUpperSize == kUpperTable + kVec3fTableEntrySize * (1u << (3 * kUpperLog2Dim)) && kVec3fLowerSize == kLowerTable + kVec3fTableEntrySize * (1u << (3 * kLowerLog2Dim)));
static_assert(kFloatLeafSize == kFloatLeafValues + 4 * (1u << (3 * kLeafLog2Dim)) && kInt32LeafSize == kInt32LeafValues + 4 * (1u << (3 * kLeafLog2Dim)) &&
              kRgba8LeafSize == kRgba8LeafValues + 4 * (1u << (3 * kLeafLog2Dim)) && kDoubleLeafSize == kDoubleLeafValues + 8 * (1u << (3 * kLeafLog2Dim)));
static_assert(kVec3fLeafSize == kVec3fLeafValues + 12 * (1u << (3 * kLeafLog2Dim)));
static_assert(kRootOffset % kDataAlignment == 0 && kUpperSize % kDataAlignment == 0 && kLowerSize % kDataAlignment == 0 &&
              kVec3fUpperSize % kDataAlignment == 0 && kVec3fLowerSize % kDataAlignment == 0 && kFloatLeafSize % kDataAlignment == 0 &&
              kDoubleLeafSize % kDataAlignment == 0 && kVec3fLeafSize % kDataAlignment == 0 && kMaskLeafSize % kDataAlignment == 0 &&
              kOnIndexLeafSize % kDataAlignment == 0);

}  // namespace hs::nanovdb
