/*
 * hs C ABI, version 1: how a downstream native addon reads an hs tensor and orders its own work.
 *
 * A tensor crosses from JavaScript as the address (a BigInt) of an `hs_tensor_v1` that hs owns. The
 * addon reads it through the inline functions below (no symbols to link against hs_cuda.node):
 *   - hs_tensor_dlpack(): the tensor as a DLPack `DLManagedTensorVersioned` (DLPack 1.x layout, declared
 *     here); `flags` carries HS_DLPACK_FLAG_READ_ONLY for tensors the addon must not write.
 *   - hs_tensor_readiness_event(): the `cudaEvent_t` to wait on before reading (NULL: nothing to wait for).
 *   - hs_tensor_stream(): the `cudaStream_t` the addon should enqueue its work on.
 *   - hs_tensor_set_readiness_stream(): for a foreign tensor the addon produced, the stream its writes
 *     were issued on; hs records the readiness event there.
 * The DLPack record stays valid until hs releases the tensor (its deleter is hs's, do not call it).
 */
#ifndef HS_HS_H_
#define HS_HS_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HS_ABI_VERSION 1u

/* ---- DLPack 1.x data layout (the open tensor-exchange ABI) ---- */
typedef enum { HS_DL_CPU = 1, HS_DL_CUDA = 2, HS_DL_CUDA_HOST = 3, HS_DL_CUDA_MANAGED = 13 } hs_dl_device_type;

typedef struct {
  uint32_t major;
  uint32_t minor;
} DLPackVersion;

typedef struct {
  int32_t device_type;
  int32_t device_id;
} DLDevice;

typedef struct {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
} DLDataType;

typedef struct {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides; /* NULL: compact row-major */
  uint64_t byte_offset;
} DLTensor;

typedef struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(struct DLManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
} DLManagedTensorVersioned;

#define HS_DLPACK_FLAG_READ_ONLY (1ull << 0)
#define HS_DLPACK_FLAG_IS_COPIED (1ull << 1)

/* ---- hs tensor record ---- */
typedef struct {
  uint32_t abi_version; /* HS_ABI_VERSION */
  uint32_t reserved;
  DLManagedTensorVersioned* dlpack;
  void* readiness_event;  /* cudaEvent_t or NULL */
  void* stream;           /* cudaStream_t to work on */
  void* readiness_stream; /* set by the addon through hs_tensor_set_readiness_stream, else NULL */
} hs_tensor_v1;

static inline const hs_tensor_v1* hs_tensor_from_address(uint64_t address) {
  const hs_tensor_v1* t = (const hs_tensor_v1*)(uintptr_t)address;
  return t != 0 && t->abi_version == HS_ABI_VERSION ? t : 0;
}
static inline const DLManagedTensorVersioned* hs_tensor_dlpack(const hs_tensor_v1* t) { return t->dlpack; }
static inline void* hs_tensor_readiness_event(const hs_tensor_v1* t) { return t->readiness_event; }
static inline void* hs_tensor_stream(const hs_tensor_v1* t) { return t->stream; }
static inline int hs_tensor_is_read_only(const hs_tensor_v1* t) { return (t->dlpack->flags & HS_DLPACK_FLAG_READ_ONLY) != 0; }
static inline void hs_tensor_set_readiness_stream(hs_tensor_v1* t, void* stream) { t->readiness_stream = stream; }

/* ---- Memory resources from downstream addons: hs_memory_resource_v1 ----
 *
 * A downstream addon puts its own allocator under hs by filling an hs_memory_resource_v1 table and handing
 * it to JavaScript as a Node-API external tagged with HS_MEMORY_RESOURCE_TYPE_TAG:
 *
 *   static const napi_type_tag tag = {HS_MEMORY_RESOURCE_TYPE_TAG_LOWER, HS_MEMORY_RESOURCE_TYPE_TAG_UPPER};
 *   napi_create_external(env, table, NULL, NULL, &value);
 *   napi_type_tag_object(env, value, &tag);
 *
 * `NativeResource.open(backend, value)` in @hs/nanovdb-mr turns the value into a resource. hs checks the tag,
 * validates the table (struct_size, version, device_type, required entry points) and copies it, so the
 * table struct itself may be freed once it was opened. Calls come from the JavaScript thread that opened it.
 *
 * Entry points return an hs_resource_status. hs calls allocate only for bytes > 0 with a power-of-two
 * alignment from 1 to 2^30 bytes; the pointer written to *out must be a multiple of `alignment` (hs gives
 * back a misaligned or NULL pointer through deallocate and reports an error). deallocate receives exactly
 * the pointer, bytes and alignment of one allocation, from either allocate entry point. The synchronous pair
 * hands out memory usable on every stream at once and frees quiescent memory; the stream-ordered pair
 * (optional, both or neither) takes the cudaStream_t the block is allocated or freed on, with
 * cudaMallocAsync/cudaFreeAsync semantics.
 *
 * Ownership of `user`: with `destroy` set, hs owns `user` from the moment it opened the table and calls
 * destroy(user) exactly once, after its last call (when the resource is disposed or, as a safety net,
 * garbage-collected); the addon must not free `user` itself, and one table (one `user`) can be opened only
 * once at a time. Without `destroy`, `user` must stay valid while the external is reachable (hs keeps it
 * reachable while it uses the table).
 */
#define HS_MEMORY_RESOURCE_VERSION 1u
#define HS_MEMORY_RESOURCE_TYPE_TAG_LOWER 0x9aad87f48c187366ull
#define HS_MEMORY_RESOURCE_TYPE_TAG_UPPER 0xcf33813c790f4025ull

typedef enum {
  HS_RESOURCE_OK = 0,
  HS_RESOURCE_OUT_OF_MEMORY = 1,     /* a valid request that cannot be satisfied; nothing allocated */
  HS_RESOURCE_INVALID_ARGUMENT = 2,  /* a request or pointer the resource refuses */
  HS_RESOURCE_NOT_SUPPORTED = 3,     /* e.g. an alignment or stream the resource cannot serve */
  HS_RESOURCE_FAILURE = 4            /* anything else (a driver error) */
} hs_resource_status;

typedef struct hs_memory_resource_v1 {
  uint32_t struct_size; /* sizeof(hs_memory_resource_v1) as the addon compiled it (later versions append) */
  uint32_t version;     /* HS_MEMORY_RESOURCE_VERSION */
  int32_t device_type;  /* memory served: HS_DL_CPU (pageable host), HS_DL_CUDA_HOST (pinned), HS_DL_CUDA, HS_DL_CUDA_MANAGED */
  int32_t device_id;    /* CUDA ordinal for HS_DL_CUDA and HS_DL_CUDA_MANAGED; 0 for host memory */
  const char* name;     /* for diagnostics; may be NULL; copied when opened */
  void* user;           /* passed to every entry point */
  int32_t (*allocate)(void* user, uint64_t bytes, uint64_t alignment, void** out);
  int32_t (*deallocate)(void* user, void* ptr, uint64_t bytes, uint64_t alignment);
  int32_t (*allocate_async)(void* user, uint64_t bytes, uint64_t alignment, void* stream, void** out);
  int32_t (*deallocate_async)(void* user, void* ptr, uint64_t bytes, uint64_t alignment, void* stream);
  void (*destroy)(void* user); /* optional */
} hs_memory_resource_v1;

#ifdef __cplusplus
}
#endif

#endif /* HS_HS_H_ */
