// resource-table.cc: validation of hs_memory_resource_v1 tables and the checked dispatch (aligned,
// non-NULL results; misaligned pointers given back; destroyed tables refused), over fake allocators that
// count on the C side. Plain asserts; run under ASan/UBSan/LSan by native-tests.mjs.
#undef NDEBUG
#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

#include "resource-table.h"

namespace {

/** A counting allocator over posix_memalign; `misalign` hands out base + 1, `status` overrides the result. */
struct Fake {
  std::map<void*, void*> live;  // pointer handed out -> base
  int allocations = 0;
  int deallocations = 0;
  int destroys = 0;
  int lastStream = 0;
  bool misalign = false;
  bool returnNull = false;
  bool refuseBack = false;
  int32_t status = HS_RESOURCE_OK;
};

int32_t Get(Fake* f, uint64_t bytes, uint64_t alignment, void** out) {
  if (f->status != HS_RESOURCE_OK) return f->status;
  if (f->returnNull) {
    *out = nullptr;
    return HS_RESOURCE_OK;
  }
  void* base = nullptr;
  uint64_t align = alignment < sizeof(void*) ? sizeof(void*) : alignment;
  if (posix_memalign(&base, f->misalign ? align * 2 : align, bytes + 1) != 0) return HS_RESOURCE_OUT_OF_MEMORY;
  void* p = f->misalign ? static_cast<char*>(base) + 1 : base;
  f->live[p] = base;
  f->allocations++;
  *out = p;
  return HS_RESOURCE_OK;
}

int32_t Put(Fake* f, void* p) {
  auto it = f->live.find(p);
  if (it == f->live.end()) return HS_RESOURCE_INVALID_ARGUMENT;
  if (f->refuseBack) return HS_RESOURCE_FAILURE;
  std::free(it->second);
  f->live.erase(it);
  f->deallocations++;
  return HS_RESOURCE_OK;
}

int32_t Allocate(void* user, uint64_t bytes, uint64_t alignment, void** out) { return Get(static_cast<Fake*>(user), bytes, alignment, out); }
int32_t Deallocate(void* user, void* p, uint64_t, uint64_t) { return Put(static_cast<Fake*>(user), p); }
int32_t AllocateAsync(void* user, uint64_t bytes, uint64_t alignment, void* stream, void** out) {
  static_cast<Fake*>(user)->lastStream = static_cast<int>(reinterpret_cast<uintptr_t>(stream));
  return Get(static_cast<Fake*>(user), bytes, alignment, out);
}
int32_t DeallocateAsync(void* user, void* p, uint64_t, uint64_t, void* stream) {
  static_cast<Fake*>(user)->lastStream = static_cast<int>(reinterpret_cast<uintptr_t>(stream));
  return Put(static_cast<Fake*>(user), p);
}
void Destroy(void* user) { static_cast<Fake*>(user)->destroys++; }

hs_memory_resource_v1 TableFor(Fake* f, bool ordered) {
  hs_memory_resource_v1 t{};
  t.struct_size = sizeof(hs_memory_resource_v1);
  t.version = HS_MEMORY_RESOURCE_VERSION;
  t.device_type = HS_DL_CPU;
  t.name = "fake";
  t.user = f;
  t.allocate = Allocate;
  t.deallocate = Deallocate;
  t.allocate_async = ordered ? AllocateAsync : nullptr;
  t.deallocate_async = ordered ? DeallocateAsync : nullptr;
  t.destroy = Destroy;
  return t;
}

void Validation() {
  Fake f;
  assert(hs::ResourceTableProblem(nullptr) != nullptr);
  hs_memory_resource_v1 good = TableFor(&f, true);
  assert(hs::ResourceTableProblem(&good) == nullptr);
  hs_memory_resource_v1 t = good;
  t.struct_size = 8;
  assert(std::strstr(hs::ResourceTableProblem(&t), "struct_size") != nullptr);
  t = good;
  t.version = 2;
  assert(std::strstr(hs::ResourceTableProblem(&t), "version") != nullptr);
  for (int32_t bad : {0, 4, 7, 14, -1}) {
    t = good;
    t.device_type = bad;
    assert(std::strstr(hs::ResourceTableProblem(&t), "device_type") != nullptr);
  }
  t = good;
  t.device_id = -1;
  assert(std::strstr(hs::ResourceTableProblem(&t), "device_id") != nullptr);
  t = good;
  t.allocate = nullptr;
  assert(std::strstr(hs::ResourceTableProblem(&t), "allocate is NULL") != nullptr);
  t = good;
  t.deallocate = nullptr;
  assert(std::strstr(hs::ResourceTableProblem(&t), "deallocate is NULL") != nullptr);
  t = good;
  t.deallocate_async = nullptr;
  assert(std::strstr(hs::ResourceTableProblem(&t), "both or neither") != nullptr);
  // A later, larger version of the struct is accepted (hs reads the v1 prefix).
  t = good;
  t.struct_size = sizeof(hs_memory_resource_v1) + 16;
  assert(hs::ResourceTableProblem(&t) == nullptr);
  assert(f.allocations == 0 && f.destroys == 0);
}

void Dispatch() {
  Fake f;
  hs_memory_resource_v1 raw = TableFor(&f, false);
  hs::ResourceTable table;
  hs::OpenResourceTable(&raw, &table);
  raw.name = "changed after open";  // hs kept its own copy of the name
  assert(table.name == "fake" && !table.streamOrdered);
  void* p = nullptr;
  for (uint64_t alignment : {1ull, 8ull, 256ull, 4096ull}) {
    assert(hs::ResourceAllocate(table, 100, alignment, false, nullptr, &p) == HS_RESOURCE_OK);
    assert(p != nullptr && reinterpret_cast<uintptr_t>(p) % alignment == 0);
    static_cast<char*>(p)[99] = 1;  // the whole block is writable (ASan checks)
    assert(hs::ResourceDeallocate(table, p, 100, alignment, false, nullptr) == HS_RESOURCE_OK);
  }
  // Arguments hs refuses before calling the table.
  assert(hs::ResourceAllocate(table, 0, 8, false, nullptr, &p) == hs::kResourceBadArguments && p == nullptr);
  assert(hs::ResourceAllocate(table, 8, 3, false, nullptr, &p) == hs::kResourceBadArguments);
  assert(hs::ResourceAllocate(table, 8, hs::kMaxResourceAlignment * 2, false, nullptr, &p) == hs::kResourceBadArguments);
  assert(hs::ResourceDeallocate(table, nullptr, 8, 8, false, nullptr) == hs::kResourceBadArguments);
  // No stream-ordered entry points on this table.
  assert(hs::ResourceAllocate(table, 8, 8, true, nullptr, &p) == hs::kResourceNoStreamEntryPoints);
  assert(f.allocations == 4 && f.deallocations == 4);
  // The table's own failures pass through; unknown codes are named as such.
  f.status = HS_RESOURCE_OUT_OF_MEMORY;
  assert(hs::ResourceAllocate(table, 8, 8, false, nullptr, &p) == HS_RESOURCE_OUT_OF_MEMORY && p == nullptr);
  f.status = 99;
  assert(hs::ResourceAllocate(table, 8, 8, false, nullptr, &p) == hs::kResourceUnknownStatus);
  f.status = -3;
  assert(hs::ResourceAllocate(table, 8, 8, false, nullptr, &p) == hs::kResourceUnknownStatus);
  f.status = HS_RESOURCE_OK;
  // A NULL result with success is a contract breach, nothing to give back.
  f.returnNull = true;
  assert(hs::ResourceAllocate(table, 8, 8, false, nullptr, &p) == hs::kResourceNullPointer && p == nullptr);
  f.returnNull = false;
  // A misaligned result goes straight back through deallocate: nothing leaks.
  f.misalign = true;
  assert(hs::ResourceAllocate(table, 64, 256, false, nullptr, &p) == hs::kResourceMisaligned && p == nullptr);
  assert(f.allocations == 5 && f.deallocations == 5 && f.live.empty());
  // ... unless the table refuses it back too (its leak, reported; cleaned up here for LSan).
  f.refuseBack = true;
  assert(hs::ResourceAllocate(table, 64, 256, false, nullptr, &p) == hs::kResourceGiveBackFailed && p == nullptr);
  assert(f.live.size() == 1);
  f.refuseBack = false;
  f.misalign = false;
  for (auto& [ptr, base] : f.live) std::free(base);
  f.live.clear();
  // Destroyed: destroy ran once, every later call is refused without reaching the table.
  hs::DestroyResourceTable(table);
  hs::DestroyResourceTable(table);
  assert(f.destroys == 1);
  int before = f.allocations;
  assert(hs::ResourceAllocate(table, 8, 8, false, nullptr, &p) == hs::kResourceDestroyed && p == nullptr);
  assert(hs::ResourceDeallocate(table, &f, 8, 8, false, nullptr) == hs::kResourceDestroyed);
  assert(f.allocations == before);
  assert(std::strcmp(hs::ResourceStatusName(hs::kResourceMisaligned), "returned a misaligned pointer (given back)") == 0);
  assert(std::strcmp(hs::ResourceStatusName(12345), "unknown status") == 0);
}

void StreamOrdered() {
  Fake f;
  hs_memory_resource_v1 raw = TableFor(&f, true);
  hs::ResourceTable table;
  hs::OpenResourceTable(&raw, &table);
  assert(table.streamOrdered);
  void* p = nullptr;
  void* stream = reinterpret_cast<void*>(uintptr_t{42});
  assert(hs::ResourceAllocate(table, 512, 512, true, stream, &p) == HS_RESOURCE_OK && f.lastStream == 42);
  assert(hs::ResourceDeallocate(table, p, 512, 512, true, reinterpret_cast<void*>(uintptr_t{7})) == HS_RESOURCE_OK && f.lastStream == 7);
  // A misaligned stream-ordered result is given back on the same stream.
  f.misalign = true;
  assert(hs::ResourceAllocate(table, 64, 64, true, stream, &p) == hs::kResourceMisaligned && f.lastStream == 42);
  assert(f.allocations == f.deallocations && f.live.empty());
  hs::DestroyResourceTable(table);
}

}  // namespace

int main() {
  Validation();
  Dispatch();
  StreamOrdered();
  std::printf("resource-table: all checks passed\n");
  return 0;
}
