// The code generator's completeness invariant (issue 12): every node and edge of every state is
// lowered exactly once, or compilation stops with an internal error that names the element by its
// JSON pointer and says it is an sdfc bug. Elements the code generator does not lower are
// injected through the IR API, past validation (which would reject them in a file).
#include <gtest/gtest.h>

#include <stdexcept>

#include "codegen/Codegen.h"
#include "ir/Builder.h"
#include "ir/Memlets.h"
#include "passes/Pipeline.h"

using namespace sdfc;

namespace {

/// y[i] = 2 * x[i] over a map: access x -> entry -> tasklet -> exit -> access y.
std::unique_ptr<SDFG> doubling() {
  SDFGBuilder b("complete");
  b.symbol("N").array("x", DType::Float64, {"N"}).array("y", DType::Float64, {"N"});
  auto st = b.state("s");
  st.mapped_tasklet("m", {{"i", "0:N"}}, {{"a", "x[i]"}}, "o = 2.0 * a", {{"o", "y[i]"}});
  return b.build();
}

std::string internal_error_of(SDFG& sdfg) {
  CompileOptions o;
  run_pipeline(sdfg, o);
  try {
    generate(sdfg, o, "complete.sdfg");
  } catch (const std::logic_error& e) {
    return e.what();
  }
  return "";
}

int tasklet_of(const Block& st) {
  for (int i = 0; i < static_cast<int>(st.nodes.size()); ++i)
    if (st.node(i).kind == NodeKind::Tasklet) return i;
  return -1;
}

}  // namespace

TEST(Completeness, EveryElementOfAValidProgramIsLowered) {
  auto sdfg = doubling();
  CompileOptions o;
  run_pipeline(*sdfg, o);
  EXPECT_NO_THROW(generate(*sdfg, o, "complete.sdfg"));
}

TEST(Completeness, AnEdgeNoEmitterLowersIsAnInternalErrorNamingIt) {
  auto sdfg = doubling();
  Block& st = *sdfg->root.blocks[0];
  // A second input edge into the tasklet, on a connector the tasklet does not declare: no emitter
  // binds it, so the data it carries would silently never reach the code.
  int x = -1;
  for (int i = 0; i < static_cast<int>(st.nodes.size()); ++i)
    if (st.node(i).kind == NodeKind::Access && st.node(i).data == "x") x = i;
  ASSERT_GE(x, 0) << "the program reads x through an access node";
  int entry = st.node(tasklet_of(st)).scope_entry;
  DataEdge e;
  e.src = entry;
  e.src_conn = "OUT_x";
  e.dst = tasklet_of(st);
  e.dst_conn = "undeclared";
  e.memlet.data = "x";
  e.memlet.subset = parse_subset("i");
  st.edges.push_back(e);
  ASSERT_EQ(edge_role(st, st.edges.back()), EdgeRole::TaskletInput);
  std::string what = internal_error_of(*sdfg);
  std::string edge = "/nodes/0/edges/" + std::to_string(st.edges.size() - 1);
  EXPECT_NE(what.find("internal error"), std::string::npos) << what;
  EXPECT_NE(what.find("complete.sdfg: " + edge + " (a tasklet input from node"), std::string::npos) << what;
  EXPECT_NE(what.find("was lowered 0 times instead of once"), std::string::npos) << what;
  EXPECT_NE(what.find("this is an sdfc bug"), std::string::npos) << what;
}

TEST(Completeness, ANodeNoEmitterReachesIsAnInternalErrorNamingIt) {
  auto sdfg = doubling();
  Block& st = *sdfg->root.blocks[0];
  // An access node whose scope entry names a node that is not a map: no scope emits it.
  auto n = std::make_unique<Node>(NodeKind::Access);
  n->data = n->label = "y";
  n->scope_entry = tasklet_of(st);
  st.nodes.push_back(std::move(n));
  std::string what = internal_error_of(*sdfg);
  std::string node = "/nodes/0/nodes/" + std::to_string(st.nodes.size() - 1);
  EXPECT_NE(what.find("complete.sdfg: " + node + " (access node \"y\") was lowered 0 times"), std::string::npos)
      << what;
  EXPECT_NE(what.find("this is an sdfc bug"), std::string::npos) << what;
}

/// The role table of ir/Memlets.h over every pair of node kinds, with data and without.
TEST(Completeness, EdgeRolesForEveryKindPair) {
  Block st(BlockKind::State);
  for (NodeKind k : {NodeKind::Access, NodeKind::MapEntry, NodeKind::MapExit, NodeKind::Tasklet, NodeKind::NestedSDFG})
    st.nodes.push_back(std::make_unique<Node>(k));
  auto role = [&](int a, const char* ac, int b, const char* bc, bool data) {
    DataEdge e;
    e.src = a;
    e.dst = b;
    if (*ac) e.src_conn = ac;
    if (*bc) e.dst_conn = bc;
    if (data) e.memlet.data = "x";
    return edge_role(st, e);
  };
  enum { A, En, Ex, T, N };
  EXPECT_EQ(role(A, "", A, "", true), EdgeRole::Copy);
  EXPECT_EQ(role(A, "", En, "IN_x", true), EdgeRole::ScopeInput);
  EXPECT_EQ(role(A, "", En, "n", true), EdgeRole::DynamicRangeInput);
  EXPECT_EQ(role(A, "", Ex, "IN_x", true), EdgeRole::ScopeCopyOut);
  EXPECT_EQ(role(A, "", T, "a", true), EdgeRole::TaskletInput);
  EXPECT_EQ(role(A, "", N, "a", true), EdgeRole::NestedInput);
  EXPECT_EQ(role(En, "OUT_x", A, "", true), EdgeRole::ScopeCopyIn);
  EXPECT_EQ(role(En, "OUT_x", En, "IN_x", true), EdgeRole::ScopeInput);
  EXPECT_EQ(role(En, "OUT_x", Ex, "IN_x", true), EdgeRole::Unsupported);
  EXPECT_EQ(role(En, "OUT_x", T, "a", true), EdgeRole::TaskletInput);
  EXPECT_EQ(role(Ex, "OUT_x", A, "", true), EdgeRole::ScopeOutput);
  EXPECT_EQ(role(Ex, "OUT_x", Ex, "IN_x", true), EdgeRole::ScopeOutput);
  EXPECT_EQ(role(Ex, "OUT_x", T, "a", true), EdgeRole::Unsupported);
  EXPECT_EQ(role(T, "o", A, "", true), EdgeRole::TaskletOutput);
  EXPECT_EQ(role(T, "o", Ex, "IN_x", true), EdgeRole::TaskletOutput);
  EXPECT_EQ(role(N, "o", A, "", true), EdgeRole::NestedOutput);
  EXPECT_EQ(role(T, "o", T, "a", false), EdgeRole::Unsupported);  // a value with no container
  EXPECT_EQ(role(T, "o", T, "a", true), EdgeRole::Unsupported);
  EXPECT_EQ(role(En, "", T, "", false), EdgeRole::Ordering);
  EXPECT_EQ(role(Ex, "", A, "", false), EdgeRole::Ordering);
  EXPECT_NE(edge_role_problem(st,
                              [] {
                                DataEdge e;
                                e.src = 3;
                                e.dst = 3;
                                e.src_conn = "o";
                                e.dst_conn = "a";
                                return e;
                              }())
                .find("pass the value through a transient scalar"),
            std::string::npos);
}
