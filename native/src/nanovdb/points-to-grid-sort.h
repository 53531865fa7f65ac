// What the sort stage of the device PointsToGrid build (points-to-grid-sort.cu) shares with the native
// benchmark baseline (bench-points-to-grid-sorts.cu): the point mapping into sort keys and the one radix
// sort, so the baseline times exactly the build's CUB call. Each only enqueues work on `stream`.
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
 * Clears the report (64 words) and writes `given` and `used` into it; then, when `used` > 0, finds the
 * voxel range of the valid points (report words kAxisMin, kAxisMax; invalid points counted) and maps each of
 * the `used` points to its sort key (`keys`: the build-order key packed to the occupied bits, kKeyBits of
 * them; all ones for an invalid point) and its index (`order`). A key wider than 63 bits keeps its low 63 bits
 * in `keys` and its high bits in `high` (input order), for the stable passes after the sort.
 */
void EnqueueMapKeys(uint32_t* report, const uint8_t* points, int encoding, uint32_t given, uint32_t used, double inv, double ox, double oy, double oz,
                    uint64_t* keys, uint32_t* order, uint64_t* high, cudaStream_t stream);

/**
 * The build's one radix sort: `n` packed keys with their point indices (CUB's DeviceRadixSort::SortPairs,
 * stable); a null `storage` only sets `bytes` to the scratch it needs.
 */
cudaError_t SortBuildKeys(void* storage, size_t& bytes, cub::DoubleBuffer<uint64_t>& keys, cub::DoubleBuffer<uint32_t>& order, uint32_t n, cudaStream_t stream);

}  // namespace hs::nanovdb
