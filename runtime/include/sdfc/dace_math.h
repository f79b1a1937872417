// DaCe's names for C++ tasklets written against DaCe's runtime: `dace::math::...` (typeless math
// functions and pi) and the `dace::float64`-style dtype names. Header-only, host and device
// (included by rt.h, so every generated program and the tasklet check see it). sdfc's own
// implementations: the functions forward to <cmath> or to sdfc::rt (Python semantics).
#pragma once

#include <cstdint>

#include "sdfc/rt.h"

namespace dace {

using float32 = float;
using float64 = double;
using int8 = std::int8_t;
using int16 = std::int16_t;
using int32 = std::int32_t;
using int64 = std::int64_t;
using uint8 = std::uint8_t;
using uint16 = std::uint16_t;
using uint32 = std::uint32_t;
using uint64 = std::uint64_t;
using bool_ = bool;
#ifndef SDFC_NO_COMPLEX
using complex64 = sdfc::rt::complex<float>;
using complex128 = sdfc::rt::complex<double>;
#endif

namespace math {

using sdfc::rt::abs;
using sdfc::rt::ceil;
using sdfc::rt::floor;
using sdfc::rt::max;
using sdfc::rt::min;
using sdfc::rt::pow;

#define SDFC_DACE_MATH_UNARY(name) \
  template <typename T>            \
  SDFC_HD auto name(T x) {         \
    return std::name(x);           \
  }
SDFC_DACE_MATH_UNARY(exp)
SDFC_DACE_MATH_UNARY(log)
SDFC_DACE_MATH_UNARY(log2)
SDFC_DACE_MATH_UNARY(log10)
SDFC_DACE_MATH_UNARY(sqrt)
SDFC_DACE_MATH_UNARY(sin)
SDFC_DACE_MATH_UNARY(cos)
SDFC_DACE_MATH_UNARY(tan)
SDFC_DACE_MATH_UNARY(asin)
SDFC_DACE_MATH_UNARY(acos)
SDFC_DACE_MATH_UNARY(atan)
SDFC_DACE_MATH_UNARY(sinh)
SDFC_DACE_MATH_UNARY(cosh)
SDFC_DACE_MATH_UNARY(tanh)
SDFC_DACE_MATH_UNARY(round)
#undef SDFC_DACE_MATH_UNARY

template <typename A, typename B>
SDFC_HD auto atan2(A a, B b) {
  return std::atan2(a, b);
}

/// An integer power by squaring (exponent >= 0).
template <typename T>
SDFC_HD T ipow(T base, unsigned int exponent) {
  return sdfc::rt::pow(base, exponent);
}

/// floor as a 64-bit integer.
template <typename T>
SDFC_HD std::int64_t ifloor(T x) {
  return static_cast<std::int64_t>(sdfc::rt::floor(x));
}

/// 1 for positive arguments, 0 otherwise.
template <typename T>
SDFC_HD T heaviside(T x) {
  return x > T(0) ? T(1) : T(0);
}

constexpr double pi = 3.14159265358979323846;

}  // namespace math
}  // namespace dace
