// Times NanoVDB's own device PointsToGrid (nanovdb::tools::cuda::PointsToGrid<ValueOnIndex>) on the clouds of
// tooling/gpu/src/bench-points-to-grid.ts (same generator, same seeds: uniform and clustered, voxel size 1), so
// its rows sit beside `pnpm bench:gpu`'s in one device call. NanoVDB is not part of this repository: build.sh
// compiles this file against headers fetched separately (NANOVDB_INCLUDE). Each size: one warm-up build, then
// the median of ROUNDS builds, each timed with CUDA events around getHandle (which allocates its scratch and
// grid from NanoVDB's default stream-ordered resource and synchronizes once at its end), with the checksum
// disabled (NanoVDB's default) and in full mode (hs's default). Usage: nanovdb-compare [sizes, e.g. 1e6,1e7,1e8].
#include <nanovdb/NanoVDB.h>
#include <nanovdb/cuda/DeviceBuffer.h>
#include <nanovdb/tools/cuda/PointsToGrid.cuh>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CHECK(x)                                                                        \
  do {                                                                                  \
    cudaError_t e_ = (x);                                                               \
    if (e_ != cudaSuccess) {                                                            \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                     \
    }                                                                                   \
  } while (0)

constexpr int kRounds = 5;

// The bench's generator: a 32-bit LCG, x / 2^32 in [0, 1).
struct Lcg {
  uint32_t x;
  explicit Lcg(uint32_t seed) : x(seed ? seed : 1) {}
  double next() {
    x = x * 1664525u + 1013904223u;
    return x / 4294967296.0;
  }
};

// The bench's clouds, computed in double and stored as float like its Float32Array.
std::vector<float> Cloud(size_t n, bool uniform) {
  Lcg r(uniform ? 1 : 2);
  std::vector<float> out(3 * n);
  if (uniform) {
    double side = std::cbrt(8.0 * static_cast<double>(n));
    for (size_t i = 0; i < 3 * n; i++) out[i] = static_cast<float>(r.next() * side);
    return out;
  }
  const double pi = 3.141592653589793;
  double radius = std::sqrt(static_cast<double>(n) / (16 * 4 * pi));
  for (size_t i = 0; i < n; i++) {
    int c = static_cast<int>(std::floor(r.next() * 4));
    double u = 2 * r.next() - 1;
    double t = 2 * pi * r.next();
    double s = std::sqrt(1 - u * u);
    double rr = radius * (0.6 + 0.2 * c) * (1 + 0.002 * (r.next() - 0.5));
    out[3 * i] = static_cast<float>(c * radius * 0.9 + rr * s * std::cos(t));
    out[3 * i + 1] = static_cast<float>(-c * radius * 0.5 + rr * s * std::sin(t));
    out[3 * i + 2] = static_cast<float>(rr * u);
  }
  return out;
}

struct Timing {
  double ms;
  uint64_t voxels, leaves, bytes;
};

Timing Time(const nanovdb::Vec3f* points, size_t n, nanovdb::CheckMode mode, cudaStream_t stream) {
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  std::vector<double> ms;
  Timing t{0, 0, 0, 0};
  for (int round = 0; round <= kRounds; round++) {
    nanovdb::tools::cuda::PointsToGrid<nanovdb::ValueOnIndex> builder(1.0, nanovdb::Vec3d(0.0), stream);
    builder.setChecksum(mode);
    CHECK(cudaEventRecord(start, stream));
    auto handle = builder.getHandle(points, n);
    CHECK(cudaEventRecord(stop, stream));
    CHECK(cudaEventSynchronize(stop));
    float elapsed = 0;
    CHECK(cudaEventElapsedTime(&elapsed, start, stop));
    if (round > 0) ms.push_back(elapsed);  // round 0 warms up
    if (round == kRounds) {
      nanovdb::GridData data;
      CHECK(cudaMemcpy(&data, handle.deviceData(), sizeof(data), cudaMemcpyDeviceToHost));
      nanovdb::TreeData tree;
      CHECK(cudaMemcpy(&tree, static_cast<const uint8_t*>(handle.deviceData()) + sizeof(nanovdb::GridData), sizeof(tree), cudaMemcpyDeviceToHost));
      t.voxels = tree.mVoxelCount;
      t.leaves = tree.mNodeCount[0];
      t.bytes = data.mGridSize;
    }
  }
  std::sort(ms.begin(), ms.end());
  t.ms = ms[ms.size() / 2];
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  return t;
}

int main(int argc, char** argv) {
  std::string list = argc > 1 ? argv[1] : "1e6,1e7,1e8";
  std::vector<size_t> sizes;
  for (size_t at = 0; at < list.size();) {
    size_t comma = list.find(',', at);
    if (comma == std::string::npos) comma = list.size();
    sizes.push_back(static_cast<size_t>(std::atof(list.substr(at, comma - at).c_str())));
    at = comma + 1;
  }
  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("NanoVDB tools::cuda::PointsToGrid<ValueOnIndex> on %s, median of %d builds (CUDA events around getHandle)\n", prop.name, kRounds);
  std::printf("| points | cloud | voxels / leaves | grid bytes | NanoVDB, checksum disabled | NanoVDB, checksum full |\n|---|---|---|---|---|---|\n");
  for (int kind = 0; kind < 2; kind++) {
    for (size_t n : sizes) {
      std::vector<float> host = Cloud(n, kind == 0);
      nanovdb::Vec3f* points = nullptr;
      CHECK(cudaMalloc(&points, 12 * n));
      CHECK(cudaMemcpy(points, host.data(), 12 * n, cudaMemcpyHostToDevice));
      Timing off = Time(points, n, nanovdb::CheckMode::Disable, stream);
      Timing full = Time(points, n, nanovdb::CheckMode::Full, stream);
      std::printf("| %.0e | %s | %llu / %llu | %llu | %.2f ms (%.1f M/s) | %.2f ms (%.1f M/s) |\n", static_cast<double>(n), kind == 0 ? "uniform" : "clustered",
                  static_cast<unsigned long long>(off.voxels), static_cast<unsigned long long>(off.leaves), static_cast<unsigned long long>(off.bytes), off.ms,
                  n / off.ms / 1e3, full.ms, n / full.ms / 1e3);
      std::fflush(stdout);
      CHECK(cudaFree(points));
    }
  }
  CHECK(cudaStreamDestroy(stream));
  return 0;
}
