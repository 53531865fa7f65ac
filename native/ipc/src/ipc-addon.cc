// Node-API glue of the @hs/ipc addon: shared-memory segments as external ArrayBuffers, peer
// credentials of a Unix socket, pid liveness. The logic lives in shm-segment.cc and peer-process.cc.
// Errors are thrown as JS Errors whose `code` is the errno name (for example EEXIST); the TypeScript
// layer turns them into typed Results.
#include <napi.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>
#include <unistd.h>

#ifdef HS_IPC_DOORBELLS
#include "doorbell-watch.h"
#endif
#include "errno-name.h"
#include "fd-passing.h"
#include "peer-process.h"
#include "shm-segment.h"

namespace hs::ipc {
namespace {

// Live mappings of this environment by address, so closeSegment(buffer) finds the one to unmap. The
// buffer's finalizer and closeSegment both unmap; whichever runs first does it, the finalizer frees.
struct AddonState {
  std::mutex lock;
  std::unordered_map<void*, Mapping*> mappings;
};

// One mapping with exactly one owner at a time: the binding's unique_ptr from before the mmap until an
// ArrayBuffer is made over it, then that buffer's finalizer (this is its hint). Destruction unmaps, so
// every error path releases the mapping once and nothing else does.
struct ExternalMapping {
  AddonState* state;
  Mapping mapping;
  explicit ExternalMapping(AddonState* owner) : state(owner) {}
  ExternalMapping(const ExternalMapping&) = delete;
  ExternalMapping& operator=(const ExternalMapping&) = delete;
  ~ExternalMapping() { UnmapSegment(&mapping); }
};

// Throws `message` as is, with `code` (the errno name) and `errno` set.
[[noreturn]] void ThrowCoded(Napi::Env env, const std::string& message, int code) {
  Napi::Error error = Napi::Error::New(env, message);
  error.Set("code", Napi::String::New(env, ErrnoName(code)));
  error.Set("errno", Napi::Number::New(env, code));
  throw error;
}

[[noreturn]] void ThrowErrno(Napi::Env env, const std::string& what, int code) {
  ThrowCoded(env, what + ": " + std::strerror(code), code);
}

std::string SegmentName(const Napi::CallbackInfo& info) {
  if (info.Length() < 1 || !info[0].IsString()) throw Napi::TypeError::New(info.Env(), "segment name must be a string");
  std::string name = info[0].As<Napi::String>().Utf8Value();
  if (!ValidSegmentName(name.c_str())) ThrowErrno(info.Env(), "invalid segment name \"" + name + "\"", EINVAL);
  return name;
}

std::size_t ByteCount(const Napi::CallbackInfo& info, std::size_t index) {
  if (info.Length() <= index || !info[index].IsNumber()) throw Napi::TypeError::New(info.Env(), "byte count must be a number");
  double value = info[index].As<Napi::Number>().DoubleValue();
  if (!(value >= 0) || value > 9007199254740991.0 || value != static_cast<double>(static_cast<std::size_t>(value))) {
    throw Napi::RangeError::New(info.Env(), "byte count must be a non-negative safe integer");
  }
  return static_cast<std::size_t>(value);
}

// The size to map (argument 1), checked before anything is mapped against the largest ArrayBuffer this
// Node.js can make (argument 2, buffer.constants.MAX_LENGTH): Node-API would refuse a larger one.
std::size_t MappableByteCount(const Napi::CallbackInfo& info, const std::string& what) {
  std::size_t byteSize = ByteCount(info, 1);
  std::size_t maxByteSize = ByteCount(info, 2);
  if (byteSize > maxByteSize) {
    ThrowCoded(info.Env(),
               what + ": " + std::to_string(byteSize) + " bytes are more than the largest ArrayBuffer this Node.js can make (" +
                   std::to_string(maxByteSize) + " bytes, buffer.constants.MAX_LENGTH)",
               EINVAL);
  }
  return byteSize;
}

void FinalizeMapping(napi_env, void*, void* hint) {
  std::unique_ptr<ExternalMapping> owned(static_cast<ExternalMapping*>(hint));
  std::lock_guard<std::mutex> guard(owned->state->lock);
  if (owned->mapping.address != nullptr) owned->state->mappings.erase(owned->mapping.address);
  UnmapSegment(&owned->mapping);
}

// { buffer: ArrayBuffer over the whole mapping, address: bigint, byteSize: number, writable: boolean }
Napi::Object WrapMapping(Napi::Env env, std::unique_ptr<ExternalMapping> owned) {
  void* address = owned->mapping.address;
  std::size_t byteSize = owned->mapping.byteSize;
  bool writable = owned->mapping.writable;
  napi_value buffer;
  napi_status status = napi_create_external_arraybuffer(env, address, byteSize, FinalizeMapping, owned.get(), &buffer);
  if (status != napi_ok) {
    // Node-API returns these two before it takes the finalizer, so `owned` still unmaps. On any later
    // failure it has taken it and runs FinalizeMapping itself (node::Buffer::New does for a length above
    // its limit, which MappableByteCount rules out): the mapping is then that call's to release, not ours.
    // A status that does not tell (a pending exception) counts as taken: a leak at worst, never a second unmap.
    bool kept = status == napi_no_external_buffers_allowed || status == napi_invalid_arg;
    if (!kept) static_cast<void>(owned.release());
    if (status == napi_no_external_buffers_allowed) {
      ThrowErrno(env, "this Node.js runtime does not allow external ArrayBuffers, so shared memory cannot be mapped", ENOTSUP);
    }
    throw Napi::Error::New(env, "cannot make an ArrayBuffer over the shared memory mapping (Node-API status " + std::to_string(status) + ")");
  }
  {
    std::lock_guard<std::mutex> guard(owned->state->lock);
    owned->state->mappings[address] = &owned->mapping;
  }
  static_cast<void>(owned.release());  // the buffer's finalizer owns it now
  Napi::Object result = Napi::Object::New(env);
  result.Set("buffer", Napi::Value(env, buffer));
  result.Set("address", Napi::BigInt::New(env, static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(address))));
  result.Set("byteSize", Napi::Number::New(env, static_cast<double>(byteSize)));
  result.Set("writable", Napi::Boolean::New(env, writable));
  return result;
}

// createSegment(name, byteSize, maxByteSize): a new segment of byteSize bytes, every page allocated.
Napi::Value CreateSegmentBinding(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::string name = SegmentName(info);
  std::string what = "cannot create shared memory segment \"" + name + "\"";
  std::size_t byteSize = MappableByteCount(info, what);
  auto owned = std::make_unique<ExternalMapping>(env.GetInstanceData<AddonState>());
  int code = CreateSegment(name.c_str(), byteSize, &owned->mapping);
  if (code != 0) ThrowErrno(env, what + " of " + std::to_string(byteSize) + " bytes", code);
  return WrapMapping(env, std::move(owned));
}

// openSegment(name, byteSize, maxByteSize, writable): maps the first byteSize bytes (the size its creator
// announced) of an existing segment, read-only unless `writable` is true; a file smaller than that is
// refused, a larger one is mapped only that far.
Napi::Value OpenSegmentBinding(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::string name = SegmentName(info);
  std::string what = "cannot open shared memory segment \"" + name + "\"";
  std::size_t byteSize = MappableByteCount(info, what);
  auto owned = std::make_unique<ExternalMapping>(env.GetInstanceData<AddonState>());
  std::size_t fileByteSize = 0;
  // Argument 3: true maps read/write; false or absent maps read-only (PROT_READ), failing closed.
  bool writable = info.Length() > 3 && info[3].IsBoolean() && info[3].As<Napi::Boolean>().Value();
  int code = OpenSegment(name.c_str(), byteSize, writable, &owned->mapping, &fileByteSize);
  if (code == EINVAL && byteSize > 0 && fileByteSize < byteSize) {
    ThrowCoded(env,
               what + ": its file holds " + std::to_string(fileByteSize) + " bytes, fewer than the " + std::to_string(byteSize) +
                   " bytes announced for it",
               EINVAL);
  }
  if (code != 0) ThrowErrno(env, what, code);
  return WrapMapping(env, std::move(owned));
}

// unlinkSegment(name) -> true when removed, false when it did not exist.
Napi::Value UnlinkSegmentBinding(const Napi::CallbackInfo& info) {
  std::string name = SegmentName(info);
  int code = UnlinkSegment(name.c_str());
  if (code == ENOENT) return Napi::Boolean::New(info.Env(), false);
  if (code != 0) ThrowErrno(info.Env(), "cannot unlink shared memory segment \"" + name + "\"", code);
  return Napi::Boolean::New(info.Env(), true);
}

// closeSegment(buffer): unmaps now and detaches the buffer, so every view over it reads as empty
// instead of touching unmapped memory. Closing twice does nothing.
Napi::Value CloseSegmentBinding(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsArrayBuffer()) throw Napi::TypeError::New(env, "closeSegment needs the segment's ArrayBuffer");
  Napi::ArrayBuffer buffer = info[0].As<Napi::ArrayBuffer>();
  void* data = buffer.Data();
  auto* state = env.GetInstanceData<AddonState>();
  bool unmapped = false;
  {
    std::lock_guard<std::mutex> guard(state->lock);
    auto found = state->mappings.find(data);
    if (data != nullptr && found != state->mappings.end()) {
      // Detach first: from here on no JS view can reach the pages, then unmap them.
      napi_status status = napi_detach_arraybuffer(env, buffer);
      if (status != napi_ok) throw Napi::Error::New(env, "closeSegment: the segment's ArrayBuffer cannot be detached");
      UnmapSegment(found->second);
      state->mappings.erase(found);
      unmapped = true;
    }
  }
  return Napi::Boolean::New(env, unmapped);
}

int DescriptorArgument(const Napi::CallbackInfo& info, std::size_t index, const char* what) {
  if (info.Length() <= index || !info[index].IsNumber()) throw Napi::TypeError::New(info.Env(), std::string(what) + " must be a file descriptor (number)");
  return info[index].As<Napi::Number>().Int32Value();
}

// createSealedSegment(label, byteSize, maxByteSize): a new memfd of byteSize bytes, every page allocated,
// its size sealed; the mapping object also carries `fd` (the caller's to close).
Napi::Value CreateSealedSegmentBinding(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsString()) throw Napi::TypeError::New(env, "segment label must be a string");
  std::string label = info[0].As<Napi::String>().Utf8Value();
  std::string what = "cannot create sealed shared memory segment \"" + label + "\"";
  std::size_t byteSize = MappableByteCount(info, what);
  auto owned = std::make_unique<ExternalMapping>(env.GetInstanceData<AddonState>());
  int fd = -1;
  int code = CreateSealedSegment(label.c_str(), byteSize, &owned->mapping, &fd);
  if (code != 0) ThrowErrno(env, what + " of " + std::to_string(byteSize) + " bytes", code);
  Napi::Object result;
  try {
    result = WrapMapping(env, std::move(owned));
  } catch (...) {
    close(fd);
    throw;
  }
  result.Set("fd", Napi::Number::New(env, fd));
  return result;
}

std::string SealText(unsigned seals) {
  std::string text;
  const std::pair<unsigned, const char*> names[] = {{0x1u, "F_SEAL_SEAL"}, {0x2u, "F_SEAL_SHRINK"}, {0x4u, "F_SEAL_GROW"}, {0x8u, "F_SEAL_WRITE"}, {0x10u, "F_SEAL_FUTURE_WRITE"}};
  for (const auto& [bit, name] : names) {
    if ((seals & bit) == 0) continue;
    if (!text.empty()) text += "|";
    text += name;
  }
  return text.empty() ? "none" : text;
}

// openSealedSegment(fd, byteSize, maxByteSize, writable): maps a received sealed segment (the fd stays the
// caller's). A descriptor not sealed against shrinking and growing throws with code EUNSEALED.
Napi::Value OpenSealedSegmentBinding(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int fd = DescriptorArgument(info, 0, "openSealedSegment: the segment");
  std::string what = "cannot map the received segment (fd " + std::to_string(fd) + ")";
  std::size_t byteSize = MappableByteCount(info, what);
  bool writable = info.Length() > 3 && info[3].IsBoolean() && info[3].As<Napi::Boolean>().Value();
  auto owned = std::make_unique<ExternalMapping>(env.GetInstanceData<AddonState>());
  std::size_t fileByteSize = 0;
  unsigned seals = 0;
  int code = OpenSealedSegment(fd, byteSize, writable, &owned->mapping, &fileByteSize, &seals);
  if (code == EPERM) {
    Napi::Error error = Napi::Error::New(env, what + ": it is not sealed against shrinking and growing (seals: " + SealText(seals) +
                                                  "; needed F_SEAL_SHRINK|F_SEAL_GROW), so its peer could truncate it under this mapping");
    error.Set("code", Napi::String::New(env, "EUNSEALED"));
    throw error;
  }
  if (code == EINVAL && fileByteSize < byteSize) {
    ThrowCoded(env, what + ": its file holds " + std::to_string(fileByteSize) + " bytes, fewer than the " + std::to_string(byteSize) + " bytes announced for it", EINVAL);
  }
  if (code != 0) ThrowErrno(env, what, code);
  return WrapMapping(env, std::move(owned));
}

// segmentSeals(fd) -> the F_GET_SEALS bits, or -1 for a descriptor that cannot carry seals.
Napi::Value SegmentSealsBinding(const Napi::CallbackInfo& info) {
  int fd = DescriptorArgument(info, 0, "segmentSeals");
  unsigned seals = 0;
  int code = SegmentSeals(fd, &seals);
  if (code == EINVAL) return Napi::Number::New(info.Env(), -1);
  if (code != 0) ThrowErrno(info.Env(), "cannot read the seals of fd " + std::to_string(fd), code);
  return Napi::Number::New(info.Env(), seals);
}

// sendWithDescriptors(socketFd, bytes: Uint8Array, fds: number[]) -> bytes sent, in one non-blocking
// sendmsg with the descriptors as SCM_RIGHTS. Throws EAGAIN when nothing could be sent.
Napi::Value SendWithDescriptorsBinding(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int socket = DescriptorArgument(info, 0, "sendWithDescriptors: the socket");
  if (info.Length() < 3 || !info[1].IsTypedArray() || !info[2].IsArray()) throw Napi::TypeError::New(env, "sendWithDescriptors needs (socketFd, Uint8Array, fds[])");
  Napi::TypedArray bytes = info[1].As<Napi::TypedArray>();
  Napi::Array list = info[2].As<Napi::Array>();
  if (list.Length() > kMaxPassedDescriptors) throw Napi::RangeError::New(env, "sendWithDescriptors: at most " + std::to_string(kMaxPassedDescriptors) + " descriptors");
  std::vector<int> fds;
  for (uint32_t i = 0; i < list.Length(); ++i) {
    Napi::Value v = list.Get(i);
    if (!v.IsNumber()) throw Napi::TypeError::New(env, "sendWithDescriptors: descriptors must be numbers");
    fds.push_back(v.As<Napi::Number>().Int32Value());
  }
  const unsigned char* data = static_cast<const unsigned char*>(bytes.ArrayBuffer().Data()) + bytes.ByteOffset();
  std::size_t sent = 0;
  int code = SendWithDescriptors(socket, data, bytes.ByteLength(), fds.data(), fds.size(), &sent);
  if (code != 0) ThrowErrno(env, "cannot send a frame with descriptors on socket fd " + std::to_string(socket), code);
  return Napi::Number::New(env, static_cast<double>(sent));
}

// connectAndReceive(path, byteLength, timeoutMs) -> Promise<{ fd, frame: Buffer, fds: number[] }>: connects
// on a worker thread and reads the first frame with its descriptors (ConnectAndReceive). Rejects with an
// Error whose `code` is the errno name.
class ConnectWorker : public Napi::AsyncWorker {
 public:
  ConnectWorker(Napi::Env env, std::string path, std::size_t length, int timeoutMs)
      : Napi::AsyncWorker(env), deferred_(Napi::Promise::Deferred::New(env)), path_(std::move(path)), frame_(length), timeoutMs_(timeoutMs) {}
  Napi::Promise Promise() { return deferred_.Promise(); }

  void Execute() override {
    code_ = ConnectAndReceive(path_.c_str(), timeoutMs_, frame_.data(), frame_.size(), &socket_, fds_, &fdCount_);
  }
  void OnOK() override {
    Napi::Env env = Env();
    if (code_ != 0) {
      Napi::Error error = Napi::Error::New(env, "cannot receive the first frame from " + path_ + ": " + std::strerror(code_));
      error.Set("code", Napi::String::New(env, ErrnoName(code_)));
      error.Set("errno", Napi::Number::New(env, code_));
      deferred_.Reject(error.Value());
      return;
    }
    Napi::Object result = Napi::Object::New(env);
    result.Set("fd", Napi::Number::New(env, socket_));
    result.Set("frame", Napi::Buffer<unsigned char>::Copy(env, frame_.data(), frame_.size()));
    Napi::Array fds = Napi::Array::New(env, fdCount_);
    for (std::size_t i = 0; i < fdCount_; ++i) fds.Set(static_cast<uint32_t>(i), Napi::Number::New(env, fds_[i]));
    result.Set("fds", fds);
    deferred_.Resolve(result);
  }
  void OnError(const Napi::Error& error) override { deferred_.Reject(error.Value()); }

 private:
  Napi::Promise::Deferred deferred_;
  std::string path_;
  std::vector<unsigned char> frame_;
  int timeoutMs_;
  int code_ = 0;
  int socket_ = -1;
  int fds_[kMaxPassedDescriptors] = {};
  std::size_t fdCount_ = 0;
};

Napi::Value ConnectAndReceiveBinding(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 3 || !info[0].IsString() || !info[1].IsNumber() || !info[2].IsNumber()) throw Napi::TypeError::New(env, "connectAndReceive needs (path, byteLength, timeoutMs)");
  std::size_t length = ByteCount(info, 1);
  if (length == 0 || length > 65536) throw Napi::RangeError::New(env, "connectAndReceive: byteLength must be 1..65536");
  double timeout = info[2].As<Napi::Number>().DoubleValue();
  if (!(timeout >= 1) || timeout > 2147483647.0) throw Napi::RangeError::New(env, "connectAndReceive: timeoutMs must be 1..2^31-1");
  auto* worker = new ConnectWorker(env, info[0].As<Napi::String>().Utf8Value(), length, static_cast<int>(timeout));
  Napi::Promise promise = worker->Promise();
  worker->Queue();
  return promise;
}

Napi::Value PeerCredentialsBinding(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsNumber()) throw Napi::TypeError::New(env, "peerCredentials needs a socket file descriptor (number)");
  int fd = info[0].As<Napi::Number>().Int32Value();
  PeerCredentials credentials;
  int code = QueryPeerCredentials(fd, &credentials);
  if (code != 0) ThrowErrno(env, "cannot read the peer credentials of socket fd " + std::to_string(fd), code);
  Napi::Object result = Napi::Object::New(env);
  result.Set("uid", Napi::Number::New(env, credentials.uid));
  result.Set("gid", Napi::Number::New(env, credentials.gid));
  result.Set("pid", Napi::Number::New(env, credentials.pid));
  return result;
}

Napi::Value ProcessAliveBinding(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsNumber()) throw Napi::TypeError::New(env, "processAlive needs a pid (number)");
  return Napi::Boolean::New(env, ProcessAlive(info[0].As<Napi::Number>().Int32Value()));
}

// holdLivenessLock(name) -> fd: a shared lock on this process's liveness file, kept until exit.
Napi::Value HoldLivenessLockBinding(const Napi::CallbackInfo& info) {
  std::string name = SegmentName(info);
  int fd = -1;
  int code = HoldLivenessLock(name.c_str(), &fd);
  if (code != 0) ThrowErrno(info.Env(), "cannot hold the liveness lock \"" + name + "\"", code);
  return Napi::Number::New(info.Env(), fd);
}

// tryReapLock(name) -> fd (>= 0) when no process holds it, -1 while one does, -2 when there is no such lock.
Napi::Value TryReapLockBinding(const Napi::CallbackInfo& info) {
  std::string name = SegmentName(info);
  int fd = -1;
  int code = TryReapLock(name.c_str(), &fd);
  if (code == EWOULDBLOCK) return Napi::Number::New(info.Env(), -1);
  if (code == ENOENT) return Napi::Number::New(info.Env(), -2);
  if (code != 0) ThrowErrno(info.Env(), "cannot probe the liveness lock \"" + name + "\"", code);
  return Napi::Number::New(info.Env(), fd);
}

// releaseReapLock(name, fd): removes the lock's name and closes the descriptor of tryReapLock.
Napi::Value ReleaseReapLockBinding(const Napi::CallbackInfo& info) {
  std::string name = SegmentName(info);
  if (info.Length() < 2 || !info[1].IsNumber()) throw Napi::TypeError::New(info.Env(), "releaseReapLock needs (name, fd)");
  int code = ReleaseReapLock(name.c_str(), info[1].As<Napi::Number>().Int32Value());
  if (code != 0) ThrowErrno(info.Env(), "cannot remove the liveness lock \"" + name + "\"", code);
  return info.Env().Undefined();
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  env.SetInstanceData<AddonState>(new AddonState());
  exports.Set("createSegment", Napi::Function::New(env, CreateSegmentBinding, "createSegment"));
  exports.Set("openSegment", Napi::Function::New(env, OpenSegmentBinding, "openSegment"));
  exports.Set("unlinkSegment", Napi::Function::New(env, UnlinkSegmentBinding, "unlinkSegment"));
  exports.Set("closeSegment", Napi::Function::New(env, CloseSegmentBinding, "closeSegment"));
  exports.Set("createSealedSegment", Napi::Function::New(env, CreateSealedSegmentBinding, "createSealedSegment"));
  exports.Set("openSealedSegment", Napi::Function::New(env, OpenSealedSegmentBinding, "openSealedSegment"));
  exports.Set("segmentSeals", Napi::Function::New(env, SegmentSealsBinding, "segmentSeals"));
  exports.Set("sendWithDescriptors", Napi::Function::New(env, SendWithDescriptorsBinding, "sendWithDescriptors"));
  exports.Set("connectAndReceive", Napi::Function::New(env, ConnectAndReceiveBinding, "connectAndReceive"));
  exports.Set("peerCredentials", Napi::Function::New(env, PeerCredentialsBinding, "peerCredentials"));
  exports.Set("processAlive", Napi::Function::New(env, ProcessAliveBinding, "processAlive"));
  exports.Set("holdLivenessLock", Napi::Function::New(env, HoldLivenessLockBinding, "holdLivenessLock"));
  exports.Set("tryReapLock", Napi::Function::New(env, TryReapLockBinding, "tryReapLock"));
  exports.Set("releaseReapLock", Napi::Function::New(env, ReleaseReapLockBinding, "releaseReapLock"));
#ifdef HS_IPC_DOORBELLS
  RegisterDoorbellBindings(env, exports);
#endif
  exports.Set("abiVersion", Napi::Number::New(env, 6));
  return exports;
}

}  // namespace
}  // namespace hs::ipc

static Napi::Object InitAddon(Napi::Env env, Napi::Object exports) { return hs::ipc::Init(env, exports); }

NODE_API_MODULE(hs_ipc, InitAddon)
