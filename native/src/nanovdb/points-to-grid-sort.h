// What the sort stage of the device PointsToGrid build (points-to-grid-sort.cu, points-to-grid-sort-graph.cu)
// shares with the native benchmark baseline (bench-points-to-grid-sorts.cu): the point mapping into sort keys,
// the radix sort over the key bits the cloud occupies (a cached CUDA graph that picks its branch on the device)
// and the plain 64-bit sort it falls back to, so the baseline times exactly the build's CUB calls. Each only
// enqueues work on `stream`.
#pragma once
#include <cub/util_type.cuh>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <mutex>

namespace hs::nanovdb {

struct Workspace;

/** How the points are stored (param 2 of the sort launch; PointEncoding in points-to-grid-kernels.ts). */
enum PointEncoding : int {
  kIndexInt32 = 0,
  kWorldFloat32 = 1,
  kWorldFloat64 = 2,
};

/**
 * The branches of the narrowed sort: branch b sorts the keys' bits [0, 8 * (b + 1)), one CUB onesweep pass of
 * 8 bits each, so a branch runs as many passes as the key bits need and no more.
 */
constexpr int kSortBranches = 8;
constexpr int kSortBranchBits = 8;

/**
 * The branch that sorts keys of `keyBits` bits (report word kKeyBits) when `invalid` points (kInvalidCount) are
 * among them: an invalid point's key is all ones and must sort after every valid key, so with invalid points
 * the sort needs one bit more than the widest valid key. Keys wider than 63 bits take the last (64-bit) branch,
 * as the plain sort: their low 63 bits, then the stable passes. The one rule for MakeKeys (which buffers it
 * fills) and the graph's branch selector.
 */
__host__ __device__ inline int SortBranchOf(uint32_t keyBits, uint32_t invalid) {
  uint32_t need = keyBits + (invalid != 0 ? 1u : 0u);
  if (need > kSortBranches * kSortBranchBits) need = kSortBranches * kSortBranchBits;
  return need <= static_cast<uint32_t>(kSortBranchBits) ? 0 : static_cast<int>((need - 1) / kSortBranchBits);
}

/**
 * Clears the report (64 words) and writes `given` and `used` into it; then, when `used` > 0, finds the
 * voxel range of the valid points (report words kAxisMin, kAxisMax; invalid points counted) and maps each of
 * the `used` points to its sort key (the build-order key packed to the occupied bits, kKeyBits of them; all
 * ones for an invalid point) and its index, into `keys` and `order`, or into `keysAlternate` and
 * `orderAlternate` when bit SortBranchOf(...) of `startAlternate` is set (so that a sort branch with an odd
 * pass count leaves its output in `keys` / `order`; 0: always the first pair). A key wider than 63 bits keeps its
 * low 63 bits in the keys and its high bits in `high` (input order), for the stable passes after the sort.
 */
void EnqueueMapKeys(uint32_t* report, const uint8_t* points, int encoding, uint32_t given, uint32_t used, double inv, double ox, double oy, double oz,
                    uint64_t* keys, uint64_t* keysAlternate, uint32_t* order, uint32_t* orderAlternate, uint32_t startAlternate, uint64_t* high,
                    cudaStream_t stream);

/**
 * The plain radix sort, over all 64 bits: `n` packed keys with their point indices (CUB's
 * DeviceRadixSort::SortPairs, stable); a null `storage` only sets `bytes` to the scratch it needs. The fallback
 * of the narrowed sort below and the benchmark's "same keys, 64 bits" row.
 */
cudaError_t SortBuildKeys(void* storage, size_t& bytes, cub::DoubleBuffer<uint64_t>& keys, cub::DoubleBuffer<uint32_t>& order, uint32_t n, cudaStream_t stream);

/**
 * The narrowed sort of one workspace: an executable graph of a one-thread kernel that reads kKeyBits and
 * kInvalidCount from the report and a switch node over kSortBranches bodies, body b CUB's SortPairs over bits
 * [0, 8 * (b + 1)) of the workspace's keys (keysB / keysA) and indices (the halves of valsB), in the workspace's
 * CUB region. Every branch leaves the sorted keys in keysB and the indices in valsB's first half, when the map
 * step started them where `startAlternate` says (bit b: branch b starts in keysA and valsB's second half).
 */
struct SortGraph {
  cudaGraphExec_t exec;
  uint32_t startAlternate;
};

/** The lock of the sort graph cache: hold it from FindSortGraph until the graph is launched. */
std::unique_lock<std::mutex> LockSortGraphs();

/**
 * The cached sort graph of the workspace `w` (at `base`, `n` > 0 points) on the current device. The first call for
 * a workspace only records it and returns null; the second makes and instantiates its graph (host work: captures on
 * a private stream, no device synchronization, no device memory), later ones return it. A fixed table of 8
 * workspaces, least recently used evicted (its graph destroyed; a launch in flight completes). Null also when
 * `stream` is being captured (a graph launch cannot be) or the graph cannot be made (a driver without conditional
 * nodes, CUDA < 12.8; remembered for the workspace, not retried). On null the caller sorts all 64 bits with
 * SortBuildKeys. `made`, when given, receives the status of making the graph when this call made it. Call with the
 * lock held; the graph stays valid while it is held. ReleaseSortGraphs (kernel-registry.h) empties the table.
 */
const SortGraph* FindSortGraph(const Workspace& w, const uint8_t* base, uint32_t n, cudaStream_t stream, cudaError_t* made = nullptr);

}  // namespace hs::nanovdb
