// Node-API glue of topic mailboxes: doorbell pipes (create, adopt a received end, ring, watch on the event
// loop) and the ring control block's ordered commit and park (ring-control.h). A watch is a uv_poll handle
// on the pipe's read end: when it turns readable the pending bytes are drained and the JS callback runs on
// the loop thread, so a ring wakes the reader with one kernel wake-up and no socket stream machinery in
// between. Once the peer closed its write end the watch stops polling (the pipe would read as ready for ever).
#include "doorbell-watch.h"

#include <uv.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <unistd.h>
#include <string>

#include "doorbell.h"
#include "errno-name.h"
#include "ring-control.h"

namespace hs::ipc {
namespace {

[[noreturn]] void ThrowCode(Napi::Env env, const std::string& what, int code) {
  Napi::Error error = Napi::Error::New(env, what + ": " + std::strerror(code));
  // The shared table (errno-name.h): ENOSPC, EFBIG, EMFILE, ... keep their names, so the TypeScript layer maps
  // them as it maps a segment's (OutOfMemory, ResourceExhausted) instead of an unknown InvalidState.
  error.Set("code", Napi::String::New(env, ErrnoName(code)));
  error.Set("errno", Napi::Number::New(env, code));
  throw error;
}

int FdArgument(const Napi::CallbackInfo& info, std::size_t index) {
  if (info.Length() <= index || !info[index].IsNumber()) throw Napi::TypeError::New(info.Env(), "doorbell fd must be a number");
  int fd = info[index].As<Napi::Number>().Int32Value();
  if (fd < 0) throw Napi::RangeError::New(info.Env(), "doorbell fd must be non-negative");
  return fd;
}

// The control block at `offset` of the ArrayBuffer argument 0, bounds- and alignment-checked.
unsigned char* ControlArgument(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsArrayBuffer() || !info[1].IsNumber()) throw Napi::TypeError::New(env, "ring control needs (ArrayBuffer, byteOffset)");
  Napi::ArrayBuffer buffer = info[0].As<Napi::ArrayBuffer>();
  double offset = info[1].As<Napi::Number>().DoubleValue();
  auto* data = static_cast<unsigned char*>(buffer.Data());
  if (data == nullptr) throw Napi::Error::New(env, "ring control: the mailbox is closed");
  if (!(offset >= 0) || offset != static_cast<double>(static_cast<std::size_t>(offset)) || static_cast<std::size_t>(offset) % 64 != 0 ||
      static_cast<std::size_t>(offset) + kRingControlBytes > buffer.ByteLength()) {
    throw Napi::RangeError::New(env, "ring control: byteOffset must be a 64-byte aligned offset of a whole control block inside the buffer");
  }
  return data + static_cast<std::size_t>(offset);
}

class Watch {
 public:
  Watch(Napi::Env env, int fd, Napi::Function callback) : env_(env), fd_(fd), callback_(Napi::Persistent(callback)), context_(env, "hs.ipc.doorbell") {
    poll_.data = this;
  }

  int Start() {
    uv_loop_t* loop = nullptr;
    if (napi_get_uv_event_loop(env_, &loop) != napi_ok) return EINVAL;
    int code = uv_poll_init(loop, &poll_, fd_);
    if (code != 0) return -code;
    started_ = true;
    code = uv_poll_start(&poll_, UV_READABLE, OnReadable);
    return code == 0 ? 0 : -code;
  }

  // Stops the handle; the object is freed once libuv closed it.
  void Stop() {
    if (stopping_) return;
    stopping_ = true;
    if (!started_) {
      delete this;
      return;
    }
    uv_poll_stop(&poll_);
    uv_close(reinterpret_cast<uv_handle_t*>(&poll_), [](uv_handle_t* handle) { delete static_cast<Watch*>(handle->data); });
  }

 private:
  static void OnReadable(uv_poll_t* handle, int status, int) {
    auto* self = static_cast<Watch*>(handle->data);
    if (self->stopping_) return;
    // End of file: every writer closed its end, so no ring can come; stop polling and drain the rings once more.
    if (status == 0 && DrainDoorbell(self->fd_) == -EPIPE) uv_poll_stop(&self->poll_);
    Napi::HandleScope scope(self->env_);
    try {
      self->callback_.MakeCallback(self->env_.Global(), {}, self->context_);
    } catch (const Napi::Error& error) {
      napi_fatal_exception(self->env_, error.Value());
    }
  }

  Napi::Env env_;
  int fd_;
  Napi::FunctionReference callback_;
  Napi::AsyncContext context_;
  uv_poll_t poll_{};
  bool started_ = false;
  bool stopping_ = false;
};

// createDoorbellPipe() -> [readFd, writeFd], both non-blocking and close-on-exec.
Napi::Value CreateDoorbellPipeBinding(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int read_end = -1;
  int write_end = -1;
  int code = CreateDoorbellPipe(&read_end, &write_end);
  if (code != 0) ThrowCode(env, "cannot create a doorbell pipe", code);
  Napi::Array ends = Napi::Array::New(env, 2);
  ends.Set(0u, Napi::Number::New(env, read_end));
  ends.Set(1u, Napi::Number::New(env, write_end));
  return ends;
}

// adoptDoorbell(fd, readEnd) -> a checked, non-blocking duplicate of a received doorbell end.
Napi::Value AdoptDoorbellBinding(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int received = FdArgument(info, 0);
  if (info.Length() < 2 || !info[1].IsBoolean()) throw Napi::TypeError::New(env, "adoptDoorbell needs (fd, readEnd)");
  bool read_end = info[1].As<Napi::Boolean>().Value();
  int fd = -1;
  int code = AdoptDoorbellEnd(received, read_end, &fd);
  if (code != 0) ThrowCode(env, std::string("cannot adopt the doorbell ") + (read_end ? "read" : "write") + " end", code);
  return Napi::Number::New(env, fd);
}

Napi::Value RingDoorbellBinding(const Napi::CallbackInfo& info) {
  int code = RingDoorbell(FdArgument(info, 0));
  if (code != 0) ThrowCode(info.Env(), "cannot ring doorbell", code);
  return info.Env().Undefined();
}

Napi::Value CloseDoorbellBinding(const Napi::CallbackInfo& info) {
  close(FdArgument(info, 0));
  return info.Env().Undefined();
}

// watchDoorbell(fd, callback) -> handle for unwatchDoorbell.
Napi::Value WatchDoorbellBinding(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int fd = FdArgument(info, 0);
  if (info.Length() < 2 || !info[1].IsFunction()) throw Napi::TypeError::New(env, "watchDoorbell needs a callback");
  auto* watch = new Watch(env, fd, info[1].As<Napi::Function>());
  int code = watch->Start();
  if (code != 0) {
    watch->Stop();
    ThrowCode(env, "cannot watch doorbell", code);
  }
  // The handle is a plain external: unwatchDoorbell stops it; a forgotten watch lives as long as the loop.
  return Napi::External<Watch>::New(env, watch);
}

Napi::Value UnwatchDoorbellBinding(const Napi::CallbackInfo& info) {
  if (info.Length() < 1 || !info[0].IsExternal()) throw Napi::TypeError::New(info.Env(), "unwatchDoorbell needs a watch handle");
  Napi::External<Watch> handle = info[0].As<Napi::External<Watch>>();
  if (handle.Data() != nullptr) handle.Data()->Stop();
  return info.Env().Undefined();
}

// commitRing(buffer, controlOffset, tail, doorbellFd) -> true when the parked reader was rung.
Napi::Value CommitRingBinding(const Napi::CallbackInfo& info) {
  unsigned char* control = ControlArgument(info);
  if (info.Length() < 4 || !info[2].IsNumber()) throw Napi::TypeError::New(info.Env(), "commitRing needs a tail");
  auto tail = static_cast<std::uint32_t>(info[2].As<Napi::Number>().Int64Value());
  int fd = FdArgument(info, 3);
  if (!CommitRingTail(control, tail)) return Napi::Boolean::New(info.Env(), false);
  int code = RingDoorbell(fd);
  if (code != 0) ThrowCode(info.Env(), "cannot ring doorbell", code);
  return Napi::Boolean::New(info.Env(), true);
}

// parkRing(buffer, controlOffset) -> the tail the reader must drain to before it sleeps.
Napi::Value ParkRingBinding(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), ParkRingReader(ControlArgument(info)));
}

}  // namespace

void RegisterDoorbellBindings(Napi::Env env, Napi::Object exports) {
  exports.Set("createDoorbellPipe", Napi::Function::New(env, CreateDoorbellPipeBinding, "createDoorbellPipe"));
  exports.Set("adoptDoorbell", Napi::Function::New(env, AdoptDoorbellBinding, "adoptDoorbell"));
  exports.Set("ringDoorbell", Napi::Function::New(env, RingDoorbellBinding, "ringDoorbell"));
  exports.Set("closeDoorbell", Napi::Function::New(env, CloseDoorbellBinding, "closeDoorbell"));
  exports.Set("watchDoorbell", Napi::Function::New(env, WatchDoorbellBinding, "watchDoorbell"));
  exports.Set("unwatchDoorbell", Napi::Function::New(env, UnwatchDoorbellBinding, "unwatchDoorbell"));
  exports.Set("commitRing", Napi::Function::New(env, CommitRingBinding, "commitRing"));
  exports.Set("parkRing", Napi::Function::New(env, ParkRingBinding, "parkRing"));
}

}  // namespace hs::ipc
