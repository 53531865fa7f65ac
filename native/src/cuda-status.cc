#include "cuda-status.h"

#include <string>

namespace hs {

void ThrowCuda(Napi::Env env, cudaError_t status, const char* what) {
  cudaGetLastError();  // clear non-sticky errors so the next call starts clean
  std::string message = std::string(what) + ": " + cudaGetErrorName(status) + " (" + std::to_string(static_cast<int>(status)) +
                        "): " + cudaGetErrorString(status);
  Napi::Error error = Napi::Error::New(env, message);
  error.Set("cudaError", Napi::Number::New(env, static_cast<double>(status)));
  throw error;
}

namespace {

/** errorName(code) -> "cudaErrorNotReady" etc. */
Napi::Value ErrorName(const Napi::CallbackInfo& info) {
  auto code = static_cast<cudaError_t>(info[0].As<Napi::Number>().Int32Value());
  return Napi::String::New(info.Env(), std::string(cudaGetErrorName(code)) + ": " + cudaGetErrorString(code));
}

}  // namespace

void RegisterStatusBindings(Napi::Env env, Napi::Object exports) {
  exports.Set("errorName", Napi::Function::New(env, ErrorName, "errorName"));
}

}  // namespace hs
