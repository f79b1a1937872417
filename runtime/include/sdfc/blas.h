// The host side of `--blas vendor`: the calls expand-library-nodes writes for Gemm and Gemv
// outside map scopes on host data, over CBLAS (Debian's libblas-dev: the reference BLAS, or
// OpenBLAS where it is installed as the libblas alternative). Generated code includes it only when
// the program makes such a call and links -lblas then. Header-only.
//
// Semantics are the pure expansion's: C = alpha * op(A) @ op(B) + beta * C (beta = 0 does not read
// C), y = alpha * op(A) @ x + beta * y; float and double. Layouts: sdfc/blas_layout.h.
#pragma once

#include <cblas.h>

#include <cstdint>
#include <type_traits>

#include "sdfc/blas_layout.h"

namespace sdfc {
namespace blas {

/// C (m x n) = alpha * op(A) @ op(B) + beta * C; A is stored (ta ? k x m : m x k), B (tb ? n x k : k x n).
template <typename T>
inline void gemm(const char* what, bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, T alpha,
                 const T* a, std::int64_t a0, std::int64_t a1, const T* b, std::int64_t b0, std::int64_t b1, T beta,
                 T* c, std::int64_t c0, std::int64_t c1) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "BLAS calls take float or double");
  if (m <= 0 || n <= 0) return;
  Layout lc = layout(what, "C", m, n, c0, c1);
  Layout la = layout(what, "A", ta ? k : m, ta ? m : k, a0, a1);
  Layout lb = layout(what, "B", tb ? n : k, tb ? k : n, b0, b1);
  CBLAS_ORDER order = lc.col_major ? CblasColMajor : CblasRowMajor;
  auto op = [&](bool t, const Layout& l) { return (t != (l.col_major != lc.col_major)) ? CblasTrans : CblasNoTrans; };
  int im = blas_int(what, m), in = blas_int(what, n), ik = blas_int(what, k);
  int lda = blas_int(what, la.ld), ldb = blas_int(what, lb.ld), ldc = blas_int(what, lc.ld);
  if constexpr (std::is_same_v<T, double>)
    cblas_dgemm(order, op(ta, la), op(tb, lb), im, in, ik, alpha, a, lda, b, ldb, beta, c, ldc);
  else
    cblas_sgemm(order, op(ta, la), op(tb, lb), im, in, ik, alpha, a, lda, b, ldb, beta, c, ldc);
}

/// y (rows of op(A)) = alpha * op(A) @ x + beta * y; A is stored rows x cols, strides a0, a1.
template <typename T>
inline void gemv(const char* what, bool ta, std::int64_t rows, std::int64_t cols, T alpha, const T* a, std::int64_t a0,
                 std::int64_t a1, const T* x, std::int64_t incx, T beta, T* y, std::int64_t incy) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "BLAS calls take float or double");
  if ((ta ? cols : rows) <= 0) return;
  Layout la = layout(what, "A", rows, cols, a0, a1);
  CBLAS_ORDER order = la.col_major ? CblasColMajor : CblasRowMajor;
  CBLAS_TRANSPOSE op = ta ? CblasTrans : CblasNoTrans;
  int ir = blas_int(what, rows), ic = blas_int(what, cols), lda = blas_int(what, la.ld);
  if (incx < 1 || incy < 1) refuse(what, incx < 1 ? "x" : "y", 1, 1, incx, incy);
  int ix = blas_int(what, incx), iy = blas_int(what, incy);
  if constexpr (std::is_same_v<T, double>)
    cblas_dgemv(order, op, ir, ic, alpha, a, lda, x, ix, beta, y, iy);
  else
    cblas_sgemv(order, op, ir, ic, alpha, a, lda, x, ix, beta, y, iy);
}

}  // namespace blas
}  // namespace sdfc
