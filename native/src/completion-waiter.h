// Stream completion without a host function on the stream: `notifyWhenDone(stream, device, id)` records a
// pooled event at the stream's end, and one waiter thread per environment polls the pending events
// (cudaEventQuery) and hands each completed id to the host-call channel's thread-safe function, so it
// reaches the JS dispatcher in the same queue (and order) as the host calls enqueued before it. The stream
// never stalls on the driver's host-function thread, and several streams complete independently.
//
// Polling policy: while the youngest pending event is younger than `spinNs`, the thread yields between
// polls (a short kernel is seen within a few microseconds); after that it sleeps between polls for
// age / `ageDivisor`, clamped to [minSleepNs, maxSleepNs], so a wait is seen at most about 1/ageDivisor of
// its length late and a long wait costs a bounded number of wake-ups. A new request wakes it at once.
#pragma once
#include <cuda_runtime_api.h>
#include <napi.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace hs {

struct HostCallChannel;

struct CompletionPolicy {
  uint64_t spinNs = 200000;
  uint64_t minSleepNs = 5000;
  uint64_t maxSleepNs = 1000000;
  uint64_t ageDivisor = 400;
};

class CompletionWaiter {
 public:
  explicit CompletionWaiter(HostCallChannel* channel) : channel_(channel) {}
  CompletionWaiter(const CompletionWaiter&) = delete;
  CompletionWaiter& operator=(const CompletionWaiter&) = delete;
  ~CompletionWaiter() { Stop(); }

  /** Records an event on `stream` (of `device`) and queues `id` for delivery once it completed; starts the thread on first use. */
  cudaError_t Enqueue(cudaStream_t stream, int device, double id);
  /** Joins the thread (pending ids are dropped: the channel is closed) and destroys the events. Idempotent. */
  void Stop();
  void SetPolicy(const CompletionPolicy& policy);
  /** Requests queued or polled and not yet handed to the channel. */
  uint64_t Pending();
  /** Polls that found no completion (for benchmarks and diagnostics). */
  uint64_t IdlePolls();

 private:
  using Clock = std::chrono::steady_clock;
  struct Entry {
    cudaEvent_t event;
    cudaStream_t stream;
    int device;
    double id;
    Clock::time_point since;
  };
  void Run();
  cudaEvent_t TakeEvent(int device, cudaError_t* status);
  void GiveBackEvent(int device, cudaEvent_t event);
  void Deliver(double id);

  HostCallChannel* channel_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<Entry> incoming_;
  /** Per device: idle events (timing disabled). */
  std::vector<std::vector<cudaEvent_t>> idle_;
  CompletionPolicy policy_;
  uint64_t pending_ = 0;
  uint64_t idlePolls_ = 0;
  bool stopping_ = false;
  bool stopped_ = false;
  std::thread thread_;
};

void RegisterCompletionBindings(Napi::Env env, Napi::Object exports);

}  // namespace hs
