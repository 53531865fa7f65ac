// The native baselines of `pnpm bench:gpu`'s PointsToGrid rows (bench-bindings.cc binds them as
// benchPointsToGridSorts and benchSortPairs64): the build's radix sort of its packed keys, bare, through the same
// calls as the sort stage (nanovdb/points-to-grid-sort.h): the narrowed sort's cached graph and the same keys over
// all 64 bits; and a bare 64-bit-key SortPairs of full-entropy keys with 32-bit values. A file of its own because
// CUB's headers need nvcc; it allocates and synchronizes, so it is for benchmarks only.
#include <cub/device/device_radix_sort.cuh>
#include <cub/util_type.cuh>
#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdint>
#include <mutex>

#include "nanovdb/points-to-grid-sort.h"
#include "nanovdb/points-to-grid-workspace.h"

namespace hs {

using nanovdb::Blocks;
using nanovdb::Carve;
using nanovdb::EnqueueMapKeys;
using nanovdb::FindSortGraph;
using nanovdb::LockSortGraphs;
using nanovdb::SortBranchOf;
using nanovdb::SortBuildKeys;
using nanovdb::SortGraph;
using nanovdb::Workspace;

namespace {

// splitmix64 of i: full-entropy keys; the values are the indices.
__global__ void RandomPairs(uint64_t* keys, uint32_t* values, uint32_t n) {
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < n; i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    uint64_t z = (i + 1) * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    keys[i] = z ^ (z >> 31);
    values[i] = static_cast<uint32_t>(i);
  }
}

// Times `iterations` sorts of fresh copies of the n pairs at pristineKeys / pristineValues into k0 / v0 (mean
// ns); `sort` is SortBuildKeys, the narrowed sort's graph launch or a plain SortPairs.
template <typename Sort>
cudaError_t TimeSorts(Sort sort, const uint64_t* pristineKeys, const uint32_t* pristineValues, uint64_t* k0, uint64_t* k1, uint32_t* v0, uint32_t* v1, void* scratch,
                      size_t scratchBytes, uint32_t n, int iterations, cudaStream_t s, double* meanNs) {
  cudaEvent_t start = nullptr, stop = nullptr;
  cudaError_t e = cudaEventCreate(&start);
  if (e == cudaSuccess) e = cudaEventCreate(&stop);
  double total = 0;
  for (int it = 0; it <= iterations && e == cudaSuccess; it++) {  // run 0 warms up and is not counted
    cudaMemcpyAsync(k0, pristineKeys, 8ull * n, cudaMemcpyDeviceToDevice, s);
    cudaMemcpyAsync(v0, pristineValues, 4ull * n, cudaMemcpyDeviceToDevice, s);
    cudaEventRecord(start, s);
    cub::DoubleBuffer<uint64_t> keys(k0, k1);
    cub::DoubleBuffer<uint32_t> values(v0, v1);
    size_t bytes = scratchBytes;
    e = sort(scratch, bytes, keys, values, n, s);
    cudaEventRecord(stop, s);
    if (e == cudaSuccess) e = cudaEventSynchronize(stop);
    float ms = 0;
    if (e == cudaSuccess) e = cudaEventElapsedTime(&ms, start, stop);
    if (it > 0) total += ms * 1e6;
  }
  if (start != nullptr) cudaEventDestroy(start);
  if (stop != nullptr) cudaEventDestroy(stop);
  *meanNs = total / iterations;
  return e;
}

}  // namespace

/**
 * Benchmark baselines: the build's radix sort of the packed keys of `n` points at `points`, mapped once, timed
 * with events over `iterations` runs each (fresh unsorted keys each run, after one warm-up run): out[0] the
 * narrowed sort (the build's cached graph, made before the timing), out[1] the same keys over all 64
 * bits (SortBuildKeys), out[2] the key bits, out[3] 1 when the graph was made (else minus the CUDA status of making
 * it, and out[0] timed the fallback, the 64-bit sort), out[4] the host ns it took to make the graph (capture and instantiation). Allocates and synchronizes: benchmarks only. Returns cudaSuccess or the failing CUDA status.
 */
cudaError_t BenchPointsToGridSorts(const uint8_t* points, int encoding, uint32_t n, double inv, double ox, double oy, double oz, int iterations, double out[5]) {
  uint8_t* base = nullptr;
  Workspace probe = Carve(nullptr, n);
  uint64_t pristineBytes = 12ull * n;
  cudaStream_t s = nullptr;
  cudaError_t e = cudaMalloc(&base, probe.total + pristineBytes);
  if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  if (e == cudaSuccess) {
    Workspace w = Carve(base, n);
    uint64_t* pristineKeys = reinterpret_cast<uint64_t*>(base + probe.total);
    uint32_t* pristineOrder = reinterpret_cast<uint32_t*>(pristineKeys + n);
    uint32_t* v0 = reinterpret_cast<uint32_t*>(w.valsB);
    // as the build: the high bits of a wide key in valsA (not timed here: the bench clouds are not wide)
    EnqueueMapKeys(w.report, points, encoding, n, n, inv, ox, oy, oz, pristineKeys, pristineKeys, pristineOrder, pristineOrder, 0, w.valsA, s);
    uint32_t words[64];
    e = cudaMemcpyAsync(words, w.report, sizeof(words), cudaMemcpyDeviceToHost, s);
    if (e == cudaSuccess) e = cudaStreamSynchronize(s);
    out[2] = words[nanovdb::kKeyBits];
    if (e == cudaSuccess) e = TimeSorts(SortBuildKeys, pristineKeys, pristineOrder, w.keysB, w.keysA, v0, v0 + n, w.cub, w.cubBytes, n, iterations, s, &out[1]);
    if (e == cudaSuccess) {
      std::unique_lock<std::mutex> held = LockSortGraphs();
      FindSortGraph(w, base, n, s);  // a new workspace: its first build only records it, the second makes the graph
      auto started = std::chrono::steady_clock::now();
      cudaError_t made = cudaSuccess;
      const SortGraph* graph = FindSortGraph(w, base, n, s, &made);
      out[4] = static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - started).count());
      out[3] = graph != nullptr ? 1 : -static_cast<double>(made);
      if (graph == nullptr) {
        out[0] = out[1];
      } else {
        // the branch's start buffers, as the build's map step would have chosen them
        bool alternate = (graph->startAlternate >> SortBranchOf(words[nanovdb::kKeyBits], words[nanovdb::kInvalidCount]) & 1u) != 0;
        auto launch = [graph](void*, size_t&, cub::DoubleBuffer<uint64_t>&, cub::DoubleBuffer<uint32_t>&, uint32_t, cudaStream_t stream) { return cudaGraphLaunch(graph->exec, stream); };
        e = TimeSorts(launch, pristineKeys, pristineOrder, alternate ? w.keysA : w.keysB, alternate ? w.keysB : w.keysA, alternate ? v0 + n : v0, alternate ? v0 : v0 + n,
                      w.cub, w.cubBytes, n, iterations, s, &out[0]);
      }
    }
  }
  if (s != nullptr) cudaStreamSynchronize(s);
  if (s != nullptr) cudaStreamDestroy(s);
  if (base != nullptr) cudaFree(base);
  return e;
}

/**
 * Benchmark baseline: a bare CUB SortPairs of `n` full-entropy 64-bit keys with 32-bit values over all 64 bits,
 * timed as BenchPointsToGridSorts. Returns mean nanoseconds per run, or a negative CUDA status.
 */
double BenchSortPairs64(uint32_t n, int iterations) {
  uint8_t* base = nullptr;
  cudaStream_t s = nullptr;
  double mean = 0;
  size_t scratch = 0;
  cub::DoubleBuffer<uint64_t> probeKeys(nullptr, nullptr);
  cub::DoubleBuffer<uint32_t> probeValues(nullptr, nullptr);
  auto sort = [](void* storage, size_t& bytes, cub::DoubleBuffer<uint64_t>& k, cub::DoubleBuffer<uint32_t>& v, uint32_t count, cudaStream_t stream) {
    return cub::DeviceRadixSort::SortPairs(storage, bytes, k, v, count, 0, 64, stream);
  };
  cudaError_t e = sort(nullptr, scratch, probeKeys, probeValues, n, nullptr);
  uint64_t at = 0;
  auto take = [&](uint64_t bytes) { uint64_t p = at; at += nanovdb::Region(bytes); return p; };
  uint64_t pk = take(8ull * n), k0 = take(8ull * n), k1 = take(8ull * n), pv = take(4ull * n), v0 = take(4ull * n), v1 = take(4ull * n), sc = take(scratch);
  if (e == cudaSuccess) e = cudaMalloc(&base, at);
  if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  if (e == cudaSuccess) {
    RandomPairs<<<Blocks(n, 256), 256, 0, s>>>(reinterpret_cast<uint64_t*>(base + pk), reinterpret_cast<uint32_t*>(base + pv), n);
    e = TimeSorts(sort, reinterpret_cast<uint64_t*>(base + pk), reinterpret_cast<uint32_t*>(base + pv), reinterpret_cast<uint64_t*>(base + k0), reinterpret_cast<uint64_t*>(base + k1),
                  reinterpret_cast<uint32_t*>(base + v0), reinterpret_cast<uint32_t*>(base + v1), base + sc, scratch, n, iterations, s, &mean);
  }
  if (s != nullptr) cudaStreamSynchronize(s);
  if (s != nullptr) cudaStreamDestroy(s);
  if (base != nullptr) cudaFree(base);
  return e == cudaSuccess ? mean : -static_cast<double>(e);
}

}  // namespace hs
