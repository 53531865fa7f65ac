// Copies of device memory between two GPUs for PeerCopyOperations: a direct peer copy where the destination
// device can reach the source (peer access enabled once per ordered pair), else two stream-ordered copies
// through a pinned host staging buffer the caller owns. Every call returns a cudaError_t as a number.
#include <cuda_runtime_api.h>

#include <mutex>
#include <set>
#include <utility>

#include "addon-state.h"
#include "cuda-status.h"
#include "napi-values.h"

namespace hs {
namespace {

/** Restores the calling thread's current device when it goes out of scope. */
class CurrentDeviceGuard {
 public:
  CurrentDeviceGuard() : ok_(cudaGetDevice(&previous_) == cudaSuccess) {}
  ~CurrentDeviceGuard() {
    if (ok_) cudaSetDevice(previous_);
  }
  CurrentDeviceGuard(const CurrentDeviceGuard&) = delete;
  CurrentDeviceGuard& operator=(const CurrentDeviceGuard&) = delete;
  bool ok() const { return ok_; }

 private:
  int previous_ = 0;
  bool ok_;
};

/** Ordered pairs (device, peer) whose access this process enabled; peer access is per context, so per process. */
std::mutex enabledMutex;
std::set<std::pair<int, int>> enabledPairs;

/** deviceCanAccessPeer(device, peer) -> 1 or 0, or -status when CUDA refused the query. */
Napi::Value DeviceCanAccessPeer(const Napi::CallbackInfo& info) {
  const int device = ToInt(info[0], "device");
  const int peer = ToInt(info[1], "peer");
  if (device == peer) return Napi::Number::New(info.Env(), 1);
  int can = 0;
  const cudaError_t status = cudaDeviceCanAccessPeer(&can, device, peer);
  if (status != cudaSuccess) {
    cudaGetLastError();
    return Napi::Number::New(info.Env(), -static_cast<double>(status));
  }
  return Napi::Number::New(info.Env(), can != 0 ? 1 : 0);
}

/**
 * enablePeerAccess(device, peer) -> status: lets work on `device` reach `peer`'s memory
 * (cudaDeviceEnablePeerAccess with `device` current). Already enabled counts as success.
 */
Napi::Value EnablePeerAccess(const Napi::CallbackInfo& info) {
  const int device = ToInt(info[0], "device");
  const int peer = ToInt(info[1], "peer");
  if (device == peer) return StatusValue(info.Env(), cudaSuccess);
  std::lock_guard<std::mutex> lock(enabledMutex);
  if (enabledPairs.count({device, peer}) != 0) return StatusValue(info.Env(), cudaSuccess);
  CurrentDeviceGuard guard;
  if (!guard.ok()) return StatusValue(info.Env(), cudaGetLastError());
  cudaError_t status = cudaSetDevice(device);
  if (status == cudaSuccess) {
    status = cudaDeviceEnablePeerAccess(peer, 0);
    if (status == cudaErrorPeerAccessAlreadyEnabled) {
      cudaGetLastError();  // not sticky: clear it so later calls do not see it
      status = cudaSuccess;
    }
  }
  if (status == cudaSuccess) enabledPairs.insert({device, peer});
  return StatusValue(info.Env(), status);
}

/** memcpyPeerAsync(dst, dstDevice, src, srcDevice, bytes, stream) -> status (cudaMemcpyPeerAsync). */
Napi::Value MemcpyPeerAsync(const Napi::CallbackInfo& info) {
  return StatusValue(info.Env(), cudaMemcpyPeerAsync(ToHandle<void*>(info[0], "dst"), ToInt(info[1], "dstDevice"), ToHandle<const void*>(info[2], "src"),
                                                     ToInt(info[3], "srcDevice"), ToSize(info[4], "bytes"), ToHandle<cudaStream_t>(info[5], "stream")));
}

/**
 * memcpyStagedAsync(dst, src, staging, bytes, stream) -> status: `src` (device memory of any device) into the
 * pinned `staging` buffer, then `staging` into `dst`, both on `stream` (unified addressing: cudaMemcpyDefault
 * finds each pointer's device; a copy may be issued to a stream of another device than its memory). The
 * staging buffer is in use until the second copy completes in stream order.
 */
Napi::Value MemcpyStagedAsync(const Napi::CallbackInfo& info) {
  void* dst = ToHandle<void*>(info[0], "dst");
  const void* src = ToHandle<const void*>(info[1], "src");
  void* staging = ToHandle<void*>(info[2], "staging");
  const size_t bytes = ToSize(info[3], "bytes");
  cudaStream_t stream = ToHandle<cudaStream_t>(info[4], "stream");
  cudaError_t status = cudaMemcpyAsync(staging, src, bytes, cudaMemcpyDefault, stream);
  if (status == cudaSuccess) status = cudaMemcpyAsync(dst, staging, bytes, cudaMemcpyDefault, stream);
  return StatusValue(info.Env(), status);
}

}  // namespace

void RegisterPeerCopyBindings(Napi::Env env, Napi::Object exports) {
  exports.Set("deviceCanAccessPeer", Napi::Function::New(env, DeviceCanAccessPeer, "deviceCanAccessPeer"));
  exports.Set("enablePeerAccess", Napi::Function::New(env, EnablePeerAccess, "enablePeerAccess"));
  exports.Set("memcpyPeerAsync", Napi::Function::New(env, MemcpyPeerAsync, "memcpyPeerAsync"));
  exports.Set("memcpyStagedAsync", Napi::Function::New(env, MemcpyStagedAsync, "memcpyStagedAsync"));
}

}  // namespace hs
