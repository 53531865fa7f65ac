// Devices: count (reporting "no device" instead of failing), properties and attributes, current device.
#include <cuda_runtime_api.h>

#include "addon-state.h"
#include "cuda-status.h"
#include "napi-values.h"

namespace hs {
namespace {

/** runtimeInfo() -> { runtimeVersion, driverVersion, deviceCount, status, statusText } without throwing. */
Napi::Value RuntimeInfo(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int runtimeVersion = 0, driverVersion = 0, count = 0;
  cudaRuntimeGetVersion(&runtimeVersion);
  cudaDriverGetVersion(&driverVersion);
  cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    count = 0;
    cudaGetLastError();
  }
  Napi::Object out = Napi::Object::New(env);
  out.Set("runtimeVersion", runtimeVersion);
  out.Set("driverVersion", driverVersion);
  out.Set("deviceCount", count);
  out.Set("status", static_cast<int>(status));
  out.Set("statusText", std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status));
  return out;
}

int Attribute(Napi::Env env, cudaDeviceAttr attr, int device) {
  int value = 0;
  Check(env, cudaDeviceGetAttribute(&value, attr, device), "cudaDeviceGetAttribute");
  return value;
}

/** deviceProperties(ordinal) -> the properties and capability attributes hs uses. */
Napi::Value DeviceProperties(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int device = ToInt(info[0], "device");
  cudaDeviceProp prop{};
  Check(env, cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  Napi::Object out = Napi::Object::New(env);
  out.Set("ordinal", device);
  out.Set("name", prop.name);
  out.Set("totalGlobalMem", static_cast<double>(prop.totalGlobalMem));
  out.Set("computeCapability", std::to_string(prop.major) + "." + std::to_string(prop.minor));
  out.Set("multiProcessorCount", prop.multiProcessorCount);
  out.Set("pciBusId", prop.pciBusID);
  out.Set("memoryPoolsSupported", Attribute(env, cudaDevAttrMemoryPoolsSupported, device) != 0);
  out.Set("memoryPoolSupportedHandleTypes", Attribute(env, cudaDevAttrMemoryPoolSupportedHandleTypes, device));
  out.Set("ipcEventSupported", Attribute(env, cudaDevAttrIpcEventSupport, device) != 0);
  out.Set("unifiedAddressing", Attribute(env, cudaDevAttrUnifiedAddressing, device) != 0);
  out.Set("managedMemory", Attribute(env, cudaDevAttrManagedMemory, device) != 0);
  out.Set("concurrentManagedAccess", Attribute(env, cudaDevAttrConcurrentManagedAccess, device) != 0);
  out.Set("hostRegisterSupported", Attribute(env, cudaDevAttrHostRegisterSupported, device) != 0);
  int least = 0, greatest = 0;
  Check(env, cudaDeviceGetStreamPriorityRange(&least, &greatest), "cudaDeviceGetStreamPriorityRange");
  out.Set("leastStreamPriority", least);
  out.Set("greatestStreamPriority", greatest);
  return out;
}

/** deviceAttribute(ordinal, cudaDeviceAttr code) -> number */
Napi::Value DeviceAttribute(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return Napi::Number::New(env, Attribute(env, static_cast<cudaDeviceAttr>(ToInt(info[1], "attribute")), ToInt(info[0], "device")));
}

Napi::Value GetDevice(const Napi::CallbackInfo& info) {
  int device = 0;
  Check(info.Env(), cudaGetDevice(&device), "cudaGetDevice");
  return Napi::Number::New(info.Env(), device);
}

Napi::Value SetDevice(const Napi::CallbackInfo& info) {
  Check(info.Env(), cudaSetDevice(ToInt(info[0], "device")), "cudaSetDevice");
  return info.Env().Undefined();
}

/** memGetInfo(ordinal) -> { free, total } in bytes */
Napi::Value MemGetInfo(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Check(env, cudaSetDevice(ToInt(info[0], "device")), "cudaSetDevice");
  size_t freeBytes = 0, total = 0;
  Check(env, cudaMemGetInfo(&freeBytes, &total), "cudaMemGetInfo");
  Napi::Object out = Napi::Object::New(env);
  out.Set("free", static_cast<double>(freeBytes));
  out.Set("total", static_cast<double>(total));
  return out;
}

}  // namespace

void RegisterDeviceBindings(Napi::Env env, Napi::Object exports) {
  exports.Set("runtimeInfo", Napi::Function::New(env, RuntimeInfo, "runtimeInfo"));
  exports.Set("deviceProperties", Napi::Function::New(env, DeviceProperties, "deviceProperties"));
  exports.Set("deviceAttribute", Napi::Function::New(env, DeviceAttribute, "deviceAttribute"));
  exports.Set("getDevice", Napi::Function::New(env, GetDevice, "getDevice"));
  exports.Set("setDevice", Napi::Function::New(env, SetDevice, "setDevice"));
  exports.Set("memGetInfo", Napi::Function::New(env, MemGetInfo, "memGetInfo"));
}

}  // namespace hs
