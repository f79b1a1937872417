// sdfc runtime helpers used by generated code (CPU, CUDA and HIP): Python semantics for integer
// floor division, modulo and power, and the min/max/abs family with mixed argument types.
// Header-only; every function is usable on the host and, under nvcc/hipcc, on the device.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#if defined(__CUDACC__) || defined(__HIPCC__)
#define SDFC_HD __host__ __device__ inline
#else
#define SDFC_HD inline
#endif

namespace sdfc {
namespace rt {

/// Python's `a // b`: floors for integers, floor(a / b) for floating point.
template <typename A, typename B>
SDFC_HD auto floordiv(A a, B b) {
  using T = std::common_type_t<A, B>;
  if constexpr (std::is_integral_v<T>) {
    T q = static_cast<T>(a) / static_cast<T>(b);
    if constexpr (std::is_signed_v<T>) {
      if ((static_cast<T>(a) % static_cast<T>(b) != 0) && ((a < 0) != (b < 0))) --q;
    }
    return q;
  } else {
    // CPython's float floor division: exact through fmod (1 // 0.1 is 9.0, not floor(10.000...)).
    T x = static_cast<T>(a), y = static_cast<T>(b);
    T mod = std::fmod(x, y);
    T div = (x - mod) / y;
    if (mod != 0 && ((y < 0) != (mod < 0))) div -= 1;
    if (div == 0) return std::copysign(T(0), x / y);
    T fl = std::floor(div);
    return div - fl > T(0.5) ? fl + 1 : fl;
  }
}

/// Python's `a % b`: the result has the sign of b.
template <typename A, typename B>
SDFC_HD auto floormod(A a, B b) {
  using T = std::common_type_t<A, B>;
  if constexpr (std::is_integral_v<T>) {
    T r = static_cast<T>(a) % static_cast<T>(b);
    if constexpr (std::is_signed_v<T>) {
      if (r != 0 && ((r < 0) != (b < 0))) r += static_cast<T>(b);
    }
    return r;
  } else {
    T r = std::fmod(static_cast<T>(a), static_cast<T>(b));
    if (r != 0 && ((r < 0) != (b < 0))) r += static_cast<T>(b);
    return r;
  }
}

/// Ceiling division of integers (sympy's int_ceil).
template <typename A, typename B>
SDFC_HD auto ceildiv(A a, B b) {
  return -floordiv(-a, b);
}

/// Python's `a ** b`: an integer power for integers (b >= 0), std::pow otherwise.
template <typename A, typename B>
SDFC_HD auto pow(A a, B b) {
  using T = std::common_type_t<A, B>;
  if constexpr (std::is_integral_v<A> && std::is_integral_v<B>) {
    T r = 1, base = static_cast<T>(a);
    for (B e = b; e > 0; e >>= 1) {
      if (e & 1) r *= base;
      base *= base;
    }
    return r;
  } else {
    return std::pow(static_cast<T>(a), static_cast<T>(b));
  }
}

template <typename A, typename B>
SDFC_HD auto max(A a, B b) {
  using T = std::common_type_t<A, B>;
  return static_cast<T>(a) < static_cast<T>(b) ? static_cast<T>(b) : static_cast<T>(a);
}
template <typename A, typename B, typename... R>
SDFC_HD auto max(A a, B b, R... rest) {
  return max(max(a, b), rest...);
}
template <typename A, typename B>
SDFC_HD auto min(A a, B b) {
  using T = std::common_type_t<A, B>;
  return static_cast<T>(b) < static_cast<T>(a) ? static_cast<T>(b) : static_cast<T>(a);
}
template <typename A, typename B, typename... R>
SDFC_HD auto min(A a, B b, R... rest) {
  return min(min(a, b), rest...);
}
template <typename A>
SDFC_HD auto abs(A a) {
  if constexpr (std::is_integral_v<A>)
    return a < 0 ? -a : a;
  else
    return std::fabs(a);
}
template <typename A>
SDFC_HD auto floor(A a) {
  if constexpr (std::is_integral_v<A>)
    return a;
  else
    return std::floor(a);
}
template <typename A>
SDFC_HD auto ceil(A a) {
  if constexpr (std::is_integral_v<A>)
    return a;
  else
    return std::ceil(a);
}

}  // namespace rt
}  // namespace sdfc

// Complex numbers (dace::complex64 / dace::complex128).
#include "sdfc/complex.h"
// DaCe-compatible names for C++ tasklets (dace::math::..., dace::float64, ...).
#include "sdfc/dace_math.h"
