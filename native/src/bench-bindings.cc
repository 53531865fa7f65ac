// Native baselines for `pnpm bench:gpu`: the same CUDA call sequences as the hs paths they are compared
// with, timed in C++ in the same process. They synchronize the device and are for benchmarks only.
#include <cuda_runtime_api.h>

#include <atomic>
#include <chrono>

#include "addon-state.h"
#include "cuda-status.h"
#include "kernel-registry.h"
#include "napi-values.h"

namespace hs {

// bench-points-to-grid-sorts.cu
cudaError_t BenchPointsToGridSorts(const uint8_t* points, int encoding, uint32_t n, double inv, double ox, double oy, double oz, int iterations, double out[5]);
double BenchSortPairs64(uint32_t n, int iterations);

namespace {

using Clock = std::chrono::steady_clock;

double Ns(Clock::time_point a, Clock::time_point b) { return static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count()); }

/** benchHops(iterations) -> ns for `iterations` of record(event, producer), wait(consumer, event), query(event). */
Napi::Value BenchHops(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  uint64_t n = ToSize(info[0], "iterations");
  cudaStream_t producer = nullptr, consumer = nullptr;
  cudaEvent_t event = nullptr;
  Check(env, cudaStreamCreateWithFlags(&producer, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  Check(env, cudaStreamCreateWithFlags(&consumer, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  Check(env, cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreateWithFlags");
  volatile int complete = 0;
  auto start = Clock::now();
  for (uint64_t i = 0; i < n; i++) {
    cudaEventRecord(event, producer);
    cudaStreamWaitEvent(consumer, event, 0);
    complete += cudaEventQuery(event) == cudaSuccess;
  }
  auto end = Clock::now();
  cudaStreamSynchronize(consumer);
  cudaEventDestroy(event);
  cudaStreamDestroy(producer);
  cudaStreamDestroy(consumer);
  return Napi::Number::New(env, Ns(start, end));
}

/** benchMallocAsync(bytes, iterations) -> ns for `iterations` cudaMallocAsync + cudaFreeAsync pairs on one stream. */
Napi::Value BenchMallocAsync(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  size_t bytes = ToSize(info[0], "bytes");
  uint64_t n = ToSize(info[1], "iterations");
  cudaStream_t s = nullptr;
  Check(env, cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  auto start = Clock::now();
  for (uint64_t i = 0; i < n; i++) {
    void* p = nullptr;
    cudaMallocAsync(&p, bytes, s);
    cudaFreeAsync(p, s);
  }
  auto end = Clock::now();
  cudaStreamSynchronize(s);
  cudaStreamDestroy(s);
  return Napi::Number::New(env, Ns(start, end));
}

/** benchMalloc(bytes, iterations) -> ns for `iterations` cudaMalloc + cudaFree pairs. */
Napi::Value BenchMalloc(const Napi::CallbackInfo& info) {
  size_t bytes = ToSize(info[0], "bytes");
  uint64_t n = ToSize(info[1], "iterations");
  auto start = Clock::now();
  for (uint64_t i = 0; i < n; i++) {
    void* p = nullptr;
    cudaMalloc(&p, bytes);
    cudaFree(p);
  }
  return Napi::Number::New(info.Env(), Ns(start, Clock::now()));
}

/** benchMemcpy(dst, src, bytes, iterations) -> ns for `iterations` of cudaMemcpyAsync + cudaStreamSynchronize. */
Napi::Value BenchMemcpy(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  void* dst = ToHandle<void*>(info[0], "dst");
  const void* src = ToHandle<const void*>(info[1], "src");
  size_t bytes = ToSize(info[2], "bytes");
  uint64_t n = ToSize(info[3], "iterations");
  cudaStream_t s = nullptr;
  Check(env, cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  auto start = Clock::now();
  for (uint64_t i = 0; i < n; i++) {
    cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, s);
    cudaStreamSynchronize(s);
  }
  auto end = Clock::now();
  cudaStreamDestroy(s);
  return Napi::Number::New(env, Ns(start, end));
}

/**
 * benchPointsToGridSorts(points, encoding, count, inverseVoxelSize, ox, oy, oz, iterations) -> { status,
 * narrowedNs, sort64Ns, keyBits, graph, graphStatus, graphMakeNs }: mean ns of the bare radix sort of a PointsToGrid
 * build's packed keys, the build's narrowed sort (its cached graph; `graph` false when it could not be made, with the
 * CUDA status of that in `graphStatus`, and the fallback was timed) and the same keys over all 64 bits, and the host ns making the graph took; `status` a CUDA status (0: success).
 */
Napi::Value BenchPointsToGridSortsBinding(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto points = ToHandle<const uint8_t*>(info[0], "points");
  int encoding = ToInt(info[1], "encoding");
  uint32_t n = static_cast<uint32_t>(ToSize(info[2], "count"));
  double inv = info[3].As<Napi::Number>().DoubleValue();
  double ox = info[4].As<Napi::Number>().DoubleValue(), oy = info[5].As<Napi::Number>().DoubleValue(), oz = info[6].As<Napi::Number>().DoubleValue();
  int iterations = ToInt(info[7], "iterations");
  double out[5] = {0, 0, 0, 0, 0};
  cudaError_t status = BenchPointsToGridSorts(points, encoding, n, inv, ox, oy, oz, iterations < 1 ? 1 : iterations, out);
  Napi::Object result = Napi::Object::New(env);
  result.Set("status", Napi::Number::New(env, static_cast<double>(status)));
  result.Set("narrowedNs", Napi::Number::New(env, out[0]));
  result.Set("sort64Ns", Napi::Number::New(env, out[1]));
  result.Set("keyBits", Napi::Number::New(env, out[2]));
  result.Set("graph", Napi::Boolean::New(env, out[3] > 0));
  result.Set("graphStatus", Napi::Number::New(env, out[3] > 0 ? 0 : -out[3]));
  result.Set("graphMakeNs", Napi::Number::New(env, out[4]));
  return result;
}

/**
 * benchSortPairs64(count, iterations) -> mean ns of a bare CUB SortPairs of `count` full-entropy 64-bit keys
 * with 32-bit values (negative: a CUDA status).
 */
Napi::Value BenchSortPairs64Binding(const Napi::CallbackInfo& info) {
  uint32_t n = static_cast<uint32_t>(ToSize(info[0], "count"));
  int iterations = ToInt(info[1], "iterations");
  return Napi::Number::New(info.Env(), BenchSortPairs64(n, iterations < 1 ? 1 : iterations));
}

struct CompletionProbe {
  std::atomic<int64_t> seenNs{0};
};

void CUDART_CB RecordSeen(void* data) {
  static_cast<CompletionProbe*>(data)->seenNs.store(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count(), std::memory_order_release);
}

/**
 * benchCompletion(iterations, mode) -> Float64Array of per-iteration ns from enqueuing a 4-byte cudaMemsetAsync
 * on a fresh non-blocking stream of device 0 to the host seeing it done: mode 0, a host function after it
 * (cudaLaunchHostFunc) records the time it ran; mode 1, this thread spins on cudaEventQuery of an event after it.
 */
Napi::Value BenchCompletion(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  uint64_t n = ToSize(info[0], "iterations");
  int mode = ToInt(info[1], "mode");
  Check(env, cudaSetDevice(0), "cudaSetDevice");
  cudaStream_t s = nullptr;
  cudaEvent_t event = nullptr;
  void* target = nullptr;
  Check(env, cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  Check(env, cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreateWithFlags");
  Check(env, cudaMalloc(&target, 4), "cudaMalloc");
  Napi::Float64Array out = Napi::Float64Array::New(env, n);
  CompletionProbe probe;
  for (uint64_t i = 0; i < n; i++) {
    probe.seenNs.store(0, std::memory_order_relaxed);
    auto start = Clock::now();
    cudaMemsetAsync(target, static_cast<int>(i & 0xff), 4, s);
    if (mode == 0) {
      cudaLaunchHostFunc(s, RecordSeen, &probe);
      int64_t seen = 0;
      while ((seen = probe.seenNs.load(std::memory_order_acquire)) == 0) {
      }
      out[i] = static_cast<double>(seen - std::chrono::duration_cast<std::chrono::nanoseconds>(start.time_since_epoch()).count());
    } else {
      cudaEventRecord(event, s);
      while (cudaEventQuery(event) == cudaErrorNotReady) {
      }
      out[i] = Ns(start, Clock::now());
    }
  }
  cudaStreamSynchronize(s);
  cudaFree(target);
  cudaEventDestroy(event);
  cudaStreamDestroy(s);
  return out;
}

}  // namespace

void RegisterBenchBindings(Napi::Env env, Napi::Object exports) {
  exports.Set("benchHops", Napi::Function::New(env, BenchHops, "benchHops"));
  exports.Set("benchMallocAsync", Napi::Function::New(env, BenchMallocAsync, "benchMallocAsync"));
  exports.Set("benchMalloc", Napi::Function::New(env, BenchMalloc, "benchMalloc"));
  exports.Set("benchMemcpy", Napi::Function::New(env, BenchMemcpy, "benchMemcpy"));
  exports.Set("benchPointsToGridSorts", Napi::Function::New(env, BenchPointsToGridSortsBinding, "benchPointsToGridSorts"));
  exports.Set("benchCompletion", Napi::Function::New(env, BenchCompletion, "benchCompletion"));
  exports.Set("benchSortPairs64", Napi::Function::New(env, BenchSortPairs64Binding, "benchSortPairs64"));
}

}  // namespace hs
