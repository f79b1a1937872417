#include "TestUtil.h"
#include "ir/Builder.h"
#include "ir/Dump.h"

using namespace sdfc;
using namespace sdfc::test;

namespace {
std::unique_ptr<SDFG> axpy() {
  SDFGBuilder b("axpy");
  b.symbol("N").array("x", DType::Float64, {"N"}).array("y", DType::Float64, {"N"}).scalar("a", DType::Float64);
  auto s = b.state("compute");
  s.mapped_tasklet("axpy", {{"i", "0:N"}}, {{"xi", "x[i]"}, {"yi", "y[i]"}}, "out = a * xi + yi", {{"out", "y[i]"}});
  return b.build();
}
}  // namespace

TEST(Builder, MappedTaskletIsValid) {
  auto sdfg = axpy();
  EXPECT_TRUE(validate(*sdfg).empty());
  const Block& st = *sdfg->root.blocks[0];
  ASSERT_EQ(st.nodes.size(), 6u);  // entry, exit, tasklet, x, y (read), y (write)
  EXPECT_EQ(st.node(0).kind, NodeKind::MapEntry);
  EXPECT_EQ(st.node(0).scope_exit, 1);
  EXPECT_EQ(st.node(1).scope_entry, 0);
  EXPECT_EQ(st.node(2).scope_entry, 0);
}

TEST(Builder, DumpShowsTheStructure) {
  EXPECT_EQ(dump(*axpy()),
            "sdfg axpy (dace 2.0.0a6)\n"
            "  symbols N: int32\n"
            "  data x: float64[N] storage=Default lifetime=Scope\n"
            "  data y: float64[N] storage=Default lifetime=Scope\n"
            "  data a: float64 scalar storage=Default lifetime=Scope\n"
            "  state 0 \"compute\"\n"
            "    [0] map axpy[i=0:N] schedule=Default\n"
            "    [1] map_exit of 0\n"
            "    [2] tasklet axpy (Python) (xi, yi) -> (out) in 0: out = a * xi + yi\n"
            "    [3] access x\n"
            "    [4] access y\n"
            "    [5] access y\n"
            "    3 -> 0:IN_x  x[0:N]\n"
            "    0:OUT_x -> 2:xi  x[i]\n"
            "    4 -> 0:IN_y  y[0:N]\n"
            "    0:OUT_y -> 2:yi  y[i]\n"
            "    2:out -> 1:IN_y  y[i] (dst)\n"
            "    1:OUT_y -> 5  y[0:N] (dst)\n");
}

TEST(Builder, RoundTripsThroughJson) {
  auto sdfg = axpy();
  std::string text = write_sdfg(*sdfg);
  auto back = read_sdfg(text);
  EXPECT_EQ(dump(*back), dump(*sdfg));
  EXPECT_EQ(write_sdfg(*back), text);
}

TEST(Builder, LoopsConditionsAndNestedSDFGs) {
  SDFGBuilder inner("inner");
  inner.symbol("L").array("v", DType::Float64, {"L"});
  inner.state("s").mapped_tasklet("inc", {{"i", "0:L"}}, {{"a", "v[i]"}}, "b = a + 1", {{"b", "v[i]"}});
  SDFGBuilder b("outer");
  b.symbol("N").array("A", DType::Float64, {"N"});
  auto s0 = b.state("call");
  int a_in = s0.access("A"), a_out = s0.access("A");
  int n = s0.nested(inner.build(), {"v"}, {"v"}, {{"L", "N - 1"}});
  s0.edge(a_in, "", n, "v", "A", "0:N - 1");
  s0.edge(n, "v", a_out, "", "A", "0:N - 1");
  b.loop("lp", "t", "0", "t < 3", "t + 1");
  b.chain();
  auto sdfg = b.build();
  EXPECT_TRUE(validate(*sdfg).empty());
  auto back = read_sdfg(write_sdfg(*sdfg));
  EXPECT_EQ(dump(*back), dump(*sdfg));
  EXPECT_EQ(back->root.blocks[1]->kind, BlockKind::Loop);
  EXPECT_EQ(back->root.blocks[0]->node(n).sdfg->name, "inner");
}

TEST(Builder, SubsetsUseExclusiveEnds) {
  Range r = parse_subset("1:N - 1, i, 0:M:2");
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(print_expr(r[0].end), "-2 + N");
  EXPECT_EQ(print_expr(r[1].start), "i");
  EXPECT_EQ(print_expr(r[2].step), "2");
  EXPECT_EQ(range_str(r), "1:-1 + N, i, 0:M:2");
}

TEST(Builder, BadInputIsAUserError) {
  SDFGBuilder b("x");
  b.array("A", DType::Float64, {"4"});
  EXPECT_THROW(b.array("A", DType::Float64, {"4"}), UserError);
  EXPECT_THROW(b.state("s").access("B"), UserError);
  EXPECT_THROW(parse_subset("0:N:1:2"), UserError);
  EXPECT_THROW(parse_subset("0:(N"), UserError);
}

TEST(Builder, ASecondBuildThrowsInsteadOfReturningNull) {
  SDFGBuilder b("once");
  b.symbol("N").array("x", DType::Float64, {"N"});
  auto first = b.build();
  ASSERT_TRUE(first);
  EXPECT_THROW(b.build(), std::logic_error);
}

/// The outer memlet of a container covers every inner access of it over the map's range (a
/// stencil's neighbours too): passes order GPU work by the outer memlets.
TEST(Builder, OuterMemletsCoverEveryInnerAccess) {
  SDFGBuilder b("stencil");
  b.symbol("N").symbol("K").array("u", DType::Float64, {"N + 2"}).array("t", DType::Float64, {"N + 2"});
  b.array("z", DType::Float64, {"N + 2"});
  b.state("s").mapped_tasklet("st", {{"i", "N // 2 + 1:N + 1"}},
                              {{"c", "u[i]"}, {"n", "u[i - 1]"}, {"s", "u[i + 1]"}, {"k", "z[K]"}, {"m", "z[i]"}},
                              "o = c + n + s + k + m", {{"o", "t[i]"}});
  auto sdfg = b.build();
  EXPECT_TRUE(validate(*sdfg).empty());
  std::map<std::string, std::string> outer;
  const Block& st = *sdfg->root.blocks[0];
  for (auto& e : st.edges)
    if (st.node(e.dst).kind == NodeKind::MapEntry)
      outer[e.memlet.data] = print_expr((*e.memlet.subset)[0].start) + ":" + print_expr((*e.memlet.subset)[0].end);
  EXPECT_EQ(outer["u"], "N // 2:1 + N");  // inclusive ends: rows N // 2 .. N + 1
  EXPECT_EQ(outer["z"], "0:1 + N");       // z[K] and z[i] are not comparable: the whole dimension
}
