// A downstream addon that uses only include/hs/hs.h: addOne(input, output) waits for the input's
// readiness on the stream hs gave it, launches its own kernel there (output = input + 1 per byte) and
// names that stream as the output's readiness stream.
#include <cuda_runtime_api.h>
#include <hs/hs.h>
#include <napi.h>

void RegisterCountingResource(Napi::Env env, Napi::Object exports);  // counting-resource.cc

namespace {

__global__ void AddOne(const uint8_t* in, uint8_t* out, uint64_t n) {
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < n; i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    out[i] = static_cast<uint8_t>(in[i] + 1);
  }
}

uint64_t Elements(const DLTensor& t) {
  uint64_t n = 1;
  for (int32_t i = 0; i < t.ndim; i++) n *= static_cast<uint64_t>(t.shape[i]);
  return n;
}

/** addOne(input: bigint, output: bigint) -> cudaError_t; both uint8, contiguous, same element count. */
Napi::Value AddOneBinding(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  bool lossless = true;
  const hs_tensor_v1* input = hs_tensor_from_address(info[0].As<Napi::BigInt>().Uint64Value(&lossless));
  hs_tensor_v1* output = const_cast<hs_tensor_v1*>(hs_tensor_from_address(info[1].As<Napi::BigInt>().Uint64Value(&lossless)));
  if (input == nullptr || output == nullptr) throw Napi::Error::New(env, "addOne: not hs_tensor_v1 records");
  if (hs_tensor_is_read_only(output)) throw Napi::Error::New(env, "addOne: the output tensor is read-only");
  const DLTensor& in = hs_tensor_dlpack(input)->dl_tensor;
  const DLTensor& out = hs_tensor_dlpack(output)->dl_tensor;
  uint64_t n = Elements(in);
  if (Elements(out) != n || in.dtype.bits != 8 || out.dtype.bits != 8) throw Napi::Error::New(env, "addOne: expects uint8 tensors of equal size");
  auto stream = static_cast<cudaStream_t>(hs_tensor_stream(input));
  if (void* ready = hs_tensor_readiness_event(input)) {
    cudaError_t status = cudaStreamWaitEvent(stream, static_cast<cudaEvent_t>(ready), 0);
    if (status != cudaSuccess) return Napi::Number::New(env, status);
  }
  const auto* src = static_cast<const uint8_t*>(in.data) + in.byte_offset;
  auto* dst = static_cast<uint8_t*>(out.data) + out.byte_offset;
  uint64_t wanted = (n + 255) / 256;
  unsigned blocks = static_cast<unsigned>(wanted == 0 ? 1 : (wanted > 1024 ? 1024 : wanted));
  AddOne<<<blocks, 256, 0, stream>>>(src, dst, n);
  hs_tensor_set_readiness_stream(output, stream);
  return Napi::Number::New(env, cudaGetLastError());
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("addOne", Napi::Function::New(env, AddOneBinding, "addOne"));
  RegisterCountingResource(env, exports);
  return exports;
}

}  // namespace

NODE_API_MODULE(hs_abi_test, Init)
