// The GPU side of `--blas vendor`: the calls expand-library-nodes writes for Gemm and Gemv outside
// map scopes on GPU data, over cuBLAS, each on the stream stream-assignment gave its node (the
// synchronization pass orders it against the other streams with events, as a kernel). CUDA only:
// Debian has no hipBLAS, so the HIP target refuses --blas vendor for GPU data. Generated code
// includes this header (after sdfc/gpu.h) only when the program makes such a call, and links
// cuBLAS then.
//
// Each program instance owns one handle (the `BlasHandle` member of its state), created at the
// first call on the instance's device and destroyed by __dace_exit before the streams. Pointer
// mode host: alpha and beta are host values. Semantics and layouts as sdfc/blas.h (column-major
// cuBLAS computes a row-major C as C^T = op(B)^T @ op(A)^T).
#pragma once

#include <cublas_v2.h>

#include <cstdint>
#include <type_traits>

#include "sdfc/blas_layout.h"
#include "sdfc/gpu.h"

#pragma GCC visibility push(hidden)

namespace sdfc {
namespace gpu {
inline namespace SDFC_GPU_ABI_NAMESPACE {

struct BlasHandle {
  cublasHandle_t handle = nullptr;
};

/// Records a failed cuBLAS call as the context's error; false then.
inline bool blas_check(Context& ctx, cublasStatus_t status, const char* what, const char* call) {
  if (status == CUBLAS_STATUS_SUCCESS) return true;
  char message[384];
  std::snprintf(message, sizeof message, "%s: %s failed: %s (cuBLAS status %d)", what, call,
                cublasGetStatusString(status), static_cast<int>(status));
  record_message(ctx, kInvalidValue, message);
  return false;
}

/// The instance's handle, created on first use, set to `stream`; null after a failure (recorded).
inline cublasHandle_t blas_handle(Context& ctx, BlasHandle& h, Stream stream, const char* what) {
  if (!h.handle && !blas_check(ctx, cublasCreate(&h.handle), what, "cublasCreate")) return nullptr;
  if (!blas_check(ctx, cublasSetStream(h.handle, stream), what, "cublasSetStream")) return nullptr;
  return h.handle;
}

inline void blas_destroy(BlasHandle& h) {
  if (h.handle) (void)cublasDestroy(h.handle);
  h.handle = nullptr;
}

/// C (m x n) = alpha * op(A) @ op(B) + beta * C on `stream`; arguments as sdfc::blas::gemm.
template <typename T>
inline void blas_gemm(Context& ctx, BlasHandle& h, Stream stream, const char* what, bool ta, bool tb, std::int64_t m,
                      std::int64_t n, std::int64_t k, T alpha, const T* a, std::int64_t a0, std::int64_t a1, const T* b,
                      std::int64_t b0, std::int64_t b1, T beta, T* c, std::int64_t c0, std::int64_t c1) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "BLAS calls take float or double");
  if (m <= 0 || n <= 0) return;
  using blas::Layout;
  Layout lc = blas::layout(what, "C", m, n, c0, c1);
  Layout la = blas::layout(what, "A", ta ? k : m, ta ? m : k, a0, a1);
  Layout lb = blas::layout(what, "B", tb ? n : k, tb ? k : n, b0, b1);
  // Column-major: a column-major C is op(A) @ op(B); a row-major C is seen as C^T = op(B)^T @ op(A)^T.
  // Either way an operand whose layout differs from C's flips its transpose.
  auto op = [&](bool t, const Layout& l) { return (t != (l.col_major != lc.col_major)) ? CUBLAS_OP_T : CUBLAS_OP_N; };
  int im = blas::blas_int(what, m), in = blas::blas_int(what, n), ik = blas::blas_int(what, k);
  int lda = blas::blas_int(what, la.ld), ldb = blas::blas_int(what, lb.ld), ldc = blas::blas_int(what, lc.ld);
  cublasHandle_t hd = blas_handle(ctx, h, stream, what);
  if (!hd) return;
  cublasStatus_t s;
  if constexpr (std::is_same_v<T, double>)
    s = lc.col_major ? cublasDgemm(hd, op(ta, la), op(tb, lb), im, in, ik, &alpha, a, lda, b, ldb, &beta, c, ldc)
                     : cublasDgemm(hd, op(tb, lb), op(ta, la), in, im, ik, &alpha, b, ldb, a, lda, &beta, c, ldc);
  else
    s = lc.col_major ? cublasSgemm(hd, op(ta, la), op(tb, lb), im, in, ik, &alpha, a, lda, b, ldb, &beta, c, ldc)
                     : cublasSgemm(hd, op(tb, lb), op(ta, la), in, im, ik, &alpha, b, ldb, a, lda, &beta, c, ldc);
  blas_check(ctx, s, what, "cublas<t>gemm");
}

/// y = alpha * op(A) @ x + beta * y on `stream`; arguments as sdfc::blas::gemv.
template <typename T>
inline void blas_gemv(Context& ctx, BlasHandle& h, Stream stream, const char* what, bool ta, std::int64_t rows,
                      std::int64_t cols, T alpha, const T* a, std::int64_t a0, std::int64_t a1, const T* x,
                      std::int64_t incx, T beta, T* y, std::int64_t incy) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "BLAS calls take float or double");
  if ((ta ? cols : rows) <= 0) return;
  blas::Layout la = blas::layout(what, "A", rows, cols, a0, a1);
  if (incx < 1 || incy < 1) blas::refuse(what, incx < 1 ? "x" : "y", 1, 1, incx, incy);
  // A row-major A is seen column-major as A^T (cols x rows): its transpose flips.
  int r = blas::blas_int(what, la.col_major ? rows : cols), c = blas::blas_int(what, la.col_major ? cols : rows);
  cublasOperation_t op = (ta != !la.col_major) ? CUBLAS_OP_T : CUBLAS_OP_N;
  int lda = blas::blas_int(what, la.ld), ix = blas::blas_int(what, incx), iy = blas::blas_int(what, incy);
  cublasHandle_t hd = blas_handle(ctx, h, stream, what);
  if (!hd) return;
  cublasStatus_t s;
  if constexpr (std::is_same_v<T, double>)
    s = cublasDgemv(hd, op, r, c, &alpha, a, lda, x, ix, &beta, y, iy);
  else
    s = cublasSgemv(hd, op, r, c, &alpha, a, lda, x, ix, &beta, y, iy);
  blas_check(ctx, s, what, "cublas<t>gemv");
}

}  // namespace SDFC_GPU_ABI_NAMESPACE
}  // namespace gpu
}  // namespace sdfc

#pragma GCC visibility pop
