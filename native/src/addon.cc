// Module entry: context-aware (NAPI_MODULE_INIT), so every worker thread gets its own AddonState.
#include <napi.h>

#include "addon-state.h"
#include "completion-waiter.h"
#include "cuda-status.h"

namespace hs {

AddonState::~AddonState() {
  if (channel) channel->Close();
  deferredRelease.Stop();
  nanovdb::ReleaseSortGraphs();
}

static Napi::Object Init(Napi::Env env, Napi::Object exports) {
  env.SetInstanceData<AddonState>(new AddonState());
  RegisterStatusBindings(env, exports);
  RegisterDeviceBindings(env, exports);
  RegisterStreamEventBindings(env, exports);
  RegisterMemoryBindings(env, exports);
  RegisterHostCallBindings(env, exports);
  RegisterStreamMemoryOpBindings(env, exports);
  RegisterIpcBindings(env, exports);
  RegisterGraphBindings(env, exports);
  RegisterKernelBindings(env, exports);
  RegisterBenchBindings(env, exports);
  RegisterTensorAbiBindings(env, exports);
  RegisterMemoryResourceBindings(env, exports);
  RegisterPeerCopyBindings(env, exports);
  RegisterCompletionBindings(env, exports);
  // 2: adds the peer-copy bindings (deviceCanAccessPeer, enablePeerAccess, memcpyPeerAsync, memcpyStagedAsync).
  // 3: adds the completion waiter (notifyWhenDone, setCompletionPolicy, completionWaiterStats) and benchCompletion.
  exports.Set("abiVersion", Napi::Number::New(env, 3));
  return exports;
}

}  // namespace hs

static Napi::Object InitAddon(Napi::Env env, Napi::Object exports) { return hs::Init(env, exports); }

NODE_API_MODULE(hs_cuda, InitAddon)
