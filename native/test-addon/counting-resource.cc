// A downstream allocator injected into hs through the C table of include/hs/hs.h: a counting resource over
// aligned host malloc (works without a GPU) or CUDA device memory (cudaMalloc, and cudaMallocAsync /
// cudaFreeAsync as the stream-ordered pair), plus deliberately broken tables for hs's validation tests.
// The counters live on the C side, so tests check hs's accounting against what the allocator really saw.
#include <cuda_runtime_api.h>
#include <hs/hs.h>
#include <napi.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace {

enum class Backing { Host, Device };
/** How a table misbehaves (Fault::None for the well-behaved counting resource). */
enum class Fault { None, Misaligned, MisalignedAndRefused, OutOfMemory, Failure, NullPointer, UnknownStatus, FailingDeallocate };

struct Block {
  void* base;
  uint64_t bytes;
  uint64_t alignment;
};

/** One counting resource: its table, its live blocks and its counters. Lives as long as the addon. */
struct CountingState {
  hs_memory_resource_v1 table{};
  std::string name;
  Backing backing = Backing::Host;
  Fault fault = Fault::None;
  std::mutex mutex;
  std::map<void*, Block> live;  // by the pointer handed out
  uint64_t allocations = 0;
  uint64_t deallocations = 0;
  uint64_t asyncAllocations = 0;
  uint64_t asyncDeallocations = 0;
  uint64_t bytesOutstanding = 0;
  uint64_t badReturns = 0;  // a pointer not handed out, or returned with another size/alignment
  uint64_t destroyCalls = 0;
};

/** Every state ever made: freed at unload, so no table's user pointer dangles while hs may call it. */
std::vector<std::unique_ptr<CountingState>>& States() {
  static std::vector<std::unique_ptr<CountingState>> states;
  return states;
}

const napi_type_tag kTag = {HS_MEMORY_RESOURCE_TYPE_TAG_LOWER, HS_MEMORY_RESOURCE_TYPE_TAG_UPPER};

int32_t Get(CountingState* s, uint64_t bytes, uint64_t alignment, bool ordered, void* stream, void** out) {
  switch (s->fault) {
    case Fault::OutOfMemory:
      return HS_RESOURCE_OUT_OF_MEMORY;
    case Fault::Failure:
      return HS_RESOURCE_FAILURE;
    case Fault::UnknownStatus:
      return 77;
    case Fault::NullPointer:
      *out = nullptr;
      return HS_RESOURCE_OK;
    default:
      break;
  }
  // Misaligned faults hand out base + 1 of a block aligned to 2 * alignment, so it is never aligned.
  bool misaligned = s->fault == Fault::Misaligned || s->fault == Fault::MisalignedAndRefused;
  uint64_t align = misaligned ? alignment * 2 : alignment;
  uint64_t padded = bytes + align + (misaligned ? 1 : 0);
  void* base = nullptr;
  if (s->backing == Backing::Host) {
    if (posix_memalign(&base, align < sizeof(void*) ? sizeof(void*) : align, bytes + (misaligned ? 1 : 0)) != 0) return HS_RESOURCE_OUT_OF_MEMORY;
  } else {
    // A request larger than the whole device is refused up front, as a real allocator would, rather than
    // as a failing cudaMalloc (which compute-sanitizer reports as an API error).
    size_t freeBytes = 0;
    size_t totalBytes = 0;
    if (cudaMemGetInfo(&freeBytes, &totalBytes) != cudaSuccess) {
      cudaGetLastError();
      return HS_RESOURCE_FAILURE;
    }
    if (padded > totalBytes) return HS_RESOURCE_OUT_OF_MEMORY;
    cudaError_t status = ordered ? cudaMallocAsync(&base, padded, static_cast<cudaStream_t>(stream)) : cudaMalloc(&base, padded);
    if (status != cudaSuccess) {
      cudaGetLastError();
      return status == cudaErrorMemoryAllocation ? HS_RESOURCE_OUT_OF_MEMORY : HS_RESOURCE_FAILURE;
    }
  }
  uintptr_t start = reinterpret_cast<uintptr_t>(base);
  if (s->backing == Backing::Device) start = (start + align - 1) / align * align;
  if (misaligned) start += 1;
  void* p = reinterpret_cast<void*>(start);
  std::lock_guard<std::mutex> lock(s->mutex);
  s->live[p] = {base, bytes, alignment};
  s->allocations++;
  if (ordered) s->asyncAllocations++;
  s->bytesOutstanding += bytes;
  *out = p;
  return HS_RESOURCE_OK;
}

int32_t Put(CountingState* s, void* p, uint64_t bytes, uint64_t alignment, bool ordered, void* stream) {
  Block block;
  {
    std::lock_guard<std::mutex> lock(s->mutex);
    auto it = s->live.find(p);
    if (it == s->live.end() || it->second.bytes != bytes || it->second.alignment != alignment) {
      s->badReturns++;
      return HS_RESOURCE_INVALID_ARGUMENT;
    }
    if (s->fault == Fault::FailingDeallocate || s->fault == Fault::MisalignedAndRefused) return HS_RESOURCE_FAILURE;
    block = it->second;
    s->live.erase(it);
    s->deallocations++;
    if (ordered) s->asyncDeallocations++;
    s->bytesOutstanding -= bytes;
  }
  if (s->backing == Backing::Host) {
    std::free(block.base);
  } else if (ordered) {
    cudaFreeAsync(block.base, static_cast<cudaStream_t>(stream));
  } else {
    cudaFree(block.base);
  }
  return HS_RESOURCE_OK;
}

int32_t Allocate(void* user, uint64_t bytes, uint64_t alignment, void** out) {
  return Get(static_cast<CountingState*>(user), bytes, alignment, false, nullptr, out);
}
int32_t Deallocate(void* user, void* p, uint64_t bytes, uint64_t alignment) {
  return Put(static_cast<CountingState*>(user), p, bytes, alignment, false, nullptr);
}
int32_t AllocateAsync(void* user, uint64_t bytes, uint64_t alignment, void* stream, void** out) {
  return Get(static_cast<CountingState*>(user), bytes, alignment, true, stream, out);
}
int32_t DeallocateAsync(void* user, void* p, uint64_t bytes, uint64_t alignment, void* stream) {
  return Put(static_cast<CountingState*>(user), p, bytes, alignment, true, stream);
}
void Destroy(void* user) {
  auto* s = static_cast<CountingState*>(user);
  std::lock_guard<std::mutex> lock(s->mutex);
  s->destroyCalls++;
}

/** The external hs opens: tagged, pointing at the state's table (the state outlives it). */
Napi::Value Hand(Napi::Env env, CountingState* s, bool tagged = true) {
  auto value = Napi::External<hs_memory_resource_v1>::New(env, &s->table);
  if (tagged) value.TypeTag(&kTag);
  return value;
}

CountingState* NewState(const std::string& name, Backing backing, bool streamOrdered) {
  States().push_back(std::make_unique<CountingState>());
  CountingState* s = States().back().get();
  s->name = name;
  s->backing = backing;
  hs_memory_resource_v1& t = s->table;
  t.struct_size = sizeof(hs_memory_resource_v1);
  t.version = HS_MEMORY_RESOURCE_VERSION;
  t.device_type = backing == Backing::Host ? HS_DL_CPU : HS_DL_CUDA;
  t.device_id = 0;
  t.name = s->name.c_str();
  t.user = s;
  t.allocate = Allocate;
  t.deallocate = Deallocate;
  t.allocate_async = streamOrdered ? AllocateAsync : nullptr;
  t.deallocate_async = streamOrdered ? DeallocateAsync : nullptr;
  t.destroy = Destroy;
  return s;
}

/** createCountingResource(backing: 'host' | 'device', streamOrdered: boolean) -> tagged external */
Napi::Value CreateCountingResource(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::string backing = info[0].As<Napi::String>().Utf8Value();
  if (backing != "host" && backing != "device") throw Napi::TypeError::New(env, "backing must be 'host' or 'device'");
  bool ordered = info[1].ToBoolean().Value();
  return Hand(env, NewState("counting " + backing + (ordered ? " (stream-ordered)" : ""), backing == "host" ? Backing::Host : Backing::Device, ordered));
}

/**
 * createBadResourceTable(problem) -> external over a host counting table broken as named: structSize,
 * version, deviceType, nullAllocate, nullDeallocate, halfAsync, untagged (a table problem), or misaligned,
 * misalignedAndRefused, outOfMemory, failure, nullPointer, unknownStatus, failingDeallocate (a call problem).
 */
Napi::Value CreateBadResourceTable(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::string problem = info[0].As<Napi::String>().Utf8Value();
  CountingState* s = NewState("bad table: " + problem, Backing::Host, false);
  hs_memory_resource_v1& t = s->table;
  static const std::map<std::string, Fault> faults = {
      {"misaligned", Fault::Misaligned},   {"misalignedAndRefused", Fault::MisalignedAndRefused}, {"outOfMemory", Fault::OutOfMemory},
      {"failure", Fault::Failure},         {"nullPointer", Fault::NullPointer},                   {"unknownStatus", Fault::UnknownStatus},
      {"failingDeallocate", Fault::FailingDeallocate}};
  if (auto f = faults.find(problem); f != faults.end()) s->fault = f->second;
  else if (problem == "structSize") t.struct_size = 16;
  else if (problem == "version") t.version = 99;
  else if (problem == "deviceType") t.device_type = 7;
  else if (problem == "nullAllocate") t.allocate = nullptr;
  else if (problem == "nullDeallocate") t.deallocate = nullptr;
  else if (problem == "halfAsync") t.allocate_async = AllocateAsync;
  else if (problem != "untagged") throw Napi::TypeError::New(env, "unknown problem " + problem);
  return Hand(env, s, problem != "untagged");
}

/** countingResourceStats(external) -> the C-side counters of a table made above. */
Napi::Value CountingResourceStats(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto* table = info[0].As<Napi::External<hs_memory_resource_v1>>().Data();
  auto* s = static_cast<CountingState*>(table->user);
  std::lock_guard<std::mutex> lock(s->mutex);
  Napi::Object o = Napi::Object::New(env);
  o.Set("allocations", static_cast<double>(s->allocations));
  o.Set("deallocations", static_cast<double>(s->deallocations));
  o.Set("asyncAllocations", static_cast<double>(s->asyncAllocations));
  o.Set("asyncDeallocations", static_cast<double>(s->asyncDeallocations));
  o.Set("liveBlocks", static_cast<double>(s->live.size()));
  o.Set("bytesOutstanding", static_cast<double>(s->bytesOutstanding));
  o.Set("badReturns", static_cast<double>(s->badReturns));
  o.Set("destroyCalls", static_cast<double>(s->destroyCalls));
  return o;
}

}  // namespace

void RegisterCountingResource(Napi::Env env, Napi::Object exports) {
  exports.Set("createCountingResource", Napi::Function::New(env, CreateCountingResource, "createCountingResource"));
  exports.Set("createBadResourceTable", Napi::Function::New(env, CreateBadResourceTable, "createBadResourceTable"));
  exports.Set("countingResourceStats", Napi::Function::New(env, CountingResourceStats, "countingResourceStats"));
}
