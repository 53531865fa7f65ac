// Node-API layer over resource-table.h: opens an hs_memory_resource_v1 table a downstream addon handed to
// JavaScript (a Node-API external tagged HS_MEMORY_RESOURCE_TYPE_TAG) and calls its entry points for
// @hs/nanovdb-mr's NativeResource. The opened table is hs's copy, held by an external whose finalizer
// destroys it if JavaScript never closed it.
#include <hs/hs.h>

#include <mutex>
#include <set>

#include "addon-state.h"
#include "napi-values.h"
#include "resource-table.h"

namespace hs {
namespace {

const napi_type_tag kResourceTag = {HS_MEMORY_RESOURCE_TYPE_TAG_LOWER, HS_MEMORY_RESOURCE_TYPE_TAG_UPPER};
/** Tags hs's own opened-table externals, so no other external is ever read as a ResourceTable. */
const napi_type_tag kOpenedTag = {0x5f0c2a8e61b34d97ull, 0xa4e1d7c3920b6f18ull};

/** `user` pointers of open tables that have a destroy entry point: each may be open once (destroy runs once). */
std::mutex openUsersMutex;
std::set<void*> openUsers;

void Close(ResourceTable* table) {
  if (table->destroyed) return;
  bool owned = table->entry.destroy != nullptr;
  DestroyResourceTable(*table);
  if (owned) {
    std::lock_guard<std::mutex> lock(openUsersMutex);
    openUsers.erase(table->entry.user);
  }
}

Napi::Error BadTable(Napi::Env env, const std::string& message) {
  Napi::Error error = Napi::Error::New(env, message);
  error.Set("code", "ERR_HS_BAD_RESOURCE_TABLE");
  return error;
}

/**
 * memoryResourceOpen(table) -> { resource, deviceType, deviceId, streamOrdered, name }: validates and copies
 * the table. TypeError when `table` is not an external tagged HS_MEMORY_RESOURCE_TYPE_TAG; an Error with code
 * ERR_HS_BAD_RESOURCE_TABLE for an invalid table or one already open.
 */
Napi::Value Open(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsExternal()) throw Napi::TypeError::New(env, "memoryResourceOpen: expected the external a native addon made for its hs_memory_resource_v1");
  auto external = info[0].As<Napi::External<hs_memory_resource_v1>>();
  if (!external.CheckTypeTag(&kResourceTag)) {
    throw Napi::TypeError::New(env, "memoryResourceOpen: the external is not tagged HS_MEMORY_RESOURCE_TYPE_TAG (napi_type_tag_object), so it is not an hs_memory_resource_v1");
  }
  const hs_memory_resource_v1* raw = external.Data();
  if (const char* problem = ResourceTableProblem(raw)) throw BadTable(env, std::string("memoryResourceOpen: ") + problem);
  if (raw->destroy != nullptr) {
    std::lock_guard<std::mutex> lock(openUsersMutex);
    if (!openUsers.insert(raw->user).second) {
      throw BadTable(env, "memoryResourceOpen: this table (its user state) is already open; share that resource instead of opening the table twice");
    }
  }
  auto* table = new ResourceTable();
  OpenResourceTable(raw, table);
  Napi::Object result = Napi::Object::New(env);
  auto opened = Napi::External<ResourceTable>::New(env, table, [](Napi::Env, ResourceTable* t) {
    Close(t);
    delete t;
  });
  opened.TypeTag(&kOpenedTag);
  result.Set("resource", opened);
  result.Set("deviceType", Napi::Number::New(env, table->entry.device_type));
  result.Set("deviceId", Napi::Number::New(env, table->entry.device_id));
  result.Set("streamOrdered", Napi::Boolean::New(env, table->streamOrdered));
  result.Set("name", Napi::String::New(env, table->name));
  return result;
}

ResourceTable* TableOf(const Napi::Value& v) {
  if (!v.IsExternal() || !v.As<Napi::External<ResourceTable>>().CheckTypeTag(&kOpenedTag)) {
    throw Napi::TypeError::New(v.Env(), "resource must be the `resource` memoryResourceOpen returned");
  }
  return v.As<Napi::External<ResourceTable>>().Data();
}

/** Writes an allocation's address into out[0] (a BigUint64Array of length >= 1). */
void WriteOut(const Napi::Value& v, void* p) {
  if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_biguint64_array || v.As<Napi::TypedArray>().ElementLength() < 1) {
    throw Napi::TypeError::New(v.Env(), "out must be a BigUint64Array of length >= 1");
  }
  v.As<Napi::BigUint64Array>()[0] = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p));
}

/** memoryResourceAllocate(resource, bytes, alignment, out) -> status; the address lands in out[0] (0n on failure). */
Napi::Value Allocate(const Napi::CallbackInfo& info) {
  ResourceTable* table = TableOf(info[0]);
  void* p = nullptr;
  int32_t status = ResourceAllocate(*table, ToSize(info[1], "bytes"), ToSize(info[2], "alignment"), false, nullptr, &p);
  WriteOut(info[3], p);
  return Napi::Number::New(info.Env(), status);
}

/** memoryResourceAllocateAsync(resource, bytes, alignment, stream, out) -> status (stream-ordered entry point). */
Napi::Value AllocateAsync(const Napi::CallbackInfo& info) {
  ResourceTable* table = TableOf(info[0]);
  void* p = nullptr;
  int32_t status = ResourceAllocate(*table, ToSize(info[1], "bytes"), ToSize(info[2], "alignment"), true, ToHandle<void*>(info[3], "stream"), &p);
  WriteOut(info[4], p);
  return Napi::Number::New(info.Env(), status);
}

/** memoryResourceDeallocate(resource, address, bytes, alignment) -> status */
Napi::Value Deallocate(const Napi::CallbackInfo& info) {
  ResourceTable* table = TableOf(info[0]);
  int32_t status = ResourceDeallocate(*table, ToHandle<void*>(info[1], "address"), ToSize(info[2], "bytes"), ToSize(info[3], "alignment"), false, nullptr);
  return Napi::Number::New(info.Env(), status);
}

/** memoryResourceDeallocateAsync(resource, address, bytes, alignment, stream) -> status */
Napi::Value DeallocateAsync(const Napi::CallbackInfo& info) {
  ResourceTable* table = TableOf(info[0]);
  int32_t status = ResourceDeallocate(*table, ToHandle<void*>(info[1], "address"), ToSize(info[2], "bytes"), ToSize(info[3], "alignment"), true,
                                      ToHandle<void*>(info[4], "stream"));
  return Napi::Number::New(info.Env(), status);
}

/** memoryResourceClose(resource): destroy(user) once; later calls on the resource return kResourceDestroyed. */
Napi::Value CloseBinding(const Napi::CallbackInfo& info) {
  Close(TableOf(info[0]));
  return info.Env().Undefined();
}

/** memoryResourceStatusName(status) -> words for a status of the calls above. */
Napi::Value StatusName(const Napi::CallbackInfo& info) {
  return Napi::String::New(info.Env(), ResourceStatusName(ToInt(info[0], "status")));
}

}  // namespace

void RegisterMemoryResourceBindings(Napi::Env env, Napi::Object exports) {
  exports.Set("memoryResourceOpen", Napi::Function::New(env, Open, "memoryResourceOpen"));
  exports.Set("memoryResourceAllocate", Napi::Function::New(env, Allocate, "memoryResourceAllocate"));
  exports.Set("memoryResourceAllocateAsync", Napi::Function::New(env, AllocateAsync, "memoryResourceAllocateAsync"));
  exports.Set("memoryResourceDeallocate", Napi::Function::New(env, Deallocate, "memoryResourceDeallocate"));
  exports.Set("memoryResourceDeallocateAsync", Napi::Function::New(env, DeallocateAsync, "memoryResourceDeallocateAsync"));
  exports.Set("memoryResourceClose", Napi::Function::New(env, CloseBinding, "memoryResourceClose"));
  exports.Set("memoryResourceStatusName", Napi::Function::New(env, StatusName, "memoryResourceStatusName"));
}

}  // namespace hs
