// The workspace of a device PointsToGrid build (one block the caller allocates) and the report words at
// its start, shared by the sort and write stages. The C++ twin of
// packages/nanovdb-mr/src/nanovdb/build/points-to-grid-workspace.ts: its report words, overflow bits, header
// bytes and `workspaceBytes(n, 'cuda')` are checked against this file by
// packages/nanovdb-mr/test/nanovdb/native-layout-headers.test.ts.
#pragma once
#include <vector_types.h>

#include <cstdint>

namespace hs::nanovdb {

/** Most points one build takes: counts and sorted indices are u32 on the device. */
constexpr uint32_t kMaxPoints = 0xffffffffu;
/** Bytes before the first scratch region: the report words (at 0) and the GridData template. */
constexpr uint64_t kWorkspaceHeaderBytes = 1024;
/** Where the caller puts the GridData template (kGridDataSize bytes) the write stage copies. */
constexpr uint64_t kTemplateOffset = 256;
/** Every scratch region starts at a multiple of this many bytes. */
constexpr uint64_t kRegionAlignment = 256;
/** CUB's temporary storage (radix sorts, scan) for n points: kCubBytesPerPoint * n + kCubFixedBytes. */
constexpr uint64_t kCubBytesPerPoint = 2;
constexpr uint64_t kCubFixedBytes = 8ull * 1024 * 1024;

/** u32 words of the build report. The host reads words 0..15 (REPORT_BYTES); from kRootBBox on they are the device build's scratch. */
enum ReportWord : int {
  kGiven = 0,
  kUsed = 1,
  kValid = 2,
  kFirstInvalid = 3,
  kTotalVoxels = 4,
  kTotalLeaves = 5,
  kTotalLowers = 6,
  kTotalTiles = 7,
  kVoxels = 8,
  kLeaves = 9,
  kLowers = 10,
  kTiles = 11,
  kOverflow = 12,
  kCut = 13,
  kGridSize = 14,     // u64
  kRootBBox = 16,     // i32x6 scratch
  kInvalidMin = 22,   // raw index of the first invalid point (atomicMin), 0xffffffff when none
  kInvalidCount = 23,
  kUpperStart = 24,   // u64
  kLowerStart = 26,   // u64
  kLeafStart = 28,    // u64
  kAxisMin = 30,      // u32x3: least biased voxel coordinate (x ^ 2^31) of the valid points, per axis
  kAxisMax = 33,      // u32x3: greatest, per axis
  kKeyBits = 36,      // bits of the packed sort key (0 to 96)
};

/** Bits of the kOverflow word: which capacity cut the build short. */
enum Overflow : uint32_t {
  kOverflowPoints = 1,
  kOverflowUppers = 2,
  kOverflowLowers = 4,
  kOverflowLeaves = 8,
};

inline uint64_t Region(uint64_t bytes) { return (bytes + kRegionAlignment - 1) / kRegionAlignment * kRegionAlignment; }
inline uint64_t CubBytes(uint64_t n) { return kCubBytesPerPoint * n + kCubFixedBytes; }

/** The regions of a workspace for n points. */
struct Workspace {
  uint32_t* report;
  uint8_t* tmpl;
  uint64_t* keysA;
  uint64_t* keysB;
  uint64_t* valsA;
  uint64_t* valsB;
  uint4* ids;  // per sorted point: inclusive counts of voxel, leaf, lower and tile starts
  uint32_t* leafFirst;
  uint32_t* lowerFirst;
  uint32_t* tileFirst;
  uint32_t* perm;  // per sorted point: the input index of the point (stable: a voxel's points in input order)
  uint8_t* cub;
  uint64_t cubBytes;
  uint64_t total;
};

/** Carves the workspace at `base` for `n` points; `total` is the bytes it needs. */
inline Workspace Carve(uint8_t* base, uint64_t n) {
  Workspace w{};
  uint64_t at = kWorkspaceHeaderBytes;
  auto take = [&](uint64_t bytes) { uint8_t* p = base + at; at += Region(bytes); return p; };
  w.report = reinterpret_cast<uint32_t*>(base);
  w.tmpl = base + kTemplateOffset;
  w.keysA = reinterpret_cast<uint64_t*>(take(8 * n));
  w.keysB = reinterpret_cast<uint64_t*>(take(8 * n));
  w.valsA = reinterpret_cast<uint64_t*>(take(8 * n));
  w.valsB = reinterpret_cast<uint64_t*>(take(8 * n));
  w.ids = reinterpret_cast<uint4*>(take(16 * n));
  w.leafFirst = reinterpret_cast<uint32_t*>(take(4 * n));
  w.lowerFirst = reinterpret_cast<uint32_t*>(take(4 * n));
  w.tileFirst = reinterpret_cast<uint32_t*>(take(4 * n));
  w.perm = reinterpret_cast<uint32_t*>(take(4 * n));
  w.cubBytes = Region(CubBytes(n));
  w.cub = take(CubBytes(n));
  w.total = at;
  return w;
}

/** True when a launch param is a point or node count: an integer in [0, kMaxPoints]. */
inline bool IsCount(double v) { return v >= 0 && v <= kMaxPoints && v == static_cast<double>(static_cast<uint64_t>(v)); }

/** Blocks of `block` threads for a grid-stride loop over `items`: at least 1, at most 2^31 - 1. */
inline unsigned Blocks(uint64_t items, unsigned block) {
  uint64_t b = (items + block - 1) / block;
  return static_cast<unsigned>(b == 0 ? 1 : (b > 0x7fffffffull ? 0x7fffffffull : b));
}

}  // namespace hs::nanovdb
