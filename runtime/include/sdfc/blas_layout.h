// How sdfc's vendor BLAS calls (`--blas vendor`, expand-library-nodes) read their operands: one
// layout rule for the host (CBLAS) and the GPU (cuBLAS). Header-only, no BLAS needed.
//
// The expansion passes each matrix as a pointer, its extents as stored (rows, cols: before the
// operation's transpose) and its two strides in elements. A matrix one of whose strides is 1 is
// row-major (stride of cols 1, leading dimension the row stride) or column-major (stride of rows
// 1, leading dimension the column stride); anything else has no BLAS form, and the expansion
// keeps those operands to the pure expansion, so the check here is a last line of defence. The
// BLAS call runs in the layout of the output C: an operand of the other layout is the transpose
// of what BLAS sees, so its transpose flag flips.
#pragma once

#include <cstdint>
#include <cstdio>
#include <limits>

#include "sdfc/program.h"

namespace sdfc {
namespace blas {

/// One matrix as BLAS takes it: its leading dimension and whether it is stored column-major.
struct Layout {
  std::int64_t ld = 1;
  bool col_major = false;
};

/// Throws SizeError (recorded as the call's error) for a matrix no BLAS layout describes.
[[noreturn]] inline void refuse(const char* what, const char* operand, std::int64_t rows, std::int64_t cols,
                                std::int64_t s0, std::int64_t s1) {
  char message[384];
  std::snprintf(message, sizeof message,
                "%s: operand %s (%lld x %lld, strides %lld and %lld) has no BLAS layout (one stride must be 1 and "
                "the other at least the extent it steps over); compile with --blas pure",
                what, operand, static_cast<long long>(rows), static_cast<long long>(cols), static_cast<long long>(s0),
                static_cast<long long>(s1));
  throw rt::SizeError(message);
}

/// The layout of a rows x cols matrix with strides s0 (between rows) and s1 (between columns).
/// Row-major is preferred where both fit (one row or one column).
inline Layout layout(const char* what, const char* operand, std::int64_t rows, std::int64_t cols, std::int64_t s0,
                     std::int64_t s1) {
  auto at_least = [](std::int64_t ld, std::int64_t extent) { return ld >= (extent > 1 ? extent : 1); };
  if ((s1 == 1 || cols <= 1) && (rows <= 1 || at_least(s0, cols)))
    return {rows <= 1 ? (cols > 1 ? cols : 1) : s0, false};
  if ((s0 == 1 || rows <= 1) && (cols <= 1 || at_least(s1, rows)))
    return {cols <= 1 ? (rows > 1 ? rows : 1) : s1, true};
  refuse(what, operand, rows, cols, s0, s1);
}

/// `v` as BLAS's 32-bit int; throws SizeError when it does not fit.
inline int blas_int(const char* what, std::int64_t v) {
  if (v < 0 || v > std::numeric_limits<int>::max()) {
    char message[256];
    std::snprintf(message, sizeof message, "%s: size or stride %lld does not fit BLAS's 32-bit integers", what,
                  static_cast<long long>(v));
    throw rt::SizeError(message);
  }
  return static_cast<int>(v);
}

}  // namespace blas
}  // namespace sdfc
