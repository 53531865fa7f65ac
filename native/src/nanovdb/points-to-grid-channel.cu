// The channel stage of a bounded OnIndex build with a sidecar channel, `hs.nanovdb.pointsToGrid.channel`: after the
// write stage wrote the nodes (their bytes, the report's grid size, are known only on the device), it appends the
// channel as NanoVDB blind data right after the nodes, as `attachChannels` lays it out: the 288-byte record (from a
// record template the caller uploaded once, its value count set to voxels + 1), slot 0 (the template's background
// value), the reduced values of the kept voxels (the reduce stage's values region, voxel k at k * valueSize), zero
// padding to 32 bytes; then GridData's gridSize, blind-metadata offset and count, and the report's grid size. No host
// read-back, so the bounded build stays capturable. The CUDA side of `channelLaunch` in
// packages/nanovdb-mr/src/nanovdb/build/points-to-grid-kernels.ts (its host twin writes the same bytes).
#include <cstdint>

#include "kernel-registry.h"
#include "nanovdb/grid-layout.h"
#include "nanovdb/points-to-grid-workspace.h"

namespace hs {
namespace {

using namespace nanovdb;

__device__ __forceinline__ uint64_t U64(const uint32_t* report, int word) {
  return static_cast<uint64_t>(report[word]) | (static_cast<uint64_t>(report[word + 1]) << 32);
}

// Bytes of the channel (record, slot 0, the voxels' values, padding) for `voxels` voxels; 0 when it does not fit
// the grid range or the values region (never for ranges sized as `channelLaunch` documents).
__device__ __forceinline__ uint64_t ChannelBytes(uint64_t nodesEnd, uint32_t voxels, uint32_t valueSize, uint64_t voxelCapacity, uint64_t gridBytes) {
  uint64_t data = static_cast<uint64_t>(valueSize) * (static_cast<uint64_t>(voxels) + 1);
  uint64_t total = kBlindMetadataSize + (data + kDataAlignment - 1) / kDataAlignment * kDataAlignment;
  return voxels > voxelCapacity || nodesEnd + total > gridBytes ? 0 : total;
}

__global__ void PlaceChannel(uint8_t* grid, uint64_t gridBytes, const uint8_t* __restrict__ values, const uint8_t* __restrict__ head, uint32_t valueSize, uint64_t voxelCapacity,
                             const uint32_t* report) {
  uint64_t nodesEnd = U64(report, kGridSize);
  uint32_t voxels = report[kVoxels];
  uint64_t total = ChannelBytes(nodesEnd, voxels, valueSize, voxelCapacity, gridBytes);
  uint64_t headBytes = kBlindMetadataSize + valueSize;
  uint64_t dataEnd = headBytes + static_cast<uint64_t>(valueSize) * voxels;
  uint8_t* out = grid + nodesEnd;
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < total; i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    out[i] = i < headBytes ? head[i] : i < dataEnd ? values[i - headBytes] : 0;
  }
}

__global__ void FinishChannel(uint8_t* grid, uint64_t gridBytes, uint32_t valueSize, uint64_t voxelCapacity, uint32_t* report) {
  uint64_t nodesEnd = U64(report, kGridSize);
  uint32_t voxels = report[kVoxels];
  uint64_t total = ChannelBytes(nodesEnd, voxels, valueSize, voxelCapacity, gridBytes);
  if (total == 0) return;
  uint64_t gridSize = nodesEnd + total;
  *reinterpret_cast<uint64_t*>(grid + nodesEnd + kBlindValueCount) = static_cast<uint64_t>(voxels) + 1;
  *reinterpret_cast<uint64_t*>(grid + kGridGridSize) = gridSize;
  *reinterpret_cast<int64_t*>(grid + kGridBlindMetadataOffset) = static_cast<int64_t>(nodesEnd);
  *reinterpret_cast<uint32_t*>(grid + kGridBlindMetadataCount) = 1;
  report[kGridSize] = static_cast<uint32_t>(gridSize);
  report[kGridSize + 1] = static_cast<uint32_t>(gridSize >> 32);
}

}  // namespace

/**
 * hs.nanovdb.pointsToGrid.channel: reads [values, head], writes [workspace, grid]; params [valueSize (1-255), voxel
 * capacity (the values the values region holds)]. `head` holds the record (kBlindMetadataSize bytes, its data offset
 * kBlindMetadataSize) and slot 0 (valueSize bytes); the grid range must hold the nodes the write stage wrote plus the
 * channel of the kept voxels (the caller sizes it for the worst case). A channel that would not fit is not written.
 */
cudaError_t LaunchPointsToGridChannel(const KernelArgs& a, cudaStream_t stream) {
  if (a.readCount != 2 || a.writeCount != 2 || a.paramCount != 2 || !IsCount(a.params[0]) || a.params[0] < 1 || a.params[0] > 255 || !IsCount(a.params[1])) {
    return cudaErrorInvalidValue;
  }
  uint32_t valueSize = static_cast<uint32_t>(a.params[0]);
  uint64_t voxelCapacity = static_cast<uint64_t>(a.params[1]);
  if (a.readBytes[0] < voxelCapacity * valueSize || a.readBytes[1] < kBlindMetadataSize + valueSize || a.writeBytes[0] < kWorkspaceHeaderBytes ||
      a.writeBytes[1] < kGridDataSize || (reinterpret_cast<uintptr_t>(a.writes[1]) & (kDataAlignment - 1)) != 0) {
    return cudaErrorInvalidValue;
  }
  uint32_t* report = reinterpret_cast<uint32_t*>(a.writes[0]);
  uint64_t most = kBlindMetadataSize + static_cast<uint64_t>(valueSize) * (voxelCapacity + 1) + kDataAlignment;
  unsigned blocks = Blocks(most, 256);
  PlaceChannel<<<blocks < 4096 ? blocks : 4096, 256, 0, stream>>>(a.writes[1], a.writeBytes[1], a.reads[0], a.reads[1], valueSize, voxelCapacity, report);
  FinishChannel<<<1, 1, 0, stream>>>(a.writes[1], a.writeBytes[1], valueSize, voxelCapacity, report);
  return cudaGetLastError();
}

}  // namespace hs
