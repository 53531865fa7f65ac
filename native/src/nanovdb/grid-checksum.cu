// `hs.nanovdb.gridChecksum`: NanoVDB's CRC32 checksum of a grid on the device, in mode full, partial or
// disabled (NANOVDB-FORMAT.md "Checksum"): the head over [kGridVersion, kRootOffset), the tail as the CRC
// of the CRCs of the 4 KiB blocks after the root. One warp per block (each lane a 128-byte slice, the slices'
// CRCs joined with zlib's crc32_combine: GF(2) products modulo the CRC polynomial, by x^(8 * bytes) from a table
// of powers the host computes once), each block's term XORed into the partial CRC of its 256 blocks, the
// partials folded by one thread, the head by one warp. The CUDA side of `checksumLaunch` in
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

// GF(2) polynomial product modulo the CRC polynomial (reflected). `a` must not be 0.
__host__ __device__ inline uint32_t MultModP(uint32_t a, uint32_t b) {
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

// x^(8 * 2^k) modulo the CRC polynomial for k = 0..47, computed once on the host and passed to the kernels, so
// x^(8 * bytes) costs one product per set bit of `bytes`.
struct CrcPowers {
  uint32_t p[48];
};
CrcPowers MakePowers() {
  CrcPowers w{};
  uint32_t power = 1u << 30;  // x^1
  for (int i = 0; i < 3; i++) power = MultModP(power, power);  // x^8
  for (int k = 0; k < 48; k++) {
    w.p[k] = power;
    power = MultModP(power, power);
  }
  return w;
}
__device__ __forceinline__ uint32_t ShiftFor(const CrcPowers& w, uint64_t bytes) {
  uint32_t p = 1u << 31;  // x^0
  for (int k = 0; bytes != 0; k++, bytes >>= 1) {
    if (bytes & 1) p = MultModP(w.p[k], p);
  }
  return p;
}
// CRC of A || B from crc(A), crc(B) and |B| (zlib's crc32_combine).
__device__ __forceinline__ uint32_t CrcCombine(const CrcPowers& w, uint32_t a, uint32_t b, uint64_t bytesB) { return bytesB == 0 ? a : MultModP(ShiftFor(w, bytesB), a) ^ b; }

__device__ __forceinline__ uint32_t CrcOfWord(const uint32_t* table, uint32_t v) {
  uint8_t bytes[4] = {static_cast<uint8_t>(v), static_cast<uint8_t>(v >> 8), static_cast<uint8_t>(v >> 16), static_cast<uint8_t>(v >> 24)};
  return ~CrcUpdate(table, 0xffffffffu, bytes, 4);
}

// The CRC of `len` bytes at `p` by one warp (every lane calls it; the result is in lane 0): each lane the CRC of
// its slice (16-byte multiples, 16-byte loads when `p` is 16-byte aligned), then the slices' CRCs combined
// pairwise in a tree of shuffles.
__device__ uint32_t WarpCrc(const uint32_t* table, const CrcPowers& w, const uint8_t* p, uint32_t len) {
  uint32_t lane = threadIdx.x & 31;
  uint32_t chunk = ((len + 31) / 32 + 15) & ~15u;
  uint32_t begin = lane * chunk < len ? lane * chunk : len;
  uint32_t mine = len - begin < chunk ? len - begin : chunk;
  uint32_t crc = 0xffffffffu;
  const uint8_t* at = p + begin;
  uint32_t done = 0;
  if ((reinterpret_cast<uintptr_t>(at) & 15) == 0) {
    for (; done + 16 <= mine; done += 16) {
      uint4 v = *reinterpret_cast<const uint4*>(at + done);
      uint32_t words[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
      for (int q = 0; q < 4; q++) {
        uint32_t x = words[q];
#pragma unroll
        for (int b = 0; b < 4; b++) crc = table[(crc ^ (x >> (8 * b))) & 0xff] ^ (crc >> 8);
      }
    }
  }
  crc = ~CrcUpdate(table, crc, at + done, mine - done);
  if (mine == 0) crc = 0;  // the CRC of no bytes
  uint32_t bytes = mine;
  for (uint32_t o = 1; o < 32; o <<= 1) {
    uint32_t right = __shfl_down_sync(0xffffffffu, crc, o), rightBytes = __shfl_down_sync(0xffffffffu, bytes, o);
    if ((lane & (2 * o - 1)) == 0 && lane + o < 32) {
      crc = CrcCombine(w, crc, right, rightBytes);
      bytes += rightBytes;
    }
  }
  return crc;
}

// Bytes of the tail region [kRootOffset, gridSize): gridSize as stored, at most the range.
__device__ __forceinline__ uint64_t TailRegion(const uint8_t* grid, uint64_t rangeBytes) {
  uint64_t gridSize = *reinterpret_cast<const uint64_t*>(grid + kGridGridSize);
  if (gridSize > rangeBytes) gridSize = rangeBytes;
  return gridSize > kRootOffset ? gridSize - kRootOffset : 0;
}

// Per 256 blocks of 4 KiB: the CRC of their block CRCs (as little-endian u32s), into partials (zeroed first).
// One warp per 4 KiB block (the last block takes the region's remainder too), kCrcThreads / 32 blocks per thread
// block. CRC combination is linear: the CRC of words W_0..W_{c-1} is the XOR over i of crc(W_i) times
// x^(8 * 4 * (c - 1 - i)), so each warp XORs its word's term into its partial.
constexpr uint64_t kBlocksPerPart = kCrcThreads;
__global__ void CrcBlockPartials(const uint8_t* grid, uint64_t rangeBytes, uint32_t* partials, CrcPowers powers) {
  __shared__ uint32_t table[256];
  CrcTable(table);
  __syncthreads();
  uint64_t region = TailRegion(grid, rangeBytes);
  uint64_t blocks = region / kCrcBlock;
  uint64_t b = static_cast<uint64_t>(blockIdx.x) * (kCrcThreads / 32) + (threadIdx.x >> 5);
  if (b >= blocks) return;  // warp-uniform
  uint64_t begin = b * kCrcBlock, end = b + 1 == blocks ? region : begin + kCrcBlock;
  uint32_t c = WarpCrc(table, powers, grid + kRootOffset + begin, static_cast<uint32_t>(end - begin));
  if ((threadIdx.x & 31) != 0) return;
  uint64_t part = b / kBlocksPerPart;
  uint64_t count = blocks - part * kBlocksPerPart < kBlocksPerPart ? blocks - part * kBlocksPerPart : kBlocksPerPart;
  uint64_t after = count - 1 - b % kBlocksPerPart;
  uint32_t word = CrcOfWord(table, c);
  atomicXor(&partials[part], after == 0 ? word : MultModP(ShiftFor(powers, 4 * after), word));
}

// One warp: the head's CRC, and the tail folded from the partials (each but the last covers 1 KiB of block CRCs).
__global__ void CrcFinish(uint8_t* grid, uint64_t rangeBytes, const uint32_t* partials, int mode, CrcPowers powers) {
  __shared__ uint32_t table[256];
  CrcTable(table);
  __syncthreads();
  uint32_t* checksum = reinterpret_cast<uint32_t*>(grid + kGridChecksum);
  if (mode == 2) {
    if (threadIdx.x == 0) checksum[0] = checksum[1] = kChecksumNone;
    return;
  }
  uint32_t head = WarpCrc(table, powers, grid + kGridVersion, static_cast<uint32_t>(kRootOffset - kGridVersion));
  if (threadIdx.x != 0) return;
  uint32_t tail = kChecksumNone;
  if (mode == 0) {
    uint64_t region = TailRegion(grid, rangeBytes);
    uint64_t blocks = region / kCrcBlock;
    if (region > 0) {
      tail = 0;  // CRC32 of an empty array of block CRCs
      uint64_t parts = (blocks + kCrcThreads - 1) / kCrcThreads;
      uint32_t full = ShiftFor(powers, 4 * kCrcThreads);
      for (uint64_t p = 0; p < parts; p++) {
        if (p == 0) tail = partials[0];
        else if (p + 1 < parts) tail = MultModP(full, tail) ^ partials[p];
        else tail = CrcCombine(powers, tail, partials[p], 4 * (blocks - p * kCrcThreads));
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
  static const CrcPowers powers = MakePowers();
  if (mode == 0 && parts > 0) {
    cudaError_t e = cudaMemsetAsync(partials, 0, 4 * parts, stream);
    if (e != cudaSuccess) return e;
    uint64_t threadBlocks = (maxBlocks + kCrcThreads / 32 - 1) / (kCrcThreads / 32);
    CrcBlockPartials<<<static_cast<unsigned>(threadBlocks), kCrcThreads, 0, stream>>>(a.writes[0], a.writeBytes[0], partials, powers);
  }
  CrcFinish<<<1, 32, 0, stream>>>(a.writes[0], a.writeBytes[0], partials, mode, powers);
  return cudaGetLastError();
}

}  // namespace hs
