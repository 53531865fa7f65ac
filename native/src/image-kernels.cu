// Kernels of the image-pipeline operators; byte-identical to the host implementations in
// examples/image-pipeline/src/kernels.ts.
#include "kernel-registry.h"

namespace hs {
namespace {

__global__ void RgbaToGray(const uint8_t* __restrict__ src, uint8_t* __restrict__ dst, uint64_t pixels) {
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < pixels; i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    const uint8_t* p = src + 4 * i;
    dst[i] = static_cast<uint8_t>((77u * p[0] + 150u * p[1] + 29u * p[2] + 128u) >> 8);
  }
}

__global__ void Downscale2x(const uint8_t* __restrict__ src, uint8_t* __restrict__ dst, uint32_t width, uint32_t outWidth, uint32_t outHeight) {
  uint32_t x = blockIdx.x * blockDim.x + threadIdx.x;
  uint32_t y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= outWidth || y >= outHeight) return;
  const uint8_t* top = src + static_cast<uint64_t>(2 * y) * width + 2 * x;
  const uint8_t* bottom = top + width;
  dst[static_cast<uint64_t>(y) * outWidth + x] = static_cast<uint8_t>((top[0] + top[1] + bottom[0] + bottom[1] + 2u) >> 2);
}

unsigned GridFor(uint64_t items, unsigned block) {
  uint64_t blocks = (items + block - 1) / block;
  return static_cast<unsigned>(blocks > 65535 ? 65535 : (blocks == 0 ? 1 : blocks));
}

}  // namespace

/** hs.rgbaToGray: reads [rgba H*W*4], writes [gray H*W], params [width, height]. */
cudaError_t LaunchRgbaToGray(const KernelArgs& a, cudaStream_t stream) {
  if (a.readCount != 1 || a.writeCount != 1 || a.paramCount != 2 || !IsIntParam(a.params[0], 1) || !IsIntParam(a.params[1], 1)) {
    return cudaErrorInvalidValue;
  }
  uint64_t pixels = static_cast<uint64_t>(a.params[0]) * static_cast<uint64_t>(a.params[1]);
  if (a.readBytes[0] < pixels * 4 || a.writeBytes[0] < pixels) return cudaErrorInvalidValue;
  RgbaToGray<<<GridFor(pixels, 256), 256, 0, stream>>>(a.reads[0], a.writes[0], pixels);
  return cudaGetLastError();
}

/** hs.downscale2x: reads [gray H*W], writes [gray (H/2)*(W/2)], params [width, height] of the source. */
cudaError_t LaunchDownscale2x(const KernelArgs& a, cudaStream_t stream) {
  if (a.readCount != 1 || a.writeCount != 1 || a.paramCount != 2 || !IsIntParam(a.params[0], 2) || !IsIntParam(a.params[1], 2)) {
    return cudaErrorInvalidValue;
  }
  uint32_t width = static_cast<uint32_t>(a.params[0]);
  uint32_t height = static_cast<uint32_t>(a.params[1]);
  uint32_t outWidth = width / 2, outHeight = height / 2;
  if (a.readBytes[0] < static_cast<uint64_t>(width) * height || a.writeBytes[0] < static_cast<uint64_t>(outWidth) * outHeight) {
    return cudaErrorInvalidValue;
  }
  dim3 block(32, 8);
  dim3 grid((outWidth + block.x - 1) / block.x, (outHeight + block.y - 1) / block.y);
  Downscale2x<<<grid, block, 0, stream>>>(a.reads[0], a.writes[0], width, outWidth, outHeight);
  return cudaGetLastError();
}

}  // namespace hs
