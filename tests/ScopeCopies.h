// The programs of tests/codegen/{cpu,cuda}/scope_copy_*.sdfg (copies into and out of map scopes
// with no tasklet in between, issue 12), run end to end on the CPU (e2e/ApiTest) and the GPU
// (e2e/GpuCorpusTest): each computes values only through the copy under test, so a dropped copy
// leaves the outputs at their initial values and fails.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sdfc/sdfc.h"

namespace sdfc::test {

inline const std::vector<std::string>& scope_copy_programs() {
  static const std::vector<std::string> names = {"scope_copy_out", "scope_copy_in", "scope_copy_slice",
                                                 "scope_copy_wcr", "scope_copy_nested"};
  return names;
}

/// Runs program `name` (compiled as `p`) through `call` with N = 7 and checks its outputs.
/// Returns false when `call` could not run the program (no GPU).
template <class Call>
bool check_scope_copy(Program& p, const std::string& name, Call call) {
  const int n = 7;
  const int cols = name == "scope_copy_slice" ? 4 : name == "scope_copy_nested" ? 3 : 1;
  std::vector<double> a(static_cast<std::size_t>(n * cols)), b(a.size(), -1.0), total = {1.5};
  for (std::size_t k = 0; k < a.size(); ++k) a[k] = 0.5 + static_cast<double>(k);
  p.set_array("A", a.data(), a.size());
  if (name == "scope_copy_wcr")
    p.set_array("total", total.data(), total.size());
  else
    p.set_array("B", b.data(), b.size());
  p.set_value("N", n);
  if (!call(p)) return false;
  if (name == "scope_copy_wcr") {
    double want = 1.5;
    for (double x : a) want += x * x;
    EXPECT_DOUBLE_EQ(total[0], want);
    return true;
  }
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < cols; ++j) {
      std::size_t k = static_cast<std::size_t>(i * cols + j);
      double want = name == "scope_copy_out"     ? 2.0 * a[k]
                    : name == "scope_copy_in"    ? a[k] + 1.0
                    : name == "scope_copy_slice" ? a[k]
                                                 : -a[k] + j;
      EXPECT_EQ(b[k], want) << name << ": B[" << i << ", " << j << "]";
    }
  return true;
}

}  // namespace sdfc::test
