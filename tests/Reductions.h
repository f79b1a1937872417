// The program of tests/codegen/{cpu,cuda}/reduce_in_map.sdfg (two Reduce library nodes in a map:
// row sums of a float64 matrix and row maxima of an int32 one), run end to end on the CPU
// (e2e/ApiTest) and the GPU (e2e/GpuCorpusTest).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "sdfc/sdfc.h"

namespace sdfc::test {

/// Runs `p` through `call` with N = 9 and checks B (row sums of A) and C (row maxima of I).
/// Returns false when `call` could not run the program (no GPU).
template <class Call>
bool check_reductions(Program& p, Call call) {
  const int n = 9;
  std::vector<double> a(n * 4), b(n, -1.0);
  std::vector<std::int32_t> m(n * 4), c(n, -1);
  for (int k = 0; k < n * 4; ++k) {
    a[static_cast<std::size_t>(k)] = 0.25 * k - 3.0;
    m[static_cast<std::size_t>(k)] = (k * 37) % 23 - 11;
  }
  p.set_array("A", a.data(), a.size());
  p.set_array("B", b.data(), b.size());
  p.set_array("I", m.data(), m.size());
  p.set_array("C", c.data(), c.size());
  p.set_value("N", n);
  if (!call(p)) return false;
  for (int i = 0; i < n; ++i) {
    double sum = 0;
    std::int32_t mx = INT32_MIN;
    for (int j = 0; j < 4; ++j) {
      sum += a[static_cast<std::size_t>(i * 4 + j)];
      mx = std::max(mx, m[static_cast<std::size_t>(i * 4 + j)]);
    }
    EXPECT_EQ(b[static_cast<std::size_t>(i)], sum) << "B[" << i << "]";
    EXPECT_EQ(c[static_cast<std::size_t>(i)], mx) << "C[" << i << "]";
  }
  return true;
}

}  // namespace sdfc::test
