// DaCe's BLAS and linear-algebra library nodes end to end on the CPU: the expand-library-nodes
// pass turns them into maps, and the programs' results are checked against loops computed here
// (tests/LinearAlgebra.h: every MatMul form, Gemm, Gemv, Dot, Ger, BatchedMatMul, Transpose, on
// non-square sizes with strided operands; nodes inside a map); operands that are row and column
// views as DaCe's frontend writes them; and the nodes the pass refuses, each with a message
// naming the node.
#include <fmt/format.h>

#include "LinearAlgebra.h"
#include "TestUtil.h"
#include "ir/Builder.h"
#include "sdfc/sdfc.h"

using namespace sdfc;
using namespace sdfc::test;

namespace {

bool call_here(Program& p) {
  p.call();
  return true;
}

const std::string kMatMul = "dace.libraries.blas.nodes.matmul.MatMul";

std::string refusal(const std::string& json, const std::string& target = "cpu") {
  Options o;
  o.target = target;
  try {
    Program::compile_string(json, o);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST(LibraryNodes, BlasAndTransposeMatchLoops) {
  Program p = Program::compile_string(linear_algebra_json(false));
  check_linear_algebra(p, call_here);
}

/// --blas vendor: the same program with Gemm, Gemv and the MatMul forms that are one as CBLAS
/// calls (Debian's libblas): row-major, column-major (the transposed and strided-column operands)
/// and an input C of its own; the forms with no BLAS layout (every other column of Q) and the rest
/// (Dot, Ger, batched, Transpose) stay pure. Same results, checked against the same loops.
TEST(LibraryNodes, VendorBlasMatchesLoops) {
  Options o;
  o.blas = "vendor";
  Program p = Program::compile_string(linear_algebra_json(false), o);
  check_linear_algebra(p, call_here);
  Program in_map = Program::compile_string(rows_in_a_map_json(false), o);  // inside a map: pure loops
  check_rows_in_a_map(in_map, call_here);
}

TEST(LibraryNodes, NodesInsideAMapRunInItsIterations) {
  Program p = Program::compile_string(rows_in_a_map_json(false));
  check_rows_in_a_map(p, call_here);
}

/// C[i, :] = A[i, :] @ B in a loop, through a row view of A read and a row view of C written
/// (fe_rowdot_views_s), and d = A[:, 1] @ w through a strided column view.
TEST(LibraryNodes, ViewOperandsAsTheFrontendWritesThem) {
  using namespace linalg;
  SDFGBuilder b("linalg_views");
  b.symbol("N", DType::Int64).symbol("K", DType::Int64).symbol("M", DType::Int64).symbol("i", DType::Int64);
  b.array("A", DType::Float64, {"N", "K"})
      .array("B", DType::Float64, {"K", "M"})
      .array("C", DType::Float64, {"N", "M"});
  b.array("w", DType::Float64, {"N"}).array("d", DType::Float64, {"1"});
  b.view("row", DType::Float64, {"K"}, {"1"}).view("crow", DType::Float64, {"M"}, {"1"});
  b.view("col", DType::Float64, {"N"}, {"K"});
  auto body = b.loop("rows", "i", "0", "i < N", "i + 1");
  int a = body.access("A"), row = body.access("row"), crow = body.access("crow"), c = body.access("C");
  body.view_of(row, a, "i, 0:K");
  body.view_of(crow, c, "i, 0:M", true);
  int mm = body.library("row_times_B", kMatMul, {"_a", "_b"}, {"_c"});
  body.edge(row, "", mm, "_a", "row", "0:K");
  body.edge(body.access("B"), "", mm, "_b", "B", "0:K, 0:M");
  body.edge(mm, "_c", crow, "", "crow", "0:M");
  auto s = b.state("column");
  int a2 = s.access("A"), col = s.access("col");
  s.view_of(col, a2, "0:N, 1");
  int dot = s.library("column_dot_w", kMatMul, {"_a", "_b"}, {"_c"});
  s.edge(col, "", dot, "_a", "col", "0:N");
  s.edge(s.access("w"), "", dot, "_b", "w", "0:N");
  s.edge(dot, "_c", s.access("d"), "", "d", "0");
  b.chain();
  Program p = Program::compile_string(write_sdfg(*b.build()));
  std::vector<double> A(kN * kK), B(kK * kM), C(kN * kM, -1), w(kN), d(1, -1);
  for (std::size_t k = 0; k < A.size(); ++k) A[k] = static_cast<double>(static_cast<int>(k * 4 % 7) - 3);
  for (std::size_t k = 0; k < B.size(); ++k) B[k] = static_cast<double>(static_cast<int>(k * 5 % 6) - 2);
  for (std::size_t k = 0; k < w.size(); ++k) w[k] = 0.5 * static_cast<double>(k) - 1;
  p.set_array("A", A.data(), A.size());
  p.set_array("B", B.data(), B.size());
  p.set_array("C", C.data(), C.size());
  p.set_array("w", w.data(), w.size());
  p.set_array("d", d.data(), d.size());
  p.set_value("N", kN);
  p.set_value("K", kK);
  p.set_value("M", kM);
  p.call();
  double want = 0;
  for (int i = 0; i < kN; ++i) {
    want += A[i * kK + 1] * w[i];
    for (int j = 0; j < kM; ++j) {
      double sum = 0;
      for (int k = 0; k < kK; ++k) sum += A[i * kK + k] * B[k * kM + j];
      EXPECT_EQ(C[i * kM + j], sum) << "C[" << i << ", " << j << "]";
    }
  }
  EXPECT_EQ(d[0], want);
}

namespace {

/// One library node of class `cls` on A (5 x 3), B (4 x 2), x (3) -> out (`out_shape`).
std::string one_node(const std::string& cls, const std::vector<std::tuple<std::string, std::string, std::string>>& ins,
                     const std::vector<std::string>& out_shape, const std::string& out_subset,
                     const std::string& out_conn, const std::string& wcr = "",
                     StorageType storage = StorageType::Default) {
  SDFGBuilder b("one_node");
  b.array("A", DType::Float64, {"5", "3"}, false, storage)
      .array("B", DType::Float64, {"4", "2"}, false, storage)
      .array("T3", DType::Float64, {"2", "2", "2"}, false, storage)
      .array("x", DType::Float64, {"3"}, false, storage)
      .array("out", DType::Float64, out_shape);
  auto s = b.state("s");
  std::vector<std::string> conns;
  for (auto& [c, d, sub] : ins) conns.push_back(c);
  int n = s.library("node", cls, conns, {out_conn});
  for (auto& [c, d, sub] : ins) s.edge(s.access(d), "", n, c, d, sub);
  s.edge(n, out_conn, s.access("out"), "", "out", out_subset, wcr);
  return write_sdfg(*b.build());
}

}  // namespace

TEST(LibraryNodes, RefusalsNameTheNode) {
  EXPECT_NE(
      refusal(one_node("dace.libraries.lapack.nodes.getrf.Getrf", {{"_xin", "A", "0:5, 0:3"}}, {"5"}, "0:5", "_xout"))
          .find("/nodes/0/nodes/0/classpath: error: unsupported library node \"node\" of class "
                "dace.libraries.lapack.nodes.getrf.Getrf; sdfc expands Reduce, MatMul, BatchedMatMul, Gemm, Gemv, "
                "Dot, Ger, Transpose, TensorTranspose, TensorDot, Einsum, Inv, Solve, Cholesky (other classes: expand "
                "them in DaCe first, sdfg.expand_library_nodes())"),
      std::string::npos);
  EXPECT_NE(refusal(one_node("dace.libraries.linalg.nodes.inv.Inv", {{"_ain", "A", "0:5, 0:3"}}, {"5"}, "0:5", "_aout"))
                .find("Inv \"node\": the rows and columns of _ain do not agree (5 and 3)"),
            std::string::npos);
  EXPECT_NE(refusal(one_node(kMatMul, {{"_a", "A", "0:5, 0:3"}, {"_b", "B", "0:4, 0:2"}}, {"5", "2"}, "0:5, 0:2", "_c"))
                .find("MatMul \"node\": the columns of A and the rows of B do not agree (3 and 4)"),
            std::string::npos);
  EXPECT_NE(refusal(one_node(kMatMul, {{"_a", "A", "0:5, 0:3"}, {"_b", "x", "0:3"}}, {"5"}, "0:5", "_c",
                             "lambda a, b: a + b"))
                .find("MatMul \"node\": a write-conflict resolution on its output (_c) is not supported"),
            std::string::npos);
  EXPECT_NE(refusal(one_node("dace.libraries.linalg.nodes.transpose.Transpose", {{"_inp", "T3", "0:2, 0:2, 0:2"}},
                             {"8"}, "0:8", "_out"))
                .find("Transpose \"node\": a transpose of rank 3 -> 1 is not supported (matrices only)"),
            std::string::npos);
  // GPU operands and a host result, outside any map: neither the host nor a kernel may run it.
  EXPECT_NE(refusal(one_node(kMatMul, {{"_a", "A", "0:5, 0:3"}, {"_b", "x", "0:3"}}, {"5"}, "0:5", "_c", "",
                             StorageType::GPU_Global),
                    "cuda")
                .find("MatMul \"node\" outside any map reads or writes GPU memory (A, x) and host memory (out) on a "
                      "GPU target"),
            std::string::npos);
}
