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

#ifdef __cplusplus
}
#endif

#endif /* HS_HS_H_ */
