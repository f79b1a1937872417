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

/// SymPy's (and Python's) `a / b`: exact division, so two integers divide as doubles (C++ would
/// truncate 1 / 2 to 0); other types divide as they are.
template <typename A, typename B>
SDFC_HD auto truediv(A a, B b) {
  if constexpr (std::is_integral_v<A> && std::is_integral_v<B>)
    return static_cast<double>(a) / static_cast<double>(b);
  else
    return a / b;
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

/// Python's round(x) of a number: to nearest, ties to even, in the argument's type.
template <typename A>
SDFC_HD auto round(A a) {
  if constexpr (std::is_integral_v<A>)
    return a;
  else
    return std::nearbyint(a);
}
/// -1, 0 or 1 in the argument's type (NumPy's sign; NaN stays NaN).
template <typename A>
SDFC_HD A sign(A a) {
  if constexpr (std::is_floating_point_v<A>) {
    if (a != a) return a;
  }
  return static_cast<A>((A(0) < a) - (a < A(0)));
}
/// 1 / a in the argument's type (NumPy's reciprocal: integers divide as integers).
template <typename A>
SDFC_HD A reciprocal(A a) {
  return static_cast<A>(A(1) / a);
}
template <typename A>
SDFC_HD auto deg2rad(A a) {
  return a * (3.141592653589793 / 180.0);
}
template <typename A>
SDFC_HD auto rad2deg(A a) {
  return a * (180.0 / 3.141592653589793);
}
/// NumPy's heaviside(x, h0): 0 below zero, h0 at zero, 1 above.
template <typename A, typename B>
SDFC_HD auto heaviside(A a, B b) {
  using T = std::common_type_t<A, B, double>;
  return a < 0 ? T(0) : a > 0 ? T(1) : static_cast<T>(b);
}
/// C's `%` for integers and fmod for floating point (DaCe's cpp_mod).
template <typename A, typename B>
SDFC_HD auto cpp_mod(A a, B b) {
  using T = std::common_type_t<A, B>;
  if constexpr (std::is_integral_v<T>)
    return static_cast<T>(a) % static_cast<T>(b);
  else
    return std::fmod(static_cast<T>(a), static_cast<T>(b));
}
template <typename A, typename B>
SDFC_HD auto gcd(A a, B b) {
  using T = std::common_type_t<A, B>;
  T x = abs(static_cast<T>(a)), y = abs(static_cast<T>(b));
  while (y != 0) {
    T r = x % y;
    x = y;
    y = r;
  }
  return x;
}
template <typename A, typename B>
SDFC_HD auto lcm(A a, B b) {
  using T = std::common_type_t<A, B>;
  T g = gcd(a, b);
  return g == 0 ? T(0) : static_cast<T>(abs(static_cast<T>(a) / g * static_cast<T>(b)));
}
/// math.floor / round of a number as an int64 (DaCe's ifloor, iround).
template <typename A>
SDFC_HD std::int64_t ifloor(A a) {
  if constexpr (std::is_integral_v<A>)
    return a;
  else
    return static_cast<std::int64_t>(std::floor(a));
}
template <typename A>
SDFC_HD std::int64_t iround(A a) {
  if constexpr (std::is_integral_v<A>)
    return a;
  else
    return static_cast<std::int64_t>(std::nearbyint(a));
}

}  // namespace rt
}  // namespace sdfc

// Complex numbers (dace::complex64 / dace::complex128); host sources of programs without complex
// numbers or C++ code of their own define SDFC_NO_COMPLEX and do not read <complex>.
#ifndef SDFC_NO_COMPLEX
#include "sdfc/complex.h"
#endif
// DaCe-compatible names for C++ tasklets (dace::math::..., dace::float64, ...).
#include "sdfc/dace_math.h"
