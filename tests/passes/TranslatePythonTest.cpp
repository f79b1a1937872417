// translate-python: Python tasklets and the code of control flow translated once into C++ stored
// in the IR; the code generator prints it, placing each recorded read of a container, and raises
// no user error of its own.
#include "TestUtil.h"
#include "codegen/Codegen.h"
#include "ir/Builder.h"
#include "ir/Dump.h"
#include "passes/Pipeline.h"

using namespace sdfc;
using namespace sdfc::test;

namespace {

const std::vector<std::string> kThrough = {
    "expand-library-nodes", "fold-views",        "normalize", "fuse-maps",       "transient-layouts",
    "transient-lifetimes",  "stream-assignment", "legalize",  "translate-python"};

/// h (int32 scalar), A (int32[N]), idx (int64[2]); state s0 -> s1 under `condition` with
/// `assignments`, then a loop over `it`.
std::unique_ptr<SDFG> program(const std::string& condition,
                              const std::vector<std::pair<std::string, std::string>>& assignments,
                              const std::string& loop_condition = "it < N") {
  SDFGBuilder b("control");
  b.symbol("N", DType::Int64).symbol("k", DType::Int64);
  b.scalar("h", DType::Int32).array("A", DType::Int32, {"N"}).array("idx", DType::Int64, {"2"});
  b.state("s0");
  b.state("s1");
  b.loop("lp", "it", "0", loop_condition, "it + 1");
  b.edge(0, 1, condition, assignments).edge(1, 2);
  return b.build();
}

std::vector<Diagnostic> errors_of(SDFG& sdfg) {
  try {
    run_passes(sdfg, kThrough, CompileOptions{});
  } catch (const UserError& e) {
    return e.diagnostics();
  }
  return {};
}

}  // namespace

TEST(TranslatePython, ReadsOfContainersAreRecordedAndPlacedByThePrinter) {
  auto sdfg = program("h > 0 and A[idx[1]] < k", {{"k", "A[k - 1] + idx[0]"}});
  run_passes(*sdfg, kThrough, CompileOptions{});
  const InterstateEdge& e = sdfg->root.cf_edges[0];
  // In the order the rewrite meets them: h, then idx (inside the index of A), then A.
  ASSERT_EQ(e.cpp_condition.reads.size(), 3u);
  EXPECT_EQ(e.cpp_condition.reads[0].data, "h");
  EXPECT_EQ(e.cpp_condition.reads[1].data, "idx");
  EXPECT_EQ(e.cpp_condition.reads[2].data, "A");
  EXPECT_EQ(print_expr(e.cpp_condition.reads[2].index.at(0)), control_read_name(1));
  EXPECT_EQ(e.cpp_condition.cpp, "__sdfc_read0__ > 0 && __sdfc_read2__ < k");
  ASSERT_EQ(e.cpp_assignments.size(), 1u);
  EXPECT_EQ(e.cpp_assignments[0].cpp, "k = __sdfc_read0__ + __sdfc_read1__");
  // The dump shows the C++ with its reads.
  std::string text = dump(*sdfg);
  EXPECT_NE(text.find("c++: if (h[0] > 0 && A[idx[1]] < k) k = A[k - 1] + idx[0];"), std::string::npos) << text;
  EXPECT_NE(text.find("c++: for (it = 0; it < N; it = it + 1)"), std::string::npos) << text;
  // The printer places each read as the container is reached: h, a scalar argument, by value; A
  // and idx by their linear index.
  CompileOptions o;
  run_pipeline(*sdfg, o);
  std::string src = generate(*sdfg, o).files.at(0).text;
  EXPECT_NE(src.find("if (h > 0 && A[idx[1]] < k)"), std::string::npos) << src;
  EXPECT_NE(src.find("k = A[-1 + k] + idx[0];"), std::string::npos) << src;
}

TEST(TranslatePython, EveryUntranslatableCodeIsRefusedAtOnceAtItsPointer) {
  auto sdfg = program("A[0, 1] > 0", {{"k", "k +"}, {"j", "frobnicate(k)"}}, "it < N and");
  std::vector<Diagnostic> d = errors_of(*sdfg);
  ASSERT_EQ(d.size(), 4u);
  EXPECT_EQ(d[0].pointer, "/edges/0/attributes/data/attributes/condition");
  EXPECT_NE(d[0].message.find("subset of \"A\" has 2 dimensions, the data has 1"), std::string::npos) << d[0].message;
  EXPECT_EQ(d[1].pointer, "/edges/0/attributes/data/attributes/assignments/k");
  EXPECT_NE(d[1].message.find("malformed expression \"k +\""), std::string::npos) << d[1].message;
  EXPECT_EQ(d[2].pointer, "/edges/0/attributes/data/attributes/assignments/j");
  EXPECT_NE(d[2].message.find("frobnicate"), std::string::npos) << d[2].message;
  EXPECT_EQ(d[3].pointer, "/nodes/2/attributes/loop_condition");
}

TEST(TranslatePython, ThePrinterRaisesNoUserErrorForCodeLeftUntranslated) {
  auto sdfg = program("h > 0", {});
  CompileOptions o;
  run_pipeline(*sdfg, o);
  sdfg->root.cf_edges[0].cpp_condition = ControlCode{};  // as if translate-python had not run
  try {
    generate(*sdfg, o);
    FAIL() << "no error";
  } catch (const UserError& e) {
    FAIL() << "a user error from the printer: " << e.what();
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("control code not translated (translate-python)"), std::string::npos)
        << e.what();
  }
}

TEST(TranslatePython, ReadsInsideIndicesAreReplacedLastFirst) {
  ControlCode c;
  c.cpp = "__sdfc_read1__ + __sdfc_read10__";
  for (int i = 0; i < 11; ++i) c.reads.push_back({"X" + std::to_string(i), {}});
  c.reads[1].index = {make_symbol(control_read_name(0))};
  std::string text = with_reads(c, [](const ControlCode::Read& r) {
    return r.data + (r.index.empty() ? "" : "(" + print_expr(r.index[0]) + ")");
  });
  EXPECT_EQ(text, "X1(X0) + X10");
}
