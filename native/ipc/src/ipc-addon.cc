// Node-API glue of the @hs/ipc addon: shared-memory segments as external ArrayBuffers, peer
// credentials of a Unix socket, pid liveness. The logic lives in shm-segment.cc and peer-process.cc.
// Errors are thrown as JS Errors whose `code` is the errno name (for example EEXIST); the TypeScript
// layer turns them into typed Results.
#include <napi.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>

#ifdef HS_IPC_DOORBELLS
#include "doorbell-watch.h"
#endif
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

struct FinalizeHint {
  AddonState* state;
  Mapping* mapping;
};

const char* ErrnoName(int code) {
  switch (code) {
    case EEXIST: return "EEXIST";
    case ENOENT: return "ENOENT";
    case EACCES: return "EACCES";
    case EPERM: return "EPERM";
    case EINVAL: return "EINVAL";
    case ENOMEM: return "ENOMEM";
    case ENOSPC: return "ENOSPC";
    case EMFILE: return "EMFILE";
    case ENFILE: return "ENFILE";
    case ENAMETOOLONG: return "ENAMETOOLONG";
    case EBADF: return "EBADF";
    case ENOTSOCK: return "ENOTSOCK";
    case ENOTSUP: return "ENOTSUP";
    case EPROTO: return "EPROTO";
    default: return "EUNKNOWN";
  }
}

[[noreturn]] void ThrowErrno(Napi::Env env, const std::string& what, int code) {
  Napi::Error error = Napi::Error::New(env, what + ": " + std::strerror(code));
  error.Set("code", Napi::String::New(env, ErrnoName(code)));
  error.Set("errno", Napi::Number::New(env, code));
  throw error;
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

void FinalizeMapping(napi_env, void*, void* hint) {
  auto* finalize = static_cast<FinalizeHint*>(hint);
  {
    std::lock_guard<std::mutex> guard(finalize->state->lock);
    if (finalize->mapping->address != nullptr) finalize->state->mappings.erase(finalize->mapping->address);
    UnmapSegment(finalize->mapping);
  }
  delete finalize->mapping;
  delete finalize;
}

// { buffer: ArrayBuffer over the whole mapping, address: bigint, byteSize: number }
Napi::Object WrapMapping(Napi::Env env, const Mapping& mapped) {
  auto* state = env.GetInstanceData<AddonState>();
  auto* mapping = new Mapping(mapped);
  auto* hint = new FinalizeHint{state, mapping};
  napi_value buffer;
  napi_status status = napi_create_external_arraybuffer(env, mapping->address, mapping->byteSize, FinalizeMapping, hint, &buffer);
  if (status != napi_ok) {
    UnmapSegment(mapping);
    delete mapping;
    delete hint;
    throw Napi::Error::New(env, "this Node.js runtime does not allow external ArrayBuffers, so shared memory cannot be mapped");
  }
  {
    std::lock_guard<std::mutex> guard(state->lock);
    state->mappings[mapping->address] = mapping;
  }
  Napi::Object result = Napi::Object::New(env);
  result.Set("buffer", Napi::Value(env, buffer));
  result.Set("address", Napi::BigInt::New(env, static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(mapping->address))));
  result.Set("byteSize", Napi::Number::New(env, static_cast<double>(mapping->byteSize)));
  return result;
}

Napi::Value CreateSegmentBinding(const Napi::CallbackInfo& info) {
  std::string name = SegmentName(info);
  std::size_t byteSize = ByteCount(info, 1);
  Mapping mapped;
  int code = CreateSegment(name.c_str(), byteSize, &mapped);
  if (code != 0) ThrowErrno(info.Env(), "cannot create shared memory segment \"" + name + "\"", code);
  return WrapMapping(info.Env(), mapped);
}

Napi::Value OpenSegmentBinding(const Napi::CallbackInfo& info) {
  std::string name = SegmentName(info);
  std::size_t minByteSize = ByteCount(info, 1);
  Mapping mapped;
  int code = OpenSegment(name.c_str(), minByteSize, &mapped);
  if (code != 0) ThrowErrno(info.Env(), "cannot open shared memory segment \"" + name + "\"", code);
  return WrapMapping(info.Env(), mapped);
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

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  env.SetInstanceData<AddonState>(new AddonState());
  exports.Set("createSegment", Napi::Function::New(env, CreateSegmentBinding, "createSegment"));
  exports.Set("openSegment", Napi::Function::New(env, OpenSegmentBinding, "openSegment"));
  exports.Set("unlinkSegment", Napi::Function::New(env, UnlinkSegmentBinding, "unlinkSegment"));
  exports.Set("closeSegment", Napi::Function::New(env, CloseSegmentBinding, "closeSegment"));
  exports.Set("peerCredentials", Napi::Function::New(env, PeerCredentialsBinding, "peerCredentials"));
  exports.Set("processAlive", Napi::Function::New(env, ProcessAliveBinding, "processAlive"));
#ifdef HS_IPC_DOORBELLS
  RegisterDoorbellBindings(env, exports);
#endif
  exports.Set("abiVersion", Napi::Number::New(env, 2));
  return exports;
}

}  // namespace
}  // namespace hs::ipc

static Napi::Object InitAddon(Napi::Env env, Napi::Object exports) { return hs::ipc::Init(env, exports); }

NODE_API_MODULE(hs_ipc, InitAddon)
