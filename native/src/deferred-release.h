// Frees that may synchronize the device (cudaFree, cudaFreeHost, cudaHostUnregister, cudaIpcCloseMemHandle) run on this
// thread, never on the JS thread: a host function waiting for the JS thread would otherwise deadlock
// with an implicit device synchronization. The device sync these calls perform is what orders the free
// after work already enqueued on the memory.
#pragma once
#include <cuda_runtime_api.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>

namespace hs {

enum class ReleaseKind : int { DeviceFree = 0, PinnedFree = 1, HostUnregister = 2, IpcClose = 3 };

class DeferredRelease {
 public:
  DeferredRelease() = default;
  DeferredRelease(const DeferredRelease&) = delete;
  DeferredRelease& operator=(const DeferredRelease&) = delete;
  ~DeferredRelease() { Stop(); }

  /**
   * Queues a release; starts the thread on first use. When `after` is not null the thread first waits
   * for that event (then destroys it), so the release is ordered after the work the event captured.
   */
  void Push(ReleaseKind kind, void* pointer, cudaEvent_t after);
  /** Runs every queued release, then joins the thread. Idempotent. */
  void Stop();
  /** Releases queued or running (for tests and diagnostics). */
  uint64_t Pending();

 private:
  struct Item {
    ReleaseKind kind;
    void* pointer;
    cudaEvent_t after;
  };
  void Run();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Item> queue_;
  uint64_t pending_ = 0;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace hs
