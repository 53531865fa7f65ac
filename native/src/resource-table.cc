#include "resource-table.h"

namespace hs {
namespace {

bool KnownDeviceType(int32_t type) {
  return type == HS_DL_CPU || type == HS_DL_CUDA || type == HS_DL_CUDA_HOST || type == HS_DL_CUDA_MANAGED;
}

bool PowerOfTwo(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

/** The table's status if it is one of hs_resource_status, else kResourceUnknownStatus. */
int32_t Known(int32_t status) { return status >= HS_RESOURCE_OK && status <= HS_RESOURCE_FAILURE ? status : kResourceUnknownStatus; }

}  // namespace

const char* ResourceTableProblem(const hs_memory_resource_v1* table) {
  if (table == nullptr) return "the external holds a NULL table";
  if (table->struct_size < sizeof(hs_memory_resource_v1)) {
    return "struct_size is smaller than sizeof(hs_memory_resource_v1); set it to sizeof(hs_memory_resource_v1)";
  }
  if (table->version != HS_MEMORY_RESOURCE_VERSION) return "version is not HS_MEMORY_RESOURCE_VERSION (1); rebuild the addon against this hs.h";
  if (!KnownDeviceType(table->device_type)) {
    return "device_type is not HS_DL_CPU, HS_DL_CUDA_HOST, HS_DL_CUDA or HS_DL_CUDA_MANAGED";
  }
  if (table->device_id < 0) return "device_id is negative";
  if (table->allocate == nullptr) return "allocate is NULL";
  if (table->deallocate == nullptr) return "deallocate is NULL";
  if ((table->allocate_async == nullptr) != (table->deallocate_async == nullptr)) {
    return "only one of allocate_async and deallocate_async is set; set both or neither";
  }
  return nullptr;
}

void OpenResourceTable(const hs_memory_resource_v1* table, ResourceTable* out) {
  out->entry = *table;
  out->entry.struct_size = sizeof(hs_memory_resource_v1);
  out->name = table->name != nullptr ? table->name : "";
  out->entry.name = nullptr;  // the addon may free its string; use out->name
  out->streamOrdered = table->allocate_async != nullptr;
  out->destroyed = false;
}

int32_t ResourceAllocate(ResourceTable& table, uint64_t bytes, uint64_t alignment, bool ordered, void* stream, void** out) {
  *out = nullptr;
  if (table.destroyed) return kResourceDestroyed;
  if (ordered && !table.streamOrdered) return kResourceNoStreamEntryPoints;
  if (bytes == 0 || !PowerOfTwo(alignment) || alignment > kMaxResourceAlignment) return kResourceBadArguments;
  const hs_memory_resource_v1& e = table.entry;
  void* p = nullptr;
  int32_t status = Known(ordered ? e.allocate_async(e.user, bytes, alignment, stream, &p) : e.allocate(e.user, bytes, alignment, &p));
  if (status != HS_RESOURCE_OK) return status;
  if (p == nullptr) return kResourceNullPointer;
  if (reinterpret_cast<uintptr_t>(p) % alignment != 0) {
    int32_t back = ordered ? e.deallocate_async(e.user, p, bytes, alignment, stream) : e.deallocate(e.user, p, bytes, alignment);
    return back == HS_RESOURCE_OK ? kResourceMisaligned : kResourceGiveBackFailed;
  }
  *out = p;
  return HS_RESOURCE_OK;
}

int32_t ResourceDeallocate(ResourceTable& table, void* ptr, uint64_t bytes, uint64_t alignment, bool ordered, void* stream) {
  if (table.destroyed) return kResourceDestroyed;
  if (ordered && !table.streamOrdered) return kResourceNoStreamEntryPoints;
  if (ptr == nullptr || bytes == 0 || !PowerOfTwo(alignment) || alignment > kMaxResourceAlignment) return kResourceBadArguments;
  const hs_memory_resource_v1& e = table.entry;
  return Known(ordered ? e.deallocate_async(e.user, ptr, bytes, alignment, stream) : e.deallocate(e.user, ptr, bytes, alignment));
}

void DestroyResourceTable(ResourceTable& table) {
  if (table.destroyed) return;
  table.destroyed = true;
  if (table.entry.destroy != nullptr) table.entry.destroy(table.entry.user);
}

const char* ResourceStatusName(int32_t status) {
  switch (status) {
    case HS_RESOURCE_OK:
      return "ok";
    case HS_RESOURCE_OUT_OF_MEMORY:
      return "out of memory";
    case HS_RESOURCE_INVALID_ARGUMENT:
      return "invalid argument";
    case HS_RESOURCE_NOT_SUPPORTED:
      return "not supported";
    case HS_RESOURCE_FAILURE:
      return "failure";
    case kResourceMisaligned:
      return "returned a misaligned pointer (given back)";
    case kResourceNullPointer:
      return "reported success with a NULL pointer";
    case kResourceDestroyed:
      return "the resource was destroyed";
    case kResourceNoStreamEntryPoints:
      return "the table has no stream-ordered entry points";
    case kResourceGiveBackFailed:
      return "returned a misaligned pointer and refused it back";
    case kResourceBadArguments:
      return "hs refused the arguments";
    case kResourceUnknownStatus:
      return "returned a status outside hs_resource_status";
    default:
      return "unknown status";
  }
}

}  // namespace hs
