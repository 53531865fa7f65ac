// Memory: stream-ordered device allocation from the device's default pool, cudaMalloc, pinned host,
// managed, host registration; async copies and fills; host-accessible memory as external ArrayBuffers.
#include <cuda_runtime_api.h>

#include "addon-state.h"
#include "cuda-status.h"
#include "napi-values.h"

namespace hs {
namespace {

/** mallocAsync(size, stream) -> bigint; from the default memory pool of the stream's device. */
Napi::Value MallocAsync(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  void* p = nullptr;
  Check(env, cudaMallocAsync(&p, ToSize(info[0], "size"), ToHandle<cudaStream_t>(info[1], "stream")), "cudaMallocAsync");
  return FromPointer(env, p);
}

/** freeAsync(pointer, stream) -> status */
Napi::Value FreeAsync(const Napi::CallbackInfo& info) {
  return StatusValue(info.Env(), cudaFreeAsync(ToHandle<void*>(info[0], "pointer"), ToHandle<cudaStream_t>(info[1], "stream")));
}

/** setPoolReleaseThreshold(device, bytes): memory the default pool keeps instead of returning to the OS. */
Napi::Value SetPoolReleaseThreshold(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  cudaMemPool_t pool = nullptr;
  Check(env, cudaDeviceGetDefaultMemPool(&pool, ToInt(info[0], "device")), "cudaDeviceGetDefaultMemPool");
  uint64_t threshold = ToSize(info[1], "bytes");
  Check(env, cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold), "cudaMemPoolSetAttribute");
  return env.Undefined();
}

/**
 * memPoolUsage(device) -> { reserved, used }: bytes the device's default pool holds from the driver
 * (cudaMemPoolAttrReservedMemCurrent) and bytes of it handed out (cudaMemPoolAttrUsedMemCurrent).
 */
Napi::Value MemPoolUsage(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  cudaMemPool_t pool = nullptr;
  Check(env, cudaDeviceGetDefaultMemPool(&pool, ToInt(info[0], "device")), "cudaDeviceGetDefaultMemPool");
  uint64_t reserved = 0;
  uint64_t used = 0;
  Check(env, cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved), "cudaMemPoolGetAttribute(reserved)");
  Check(env, cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used), "cudaMemPoolGetAttribute(used)");
  Napi::Object result = Napi::Object::New(env);
  result.Set("reserved", Napi::Number::New(env, static_cast<double>(reserved)));
  result.Set("used", Napi::Number::New(env, static_cast<double>(used)));
  return result;
}

/** malloc(device, size) -> bigint (cudaMalloc). Free with deferFree(0, p). */
Napi::Value Malloc(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Check(env, cudaSetDevice(ToInt(info[0], "device")), "cudaSetDevice");
  void* p = nullptr;
  Check(env, cudaMalloc(&p, ToSize(info[1], "size")), "cudaMalloc");
  return FromPointer(env, p);
}

/** mallocHost(size) -> bigint: page-locked, portable, mapped host memory. Free with deferFree(1, p). */
Napi::Value MallocHost(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  void* p = nullptr;
  Check(env, cudaHostAlloc(&p, ToSize(info[0], "size"), cudaHostAllocPortable | cudaHostAllocMapped), "cudaHostAlloc");
  return FromPointer(env, p);
}

/** mallocManaged(device, size) -> bigint. Free with deferFree(0, p). */
Napi::Value MallocManaged(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Check(env, cudaSetDevice(ToInt(info[0], "device")), "cudaSetDevice");
  void* p = nullptr;
  Check(env, cudaMallocManaged(&p, ToSize(info[1], "size"), cudaMemAttachGlobal), "cudaMallocManaged");
  return FromPointer(env, p);
}

/**
 * deferFree(kind, pointer, after?: bigint event): 0 cudaFree, 1 cudaFreeHost, 2 cudaHostUnregister,
 * 3 cudaIpcCloseMemHandle, on the
 * release thread, after `after` completed (the thread then destroys that event).
 */
Napi::Value DeferFree(const Napi::CallbackInfo& info) {
  int kind = ToInt(info[0], "kind");
  if (kind < 0 || kind > 3) throw Napi::RangeError::New(info.Env(), "deferFree: kind must be 0, 1, 2 or 3");
  cudaEvent_t after = info.Length() > 2 && !info[2].IsUndefined() ? ToHandle<cudaEvent_t>(info[2], "after") : nullptr;
  StateOf(info.Env()).deferredRelease.Push(static_cast<ReleaseKind>(kind), ToHandle<void*>(info[1], "pointer"), after);
  return info.Env().Undefined();
}

Napi::Value PendingReleases(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(StateOf(info.Env()).deferredRelease.Pending()));
}

/** hostRegister(pointer, size) -> status (page-locks existing host memory, portable and mapped). */
Napi::Value HostRegister(const Napi::CallbackInfo& info) {
  return StatusValue(info.Env(), cudaHostRegister(ToHandle<void*>(info[0], "pointer"), ToSize(info[1], "size"),
                                                  cudaHostRegisterPortable | cudaHostRegisterMapped));
}

/**
 * isPinnedHost(pointer) -> true when CUDA already knows the host address as page-locked memory
 * (cudaHostAlloc'd or registered), so registering it again would fail with cudaErrorInvalidValue.
 */
Napi::Value IsPinnedHost(const Napi::CallbackInfo& info) {
  cudaPointerAttributes attributes{};
  cudaError_t status = cudaPointerGetAttributes(&attributes, ToHandle<const void*>(info[0], "pointer"));
  if (status != cudaSuccess) cudaGetLastError();  // an unknown pointer: clear the error so the next call does not see it
  return Napi::Boolean::New(info.Env(), status == cudaSuccess && attributes.type == cudaMemoryTypeHost);
}

/**
 * externalArrayBuffer(pointer, size) -> ArrayBuffer over host-accessible memory, or throws an Error with
 * code "ERR_HS_NO_EXTERNAL_BUFFERS" where the runtime forbids external buffers. The memory is not owned
 * by the buffer: detach it (detachArrayBuffer) before freeing the memory.
 */
Napi::Value ExternalArrayBuffer(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  void* p = ToHandle<void*>(info[0], "pointer");
  size_t size = ToSize(info[1], "size");
  napi_value result;
  napi_status status = napi_create_external_arraybuffer(env, p, size, nullptr, nullptr, &result);
  if (status == napi_no_external_buffers_allowed) {
    Napi::Error error = Napi::Error::New(env, "this runtime does not allow external ArrayBuffers");
    error.Set("code", "ERR_HS_NO_EXTERNAL_BUFFERS");
    throw error;
  }
  NAPI_THROW_IF_FAILED(env, status, Napi::Value());
  return Napi::Value(env, result);
}

Napi::Value DetachArrayBuffer(const Napi::CallbackInfo& info) {
  Napi::ArrayBuffer buffer = info[0].As<Napi::ArrayBuffer>();
  if (!buffer.IsDetached()) buffer.Detach();
  return info.Env().Undefined();
}

/** addressOf(view: TypedArray | ArrayBuffer) -> bigint address of its first byte. */
Napi::Value AddressOf(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info[0].IsArrayBuffer()) return FromPointer(env, info[0].As<Napi::ArrayBuffer>().Data());
  if (info[0].IsTypedArray()) {
    auto view = info[0].As<Napi::TypedArray>();
    auto* base = static_cast<uint8_t*>(view.ArrayBuffer().Data());
    return FromPointer(env, base + view.ByteOffset());
  }
  throw Napi::TypeError::New(env, "addressOf: expected an ArrayBuffer or a TypedArray");
}

/** memcpyAsync(dst, src, bytes, stream) -> status (cudaMemcpyDefault: any kinds, unified addressing). */
Napi::Value MemcpyAsync(const Napi::CallbackInfo& info) {
  return StatusValue(info.Env(), cudaMemcpyAsync(ToHandle<void*>(info[0], "dst"), ToHandle<const void*>(info[1], "src"),
                                                 ToSize(info[2], "bytes"), cudaMemcpyDefault, ToHandle<cudaStream_t>(info[3], "stream")));
}

/** memsetAsync(dst, value, bytes, stream) -> status */
Napi::Value MemsetAsync(const Napi::CallbackInfo& info) {
  return StatusValue(info.Env(), cudaMemsetAsync(ToHandle<void*>(info[0], "dst"), ToInt(info[1], "value"), ToSize(info[2], "bytes"),
                                                 ToHandle<cudaStream_t>(info[3], "stream")));
}

}  // namespace

void RegisterMemoryBindings(Napi::Env env, Napi::Object exports) {
  exports.Set("mallocAsync", Napi::Function::New(env, MallocAsync, "mallocAsync"));
  exports.Set("freeAsync", Napi::Function::New(env, FreeAsync, "freeAsync"));
  exports.Set("setPoolReleaseThreshold", Napi::Function::New(env, SetPoolReleaseThreshold, "setPoolReleaseThreshold"));
  exports.Set("memPoolUsage", Napi::Function::New(env, MemPoolUsage, "memPoolUsage"));
  exports.Set("malloc", Napi::Function::New(env, Malloc, "malloc"));
  exports.Set("mallocHost", Napi::Function::New(env, MallocHost, "mallocHost"));
  exports.Set("mallocManaged", Napi::Function::New(env, MallocManaged, "mallocManaged"));
  exports.Set("deferFree", Napi::Function::New(env, DeferFree, "deferFree"));
  exports.Set("pendingReleases", Napi::Function::New(env, PendingReleases, "pendingReleases"));
  exports.Set("hostRegister", Napi::Function::New(env, HostRegister, "hostRegister"));
  exports.Set("isPinnedHost", Napi::Function::New(env, IsPinnedHost, "isPinnedHost"));
  exports.Set("externalArrayBuffer", Napi::Function::New(env, ExternalArrayBuffer, "externalArrayBuffer"));
  exports.Set("detachArrayBuffer", Napi::Function::New(env, DetachArrayBuffer, "detachArrayBuffer"));
  exports.Set("addressOf", Napi::Function::New(env, AddressOf, "addressOf"));
  exports.Set("memcpyAsync", Napi::Function::New(env, MemcpyAsync, "memcpyAsync"));
  exports.Set("memsetAsync", Napi::Function::New(env, MemsetAsync, "memsetAsync"));
}

}  // namespace hs
