#include "host-callbacks.h"

#include <cuda_runtime_api.h>

#include "addon-state.h"
#include "cuda-status.h"
#include "napi-values.h"

namespace hs {

namespace {

void Signal(HostCall* call) {
  // The waiting CUDA thread deletes `call` once it sees `done`: nothing touches it after the unlock.
  std::lock_guard<std::mutex> lock(call->mutex);
  call->done = true;
  call->doneCv.notify_one();
}

/** Runs on a CUDA runtime thread, in stream order. No CUDA calls here. */
void CUDART_CB OnHostFunc(void* data) {
  auto* call = static_cast<HostCall*>(data);
  std::shared_ptr<HostCallChannel> channel = call->channel;
  bool queued = false;
  {
    std::lock_guard<std::mutex> lock(channel->mutex);
    if (channel->open) queued = channel->tsfn.NonBlockingCall(call) == napi_ok;
  }
  if (!queued) {
    delete call;
    return;
  }
  if (!call->blocking) return;  // DeliverHostCall deletes it
  {
    std::unique_lock<std::mutex> lock(call->mutex);
    call->doneCv.wait(lock, [call] { return call->done; });
  }
  delete call;
}

/** setHostCallDispatcher(fn): fn(id) is called on the JS thread for every delivered host call. */
Napi::Value SetDispatcher(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  AddonState& state = StateOf(env);
  if (!info[0].IsFunction()) throw Napi::TypeError::New(env, "setHostCallDispatcher: expected a function");
  if (state.channel) throw Napi::Error::New(env, "setHostCallDispatcher: the dispatcher is already set in this environment");
  auto channel = std::make_shared<HostCallChannel>();
  channel->tsfn = HostCallChannel::Tsfn::New(env, info[0].As<Napi::Function>(), "hs host calls", 0, 1, channel.get(),
                                             [](Napi::Env, void*, HostCallChannel* finalized) {
                                               // Node finalized it (environment teardown): no more calls.
                                               std::lock_guard<std::mutex> lock(finalized->mutex);
                                               finalized->open = false;
                                             });
  channel->tsfn.Unref(env);
  state.channel = channel;
  return env.Undefined();
}

/** launchHostFunc(stream, id, blocking) -> cudaError_t */
Napi::Value LaunchHostFunc(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  AddonState& state = StateOf(env);
  if (!state.channel) throw Napi::Error::New(env, "launchHostFunc: call setHostCallDispatcher first");
  auto stream = ToHandle<cudaStream_t>(info[0], "stream");
  cudaError_t status = EnqueueHostCall(env, stream, info[1].As<Napi::Number>().DoubleValue(), info[2].ToBoolean().Value());
  return status == cudaSuccess ? Napi::Number::New(env, 0) : StatusValue(env, status);
}

/** pendingHostCalls() -> number of host calls enqueued and not yet delivered. */
Napi::Value PendingHostCalls(const Napi::CallbackInfo& info) {
  AddonState& state = StateOf(info.Env());
  return Napi::Number::New(info.Env(), state.channel ? static_cast<double>(state.channel->pending) : 0);
}

}  // namespace

cudaError_t EnqueueHostCall(Napi::Env env, cudaStream_t stream, double id, bool blocking) {
  AddonState& state = StateOf(env);
  auto* call = new HostCall();
  call->channel = state.channel;
  call->id = id;
  call->blocking = blocking;
  cudaError_t status = cudaLaunchHostFunc(stream, OnHostFunc, call);
  if (status != cudaSuccess) {
    delete call;
    return status;
  }
  state.channel->NoteEnqueued(env);
  return cudaSuccess;
}

void HostCallChannel::NoteEnqueued(Napi::Env env) {
  if (pending++ == 0) tsfn.Ref(env);
}

void DeliverHostCall(Napi::Env env, Napi::Function dispatch, HostCallChannel* channel, HostCall* call) {
  if (env == nullptr) {
    // Torn down with the call still queued: release the stream without running JS.
    if (call->blocking) Signal(call); else delete call;
    return;
  }
  if (--channel->pending == 0) channel->tsfn.Unref(env);
  napi_value argv[1] = {Napi::Number::New(env, call->id)};
  napi_value ignored;
  napi_status status = napi_call_function(env, env.Undefined(), dispatch, 1, argv, &ignored);
  if (call->blocking) Signal(call); else delete call;
  (void)status;  // an exception stays pending and surfaces as an uncaught exception
}

void HostCallChannel::Close() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (open) {
      open = false;
      tsfn.Abort();
    }
  }
  // Outside the lock: the waiter thread takes it to deliver.
  if (waiter) waiter->Stop();
}

void RegisterHostCallBindings(Napi::Env env, Napi::Object exports) {
  exports.Set("setHostCallDispatcher", Napi::Function::New(env, SetDispatcher, "setHostCallDispatcher"));
  exports.Set("launchHostFunc", Napi::Function::New(env, LaunchHostFunc, "launchHostFunc"));
  exports.Set("pendingHostCalls", Napi::Function::New(env, PendingHostCalls, "pendingHostCalls"));
}

}  // namespace hs
