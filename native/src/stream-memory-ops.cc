// Stream memory operations (write / wait a 64-bit value) from the driver API, reached through
// cudaGetDriverEntryPointByVersion so the addon never links libcuda (absent on GPU-less machines).
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cudaTypedefs.h>

#include "addon-state.h"
#include "cuda-status.h"
#include "napi-values.h"

namespace hs {
namespace {

struct StreamMemoryOps {
  PFN_cuStreamWriteValue64_v11070 write = nullptr;
  PFN_cuStreamWaitValue64_v11070 wait = nullptr;
};

/** Looks both entry points up once per process; returns null when the driver lacks them. */
const StreamMemoryOps* Resolve(Napi::Env env) {
  static StreamMemoryOps ops;  // plain function pointers: nothing to destroy
  static bool resolved = false;
  if (!resolved) {
    cudaDriverEntryPointQueryResult found{};
    void* p = nullptr;
    Check(env, cudaGetDriverEntryPointByVersion("cuStreamWriteValue64", &p, 12000, cudaEnableDefault, &found), "cudaGetDriverEntryPointByVersion(cuStreamWriteValue64)");
    if (found == cudaDriverEntryPointSuccess) ops.write = reinterpret_cast<PFN_cuStreamWriteValue64_v11070>(p);
    p = nullptr;
    Check(env, cudaGetDriverEntryPointByVersion("cuStreamWaitValue64", &p, 12000, cudaEnableDefault, &found), "cudaGetDriverEntryPointByVersion(cuStreamWaitValue64)");
    if (found == cudaDriverEntryPointSuccess) ops.wait = reinterpret_cast<PFN_cuStreamWaitValue64_v11070>(p);
    resolved = true;
  }
  return ops.write != nullptr && ops.wait != nullptr ? &ops : nullptr;
}

const StreamMemoryOps& Require(Napi::Env env) {
  const StreamMemoryOps* ops = Resolve(env);
  if (ops == nullptr) throw Napi::Error::New(env, "stream memory operations: the driver has no cuStreamWriteValue64/cuStreamWaitValue64");
  return *ops;
}

/** streamWriteValue64(stream, address, value: bigint) -> CUresult */
Napi::Value WriteValue(const Napi::CallbackInfo& info) {
  const StreamMemoryOps& ops = Require(info.Env());
  CUresult r = ops.write(ToHandle<CUstream>(info[0], "stream"), static_cast<CUdeviceptr>(ToU64(info[1], "address")),
                         ToU64(info[2], "value"), CU_STREAM_WRITE_VALUE_DEFAULT);
  return Napi::Number::New(info.Env(), static_cast<double>(r));
}

/** streamWaitValue64(stream, address, value: bigint) -> CUresult; waits until *address >= value. */
Napi::Value WaitValue(const Napi::CallbackInfo& info) {
  const StreamMemoryOps& ops = Require(info.Env());
  CUresult r = ops.wait(ToHandle<CUstream>(info[0], "stream"), static_cast<CUdeviceptr>(ToU64(info[1], "address")),
                        ToU64(info[2], "value"), CU_STREAM_WAIT_VALUE_GEQ);
  return Napi::Number::New(info.Env(), static_cast<double>(r));
}

/** streamMemoryOpsSupported() -> boolean */
Napi::Value Supported(const Napi::CallbackInfo& info) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    cudaGetLastError();
    return Napi::Boolean::New(info.Env(), false);
  }
  return Napi::Boolean::New(info.Env(), Resolve(info.Env()) != nullptr);
}

}  // namespace

void RegisterStreamMemoryOpBindings(Napi::Env env, Napi::Object exports) {
  exports.Set("streamWriteValue64", Napi::Function::New(env, WriteValue, "streamWriteValue64"));
  exports.Set("streamWaitValue64", Napi::Function::New(env, WaitValue, "streamWaitValue64"));
  exports.Set("streamMemoryOpsSupported", Napi::Function::New(env, Supported, "streamMemoryOpsSupported"));
}

}  // namespace hs
