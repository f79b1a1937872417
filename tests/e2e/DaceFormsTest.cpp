// Forms DaCe's frontends and expansions make, end to end: maps whose range of one dimension uses
// the parameter of an earlier one (DaCe runs a map's dimensions as nested loops, outermost first;
// its GPU reduction expansion makes such maps), compiled and run on the host, refused on a GPU
// map, an error of validation where a range uses a later parameter; and tasklets that assign a
// dynamic output with a write-conflict resolution under a condition.
#include <fmt/format.h>

#include "TestUtil.h"
#include "ir/Builder.h"
#include "ir/Memlets.h"
#include "sdfc/sdfc.h"

using namespace sdfc;
using namespace sdfc::test;

namespace {

constexpr int kN = 6;

/// out[i, j] = i * N + j over the upper triangle (j from i), in one map of `schedule`.
std::string triangle(const std::string& j_range, ScheduleType schedule = ScheduleType::Default) {
  SDFGBuilder b("triangle");
  b.symbol("N").array("out", DType::Float64, {"N", "N"});
  auto s = b.state("s");
  s.mapped_tasklet("upper", {{"i", "0:N"}, {"j", j_range}}, {}, "o = i * N + j", {{"o", "out[i, j]"}}, schedule);
  auto sdfg = b.build();
  // outside the map, the write covers the whole of out (the builder's propagation would keep i)
  for (auto& e : sdfg->root.blocks[0]->edges)
    if (sdfg->root.blocks[0]->node(e.src).kind == NodeKind::MapExit)
      e.memlet.subset = full_range(*sdfg->find_data("out"));
  return write_sdfg(*sdfg);
}

std::string refusal(const std::string& text, const Options& o = {}) {
  try {
    Program::compile_string(text, o);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST(MapRanges, ARangeUsingAnEarlierParameterRunsAsNestedLoops) {
  for (ScheduleType schedule : {ScheduleType::Default, ScheduleType::Sequential}) {
    SCOPED_TRACE(to_string(schedule));
    Program p = Program::compile_string(triangle("i:N", schedule));
    std::vector<double> out(kN * kN, -1.0);
    p.set_array("out", out.data(), out.size());
    p.set_value("N", kN);
    p.call();
    for (int i = 0; i < kN; ++i)
      for (int j = 0; j < kN; ++j) EXPECT_EQ(out[i * kN + j], j >= i ? double(i * kN + j) : -1.0) << i << ", " << j;
  }
}

TEST(MapRanges, ARangeUsingALaterParameterIsAnErrorOfValidation) {
  SDFGBuilder b("later");
  b.symbol("N").array("out", DType::Float64, {"N", "N"});
  auto s = b.state("s");
  s.mapped_tasklet("m", {{"i", "j:N"}, {"j", "0:N"}}, {}, "o = 1.0", {{"o", "out[i, j]"}});
  std::string e = refusal(write_sdfg(*b.build()));
  EXPECT_NE(e.find("undefined symbol \"j\" in the range of map"), std::string::npos) << e;
}

TEST(MapRanges, AGpuMapWhoseRangeUsesItsOwnParameterIsRefused) {
  Options o;
  o.target = "cuda";
  std::string e = refusal(triangle("i:N", ScheduleType::GPU_Device), o);
  EXPECT_NE(e.find("the range of parameter \"j\" of GPU_Device map"), std::string::npos) << e;
  EXPECT_NE(e.find("uses its parameter \"i\""), std::string::npos) << e;
  EXPECT_NE(e.find("/attributes/range/ranges/1"), std::string::npos) << e;
}

namespace {

/// out[0] (+)= X[i] for the positive X[i] only: a tasklet whose dynamic output with a
/// write-conflict resolution is assigned under a condition (DaCe's GPU reductions write so).
std::string conditional_wcr(const std::string& wcr, ScheduleType schedule) {
  SDFGBuilder b("conditional_wcr");
  b.symbol("N").array("X", DType::Float64, {"N"}).array("out", DType::Float64, {"1"});
  auto s = b.state("s");
  s.mapped_tasklet("pos", {{"i", "0:N"}}, {{"a", "X[i]"}}, "if a > 0:\n    o = a", {{"o", "out[0]"}}, schedule);
  auto sdfg = b.build();
  for (auto& e : sdfg->root.blocks[0]->edges)
    if (e.memlet.data == "out") {
      e.memlet.dynamic = true;
      e.memlet.wcr = wcr;
    }
  return write_sdfg(*sdfg);
}

}  // namespace

TEST(ConditionalWcr, AnOutputNotAssignedWritesNothing) {
  struct Case {
    std::string wcr;
    double init, expected;
  };
  std::vector<double> x = {3, -1, 4, -1.5, 5, -9, 2, 6};
  for (ScheduleType schedule : {ScheduleType::Sequential, ScheduleType::CPU_Multicore})
    for (const Case& c : {Case{"(lambda x, y: (x + y))", 0.5, 0.5 + 3 + 4 + 5 + 2 + 6},
                          Case{"(lambda x, y: (x * y))", 0.5, 0.5 * 3 * 4 * 5 * 2 * 6},
                          Case{"(lambda x, y: min(x, y))", 100, 2}, Case{"(lambda x, y: max(x, y))", -100, 6}}) {
      SCOPED_TRACE(c.wcr + " " + std::string(to_string(schedule)));
      Program p = Program::compile_string(conditional_wcr(c.wcr, schedule));
      std::vector<double> out = {c.init};
      p.set_array("X", x.data(), x.size());
      p.set_array("out", out.data(), out.size());
      p.set_value("N", static_cast<int64_t>(x.size()));
      p.call();
      EXPECT_EQ(out[0], c.expected);
    }
}

TEST(ConditionalWcr, AGeneralLambdaOnADynamicOutputIsRefused) {
  std::string e = refusal(conditional_wcr("(lambda x, y: (2 * x + y))", ScheduleType::Sequential));
  EXPECT_NE(e.find("dynamic output \"o\" of tasklet \"pos\" with write-conflict resolution"), std::string::npos) << e;
  EXPECT_NE(e.find("only a sum, product, min or max has an identity"), std::string::npos) << e;
}

TEST(DaceCblas, DaCesOwnCblasExpansionRunsWithTheBlasLibrary) {
  // NPBench's gemm, C = alpha * A @ B + beta * C, as DaCe's auto_optimize expands it (a CPP tasklet
  // calling cblas_dgemm, with DaCe's OpenBLAS environment), against a product computed here.
  constexpr int NI = 5, NJ = 4, NK = 3;
  Program p = Program::compile_file(std::string(SDFC_TEST_DATA) + "/dace_openblas_gemm.sdfg");
  std::vector<double> A(NI * NK), B(NK * NJ), C(NI * NJ);
  for (int i = 0; i < NI * NK; ++i) A[i] = 0.5 * i - 1;
  for (int i = 0; i < NK * NJ; ++i) B[i] = 2.0 - 0.25 * i;
  for (int i = 0; i < NI * NJ; ++i) C[i] = i;
  std::vector<double> expected(NI * NJ);
  for (int i = 0; i < NI; ++i)
    for (int j = 0; j < NJ; ++j) {
      double s = 0;
      for (int k = 0; k < NK; ++k) s += A[i * NK + k] * B[k * NJ + j];
      expected[i * NJ + j] = 1.5 * s + 0.25 * C[i * NJ + j];
    }
  p.set_array("A", A.data(), A.size());
  p.set_array("B", B.data(), B.size());
  p.set_array("C", C.data(), C.size());
  p.set_value("alpha", 1.5);
  p.set_value("beta", 0.25);
  p.set_value("NI", NI);
  p.set_value("NJ", NJ);
  p.set_value("NK", NK);
  p.call();
  for (int i = 0; i < NI * NJ; ++i) EXPECT_DOUBLE_EQ(C[i], expected[i]) << i;
}
