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

#ifdef HS_IPC_DOORBELLS
#include "doorbell-watch.h"
#endif
#include "errno-name.h"
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
  exports.Set("peerCredentials", Napi::Function::New(env, PeerCredentialsBinding, "peerCredentials"));
  exports.Set("processAlive", Napi::Function::New(env, ProcessAliveBinding, "processAlive"));
  exports.Set("holdLivenessLock", Napi::Function::New(env, HoldLivenessLockBinding, "holdLivenessLock"));
  exports.Set("tryReapLock", Napi::Function::New(env, TryReapLockBinding, "tryReapLock"));
  exports.Set("releaseReapLock", Napi::Function::New(env, ReleaseReapLockBinding, "releaseReapLock"));
#ifdef HS_IPC_DOORBELLS
  RegisterDoorbellBindings(env, exports);
#endif
  exports.Set("abiVersion", Napi::Number::New(env, 4));
  return exports;
}

}  // namespace
}  // namespace hs::ipc

static Napi::Object InitAddon(Napi::Env env, Napi::Object exports) { return hs::ipc::Init(env, exports); }

NODE_API_MODULE(hs_ipc, InitAddon)
