// `hs.nanovdb.gridChecksum`: NanoVDB's CRC32 checksum of a grid on the device, in mode full, partial or
// disabled (NANOVDB-FORMAT.md "Checksum"): the head over [kGridVersion, kRootOffset), the tail as the CRC
// of the CRCs of the 4 KiB blocks after the root. One thread per block, the block CRCs of 256 blocks
// folded per thread block with zlib's crc32_combine (GF(2) products modulo the CRC polynomial), the
// partials folded by one thread. The CUDA side of `checksumLaunch` in
// packages/nanovdb-mr/src/nanovdb/build/points-to-grid-kernels.ts; equal to grid-checksum.ts's.
#include <cstdint>

#include "kernel-registry.h"
#include "nanovdb/grid-layout.h"
#include "nanovdb/points-to-grid-workspace.h"

namespace hs {
namespace {

using namespace nanovdb;

constexpr uint32_t kCrcPoly = 0xedb88320u;
constexpr uint64_t kCrcBlock = kChecksumBlockBytes;
constexpr unsigned kCrcThreads = 256;

__device__ void CrcTable(uint32_t* table) {
  for (uint32_t i = threadIdx.x; i < 256; i += blockDim.x) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++) c = (c >> 1) ^ (kCrcPoly & (0u - (c & 1)));
    table[i] = c;
  }
}

__device__ __forceinline__ uint32_t CrcUpdate(const uint32_t* table, uint32_t crc, const uint8_t* p, uint64_t n) {
  for (uint64_t i = 0; i < n; i++) crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return crc;
}

// GF(2) polynomial product modulo the CRC polynomial (reflected), and x^(8 * bytes) modulo it.
__device__ uint32_t MultModP(uint32_t a, uint32_t b) {
  uint32_t m = 1u << 31, p = 0;
  for (;;) {
    if (a & m) {
      p ^= b;
      if ((a & (m - 1)) == 0) break;
    }
    m >>= 1;
    b = (b & 1) ? (b >> 1) ^ kCrcPoly : b >> 1;
  }
  return p;
}
__device__ uint32_t ShiftFor(uint64_t bytes) {
  uint32_t p = 1u << 31;     // x^0
  uint32_t power = 1u << 30;  // x^1
  uint64_t bits = bytes * 8;
  while (bits) {
    if (bits & 1) p = MultModP(power, p);
    power = MultModP(power, power);
    bits >>= 1;
  }
  return p;
}
// CRC of A || B from crc(A), crc(B) and |B| (zlib's crc32_combine).
__device__ __forceinline__ uint32_t CrcCombine(uint32_t a, uint32_t b, uint64_t bytesB) { return MultModP(ShiftFor(bytesB), a) ^ b; }

__device__ __forceinline__ uint32_t CrcOfWord(const uint32_t* table, uint32_t v) {
  uint8_t bytes[4] = {static_cast<uint8_t>(v), static_cast<uint8_t>(v >> 8), static_cast<uint8_t>(v >> 16), static_cast<uint8_t>(v >> 24)};
  return ~CrcUpdate(table, 0xffffffffu, bytes, 4);
}

// Bytes of the tail region [kRootOffset, gridSize): gridSize as stored, at most the range.
__device__ __forceinline__ uint64_t TailRegion(const uint8_t* grid, uint64_t rangeBytes) {
  uint64_t gridSize = *reinterpret_cast<const uint64_t*>(grid + kGridGridSize);
  if (gridSize > rangeBytes) gridSize = rangeBytes;
  return gridSize > kRootOffset ? gridSize - kRootOffset : 0;
}

// Per 256 blocks of 4 KiB: the CRC of their block CRCs (as little-endian u32s), into partials.
__global__ void CrcBlockPartials(const uint8_t* grid, uint64_t rangeBytes, uint32_t* partials) {
  __shared__ uint32_t table[256];
  __shared__ uint32_t crc[kCrcThreads];
  CrcTable(table);
  __syncthreads();
  uint64_t region = TailRegion(grid, rangeBytes);
  uint64_t blocks = region / kCrcBlock;
  uint64_t first = static_cast<uint64_t>(blockIdx.x) * kCrcThreads;
  if (first >= blocks) return;
  uint64_t b = first + threadIdx.x;
  if (b < blocks) {
    uint64_t begin = b * kCrcBlock, end = b + 1 == blocks ? region : begin + kCrcBlock;
    crc[threadIdx.x] = CrcOfWord(table, ~CrcUpdate(table, 0xffffffffu, grid + kRootOffset + begin, end - begin));
  }
  __syncthreads();
  uint64_t count = blocks - first < kCrcThreads ? blocks - first : kCrcThreads;
  for (uint64_t width = 1; width < count; width *= 2) {
    uint64_t left = 2 * width * threadIdx.x;
    if (left + width < count) {
      uint64_t rightLen = (left + 2 * width <= count ? width : count - left - width) * 4;
      crc[left] = CrcCombine(crc[left], crc[left + width], rightLen);
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) partials[blockIdx.x] = crc[0];
}

__global__ void CrcFinish(uint8_t* grid, uint64_t rangeBytes, const uint32_t* partials, int mode) {
  __shared__ uint32_t table[256];
  CrcTable(table);
  __syncthreads();
  if (threadIdx.x != 0) return;
  uint32_t* checksum = reinterpret_cast<uint32_t*>(grid + kGridChecksum);
  if (mode == 2) {
    checksum[0] = checksum[1] = kChecksumNone;
    return;
  }
  uint32_t head = ~CrcUpdate(table, 0xffffffffu, grid + kGridVersion, kRootOffset - kGridVersion);
  uint32_t tail = kChecksumNone;
  if (mode == 0) {
    uint64_t region = TailRegion(grid, rangeBytes);
    uint64_t blocks = region / kCrcBlock;
    if (region > 0) {
      tail = 0;  // CRC32 of an empty array of block CRCs
      uint64_t parts = (blocks + kCrcThreads - 1) / kCrcThreads;
      for (uint64_t p = 0; p < parts; p++) {
        uint64_t len = 4 * (p + 1 == parts ? blocks - p * kCrcThreads : kCrcThreads);
        tail = p == 0 ? partials[0] : CrcCombine(tail, partials[p], len);
      }
    }
  }
  checksum[0] = head;
  checksum[1] = tail;
}

}  // namespace

/**
 * hs.nanovdb.gridChecksum: writes [grid, workspace]; params [mode (0 full, 1 partial, 2 disabled)].
 * The grid's stored gridSize (at most the range) is checksummed; one partial CRC per MiB of grid goes
 * to the workspace after its header (scratch of the finished build).
 */
cudaError_t LaunchGridChecksum(const KernelArgs& a, cudaStream_t stream) {
  if (a.readCount != 0 || a.writeCount != 2 || a.paramCount != 1 || (a.params[0] != 0 && a.params[0] != 1 && a.params[0] != 2) || a.writeBytes[0] < kRootOffset ||
      a.writeBytes[1] < kWorkspaceHeaderBytes) {
    return cudaErrorInvalidValue;
  }
  int mode = static_cast<int>(a.params[0]);
  uint64_t maxBlocks = (a.writeBytes[0] - kRootOffset) / kCrcBlock;
  uint64_t parts = (maxBlocks + kCrcThreads - 1) / kCrcThreads;
  if (kWorkspaceHeaderBytes + 4 * parts > a.writeBytes[1]) return cudaErrorInvalidValue;
  uint32_t* partials = reinterpret_cast<uint32_t*>(a.writes[1] + kWorkspaceHeaderBytes);
  if (mode == 0 && parts > 0) CrcBlockPartials<<<static_cast<unsigned>(parts), kCrcThreads, 0, stream>>>(a.writes[0], a.writeBytes[0], partials);
  CrcFinish<<<1, 256, 0, stream>>>(a.writes[0], a.writeBytes[0], partials, mode);
  return cudaGetLastError();
}

}  // namespace hs
