// Streams (non-blocking, with priority) and events (timing disabled, optionally interprocess).
// Enqueue and query calls return the cudaError_t as a number; creation throws on failure.
#include <cuda_runtime_api.h>

#include "addon-state.h"
#include "cuda-status.h"
#include "napi-values.h"

namespace hs {
namespace {

/** streamCreate(device, priority) -> bigint */
Napi::Value StreamCreate(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Check(env, cudaSetDevice(ToInt(info[0], "device")), "cudaSetDevice");
  cudaStream_t stream = nullptr;
  Check(env, cudaStreamCreateWithPriority(&stream, cudaStreamNonBlocking, ToInt(info[1], "priority")), "cudaStreamCreateWithPriority");
  return FromPointer(env, stream);
}

Napi::Value StreamDestroy(const Napi::CallbackInfo& info) {
  return StatusValue(info.Env(), cudaStreamDestroy(ToHandle<cudaStream_t>(info[0], "stream")));
}

/** streamQuery(stream) -> 0 when idle, 600 (cudaErrorNotReady) when busy, else an error code */
Napi::Value StreamQuery(const Napi::CallbackInfo& info) {
  return StatusValue(info.Env(), cudaStreamQuery(ToHandle<cudaStream_t>(info[0], "stream")));
}

/** streamPriority(stream) -> the priority CUDA clamped it to */
Napi::Value StreamPriority(const Napi::CallbackInfo& info) {
  int priority = 0;
  Check(info.Env(), cudaStreamGetPriority(ToHandle<cudaStream_t>(info[0], "stream"), &priority), "cudaStreamGetPriority");
  return Napi::Number::New(info.Env(), priority);
}

/** eventCreate(device, interprocess) -> bigint */
Napi::Value EventCreate(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Check(env, cudaSetDevice(ToInt(info[0], "device")), "cudaSetDevice");
  unsigned flags = cudaEventDisableTiming;
  if (info[1].ToBoolean().Value()) flags |= cudaEventInterprocess;
  cudaEvent_t event = nullptr;
  Check(env, cudaEventCreateWithFlags(&event, flags), "cudaEventCreateWithFlags");
  return FromPointer(env, event);
}

Napi::Value EventDestroy(const Napi::CallbackInfo& info) {
  return StatusValue(info.Env(), cudaEventDestroy(ToHandle<cudaEvent_t>(info[0], "event")));
}

/** eventRecord(event, stream) -> status */
Napi::Value EventRecord(const Napi::CallbackInfo& info) {
  return StatusValue(info.Env(), cudaEventRecord(ToHandle<cudaEvent_t>(info[0], "event"), ToHandle<cudaStream_t>(info[1], "stream")));
}

/** eventQuery(event) -> 0 complete, 600 not ready, else an error code */
Napi::Value EventQuery(const Napi::CallbackInfo& info) {
  return StatusValue(info.Env(), cudaEventQuery(ToHandle<cudaEvent_t>(info[0], "event")));
}

/**
 * eventQueryMany(events: BigUint64Array, count, completed: Uint8Array) -> number complete, or
 * -(cudaError) on the first error. One call for many events (retirement polling).
 */
Napi::Value EventQueryMany(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto events = info[0].As<Napi::TypedArrayOf<uint64_t>>();
  size_t count = ToSize(info[1], "count");
  auto completed = info[2].As<Napi::Uint8Array>();
  if (count > events.ElementLength() || count > completed.ElementLength()) {
    throw Napi::RangeError::New(env, "eventQueryMany: count exceeds the arrays");
  }
  const uint64_t* handles = events.Data();
  uint8_t* flags = completed.Data();
  int done = 0;
  for (size_t i = 0; i < count; i++) {
    cudaError_t status = handles[i] == 0 ? cudaSuccess : cudaEventQuery(reinterpret_cast<cudaEvent_t>(static_cast<uintptr_t>(handles[i])));
    if (status == cudaSuccess) {
      flags[i] = 1;
      done++;
    } else if (status == cudaErrorNotReady) {
      flags[i] = 0;
    } else {
      cudaGetLastError();
      return Napi::Number::New(env, -static_cast<double>(status));
    }
  }
  cudaGetLastError();
  return Napi::Number::New(env, done);
}

/** streamWaitEvent(stream, event) -> status */
Napi::Value StreamWaitEvent(const Napi::CallbackInfo& info) {
  return StatusValue(info.Env(),
                     cudaStreamWaitEvent(ToHandle<cudaStream_t>(info[0], "stream"), ToHandle<cudaEvent_t>(info[1], "event"), 0));
}

}  // namespace

void RegisterStreamEventBindings(Napi::Env env, Napi::Object exports) {
  exports.Set("streamCreate", Napi::Function::New(env, StreamCreate, "streamCreate"));
  exports.Set("streamDestroy", Napi::Function::New(env, StreamDestroy, "streamDestroy"));
  exports.Set("streamQuery", Napi::Function::New(env, StreamQuery, "streamQuery"));
  exports.Set("streamPriority", Napi::Function::New(env, StreamPriority, "streamPriority"));
  exports.Set("eventCreate", Napi::Function::New(env, EventCreate, "eventCreate"));
  exports.Set("eventDestroy", Napi::Function::New(env, EventDestroy, "eventDestroy"));
  exports.Set("eventRecord", Napi::Function::New(env, EventRecord, "eventRecord"));
  exports.Set("eventQuery", Napi::Function::New(env, EventQuery, "eventQuery"));
  exports.Set("eventQueryMany", Napi::Function::New(env, EventQueryMany, "eventQueryMany"));
  exports.Set("streamWaitEvent", Napi::Function::New(env, StreamWaitEvent, "streamWaitEvent"));
}

}  // namespace hs
