#include "completion-waiter.h"

#include <algorithm>

#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "addon-state.h"
#include "cuda-status.h"
#include "host-callbacks.h"
#include "napi-values.h"

namespace hs {

cudaEvent_t CompletionWaiter::TakeEvent(int device, cudaError_t* status) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (device >= 0 && static_cast<size_t>(device) < idle_.size() && !idle_[device].empty()) {
      cudaEvent_t event = idle_[device].back();
      idle_[device].pop_back();
      *status = cudaSuccess;
      return event;
    }
  }
  cudaEvent_t event = nullptr;
  *status = cudaSetDevice(device);
  if (*status == cudaSuccess) *status = cudaEventCreateWithFlags(&event, cudaEventDisableTiming);
  return *status == cudaSuccess ? event : nullptr;
}

void CompletionWaiter::GiveBackEvent(int device, cudaEvent_t event) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (stopped_) {
    cudaEventDestroy(event);
    return;
  }
  if (idle_.size() <= static_cast<size_t>(device)) idle_.resize(device + 1);
  idle_[device].push_back(event);
}

cudaError_t CompletionWaiter::Enqueue(cudaStream_t stream, int device, double id) {
  cudaError_t status = cudaSuccess;
  cudaEvent_t event = TakeEvent(device, &status);
  if (status != cudaSuccess) return status;
  status = cudaEventRecord(event, stream);
  if (status != cudaSuccess) {
    GiveBackEvent(device, event);
    return status;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (stopped_) {
    cudaEventDestroy(event);
    return cudaErrorNotPermitted;
  }
  incoming_.push_back(Entry{event, stream, device, id, Clock::now()});
  pending_++;
  if (!thread_.joinable()) thread_ = std::thread([this] { Run(); });
  wake_.notify_one();
  return cudaSuccess;
}

void CompletionWaiter::Deliver(double id) {
  auto* call = new HostCall();
  call->id = id;
  bool queued = false;
  {
    std::lock_guard<std::mutex> lock(channel_->mutex);
    if (channel_->open) queued = channel_->tsfn.NonBlockingCall(call) == napi_ok;
  }
  if (!queued) delete call;  // else DeliverHostCall deletes it (a non-blocking call)
}

void CompletionWaiter::Run() {
#ifdef __linux__
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);  // short sleeps between polls: no 50 us default slack
#endif
  std::vector<Entry> polled;
  std::vector<Entry> completed;
  std::vector<cudaStream_t> busy;
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    if (polled.empty()) wake_.wait(lock, [this] { return stopping_ || !incoming_.empty(); });
    if (stopping_) break;
    for (Entry& e : incoming_) polled.push_back(e);
    incoming_.clear();
    CompletionPolicy policy = policy_;
    lock.unlock();

    // Entries of one stream complete in order: after its first busy event, later ones are not polled.
    busy.clear();
    completed.clear();
    size_t kept = 0;
    for (size_t i = 0; i < polled.size(); i++) {
      Entry& e = polled[i];
      bool done = false;
      if (std::find(busy.begin(), busy.end(), e.stream) == busy.end()) {
        cudaError_t q = cudaEventQuery(e.event);
        if (q == cudaErrorNotReady) busy.push_back(e.stream);
        else done = true;  // an error too: the JS side learns about it from its next CUDA call
      }
      if (done) completed.push_back(e);
      else polled[kept++] = e;
    }
    polled.resize(kept);
    if (!completed.empty()) {
      // Counted off before delivery: JS may look at Pending() as soon as it received an id.
      lock.lock();
      pending_ -= completed.size();
      lock.unlock();
    }
    for (const Entry& e : completed) {
      Deliver(e.id);
      GiveBackEvent(e.device, e.event);
    }

    lock.lock();
    if (polled.empty() || !incoming_.empty() || stopping_) continue;
    if (completed.empty()) idlePolls_++;
    Clock::time_point now = Clock::now();
    uint64_t youngest = UINT64_MAX;
    for (const Entry& e : polled) {
      auto age = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(now - e.since).count());
      youngest = std::min(youngest, age);
    }
    if (youngest < policy.spinNs) {
      lock.unlock();
      std::this_thread::yield();
      lock.lock();
      continue;
    }
    uint64_t sleep = std::clamp<uint64_t>(youngest / std::max<uint64_t>(policy.ageDivisor, 1), policy.minSleepNs, policy.maxSleepNs);
    wake_.wait_for(lock, std::chrono::nanoseconds(sleep), [this] { return stopping_ || !incoming_.empty(); });
  }
  // Stopping: the channel is closed, nothing more is delivered; the events go with the others.
  for (Entry& e : incoming_) polled.push_back(e);
  incoming_.clear();
  pending_ = 0;
  lock.unlock();
  for (const Entry& e : polled) cudaEventDestroy(e.event);
}

void CompletionWaiter::Stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopped_) return;
    stopping_ = true;
    wake_.notify_one();
  }
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> lock(mutex_);
  stopped_ = true;
  for (Entry& e : incoming_) cudaEventDestroy(e.event);
  incoming_.clear();
  for (auto& events : idle_)
    for (cudaEvent_t event : events) cudaEventDestroy(event);
  idle_.clear();
}

void CompletionWaiter::SetPolicy(const CompletionPolicy& policy) {
  std::lock_guard<std::mutex> lock(mutex_);
  policy_ = policy;
  wake_.notify_one();
}

uint64_t CompletionWaiter::Pending() {
  std::lock_guard<std::mutex> lock(mutex_);
  return pending_;
}

uint64_t CompletionWaiter::IdlePolls() {
  std::lock_guard<std::mutex> lock(mutex_);
  return idlePolls_;
}

namespace {

HostCallChannel& ChannelOf(Napi::Env env, const char* method) {
  AddonState& state = StateOf(env);
  if (!state.channel) throw Napi::Error::New(env, std::string(method) + ": call setHostCallDispatcher first");
  return *state.channel;
}

/**
 * notifyWhenDone(stream, device, id) -> cudaError_t: dispatch(id) runs on the JS thread once everything enqueued
 * on `stream` so far completed, after the host calls enqueued on it before. A capturing stream gets a
 * (non-blocking) host function instead, which becomes part of the graph like any other work.
 */
Napi::Value NotifyWhenDone(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  HostCallChannel& channel = ChannelOf(env, "notifyWhenDone");
  auto stream = ToHandle<cudaStream_t>(info[0], "stream");
  int device = ToInt(info[1], "device");
  double id = info[2].As<Napi::Number>().DoubleValue();
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  cudaError_t status = cudaStreamIsCapturing(stream, &capture);
  if (status == cudaSuccess && capture != cudaStreamCaptureStatusNone) return StatusValue(env, EnqueueHostCall(env, stream, id, false));
  if (status == cudaSuccess) {
    if (!channel.waiter) channel.waiter = std::make_unique<CompletionWaiter>(&channel);
    status = channel.waiter->Enqueue(stream, device, id);
  }
  if (status != cudaSuccess) return StatusValue(env, status);
  channel.NoteEnqueued(env);
  return Napi::Number::New(env, 0);
}

/** setCompletionPolicy(spinNs, minSleepNs, maxSleepNs, ageDivisor): how the waiter thread polls (benchmarks). */
Napi::Value SetCompletionPolicy(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  HostCallChannel& channel = ChannelOf(env, "setCompletionPolicy");
  CompletionPolicy policy;
  policy.spinNs = ToSize(info[0], "spinNs");
  policy.minSleepNs = ToSize(info[1], "minSleepNs");
  policy.maxSleepNs = std::max<uint64_t>(ToSize(info[2], "maxSleepNs"), policy.minSleepNs);
  policy.ageDivisor = std::max<uint64_t>(ToSize(info[3], "ageDivisor"), 1);
  if (!channel.waiter) channel.waiter = std::make_unique<CompletionWaiter>(&channel);
  channel.waiter->SetPolicy(policy);
  return env.Undefined();
}

/** completionWaiterStats() -> { pending, idlePolls } */
Napi::Value CompletionWaiterStats(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  AddonState& state = StateOf(env);
  CompletionWaiter* waiter = state.channel ? state.channel->waiter.get() : nullptr;
  Napi::Object stats = Napi::Object::New(env);
  stats.Set("pending", Napi::Number::New(env, waiter ? static_cast<double>(waiter->Pending()) : 0));
  stats.Set("idlePolls", Napi::Number::New(env, waiter ? static_cast<double>(waiter->IdlePolls()) : 0));
  return stats;
}

}  // namespace

void RegisterCompletionBindings(Napi::Env env, Napi::Object exports) {
  exports.Set("notifyWhenDone", Napi::Function::New(env, NotifyWhenDone, "notifyWhenDone"));
  exports.Set("setCompletionPolicy", Napi::Function::New(env, SetCompletionPolicy, "setCompletionPolicy"));
  exports.Set("completionWaiterStats", Napi::Function::New(env, CompletionWaiterStats, "completionWaiterStats"));
}

}  // namespace hs
