// The program of tests/codegen/{cpu,cuda}/map_dynamic_range.sdfg (maps whose ranges come from
// dynamic map inputs), run end to end on the CPU (e2e/ApiTest) and the GPU (e2e/GpuCorpusTest).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "sdfc/sdfc.h"

namespace sdfc::test {

/// Runs `p` through `call` with N = 10, R = 4, cnt = 7 and lens = {0, 3, 10, 1}, and checks that
/// y[i] = x[i] * cnt for i < cnt only, and that row j of tri holds j * 100 + k + lens[j] in its
/// first lens[j] elements only. Returns false when `call` could not run the program (no GPU).
template <class Call>
bool check_dynamic_ranges(Program& p, Call call) {
  const std::int64_t n = 10, rows = 4, cnt = 7;
  std::vector<double> x(n), y(n, -1.0), tri(static_cast<std::size_t>(rows * n), -1.0);
  for (std::int64_t i = 0; i < n; ++i) x[static_cast<std::size_t>(i)] = 0.5 + static_cast<double>(i);
  std::vector<std::int64_t> lens = {0, 3, 10, 1};
  p.set_array("x", x.data(), x.size());
  p.set_array("y", y.data(), y.size());
  p.set_array("tri", tri.data(), tri.size());
  p.set_array("lens", lens.data(), lens.size());
  p.set_value("cnt", cnt);
  p.set_value("N", n);
  p.set_value("R", rows);
  if (!call(p)) return false;
  for (std::int64_t i = 0; i < n; ++i)
    EXPECT_EQ(y[static_cast<std::size_t>(i)], i < cnt ? x[static_cast<std::size_t>(i)] * cnt : -1.0)
        << "y[" << i << "]";
  for (std::int64_t j = 0; j < rows; ++j)
    for (std::int64_t k = 0; k < n; ++k) {
      std::int64_t len = lens[static_cast<std::size_t>(j)];
      EXPECT_EQ(tri[static_cast<std::size_t>(j * n + k)], k < len ? static_cast<double>(j * 100 + k + len) : -1.0)
          << "tri[" << j << ", " << k << "]";
    }
  return true;
}

}  // namespace sdfc::test
