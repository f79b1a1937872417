// The host side of DaCe's linear-algebra library nodes Inv, Solve and Cholesky (numpy.linalg.inv,
// solve and cholesky), which DaCe computes with LAPACK (getrf + getri, getrf + getrs, potrf): the
// same algorithms, written out: LU factorization with partial pivoting (the pivot row chosen by
// LAPACK's measure, |re| + |im|), then the inverse column by column or the solution by forward and
// back substitution; Cholesky by columns (L L^T, or L L^H for complex matrices). The calls
// expand-library-nodes writes include it; header-only; float, double and sdfc's complex types.
//
// Matrices are given by their first element and their two element strides (any layout). A
// singular matrix (an exact zero pivot) or one that is not positive definite throws
// sdfc::rt::SizeError, which the exported entry point records as the call's error (numpy raises
// LinAlgError there; LAPACK would return a garbage result with an info code DaCe does not read).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <type_traits>
#include <vector>

#include "sdfc/program.h"

namespace sdfc {
namespace linalg {

namespace detail {

/// LAPACK's pivot measure: |x| for real values, |re| + |im| for complex ones.
template <typename T>
inline double magnitude(const T& x) {
  if constexpr (std::is_arithmetic_v<T>)
    return std::abs(static_cast<double>(x));
  else
    return std::abs(static_cast<double>(x.real())) + std::abs(static_cast<double>(x.imag()));
}

template <typename T>
inline T conjugate(const T& x) {
  if constexpr (std::is_arithmetic_v<T>)
    return x;
  else
    return T(x.real(), -x.imag());
}

[[noreturn]] inline void fail(const char* what, const char* problem, std::int64_t column) {
  char message[256];
  std::snprintf(message, sizeof message, "%s: %s (column %lld)", what, problem, static_cast<long long>(column));
  throw sdfc::rt::SizeError(message);
}

/// The n x n matrix at `a` (strides a0, a1) factored in place in `lu` (row-major, n x n) as
/// P A = L U, with `perm[i]` the row of A that row i of the factors holds.
template <typename T>
inline void lu(const char* what, std::int64_t n, const T* a, std::int64_t a0, std::int64_t a1, std::vector<T>& lu,
               std::vector<std::int64_t>& perm) {
  lu.resize(static_cast<std::size_t>(n * n));
  perm.resize(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    perm[i] = i;
    for (std::int64_t j = 0; j < n; ++j) lu[i * n + j] = a[i * a0 + j * a1];
  }
  for (std::int64_t k = 0; k < n; ++k) {
    std::int64_t p = k;
    for (std::int64_t i = k + 1; i < n; ++i)
      if (magnitude(lu[i * n + k]) > magnitude(lu[p * n + k])) p = i;
    if (magnitude(lu[p * n + k]) == 0) fail(what, "the matrix is singular", k);
    if (p != k) {
      for (std::int64_t j = 0; j < n; ++j) std::swap(lu[k * n + j], lu[p * n + j]);
      std::swap(perm[k], perm[p]);
    }
    for (std::int64_t i = k + 1; i < n; ++i) {
      T f = lu[i * n + k] / lu[k * n + k];
      lu[i * n + k] = f;
      for (std::int64_t j = k + 1; j < n; ++j) lu[i * n + j] -= f * lu[k * n + j];
    }
  }
}

/// Solves L U x = b in place (`x`, n values of stride xs) with the unit lower and upper factors.
template <typename T>
inline void substitute(std::int64_t n, const std::vector<T>& lu, T* x, std::int64_t xs) {
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < i; ++j) x[i * xs] -= lu[i * n + j] * x[j * xs];
  for (std::int64_t i = n - 1; i >= 0; --i) {
    for (std::int64_t j = i + 1; j < n; ++j) x[i * xs] -= lu[i * n + j] * x[j * xs];
    x[i * xs] /= lu[i * n + i];
  }
}

}  // namespace detail

/// out (n x n) = inverse of a (n x n). `out` may be `a` itself (DaCe's overwrite_a).
template <typename T>
inline void inv(const char* what, std::int64_t n, const T* a, std::int64_t a0, std::int64_t a1, T* out, std::int64_t o0,
                std::int64_t o1) {
  if (n <= 0) return;
  std::vector<T> lu;
  std::vector<std::int64_t> perm;
  detail::lu(what, n, a, a0, a1, lu, perm);
  std::vector<T> column(static_cast<std::size_t>(n));
  for (std::int64_t j = 0; j < n; ++j) {  // column j of the inverse solves A x = e_j
    for (std::int64_t i = 0; i < n; ++i) column[i] = T(perm[i] == j ? 1 : 0);
    detail::substitute(n, lu, column.data(), 1);
    for (std::int64_t i = 0; i < n; ++i) out[i * o0 + j * o1] = column[i];
  }
}

/// x (n x m) = the solution of a (n x n) x = b (n x m); a vector is m = 1 (any strides).
template <typename T>
inline void solve(const char* what, std::int64_t n, std::int64_t m, const T* a, std::int64_t a0, std::int64_t a1,
                  const T* b, std::int64_t b0, std::int64_t b1, T* x, std::int64_t x0, std::int64_t x1) {
  if (n <= 0 || m <= 0) return;
  std::vector<T> lu;
  std::vector<std::int64_t> perm;
  detail::lu(what, n, a, a0, a1, lu, perm);
  std::vector<T> column(static_cast<std::size_t>(n));
  for (std::int64_t j = 0; j < m; ++j) {
    for (std::int64_t i = 0; i < n; ++i) column[i] = b[perm[i] * b0 + j * b1];
    detail::substitute(n, lu, column.data(), 1);
    for (std::int64_t i = 0; i < n; ++i) x[i * x0 + j * x1] = column[i];
  }
}

/// out (n x n) = the Cholesky factor of a (n x n, Hermitian positive definite; its lower triangle
/// is read): lower, a = L L^H, zeros above the diagonal (numpy.linalg.cholesky); or upper (lower
/// false), a = U^H U, zeros below. `out` may be `a` itself.
template <typename T>
inline void cholesky(const char* what, std::int64_t n, const T* a, std::int64_t a0, std::int64_t a1, T* out,
                     std::int64_t o0, std::int64_t o1, bool lower) {
  if (n <= 0) return;
  std::vector<T> l(static_cast<std::size_t>(n * n), T(0));
  for (std::int64_t j = 0; j < n; ++j) {
    T diag = a[j * a0 + j * a1];
    for (std::int64_t k = 0; k < j; ++k) diag -= l[j * n + k] * detail::conjugate(l[j * n + k]);
    double real_diag;
    if constexpr (std::is_arithmetic_v<T>)
      real_diag = static_cast<double>(diag);
    else
      real_diag = static_cast<double>(diag.real());
    if (!(real_diag > 0)) detail::fail(what, "the matrix is not positive definite", j);
    T root = T(std::sqrt(real_diag));
    l[j * n + j] = root;
    for (std::int64_t i = j + 1; i < n; ++i) {
      T s = a[i * a0 + j * a1];
      for (std::int64_t k = 0; k < j; ++k) s -= l[i * n + k] * detail::conjugate(l[j * n + k]);
      l[i * n + j] = s / root;
    }
  }
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j) out[i * o0 + j * o1] = lower ? l[i * n + j] : detail::conjugate(l[j * n + i]);
}

}  // namespace linalg
}  // namespace sdfc
