// The sort stage of the device PointsToGrid build, `hs.nanovdb.pointsToGrid.sort`: points -> voxel keys,
// sorted into build order (by in-tile key, then stably by tile), each sorted point's input index (`perm`,
// for the reduce stage), then the start of every voxel, leaf, lower node and tile in sorted order and the
// level totals, all in the workspace
// (points-to-grid-workspace.h). The CUDA side of `sortLaunch` in
// packages/nanovdb-mr/src/nanovdb/build/points-to-grid-kernels.ts; its report words equal `sortOnHost`'s.
//
// The launcher only enqueues work on its stream (kernels, CUB sorts and a scan on workspace scratch,
// device-to-device copies): no allocation, no host synchronization, so a build can be captured into a
// CUDA graph. Counts stay on the device; kernels that depend on them read them from the report.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include <cstdint>

#include "kernel-registry.h"
#include "nanovdb/points-to-grid-sort.h"
#include "nanovdb/points-to-grid-workspace.h"

namespace hs {
namespace {

using namespace nanovdb;

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
    if (encoding == kIndexInt32) {
      const int32_t* p = reinterpret_cast<const int32_t*>(points) + 3 * i;
      c[0] = p[0], c[1] = p[1], c[2] = p[2];
    } else {
      const double origin[3] = {ox, oy, oz};
      for (int a = 0; a < 3; a++) {
        double p = encoding == kWorldFloat32 ? static_cast<double>(reinterpret_cast<const float*>(points)[3 * i + a]) : reinterpret_cast<const double*>(points)[3 * i + a];
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

// Before sort 2: each point's tile key in sort 1's order, and its rank j in that order.
__global__ void GatherTiles(const uint32_t* __restrict__ order, const uint64_t* __restrict__ tileKeys, uint64_t* __restrict__ tileOut, uint32_t* __restrict__ ranks, uint32_t used) {
  for (uint64_t j = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; j < used; j += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    tileOut[j] = tileKeys[order[j]];
    ranks[j] = static_cast<uint32_t>(j);
  }
}

// After sort 2: sorted point k's in-tile key and input index, from its rank in sort 1's order.
__global__ void GatherRanks(const uint32_t* __restrict__ ranks, const uint64_t* __restrict__ sortedIn, const uint32_t* __restrict__ order, uint64_t* __restrict__ inOut,
                            uint32_t* __restrict__ perm, uint32_t used) {
  for (uint64_t k = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; k < used; k += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    uint32_t j = ranks[k];
    inOut[k] = sortedIn[j];
    perm[k] = order[j];
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

}  // namespace

namespace nanovdb {

void EnqueueMapPoints(uint32_t* report, const uint8_t* points, int encoding, uint32_t given, uint32_t used, double inv, double ox, double oy, double oz,
                      uint64_t* inKeys, uint32_t* order, uint64_t* tileKeys, cudaStream_t stream) {
  InitReport<<<1, 64, 0, stream>>>(report, given, used);
  if (used > 0) MapPoints<<<Blocks(used, 256), 256, 0, stream>>>(points, encoding, used, inv, ox, oy, oz, inKeys, order, tileKeys, report);
}

cudaError_t SortByInTileKey(void* storage, size_t& bytes, cub::DoubleBuffer<uint64_t>& keys, cub::DoubleBuffer<uint32_t>& order, uint32_t n, cudaStream_t stream) {
  return cub::DeviceRadixSort::SortPairs(storage, bytes, keys, order, n, 0, 36, stream);
}

cudaError_t SortByTileKey(void* storage, size_t& bytes, cub::DoubleBuffer<uint64_t>& tiles, cub::DoubleBuffer<uint32_t>& ranks, uint32_t n, cudaStream_t stream) {
  return cub::DeviceRadixSort::SortPairs(storage, bytes, tiles, ranks, n, 0, 62, stream);
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
  // CUB scratch: the largest of the two sorts and the scan, checked against the reserved region.
  size_t sortBytes = 0, sort2Bytes = 0, scanBytes = 0;
  cub::DoubleBuffer<uint64_t> keys(w.keysA, w.keysB);
  cub::DoubleBuffer<uint32_t> order(reinterpret_cast<uint32_t*>(w.valsA), reinterpret_cast<uint32_t*>(w.valsB));
  // sort 2's ranks: the value buffer sort 1 leaves free, and the ids region's upper half (its lower half holds the
  // tile keys until the gather, then serves as sort 2's alternate key buffer)
  uint64_t* idsLow = reinterpret_cast<uint64_t*>(w.ids);
  uint32_t* idsHigh = reinterpret_cast<uint32_t*>(idsLow + used);
  cub::DoubleBuffer<uint32_t> probeRanks(reinterpret_cast<uint32_t*>(w.valsB), idsHigh);
  cudaError_t e = SortByInTileKey(nullptr, sortBytes, keys, order, used, stream);
  if (e == cudaSuccess) e = SortByTileKey(nullptr, sort2Bytes, keys, probeRanks, used, stream);
  if (e == cudaSuccess) e = cub::DeviceScan::InclusiveScan(nullptr, scanBytes, w.ids, w.ids, AddUint4{}, used, stream);
  if (e != cudaSuccess) return e;
  if (sortBytes > w.cubBytes || sort2Bytes > w.cubBytes || scanBytes > w.cubBytes) return cudaErrorInvalidValue;

  // the tile keys wait in the ids region until the gather
  uint64_t* tileKeys = idsLow;
  EnqueueMapPoints(w.report, a.reads[0], encoding, static_cast<uint32_t>(a.params[0]), used, a.params[3], a.params[4], a.params[5], a.params[6], w.keysA,
                   reinterpret_cast<uint32_t*>(w.valsA), tileKeys, stream);
  if (used > 0) {
    e = SortByInTileKey(w.cub, sortBytes, keys, order, used, stream);
    if (e != cudaSuccess) return e;
    // sort 2 (stable) by tile: keys = tile keys, values = ranks in sort 1's order, in the buffers sort 1 left free
    uint64_t* sortedIn = keys.Current();
    uint64_t* tileOut = keys.Alternate();
    uint32_t* order1 = order.Current();
    uint32_t* freeVals = order.Alternate();
    GatherTiles<<<Blocks(used, 256), 256, 0, stream>>>(order1, tileKeys, tileOut, freeVals, used);
    cub::DoubleBuffer<uint64_t> tiles(tileOut, idsLow);
    cub::DoubleBuffer<uint32_t> ranks(freeVals, idsHigh);
    e = SortByTileKey(w.cub, sort2Bytes, tiles, ranks, used, stream);
    if (e != cudaSuccess) return e;
    // in-tile keys and point indices through the ranks, the keys into whichever of tileOut / idsLow sort 2 left free
    uint64_t* inOut = tiles.Current() == idsLow ? tileOut : idsLow;
    GatherRanks<<<Blocks(used, 256), 256, 0, stream>>>(ranks.Current(), sortedIn, order1, inOut, w.perm, used);
    // the write stage finds the sorted tile keys in keysA and the in-tile keys in valsA (valsA is neither source now;
    // keysA may be inOut, so it is copied out first)
    e = cudaMemcpyAsync(w.valsA, inOut, 8ull * used, cudaMemcpyDeviceToDevice, stream);
    if (e == cudaSuccess && tiles.Current() != w.keysA) e = cudaMemcpyAsync(w.keysA, tiles.Current(), 8ull * used, cudaMemcpyDeviceToDevice, stream);
    if (e != cudaSuccess) return e;
    StartFlags<<<Blocks(used, 256), 256, 0, stream>>>(w.keysA, w.valsA, w.ids, used, w.report);
    e = cub::DeviceScan::InclusiveScan(w.cub, scanBytes, w.ids, w.ids, AddUint4{}, used, stream);
    if (e != cudaSuccess) return e;
    NodeStarts<<<Blocks(used, 256), 256, 0, stream>>>(w.ids, used, w.leafFirst, w.lowerFirst, w.tileFirst, w.report);
  }
  SortTotals<<<1, 1, 0, stream>>>(w.ids, used, w.report);
  return cudaGetLastError();
}

}  // namespace hs
