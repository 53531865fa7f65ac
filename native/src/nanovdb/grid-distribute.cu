// The device side of distributedPointsToGrid (issue 27 item 3): the split of a point cloud by root tile into
// parts and the patch that moves the offsets of a part's nodes copied into the merged grid. The CUDA side of
// the launches in packages/nanovdb-mr/src/nanovdb/build/distributed-split.ts and grid-merge-device.ts, whose
// host implementations give the same grid bytes.
//
// The split's meta block (u64 words, k parts): [0] the first point that maps to no voxel (all ones: none),
// [1, k] the parts' point counts, [k + 1, 2k] the scatter's cursors, [2k + 1, 3k - 1] the k - 1 boundary keys.
// A point's part is the number of boundaries at or below its root tile key (x, y, z tiles of the biased voxel
// coordinate, 20 bits each, x highest: the build's order of root tiles).
#include <cstdint>

#include "kernel-registry.h"
#include "nanovdb/points-to-grid-sort.h"

namespace hs {
namespace {

using namespace nanovdb;

constexpr unsigned kSplitThreads = 256;
constexpr int kSplitItems = 8;
constexpr int kMaxParts = 256;

// The root tile key of point i, false for a point outside the index range (floor((p - origin) * inv + 0.5) in
// double with one rounding per operation, as the host and the sort kernel compute it).
__device__ __forceinline__ bool TileKeyOf(const uint8_t* __restrict__ points, int encoding, uint64_t i, double inv, double ox, double oy, double oz, uint64_t* key) {
  uint32_t u[3];
  if (encoding == kIndexInt32) {
    const int32_t* p = reinterpret_cast<const int32_t*>(points) + 3 * i;
    for (int a = 0; a < 3; a++) u[a] = static_cast<uint32_t>(p[a]) ^ 0x80000000u;
  } else {
    const double origin[3] = {ox, oy, oz};
    for (int a = 0; a < 3; a++) {
      double p = encoding == kWorldFloat32 ? static_cast<double>(reinterpret_cast<const float*>(points)[3 * i + a]) : reinterpret_cast<const double*>(points)[3 * i + a];
      double v = floor(__dadd_rn(__dmul_rn(__dsub_rn(p, origin[a]), inv), 0.5));
      if (!(v >= -2147483648.0 && v <= 2147483647.0)) return false;
      u[a] = static_cast<uint32_t>(static_cast<int32_t>(v)) ^ 0x80000000u;
    }
  }
  *key = (static_cast<uint64_t>(u[0] >> 12) << 42) | (static_cast<uint64_t>(u[1] >> 12) << 21) | static_cast<uint64_t>(u[2] >> 12);
  return true;
}

__device__ __forceinline__ int PartOf(uint64_t key, const uint64_t* bounds, int k) {
  int p = 0;
  while (p < k - 1 && key >= bounds[p]) p++;
  return p;
}

// Counts each part's points and the first invalid point: shared counters per block, one atomic per part.
__global__ void SplitCount(const uint8_t* __restrict__ points, int encoding, uint64_t n, double inv, double ox, double oy, double oz, int k, const uint64_t* __restrict__ bounds,
                           unsigned long long* meta) {
  __shared__ unsigned long long counts[kMaxParts];
  __shared__ uint64_t shared[kMaxParts];
  for (int p = threadIdx.x; p < k; p += blockDim.x) {
    counts[p] = 0;
    if (p < k - 1) shared[p] = bounds[p];
  }
  __syncthreads();
  unsigned long long firstInvalid = ~0ull;
  uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    uint64_t key;
    if (!TileKeyOf(points, encoding, i, inv, ox, oy, oz, &key)) {
      if (i < firstInvalid) firstInvalid = i;
      continue;
    }
    atomicAdd(&counts[PartOf(key, shared, k)], 1ull);
  }
  if (firstInvalid != ~0ull) atomicMin(&meta[0], firstInvalid);
  __syncthreads();
  for (int p = threadIdx.x; p < k; p += blockDim.x) {
    if (counts[p] != 0) atomicAdd(&meta[1 + p], counts[p]);
  }
}

// Scatters each point into its part's run of `out` (part p from the sum of the counts before it). Within a part
// the order is the order the blocks reserved their slots in: the build of a part does not depend on it.
template <typename Triplet>
__global__ void SplitScatter(const uint8_t* __restrict__ points, int encoding, uint64_t n, double inv, double ox, double oy, double oz, int k, const uint64_t* __restrict__ bounds,
                             const unsigned long long* __restrict__ counts, unsigned long long* cursors, Triplet* __restrict__ out) {
  __shared__ uint64_t shared[kMaxParts];
  __shared__ unsigned long long local[kMaxParts];
  __shared__ unsigned long long base[kMaxParts];
  for (int p = threadIdx.x; p < k; p += blockDim.x) {
    local[p] = 0;
    if (p < k - 1) shared[p] = bounds[p];
  }
  __syncthreads();
  const Triplet* in = reinterpret_cast<const Triplet*>(points);
  uint64_t first = static_cast<uint64_t>(blockIdx.x) * (kSplitThreads * kSplitItems);
  int part[kSplitItems];
  unsigned long long slot[kSplitItems];
#pragma unroll
  for (int j = 0; j < kSplitItems; j++) {
    uint64_t i = first + static_cast<uint64_t>(j) * kSplitThreads + threadIdx.x;
    part[j] = -1;
    uint64_t key;
    if (i < n && TileKeyOf(points, encoding, i, inv, ox, oy, oz, &key)) {
      part[j] = PartOf(key, shared, k);
      slot[j] = atomicAdd(&local[part[j]], 1ull);
    }
  }
  __syncthreads();
  for (int p = threadIdx.x; p < k; p += blockDim.x) {
    unsigned long long start = 0;
    for (int q = 0; q < p; q++) start += counts[q];
    base[p] = local[p] == 0 ? 0 : start + atomicAdd(&cursors[p], local[p]);
  }
  __syncthreads();
#pragma unroll
  for (int j = 0; j < kSplitItems; j++) {
    if (part[j] < 0) continue;
    uint64_t i = first + static_cast<uint64_t>(j) * kSplitThreads + threadIdx.x;
    out[base[part[j]] + slot[j]] = in[i];
  }
}

struct Triplet4 {
  uint32_t v[3];
};
struct Triplet8 {
  uint64_t v[3];
};

// Mode 0: adds delta to the child entry of every set child-mask bit of `count` internal nodes (one thread per
// 32-bit mask word). Mode 1: adds delta to the i64 at `field` of each of `count` records.
__global__ void ShiftChildren(uint8_t* nodes, uint64_t count, uint64_t stride, uint64_t mask, uint64_t table, uint64_t tableStride, uint32_t words, int64_t delta) {
  uint64_t t = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= count * words) return;
  uint64_t node = t / words;
  uint32_t w = static_cast<uint32_t>(t % words);
  uint8_t* at = nodes + node * stride;
  uint32_t bits = reinterpret_cast<const uint32_t*>(at + mask)[w];
  while (bits != 0) {
    int e = 32 * static_cast<int>(w) + __ffs(bits) - 1;
    bits &= bits - 1;
    *reinterpret_cast<int64_t*>(at + table + tableStride * e) += delta;
  }
}

__global__ void ShiftField(uint8_t* records, uint64_t count, uint64_t stride, uint64_t field, int64_t delta) {
  uint64_t t = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t < count) *reinterpret_cast<int64_t*>(records + t * stride + field) += delta;
}

bool IsCount(double v) { return v >= 0 && v <= 9007199254740992.0 && v == static_cast<double>(static_cast<uint64_t>(v)); }

// Checks the split launch's shared shape: reads [points, bounds], params [n, encoding, inv, ox, oy, oz, k].
bool SplitShape(const KernelArgs& a, uint64_t* n, int* encoding, int* k) {
  if (a.paramCount != 7 || !IsCount(a.params[0]) || !IsIntParam(a.params[1], 0) || !IsIntParam(a.params[6], 1) || a.params[6] > kMaxParts) return false;
  *n = static_cast<uint64_t>(a.params[0]);
  *encoding = static_cast<int>(a.params[1]);
  *k = static_cast<int>(a.params[6]);
  if (*encoding < kIndexInt32 || *encoding > kWorldFloat64) return false;
  uint64_t element = *encoding == kWorldFloat64 ? 8 : 4;
  return a.readBytes[0] >= 3 * element * *n && a.readBytes[1] >= 8 * static_cast<uint64_t>(*k - 1);
}

unsigned BlocksFor(uint64_t items, uint64_t perBlock, uint64_t most) {
  uint64_t blocks = (items + perBlock - 1) / perBlock;
  return static_cast<unsigned>(blocks < most ? blocks : most);
}

}  // namespace

/**
 * hs.nanovdb.distributed.splitCount: reads [points, bounds], writes [meta words 0..k]; params [n, encoding, inv,
 * ox, oy, oz, k]. Adds each part's points to its count and lowers word 0 to the first invalid point.
 */
cudaError_t LaunchDistributedSplitCount(const KernelArgs& a, cudaStream_t stream) {
  uint64_t n;
  int encoding, k;
  if (a.readCount != 2 || a.writeCount != 1 || !SplitShape(a, &n, &encoding, &k) || a.writeBytes[0] < 8 * static_cast<uint64_t>(k + 1)) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  unsigned blocks = BlocksFor(n, kSplitThreads * 4, 4096);
  SplitCount<<<blocks, kSplitThreads, 0, stream>>>(a.reads[0], encoding, n, a.params[2], a.params[3], a.params[4], a.params[5], k, reinterpret_cast<const uint64_t*>(a.reads[1]),
                                                    reinterpret_cast<unsigned long long*>(a.writes[0]));
  return cudaGetLastError();
}

/**
 * hs.nanovdb.distributed.splitScatter: reads [points, bounds, counts (k words)], writes [out (the points by part),
 * cursors (k words, zero before)]; params as the count's. Every point must map to a voxel (the count said so).
 */
cudaError_t LaunchDistributedSplitScatter(const KernelArgs& a, cudaStream_t stream) {
  uint64_t n;
  int encoding, k;
  if (a.readCount != 3 || a.writeCount != 2 || !SplitShape(a, &n, &encoding, &k) || a.readBytes[2] < 8 * static_cast<uint64_t>(k) || a.writeBytes[1] < 8 * static_cast<uint64_t>(k)) {
    return cudaErrorInvalidValue;
  }
  uint64_t element = encoding == kWorldFloat64 ? 8 : 4;
  if (a.writeBytes[0] < 3 * element * n) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  uint64_t perBlock = static_cast<uint64_t>(kSplitThreads) * kSplitItems;
  uint64_t blocks = (n + perBlock - 1) / perBlock;
  if (blocks > 0x7fffffffull) return cudaErrorInvalidValue;
  const uint64_t* bounds = reinterpret_cast<const uint64_t*>(a.reads[1]);
  const unsigned long long* counts = reinterpret_cast<const unsigned long long*>(a.reads[2]);
  unsigned long long* cursors = reinterpret_cast<unsigned long long*>(a.writes[1]);
  if (element == 8) {
    SplitScatter<Triplet8><<<static_cast<unsigned>(blocks), kSplitThreads, 0, stream>>>(a.reads[0], encoding, n, a.params[2], a.params[3], a.params[4], a.params[5], k, bounds, counts,
                                                                                         cursors, reinterpret_cast<Triplet8*>(a.writes[0]));
  } else {
    SplitScatter<Triplet4><<<static_cast<unsigned>(blocks), kSplitThreads, 0, stream>>>(a.reads[0], encoding, n, a.params[2], a.params[3], a.params[4], a.params[5], k, bounds, counts,
                                                                                         cursors, reinterpret_cast<Triplet4*>(a.writes[0]));
  }
  return cudaGetLastError();
}

/**
 * hs.nanovdb.gridMerge.shift: writes [records]; params [0, count, stride, mask, table, tableStride, log2Dim, delta]
 * (internal nodes: every child entry) or [1, count, stride, field, delta] (an i64 field per record).
 */
cudaError_t LaunchGridMergeShift(const KernelArgs& a, cudaStream_t stream) {
  if (a.readCount != 0 || a.writeCount != 1 || a.paramCount < 5) return cudaErrorInvalidValue;
  double mode = a.params[0];
  if (!IsCount(a.params[1]) || !IsCount(a.params[2]) || !IsCount(a.params[3])) return cudaErrorInvalidValue;
  uint64_t count = static_cast<uint64_t>(a.params[1]);
  uint64_t stride = static_cast<uint64_t>(a.params[2]);
  if (stride % 8 != 0 || count * stride > a.writeBytes[0] || (reinterpret_cast<uintptr_t>(a.writes[0]) & 7) != 0) return cudaErrorInvalidValue;
  if (mode == 0) {
    if (a.paramCount != 8 || !IsCount(a.params[4]) || !IsCount(a.params[5]) || !IsIntParam(a.params[6], 3) || a.params[6] > 5) return cudaErrorInvalidValue;
    double delta = a.params[7];
    if (delta != static_cast<double>(static_cast<int64_t>(delta))) return cudaErrorInvalidValue;
    uint64_t mask = static_cast<uint64_t>(a.params[3]);
    uint64_t table = static_cast<uint64_t>(a.params[4]);
    uint64_t tableStride = static_cast<uint64_t>(a.params[5]);
    uint32_t entries = 1u << (3 * static_cast<int>(a.params[6]));
    uint32_t words = entries / 32;
    if (mask % 4 != 0 || table % 8 != 0 || tableStride % 8 != 0 || mask + entries / 8 > stride || table + tableStride * entries > stride) return cudaErrorInvalidValue;
    if (count == 0 || delta == 0) return cudaSuccess;
    uint64_t threads = count * words;
    ShiftChildren<<<static_cast<unsigned>((threads + 255) / 256), 256, 0, stream>>>(a.writes[0], count, stride, mask, table, tableStride, words, static_cast<int64_t>(delta));
    return cudaGetLastError();
  }
  if (mode == 1) {
    if (a.paramCount != 5) return cudaErrorInvalidValue;
    double delta = a.params[4];
    uint64_t field = static_cast<uint64_t>(a.params[3]);
    if (delta != static_cast<double>(static_cast<int64_t>(delta)) || field % 8 != 0 || field + 8 > stride) return cudaErrorInvalidValue;
    if (count == 0 || delta == 0) return cudaSuccess;
    ShiftField<<<static_cast<unsigned>((count + 255) / 256), 256, 0, stream>>>(a.writes[0], count, stride, field, static_cast<int64_t>(delta));
    return cudaGetLastError();
  }
  return cudaErrorInvalidValue;
}

}  // namespace hs
