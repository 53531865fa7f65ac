// The one NaN hs stores wherever a builder writes a floating-point NaN: the quiet NaN with a clear sign and
// an empty payload (f32 0x7fc00000, f64 0x7ff8000000000000). A GPU's NaN bits depend on the instruction that
// made them and a JS number's on V8, so both sides rewrite them: the kernels through these, the host through
// packages/nanovdb-mr/src/nanovdb/grid/scalar-io.ts (CANONICAL_F32_NAN, setFloat32Canonical, ...).
#pragma once
#include <cstdint>

namespace hs::nanovdb {

constexpr uint32_t kCanonicalF32NaN = 0x7fc00000u;
constexpr uint64_t kCanonicalF64NaN = 0x7ff8000000000000ull;

/** The bits of an f32: a NaN's replaced by the canonical NaN's, any other value's as they are. */
__host__ __device__ inline uint32_t CanonicalF32Bits(uint32_t bits) { return (bits & 0x7fffffffu) > 0x7f800000u ? kCanonicalF32NaN : bits; }

/** The bits of an f64: a NaN's replaced by the canonical NaN's, any other value's as they are. */
__host__ __device__ inline uint64_t CanonicalF64Bits(uint64_t bits) { return (bits & 0x7fffffffffffffffull) > 0x7ff0000000000000ull ? kCanonicalF64NaN : bits; }

}  // namespace hs::nanovdb
