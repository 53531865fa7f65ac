// CUDA error reporting for the bindings: hot-path calls return the cudaError_t as a number (0 = success);
// calls that create something throw a JS Error carrying `cudaError` (the code) and the CUDA error name.
#pragma once
#include <cuda_runtime_api.h>
#include <napi.h>

namespace hs {

/** Throws a JS Error "<what>: <cudaErrorName> (<code>): <description>" with a numeric `cudaError` property. */
[[noreturn]] void ThrowCuda(Napi::Env env, cudaError_t status, const char* what);

/** Throws when `status` is not cudaSuccess (clearing non-sticky errors first). */
inline void Check(Napi::Env env, cudaError_t status, const char* what) {
  if (status != cudaSuccess) ThrowCuda(env, status, what);
}

/** Returns `status` as a JS number after clearing the runtime's last-error state. */
inline Napi::Value StatusValue(Napi::Env env, cudaError_t status) {
  if (status != cudaSuccess) cudaGetLastError();
  return Napi::Number::New(env, static_cast<double>(status));
}

void RegisterStatusBindings(Napi::Env env, Napi::Object exports);

}  // namespace hs
