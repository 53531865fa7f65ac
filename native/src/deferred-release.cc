#include "deferred-release.h"

#include <cuda_runtime_api.h>

namespace hs {

void DeferredRelease::Push(ReleaseKind kind, void* pointer) {
  std::lock_guard<std::mutex> lock(mutex_);
  queue_.push_back({kind, pointer});
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
    }
    cudaGetLastError();
    lock.lock();
    pending_--;
  }
}

}  // namespace hs
