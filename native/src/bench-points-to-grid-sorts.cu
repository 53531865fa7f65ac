// The native baseline of `pnpm bench:gpu`'s PointsToGrid sort comparison (bench-bindings.cc binds it as
// benchPointsToGridSorts): the build's two CUB radix sorts, bare, through the same calls as the sort
// stage (nanovdb/points-to-grid-sort.h). A file of its own because CUB's headers need nvcc; it allocates
// and synchronizes, so it is for benchmarks only.
#include <cub/util_type.cuh>
#include <cuda_runtime_api.h>

#include <cstdint>

#include "nanovdb/points-to-grid-sort.h"
#include "nanovdb/points-to-grid-workspace.h"

namespace hs {

using nanovdb::Carve;
using nanovdb::EnqueueMapPoints;
using nanovdb::SortByInTileKey;
using nanovdb::SortByTileKey;
using nanovdb::Workspace;

/**
 * Benchmark baseline: the bare CUB radix sorts of a build's keys (36-bit in-tile keys with 32-bit
 * values, then 62-bit tile keys with 32-bit ranks) of `n` points at `points`, mapped once, timed with
 * events over `iterations` runs (fresh unsorted keys each run). Allocates and synchronizes: benchmarks only.
 * Returns mean nanoseconds per run, or a negative CUDA status.
 */
double BenchPointsToGridSorts(const uint8_t* points, int encoding, uint32_t n, double inv, double ox, double oy, double oz, int iterations) {
  uint8_t* base = nullptr;
  Workspace probe = Carve(nullptr, n);
  uint64_t pristineBytes = 16ull * n;
  cudaStream_t s = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  double total = 0;
  cudaError_t e = cudaMalloc(&base, probe.total + pristineBytes);
  if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  if (e == cudaSuccess) e = cudaEventCreate(&start);
  if (e == cudaSuccess) e = cudaEventCreate(&stop);
  if (e == cudaSuccess) {
    Workspace w = Carve(base, n);
    uint64_t* pristineIn = reinterpret_cast<uint64_t*>(base + probe.total);
    uint64_t* pristineTiles = pristineIn + n;
    EnqueueMapPoints(w.report, points, encoding, n, n, inv, ox, oy, oz, pristineIn, reinterpret_cast<uint32_t*>(w.valsA), pristineTiles, s);
    for (int it = 0; it < iterations && e == cudaSuccess; it++) {
      cudaMemcpyAsync(w.keysA, pristineIn, 8ull * n, cudaMemcpyDeviceToDevice, s);
      cudaMemcpyAsync(w.ids, pristineTiles, 8ull * n, cudaMemcpyDeviceToDevice, s);
      cudaEventRecord(start, s);
      cub::DoubleBuffer<uint64_t> keys(w.keysA, w.keysB);
      cub::DoubleBuffer<uint32_t> order(reinterpret_cast<uint32_t*>(w.valsA), reinterpret_cast<uint32_t*>(w.valsB));
      size_t bytes = w.cubBytes;
      e = SortByInTileKey(w.cub, bytes, keys, order, n, s);
      cub::DoubleBuffer<uint64_t> tiles(reinterpret_cast<uint64_t*>(w.ids), keys.Alternate());
      // as the build: the ranks in the value buffer sort 1 left free and in the upper half of the ids region
      cub::DoubleBuffer<uint32_t> ranked(order.Alternate(), reinterpret_cast<uint32_t*>(reinterpret_cast<uint64_t*>(w.ids) + n));
      bytes = w.cubBytes;
      if (e == cudaSuccess) e = SortByTileKey(w.cub, bytes, tiles, ranked, n, s);
      cudaEventRecord(stop, s);
      if (e == cudaSuccess) e = cudaEventSynchronize(stop);
      float ms = 0;
      if (e == cudaSuccess) e = cudaEventElapsedTime(&ms, start, stop);
      total += ms * 1e6;
    }
  }
  if (s != nullptr) cudaStreamSynchronize(s);
  if (start != nullptr) cudaEventDestroy(start);
  if (stop != nullptr) cudaEventDestroy(stop);
  if (s != nullptr) cudaStreamDestroy(s);
  if (base != nullptr) cudaFree(base);
  return e == cudaSuccess ? total / iterations : -static_cast<double>(e);
}

}  // namespace hs
