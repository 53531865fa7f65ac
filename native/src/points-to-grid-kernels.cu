// PointsToGrid on the device: the CUDA side of the launches built in
// packages/nanovdb-mr/src/nanovdb/points-to-grid-kernels.ts. The grid bytes equal the host builder's
// (grid-writer.ts), and the workspace layout and report words mirror points-to-grid-workspace.ts.
//
// Every launcher only enqueues work on its stream (kernels, CUB sorts and scans on caller scratch,
// device-to-device copies): no allocation, no host synchronization, so a whole build can be captured
// into a CUDA graph. Counts stay on the device; kernels that depend on them are launched over the
// capacities and read the counts themselves.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include <cstdint>

#include "kernel-registry.h"

namespace hs {
namespace {

// ---- layout (keep in step with points-to-grid-workspace.ts and grid-layout.ts) ---------------------
constexpr uint64_t kHeaderBytes = 1024;
constexpr uint64_t kTemplateOffset = 256;
constexpr uint64_t kGridDataSize = 672;
constexpr uint64_t kRootOffset = 736;
constexpr uint64_t kTileSize = 32;
constexpr uint64_t kUpperSize = 270400;
constexpr uint64_t kLowerSize = 33856;
constexpr uint64_t kUpperChildMask = 4128, kUpperTable = 8256;
constexpr uint64_t kLowerChildMask = 544, kLowerTable = 1088;
constexpr uint64_t kLeafMask = 16;
constexpr uint32_t kMaxPoints = 0xffffffffu;

// report words
enum : int {
  kGiven = 0, kUsed = 1, kValid = 2, kFirstInvalid = 3,
  kTotalVoxels = 4, kTotalLeaves = 5, kTotalLowers = 6, kTotalTiles = 7,
  kVoxels = 8, kLeaves = 9, kLowers = 10, kTiles = 11, kOverflow = 12, kCut = 13, kGridSize = 14,
  kRootBBox = 16,            // i32x6 scratch
  kInvalidMin = 22,          // raw index of the first invalid point (atomicMin), 0xffffffff when none
  kInvalidCount = 23,
  kUpperStart = 24, kLowerStart = 26, kLeafStart = 28,  // u64 each
};

struct Layout {
  uint32_t gridType;      // 1 Float, 20 OnIndex
  uint64_t rootDataSize;  // 64 / 96
  uint64_t leafSize;      // 2144 / 96
  bool isIndex;
};

bool LayoutOf(double gridType, Layout* out) {
  if (gridType == 1) *out = Layout{1, 64, 2144, false};
  else if (gridType == 20) *out = Layout{20, 96, 96, true};
  else return false;
  return true;
}

uint64_t Region(uint64_t bytes) { return (bytes + 255) / 256 * 256; }
uint64_t CubBytes(uint64_t n) { return 2 * n + 8ull * 1024 * 1024; }

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
  uint8_t* cub;
  uint64_t cubBytes;
  uint64_t total;
};

Workspace Carve(uint8_t* base, uint64_t n) {
  Workspace w{};
  uint64_t at = kHeaderBytes;
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
  w.cubBytes = Region(CubBytes(n));
  w.cub = take(CubBytes(n));
  w.total = at;
  return w;
}

bool IsCount(double v) { return v >= 0 && v <= kMaxPoints && v == static_cast<double>(static_cast<uint64_t>(v)); }

unsigned Blocks(uint64_t items, unsigned block) {
  uint64_t b = (items + block - 1) / block;
  return static_cast<unsigned>(b == 0 ? 1 : (b > 0x7fffffffull ? 0x7fffffffull : b));
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

// ---- sort stage ---------------------------------------------------------------------------------

__global__ void InitReport(uint32_t* report, uint32_t given, uint32_t used) {
  int i = threadIdx.x;
  if (i < 64) report[i] = 0;
  __syncthreads();
  if (i == 0) {
    report[kGiven] = given;
    report[kUsed] = used;
    report[kInvalidMin] = 0xffffffffu;
  }
}

// One point: its voxel (world points: floor((p - origin) * inv + 0.5) in double, rounded like the
// host), its in-tile key and its tile key (all ones for an invalid point, which sorts last).
__global__ void MapPoints(const uint8_t* __restrict__ points, int encoding, uint32_t used, double inv, double ox, double oy, double oz,
                          uint64_t* __restrict__ inKeys, uint32_t* __restrict__ order, uint64_t* __restrict__ tileKeys, uint32_t* report) {
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < used; i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    int32_t c[3];
    bool valid = true;
    if (encoding == 0) {
      const int32_t* p = reinterpret_cast<const int32_t*>(points) + 3 * i;
      c[0] = p[0], c[1] = p[1], c[2] = p[2];
    } else {
      const double origin[3] = {ox, oy, oz};
      for (int a = 0; a < 3; a++) {
        double p = encoding == 1 ? static_cast<double>(reinterpret_cast<const float*>(points)[3 * i + a]) : reinterpret_cast<const double*>(points)[3 * i + a];
        double v = floor(__dadd_rn(__dmul_rn(__dsub_rn(p, origin[a]), inv), 0.5));
        if (!(v >= -2147483648.0 && v <= 2147483647.0)) {
          valid = false;
          c[a] = 0;
        } else {
          c[a] = static_cast<int32_t>(v);
        }
      }
    }
    uint32_t x = static_cast<uint32_t>(c[0]), y = static_cast<uint32_t>(c[1]), z = static_cast<uint32_t>(c[2]);
    uint64_t upper = (((x & 4095) >> 7) << 10) | (((y & 4095) >> 7) << 5) | ((z & 4095) >> 7);
    uint64_t lower = (((x & 127) >> 3) << 8) | (((y & 127) >> 3) << 4) | ((z & 127) >> 3);
    uint64_t leaf = ((x & 7) << 6) | ((y & 7) << 3) | (z & 7);
    inKeys[i] = (upper << 21) | (lower << 9) | leaf;
    order[i] = static_cast<uint32_t>(i);
    if (valid) {
      tileKeys[i] = (static_cast<uint64_t>((x ^ 0x80000000u) >> 12) << 42) | (static_cast<uint64_t>((y ^ 0x80000000u) >> 12) << 21) | ((z ^ 0x80000000u) >> 12);
    } else {
      tileKeys[i] = ~0ull;
      atomicMin(&report[kInvalidMin], static_cast<uint32_t>(i));
      atomicAdd(&report[kInvalidCount], 1u);
    }
  }
}

__global__ void GatherTiles(const uint64_t* __restrict__ sortedIn, const uint32_t* __restrict__ order, const uint64_t* __restrict__ tileKeys, uint64_t* __restrict__ tileOut,
                            uint64_t* __restrict__ inOut, uint32_t used) {
  for (uint64_t j = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; j < used; j += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    tileOut[j] = tileKeys[order[j]];
    inOut[j] = sortedIn[j];
  }
}

// Start flags of each level at sorted point j (0 beyond the valid points).
__global__ void StartFlags(const uint64_t* __restrict__ tiles, const uint64_t* __restrict__ in, uint4* __restrict__ flags, uint32_t used, const uint32_t* report) {
  uint32_t valid = used - report[kInvalidCount];
  for (uint64_t j = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; j < used; j += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    uint4 f = make_uint4(0, 0, 0, 0);
    if (j < valid) {
      uint64_t t = tiles[j], k = in[j];
      bool first = j == 0;
      uint64_t pt = first ? 0 : tiles[j - 1], pk = first ? 0 : in[j - 1];
      bool tile = first || t != pt;
      bool lower = tile || (k >> 9 >> 12) != (pk >> 9 >> 12);
      bool leaf = lower || (k >> 9) != (pk >> 9);
      bool voxel = leaf || k != pk;
      f = make_uint4(voxel, leaf, lower, tile);
    }
    flags[j] = f;
  }
}

struct AddUint4 {
  __device__ __forceinline__ uint4 operator()(const uint4& a, const uint4& b) const { return make_uint4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w); }
};

// After the scan: where each node starts in sorted order, and the totals.
__global__ void NodeStarts(const uint4* __restrict__ ids, uint32_t used, uint32_t* leafFirst, uint32_t* lowerFirst, uint32_t* tileFirst, uint32_t* report) {
  uint32_t valid = used - report[kInvalidCount];
  for (uint64_t j = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; j < valid; j += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    uint4 c = ids[j];
    uint4 p = j == 0 ? make_uint4(0, 0, 0, 0) : ids[j - 1];
    if (c.y != p.y) leafFirst[c.y - 1] = static_cast<uint32_t>(j);
    if (c.z != p.z) lowerFirst[c.z - 1] = static_cast<uint32_t>(j);
    if (c.w != p.w) tileFirst[c.w - 1] = static_cast<uint32_t>(j);
  }
}

__global__ void SortTotals(const uint4* __restrict__ ids, uint32_t used, uint32_t* report) {
  uint32_t invalid = report[kInvalidCount];
  uint32_t valid = used - invalid;
  report[kValid] = valid;
  report[kFirstInvalid] = invalid == 0 ? 0 : report[kInvalidMin] + 1;
  uint4 t = valid == 0 ? make_uint4(0, 0, 0, 0) : ids[valid - 1];
  report[kTotalVoxels] = t.x;
  report[kTotalLeaves] = t.y;
  report[kTotalLowers] = t.z;
  report[kTotalTiles] = t.w;
}

// ---- write stage --------------------------------------------------------------------------------

__global__ void FindCut(const uint4* __restrict__ ids, uint32_t used, uint32_t capUppers, uint32_t capLowers, uint32_t capLeaves, uint32_t* report) {
  uint32_t valid = report[kValid];
  for (uint64_t j = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; j < valid; j += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    uint4 c = ids[j];
    if (c.y > capLeaves || c.z > capLowers || c.w > capUppers) atomicMin(&report[kCut], static_cast<uint32_t>(j));
  }
}

__global__ void InitCut(uint32_t* report) {
  report[kCut] = report[kValid];
  for (int a = 0; a < 3; a++) {
    report[kRootBBox + a] = 0x7fffffffu;
    report[kRootBBox + 3 + a] = 0x80000000u;
  }
}

__global__ void PlanGrid(const uint4* __restrict__ ids, Layout layout, uint32_t capUppers, uint32_t capLowers, uint32_t capLeaves, uint32_t* report) {
  uint32_t cut = report[kCut];
  uint4 k = cut == 0 ? make_uint4(0, 0, 0, 0) : ids[cut - 1];
  report[kVoxels] = k.x;
  report[kLeaves] = k.y;
  report[kLowers] = k.z;
  report[kTiles] = k.w;
  report[kOverflow] = (report[kGiven] > report[kUsed] ? 1u : 0u) | (report[kTotalTiles] > capUppers ? 2u : 0u) | (report[kTotalLowers] > capLowers ? 4u : 0u) |
                      (report[kTotalLeaves] > capLeaves ? 8u : 0u);
  uint64_t upperStart = kRootOffset + layout.rootDataSize + k.w * kTileSize;
  uint64_t lowerStart = upperStart + k.w * kUpperSize;
  uint64_t leafStart = lowerStart + k.z * kLowerSize;
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
    uint8_t* tile = out + kRootOffset + layout.rootDataSize + t * kTileSize;
    uint64_t upperAt = upperStart + t * kUpperSize;
    *reinterpret_cast<uint64_t*>(tile) = tz | (ty << 21) | (tx << 42);
    SetI64(tile + 8, static_cast<int64_t>(upperAt - kRootOffset));
    out[upperAt + 24] = 2;  // HasBBox
    InitBBox(out + upperAt);
  }
}

__global__ void WriteLowers(uint8_t* out, const uint64_t* __restrict__ in, const uint4* __restrict__ ids, const uint32_t* __restrict__ lowerFirst, uint32_t capLowers, const uint32_t* report) {
  uint32_t count = report[kLowers];
  uint64_t upperStart = U64(report, kUpperStart), lowerStart = U64(report, kLowerStart);
  for (uint64_t l = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; l < count && l < capLowers; l += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    uint32_t j = lowerFirst[l];
    uint64_t upperAt = upperStart + (ids[j].w - 1) * kUpperSize;
    uint64_t lowerAt = lowerStart + l * kLowerSize;
    uint32_t entry = static_cast<uint32_t>(in[j] >> 21) & 0x7fff;
    atomicOr(reinterpret_cast<uint32_t*>(out + upperAt + kUpperChildMask) + (entry >> 5), 1u << (entry & 31));
    SetI64(out + upperAt + kUpperTable + 8ull * entry, static_cast<int64_t>(lowerAt - upperAt));
    out[lowerAt + 24] = 2;
    InitBBox(out + lowerAt);
  }
}

__global__ void WriteLeaves(uint8_t* out, const uint64_t* __restrict__ in, const uint4* __restrict__ ids, const uint32_t* __restrict__ leafFirst, Layout layout, uint32_t capLeaves,
                            const uint32_t* report) {
  uint32_t count = report[kLeaves];
  uint64_t lowerStart = U64(report, kLowerStart), leafStart = U64(report, kLeafStart);
  for (uint64_t f = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; f < count && f < capLeaves; f += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    uint32_t j = leafFirst[f];
    uint64_t lowerAt = lowerStart + (ids[j].z - 1) * kLowerSize;
    uint64_t leafAt = leafStart + f * layout.leafSize;
    uint32_t entry = static_cast<uint32_t>(in[j] >> 9) & 0xfff;
    atomicOr(reinterpret_cast<uint32_t*>(out + lowerAt + kLowerChildMask) + (entry >> 5), 1u << (entry & 31));
    SetI64(out + lowerAt + kLowerTable + 8ull * entry, static_cast<int64_t>(leafAt - lowerAt));
    out[leafAt + 15] = 2;
  }
}

__global__ void WriteVoxels(uint8_t* out, const uint64_t* __restrict__ in, const uint4* __restrict__ ids, Layout layout, uint32_t used, const uint32_t* report) {
  uint32_t cut = report[kCut];
  uint64_t leafStart = U64(report, kLeafStart);
  for (uint64_t j = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; j < cut && j < used; j += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    uint4 c = ids[j];
    if (j > 0 && ids[j - 1].x == c.x) continue;  // a duplicate of the previous point
    uint64_t leafAt = leafStart + (c.y - 1) * layout.leafSize;
    uint32_t n = static_cast<uint32_t>(in[j]) & 511;
    atomicOr(reinterpret_cast<unsigned long long*>(out + leafAt + kLeafMask) + (n >> 6), 1ull << (n & 63));
    if (!layout.isIndex) *reinterpret_cast<float*>(out + leafAt + 96 + 4ull * n) = 1.0f;
  }
}

// Leaf bbox from its mask (x is the word, y the byte, z the bit), OnIndex offset and prefix sums; the
// bbox merges into the parent lower node.
__global__ void FinishLeaves(uint8_t* out, const uint64_t* __restrict__ tiles, const uint64_t* __restrict__ in, const uint4* __restrict__ ids, const uint32_t* __restrict__ leafFirst,
                             Layout layout, uint32_t capLeaves, const uint32_t* report) {
  uint32_t count = report[kLeaves];
  uint64_t lowerStart = U64(report, kLowerStart), leafStart = U64(report, kLeafStart);
  for (uint64_t f = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; f < count && f < capLeaves; f += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    uint32_t j = leafFirst[f];
    uint8_t* leaf = out + leafStart + f * layout.leafSize;
    const uint64_t* mask = reinterpret_cast<const uint64_t*>(leaf + kLeafMask);
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
    int32_t lo[3] = {(x & ~7) + xmin, (y & ~7) + ymin, (z & ~7) + zmin};
    int32_t hi[3] = {(x & ~7) + xmax, (y & ~7) + ymax, (z & ~7) + zmax};
    int32_t* bbox = reinterpret_cast<int32_t*>(leaf);
    bbox[0] = lo[0], bbox[1] = lo[1], bbox[2] = lo[2];
    leaf[12] = static_cast<uint8_t>(xmax - xmin);
    leaf[13] = static_cast<uint8_t>(ymax - ymin);
    leaf[14] = static_cast<uint8_t>(zmax - zmin);
    if (layout.isIndex) {
      *reinterpret_cast<uint64_t*>(leaf + 80) = ids[j].x;  // 1 + voxels of earlier leaves
      *reinterpret_cast<uint64_t*>(leaf + 88) = prefix;
    }
    MergeBBox(reinterpret_cast<int32_t*>(out + lowerStart + (ids[j].z - 1) * kLowerSize), lo, hi);
  }
}

__global__ void FinishLowers(uint8_t* out, const uint4* __restrict__ ids, const uint32_t* __restrict__ lowerFirst, uint32_t capLowers, const uint32_t* report) {
  uint32_t count = report[kLowers];
  uint64_t upperStart = U64(report, kUpperStart), lowerStart = U64(report, kLowerStart);
  for (uint64_t l = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; l < count && l < capLowers; l += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    const int32_t* b = reinterpret_cast<const int32_t*>(out + lowerStart + l * kLowerSize);
    MergeBBox(reinterpret_cast<int32_t*>(out + upperStart + (ids[lowerFirst[l]].w - 1) * kUpperSize), b, b + 3);
  }
}

__global__ void FinishUppers(uint8_t* out, uint32_t capUppers, uint32_t* report) {
  uint32_t count = report[kTiles];
  uint64_t upperStart = U64(report, kUpperStart);
  for (uint64_t t = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; t < count && t < capUppers; t += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    const int32_t* b = reinterpret_cast<const int32_t*>(out + upperStart + t * kUpperSize);
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
  *reinterpret_cast<uint64_t*>(out + 32) = gridSize;
  if (voxels > 0) {
    double voxelSize = *reinterpret_cast<const double*>(tmpl + 608);
    for (int a = 0; a < 3; a++) {
      double origin = *reinterpret_cast<const double*>(tmpl + 528 + 8 * a);
      *reinterpret_cast<double*>(out + 560 + 8 * a) = __dadd_rn(origin, __dmul_rn(voxelSize, static_cast<double>(box[a])));
      *reinterpret_cast<double*>(out + 584 + 8 * a) = __dadd_rn(origin, __dmul_rn(voxelSize, static_cast<double>(box[3 + a]) + 1.0));
    }
  }
  SetI64(out + 640, static_cast<int64_t>(gridSize));
  *reinterpret_cast<uint64_t*>(out + 656) = layout.isIndex ? static_cast<uint64_t>(voxels) + 1 : 0;
  uint8_t* tree = out + kGridDataSize;
  SetI64(tree + 0, leaves == 0 ? 0 : static_cast<int64_t>(U64(report, kLeafStart) - kGridDataSize));
  SetI64(tree + 8, lowers == 0 ? 0 : static_cast<int64_t>(U64(report, kLowerStart) - kGridDataSize));
  SetI64(tree + 16, tiles == 0 ? 0 : static_cast<int64_t>(U64(report, kUpperStart) - kGridDataSize));
  SetI64(tree + 24, static_cast<int64_t>(kRootOffset - kGridDataSize));
  uint32_t* counts = reinterpret_cast<uint32_t*>(tree + 32);
  counts[0] = leaves, counts[1] = lowers, counts[2] = tiles;
  *reinterpret_cast<uint64_t*>(tree + 56) = voxels;
  int32_t* root = reinterpret_cast<int32_t*>(out + kRootOffset);
  for (int a = 0; a < 6; a++) root[a] = box[a];
  *reinterpret_cast<uint32_t*>(out + kRootOffset + 24) = tiles;
}

// ---- checksum -----------------------------------------------------------------------------------
constexpr uint32_t kCrcPoly = 0xedb88320u;
constexpr uint64_t kCrcBlock = 4096;
constexpr unsigned kCrcThreads = 256;

__device__ void CrcTable(uint32_t* table) {
  for (uint32_t i = threadIdx.x; i < 256; i += blockDim.x) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++) c = (c >> 1) ^ (kCrcPoly & (0u - (c & 1)));
    table[i] = c;
  }
}

__device__ __forceinline__ uint32_t CrcUpdate(const uint32_t* table, uint32_t crc, const uint8_t* p, uint64_t n) {
  for (uint64_t i = 0; i < n; i++) crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return crc;
}

// GF(2) polynomial product modulo the CRC polynomial (reflected), and x^(8 * bytes) modulo it.
__device__ uint32_t MultModP(uint32_t a, uint32_t b) {
  uint32_t m = 1u << 31, p = 0;
  for (;;) {
    if (a & m) {
      p ^= b;
      if ((a & (m - 1)) == 0) break;
    }
    m >>= 1;
    b = (b & 1) ? (b >> 1) ^ kCrcPoly : b >> 1;
  }
  return p;
}
__device__ uint32_t ShiftFor(uint64_t bytes) {
  uint32_t p = 1u << 31;     // x^0
  uint32_t power = 1u << 30;  // x^1
  uint64_t bits = bytes * 8;
  while (bits) {
    if (bits & 1) p = MultModP(power, p);
    power = MultModP(power, power);
    bits >>= 1;
  }
  return p;
}
// CRC of A || B from crc(A), crc(B) and |B| (zlib's crc32_combine).
__device__ __forceinline__ uint32_t CrcCombine(uint32_t a, uint32_t b, uint64_t bytesB) { return MultModP(ShiftFor(bytesB), a) ^ b; }

__device__ __forceinline__ uint32_t CrcOfWord(const uint32_t* table, uint32_t v) {
  uint8_t bytes[4] = {static_cast<uint8_t>(v), static_cast<uint8_t>(v >> 8), static_cast<uint8_t>(v >> 16), static_cast<uint8_t>(v >> 24)};
  return ~CrcUpdate(table, 0xffffffffu, bytes, 4);
}

// Per 256 blocks of 4 KiB: the CRC of their block CRCs (as little-endian u32s), into partials.
__device__ __forceinline__ uint64_t TailRegion(const uint8_t* grid, uint64_t rangeBytes) {
  uint64_t gridSize = *reinterpret_cast<const uint64_t*>(grid + 32);
  if (gridSize > rangeBytes) gridSize = rangeBytes;
  return gridSize > kRootOffset ? gridSize - kRootOffset : 0;
}

__global__ void CrcBlockPartials(const uint8_t* grid, uint64_t rangeBytes, uint32_t* partials) {
  __shared__ uint32_t table[256];
  __shared__ uint32_t crc[kCrcThreads];
  CrcTable(table);
  __syncthreads();
  uint64_t region = TailRegion(grid, rangeBytes);
  uint64_t blocks = region / kCrcBlock;
  uint64_t first = static_cast<uint64_t>(blockIdx.x) * kCrcThreads;
  if (first >= blocks) return;
  uint64_t b = first + threadIdx.x;
  if (b < blocks) {
    uint64_t begin = b * kCrcBlock, end = b + 1 == blocks ? region : begin + kCrcBlock;
    crc[threadIdx.x] = CrcOfWord(table, ~CrcUpdate(table, 0xffffffffu, grid + kRootOffset + begin, end - begin));
  }
  __syncthreads();
  uint64_t count = blocks - first < kCrcThreads ? blocks - first : kCrcThreads;
  for (uint64_t width = 1; width < count; width *= 2) {
    uint64_t left = 2 * width * threadIdx.x;
    if (left + width < count) {
      uint64_t rightLen = (left + 2 * width <= count ? width : count - left - width) * 4;
      crc[left] = CrcCombine(crc[left], crc[left + width], rightLen);
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) partials[blockIdx.x] = crc[0];
}

__global__ void CrcFinish(uint8_t* grid, uint64_t rangeBytes, const uint32_t* partials, int mode) {
  __shared__ uint32_t table[256];
  CrcTable(table);
  __syncthreads();
  if (threadIdx.x != 0) return;
  uint32_t* checksum = reinterpret_cast<uint32_t*>(grid + 8);
  if (mode == 2) {
    checksum[0] = checksum[1] = 0xffffffffu;
    return;
  }
  uint32_t head = ~CrcUpdate(table, 0xffffffffu, grid + 16, kRootOffset - 16);
  uint32_t tail = 0xffffffffu;
  if (mode == 0) {
    uint64_t region = TailRegion(grid, rangeBytes);
    uint64_t blocks = region / kCrcBlock;
    if (region > 0) {
      tail = 0;  // CRC32 of an empty array of block CRCs
      uint64_t parts = (blocks + kCrcThreads - 1) / kCrcThreads;
      for (uint64_t p = 0; p < parts; p++) {
        uint64_t len = 4 * (p + 1 == parts ? blocks - p * kCrcThreads : kCrcThreads);
        tail = p == 0 ? partials[0] : CrcCombine(tail, partials[p], len);
      }
    }
  }
  checksum[0] = head;
  checksum[1] = tail;
}

uint64_t GridBytes(const Layout& l, uint64_t uppers, uint64_t lowers, uint64_t leaves) {
  return kRootOffset + l.rootDataSize + uppers * (kTileSize + kUpperSize) + lowers * kLowerSize + leaves * l.leafSize;
}

}  // namespace

/**
 * hs.nanovdb.pointsToGrid.sort: reads [points], writes [workspace]; params [given, used, encoding
 * (0 i32 index, 1 f32 world, 2 f64 world), 1/voxelSize, origin x, y, z].
 */
cudaError_t LaunchPointsToGridSort(const KernelArgs& a, cudaStream_t stream) {
  if (a.readCount != 1 || a.writeCount != 1 || a.paramCount != 7 || !IsCount(a.params[0]) || !IsCount(a.params[1]) || a.params[1] > a.params[0]) return cudaErrorInvalidValue;
  int encoding = static_cast<int>(a.params[2]);
  if (a.params[2] != encoding || encoding < 0 || encoding > 2) return cudaErrorInvalidValue;
  uint32_t used = static_cast<uint32_t>(a.params[1]);
  uint64_t elementBytes = encoding == 2 ? 8 : 4;
  Workspace w = Carve(a.writes[0], used);
  if (a.readBytes[0] < 3 * elementBytes * used || a.writeBytes[0] < w.total) return cudaErrorInvalidValue;
  // CUB scratch: the largest of the two sorts and the scan, checked against the reserved region.
  size_t sortBytes = 0, sort2Bytes = 0, scanBytes = 0;
  cub::DoubleBuffer<uint64_t> keys(w.keysA, w.keysB);
  cub::DoubleBuffer<uint32_t> order(reinterpret_cast<uint32_t*>(w.valsA), reinterpret_cast<uint32_t*>(w.valsB));
  cub::DoubleBuffer<uint64_t> vals(w.valsA, w.valsB);
  cudaError_t e = cub::DeviceRadixSort::SortPairs(nullptr, sortBytes, keys, order, used, 0, 36, stream);
  if (e == cudaSuccess) e = cub::DeviceRadixSort::SortPairs(nullptr, sort2Bytes, keys, vals, used, 0, 62, stream);
  if (e == cudaSuccess) e = cub::DeviceScan::InclusiveScan(nullptr, scanBytes, w.ids, w.ids, AddUint4{}, used, stream);
  if (e != cudaSuccess) return e;
  if (sortBytes > w.cubBytes || sort2Bytes > w.cubBytes || scanBytes > w.cubBytes) return cudaErrorInvalidValue;

  InitReport<<<1, 64, 0, stream>>>(w.report, static_cast<uint32_t>(a.params[0]), used);
  if (used > 0) {
    // the tile keys wait in the ids region until the gather
    uint64_t* tileKeys = reinterpret_cast<uint64_t*>(w.ids);
    MapPoints<<<Blocks(used, 256), 256, 0, stream>>>(a.reads[0], encoding, used, a.params[3], a.params[4], a.params[5], a.params[6], w.keysA,
                                                     reinterpret_cast<uint32_t*>(w.valsA), tileKeys, w.report);
    e = cub::DeviceRadixSort::SortPairs(w.cub, sortBytes, keys, order, used, 0, 36, stream);
    if (e != cudaSuccess) return e;
    // sort 2 (stable) by tile: keys = tile keys, values = in-tile keys, in the buffers sort 1 left free
    uint64_t* sortedIn = keys.Current();
    uint64_t* tileOut = keys.Alternate();
    uint64_t* inOut = order.Current() == reinterpret_cast<uint32_t*>(w.valsA) ? w.valsB : w.valsA;
    GatherTiles<<<Blocks(used, 256), 256, 0, stream>>>(sortedIn, order.Current(), tileKeys, tileOut, inOut, used);
    cub::DoubleBuffer<uint64_t> tiles(tileOut, sortedIn);
    cub::DoubleBuffer<uint64_t> ins(inOut, inOut == w.valsA ? w.valsB : w.valsA);
    e = cub::DeviceRadixSort::SortPairs(w.cub, sort2Bytes, tiles, ins, used, 0, 62, stream);
    if (e != cudaSuccess) return e;
    // the write stage finds the sorted tile keys in keysA and the in-tile keys in valsA
    if (tiles.Current() != w.keysA) e = cudaMemcpyAsync(w.keysA, tiles.Current(), 8ull * used, cudaMemcpyDeviceToDevice, stream);
    if (e == cudaSuccess && ins.Current() != w.valsA) e = cudaMemcpyAsync(w.valsA, ins.Current(), 8ull * used, cudaMemcpyDeviceToDevice, stream);
    if (e != cudaSuccess) return e;
    StartFlags<<<Blocks(used, 256), 256, 0, stream>>>(w.keysA, w.valsA, w.ids, used, w.report);
    e = cub::DeviceScan::InclusiveScan(w.cub, scanBytes, w.ids, w.ids, AddUint4{}, used, stream);
    if (e != cudaSuccess) return e;
    NodeStarts<<<Blocks(used, 256), 256, 0, stream>>>(w.ids, used, w.leafFirst, w.lowerFirst, w.tileFirst, w.report);
  }
  SortTotals<<<1, 1, 0, stream>>>(w.ids, used, w.report);
  return cudaGetLastError();
}

/**
 * hs.nanovdb.pointsToGrid.write: writes [workspace, grid]; params [used, gridType (1 Float, 20
 * OnIndex), capacity uppers, lowers, leaves]. The grid range must hold a grid of the capacities.
 */
cudaError_t LaunchPointsToGridWrite(const KernelArgs& a, cudaStream_t stream) {
  Layout layout;
  if (a.readCount != 0 || a.writeCount != 2 || a.paramCount != 5 || !IsCount(a.params[0]) || !LayoutOf(a.params[1], &layout) || !IsCount(a.params[2]) ||
      !IsCount(a.params[3]) || !IsCount(a.params[4])) {
    return cudaErrorInvalidValue;
  }
  uint32_t used = static_cast<uint32_t>(a.params[0]);
  uint32_t capU = static_cast<uint32_t>(a.params[2]), capL = static_cast<uint32_t>(a.params[3]), capF = static_cast<uint32_t>(a.params[4]);
  Workspace w = Carve(a.writes[0], used);
  uint8_t* out = a.writes[1];
  if (a.writeBytes[0] < w.total || a.writeBytes[1] < GridBytes(layout, capU, capL, capF) || (reinterpret_cast<uintptr_t>(out) & 31) != 0) return cudaErrorInvalidValue;
  InitCut<<<1, 1, 0, stream>>>(w.report);
  if (used > 0) FindCut<<<Blocks(used, 256), 256, 0, stream>>>(w.ids, used, capU, capL, capF, w.report);
  PlanGrid<<<1, 1, 0, stream>>>(w.ids, layout, capU, capL, capF, w.report);
  unsigned zeroBlocks = Blocks(a.writeBytes[1] / 16, 256);
  ZeroGrid<<<zeroBlocks < 2048 ? zeroBlocks : 2048, 256, 0, stream>>>(out, w.report);
  WriteTiles<<<Blocks(capU, 128), 128, 0, stream>>>(out, w.keysA, w.tileFirst, layout, capU, w.report);
  WriteLowers<<<Blocks(capL, 128), 128, 0, stream>>>(out, w.valsA, w.ids, w.lowerFirst, capL, w.report);
  WriteLeaves<<<Blocks(capF, 256), 256, 0, stream>>>(out, w.valsA, w.ids, w.leafFirst, layout, capF, w.report);
  if (used > 0) WriteVoxels<<<Blocks(used, 256), 256, 0, stream>>>(out, w.valsA, w.ids, layout, used, w.report);
  FinishLeaves<<<Blocks(capF, 256), 256, 0, stream>>>(out, w.keysA, w.valsA, w.ids, w.leafFirst, layout, capF, w.report);
  FinishLowers<<<Blocks(capL, 128), 128, 0, stream>>>(out, w.ids, w.lowerFirst, capL, w.report);
  FinishUppers<<<Blocks(capU, 128), 128, 0, stream>>>(out, capU, w.report);
  FinishHeader<<<1, 256, 0, stream>>>(out, w.tmpl, layout, w.report);
  return cudaGetLastError();
}

/**
 * hs.nanovdb.gridChecksum: writes [grid, workspace]; params [mode (0 full, 1 partial, 2 disabled)].
 * The grid's stored gridSize (at most the range) is checksummed; one partial CRC per MiB of grid goes
 * to the workspace after its header (scratch of the finished build).
 */
cudaError_t LaunchGridChecksum(const KernelArgs& a, cudaStream_t stream) {
  if (a.readCount != 0 || a.writeCount != 2 || a.paramCount != 1 || (a.params[0] != 0 && a.params[0] != 1 && a.params[0] != 2) || a.writeBytes[0] < kRootOffset ||
      a.writeBytes[1] < kHeaderBytes) {
    return cudaErrorInvalidValue;
  }
  int mode = static_cast<int>(a.params[0]);
  uint64_t maxBlocks = (a.writeBytes[0] - kRootOffset) / kCrcBlock;
  uint64_t parts = (maxBlocks + kCrcThreads - 1) / kCrcThreads;
  if (kHeaderBytes + 4 * parts > a.writeBytes[1]) return cudaErrorInvalidValue;
  uint32_t* partials = reinterpret_cast<uint32_t*>(a.writes[1] + kHeaderBytes);
  if (mode == 0 && parts > 0) CrcBlockPartials<<<static_cast<unsigned>(parts), kCrcThreads, 0, stream>>>(a.writes[0], a.writeBytes[0], partials);
  CrcFinish<<<1, 256, 0, stream>>>(a.writes[0], a.writeBytes[0], partials, mode);
  return cudaGetLastError();
}

/**
 * Benchmark baseline: the bare CUB radix sorts of a build's keys (36-bit in-tile keys with 32-bit
 * values, then 62-bit tile keys with 64-bit values) of `n` points at `points`, mapped once, timed with
 * events over `iterations` runs (fresh unsorted keys each run). Allocates and synchronizes: benchmarks only.
 * Returns mean nanoseconds per run, or a negative CUDA status.
 */
double BenchPointsToGridSorts(const uint8_t* points, int encoding, uint32_t n, double inv, double ox, double oy, double oz, int iterations) {
  uint8_t* base = nullptr;
  Workspace probe = Carve(nullptr, n);
  uint64_t pristineBytes = 16ull * n;
  cudaStream_t s = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  double total = 0;
  cudaError_t e = cudaMalloc(&base, probe.total + pristineBytes);
  if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  if (e == cudaSuccess) e = cudaEventCreate(&start);
  if (e == cudaSuccess) e = cudaEventCreate(&stop);
  if (e == cudaSuccess) {
    Workspace w = Carve(base, n);
    uint64_t* pristineIn = reinterpret_cast<uint64_t*>(base + probe.total);
    uint64_t* pristineTiles = pristineIn + n;
    InitReport<<<1, 64, 0, s>>>(w.report, n, n);
    MapPoints<<<Blocks(n, 256), 256, 0, s>>>(points, encoding, n, inv, ox, oy, oz, pristineIn, reinterpret_cast<uint32_t*>(w.valsA), pristineTiles, w.report);
    for (int it = 0; it < iterations && e == cudaSuccess; it++) {
      cudaMemcpyAsync(w.keysA, pristineIn, 8ull * n, cudaMemcpyDeviceToDevice, s);
      cudaMemcpyAsync(w.ids, pristineTiles, 8ull * n, cudaMemcpyDeviceToDevice, s);
      cudaEventRecord(start, s);
      cub::DoubleBuffer<uint64_t> keys(w.keysA, w.keysB);
      cub::DoubleBuffer<uint32_t> order(reinterpret_cast<uint32_t*>(w.valsA), reinterpret_cast<uint32_t*>(w.valsB));
      size_t bytes = w.cubBytes;
      e = cub::DeviceRadixSort::SortPairs(w.cub, bytes, keys, order, n, 0, 36, s);
      cub::DoubleBuffer<uint64_t> tiles(reinterpret_cast<uint64_t*>(w.ids), keys.Alternate());
      cub::DoubleBuffer<uint64_t> vals(w.valsA, w.valsB);
      bytes = w.cubBytes;
      if (e == cudaSuccess) e = cub::DeviceRadixSort::SortPairs(w.cub, bytes, tiles, vals, n, 0, 62, s);
      cudaEventRecord(stop, s);
      if (e == cudaSuccess) e = cudaEventSynchronize(stop);
      float ms = 0;
      if (e == cudaSuccess) e = cudaEventElapsedTime(&ms, start, stop);
      total += ms * 1e6;
    }
  }
  if (s != nullptr) cudaStreamSynchronize(s);
  if (start != nullptr) cudaEventDestroy(start);
  if (stop != nullptr) cudaEventDestroy(stop);
  if (s != nullptr) cudaStreamDestroy(s);
  if (base != nullptr) cudaFree(base);
  return e == cudaSuccess ? total / iterations : -static_cast<double>(e);
}

}  // namespace hs
