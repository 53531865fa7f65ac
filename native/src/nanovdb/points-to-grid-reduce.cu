// The reduce stage of the device PointsToGrid build with point attributes, `hs.nanovdb.pointsToGrid.reduce`:
// after the sort stage (points-to-grid-sort.cu), each voxel's points are one segment of the sorted order;
// one thread per segment walks its points in sorted order (their input order: the sort is stable) and reduces
// their attribute channel by channel into the voxel's value, written into the values region in build order
// (voxel k at k * valueSize) as the grid's leaves store it. The CUDA side of `reduceLaunch` in
// packages/nanovdb-mr/src/nanovdb/build/point-reduce.ts, whose host implementation runs the same reduction:
// float64 sums in input order (mean = sum / count), min, max and last exact, count; then the value type's
// rounding (f32 nearest-even; Int32 and RGBA8 nearest integer, ties away from zero, clamped; a NaN stored as
// the canonical quiet NaN, canonical-nan.h). No atomics, and
// this file is compiled with -fmad=false (native/CMakeLists.txt), so the bytes equal the host's.
#include <cstdint>

#include "kernel-registry.h"
#include "nanovdb/canonical-nan.h"
#include "nanovdb/points-to-grid-workspace.h"

namespace hs {
namespace {

using namespace nanovdb;

// Attribute element types (param 1; ATTRIBUTE_DTYPES in point-reduce.ts).
enum AttributeType : int { kF32 = 0, kF64 = 1, kI8 = 2, kU8 = 3, kI16 = 4, kU16 = 5, kI32 = 6, kU32 = 7 };
// Reductions (param 3; REDUCTIONS in point-reduce.ts).
enum Reduction : int { kMean = 0, kSum = 1, kMin = 2, kMax = 3, kCount = 4, kLast = 5 };
// Value types by GridType code (param 4).
enum ValueType : int { kFloat = 1, kDouble = 2, kInt32 = 4, kVec3f = 6, kRGBA8 = 12 };

__device__ double AttributeAt(const uint8_t* a, int type, uint64_t i) {
  switch (type) {
    case kF32: return static_cast<double>(reinterpret_cast<const float*>(a)[i]);
    case kF64: return reinterpret_cast<const double*>(a)[i];
    case kI8: return static_cast<double>(reinterpret_cast<const int8_t*>(a)[i]);
    case kU8: return static_cast<double>(a[i]);
    case kI16: return static_cast<double>(reinterpret_cast<const int16_t*>(a)[i]);
    case kU16: return static_cast<double>(reinterpret_cast<const uint16_t*>(a)[i]);
    case kI32: return static_cast<double>(reinterpret_cast<const int32_t*>(a)[i]);
    default: return static_cast<double>(reinterpret_cast<const uint32_t*>(a)[i]);
  }
}

// Nearest integer, ties away from zero, clamped to [lo, hi]; NaN gives 0 (as a JS typed array stores it).
__device__ double RoundClamp(double v, double lo, double hi) {
  if (v != v) return 0.0;
  double r = round(v);
  return r < lo ? lo : (r > hi ? hi : r);
}

// One thread per segment: the thread of a voxel's first sorted point walks the voxel's points.
__global__ void ReduceSegments(const uint8_t* __restrict__ attributes, int type, int channels, int reduction, int valueType, int components,
                               const uint4* __restrict__ ids, const uint32_t* __restrict__ perm, uint32_t used, const uint32_t* __restrict__ report,
                               uint8_t* __restrict__ values, uint64_t valueCapacity) {
  uint32_t valid = report[kValid];
  for (uint64_t j = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; j < valid && j < used; j += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    uint32_t voxel = ids[j].x;
    if (j > 0 && ids[j - 1].x == voxel) continue;
    uint64_t k = voxel - 1;
    if (k >= valueCapacity) continue;
    uint64_t end = j + 1;
    while (end < valid && ids[end].x == voxel) end++;
    for (int c = 0; c < components; c++) {
      double acc;
      if (reduction == kCount) {
        acc = static_cast<double>(end - j);
      } else if (reduction == kLast) {
        acc = AttributeAt(attributes, type, static_cast<uint64_t>(channels) * perm[end - 1] + c);
      } else {
        acc = AttributeAt(attributes, type, static_cast<uint64_t>(channels) * perm[j] + c);
        for (uint64_t q = j + 1; q < end; q++) {
          double v = AttributeAt(attributes, type, static_cast<uint64_t>(channels) * perm[q] + c);
          if (reduction == kMin) acc = v < acc ? v : acc;
          else if (reduction == kMax) acc = v > acc ? v : acc;
          else acc = __dadd_rn(acc, v);
        }
        if (reduction == kMean) acc = __ddiv_rn(acc, static_cast<double>(end - j));
      }
      switch (valueType) {
        case kDouble: reinterpret_cast<unsigned long long*>(values)[k] = CanonicalF64Bits(static_cast<uint64_t>(__double_as_longlong(acc))); break;
        case kInt32: reinterpret_cast<int32_t*>(values)[k] = static_cast<int32_t>(RoundClamp(acc, -2147483648.0, 2147483647.0)); break;
        case kRGBA8: values[4 * k + c] = static_cast<uint8_t>(RoundClamp(acc, 0.0, 255.0)); break;
        default: reinterpret_cast<uint32_t*>(values)[k * components + c] = CanonicalF32Bits(__float_as_uint(__double2float_rn(acc))); break;
      }
    }
  }
}

int ElementBytes(int type) { return type == kF64 ? 8 : (type == kI16 || type == kU16) ? 2 : (type == kI8 || type == kU8) ? 1 : 4; }

int ComponentsOf(int valueType) {
  switch (valueType) {
    case kFloat: case kDouble: case kInt32: return 1;
    case kVec3f: return 3;
    case kRGBA8: return 4;
    default: return 0;
  }
}

int ValueBytes(int valueType) { return valueType == kDouble ? 8 : valueType == kVec3f ? 12 : 4; }

}  // namespace

/**
 * hs.nanovdb.pointsToGrid.reduce: reads [attributes, workspace], writes [values]; params [used, attribute type
 * (0 f32, 1 f64, 2 i8, 3 u8, 4 i16, 5 u16, 6 i32, 7 u32), channels per point (1-4), reduction (0 mean, 1 sum, 2 min,
 * 3 max, 4 count, 5 last), value type (GridType 1 Float, 2 Double, 4 Int32, 6 Vec3f, 12 RGBA8)]. The attributes hold
 * `channels` elements per point (point i's channel c at channels * i + c), element-aligned; the workspace is the sort
 * stage's; voxel k's value goes to values[k] for every k whose value fits the values range.
 */
cudaError_t LaunchPointsToGridReduce(const KernelArgs& a, cudaStream_t stream) {
  if (a.readCount != 2 || a.writeCount != 1 || a.paramCount != 5 || !IsCount(a.params[0])) return cudaErrorInvalidValue;
  int type = static_cast<int>(a.params[1]), channels = static_cast<int>(a.params[2]), reduction = static_cast<int>(a.params[3]), valueType = static_cast<int>(a.params[4]);
  if (a.params[1] != type || type < kF32 || type > kU32 || a.params[2] != channels || channels < 1 || channels > 4 || a.params[3] != reduction || reduction < kMean ||
      reduction > kLast || a.params[4] != valueType || ComponentsOf(valueType) == 0) {
    return cudaErrorInvalidValue;
  }
  int components = ComponentsOf(valueType);
  if (reduction != kCount && components != channels) return cudaErrorInvalidValue;
  uint32_t used = static_cast<uint32_t>(a.params[0]);
  Workspace w = Carve(const_cast<uint8_t*>(a.reads[1]), used);
  uint64_t elementBytes = static_cast<uint64_t>(ElementBytes(type));
  if (a.readBytes[0] < elementBytes * channels * used || a.readBytes[1] < w.total || (reinterpret_cast<uintptr_t>(a.reads[0]) & (elementBytes - 1)) != 0 ||
      (reinterpret_cast<uintptr_t>(a.writes[0]) & 3) != 0 || (valueType == kDouble && (reinterpret_cast<uintptr_t>(a.writes[0]) & 7) != 0)) {
    return cudaErrorInvalidValue;
  }
  uint64_t capacity = a.writeBytes[0] / ValueBytes(valueType);
  if (used > 0 && capacity > 0) {
    ReduceSegments<<<Blocks(used, 256), 256, 0, stream>>>(a.reads[0], type, channels, reduction, valueType, components, w.ids, w.perm, used, w.report, a.writes[0], capacity);
  }
  return cudaGetLastError();
}

}  // namespace hs
