// The sort stage of the device PointsToGrid build, `hs.nanovdb.pointsToGrid.sort`: points -> voxel keys,
// sorted into build order (by tile, then upper, lower and leaf index, then voxel, then input index), each
// sorted point's input index (`perm`, for the reduce stage), then the start of every voxel, leaf, lower node
// and tile in sorted order and the level totals, all in the workspace (points-to-grid-workspace.h). The CUDA
// side of `sortLaunch` in packages/nanovdb-mr/src/nanovdb/build/points-to-grid-kernels.ts; its report words
// equal `sortOnHost`'s.
//
// One radix sort: a range pass finds each axis's voxel range first, so every key is the build-order key (96 bits
// of tile, upper, lower and leaf fields, x before y before z) packed to the bits that vary among the points, x of
// a level before y before z, with the levels in order (a per-axis base subtracted where the range starts, aligned
// to the level where its ends first differ, keeps the order). Keys of up to 63 bits (clouds spanning up to 2^21
// voxels per axis) sort in one CUB SortPairs; wider keys sort their low 63 bits there and the rest in six
// stable 6-bit passes of one block (a slow path for far-apart points). The sort runs only the 8-bit passes the
// keys need (27 to 34 bits for the bench's clouds: 4 or 5 passes, not 8): the width is known on the device
// only, so the sort is a cached CUDA graph per workspace (points-to-grid-sort-graph.cu) whose first kernel reads it
// from the report and picks the branch of a switch node that sorts bits [0, 8k); the map step writes the keys
// where that branch starts, so every branch leaves them in the same buffers. A workspace's first build, a stream
// under capture, or a driver without conditional nodes gets the plain sort over all 64 bits instead (the same
// order, slower). The expand
// step then unpacks each sorted key into the tile key and the in-tile key the write stage reads and flags the
// level starts by comparing neighbouring packed keys.
//
// The launcher only enqueues work on its stream (kernels, a graph launch or a CUB sort, a scan on workspace
// scratch, at most one device-to-device copy): no device allocation, no host synchronization, so a build can be
// captured into a CUDA graph. A workspace's second build also makes its sort graph (host work: captures on a
// private stream and an instantiation); its first sorts all 64 bits. Counts and key widths stay on the device; kernels that depend on them
// read them from the report.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include <cstdint>
#include <mutex>

#include "kernel-registry.h"
#include "nanovdb/points-to-grid-sort.h"
#include "nanovdb/points-to-grid-workspace.h"

namespace hs {
namespace {

using namespace nanovdb;

// The levels of the build-order key, top first: the lowest and one past the highest coordinate bit of each
// level's field (tile: bits 12..31, upper: 7..11, lower: 3..6, leaf: 0..2).
__constant__ int kLevelLo[4] = {12, 7, 3, 0};
__constant__ int kLevelHi[4] = {32, 12, 7, 3};
constexpr uint64_t kLow63 = (1ull << 63) - 1;
constexpr int kWideBits = 63;  // keys wider than this take the stable passes after the sort

__global__ void InitReport(uint32_t* report, uint32_t given, uint32_t used) {
  int i = threadIdx.x;
  if (i < 64) report[i] = 0;
  __syncthreads();
  if (i == 0) {
    report[kGiven] = given;
    report[kUsed] = used;
    report[kInvalidMin] = 0xffffffffu;
    for (int a = 0; a < 3; a++) report[kAxisMin + a] = 0xffffffffu;
  }
}

// Point i's voxel as biased coordinates (x ^ 2^31, so unsigned order is signed order). World points:
// floor((p - origin) * inv + 0.5) in double, rounded like the host; false for a point outside the index range.
__device__ __forceinline__ bool VoxelOf(const uint8_t* __restrict__ points, int encoding, uint64_t i, double inv, double ox, double oy, double oz, uint32_t u[3]) {
  bool valid = true;
  if (encoding == kIndexInt32) {
    const int32_t* p = reinterpret_cast<const int32_t*>(points) + 3 * i;
    for (int a = 0; a < 3; a++) u[a] = static_cast<uint32_t>(p[a]) ^ 0x80000000u;
    return true;
  }
  const double origin[3] = {ox, oy, oz};
  for (int a = 0; a < 3; a++) {
    double p = encoding == kWorldFloat32 ? static_cast<double>(reinterpret_cast<const float*>(points)[3 * i + a]) : reinterpret_cast<const double*>(points)[3 * i + a];
    double v = floor(__dadd_rn(__dmul_rn(__dsub_rn(p, origin[a]), inv), 0.5));
    if (!(v >= -2147483648.0 && v <= 2147483647.0)) {
      valid = false;
      u[a] = 0;
    } else {
      u[a] = static_cast<uint32_t>(static_cast<int32_t>(v)) ^ 0x80000000u;
    }
  }
  return valid;
}

// How the keys are packed, from the voxel range in the report: per axis the base subtracted and the bits kept.
struct Packing {
  uint32_t base[3];
  int bits[3];
  int total;
  int below[3];  // key bits below the tile, upper and lower fields
};

__device__ __forceinline__ int WidthAt(const Packing& p, int level, int axis) {
  int hi = p.bits[axis] < kLevelHi[level] ? p.bits[axis] : kLevelHi[level];
  return hi > kLevelLo[level] ? hi - kLevelLo[level] : 0;
}

__device__ Packing PackingOf(const uint32_t* report) {
  Packing p;
  p.total = 0;
  for (int a = 0; a < 3; a++) {
    uint32_t lo = report[kAxisMin + a], hi = report[kAxisMax + a];
    if (lo > hi) {  // no valid point
      p.base[a] = 0;
      p.bits[a] = 0;
      continue;
    }
    uint32_t differ = lo ^ hi;
    int level = 0;  // the lowest bit of the level where the range's ends first differ
    if (differ != 0) {
      int top = 31 - __clz(differ);
      level = top >= 12 ? 12 : top >= 7 ? 7 : top >= 3 ? 3 : 0;
    }
    p.base[a] = lo & ~((1u << level) - 1u);
    uint32_t range = hi - p.base[a];
    p.bits[a] = range == 0 ? 0 : 32 - __clz(range);
    p.total += p.bits[a];
  }
  int below = p.total;
  for (int l = 0; l < 3; l++) {
    for (int a = 0; a < 3; a++) below -= WidthAt(p, l, a);
    p.below[l] = below;
  }
  return p;
}

__device__ __forceinline__ unsigned __int128 Pack(const uint32_t u[3], const Packing& p) {
  unsigned __int128 k = 0;
  for (int l = 0; l < 4; l++) {
    for (int a = 0; a < 3; a++) {
      int w = WidthAt(p, l, a);
      if (w == 0) continue;
      uint32_t r = u[a] - p.base[a];
      k = (k << w) | ((r >> kLevelLo[l]) & ((1u << w) - 1u));
    }
  }
  return k;
}

__device__ __forceinline__ void Unpack(unsigned __int128 k, const Packing& p, uint32_t u[3]) {
  uint32_t r[3] = {0, 0, 0};
  for (int l = 3; l >= 0; l--) {
    for (int a = 2; a >= 0; a--) {
      int w = WidthAt(p, l, a);
      if (w == 0) continue;
      r[a] |= (static_cast<uint32_t>(k) & ((1u << w) - 1u)) << kLevelLo[l];
      k >>= w;
    }
  }
  for (int a = 0; a < 3; a++) u[a] = r[a] + p.base[a];
}

// The voxel range of the valid points (per block, then one atomic per word) and the invalid points.
__global__ void AxisRange(const uint8_t* __restrict__ points, int encoding, uint32_t used, double inv, double ox, double oy, double oz, uint32_t* report) {
  uint32_t lo[3] = {0xffffffffu, 0xffffffffu, 0xffffffffu}, hi[3] = {0, 0, 0};
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < used; i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    uint32_t u[3];
    if (VoxelOf(points, encoding, i, inv, ox, oy, oz, u)) {
      for (int a = 0; a < 3; a++) {
        lo[a] = u[a] < lo[a] ? u[a] : lo[a];
        hi[a] = u[a] > hi[a] ? u[a] : hi[a];
      }
    } else {
      atomicMin(&report[kInvalidMin], static_cast<uint32_t>(i));
      atomicAdd(&report[kInvalidCount], 1u);
    }
  }
  __shared__ uint32_t shared[6][32];
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = (blockDim.x + 31) >> 5;
  for (int a = 0; a < 3; a++) {
    for (int o = 16; o > 0; o >>= 1) {
      uint32_t l = __shfl_xor_sync(0xffffffffu, lo[a], o), h = __shfl_xor_sync(0xffffffffu, hi[a], o);
      lo[a] = l < lo[a] ? l : lo[a];
      hi[a] = h > hi[a] ? h : hi[a];
    }
    if (lane == 0) shared[a][warp] = lo[a], shared[3 + a][warp] = hi[a];
  }
  __syncthreads();
  if (threadIdx.x < 6) {
    bool isMin = threadIdx.x < 3;
    uint32_t v = shared[threadIdx.x][0];
    for (int w = 1; w < warps; w++) {
      uint32_t x = shared[threadIdx.x][w];
      v = isMin ? (x < v ? x : v) : (x > v ? x : v);
    }
    if (isMin) atomicMin(&report[kAxisMin + threadIdx.x], v);
    else atomicMax(&report[kAxisMax + threadIdx.x - 3], v);
  }
}

// Each point's packed key (all ones for an invalid point, which sorts last) and its index, into the buffer pair
// the sort branch for this key width starts from (EnqueueMapKeys); a wide key's high bits go to `high` (input order).
__global__ void MakeKeys(const uint8_t* __restrict__ points, int encoding, uint32_t used, double inv, double ox, double oy, double oz, uint64_t* __restrict__ keys0,
                         uint64_t* __restrict__ keys1, uint32_t* __restrict__ order0, uint32_t* __restrict__ order1, uint32_t startAlternate,
                         uint64_t* __restrict__ high, uint32_t* report) {
  Packing p = PackingOf(report);
  bool wide = p.total > kWideBits;
  bool alternate = (startAlternate >> SortBranchOf(static_cast<uint32_t>(p.total), report[kInvalidCount]) & 1u) != 0;
  uint64_t* keys = alternate ? keys1 : keys0;
  uint32_t* order = alternate ? order1 : order0;
  if (blockIdx.x == 0 && threadIdx.x == 0) report[kKeyBits] = static_cast<uint32_t>(p.total);
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < used; i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    uint32_t u[3];
    order[i] = static_cast<uint32_t>(i);
    if (!VoxelOf(points, encoding, i, inv, ox, oy, oz, u)) {
      keys[i] = ~0ull;
      if (wide) high[i] = ~0ull;
      continue;
    }
    unsigned __int128 k = Pack(u, p);
    if (!wide) {
      keys[i] = static_cast<uint64_t>(k);
    } else {
      keys[i] = static_cast<uint64_t>(k) & kLow63;
      high[i] = static_cast<uint64_t>(k >> 63);
    }
  }
}

// Wide keys only (more than 63 bits): after the sort by the low 63 bits, six stable passes of 6 bits over the
// high bits (at most 33; an invalid point's are all ones) carry keys, indices and high bits through the
// alternate buffers and back, in one block of 32 warps, each warp a contiguous segment in order. Not the fast path.
constexpr int kWideWarps = 32;
constexpr int kWideBins = 64;
__global__ void __launch_bounds__(1024) WidePasses(uint64_t* k0, uint64_t* k1, uint32_t* v0, uint32_t* v1, uint64_t* h0, uint64_t* h1, const uint64_t* __restrict__ highIn,
                                                   uint32_t n, const uint32_t* report) {
  if (report[kKeyBits] <= static_cast<uint32_t>(kWideBits)) return;
  __shared__ uint32_t count[kWideBins][kWideWarps];
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (uint32_t j = threadIdx.x; j < n; j += blockDim.x) h0[j] = highIn[v0[j]];
  __syncthreads();
  uint64_t segment = (static_cast<uint64_t>(n) + kWideWarps - 1) / kWideWarps;
  uint32_t begin = static_cast<uint32_t>(warp * segment < n ? warp * segment : n);
  uint32_t end = static_cast<uint32_t>(begin + segment < n ? begin + segment : n);
  for (int pass = 0; pass < 6; pass++) {
    const uint64_t* ks = pass % 2 == 0 ? k0 : k1;
    const uint32_t* vs = pass % 2 == 0 ? v0 : v1;
    const uint64_t* hs = pass % 2 == 0 ? h0 : h1;
    uint64_t* kd = pass % 2 == 0 ? k1 : k0;
    uint32_t* vd = pass % 2 == 0 ? v1 : v0;
    uint64_t* hd = pass % 2 == 0 ? h1 : h0;
    int shift = 6 * pass;
    for (int b = threadIdx.x; b < kWideBins * kWideWarps; b += blockDim.x) count[b / kWideWarps][b % kWideWarps] = 0;
    __syncthreads();
    for (uint64_t j = begin + lane; j < end; j += 32) atomicAdd(&count[(hs[j] >> shift) & (kWideBins - 1)][warp], 1u);
    __syncthreads();
    if (threadIdx.x == 0) {
      uint32_t run = 0;
      for (int d = 0; d < kWideBins; d++) {
        for (int w = 0; w < kWideWarps; w++) {
          uint32_t c = count[d][w];
          count[d][w] = run;
          run += c;
        }
      }
    }
    __syncthreads();
    for (uint64_t at = begin; at < end; at += 32) {
      uint64_t j = at + lane;
      bool live = j < end;
      uint32_t d = live ? static_cast<uint32_t>(hs[j] >> shift) & (kWideBins - 1) : kWideBins + lane;
      uint32_t peers = __match_any_sync(0xffffffffu, d);
      if (live) {
        uint32_t to = count[d][warp] + __popc(peers & ((1u << lane) - 1u));
        kd[to] = ks[j];
        vd[to] = vs[j];
        hd[to] = hs[j];
      }
      __syncwarp();
      if (live && lane == 31 - __clz(peers)) count[d][warp] += __popc(peers);
      __syncwarp();
    }
    __syncthreads();
  }
}

// After the sort: sorted point j's tile key (biased by 2^31, 20 bits per axis) into `tileOut`, in-tile key
// (upper << 21 | lower << 9 | leaf) into `inOut` and input index into `perm`, and the start flags of each level
// (0 beyond the valid points), from the packed keys of j and j - 1. `keys` must not be `tileOut`.
__global__ void ExpandKeys(const uint64_t* __restrict__ keys, const uint32_t* __restrict__ order, const uint64_t* __restrict__ high, uint64_t* __restrict__ tileOut,
                           uint64_t* __restrict__ inOut, uint32_t* __restrict__ perm, uint4* __restrict__ flags, uint32_t used, const uint32_t* report) {
  Packing p = PackingOf(report);
  bool wide = p.total > kWideBits;
  uint32_t valid = used - report[kInvalidCount];
  for (uint64_t j = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; j < used; j += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    perm[j] = order[j];
    if (j >= valid) {
      tileOut[j] = ~0ull;
      inOut[j] = 0;
      flags[j] = make_uint4(0, 0, 0, 0);
      continue;
    }
    unsigned __int128 k = wide ? (static_cast<unsigned __int128>(high[j]) << 63) | keys[j] : static_cast<unsigned __int128>(keys[j]);
    uint32_t u[3];
    Unpack(k, p, u);
    tileOut[j] = (static_cast<uint64_t>(u[0] >> 12) << 42) | (static_cast<uint64_t>(u[1] >> 12) << 21) | (u[2] >> 12);
    uint64_t upper = (((u[0] & 4095) >> 7) << 10) | (((u[1] & 4095) >> 7) << 5) | ((u[2] & 4095) >> 7);
    uint64_t lower = (((u[0] & 127) >> 3) << 8) | (((u[1] & 127) >> 3) << 4) | ((u[2] & 127) >> 3);
    uint64_t leaf = ((u[0] & 7) << 6) | ((u[1] & 7) << 3) | (u[2] & 7);
    inOut[j] = (upper << 21) | (lower << 9) | leaf;
    uint4 f = make_uint4(1, 1, 1, 1);
    if (j > 0) {
      unsigned __int128 pk = wide ? (static_cast<unsigned __int128>(high[j - 1]) << 63) | keys[j - 1] : static_cast<unsigned __int128>(keys[j - 1]);
      unsigned __int128 d = k ^ pk;
      bool tile = (d >> p.below[0]) != 0;
      bool lowerNode = tile || (d >> p.below[1]) != 0;
      bool leafNode = lowerNode || (d >> p.below[2]) != 0;
      f = make_uint4(leafNode || d != 0, leafNode, lowerNode, tile);
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

}  // namespace

namespace nanovdb {

void EnqueueMapKeys(uint32_t* report, const uint8_t* points, int encoding, uint32_t given, uint32_t used, double inv, double ox, double oy, double oz,
                    uint64_t* keys, uint64_t* keysAlternate, uint32_t* order, uint32_t* orderAlternate, uint32_t startAlternate, uint64_t* high,
                    cudaStream_t stream) {
  InitReport<<<1, 64, 0, stream>>>(report, given, used);
  if (used == 0) return;
  unsigned blocks = Blocks(used, 256);
  AxisRange<<<blocks < 1024 ? blocks : 1024, 256, 0, stream>>>(points, encoding, used, inv, ox, oy, oz, report);
  MakeKeys<<<blocks, 256, 0, stream>>>(points, encoding, used, inv, ox, oy, oz, keys, keysAlternate, order, orderAlternate, startAlternate, high, report);
}

cudaError_t SortBuildKeys(void* storage, size_t& bytes, cub::DoubleBuffer<uint64_t>& keys, cub::DoubleBuffer<uint32_t>& order, uint32_t n, cudaStream_t stream) {
  return cub::DeviceRadixSort::SortPairs(storage, bytes, keys, order, n, 0, 64, stream);
}

}  // namespace nanovdb

/**
 * hs.nanovdb.pointsToGrid.sort: reads [points], writes [workspace]; params [given, used, encoding
 * (0 i32 index, 1 f32 world, 2 f64 world), 1/voxelSize, origin x, y, z].
 */
cudaError_t LaunchPointsToGridSort(const KernelArgs& a, cudaStream_t stream) {
  if (a.readCount != 1 || a.writeCount != 1 || a.paramCount != 7 || !IsCount(a.params[0]) || !IsCount(a.params[1]) || a.params[1] > a.params[0]) return cudaErrorInvalidValue;
  int encoding = static_cast<int>(a.params[2]);
  if (a.params[2] != encoding || encoding < kIndexInt32 || encoding > kWorldFloat64) return cudaErrorInvalidValue;
  uint32_t used = static_cast<uint32_t>(a.params[1]);
  uint64_t elementBytes = encoding == kWorldFloat64 ? 8 : 4;
  Workspace w = Carve(a.writes[0], used);
  if (a.readBytes[0] < 3 * elementBytes * used || a.writeBytes[0] < w.total) return cudaErrorInvalidValue;
  // Scratch while sorting: keys in keysB / keysA, indices in the two halves of valsB, a wide key's high bits in
  // valsA (input order) and in leafFirst..lowerFirst / tileFirst..perm (8n bytes each); the ids region is free.
  uint32_t* v0 = reinterpret_cast<uint32_t*>(w.valsB);
  uint32_t* v1 = v0 + used;
  uint64_t* highIn = w.valsA;
  uint64_t* h0 = reinterpret_cast<uint64_t*>(w.leafFirst);
  uint64_t* h1 = reinterpret_cast<uint64_t*>(w.tileFirst);
  cub::DoubleBuffer<uint64_t> keys(w.keysB, w.keysA);
  cub::DoubleBuffer<uint32_t> order(v0, v1);
  size_t sortBytes = 0, scanBytes = 0;
  cudaError_t e = SortBuildKeys(nullptr, sortBytes, keys, order, used, stream);
  if (e == cudaSuccess) e = cub::DeviceScan::InclusiveScan(nullptr, scanBytes, w.ids, w.ids, AddUint4{}, used, stream);
  if (e != cudaSuccess) return e;
  if (sortBytes > w.cubBytes || scanBytes > w.cubBytes) return cudaErrorInvalidValue;

  // The narrowed sort: its graph picks the branch for the key width on the device, and the map step fills the
  // buffers that branch starts from; the cache lock keeps the graph alive until it is launched.
  std::unique_lock<std::mutex> held = LockSortGraphs();
  const SortGraph* graph = used > 0 ? FindSortGraph(w, a.writes[0], used, stream) : nullptr;
  EnqueueMapKeys(w.report, a.reads[0], encoding, static_cast<uint32_t>(a.params[0]), used, a.params[3], a.params[4], a.params[5], a.params[6], w.keysB, w.keysA, v0,
                 v1, graph != nullptr ? graph->startAlternate : 0, highIn, stream);
  if (used > 0) {
    if (graph != nullptr) {
      e = cudaGraphLaunch(graph->exec, stream);  // keys end in keysB, indices in v0, whatever the branch
      held.unlock();
      if (e != cudaSuccess) return e;
    } else {
      held.unlock();
      // the fallback (a workspace's first build, a stream under capture, no conditional nodes): all 64 bits
      e = SortBuildKeys(w.cub, sortBytes, keys, order, used, stream);
      if (e != cudaSuccess) return e;
      // the expand step writes the tile keys into keysA while it reads neighbouring packed keys: those must be elsewhere
      if (keys.Current() == w.keysA) {
        e = cudaMemcpyAsync(w.keysB, w.keysA, 8ull * used, cudaMemcpyDeviceToDevice, stream);
        if (e != cudaSuccess) return e;
      }
    }
    WidePasses<<<1, 1024, 0, stream>>>(w.keysB, w.keysA, order.Current(), order.Alternate(), h0, h1, highIn, used, w.report);
    // the write stage finds the sorted tile keys in keysA and the in-tile keys in valsA
    ExpandKeys<<<Blocks(used, 256), 256, 0, stream>>>(w.keysB, order.Current(), h0, w.keysA, w.valsA, w.perm, w.ids, used, w.report);
    e = cub::DeviceScan::InclusiveScan(w.cub, scanBytes, w.ids, w.ids, AddUint4{}, used, stream);
    if (e != cudaSuccess) return e;
    NodeStarts<<<Blocks(used, 256), 256, 0, stream>>>(w.ids, used, w.leafFirst, w.lowerFirst, w.tileFirst, w.report);
  }
  SortTotals<<<1, 1, 0, stream>>>(w.ids, used, w.report);
  return cudaGetLastError();
}

}  // namespace hs
