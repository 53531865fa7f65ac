// Host functions in stream order (cudaLaunchHostFunc) delivered to JavaScript through one thread-safe
// function per environment. A "blocking" call holds its stream until the JS function returned (the
// Backend contract: after earlier work, before later work); a "signal" call only notifies JS (stream
// synchronization, copies into JS buffers). The thread-safe function keeps the event loop alive only
// while calls are pending. (A device-side gate, cuStreamWaitValue64 after the host function, is not an
// alternative: the driver blocks the enqueuing thread on such a wait behind a pending host function.)
#pragma once
#include <cuda_runtime_api.h>
#include <napi.h>

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>

#include "completion-waiter.h"

namespace hs {

struct HostCallChannel;

struct HostCall {
  std::shared_ptr<HostCallChannel> channel;
  double id = 0;
  bool blocking = false;
  std::mutex mutex;
  std::condition_variable doneCv;
  bool done = false;
};

void DeliverHostCall(Napi::Env env, Napi::Function dispatch, HostCallChannel* channel, HostCall* call);

struct HostCallChannel {
  using Tsfn = Napi::TypedThreadSafeFunction<HostCallChannel, HostCall, DeliverHostCall>;
  std::mutex mutex;
  bool open = true;
  Tsfn tsfn;
  /** Calls enqueued and not yet delivered; touched on the JS thread only. */
  uint64_t pending = 0;
  /** Delivers stream completions (`notifyWhenDone`) into this channel; created on first use, JS thread only. */
  std::unique_ptr<CompletionWaiter> waiter;

  /** Counts a call enqueued (JS thread): the thread-safe function keeps the loop alive while any is pending. */
  void NoteEnqueued(Napi::Env env);
  /** Stops accepting calls, aborts the thread-safe function (waiting callbacks are released), joins the waiter. */
  void Close();
};

/** cudaLaunchHostFunc of a host call `id` on `stream` (counted as pending on success); JS thread only. */
cudaError_t EnqueueHostCall(Napi::Env env, cudaStream_t stream, double id, bool blocking);

}  // namespace hs
