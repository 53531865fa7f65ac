// Validated dispatch to an hs_memory_resource_v1 table (include/hs/hs.h) handed over by a downstream addon.
// Plain C++ without Node-API or CUDA, so the native tests (native/tests/) exercise it under the sanitizers;
// memory-resource-bindings.cc is the thin Node-API layer over it.
#pragma once
#include <hs/hs.h>

#include <cstdint>
#include <string>

namespace hs {

/** Statuses hs adds to the table's own (hs_resource_status, 0..4); always negative. */
enum ResourceCallStatus : int32_t {
  /** allocate returned a pointer that is not a multiple of the alignment; hs gave it back through deallocate. */
  kResourceMisaligned = -1,
  /** allocate reported success but wrote NULL; nothing to give back. */
  kResourceNullPointer = -2,
  /** The resource was destroyed (closed); the table is not called any more. */
  kResourceDestroyed = -3,
  /** A stream-ordered call on a table without the stream-ordered entry points. */
  kResourceNoStreamEntryPoints = -4,
  /** allocate returned a misaligned pointer and giving it back failed too (the table leaked it). */
  kResourceGiveBackFailed = -5,
  /** hs refused the arguments before calling the table (0 bytes, a bad alignment, a NULL pointer). */
  kResourceBadArguments = -6,
  /** The table returned a status outside hs_resource_status. */
  kResourceUnknownStatus = -7,
};

/** Largest alignment hs passes to a table, bytes. */
constexpr uint64_t kMaxResourceAlignment = uint64_t{1} << 30;

/**
 * hs's own copy of a validated table. `destroyed` turns every later call into kResourceDestroyed, and
 * destroy(user) runs at most once.
 */
struct ResourceTable {
  hs_memory_resource_v1 entry{};
  std::string name;
  bool streamOrdered = false;
  bool destroyed = false;
};

/**
 * Null when `table` is usable: non-NULL, struct_size at least sizeof(hs_memory_resource_v1), version
 * HS_MEMORY_RESOURCE_VERSION, a known device_type (device_id >= 0), allocate and deallocate set, the
 * stream-ordered pair both set or both NULL. Otherwise a sentence saying what is wrong.
 */
const char* ResourceTableProblem(const hs_memory_resource_v1* table);

/** Copies a table that ResourceTableProblem accepted (reading only the v1 fields). */
void OpenResourceTable(const hs_memory_resource_v1* table, ResourceTable* out);

/**
 * Allocates through the table (the stream-ordered entry point when `ordered`, on `stream`). On success
 * (*out aligned, non-NULL) returns HS_RESOURCE_OK; otherwise *out is NULL and the status says why: the
 * table's own status (1..4), or a ResourceCallStatus. A misaligned pointer is given back through the
 * matching deallocate before returning, so a bad table leaks nothing through hs.
 */
int32_t ResourceAllocate(ResourceTable& table, uint64_t bytes, uint64_t alignment, bool ordered, void* stream, void** out);

/** Returns a block through the table (stream-ordered when `ordered`); the table's status or a ResourceCallStatus. */
int32_t ResourceDeallocate(ResourceTable& table, void* ptr, uint64_t bytes, uint64_t alignment, bool ordered, void* stream);

/** Calls destroy(user) if the table has one and it did not run yet; later calls are refused. Idempotent. */
void DestroyResourceTable(ResourceTable& table);

/** Words for a status returned by ResourceAllocate/ResourceDeallocate. */
const char* ResourceStatusName(int32_t status);

}  // namespace hs
