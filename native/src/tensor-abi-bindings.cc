// Builds the `hs_tensor_v1` records of the C ABI (include/hs/hs.h) for tensors handed to downstream
// native addons, and releases them.
#include <hs/hs.h>

#include <cstring>
#include <vector>

#include "addon-state.h"
#include "cuda-status.h"
#include "napi-values.h"

namespace hs {
namespace {

/** One exported tensor: the record, its DLPack struct and the dims arrays, freed together. */
struct ExportedTensor {
  hs_tensor_v1 record{};
  DLManagedTensorVersioned managed{};
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
};

void DeleteManaged(DLManagedTensorVersioned* self) { delete static_cast<ExportedTensor*>(self->manager_ctx); }

std::vector<int64_t> Dims(const Napi::Value& v, const char* what) {
  if (!v.IsArray()) throw Napi::TypeError::New(v.Env(), std::string(what) + " must be an array of numbers");
  Napi::Array a = v.As<Napi::Array>();
  std::vector<int64_t> out(a.Length());
  for (uint32_t i = 0; i < a.Length(); i++) out[i] = static_cast<int64_t>(ToSize(a.Get(i), what));
  return out;
}

/**
 * exportTensorV1({ address, byteOffset, shape, strides, dtypeCode, dtypeBits, dtypeLanes, deviceType,
 * deviceId, readOnly, readinessEvent, stream }) -> bigint address of an hs_tensor_v1 (release with
 * releaseTensorV1).
 */
Napi::Value ExportTensorV1(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsObject()) throw Napi::TypeError::New(env, "exportTensorV1: expected a descriptor object");
  Napi::Object d = info[0].As<Napi::Object>();
  auto* t = new ExportedTensor();
  try {
    t->shape = Dims(d.Get("shape"), "shape");
    t->strides = Dims(d.Get("strides"), "strides");
    if (t->strides.size() != t->shape.size()) throw Napi::RangeError::New(env, "exportTensorV1: strides must have the rank of shape");
    DLTensor& dl = t->managed.dl_tensor;
    dl.data = ToHandle<void*>(d.Get("address"), "address");
    dl.byte_offset = ToSize(d.Get("byteOffset"), "byteOffset");
    dl.device.device_type = ToInt(d.Get("deviceType"), "deviceType");
    dl.device.device_id = ToInt(d.Get("deviceId"), "deviceId");
    dl.ndim = static_cast<int32_t>(t->shape.size());
    dl.dtype.code = static_cast<uint8_t>(ToInt(d.Get("dtypeCode"), "dtypeCode"));
    dl.dtype.bits = static_cast<uint8_t>(ToInt(d.Get("dtypeBits"), "dtypeBits"));
    dl.dtype.lanes = static_cast<uint16_t>(ToInt(d.Get("dtypeLanes"), "dtypeLanes"));
    dl.shape = t->shape.data();
    dl.strides = t->strides.data();
    t->managed.version = {1, 1};
    t->managed.manager_ctx = t;
    t->managed.deleter = DeleteManaged;
    t->managed.flags = d.Get("readOnly").ToBoolean().Value() ? HS_DLPACK_FLAG_READ_ONLY : 0;
    t->record.abi_version = HS_ABI_VERSION;
    t->record.dlpack = &t->managed;
    t->record.readiness_event = ToHandle<void*>(d.Get("readinessEvent"), "readinessEvent");
    t->record.stream = ToHandle<void*>(d.Get("stream"), "stream");
  } catch (...) {
    delete t;
    throw;
  }
  return FromPointer(env, &t->record);
}

hs_tensor_v1* Record(const Napi::Value& v) { return ToHandle<hs_tensor_v1*>(v, "tensor"); }

/** tensorV1ReadinessStream(tensor) -> bigint stream the addon set with hs_tensor_set_readiness_stream, or 0n. */
Napi::Value ReadinessStream(const Napi::CallbackInfo& info) { return FromPointer(info.Env(), Record(info[0])->readiness_stream); }

/** releaseTensorV1(tensor): runs the DLPack deleter (frees the record). */
Napi::Value ReleaseTensorV1(const Napi::CallbackInfo& info) {
  DLManagedTensorVersioned* managed = Record(info[0])->dlpack;
  managed->deleter(managed);
  return info.Env().Undefined();
}

}  // namespace

void RegisterTensorAbiBindings(Napi::Env env, Napi::Object exports) {
  exports.Set("exportTensorV1", Napi::Function::New(env, ExportTensorV1, "exportTensorV1"));
  exports.Set("tensorV1ReadinessStream", Napi::Function::New(env, ReadinessStream, "tensorV1ReadinessStream"));
  exports.Set("releaseTensorV1", Napi::Function::New(env, ReleaseTensorV1, "releaseTensorV1"));
}

}  // namespace hs
