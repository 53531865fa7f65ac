// The kernel registry: each kernel is looked up by the name its TypeScript launch builder uses and
// receives the launch's ranges (read ranges, then write ranges, as addresses and byte lengths) and
// scalar params in the same order. A launcher validates what it needs and returns a cudaError_t.
#pragma once
#include <cuda_runtime_api.h>
#include <js_native_api_types.h>

#include <cstdint>

namespace hs {

constexpr int kMaxKernelRanges = 8;
constexpr int kMaxKernelParams = 8;

struct KernelArgs {
  const uint8_t* reads[kMaxKernelRanges];
  uint64_t readBytes[kMaxKernelRanges];
  int readCount;
  uint8_t* writes[kMaxKernelRanges];
  uint64_t writeBytes[kMaxKernelRanges];
  int writeCount;
  double params[kMaxKernelParams];
  int paramCount;
};

using KernelLauncher = cudaError_t (*)(const KernelArgs& args, cudaStream_t stream);

/**
 * A registry entry. `launch` is null for a host-staged kernel: the backend runs the launch's host
 * implementation in stream order on pinned copies of its ranges and copies the writes back (for kernels
 * whose work is host-side by nature, such as the test kernel that records its launch arguments).
 */
struct KernelEntry {
  const char* name;
  KernelLauncher launch;
};

// image-kernels.cu
cudaError_t LaunchRgbaToGray(const KernelArgs& args, cudaStream_t stream);
cudaError_t LaunchDownscale2x(const KernelArgs& args, cudaStream_t stream);
// nanovdb/grid-preview-kernel.cu (examples/scan-to-volume)
cudaError_t LaunchGridPreview(const KernelArgs& args, cudaStream_t stream);
// nanovdb/points-to-grid-sort.cu, points-to-grid-write.cu, points-to-grid-reduce.cu, grid-checksum.cu (@hs/nanovdb-mr PointsToGrid)
cudaError_t LaunchPointsToGridSort(const KernelArgs& args, cudaStream_t stream);
cudaError_t LaunchPointsToGridWrite(const KernelArgs& args, cudaStream_t stream);
cudaError_t LaunchPointsToGridReduce(const KernelArgs& args, cudaStream_t stream);
cudaError_t LaunchPointsToGridChannel(const KernelArgs& args, cudaStream_t stream);
cudaError_t LaunchGridChecksum(const KernelArgs& args, cudaStream_t stream);
// nanovdb/grid-distribute.cu (@hs/nanovdb-mr distributedPointsToGrid: split by root tile, merge patch)
cudaError_t LaunchDistributedSplitCount(const KernelArgs& args, cudaStream_t stream);
cudaError_t LaunchDistributedSplitScatter(const KernelArgs& args, cudaStream_t stream);
cudaError_t LaunchGridMergeShift(const KernelArgs& args, cudaStream_t stream);

namespace nanovdb {
/**
 * Destroys the PointsToGrid sort's cached CUDA graphs (nanovdb/points-to-grid-sort-graph.cu), when an environment
 * of the addon is torn down (the table is the process's: builds in other environments make theirs again).
 */
void ReleaseSortGraphs();
}  // namespace nanovdb

/**
 * Kernels another addon adds to the registry (`addKernels(table)`; the test addon's hs.test.*, see
 * test-addon/test-kernels.cu). `size` is `sizeof(KernelTable)` of the addon that made it; the entries and
 * their names stay valid for the life of the process (static storage of an addon, never unloaded). Both
 * addons are built from this header, so `KernelArgs` is laid out the same on both sides.
 */
struct KernelTable {
  uint32_t size;
  uint32_t count;
  const KernelEntry* entries;
};

/** The type tag of the Node-API external that carries a `const KernelTable*`. */
constexpr napi_type_tag kKernelTableTypeTag = {0x6873'6b65'726e'656cULL, 0x7461'626c'6576'3031ULL};

/** True when `value` is an integer in [min, 2^31). */
inline bool IsIntParam(double value, double min) { return value >= min && value < 2147483648.0 && value == static_cast<double>(static_cast<int64_t>(value)); }

}  // namespace hs
