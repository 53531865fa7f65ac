// The test kernels addon (build/hs_cuda_test.node, never published): small kernels the GPU test suites
// launch by name (hs.test.*): arithmetic that shows ordering, a long-running producer for the
// readiness-wait test, and the host-staged hs.test.shape. `kernelTable()` hands them to hs_cuda.node's
// registry (`addKernels`), so the published addon carries no test kernel.
#include <napi.h>

#include "kernel-registry.h"

namespace hs {
namespace {

__global__ void AddScalar(const uint8_t* __restrict__ src, uint8_t* __restrict__ dst, uint64_t n, uint8_t scalar) {
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < n; i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    dst[i] = static_cast<uint8_t>(src[i] + scalar);
  }
}

__global__ void Fill(uint8_t* dst, uint64_t n, uint8_t value) {
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < n; i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    dst[i] = value;
  }
}

__device__ uint64_t GlobalTimerNs() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

/** One block: thread 0 spins for `ns` nanoseconds of wall time, then the block fills `dst`. */
__global__ void SpinFill(uint8_t* dst, uint64_t n, uint64_t ns, uint8_t value) {
  if (threadIdx.x == 0) {
    uint64_t start = GlobalTimerNs();
    while (GlobalTimerNs() - start < ns) {
    }
  }
  __syncthreads();
  for (uint64_t i = threadIdx.x; i < n; i += blockDim.x) dst[i] = value;
}

__global__ void Copy(const uint8_t* __restrict__ src, uint8_t* __restrict__ dst, uint64_t n) {
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < n; i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    dst[i] = src[i];
  }
}

constexpr unsigned kBlock = 256;
unsigned Grid(uint64_t n) {
  uint64_t blocks = (n + kBlock - 1) / kBlock;
  return static_cast<unsigned>(blocks > 4096 ? 4096 : (blocks == 0 ? 1 : blocks));
}

}  // namespace

/** hs.test.addScalar: reads [src], writes [dst], params [count, scalar]: dst[i] = src[i] + scalar (mod 256). */
cudaError_t LaunchTestAddScalar(const KernelArgs& a, cudaStream_t stream) {
  if (a.readCount != 1 || a.writeCount != 1 || a.paramCount != 2 || !IsIntParam(a.params[0], 0) || !IsIntParam(a.params[1], 0)) {
    return cudaErrorInvalidValue;
  }
  uint64_t n = static_cast<uint64_t>(a.params[0]);
  if (a.readBytes[0] < n || a.writeBytes[0] < n) return cudaErrorInvalidValue;
  AddScalar<<<Grid(n), kBlock, 0, stream>>>(a.reads[0], a.writes[0], n, static_cast<uint8_t>(static_cast<int64_t>(a.params[1]) & 0xff));
  return cudaGetLastError();
}

/** hs.test.fill: writes [dst], params [value]: every byte of dst = value. */
cudaError_t LaunchTestFill(const KernelArgs& a, cudaStream_t stream) {
  if (a.readCount != 0 || a.writeCount != 1 || a.paramCount != 1 || !IsIntParam(a.params[0], 0) || a.params[0] > 255) return cudaErrorInvalidValue;
  Fill<<<Grid(a.writeBytes[0]), kBlock, 0, stream>>>(a.writes[0], a.writeBytes[0], static_cast<uint8_t>(a.params[0]));
  return cudaGetLastError();
}

/** hs.test.spinFill: writes [dst], params [nanoseconds, value]: busy for the time, then fills dst. */
cudaError_t LaunchTestSpinFill(const KernelArgs& a, cudaStream_t stream) {
  if (a.readCount != 0 || a.writeCount != 1 || a.paramCount != 2 || !IsIntParam(a.params[0], 0) || !IsIntParam(a.params[1], 0) || a.params[1] > 255) {
    return cudaErrorInvalidValue;
  }
  SpinFill<<<1, kBlock, 0, stream>>>(a.writes[0], a.writeBytes[0], static_cast<uint64_t>(a.params[0]), static_cast<uint8_t>(a.params[1]));
  return cudaGetLastError();
}

/** hs.test.copy: reads [src], writes [dst] of equal length: dst = src. */
cudaError_t LaunchTestCopy(const KernelArgs& a, cudaStream_t stream) {
  if (a.readCount != 1 || a.writeCount != 1 || a.paramCount != 0 || a.readBytes[0] != a.writeBytes[0]) return cudaErrorInvalidValue;
  Copy<<<Grid(a.writeBytes[0]), kBlock, 0, stream>>>(a.reads[0], a.writes[0], a.writeBytes[0]);
  return cudaGetLastError();
}

const KernelEntry kTestKernels[] = {
    {"hs.test.addScalar", LaunchTestAddScalar}, {"hs.test.fill", LaunchTestFill}, {"hs.test.spinFill", LaunchTestSpinFill},
    {"hs.test.copy", LaunchTestCopy},           {"hs.test.shape", nullptr},
};
const KernelTable kTestKernelTable = {sizeof(KernelTable), sizeof(kTestKernels) / sizeof(kTestKernels[0]), kTestKernels};

}  // namespace hs

namespace {

/** kernelTable() -> External: the hs.test.* entries, for hs_cuda.node's addKernels(). */
Napi::Value KernelTableBinding(const Napi::CallbackInfo& info) {
  // The table is static and read-only; Node-API externals carry a non-const pointer.
  auto table = Napi::External<hs::KernelTable>::New(info.Env(), const_cast<hs::KernelTable*>(&hs::kTestKernelTable));
  table.TypeTag(&hs::kKernelTableTypeTag);
  return table;
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("kernelTable", Napi::Function::New(env, KernelTableBinding, "kernelTable"));
  return exports;
}

}  // namespace

NODE_API_MODULE(hs_cuda_test, Init)
