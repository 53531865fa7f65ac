// kernelNames() and launchKernel(): the JS side resolves a name to its index once, then launches by index.
// addKernels(table) appends another addon's kernels (the test addon's hs.test.*) to this environment's
// registry; a CudaBackend created afterwards sees them.
#include <cstring>

#include "addon-state.h"
#include "cuda-status.h"
#include "kernel-registry.h"
#include "napi-values.h"

namespace hs {
namespace {

const KernelEntry kKernels[] = {
    {"hs.rgbaToGray", LaunchRgbaToGray},     {"hs.downscale2x", LaunchDownscale2x}, {"hs.gridPreview", LaunchGridPreview},
    {"hs.nanovdb.pointsToGrid.sort", LaunchPointsToGridSort}, {"hs.nanovdb.pointsToGrid.write", LaunchPointsToGridWrite},
    {"hs.nanovdb.pointsToGrid.reduce", LaunchPointsToGridReduce},     {"hs.nanovdb.pointsToGrid.channel", LaunchPointsToGridChannel},
    {"hs.nanovdb.gridChecksum", LaunchGridChecksum},
    {"hs.nanovdb.distributed.splitCount", LaunchDistributedSplitCount},
    {"hs.nanovdb.distributed.splitScatter", LaunchDistributedSplitScatter},
    {"hs.nanovdb.gridMerge.shift", LaunchGridMergeShift},
};
constexpr int kBuiltInCount = sizeof(kKernels) / sizeof(kKernels[0]);

int KernelCount(Napi::Env env) { return kBuiltInCount + static_cast<int>(StateOf(env).addedKernels.size()); }

const KernelEntry& KernelAt(Napi::Env env, int index) {
  return index < kBuiltInCount ? kKernels[index] : StateOf(env).addedKernels[static_cast<size_t>(index - kBuiltInCount)];
}

Napi::Value KernelNames(const Napi::CallbackInfo& info) {
  int count = KernelCount(info.Env());
  Napi::Array names = Napi::Array::New(info.Env(), count);
  for (int i = 0; i < count; i++) names.Set(i, KernelAt(info.Env(), i).name);
  return names;
}

/** kernelHostStaged() -> boolean[]: per registry index, true when the kernel runs host-staged (no device launcher). */
Napi::Value KernelHostStaged(const Napi::CallbackInfo& info) {
  int count = KernelCount(info.Env());
  Napi::Array staged = Napi::Array::New(info.Env(), count);
  for (int i = 0; i < count; i++) staged.Set(i, Napi::Boolean::New(info.Env(), KernelAt(info.Env(), i).launch == nullptr));
  return staged;
}

/**
 * addKernels(table) -> number of kernels added: `table` is another addon's external tagged
 * kKernelTableTypeTag (`kernelTable()` of hs_cuda_test.node). Names already registered are skipped, so
 * adding the same table twice adds nothing.
 */
Napi::Value AddKernels(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsExternal() || !info[0].As<Napi::External<KernelTable>>().CheckTypeTag(&kKernelTableTypeTag)) {
    throw Napi::TypeError::New(env, "addKernels: expected the kernel table external of a kernels addon (kernelTable())");
  }
  const KernelTable* table = info[0].As<Napi::External<KernelTable>>().Data();
  if (table == nullptr || table->size != sizeof(KernelTable) || (table->count > 0 && table->entries == nullptr)) {
    throw Napi::TypeError::New(env, "addKernels: the kernel table was built against another kernel-registry.h");
  }
  int added = 0;
  for (uint32_t i = 0; i < table->count; i++) {
    const KernelEntry& entry = table->entries[i];
    bool known = false;
    for (int k = 0; k < KernelCount(env) && !known; k++) known = std::strcmp(KernelAt(env, k).name, entry.name) == 0;
    if (known) continue;
    StateOf(env).addedKernels.push_back(entry);
    added++;
  }
  return Napi::Number::New(env, added);
}

/**
 * launchKernel(index, stream, addresses: BigUint64Array, byteLengths: Float64Array, readCount, writeCount,
 * params: Float64Array, paramCount) -> status. Ranges are the reads, then the writes.
 */
Napi::Value LaunchKernel(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int index = ToInt(info[0], "index");
  if (index < 0 || index >= KernelCount(env)) throw Napi::RangeError::New(env, "launchKernel: unknown kernel index");
  const KernelEntry& kernel = KernelAt(env, index);
  if (kernel.launch == nullptr) throw Napi::RangeError::New(env, "launchKernel: this kernel is host-staged and has no device launcher");
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
  return StatusValue(env, kernel.launch(args, stream));
}

}  // namespace

void RegisterKernelBindings(Napi::Env env, Napi::Object exports) {
  exports.Set("kernelNames", Napi::Function::New(env, KernelNames, "kernelNames"));
  exports.Set("kernelHostStaged", Napi::Function::New(env, KernelHostStaged, "kernelHostStaged"));
  exports.Set("launchKernel", Napi::Function::New(env, LaunchKernel, "launchKernel"));
  exports.Set("addKernels", Napi::Function::New(env, AddKernels, "addKernels"));
}

}  // namespace hs
