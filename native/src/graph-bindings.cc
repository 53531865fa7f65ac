// CUDA graph capture on a stream: begin, end, instantiate, launch, destroy.
#include <cuda_runtime_api.h>

#include "addon-state.h"
#include "cuda-status.h"
#include "napi-values.h"

namespace hs {
namespace {

/** streamBeginCapture(stream) -> status (thread-local capture mode) */
Napi::Value BeginCapture(const Napi::CallbackInfo& info) {
  return StatusValue(info.Env(), cudaStreamBeginCapture(ToHandle<cudaStream_t>(info[0], "stream"), cudaStreamCaptureModeThreadLocal));
}

/** streamEndCapture(stream) -> bigint graph */
Napi::Value EndCapture(const Napi::CallbackInfo& info) {
  cudaGraph_t graph = nullptr;
  Check(info.Env(), cudaStreamEndCapture(ToHandle<cudaStream_t>(info[0], "stream"), &graph), "cudaStreamEndCapture");
  return FromPointer(info.Env(), graph);
}

/** graphInstantiate(graph) -> bigint executable graph */
Napi::Value Instantiate(const Napi::CallbackInfo& info) {
  cudaGraphExec_t exec = nullptr;
  Check(info.Env(), cudaGraphInstantiate(&exec, ToHandle<cudaGraph_t>(info[0], "graph"), 0), "cudaGraphInstantiate");
  return FromPointer(info.Env(), exec);
}

/** graphLaunch(exec, stream) -> status */
Napi::Value Launch(const Napi::CallbackInfo& info) {
  return StatusValue(info.Env(), cudaGraphLaunch(ToHandle<cudaGraphExec_t>(info[0], "exec"), ToHandle<cudaStream_t>(info[1], "stream")));
}

Napi::Value ExecDestroy(const Napi::CallbackInfo& info) {
  return StatusValue(info.Env(), cudaGraphExecDestroy(ToHandle<cudaGraphExec_t>(info[0], "exec")));
}

Napi::Value GraphDestroy(const Napi::CallbackInfo& info) {
  return StatusValue(info.Env(), cudaGraphDestroy(ToHandle<cudaGraph_t>(info[0], "graph")));
}

}  // namespace

void RegisterGraphBindings(Napi::Env env, Napi::Object exports) {
  exports.Set("streamBeginCapture", Napi::Function::New(env, BeginCapture, "streamBeginCapture"));
  exports.Set("streamEndCapture", Napi::Function::New(env, EndCapture, "streamEndCapture"));
  exports.Set("graphInstantiate", Napi::Function::New(env, Instantiate, "graphInstantiate"));
  exports.Set("graphLaunch", Napi::Function::New(env, Launch, "graphLaunch"));
  exports.Set("graphExecDestroy", Napi::Function::New(env, ExecDestroy, "graphExecDestroy"));
  exports.Set("graphDestroy", Napi::Function::New(env, GraphDestroy, "graphDestroy"));
}

}  // namespace hs
