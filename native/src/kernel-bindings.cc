// kernelNames() and launchKernel(): the JS side resolves a name to its index once, then launches by index.
#include "addon-state.h"
#include "cuda-status.h"
#include "kernel-registry.h"
#include "napi-values.h"

namespace hs {
namespace {

const KernelEntry kKernels[] = {
    {"hs.rgbaToGray", LaunchRgbaToGray},     {"hs.downscale2x", LaunchDownscale2x}, {"hs.test.addScalar", LaunchTestAddScalar},
    {"hs.test.fill", LaunchTestFill},        {"hs.test.spinFill", LaunchTestSpinFill}, {"hs.test.copy", LaunchTestCopy},
    {"hs.test.shape", nullptr},              {"hs.gridPreview", LaunchGridPreview},
    {"hs.nanovdb.pointsToGrid.sort", LaunchPointsToGridSort}, {"hs.nanovdb.pointsToGrid.write", LaunchPointsToGridWrite},
    {"hs.nanovdb.gridChecksum", LaunchGridChecksum},
};
constexpr int kKernelCount = sizeof(kKernels) / sizeof(kKernels[0]);

Napi::Value KernelNames(const Napi::CallbackInfo& info) {
  Napi::Array names = Napi::Array::New(info.Env(), kKernelCount);
  for (int i = 0; i < kKernelCount; i++) names.Set(i, kKernels[i].name);
  return names;
}

/** kernelHostStaged() -> boolean[]: per registry index, true when the kernel runs host-staged (no device launcher). */
Napi::Value KernelHostStaged(const Napi::CallbackInfo& info) {
  Napi::Array staged = Napi::Array::New(info.Env(), kKernelCount);
  for (int i = 0; i < kKernelCount; i++) staged.Set(i, Napi::Boolean::New(info.Env(), kKernels[i].launch == nullptr));
  return staged;
}

/**
 * launchKernel(index, stream, addresses: BigUint64Array, byteLengths: Float64Array, readCount, writeCount,
 * params: Float64Array, paramCount) -> status. Ranges are the reads, then the writes.
 */
Napi::Value LaunchKernel(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int index = ToInt(info[0], "index");
  if (index < 0 || index >= kKernelCount) throw Napi::RangeError::New(env, "launchKernel: unknown kernel index");
  if (kKernels[index].launch == nullptr) throw Napi::RangeError::New(env, "launchKernel: this kernel is host-staged and has no device launcher");
  auto stream = ToHandle<cudaStream_t>(info[1], "stream");
  auto addresses = info[2].As<Napi::TypedArrayOf<uint64_t>>();
  auto lengths = info[3].As<Napi::Float64Array>();
  int readCount = ToInt(info[4], "readCount");
  int writeCount = ToInt(info[5], "writeCount");
  auto params = info[6].As<Napi::Float64Array>();
  int paramCount = ToInt(info[7], "paramCount");
  if (readCount < 0 || writeCount < 0 || readCount > kMaxKernelRanges || writeCount > kMaxKernelRanges || paramCount < 0 ||
      paramCount > kMaxKernelParams || addresses.ElementLength() < static_cast<size_t>(readCount + writeCount) ||
      lengths.ElementLength() < static_cast<size_t>(readCount + writeCount) || params.ElementLength() < static_cast<size_t>(paramCount)) {
    throw Napi::RangeError::New(env, "launchKernel: at most 8 reads, 8 writes and 8 params, within the argument arrays");
  }
  KernelArgs args{};
  for (int i = 0; i < readCount; i++) {
    args.reads[i] = reinterpret_cast<const uint8_t*>(static_cast<uintptr_t>(addresses[i]));
    args.readBytes[i] = static_cast<uint64_t>(lengths[i]);
  }
  for (int i = 0; i < writeCount; i++) {
    args.writes[i] = reinterpret_cast<uint8_t*>(static_cast<uintptr_t>(addresses[readCount + i]));
    args.writeBytes[i] = static_cast<uint64_t>(lengths[readCount + i]);
  }
  for (int i = 0; i < paramCount; i++) args.params[i] = params[i];
  args.readCount = readCount;
  args.writeCount = writeCount;
  args.paramCount = paramCount;
  return StatusValue(env, kKernels[index].launch(args, stream));
}

}  // namespace

void RegisterKernelBindings(Napi::Env env, Napi::Object exports) {
  exports.Set("kernelNames", Napi::Function::New(env, KernelNames, "kernelNames"));
  exports.Set("kernelHostStaged", Napi::Function::New(env, KernelHostStaged, "kernelHostStaged"));
  exports.Set("launchKernel", Napi::Function::New(env, LaunchKernel, "launchKernel"));
}

}  // namespace hs
