// Views (DaCe's ArrayView) end to end: programs that read and write through row, column,
// reshaping, transposing and chained views, compiled, run, and checked against values computed
// here; and the views fold-views refuses, each with a message naming the view.
#include <fmt/format.h>

#include <numeric>

#include "TestUtil.h"
#include "ir/Builder.h"
#include "sdfc/sdfc.h"

using namespace sdfc;
using namespace sdfc::test;

namespace {

constexpr int kN = 5, kM = 7;

/// X[N, M] = 0, 1, 2, ... and out (of `out_shape` elements) = -1; calls `p` with N, M.
struct ViewRun {
  std::vector<double> X = std::vector<double>(kN * kM), out;
  explicit ViewRun(std::size_t out_size) : out(out_size, -1.0) { std::iota(X.begin(), X.end(), 0.0); }
  void call(Program& p) {
    p.set_array("X", X.data(), X.size());
    p.set_array("out", out.data(), out.size());
    p.set_value("N", kN);
    p.set_value("M", kM);
    p.call();
  }
};

SDFGBuilder base(const std::string& name, const std::vector<std::string>& out_shape) {
  SDFGBuilder b(name);
  b.symbol("N").symbol("M").array("X", DType::Float64, {"N", "M"}).array("out", DType::Float64, out_shape);
  return b;
}

/// A map over `range` reading `in` (through the view node `v`) and writing `out_subset` of out.
void read_through(StateBuilder& s, int v, const std::vector<std::pair<std::string, std::string>>& range,
                  const std::string& in, const std::string& code, const std::string& out_subset) {
  std::map<std::string, int> outer{{s.state().node(v).data, v}};
  s.mapped_tasklet("use", range, {{"a", in}}, code, {{"b", out_subset}}, ScheduleType::Default, &outer);
}

std::string refusal(SDFGBuilder& b) {
  try {
    Program::compile_string(write_sdfg(*b.build()));
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST(Views, RowViewIsRead) {
  auto b = base("row_view", {"M"});
  b.view("row", DType::Float64, {"M"}, {"1"});
  auto s = b.state("s");
  int x = s.access("X"), v = s.access("row");
  s.view_of(v, x, "2, 0:M");
  read_through(s, v, {{"j", "0:M"}}, "row[j]", "b = a * 2", "out[j]");
  Program p = Program::compile_string(write_sdfg(*b.build()));
  ViewRun r(kM);
  r.call(p);
  for (int j = 0; j < kM; ++j) EXPECT_EQ(r.out[j], 2.0 * (2 * kM + j)) << j;
}

TEST(Views, StridedColumnViewIsRead) {
  auto b = base("column_view", {"N"});
  b.view("col", DType::Float64, {"N"}, {"M"});
  auto s = b.state("s");
  int x = s.access("X"), v = s.access("col");
  s.view_of(v, x, "0:N, 3");
  read_through(s, v, {{"i", "0:N"}}, "col[i]", "b = a + 0.5", "out[i]");
  Program p = Program::compile_string(write_sdfg(*b.build()));
  ViewRun r(kN);
  r.call(p);
  for (int i = 0; i < kN; ++i) EXPECT_EQ(r.out[i], i * kM + 3 + 0.5) << i;
}

TEST(Views, WriteViewWritesTheViewedRowOnly) {
  // out[N, M] keeps -1 except row 1, written through a view whose own offset is 0.
  auto b = base("write_view", {"N", "M"});
  b.view("w", DType::Float64, {"M"}, {"1"});
  auto s = b.state("s");
  int v = s.access("w"), o = s.access("out");
  std::map<std::string, int> outer{{"w", v}};
  s.mapped_tasklet("fill", {{"j", "0:M"}}, {{"a", "X[1, j]"}}, "b = a * 10", {{"b", "w[j]"}}, ScheduleType::Default,
                   &outer);
  s.view_of(v, o, "1, 0:M", /*written=*/true);
  Program p = Program::compile_string(write_sdfg(*b.build()));
  ViewRun r(kN * kM);
  r.call(p);
  for (int i = 0; i < kN; ++i)
    for (int j = 0; j < kM; ++j) EXPECT_EQ(r.out[i * kM + j], i == 1 ? 10.0 * (kM + j) : -1.0) << i << "," << j;
}

TEST(Views, ReshapeViewIsAddressedThroughTheLinearPosition) {
  // X[N, M] viewed as R[M, N] (contiguous): R[a, b] is element a * N + b of X.
  auto b = base("reshape_view", {"M", "N"});
  b.view("R", DType::Float64, {"M", "N"}, {"N", "1"});
  auto s = b.state("s");
  int x = s.access("X"), v = s.access("R");
  s.view_of(v, x, "0:N, 0:M");
  read_through(s, v, {{"a", "0:M"}, {"c", "0:N"}}, "R[a, c]", "b = a", "out[a, c]");
  Program p = Program::compile_string(write_sdfg(*b.build()));
  ViewRun r(kN * kM);
  r.call(p);
  for (int k = 0; k < kN * kM; ++k) EXPECT_EQ(r.out[k], r.X[k]) << k;
}

TEST(Views, TransposingViewReadsElementwise) {
  // T[M, N] with strides [1, M] is X transposed.
  auto b = base("transpose_view", {"M", "N"});
  b.view("T", DType::Float64, {"M", "N"}, {"1", "M"});
  auto s = b.state("s");
  int x = s.access("X"), v = s.access("T");
  s.view_of(v, x, "0:N, 0:M");
  read_through(s, v, {{"a", "0:M"}, {"c", "0:N"}}, "T[a, c]", "b = a", "out[a, c]");
  Program p = Program::compile_string(write_sdfg(*b.build()));
  ViewRun r(kN * kM);
  r.call(p);
  for (int a = 0; a < kM; ++a)
    for (int c = 0; c < kN; ++c) EXPECT_EQ(r.out[a * kN + c], r.X[c * kM + a]) << a << "," << c;
}

TEST(Views, ViewOfAViewAndACopyOutOfAView) {
  // tail = row[2:M] of row = X[3, 0:M]; out[0:M-2] = tail (a copy), out[M-2:M] stays -1.
  auto b = base("view_chain", {"M"});
  b.view("row", DType::Float64, {"M"}, {"1"}).view("tail", DType::Float64, {"M - 2"}, {"1"});
  auto s = b.state("s");
  int x = s.access("X"), row = s.access("row"), tail = s.access("tail"), o = s.access("out");
  s.view_of(row, x, "3, 0:M");
  s.view_of(tail, row, "2:M");
  s.copy(tail, o, "0:M - 2", "0:M - 2");
  Program p = Program::compile_string(write_sdfg(*b.build()));
  ViewRun r(kM);
  r.call(p);
  for (int k = 0; k < kM; ++k) EXPECT_EQ(r.out[k], k < kM - 2 ? 3.0 * kM + 2 + k : -1.0) << k;
}

TEST(Views, ViewInsideAMapScope) {
  // for i: row = X[i, :] (a view inside the map, fed by the map entry); for j: out[i, j] = 2 * row[j].
  auto b = base("scoped_view", {"N", "M"});
  b.view("row", DType::Float64, {"M"}, {"1"});
  auto s = b.state("s");
  int x = s.access("X"), o = s.access("out");
  auto [outer, outer_exit] = s.map("rows", {"i"}, {"0:N"});
  int v = s.access("row", outer);
  auto [inner, inner_exit] = s.map("cols", {"j"}, {"0:M"}, ScheduleType::Sequential, outer);
  int t = s.tasklet("t", {"a"}, {"b"}, "b = 2 * a", Language::Python, inner);
  s.edge(x, "", outer, "IN_X", "X", "0:N, 0:M");
  s.edge(outer, "OUT_X", v, "views", "X", "i, 0:M");
  s.state().node(v).in_connectors.push_back({"views", std::nullopt});
  s.edge(v, "", inner, "IN_row", "row", "0:M");
  s.edge(inner, "OUT_row", t, "a", "row", "j");
  s.edge(t, "b", inner_exit, "IN_out", "out", "i, j");
  s.edge(inner_exit, "OUT_out", outer_exit, "IN_out", "out", "i, 0:M");
  s.edge(outer_exit, "OUT_out", o, "", "out", "0:N, 0:M");
  Program p = Program::compile_string(write_sdfg(*b.build()));
  ViewRun r(kN * kM);
  r.call(p);
  for (int k = 0; k < kN * kM; ++k) EXPECT_EQ(r.out[k], 2 * r.X[k]) << k;
}

TEST(Views, UnsupportedViewsAreRefusedNamingTheView) {
  {  // a reinterpreting view
    auto b = base("reinterpret", {"M"});
    b.view("bits", DType::Int64, {"M"}, {"1"});
    auto s = b.state("s");
    int x = s.access("X"), v = s.access("bits");
    s.view_of(v, x, "0, 0:M");
    s.copy(v, s.access("out"), "0:M", "0:M");
    EXPECT_NE(refusal(b).find("view \"bits\" (int64) views \"X\" (float64): views that reinterpret data (numpy's "
                              "A.view(dtype)) are not supported; copy the data into an array of the view's dtype "
                              "(A.astype(dtype)), or reinterpret it outside the program"),
              std::string::npos)
        << refusal(b);
  }
  {  // a reshape (flattening) of an array that is not C-contiguous
    auto b = base("strided_reshape", {"N"});
    b.view("R", DType::Float64, {"N * M"}, {"1"});
    auto s = b.state("s");
    int x = s.access("X"), v = s.access("R");
    SDFG& g = b.sdfg();
    g.find_data("X")->strides = {parse_expr("2 * M"), parse_expr("2")};
    g.find_data("X")->total_size = parse_expr("2 * N * M");
    s.view_of(v, x, "0:N, 0:M");
    read_through(s, v, {{"i", "0:N"}}, "R[i]", "b = a", "out[i]");
    std::string msg = refusal(b);
    EXPECT_NE(msg.find("view \"R\" reshapes \"X\", whose strides [2 * M, 2] are not C-contiguous"), std::string::npos)
        << msg;
  }
  {  // ambiguous: two edges in, two out
    auto b = base("ambiguous", {"M"});
    b.view("v", DType::Float64, {"M"}, {"1"});
    auto s = b.state("s");
    int x = s.access("X"), v = s.access("v"), o = s.access("out");
    s.copy(x, v, "0, 0:M", "0:M");
    s.copy(x, v, "1, 0:M", "0:M");
    s.copy(v, o, "0:M", "0:M");
    s.copy(v, o, "0:M", "0:M");
    std::string msg = refusal(b);
    EXPECT_NE(msg.find("view \"v\" has 2 incoming and 2 outgoing edges: which one it views is ambiguous"),
              std::string::npos)
        << msg;
  }
}
