// Per-environment state of the addon (one per Node.js main thread or worker): the host-call channel and
// the deferred-release thread. Owned by the environment's instance data, so it is destroyed when that
// environment is torn down (never from a static destructor).
#pragma once
#include <napi.h>

#include <memory>
#include <vector>

#include "deferred-release.h"
#include "host-callbacks.h"
#include "kernel-registry.h"

namespace hs {

struct AddonState {
  /** Created by `setHostCallDispatcher`; shared with callbacks still in flight. */
  std::shared_ptr<HostCallChannel> channel;
  DeferredRelease deferredRelease;
  /** Kernels other addons added (`addKernels`), after the built-in ones in registry order. */
  std::vector<KernelEntry> addedKernels;

  ~AddonState();
};

inline AddonState& StateOf(Napi::Env env) { return *env.GetInstanceData<AddonState>(); }

void RegisterDeviceBindings(Napi::Env env, Napi::Object exports);
void RegisterStreamEventBindings(Napi::Env env, Napi::Object exports);
void RegisterMemoryBindings(Napi::Env env, Napi::Object exports);
void RegisterHostCallBindings(Napi::Env env, Napi::Object exports);
void RegisterStreamMemoryOpBindings(Napi::Env env, Napi::Object exports);
void RegisterIpcBindings(Napi::Env env, Napi::Object exports);
void RegisterGraphBindings(Napi::Env env, Napi::Object exports);
void RegisterKernelBindings(Napi::Env env, Napi::Object exports);
void RegisterBenchBindings(Napi::Env env, Napi::Object exports);
void RegisterTensorAbiBindings(Napi::Env env, Napi::Object exports);
void RegisterMemoryResourceBindings(Napi::Env env, Napi::Object exports);
void RegisterPeerCopyBindings(Napi::Env env, Napi::Object exports);

}  // namespace hs
