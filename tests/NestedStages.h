// Programs with transients in nested SDFGs, for the tests of the memory modes: the pass's own
// (passes/TransientLifetimesTest) and end to end on the CPU (e2e/ApiTest) and the GPU
// (e2e/GpuCorpusTest).
#pragma once

#include <map>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "ir/Builder.h"
#include "ir/JsonWriter.h"
#include "sdfc/sdfc.h"

namespace sdfc::test {

/// A nested SDFG `name` with symbol `sym`: dst = src * 2 + 3 through the transient tmp (shape
/// [sym] unless `tmp_extent` says otherwise), written in one state and read in the next.
inline std::unique_ptr<SDFG> twice_plus_three(const std::string& name, const std::string& sym,
                                              StorageType storage = StorageType::Default,
                                              ScheduleType schedule = ScheduleType::Default,
                                              const std::string& tmp_extent = "") {
  SDFGBuilder b(name);
  b.symbol(sym)
      .array("src", DType::Float64, {sym}, false, storage)
      .array("dst", DType::Float64, {sym}, false, storage)
      .array("tmp", DType::Float64, {tmp_extent.empty() ? sym : tmp_extent}, true, storage);
  b.state("first").mapped_tasklet("twice", {{"i", "0:" + sym}}, {{"a", "src[i]"}}, "b = a * 2", {{"b", "tmp[i]"}},
                                  schedule);
  b.state("second").mapped_tasklet("plus3", {{"i", "0:" + sym}}, {{"a", "tmp[i]"}}, "b = a + 3", {{"b", "dst[i]"}},
                                   schedule);
  b.chain();
  return b.build();
}

/// `outer_src[subset]` -> nested `inner` (src, dst) -> `outer_dst[subset]` in state `st`, outside
/// maps; returns the nested SDFG node.
inline int call_nested(StateBuilder& st, std::unique_ptr<SDFG> inner, const std::map<std::string, std::string>& mapping,
                       const std::string& outer_src, const std::string& outer_dst, const std::string& subset) {
  int x = st.nested(std::move(inner), {"src"}, {"dst"}, mapping);
  st.edge(st.access(outer_src), "", x, "src", outer_src, subset);
  st.edge(x, "dst", st.access(outer_dst), "", outer_dst, subset);
  return x;
}

/// y = ((x + 1) * 2) + 3 through "mid" (M = N; its transient t = x + 1 feeds "leaf", K = M), then
/// z[1:N-1] = y[1:N-1] * 2 + 3 through "inner" (L = N - 2). With `gpu`, the arguments stay on
/// the host, copied to and from GPU transients, and every nested container and map is on the GPU.
inline std::string nested_stages_json(bool gpu) {
  StorageType storage = gpu ? StorageType::GPU_Global : StorageType::Default;
  ScheduleType schedule = gpu ? ScheduleType::GPU_Device : ScheduleType::Default;
  SDFGBuilder mid("mid");
  mid.symbol("M")
      .array("src", DType::Float64, {"M"}, false, storage)
      .array("dst", DType::Float64, {"M"}, false, storage)
      .array("t", DType::Float64, {"M"}, true, storage);
  mid.state("plus1").mapped_tasklet("plus1", {{"i", "0:M"}}, {{"a", "src[i]"}}, "b = a + 1", {{"b", "t[i]"}}, schedule);
  auto ms = mid.state("call_leaf");
  call_nested(ms, twice_plus_three("leaf", "K", storage, schedule), {{"K", "M"}}, "t", "dst", "0:M");
  mid.chain();
  SDFGBuilder b(gpu ? "nested_stages_gpu" : "nested_stages");
  b.symbol("N").array("x", DType::Float64, {"N"}).array("y", DType::Float64, {"N"}).array("z", DType::Float64, {"N"});
  std::string x = "x", y = "y", z = "z";
  if (gpu) {
    x = "gx", y = "gy", z = "gz";
    for (auto& g : {x, y, z}) b.array(g, DType::Float64, {"N"}, true, StorageType::GPU_Global);
    auto in = b.state("copy_in");
    in.copy(in.access("x"), in.access(x), "0:N", "0:N");
    in.copy(in.access("z"), in.access(z), "0:N", "0:N");
  }
  auto s0 = b.state("first");
  call_nested(s0, mid.build(), {{"M", "N"}}, x, y, "0:N");
  auto s1 = b.state("second");
  call_nested(s1, twice_plus_three("inner", "L", storage, schedule), {{"L", "N - 2"}}, y, z, "1:N - 1");
  if (gpu) {
    auto out = b.state("copy_out");
    out.copy(out.access(y), out.access("y"), "0:N", "0:N");
    out.copy(out.access(z), out.access("z"), "0:N", "0:N");
  }
  b.chain();
  return write_sdfg(*b.build());
}

/// Calls it with x = i + 0.5, y = -1 and z = -7; returns y followed by z.
inline std::vector<double> run_nested_stages(Program& p, int n) {
  std::vector<double> x(static_cast<std::size_t>(n)), y(x.size(), -1.0), z(x.size(), -7.0);
  std::iota(x.begin(), x.end(), 0.5);
  p.set_array("x", x.data(), x.size());
  p.set_array("y", y.data(), y.size());
  p.set_array("z", z.data(), z.size());
  p.set_value("N", n);
  p.call();
  y.insert(y.end(), z.begin(), z.end());
  return y;
}

/// What run_nested_stages returns (exact: every value is a small multiple of 0.5).
inline std::vector<double> nested_stages_expected(int n) {
  std::vector<double> out(2 * static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    double y = (i + 0.5 + 1) * 2 + 3;
    out[static_cast<std::size_t>(i)] = y;
    out[static_cast<std::size_t>(n + i)] = i == 0 || i == n - 1 ? -7.0 : y * 2 + 3;
  }
  return out;
}

}  // namespace sdfc::test
