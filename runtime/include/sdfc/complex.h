// Complex numbers for generated code: `sdfc::rt::complex<T>` (dace::complex64 / dace::complex128),
// one type on the host and in CUDA and HIP kernels, laid out as std::complex<T> and numpy's
// complex (re, im interleaved), so buffers pass between them unchanged. Python's semantics:
// mixed arithmetic with real numbers, `abs` is the hypotenuse, `**` with integer exponents by
// repeated multiplication (as CPython does for small integers), comparisons only for equality.
#pragma once

#include <cmath>
#include <complex>
#include <type_traits>

#if defined(__CUDACC__) || defined(__HIPCC__)
#define SDFC_CHD __host__ __device__ inline constexpr
#define SDFC_CHD_NC __host__ __device__ inline
#else
#define SDFC_CHD inline constexpr
#define SDFC_CHD_NC inline
#endif

namespace sdfc {
namespace rt {

template <typename T>
struct complex {
  static_assert(std::is_floating_point_v<T>, "complex of a floating-point type");
  using value_type = T;
  T re{}, im{};

  complex() = default;  // host and device (defaulted)
  template <typename R, typename = std::enable_if_t<std::is_arithmetic_v<R>>>
  SDFC_CHD complex(R r, T i = T(0)) : re(static_cast<T>(r)), im(i) {}
  template <typename U>
  SDFC_CHD complex(const complex<U>& z) : re(static_cast<T>(z.re)), im(static_cast<T>(z.im)) {}
  // Host code interoperates with std::complex (C++ tasklets written for DaCe's CPU runtime).
  complex(const std::complex<T>& z) : re(z.real()), im(z.imag()) {}
  operator std::complex<T>() const { return {re, im}; }

  SDFC_CHD T real() const { return re; }
  SDFC_CHD T imag() const { return im; }
  SDFC_CHD complex conj() const { return {re, -im}; }

  SDFC_CHD complex& operator+=(const complex& o) {
    re += o.re;
    im += o.im;
    return *this;
  }
  SDFC_CHD complex& operator-=(const complex& o) {
    re -= o.re;
    im -= o.im;
    return *this;
  }
  SDFC_CHD complex& operator*=(const complex& o) { return *this = *this * o; }
  SDFC_CHD_NC complex& operator/=(const complex& o) { return *this = *this / o; }

  friend SDFC_CHD complex operator+(const complex& a) { return a; }
  friend SDFC_CHD complex operator-(const complex& a) { return {-a.re, -a.im}; }
  friend SDFC_CHD complex operator+(const complex& a, const complex& b) { return {a.re + b.re, a.im + b.im}; }
  friend SDFC_CHD complex operator-(const complex& a, const complex& b) { return {a.re - b.re, a.im - b.im}; }
  friend SDFC_CHD complex operator*(const complex& a, const complex& b) {
    return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
  }
  /// Smith's algorithm, as CPython and numpy divide.
  friend SDFC_CHD_NC complex operator/(const complex& a, const complex& b) {
    T abs_re = b.re < 0 ? -b.re : b.re, abs_im = b.im < 0 ? -b.im : b.im;
    if (abs_re >= abs_im) {
      if (abs_re == 0) return {a.re / abs_re, a.im / abs_re};  // inf or nan, as numpy
      T ratio = b.im / b.re, den = b.re + b.im * ratio;
      return {(a.re + a.im * ratio) / den, (a.im - a.re * ratio) / den};
    }
    T ratio = b.re / b.im, den = b.re * ratio + b.im;
    return {(a.re * ratio + a.im) / den, (a.im * ratio - a.re) / den};
  }
  friend SDFC_CHD bool operator==(const complex& a, const complex& b) { return a.re == b.re && a.im == b.im; }
  friend SDFC_CHD bool operator!=(const complex& a, const complex& b) { return !(a == b); }
};

/// The complex type of a mixed operation: complex64 only when every operand is at most 32 bits
/// wide (numpy's promotion; Python floats are float64).
template <typename T>
struct complex_of {
  using type = complex<std::conditional_t<(sizeof(T) <= 4 && std::is_floating_point_v<T>), float, double>>;
};
template <typename T>
struct complex_of<complex<T>> {
  using type = complex<T>;
};
template <typename A, typename B>
using complex_common_t =
    complex<std::common_type_t<typename complex_of<A>::type::value_type, typename complex_of<B>::type::value_type>>;

template <typename T>
struct is_complex : std::false_type {};
template <typename T>
struct is_complex<complex<T>> : std::true_type {};
template <typename A, typename B>
constexpr bool any_complex_v = is_complex<A>::value || is_complex<B>::value;

#define SDFC_COMPLEX_MIXED(op)                                                                                   \
  template <typename A, typename B,                                                                              \
            typename = std::enable_if_t<any_complex_v<A, B> && !(is_complex<A>::value && is_complex<B>::value)>> \
  SDFC_CHD_NC auto operator op(const A& a, const B& b) {                                                         \
    using C = complex_common_t<A, B>;                                                                            \
    return C(a) op C(b);                                                                                         \
  }
SDFC_COMPLEX_MIXED(+)
SDFC_COMPLEX_MIXED(-)
SDFC_COMPLEX_MIXED(*)
SDFC_COMPLEX_MIXED(/)
#undef SDFC_COMPLEX_MIXED

template <typename T>
SDFC_CHD_NC T abs(const complex<T>& z) {
  return std::hypot(z.re, z.im);
}
template <typename T>
SDFC_CHD T real(const complex<T>& z) {
  return z.re;
}
template <typename T>
SDFC_CHD T imag(const complex<T>& z) {
  return z.im;
}
template <typename T>
SDFC_CHD complex<T> conj(const complex<T>& z) {
  return z.conj();
}
template <typename T>
SDFC_CHD_NC T arg(const complex<T>& z) {
  return std::atan2(z.im, z.re);
}
template <typename T>
SDFC_CHD_NC complex<T> exp(const complex<T>& z) {
  T m = std::exp(z.re);
  return {m * std::cos(z.im), m * std::sin(z.im)};
}
template <typename T>
SDFC_CHD_NC complex<T> log(const complex<T>& z) {
  return {std::log(abs(z)), arg(z)};
}
/// NumPy's log10 and log2 of a complex number: log(z) / log(10), log(z) / log(2).
template <typename T>
SDFC_CHD_NC complex<T> log10(const complex<T>& z) {
  const T k = T(0.43429448190325182765);  // 1 / log(10)
  return {std::log(abs(z)) * k, arg(z) * k};
}
template <typename T>
SDFC_CHD_NC complex<T> log2(const complex<T>& z) {
  const T k = T(1.44269504088896340736);  // 1 / log(2)
  return {std::log(abs(z)) * k, arg(z) * k};
}
/// NumPy's reciprocal of a complex number: 1 / z.
template <typename T>
SDFC_CHD_NC complex<T> reciprocal(const complex<T>& z) {
  return complex<T>(T(1), T(0)) / z;
}
template <typename T>
SDFC_CHD_NC complex<T> sqrt(const complex<T>& z) {
  // The principal root, stable for either sign of the real part (Kahan).
  if (z.re == 0 && z.im == 0) return {T(0), z.im};
  T t = std::sqrt((std::fabs(z.re) + abs(z)) / 2);
  if (z.re >= 0) return {t, z.im / (2 * t)};
  return {std::fabs(z.im) / (2 * t), std::copysign(t, z.im)};
}
template <typename T>
SDFC_CHD_NC complex<T> sin(const complex<T>& z) {
  return {std::sin(z.re) * std::cosh(z.im), std::cos(z.re) * std::sinh(z.im)};
}
template <typename T>
SDFC_CHD_NC complex<T> cos(const complex<T>& z) {
  return {std::cos(z.re) * std::cosh(z.im), -std::sin(z.re) * std::sinh(z.im)};
}
template <typename T>
SDFC_CHD_NC complex<T> tan(const complex<T>& z) {
  return sin(z) / cos(z);
}
template <typename T>
SDFC_CHD_NC complex<T> sinh(const complex<T>& z) {
  return {std::sinh(z.re) * std::cos(z.im), std::cosh(z.re) * std::sin(z.im)};
}
template <typename T>
SDFC_CHD_NC complex<T> cosh(const complex<T>& z) {
  return {std::cosh(z.re) * std::cos(z.im), std::sinh(z.re) * std::sin(z.im)};
}
template <typename T>
SDFC_CHD_NC complex<T> tanh(const complex<T>& z) {
  return sinh(z) / cosh(z);
}
/// NumPy's exp2, expm1 and log1p of a complex number (numpy's npymath formulas: expm1 and log1p
/// keep their precision for small |z| in the real part).
template <typename T>
SDFC_CHD_NC complex<T> exp2(const complex<T>& z) {
  return exp(complex<T>(z.re * T(0.69314718055994530942), z.im * T(0.69314718055994530942)));
}
template <typename T>
SDFC_CHD_NC complex<T> expm1(const complex<T>& z) {
  T s = std::sin(z.im / 2);
  return {std::expm1(z.re) * std::cos(z.im) - 2 * s * s, std::exp(z.re) * std::sin(z.im)};
}
template <typename T>
SDFC_CHD_NC complex<T> log1p(const complex<T>& z) {
  return {std::log(std::hypot(z.re + 1, z.im)), std::atan2(z.im, z.re + 1)};
}
/// The inverse trigonometric and hyperbolic functions with C99's principal branches (NumPy's):
/// the host's std::complex functions; in kernels, their logarithmic forms.
template <typename T>
SDFC_CHD_NC complex<T> asinh(const complex<T>& z) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  // In the first quadrant, cut included, log(z + sqrt(z^2 + 1)) is C99's casinh; elsewhere its
  // symmetries (odd, and asinh(conj z) = conj(asinh z)) give the signs (the formula itself took
  // the wrong branch at 0 - 3i, where z^2 + 1 loses the sign of its zero imaginary part).
  complex<T> q(std::fabs(z.re), std::fabs(z.im));
  complex<T> w = log(q + sqrt(q * q + complex<T>(T(1))));
  return {std::copysign(w.re, z.re), std::copysign(w.im, z.im)};
#else
  return std::asinh(std::complex<T>(z.re, z.im));
#endif
}
template <typename T>
SDFC_CHD_NC complex<T> asin(const complex<T>& z) {  // -i asinh(i z)
  complex<T> w = asinh(complex<T>(-z.im, z.re));
  return {w.im, -w.re};
}
template <typename T>
SDFC_CHD_NC complex<T> acos(const complex<T>& z) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  complex<T> a = asin(z);
  return {T(1.57079632679489661923) - a.re, -a.im};
#else
  return std::acos(std::complex<T>(z.re, z.im));
#endif
}
template <typename T>
SDFC_CHD_NC complex<T> atanh(const complex<T>& z) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  complex<T> w = log1p(z) - log1p(-z);
  return {w.re / 2, w.im / 2};
#else
  return std::atanh(std::complex<T>(z.re, z.im));
#endif
}
template <typename T>
SDFC_CHD_NC complex<T> atan(const complex<T>& z) {  // -i atanh(i z)
  complex<T> w = atanh(complex<T>(-z.im, z.re));
  return {w.im, -w.re};
}
template <typename T>
SDFC_CHD_NC complex<T> acosh(const complex<T>& z) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  return log(z + sqrt(z + complex<T>(T(1))) * sqrt(z - complex<T>(T(1))));
#else
  return std::acosh(std::complex<T>(z.re, z.im));
#endif
}
/// NumPy's isnan, isinf and isfinite of a complex number: of either part, of both parts.
template <typename T>
SDFC_CHD_NC bool isnan(const complex<T>& z) {
  return std::isnan(z.re) || std::isnan(z.im);
}
template <typename T>
SDFC_CHD_NC bool isinf(const complex<T>& z) {
  return std::isinf(z.re) || std::isinf(z.im);
}
template <typename T>
SDFC_CHD_NC bool isfinite(const complex<T>& z) {
  return std::isfinite(z.re) && std::isfinite(z.im);
}
/// NumPy's rint / round of a complex number: each part to nearest, ties to even.
template <typename T>
SDFC_CHD_NC complex<T> round(const complex<T>& z) {
  return {std::nearbyint(z.re), std::nearbyint(z.im)};
}
/// NumPy 1's sign of a complex number: the sign of the real part, or of the imaginary part where
/// the real part is 0, as a complex number (NaN where either part is NaN).
template <typename T>
SDFC_CHD_NC complex<T> sign(const complex<T>& z) {
  if (z.re != z.re || z.im != z.im) return {T(NAN), T(0)};
  T s = z.re > 0 ? T(1) : z.re < 0 ? T(-1) : z.im > 0 ? T(1) : z.im < 0 ? T(-1) : T(0);
  return {s, T(0)};
}
/// NumPy 2's sign of a complex number: z / |z|, 0 for 0 (DaCe's `sign_numpy_2`).
template <typename T>
SDFC_CHD_NC complex<T> sign_numpy_2(const complex<T>& z) {
  if (z.re == 0 && z.im == 0) return {T(0), T(0)};
  T m = abs(z);
  return {z.re / m, z.im / m};
}
/// `z ** n` for an integer n: repeated squaring (CPython's method for |n| <= 100), else exp/log.
template <typename A, typename B, typename = std::enable_if_t<any_complex_v<A, B>>>
SDFC_CHD_NC auto complex_pow(const A& a, const B& b) {
  using C = complex_common_t<A, B>;
  if constexpr (std::is_integral_v<B>) {
    if (b >= -100 && b <= 100) {
      C base(a), r(1);
      long long n = b < 0 ? -static_cast<long long>(b) : static_cast<long long>(b);
      while (n) {
        if (n & 1) r = r * base;
        base = base * base;
        n >>= 1;
      }
      return b < 0 ? C(1) / r : r;
    }
  }
  C x(a), y(b);
  if (x.re == 0 && x.im == 0) return (y.re == 0 && y.im == 0) ? C(1) : C(0);
  return exp(y * log(x));
}

}  // namespace rt
}  // namespace sdfc
