// A program of DaCe's BLAS and linear-algebra library nodes (MatMul in each of its forms, Gemm,
// Gemv, Dot, Ger, BatchedMatMul, Transpose) on non-square symbolic sizes, with strided operands
// (a column, every other column) and an input C that is the output itself, which the
// expand-library-nodes pass turns into maps. Run end to end on the CPU (e2e/ApiTest) and, with
// every container on the GPU, compiled for CUDA and run where there is a GPU (e2e/GpuCorpusTest).
// The inputs are small integers, so every result is exact whatever the order of the sums.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "ir/Builder.h"
#include "ir/JsonWriter.h"
#include "sdfc/sdfc.h"

namespace sdfc::test {

namespace linalg {

constexpr int kN = 5, kK = 3, kM = 4;

/// The containers: name and shape (in N, K, M); the inputs first, then what the nodes write.
inline const std::vector<std::pair<std::string, std::vector<std::string>>>& containers() {
  static const std::vector<std::pair<std::string, std::vector<std::string>>> list = {
      {"A", {"N", "K"}},      {"B", {"K", "M"}},   {"v", {"K"}},   {"w", {"N"}},      {"Q", {"K", "2*M"}},
      {"S", {"2", "N", "K"}}, {"Cin", {"M", "N"}}, {"zin", {"K"}}, {"H", {"N", "M"}}, {"C1", {"N", "M"}},
      {"y1", {"N"}},          {"y2", {"M"}},       {"d1", {"1"}},  {"T", {"K", "N"}}, {"C2", {"N", "M"}},
      {"G", {"M", "N"}},      {"z", {"K"}},        {"dd", {"1"}},  {"R", {"N", "K"}}, {"Z", {"2", "N", "M"}},
  };
  return list;
}

inline std::size_t elements(const std::vector<std::string>& shape) {
  std::size_t n = 1;
  for (auto& d : shape) n *= d == "N" ? kN : d == "K" ? kK : d == "M" ? kM : d == "2*M" ? 2 * kM : std::stoul(d);
  return n;
}

}  // namespace linalg

/// The program; with `gpu` its arguments are copied to GPU transients, on which the library
/// nodes run outside any map (their maps become GPU kernels), and the results are copied back.
inline std::string linear_algebra_json(bool gpu) {
  using linalg::containers;
  SDFGBuilder b(gpu ? "linalg_nodes_gpu" : "linalg_nodes");
  b.symbol("N").symbol("K").symbol("M");
  auto full = [](const std::vector<std::string>& shape) {
    std::string s;
    for (auto& d : shape) s += (s.empty() ? "0:" : ", 0:") + d;
    return s;
  };
  for (auto& [name, shape] : containers()) b.array(name, DType::Float64, shape);
  auto g = [&](const std::string& name) { return gpu ? "g_" + name : name; };
  if (gpu) {
    for (auto& [name, shape] : containers()) b.array(g(name), DType::Float64, shape, true, StorageType::GPU_Global);
    auto in = b.state("copy_in");
    for (auto& [name, shape] : containers()) in.copy(in.access(name), in.access(g(name)), full(shape), full(shape));
  }
  // One library node per state: inputs (connector, data, subset) -> outputs.
  using Ends = std::vector<std::tuple<std::string, std::string, std::string>>;
  auto node = [&](const std::string& label, const std::string& cls, const Ends& ins, const Ends& outs,
                  const Json& props = Json::object()) {
    auto s = b.state(label);
    std::vector<std::string> ic, oc;
    for (auto& [c, d, sub] : ins) ic.push_back(c);
    for (auto& [c, d, sub] : outs) oc.push_back(c);
    int n = s.library(label, cls, ic, oc, props);
    for (auto& [c, d, sub] : ins) s.edge(s.access(g(d)), "", n, c, g(d), sub);
    for (auto& [c, d, sub] : outs) s.edge(n, c, s.access(g(d)), "", g(d), sub);
  };
  const std::string blas = "dace.libraries.blas.nodes.";
  const std::string matmul = blas + "matmul.MatMul";
  node("mm", matmul, {{"_a", "A", "0:N, 0:K"}, {"_b", "B", "0:K, 0:M"}}, {{"_c", "C1", "0:N, 0:M"}});
  node("mv", matmul, {{"_a", "A", "0:N, 0:K"}, {"_b", "v", "0:K"}}, {{"_c", "y1", "0:N"}});
  node("vm", matmul, {{"_a", "v", "0:K"}, {"_b", "B", "0:K, 0:M"}}, {{"_c", "y2", "0:M"}});
  node("vv", matmul, {{"_a", "v", "0:K"}, {"_b", "Q", "0:K, 2"}}, {{"_c", "d1", "0"}});
  node("mm_every_other_column", matmul, {{"_a", "A", "0:N, 0:K"}, {"_b", "Q", "0:K, 1:2*M:2"}},
       {{"_c", "C2", "0:N, 0:M"}});
  node("bmm", matmul, {{"_a", "S", "0:2, 0:N, 0:K"}, {"_b", "B", "0:K, 0:M"}}, {{"_c", "Z", "0:2, 0:N, 0:M"}});
  node("gemm_tt", blas + "gemm.Gemm", {{"_a", "B", "0:K, 0:M"}, {"_b", "A", "0:N, 0:K"}, {"_c", "Cin", "0:M, 0:N"}},
       {{"_c", "G", "0:M, 0:N"}}, Json{{"transA", true}, {"transB", true}, {"alpha", 2}, {"beta", 0.5}});
  node("gemm_inout", blas + "gemm.Gemm", {{"_a", "A", "0:N, 0:K"}, {"_b", "B", "0:K, 0:M"}, {"_c", "H", "0:N, 0:M"}},
       {{"_c", "H", "0:N, 0:M"}}, Json{{"alpha", 1}, {"beta", 2}});
  node("gemv_t", blas + "gemv.Gemv", {{"_A", "A", "0:N, 0:K"}, {"_x", "w", "0:N"}, {"_y", "zin", "0:K"}},
       {{"_y", "z", "0:K"}}, Json{{"transA", true}, {"alpha", "2"}, {"beta", "3"}});
  node("dot_column", blas + "dot.Dot", {{"_x", "w", "0:N"}, {"_y", "A", "0:N, 1"}}, {{"_result", "dd", "0"}});
  node("ger", blas + "ger.Ger", {{"_A", "A", "0:N, 0:K"}, {"_x", "w", "0:N"}, {"_y", "v", "0:K"}},
       {{"_res", "R", "0:N, 0:K"}}, Json{{"alpha", "0.5"}});
  node("transpose", "dace.libraries.linalg.nodes.transpose.Transpose", {{"_inp", "A", "0:N, 0:K"}},
       {{"_out", "T", "0:K, 0:N"}});
  if (gpu) {
    auto out = b.state("copy_out");
    bool written = false;
    for (auto& [name, shape] : containers()) {
      written = written || name == "H";
      if (written) out.copy(out.access(g(name)), out.access(name), full(shape), full(shape));
    }
  }
  b.chain();
  return write_sdfg(*b.build());
}

/// Runs `p` through `call` and checks every result against loops here. Returns false when `call`
/// could not run the program (no GPU).
template <class Call>
bool check_linear_algebra(Program& p, Call call) {
  using namespace linalg;
  std::map<std::string, std::vector<double>> d;
  int seed = 1;
  for (auto& [name, shape] : containers()) {
    auto& v = d[name] = std::vector<double>(elements(shape));
    for (std::size_t k = 0; k < v.size(); ++k) v[k] = static_cast<double>(static_cast<int>((k * 7 + seed) % 11) - 5);
    seed += 3;
  }
  std::vector<double> h0 = d["H"];
  for (auto& [name, v] : d) p.set_array(name, v.data(), v.size());
  p.set_value("N", kN);
  p.set_value("K", kK);
  p.set_value("M", kM);
  if (!call(p)) return false;
  auto& A = d["A"];
  auto& B = d["B"];
  auto& v = d["v"];
  auto& w = d["w"];
  auto& Q = d["Q"];
  auto& S = d["S"];
  auto a = [&](int i, int k) { return A[i * kK + k]; };
  auto bm = [&](int k, int j) { return B[k * kM + j]; };
  auto q = [&](int k, int j) { return Q[k * 2 * kM + j]; };
  auto expect = [&](const char* name, std::size_t at, double want) {
    EXPECT_EQ(d[name][at], want) << name << "[" << at << "]";
  };
  for (int i = 0; i < kN; ++i)
    for (int j = 0; j < kM; ++j) {
      double c1 = 0, c2 = 0;
      for (int k = 0; k < kK; ++k) {
        c1 += a(i, k) * bm(k, j);
        c2 += a(i, k) * q(k, 2 * j + 1);
      }
      expect("C1", i * kM + j, c1);
      expect("C2", i * kM + j, c2);
      expect("H", i * kM + j, c1 + 2 * h0[i * kM + j]);
      expect("G", j * kN + i, 2 * c1 + 0.5 * d["Cin"][j * kN + i]);
      for (int s = 0; s < 2; ++s) {
        double z = 0;
        for (int k = 0; k < kK; ++k) z += S[(s * kN + i) * kK + k] * bm(k, j);
        expect("Z", (s * kN + i) * kM + j, z);
      }
    }
  for (int i = 0; i < kN; ++i) {
    double y = 0;
    for (int k = 0; k < kK; ++k) y += a(i, k) * v[k];
    expect("y1", i, y);
  }
  for (int j = 0; j < kM; ++j) {
    double y = 0;
    for (int k = 0; k < kK; ++k) y += v[k] * bm(k, j);
    expect("y2", j, y);
  }
  double d1 = 0, dd = 0;
  for (int k = 0; k < kK; ++k) d1 += v[k] * q(k, 2);
  for (int i = 0; i < kN; ++i) dd += w[i] * a(i, 1);
  expect("d1", 0, d1);
  expect("dd", 0, dd);
  for (int k = 0; k < kK; ++k) {
    double z = 0;
    for (int i = 0; i < kN; ++i) z += a(i, k) * w[i];
    expect("z", k, 2 * z + 3 * d["zin"][k]);
  }
  for (int i = 0; i < kN; ++i)
    for (int k = 0; k < kK; ++k) {
      expect("R", i * kK + k, 0.5 * w[i] * v[k] + a(i, k));
      expect("T", k * kN + i, a(i, k));
    }
  return true;
}

/// Library nodes inside a map over the rows i of A (GT4Py's and DaCe's nodes in map scopes): C[i, :]
/// = A[i, :] @ B (vector @ matrix) and y[i] = A[i, :] @ v (a dot product), each a sequential loop in
/// the map's iteration or GPU thread. With `gpu` the map is a GPU kernel on GPU copies.
inline std::string rows_in_a_map_json(bool gpu) {
  using namespace linalg;
  SDFGBuilder b(gpu ? "linalg_rows_gpu" : "linalg_rows");
  b.symbol("N").symbol("K").symbol("M");
  b.array("A", DType::Float64, {"N", "K"}).array("B", DType::Float64, {"K", "M"}).array("v", DType::Float64, {"K"});
  b.array("C", DType::Float64, {"N", "M"}).array("y", DType::Float64, {"N"});
  std::vector<std::pair<std::string, std::string>> all = {
      {"A", "0:N, 0:K"}, {"B", "0:K, 0:M"}, {"v", "0:K"}, {"C", "0:N, 0:M"}, {"y", "0:N"}};
  auto g = [&](const std::string& name) { return gpu ? "g_" + name : name; };
  if (gpu) {
    b.array("g_A", DType::Float64, {"N", "K"}, true, StorageType::GPU_Global)
        .array("g_B", DType::Float64, {"K", "M"}, true, StorageType::GPU_Global)
        .array("g_v", DType::Float64, {"K"}, true, StorageType::GPU_Global)
        .array("g_C", DType::Float64, {"N", "M"}, true, StorageType::GPU_Global)
        .array("g_y", DType::Float64, {"N"}, true, StorageType::GPU_Global);
    auto in = b.state("copy_in");
    for (auto& [name, sub] : all) in.copy(in.access(name), in.access(g(name)), sub, sub);
  }
  auto s = b.state("rows");
  auto [me, mx] = s.map("rows", {"i"}, {"0:N"}, gpu ? ScheduleType::GPU_Device : ScheduleType::Default);
  const std::string matmul = "dace.libraries.blas.nodes.matmul.MatMul";
  int row_b = s.library("row_times_B", matmul, {"_a", "_b"}, {"_c"}, Json::object(), me);
  int row_v = s.library("row_dot_v", matmul, {"_a", "_b"}, {"_c"}, Json::object(), me);
  for (auto& [name, sub] : std::vector<std::pair<std::string, std::string>>{all[0], all[1], all[2]})
    s.edge(s.access(g(name)), "", me, "IN_" + g(name), g(name), sub);
  s.edge(me, "OUT_" + g("A"), row_b, "_a", g("A"), "i, 0:K");
  s.edge(me, "OUT_" + g("B"), row_b, "_b", g("B"), "0:K, 0:M");
  s.edge(me, "OUT_" + g("A"), row_v, "_a", g("A"), "i, 0:K");
  s.edge(me, "OUT_" + g("v"), row_v, "_b", g("v"), "0:K");
  s.edge(row_b, "_c", mx, "IN_" + g("C"), g("C"), "i, 0:M");
  s.edge(row_v, "_c", mx, "IN_" + g("y"), g("y"), "i");
  s.edge(mx, "OUT_" + g("C"), s.access(g("C")), "", g("C"), "0:N, 0:M");
  s.edge(mx, "OUT_" + g("y"), s.access(g("y")), "", g("y"), "0:N");
  if (gpu) {
    auto out = b.state("copy_out");
    for (auto& [name, sub] : std::vector<std::pair<std::string, std::string>>{all[3], all[4]})
      out.copy(out.access(g(name)), out.access(name), sub, sub);
  }
  b.chain();
  return write_sdfg(*b.build());
}

template <class Call>
bool check_rows_in_a_map(Program& p, Call call) {
  using namespace linalg;
  std::vector<double> A(kN * kK), B(kK * kM), v(kK), C(kN * kM, -1), y(kN, -1);
  for (std::size_t k = 0; k < A.size(); ++k) A[k] = static_cast<double>(static_cast<int>(k * 5 % 9) - 4);
  for (std::size_t k = 0; k < B.size(); ++k) B[k] = static_cast<double>(static_cast<int>(k * 3 % 7) - 3);
  for (std::size_t k = 0; k < v.size(); ++k) v[k] = static_cast<double>(k) + 1.5;
  p.set_array("A", A.data(), A.size());
  p.set_array("B", B.data(), B.size());
  p.set_array("v", v.data(), v.size());
  p.set_array("C", C.data(), C.size());
  p.set_array("y", y.data(), y.size());
  p.set_value("N", kN);
  p.set_value("K", kK);
  p.set_value("M", kM);
  if (!call(p)) return false;
  for (int i = 0; i < kN; ++i) {
    double dot = 0;
    for (int k = 0; k < kK; ++k) dot += A[i * kK + k] * v[k];
    EXPECT_EQ(y[i], dot) << "y[" << i << "]";
    for (int j = 0; j < kM; ++j) {
      double c = 0;
      for (int k = 0; k < kK; ++k) c += A[i * kK + k] * B[k * kM + j];
      EXPECT_EQ(C[i * kM + j], c) << "C[" << i << ", " << j << "]";
    }
  }
  return true;
}

}  // namespace sdfc::test
