// What the sort stage of the device PointsToGrid build (points-to-grid-sort.cu) shares with the native
// benchmark baseline (bench-points-to-grid-sorts.cu): the point mapping and the two radix sorts, so the
// baseline times exactly the build's CUB calls. Each only enqueues work on `stream`.
#pragma once
#include <cub/util_type.cuh>
#include <cuda_runtime_api.h>

#include <cstdint>

namespace hs::nanovdb {

/** How the points are stored (param 2 of the sort launch; PointEncoding in points-to-grid-kernels.ts). */
enum PointEncoding : int {
  kIndexInt32 = 0,
  kWorldFloat32 = 1,
  kWorldFloat64 = 2,
};

/**
 * Clears the report (64 words) and writes `given` and `used` into it; then, when `used` > 0, maps each
 * of the `used` points to its in-tile key (`inKeys`), its index (`order`) and its tile key (`tileKeys`;
 * all ones for an invalid point, which is counted in the report). `inv` is 1 / voxel size, `o*` the origin.
 */
void EnqueueMapPoints(uint32_t* report, const uint8_t* points, int encoding, uint32_t given, uint32_t used, double inv, double ox, double oy, double oz,
                      uint64_t* inKeys, uint32_t* order, uint64_t* tileKeys, cudaStream_t stream);

/**
 * Sort 1: `n` in-tile keys (upper << 21 | lower << 9 | leaf, 36 bits) with their point indices. CUB's
 * DeviceRadixSort::SortPairs: a null `storage` only sets `bytes` to the scratch it needs.
 */
cudaError_t SortByInTileKey(void* storage, size_t& bytes, cub::DoubleBuffer<uint64_t>& keys, cub::DoubleBuffer<uint32_t>& order, uint32_t n, cudaStream_t stream);

/**
 * Sort 2 (stable): `n` tile keys (62 bits) with their ranks in sort 1's order (u32), from which the in-tile keys
 * and point indices are gathered after it; scratch as for SortByInTileKey.
 */
cudaError_t SortByTileKey(void* storage, size_t& bytes, cub::DoubleBuffer<uint64_t>& tiles, cub::DoubleBuffer<uint32_t>& ranks, uint32_t n, cudaStream_t stream);

}  // namespace hs::nanovdb
