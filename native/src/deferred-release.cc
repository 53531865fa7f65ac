#include "deferred-release.h"

#include <cuda_runtime_api.h>

#include <chrono>

namespace hs {

void DeferredRelease::Push(ReleaseKind kind, void* pointer, cudaEvent_t after) {
  std::lock_guard<std::mutex> lock(mutex_);
  queue_.push_back({kind, pointer, after});
  pending_++;
  if (!thread_.joinable() && !stopping_) thread_ = std::thread([this] { Run(); });
  wake_.notify_one();
}

uint64_t DeferredRelease::Pending() {
  std::lock_guard<std::mutex> lock(mutex_);
  return pending_;
}

void DeferredRelease::Stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_ && !thread_.joinable()) return;
    stopping_ = true;
    wake_.notify_one();
  }
  if (thread_.joinable()) thread_.join();
}

void DeferredRelease::Run() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping and drained
    Item item = queue_.front();
    queue_.pop_front();
    lock.unlock();
    if (item.after != nullptr) {
      // Poll rather than block, so a stop (environment teardown) never hangs on work that cannot finish
      // any more; such a release is skipped (the process or worker is going away).
      bool ready = false;
      for (;;) {
        cudaError_t status = cudaEventQuery(item.after);
        if (status != cudaErrorNotReady) {
          ready = status == cudaSuccess;
          break;
        }
        {
          std::lock_guard<std::mutex> check(mutex_);
          if (stopping_) break;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
      cudaEventDestroy(item.after);
      if (!ready) {
        cudaGetLastError();
        lock.lock();
        pending_--;
        continue;
      }
    }
    switch (item.kind) {
      case ReleaseKind::DeviceFree:
        cudaFree(item.pointer);
        break;
      case ReleaseKind::PinnedFree:
        cudaFreeHost(item.pointer);
        break;
      case ReleaseKind::HostUnregister:
        cudaHostUnregister(item.pointer);
        break;
      case ReleaseKind::IpcClose:
        cudaIpcCloseMemHandle(item.pointer);
        break;
    }
    cudaGetLastError();
    lock.lock();
    pending_--;
  }
}

}  // namespace hs
