// CUDA IPC: memory handles (cudaMalloc'd memory) and event handles (interprocess events) as 64-byte
// Buffers that another process opens.
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cudaTypedefs.h>

#include <cstring>

#include "addon-state.h"
#include "cuda-status.h"
#include "napi-values.h"

namespace hs {
namespace {

template <typename Handle>
Napi::Buffer<uint8_t> ToBuffer(Napi::Env env, const Handle& handle) {
  return Napi::Buffer<uint8_t>::Copy(env, reinterpret_cast<const uint8_t*>(&handle), sizeof(Handle));
}

template <typename Handle>
Handle FromBuffer(const Napi::Value& v, const char* what) {
  if (!v.IsBuffer() || v.As<Napi::Buffer<uint8_t>>().Length() != sizeof(Handle)) {
    throw Napi::TypeError::New(v.Env(), std::string(what) + " must be a Buffer of " + std::to_string(sizeof(Handle)) + " bytes");
  }
  Handle handle;
  std::memcpy(&handle, v.As<Napi::Buffer<uint8_t>>().Data(), sizeof(Handle));
  return handle;
}

Napi::Value IpcGetMemHandle(const Napi::CallbackInfo& info) {
  cudaIpcMemHandle_t handle;
  Check(info.Env(), cudaIpcGetMemHandle(&handle, ToHandle<void*>(info[0], "pointer")), "cudaIpcGetMemHandle");
  return ToBuffer(info.Env(), handle);
}

/** ipcOpenMemHandle(device, handle) -> bigint; the handle is checked before any CUDA call. */
Napi::Value IpcOpenMemHandle(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto handle = FromBuffer<cudaIpcMemHandle_t>(info[1], "handle");
  Check(env, cudaSetDevice(ToInt(info[0], "device")), "cudaSetDevice");
  void* p = nullptr;
  Check(env, cudaIpcOpenMemHandle(&p, handle, cudaIpcMemLazyEnablePeerAccess), "cudaIpcOpenMemHandle");
  return FromPointer(env, p);
}

/**
 * ipcMemRange(device, pointer) -> { base: bigint, size: number }: the whole allocation holding `pointer`
 * (`cuMemGetAddressRange`, reached through the runtime's driver entry point so the addon does not link
 * libcuda). An importer checks a mapped handle against the size its peer announced with it. Throws an
 * Error with `cudaError` when the driver has no entry point or refuses the pointer.
 */
Napi::Value IpcMemRange(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  static PFN_cuMemGetAddressRange_v3020 range = nullptr;  // a plain function pointer: nothing to destroy
  if (range == nullptr) {
    cudaDriverEntryPointQueryResult found{};
    void* p = nullptr;
    Check(env, cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &p, 12000, cudaEnableDefault, &found), "cudaGetDriverEntryPointByVersion(cuMemGetAddressRange)");
    if (found != cudaDriverEntryPointSuccess || p == nullptr) throw Napi::Error::New(env, "cuMemGetAddressRange: the driver has no such entry point");
    range = reinterpret_cast<PFN_cuMemGetAddressRange_v3020>(p);
  }
  Check(env, cudaSetDevice(ToInt(info[0], "device")), "cudaSetDevice");
  CUdeviceptr base = 0;
  size_t size = 0;
  CUresult r = range(&base, &size, static_cast<CUdeviceptr>(ToU64(info[1], "pointer")));
  if (r != CUDA_SUCCESS) {
    Napi::Error e = Napi::Error::New(env, "cuMemGetAddressRange failed with CUresult " + std::to_string(static_cast<int>(r)));
    e.Set("cudaError", Napi::Number::New(env, static_cast<double>(r)));
    throw e;
  }
  Napi::Object out = Napi::Object::New(env);
  out.Set("base", Napi::BigInt::New(env, static_cast<uint64_t>(base)));
  out.Set("size", Napi::Number::New(env, static_cast<double>(size)));
  return out;
}

Napi::Value IpcCloseMemHandle(const Napi::CallbackInfo& info) {
  return StatusValue(info.Env(), cudaIpcCloseMemHandle(ToHandle<void*>(info[0], "pointer")));
}

Napi::Value IpcGetEventHandle(const Napi::CallbackInfo& info) {
  cudaIpcEventHandle_t handle;
  Check(info.Env(), cudaIpcGetEventHandle(&handle, ToHandle<cudaEvent_t>(info[0], "event")), "cudaIpcGetEventHandle");
  return ToBuffer(info.Env(), handle);
}

/** ipcOpenEventHandle(device, handle) -> bigint event (close with eventDestroy); the handle is checked first. */
Napi::Value IpcOpenEventHandle(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto handle = FromBuffer<cudaIpcEventHandle_t>(info[1], "handle");
  Check(env, cudaSetDevice(ToInt(info[0], "device")), "cudaSetDevice");
  cudaEvent_t event = nullptr;
  Check(env, cudaIpcOpenEventHandle(&event, handle), "cudaIpcOpenEventHandle");
  return FromPointer(env, event);
}

}  // namespace

void RegisterIpcBindings(Napi::Env env, Napi::Object exports) {
  exports.Set("ipcGetMemHandle", Napi::Function::New(env, IpcGetMemHandle, "ipcGetMemHandle"));
  exports.Set("ipcOpenMemHandle", Napi::Function::New(env, IpcOpenMemHandle, "ipcOpenMemHandle"));
  exports.Set("ipcMemRange", Napi::Function::New(env, IpcMemRange, "ipcMemRange"));
  exports.Set("ipcCloseMemHandle", Napi::Function::New(env, IpcCloseMemHandle, "ipcCloseMemHandle"));
  exports.Set("ipcGetEventHandle", Napi::Function::New(env, IpcGetEventHandle, "ipcGetEventHandle"));
  exports.Set("ipcOpenEventHandle", Napi::Function::New(env, IpcOpenEventHandle, "ipcOpenEventHandle"));
}

}  // namespace hs
