// The write stage of the device PointsToGrid build, `hs.nanovdb.pointsToGrid.write`: from the sorted
// keys and node starts the sort stage left in the workspace, the grid of the longest sorted prefix whose
// node counts fit the capacities: plan, zero, tiles, internal nodes, leaves and voxels, then bounding
// boxes bottom-up and the headers (GridData from the template in the workspace). The background goes
// where the host writer puts it: the root's background, every internal-node table entry (child entries
// are overwritten with offsets after), every voxel of a leaf that stores values; an active voxel then
// gets its value from the values range (voxel k of the build order reads value k), or without one a
// Float grid's 1.0. Float, Double, Int32, Vec3f, RGBA8, Mask and OnIndex grids. The CUDA side of
// `writeLaunch` in packages/nanovdb-mr/src/nanovdb/build/points-to-grid-kernels.ts; the grid bytes equal
// the host writer's (grid-writer.ts). Layout facts: grid-layout.h; workspace: points-to-grid-workspace.h.
//
// The launcher only enqueues kernels on its stream (no allocation, no host synchronization). Counts
// stay on the device: the node kernels are launched over the capacities and read the counts.
#include <cstdint>

#include "kernel-registry.h"
#include "nanovdb/canonical-nan.h"
#include "nanovdb/grid-layout.h"
#include "nanovdb/points-to-grid-workspace.h"

namespace hs {
namespace {

using namespace nanovdb;

// What the kernels need of a grid type's layout (grid-layout.h). Tiles and table offsets are the same
// for every type written here.
struct Layout {
  uint32_t gridType;
  uint64_t rootDataSize;
  uint64_t rootBackground;
  uint64_t upperSize;
  uint64_t lowerSize;
  uint64_t tableEntrySize;
  uint64_t leafSize;
  uint64_t leafValues;   // offset of the voxel values (value leaves only)
  uint32_t valueSize;    // bytes of one value: the background's, and a voxel's in a value leaf
  bool leafHasValues;    // Float, Double, Int32, Vec3f, RGBA8
  bool isIndex;
};

bool LayoutOf(double gridType, Layout* out) {
  const uint64_t U = kUpperSize, L = kLowerSize, E = kTableEntrySize;
  if (gridType == kGridTypeFloat) *out = Layout{kGridTypeFloat, kFloatRootDataSize, kFloatRootBackground, U, L, E, kFloatLeafSize, kFloatLeafValues, 4, true, false};
  else if (gridType == kGridTypeDouble) *out = Layout{kGridTypeDouble, kDoubleRootDataSize, kDoubleRootBackground, U, L, E, kDoubleLeafSize, kDoubleLeafValues, 8, true, false};
  else if (gridType == kGridTypeInt32) *out = Layout{kGridTypeInt32, kInt32RootDataSize, kInt32RootBackground, U, L, E, kInt32LeafSize, kInt32LeafValues, 4, true, false};
  else if (gridType == kGridTypeVec3f) {
    *out = Layout{kGridTypeVec3f, kVec3fRootDataSize, kVec3fRootBackground, kVec3fUpperSize, kVec3fLowerSize, kVec3fTableEntrySize, kVec3fLeafSize, kVec3fLeafValues, 12, true, false};
  } else if (gridType == kGridTypeRGBA8) *out = Layout{kGridTypeRGBA8, kRgba8RootDataSize, kRgba8RootBackground, U, L, E, kRgba8LeafSize, kRgba8LeafValues, 4, true, false};
  else if (gridType == kGridTypeMask) *out = Layout{kGridTypeMask, kMaskRootDataSize, kMaskRootBackground, U, L, E, kMaskLeafSize, 0, 1, false, false};
  else if (gridType == kGridTypeOnIndex) *out = Layout{kGridTypeOnIndex, kOnIndexRootDataSize, 0, U, L, E, kOnIndexLeafSize, 0, 8, false, true};
  else return false;
  return true;
}

// A value's stored bytes as u32 words (the background from the launch params: 1 to 3 words).
struct Value {
  uint32_t w[3];
};

// Writes `size` bytes of a value at `at` (4-byte aligned; Mask's one bool byte at any address).
__device__ __forceinline__ void PutValue(uint8_t* at, const Value& v, uint32_t size) {
  if (size == 1) {
    *at = static_cast<uint8_t>(v.w[0]);
    return;
  }
  uint32_t* o = reinterpret_cast<uint32_t*>(at);
  for (uint32_t i = 0; i < size / 4; i++) o[i] = v.w[i];
}

__device__ __forceinline__ uint64_t U64(const uint32_t* report, int word) {
  return static_cast<uint64_t>(report[word]) | (static_cast<uint64_t>(report[word + 1]) << 32);
}
__device__ __forceinline__ void SetU64(uint32_t* report, int word, uint64_t v) {
  report[word] = static_cast<uint32_t>(v);
  report[word + 1] = static_cast<uint32_t>(v >> 32);
}

// Voxel coordinates of a sorted point from its tile key (biased by 2^31, 20 bits per axis) and its
// in-tile key (upper index << 21 | lower index << 9 | leaf index).
__device__ __forceinline__ void Coords(uint64_t tile, uint64_t in, int32_t* x, int32_t* y, int32_t* z) {
  uint32_t upper = static_cast<uint32_t>(in >> 21) & 0x7fff, lower = static_cast<uint32_t>(in >> 9) & 0xfff, leaf = static_cast<uint32_t>(in) & 0x1ff;
  uint32_t tx = static_cast<uint32_t>(tile >> 42) & 0xfffff, ty = static_cast<uint32_t>(tile >> 21) & 0xfffff, tz = static_cast<uint32_t>(tile) & 0xfffff;
  *x = static_cast<int32_t>(((tx << 12) ^ 0x80000000u) | ((upper >> 10) << 7) | ((lower >> 8) << 3) | (leaf >> 6));
  *y = static_cast<int32_t>(((ty << 12) ^ 0x80000000u) | (((upper >> 5) & 31) << 7) | (((lower >> 4) & 15) << 3) | ((leaf >> 3) & 7));
  *z = static_cast<int32_t>(((tz << 12) ^ 0x80000000u) | ((upper & 31) << 7) | ((lower & 15) << 3) | (leaf & 7));
}

// The inclusive counts in `ids` never decrease, so the points past a capacity form a suffix: the cut (the
// first point whose leaf, lower node or tile is past its capacity, or the valid points' count) is a binary search.
__device__ uint32_t FindCut(const uint4* __restrict__ ids, uint32_t valid, uint32_t capUppers, uint32_t capLowers, uint32_t capLeaves) {
  uint32_t lo = 0, hi = valid;  // the cut is in [lo, hi]
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    uint4 c = ids[mid];
    if (c.y > capLeaves || c.z > capLowers || c.w > capUppers) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

__global__ void PlanGrid(const uint4* __restrict__ ids, Layout layout, uint32_t capUppers, uint32_t capLowers, uint32_t capLeaves, uint32_t* report) {
  uint32_t cut = FindCut(ids, report[kValid], capUppers, capLowers, capLeaves);
  report[kCut] = cut;
  for (int a = 0; a < 3; a++) {
    report[kRootBBox + a] = 0x7fffffffu;
    report[kRootBBox + 3 + a] = 0x80000000u;
  }
  uint4 k = cut == 0 ? make_uint4(0, 0, 0, 0) : ids[cut - 1];
  report[kVoxels] = k.x;
  report[kLeaves] = k.y;
  report[kLowers] = k.z;
  report[kTiles] = k.w;
  report[kOverflow] = (report[kGiven] > report[kUsed] ? kOverflowPoints : 0u) | (report[kTotalTiles] > capUppers ? kOverflowUppers : 0u) |
                      (report[kTotalLowers] > capLowers ? kOverflowLowers : 0u) | (report[kTotalLeaves] > capLeaves ? kOverflowLeaves : 0u);
  uint64_t upperStart = kRootOffset + layout.rootDataSize + k.w * kRootTileSize;
  uint64_t lowerStart = upperStart + k.w * layout.upperSize;
  uint64_t leafStart = lowerStart + k.z * layout.lowerSize;
  SetU64(report, kUpperStart, upperStart);
  SetU64(report, kLowerStart, lowerStart);
  SetU64(report, kLeafStart, leafStart);
  SetU64(report, kGridSize, leafStart + k.y * layout.leafSize);
}

__global__ void ZeroGrid(uint8_t* out, const uint32_t* report) {
  uint64_t words = U64(report, kGridSize) / 16;
  uint4* o = reinterpret_cast<uint4*>(out);
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < words; i += static_cast<uint64_t>(gridDim.x) * blockDim.x) o[i] = make_uint4(0, 0, 0, 0);
}

// The background (not launched when the host writer leaves it 0: ZeroGrid wrote it): the root's, then
// every table entry of the planned upper and lower nodes and every voxel of the planned value leaves,
// as the value at the entry's start (the entry's other bytes stay 0, as on the host).
__global__ void FillBackground(uint8_t* out, Value background, Layout layout, uint32_t capUppers, uint32_t capLowers, uint32_t capLeaves, const uint32_t* report) {
  uint32_t tiles = report[kTiles] < capUppers ? report[kTiles] : capUppers;
  uint32_t lowers = report[kLowers] < capLowers ? report[kLowers] : capLowers;
  uint32_t leaves = report[kLeaves] < capLeaves ? report[kLeaves] : capLeaves;
  uint64_t upperStart = U64(report, kUpperStart), lowerStart = U64(report, kLowerStart), leafStart = U64(report, kLeafStart);
  constexpr uint64_t kUpperEntries = 1ull << (3 * kUpperLog2Dim), kLowerEntries = 1ull << (3 * kLowerLog2Dim), kLeafVoxels = 1ull << (3 * kLeafLog2Dim);
  uint64_t upperEnd = tiles * kUpperEntries, lowerEnd = upperEnd + lowers * kLowerEntries, end = lowerEnd + (layout.leafHasValues ? leaves * kLeafVoxels : 0);
  uint64_t first = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
  if (first == 0) PutValue(out + kRootOffset + layout.rootBackground, background, layout.valueSize);
  for (uint64_t i = first; i < end; i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    uint64_t at;
    if (i < upperEnd) at = upperStart + (i / kUpperEntries) * layout.upperSize + kUpperTable + layout.tableEntrySize * (i % kUpperEntries);
    else if (i < lowerEnd) at = lowerStart + ((i - upperEnd) / kLowerEntries) * layout.lowerSize + kLowerTable + layout.tableEntrySize * ((i - upperEnd) % kLowerEntries);
    else at = leafStart + ((i - lowerEnd) / kLeafVoxels) * layout.leafSize + layout.leafValues + layout.valueSize * ((i - lowerEnd) % kLeafVoxels);
    PutValue(out + at, background, layout.valueSize);
  }
}

__device__ __forceinline__ void SetI64(uint8_t* at, int64_t v) { *reinterpret_cast<int64_t*>(at) = v; }
__device__ __forceinline__ void InitBBox(uint8_t* node) {
  int32_t* b = reinterpret_cast<int32_t*>(node);
  b[0] = b[1] = b[2] = 0x7fffffff;
  b[3] = b[4] = b[5] = static_cast<int32_t>(0x80000000u);
}
__device__ __forceinline__ void MergeBBox(int32_t* dst, const int32_t* lo, const int32_t* hi) {
  for (int a = 0; a < 3; a++) {
    atomicMin(&dst[a], lo[a]);
    atomicMax(&dst[3 + a], hi[a]);
  }
}

__global__ void WriteTiles(uint8_t* out, const uint64_t* __restrict__ tiles, const uint32_t* __restrict__ tileFirst, Layout layout, uint32_t capUppers, const uint32_t* report) {
  uint32_t count = report[kTiles];
  uint64_t upperStart = U64(report, kUpperStart);
  for (uint64_t t = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; t < count && t < capUppers; t += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    uint64_t key = tiles[tileFirst[t]];
    // root key of the unbiased coordinates: flip the top bit of each 20-bit tile coordinate
    uint64_t tx = ((key >> 42) & 0xfffff) ^ 0x80000, ty = ((key >> 21) & 0xfffff) ^ 0x80000, tz = (key & 0xfffff) ^ 0x80000;
    uint8_t* tile = out + kRootOffset + layout.rootDataSize + t * kRootTileSize;
    uint64_t upperAt = upperStart + t * layout.upperSize;
    *reinterpret_cast<uint64_t*>(tile + kTileKey) = tz | (ty << 21) | (tx << 42);
    SetI64(tile + kTileChild, static_cast<int64_t>(upperAt - kRootOffset));
    out[upperAt + kInternalFlags] = kHasBBox;
    InitBBox(out + upperAt);
  }
}

__global__ void WriteLowers(uint8_t* out, const uint64_t* __restrict__ in, const uint4* __restrict__ ids, const uint32_t* __restrict__ lowerFirst, Layout layout, uint32_t capLowers,
                            const uint32_t* report) {
  uint32_t count = report[kLowers];
  uint64_t upperStart = U64(report, kUpperStart), lowerStart = U64(report, kLowerStart);
  for (uint64_t l = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; l < count && l < capLowers; l += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    uint32_t j = lowerFirst[l];
    uint64_t upperAt = upperStart + (ids[j].w - 1) * layout.upperSize;
    uint64_t lowerAt = lowerStart + l * layout.lowerSize;
    uint32_t entry = static_cast<uint32_t>(in[j] >> 21) & 0x7fff;
    atomicOr(reinterpret_cast<uint32_t*>(out + upperAt + kUpperChildMask) + (entry >> 5), 1u << (entry & 31));
    SetI64(out + upperAt + kUpperTable + layout.tableEntrySize * entry, static_cast<int64_t>(lowerAt - upperAt));
    out[lowerAt + kInternalFlags] = kHasBBox;
    InitBBox(out + lowerAt);
  }
}

__global__ void WriteLeaves(uint8_t* out, const uint64_t* __restrict__ in, const uint4* __restrict__ ids, const uint32_t* __restrict__ leafFirst, Layout layout, uint32_t capLeaves,
                            const uint32_t* report) {
  uint32_t count = report[kLeaves];
  uint64_t lowerStart = U64(report, kLowerStart), leafStart = U64(report, kLeafStart);
  for (uint64_t f = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; f < count && f < capLeaves; f += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    uint32_t j = leafFirst[f];
    uint64_t lowerAt = lowerStart + (ids[j].z - 1) * layout.lowerSize;
    uint64_t leafAt = leafStart + f * layout.leafSize;
    uint32_t entry = static_cast<uint32_t>(in[j] >> 9) & 0xfff;
    atomicOr(reinterpret_cast<uint32_t*>(out + lowerAt + kLowerChildMask) + (entry >> 5), 1u << (entry & 31));
    SetI64(out + lowerAt + kLowerTable + layout.tableEntrySize * entry, static_cast<int64_t>(leafAt - lowerAt));
    out[leafAt + kLeafFlags] = kHasBBox;
  }
}

// Active voxels: the value-mask bit, and the voxel's value (voxel c.x - 1 of the build order reads value
// c.x - 1 of `values`, copied bit for bit but a float NaN, stored canonical as the host writer stores it),
// or without values a Float grid's 1.0. The sorted voxels of one mask word sit in consecutive lanes: a
// segmented OR over each run leaves one atomicOr per word and warp.
__global__ void WriteVoxels(uint8_t* out, const uint64_t* __restrict__ in, const uint4* __restrict__ ids, const uint32_t* __restrict__ values, Layout layout, uint32_t used,
                            const uint32_t* report) {
  uint32_t cut = report[kCut];
  uint64_t leafStart = U64(report, kLeafStart);
  uint32_t lane = threadIdx.x & 31;
  uint64_t limit = cut < used ? cut : used;
  uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  // warp-uniform loop: every lane takes part in the shuffles
  for (uint64_t at = blockIdx.x * static_cast<uint64_t>(blockDim.x) + (threadIdx.x & ~31u); at < limit; at += stride) {
    uint64_t j = at + lane;
    bool live = j < limit, voxel = false;
    uint4 c = make_uint4(0, 0, 0, 0);
    uint32_t n = 0;
    if (live) {
      c = ids[j];
      voxel = j == 0 || ids[j - 1].x != c.x;  // not a duplicate of the previous point
      n = static_cast<uint32_t>(in[j]) & 511;
    }
    // the mask word of this point's voxel (leaf c.y - 1, word n / 64): a word's points, duplicates included, are
    // consecutive lanes, so each run is one contiguous segment; lanes past the end get a word of their own
    uint64_t word = live ? (static_cast<uint64_t>(c.y - 1) << 3) | (n >> 6) : ~0ull - lane;
    uint32_t peers = __match_any_sync(0xffffffffu, word);
    uint32_t first = __ffs(peers) - 1;
    uint64_t bits = voxel ? 1ull << (n & 63) : 0;
    for (uint32_t o = 1; o < 32; o <<= 1) {
      uint64_t from = __shfl_up_sync(0xffffffffu, bits, o);
      if (lane >= first + o) bits |= from;
    }
    if (!live) continue;
    uint64_t leafAt = leafStart + (c.y - 1) * layout.leafSize;
    if (lane == 31 - __clz(peers)) atomicOr(reinterpret_cast<unsigned long long*>(out + leafAt + kLeafValueMask) + (n >> 6), bits);
    if (!voxel) continue;
    if (values != nullptr) {
      const uint32_t* from = values + static_cast<uint64_t>(c.x - 1) * (layout.valueSize / 4);
      uint32_t* to = reinterpret_cast<uint32_t*>(out + leafAt + layout.leafValues + static_cast<uint64_t>(layout.valueSize) * n);
      if (layout.gridType == kGridTypeDouble) {
        uint64_t value = CanonicalF64Bits(static_cast<uint64_t>(from[1]) << 32 | from[0]);
        to[0] = static_cast<uint32_t>(value);
        to[1] = static_cast<uint32_t>(value >> 32);
      } else if (layout.gridType == kGridTypeFloat || layout.gridType == kGridTypeVec3f) {
        for (uint32_t w = 0; w < layout.valueSize / 4; w++) to[w] = CanonicalF32Bits(from[w]);
      } else {
        for (uint32_t w = 0; w < layout.valueSize / 4; w++) to[w] = from[w];
      }
    } else if (layout.gridType == kGridTypeFloat) {
      *reinterpret_cast<float*>(out + leafAt + kFloatLeafValues + 4ull * n) = 1.0f;
    }
  }
}

// Leaf bbox from its mask (x is the word, y the byte, z the bit), OnIndex offset and prefix sums; the
// bbox merges into the parent lower node (once per run of a warp's leaves with the same parent).
__global__ void FinishLeaves(uint8_t* out, const uint64_t* __restrict__ tiles, const uint64_t* __restrict__ in, const uint4* __restrict__ ids, const uint32_t* __restrict__ leafFirst,
                             Layout layout, uint32_t capLeaves, const uint32_t* report) {
  uint32_t count = report[kLeaves] < capLeaves ? report[kLeaves] : capLeaves;
  uint64_t lowerStart = U64(report, kLowerStart), leafStart = U64(report, kLeafStart);
  uint32_t lane = threadIdx.x & 31;
  uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  // warp-uniform loop: every lane takes part in the parent's bbox reduction
  for (uint64_t at = blockIdx.x * static_cast<uint64_t>(blockDim.x) + (threadIdx.x & ~31u); at < count; at += stride) {
    uint64_t f = at + lane;
    bool live = f < count;
    uint32_t j = live ? leafFirst[f] : 0;
    uint32_t parent = live ? ids[j].z - 1 : 0xffffffffu - lane;
    int32_t lo[3] = {0x7fffffff, 0x7fffffff, 0x7fffffff}, hi[3] = {INT32_MIN, INT32_MIN, INT32_MIN};
    if (live) {
      uint8_t* leaf = out + leafStart + f * layout.leafSize;
      const uint64_t* mask = reinterpret_cast<const uint64_t*>(leaf + kLeafValueMask);
      int xmin = 8, xmax = -1;
      uint64_t any = 0;
      uint32_t running = 0;
      uint64_t prefix = 0;
      for (int w = 0; w < 8; w++) {
        uint64_t m = mask[w];
        if (m != 0) {
          if (xmin == 8) xmin = w;
          xmax = w;
        }
        any |= m;
        running += __popcll(m);
        if (w < 7) prefix |= static_cast<uint64_t>(running) << (9 * w);
      }
      int ymin = 8, ymax = -1;
      uint32_t zbits = 0;
      for (int y = 0; y < 8; y++) {
        uint32_t b = static_cast<uint32_t>(any >> (8 * y)) & 0xff;
        if (b != 0) {
          if (ymin == 8) ymin = y;
          ymax = y;
        }
        zbits |= b;
      }
      int zmin = __ffs(zbits) - 1, zmax = 31 - __clz(zbits);
      int32_t x, y, z;
      Coords(tiles[j], in[j], &x, &y, &z);
      lo[0] = (x & ~7) + xmin, lo[1] = (y & ~7) + ymin, lo[2] = (z & ~7) + zmin;
      hi[0] = (x & ~7) + xmax, hi[1] = (y & ~7) + ymax, hi[2] = (z & ~7) + zmax;
      int32_t* bbox = reinterpret_cast<int32_t*>(leaf + kLeafBBoxMin);
      bbox[0] = lo[0], bbox[1] = lo[1], bbox[2] = lo[2];
      leaf[kLeafBBoxDif] = static_cast<uint8_t>(xmax - xmin);
      leaf[kLeafBBoxDif + 1] = static_cast<uint8_t>(ymax - ymin);
      leaf[kLeafBBoxDif + 2] = static_cast<uint8_t>(zmax - zmin);
      if (layout.isIndex) {
        *reinterpret_cast<uint64_t*>(leaf + kOnIndexLeafOffset) = ids[j].x;  // 1 + voxels of earlier leaves
        *reinterpret_cast<uint64_t*>(leaf + kOnIndexLeafPrefixSum) = prefix;
      }
    }
    // the leaves of one lower node are consecutive (sorted): a segmented min / max over each run of lanes, then
    // one merge per run instead of one per leaf
    uint32_t peers = __match_any_sync(0xffffffffu, parent);
    uint32_t last = 31 - __clz(peers);
    for (uint32_t o = 1; o < 32; o <<= 1) {
      for (int a = 0; a < 3; a++) {
        int32_t l = __shfl_down_sync(0xffffffffu, lo[a], o), h = __shfl_down_sync(0xffffffffu, hi[a], o);
        if (lane + o <= last) {
          lo[a] = l < lo[a] ? l : lo[a];
          hi[a] = h > hi[a] ? h : hi[a];
        }
      }
    }
    if (live && lane == __ffs(peers) - 1) MergeBBox(reinterpret_cast<int32_t*>(out + lowerStart + static_cast<uint64_t>(parent) * layout.lowerSize), lo, hi);
  }
}

__global__ void FinishLowers(uint8_t* out, const uint4* __restrict__ ids, const uint32_t* __restrict__ lowerFirst, Layout layout, uint32_t capLowers, const uint32_t* report) {
  uint32_t count = report[kLowers];
  uint64_t upperStart = U64(report, kUpperStart), lowerStart = U64(report, kLowerStart);
  for (uint64_t l = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; l < count && l < capLowers; l += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    const int32_t* b = reinterpret_cast<const int32_t*>(out + lowerStart + l * layout.lowerSize);
    MergeBBox(reinterpret_cast<int32_t*>(out + upperStart + (ids[lowerFirst[l]].w - 1) * layout.upperSize), b, b + 3);
  }
}

__global__ void FinishUppers(uint8_t* out, Layout layout, uint32_t capUppers, uint32_t* report) {
  uint32_t count = report[kTiles];
  uint64_t upperStart = U64(report, kUpperStart);
  for (uint64_t t = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; t < count && t < capUppers; t += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    const int32_t* b = reinterpret_cast<const int32_t*>(out + upperStart + t * layout.upperSize);
    MergeBBox(reinterpret_cast<int32_t*>(report + kRootBBox), b, b + 3);
  }
}

// GridData from the template plus the fields that depend on the counts, TreeData and RootData.
__global__ void FinishHeader(uint8_t* out, const uint8_t* __restrict__ tmpl, Layout layout, const uint32_t* report) {
  for (uint32_t i = threadIdx.x; i < kGridDataSize; i += blockDim.x) out[i] = tmpl[i];
  __syncthreads();
  if (threadIdx.x != 0) return;
  uint64_t gridSize = U64(report, kGridSize);
  uint32_t voxels = report[kVoxels], leaves = report[kLeaves], lowers = report[kLowers], tiles = report[kTiles];
  const int32_t* box = reinterpret_cast<const int32_t*>(report + kRootBBox);
  *reinterpret_cast<uint64_t*>(out + kGridGridSize) = gridSize;
  if (voxels > 0) {
    double voxelSize = *reinterpret_cast<const double*>(tmpl + kGridVoxelSize);
    for (int a = 0; a < 3; a++) {
      double origin = *reinterpret_cast<const double*>(tmpl + kGridVecD + 8 * a);
      *reinterpret_cast<double*>(out + kGridWorldBBox + 8 * a) = __dadd_rn(origin, __dmul_rn(voxelSize, static_cast<double>(box[a])));
      *reinterpret_cast<double*>(out + kGridWorldBBox + 24 + 8 * a) = __dadd_rn(origin, __dmul_rn(voxelSize, static_cast<double>(box[3 + a]) + 1.0));
    }
  }
  SetI64(out + kGridBlindMetadataOffset, static_cast<int64_t>(gridSize));
  *reinterpret_cast<uint64_t*>(out + kGridData1) = layout.isIndex ? static_cast<uint64_t>(voxels) + 1 : 0;
  uint8_t* tree = out + kGridDataSize;
  SetI64(tree + kTreeNodeOffset, leaves == 0 ? 0 : static_cast<int64_t>(U64(report, kLeafStart) - kGridDataSize));
  SetI64(tree + kTreeNodeOffset + 8, lowers == 0 ? 0 : static_cast<int64_t>(U64(report, kLowerStart) - kGridDataSize));
  SetI64(tree + kTreeNodeOffset + 16, tiles == 0 ? 0 : static_cast<int64_t>(U64(report, kUpperStart) - kGridDataSize));
  SetI64(tree + kTreeNodeOffset + 24, static_cast<int64_t>(kRootOffset - kGridDataSize));
  uint32_t* counts = reinterpret_cast<uint32_t*>(tree + kTreeNodeCount);
  counts[0] = leaves, counts[1] = lowers, counts[2] = tiles;
  *reinterpret_cast<uint64_t*>(tree + kTreeVoxelCount) = voxels;
  int32_t* root = reinterpret_cast<int32_t*>(out + kRootOffset + kRootDataBBox);
  for (int a = 0; a < 6; a++) root[a] = box[a];
  *reinterpret_cast<uint32_t*>(out + kRootOffset + kRootDataTableSize) = tiles;
}

// The background from its launch encoding (params 5.., one u32 word each: the value's stored bytes,
// zero-padded): every word a u32, the padding 0, Mask's 0 or 1, OnIndex's 0.
bool BackgroundOf(const KernelArgs& a, const Layout& l, Value* out) {
  uint32_t words = (l.valueSize + 3) / 4;
  if (a.paramCount != 5 + static_cast<int>(words)) return false;
  *out = Value{{0, 0, 0}};
  for (uint32_t i = 0; i < words; i++) {
    double v = a.params[5 + i];
    if (!(v >= 0 && v <= 4294967295.0) || v != static_cast<double>(static_cast<uint32_t>(v))) return false;
    out->w[i] = static_cast<uint32_t>(v);
  }
  if (l.valueSize == 1 && out->w[0] > 1) return false;
  return !l.isIndex || (out->w[0] == 0 && out->w[1] == 0);
}

// Whether FillBackground has bytes to write, as the host writer decides: with a values writer every
// non-zero byte is written; a Float grid without values skips a background equal to 0 (-0 included).
bool WritesBackground(const Value& v, const Layout& l, bool hasValues) {
  if (l.gridType == kGridTypeFloat && !hasValues) return (v.w[0] & 0x7fffffffu) != 0;
  return (v.w[0] | v.w[1] | v.w[2]) != 0;
}

uint64_t GridBytes(const Layout& l, uint64_t uppers, uint64_t lowers, uint64_t leaves) {
  return kRootOffset + l.rootDataSize + uppers * (kRootTileSize + l.upperSize) + lowers * l.lowerSize + leaves * l.leafSize;
}

}  // namespace

/**
 * hs.nanovdb.pointsToGrid.write: reads [values] or nothing, writes [workspace, grid]; params [used,
 * gridType (1 Float, 2 Double, 4 Int32, 6 Vec3f, 8 Mask, 12 RGBA8, 20 OnIndex), capacity uppers,
 * lowers, leaves, background as ceil(valueSize / 4) u32 words of its stored bytes]. Values: at least
 * `used` values of the type's size from a 4-byte aligned address; required for Double, Int32, Vec3f and
 * RGBA8, optional for Float, refused for Mask and OnIndex. The grid range must hold a grid of the
 * capacities.
 */
cudaError_t LaunchPointsToGridWrite(const KernelArgs& a, cudaStream_t stream) {
  Layout layout;
  Value background;
  if ((a.readCount != 0 && a.readCount != 1) || a.writeCount != 2 || a.paramCount < 5 || !IsCount(a.params[0]) || !LayoutOf(a.params[1], &layout) || !IsCount(a.params[2]) ||
      !IsCount(a.params[3]) || !IsCount(a.params[4]) || !BackgroundOf(a, layout, &background)) {
    return cudaErrorInvalidValue;
  }
  uint32_t used = static_cast<uint32_t>(a.params[0]);
  bool hasValues = a.readCount == 1;
  const uint32_t* values = hasValues ? reinterpret_cast<const uint32_t*>(a.reads[0]) : nullptr;
  if (hasValues != layout.leafHasValues && !(layout.gridType == kGridTypeFloat && !hasValues)) return cudaErrorInvalidValue;
  if (hasValues && (a.readBytes[0] < static_cast<uint64_t>(used) * layout.valueSize || (reinterpret_cast<uintptr_t>(values) & 3) != 0)) return cudaErrorInvalidValue;
  uint32_t capU = static_cast<uint32_t>(a.params[2]), capL = static_cast<uint32_t>(a.params[3]), capF = static_cast<uint32_t>(a.params[4]);
  Workspace w = Carve(a.writes[0], used);
  uint8_t* out = a.writes[1];
  if (a.writeBytes[0] < w.total || a.writeBytes[1] < GridBytes(layout, capU, capL, capF) || (reinterpret_cast<uintptr_t>(out) & (kDataAlignment - 1)) != 0) return cudaErrorInvalidValue;
  PlanGrid<<<1, 1, 0, stream>>>(w.ids, layout, capU, capL, capF, w.report);
  unsigned zeroBlocks = Blocks(a.writeBytes[1] / 16, 256);
  ZeroGrid<<<zeroBlocks < 2048 ? zeroBlocks : 2048, 256, 0, stream>>>(out, w.report);
  if (WritesBackground(background, layout, hasValues)) FillBackground<<<2048, 256, 0, stream>>>(out, background, layout, capU, capL, capF, w.report);
  WriteTiles<<<Blocks(capU, 128), 128, 0, stream>>>(out, w.keysA, w.tileFirst, layout, capU, w.report);
  WriteLowers<<<Blocks(capL, 128), 128, 0, stream>>>(out, w.valsA, w.ids, w.lowerFirst, layout, capL, w.report);
  WriteLeaves<<<Blocks(capF, 256), 256, 0, stream>>>(out, w.valsA, w.ids, w.leafFirst, layout, capF, w.report);
  if (used > 0) WriteVoxels<<<Blocks(used, 256), 256, 0, stream>>>(out, w.valsA, w.ids, values, layout, used, w.report);
  FinishLeaves<<<Blocks(capF, 256), 256, 0, stream>>>(out, w.keysA, w.valsA, w.ids, w.leafFirst, layout, capF, w.report);
  FinishLowers<<<Blocks(capL, 128), 128, 0, stream>>>(out, w.ids, w.lowerFirst, layout, capL, w.report);
  FinishUppers<<<Blocks(capU, 128), 128, 0, stream>>>(out, layout, capU, w.report);
  FinishHeader<<<1, 256, 0, stream>>>(out, w.tmpl, layout, w.report);
  return cudaGetLastError();
}

}  // namespace hs
