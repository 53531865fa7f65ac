// hs.gridPreview: the depth-shaded orthographic preview of an OnIndex NanoVDB grid's active voxels, used by
// examples/scan-to-volume. Byte-identical to the host implementation in
// examples/scan-to-volume/src/grid-preview-kernel.ts (same clearing, cell-to-pixel mapping and shading;
// the per-pixel maximum is order-independent).
#include "kernel-registry.h"
#include "nanovdb/grid-layout.h"

namespace hs {
namespace {

using namespace nanovdb;

/** TreeData starts after GridData; its leaf count is the first u32 of the node counts. */
constexpr uint64_t kLeafCountOffset = kGridDataSize + kTreeNodeCount;
constexpr int64_t kFarShade = 56;

struct Camera {
  int64_t width, height, minX, maxY, minZ, depthSpan, num, den;
};

/** Floor division for a positive divisor (C++ division truncates toward zero). */
__device__ int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

__device__ uint32_t LoadU32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) | (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}

__device__ int64_t LoadI64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
  return static_cast<int64_t>(v);
}

/** Byte-lane atomic maximum through a compare-and-swap on the aligned 32-bit word holding the byte. */
__device__ void AtomicMaxByte(uint8_t* image, uint64_t at, uint32_t value) {
  unsigned int* word = reinterpret_cast<unsigned int*>(image + (at & ~uint64_t{3}));
  const unsigned int shift = static_cast<unsigned int>(at & 3) * 8;
  unsigned int old = *word;
  while (((old >> shift) & 0xffu) < value) {
    unsigned int desired = (old & ~(0xffu << shift)) | (value << shift);
    unsigned int seen = atomicCAS(word, old, desired);
    if (seen == old) break;
    old = seen;
  }
}

__global__ void ClearImage(uint8_t* image, uint64_t bytes) {
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < bytes; i += static_cast<uint64_t>(gridDim.x) * blockDim.x) image[i] = 0;
}

/** One thread per (leaf, voxel bit); inactive bits return at once. */
__global__ void SplatLeafVoxels(const uint8_t* __restrict__ grid, uint64_t gridBytes, uint8_t* image, Camera c) {
  if (gridBytes < kLeafCountOffset + 4 || LoadU32(grid + kGridGridType) != kGridTypeOnIndex) return;
  const int64_t leafStart = static_cast<int64_t>(kGridDataSize) + LoadI64(grid + kGridDataSize + kTreeNodeOffset);
  const uint64_t leafCount = LoadU32(grid + kLeafCountOffset);
  if (leafCount == 0 || leafStart < 0 || static_cast<uint64_t>(leafStart) + leafCount * kOnIndexLeafSize > gridBytes) return;
  const uint64_t total = leafCount * 512;
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < total; i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    const uint8_t* leaf = grid + leafStart + (i >> 9) * kOnIndexLeafSize;
    const int n = static_cast<int>(i & 511);
    if ((leaf[kLeafValueMask + (n >> 3)] & (1u << (n & 7))) == 0) continue;
    const int64_t ox = static_cast<int32_t>(LoadU32(leaf + kLeafBBoxMin)) & ~7;
    const int64_t oy = static_cast<int32_t>(LoadU32(leaf + kLeafBBoxMin + 4)) & ~7;
    const int64_t oz = static_cast<int32_t>(LoadU32(leaf + kLeafBBoxMin + 8)) & ~7;
    int64_t depth = oz + (n & 7) - c.minZ;
    depth = depth < 0 ? 0 : (depth > c.depthSpan ? c.depthSpan : depth);
    const uint32_t shade = static_cast<uint32_t>(kFarShade + ((255 - kFarShade) * depth) / c.depthSpan);
    const int64_t cx = ox + (n >> 6) - c.minX;
    const int64_t cy = c.maxY - (oy + ((n >> 3) & 7));
    const int64_t x0 = FloorDiv(cx * c.num, c.den);
    const int64_t xe = FloorDiv((cx + 1) * c.num, c.den);
    const int64_t x1 = min(c.width, max(x0 + 1, xe));
    const int64_t y0 = FloorDiv(cy * c.num, c.den);
    const int64_t ye = FloorDiv((cy + 1) * c.num, c.den);
    const int64_t y1 = min(c.height, max(y0 + 1, ye));
    for (int64_t py = max(int64_t{0}, y0); py < y1; py++) {
      for (int64_t px = max(int64_t{0}, x0); px < x1; px++) AtomicMaxByte(image, static_cast<uint64_t>(py * c.width + px), shade);
    }
  }
}

unsigned BlocksFor(uint64_t items, unsigned block) {
  uint64_t blocks = (items + block - 1) / block;
  return static_cast<unsigned>(blocks > 65535 ? 65535 : (blocks == 0 ? 1 : blocks));
}

}  // namespace

/**
 * hs.gridPreview: reads [grid], writes [image width*height], params [width, height, minX, maxY, minZ,
 * depthSpan, zoomNumerator, zoomDenominator]. The width is a multiple of 4 so the byte-lane atomics stay
 * inside the image.
 */
cudaError_t LaunchGridPreview(const KernelArgs& a, cudaStream_t stream) {
  if (a.readCount != 1 || a.writeCount != 1 || a.paramCount != 8) return cudaErrorInvalidValue;
  const double* p = a.params;
  const double kLimit = 4294967296.0;
  for (int i = 0; i < 8; i++) {
    if (p[i] != static_cast<double>(static_cast<int64_t>(p[i])) || p[i] <= -kLimit || p[i] >= kLimit) return cudaErrorInvalidValue;
  }
  Camera c{static_cast<int64_t>(p[0]), static_cast<int64_t>(p[1]), static_cast<int64_t>(p[2]), static_cast<int64_t>(p[3]),
           static_cast<int64_t>(p[4]), static_cast<int64_t>(p[5]), static_cast<int64_t>(p[6]), static_cast<int64_t>(p[7])};
  if (c.width <= 0 || c.height <= 0 || c.width % 4 != 0 || c.depthSpan <= 0 || c.num <= 0 || c.den <= 0) return cudaErrorInvalidValue;
  const uint64_t imageBytes = static_cast<uint64_t>(c.width) * static_cast<uint64_t>(c.height);
  if (a.writeBytes[0] < imageBytes) return cudaErrorInvalidValue;
  ClearImage<<<BlocksFor(imageBytes, 256), 256, 0, stream>>>(a.writes[0], imageBytes);
  SplatLeafVoxels<<<4096, 256, 0, stream>>>(a.reads[0], a.readBytes[0], a.writes[0], c);
  return cudaGetLastError();
}

}  // namespace hs
