// Conversions between JS values and native handles used by every binding file.
// Handles (CUDA streams, events, graphs, device pointers) cross into JS as BigInt addresses.
#pragma once
#include <napi.h>
#include <cstdint>

namespace hs {

/** Reads a BigInt argument as an unsigned 64-bit value; throws a TypeError for other types. */
inline uint64_t ToU64(const Napi::Value& v, const char* what) {
  if (!v.IsBigInt()) throw Napi::TypeError::New(v.Env(), std::string(what) + " must be a bigint");
  bool lossless = true;
  return v.As<Napi::BigInt>().Uint64Value(&lossless);
}

/** Reads a BigInt argument as a pointer-sized handle. */
template <typename T>
inline T ToHandle(const Napi::Value& v, const char* what) {
  return reinterpret_cast<T>(static_cast<uintptr_t>(ToU64(v, what)));
}

/** Reads a Number argument as a non-negative integer (sizes, ordinals); throws a TypeError otherwise. */
inline uint64_t ToSize(const Napi::Value& v, const char* what) {
  if (!v.IsNumber()) throw Napi::TypeError::New(v.Env(), std::string(what) + " must be a number");
  double d = v.As<Napi::Number>().DoubleValue();
  if (!(d >= 0) || d > 9007199254740991.0 || d != static_cast<double>(static_cast<uint64_t>(d))) {
    throw Napi::RangeError::New(v.Env(), std::string(what) + " must be a non-negative safe integer");
  }
  return static_cast<uint64_t>(d);
}

inline int32_t ToInt(const Napi::Value& v, const char* what) {
  if (!v.IsNumber()) throw Napi::TypeError::New(v.Env(), std::string(what) + " must be a number");
  return v.As<Napi::Number>().Int32Value();
}

inline Napi::BigInt FromPointer(Napi::Env env, const void* p) {
  return Napi::BigInt::New(env, static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p)));
}

}  // namespace hs
