// fuse-maps: which pairs of maps fuse and which do not (each condition of passes/FuseMaps.h
// breaks one way), what the fused scope looks like, and that fusion leaves the results unchanged.
#include <fmt/format.h>

#include <numeric>

#include "TestUtil.h"
#include "ir/Builder.h"
#include "ir/JsonWriter.h"
#include "ir/Walk.h"
#include "passes/Pipeline.h"
#include "sdfc/sdfc.h"

using namespace sdfc;
using namespace sdfc::test;

namespace {

/// Two maps through transient t: first writes t[<write>] over <first range>, second reads
/// t[<read>] over <second range>. `edit` changes the SDFG before the pass runs.
struct Pair {
  std::string first_range = "0:N", second_range = "0:N";
  std::string write = "i", read = "i";
  std::string shape = "N";
  bool transient = true;
  std::string wcr;
  ScheduleType second_schedule = ScheduleType::Default;
  /// an extra input of the first map (read at `extra_read`) that the second map writes
  std::string extra_read;
};

std::unique_ptr<SDFG> pair_program(const Pair& p) {
  SDFGBuilder b("pair");
  b.symbol("N")
      .array("x", DType::Float64, {"N"})
      .array("t", DType::Float64, {p.shape}, p.transient)
      .array("y", DType::Float64, {"N"});
  auto s = b.state("s");
  std::map<std::string, int> outer;
  std::vector<std::pair<std::string, std::string>> ins = {{"a", "x[i]"}};
  if (!p.extra_read.empty()) ins.push_back({"e", "y[" + p.extra_read + "]"});
  std::string code = p.extra_read.empty() ? "b = a * 2.0" : "b = a * 2.0 + e";
  auto [e1, x1] = s.mapped_tasklet("first", {{"i", p.first_range}}, ins, code, {}, ScheduleType::Default, &outer);
  int tasklet = -1;
  for (int v = 0; v < static_cast<int>(s.state().nodes.size()); ++v)
    if (s.state().node(v).kind == NodeKind::Tasklet) tasklet = v;
  int t = s.access("t");
  s.state().node(tasklet).out_connectors.push_back({"b", std::nullopt});
  s.edge(tasklet, "b", x1, "IN_t", "t", p.write, p.wcr);
  s.edge(x1, "OUT_t", t, "", "t", "0:" + p.shape);
  outer["t"] = t;
  outer.erase("y");  // the second map writes its own access node of y, after the first read it
  s.mapped_tasklet("second", {{"i", p.second_range}}, {{"a", "t[" + p.read + "]"}}, "b = a + 1.0", {{"b", "y[i]"}},
                   p.second_schedule, &outer);
  (void)e1;
  return b.build();
}

/// y computed by the program of `p` on the CPU, with or without fusion, for N = 64.
std::vector<double> run_pair(const Pair& p, bool fuse) {
  Options o;
  o.fuse_maps = fuse;
  Program prog = Program::compile_string(write_sdfg(*pair_program(p)), o);
  std::vector<double> x(64), y(64, 0.5);
  std::iota(x.begin(), x.end(), 1.0);
  prog.set_array("x", x.data(), x.size());
  prog.set_array("y", y.data(), y.size());
  prog.set_value("N", 64);
  prog.call();
  return y;
}

}  // namespace

TEST(FuseMaps, APairThatContinuesPointByPointBecomesOneMap) {
  auto sdfg = pair_program({});
  ASSERT_EQ(map_count(*sdfg), 2);
  EXPECT_EQ(maps_after_fusion(*sdfg, true), 1);
  const DataDesc* t = sdfg->find_data("t");
  EXPECT_EQ(t->kind, DataKind::Scalar);
  EXPECT_EQ(t->storage, StorageType::Register);
  const Block& st = *sdfg->root.blocks[0];
  // the second map's tasklet is in the first map's scope and keeps its id in the file
  for (auto& n : st.nodes) {
    if (n->kind == NodeKind::Access && n->data == "t") {
      EXPECT_EQ(n->scope_entry, 0);
    }
    if (n->kind == NodeKind::Tasklet && n->label == "second") {
      EXPECT_EQ(n->scope_entry, 0);
      EXPECT_GT(n->file_id, 0);
    }
  }
}

TEST(FuseMaps, OffByDefault) {
  auto sdfg = pair_program({});
  EXPECT_EQ(maps_after_fusion(*sdfg, false), 2);
}

/// Each breaks one condition; the maps stay apart (and a wrong fusion would change y).
TEST(FuseMaps, PairsThatDoNotContinuePointByPointStayApart) {
  struct Case {
    const char* why;
    Pair p;
  };
  std::vector<Case> cases;
  Pair shifted;  // the second reads a neighbour's value
  shifted.shape = "N + 1";
  shifted.read = "i + 1";
  shifted.first_range = shifted.second_range = "0:N";
  cases.push_back({"the second map reads t at i + 1", shifted});
  Pair ranges;
  ranges.second_range = "1:N";
  cases.push_back({"the maps' ranges differ", ranges});
  Pair kept;
  kept.transient = false;
  kept.shape = "N";
  cases.push_back({"t is not a transient (the caller sees it)", kept});
  Pair wcr;
  wcr.wcr = "lambda a, b: a + b";
  cases.push_back({"the first map writes t with write-conflict resolution", wcr});
  Pair war;  // the first reads y[i - 1], which the second overwrites at i - 1
  war.extra_read = "i - 1";
  war.first_range = war.second_range = "1:N";
  cases.push_back({"the second map writes y, which the first reads", war});
  Pair schedule;
  schedule.second_schedule = ScheduleType::Sequential;
  cases.push_back({"the schedules differ", schedule});
  for (auto& c : cases) {
    SCOPED_TRACE(c.why);
    auto sdfg = pair_program(c.p);
    EXPECT_EQ(maps_after_fusion(*sdfg, true), 2);
  }
}

TEST(FuseMaps, ANonInjectiveWriteStaysApart) {
  // a 2D first map that writes t[i] at every j: the second map's point (i, j) would read the value
  // of whichever j wrote last
  SDFGBuilder b("noninjective");
  b.symbol("N").array("x", DType::Float64, {"N", "N"}).array("t", DType::Float64, {"N"}, true);
  b.array("y", DType::Float64, {"N", "N"});
  auto s = b.state("s");
  std::map<std::string, int> outer;
  s.mapped_tasklet("first", {{"i", "0:N"}, {"j", "0:N"}}, {{"a", "x[i, j]"}}, "b = a", {{"b", "t[i]"}},
                   ScheduleType::Default, &outer);
  s.mapped_tasklet("second", {{"i", "0:N"}, {"j", "0:N"}}, {{"a", "t[i]"}}, "b = a", {{"b", "y[i, j]"}},
                   ScheduleType::Default, &outer);
  auto sdfg = b.build();
  EXPECT_EQ(maps_after_fusion(*sdfg, true), 2);
}

TEST(FuseMaps, ATransientUsedInAnotherStateStaysAnArray) {
  SDFGBuilder b("two_states");
  b.symbol("N").array("x", DType::Float64, {"N"}).array("t", DType::Float64, {"N"}, true);
  b.array("y", DType::Float64, {"N"}).array("z", DType::Float64, {"N"});
  std::map<std::string, int> outer, later;
  auto s = b.state("s");
  s.mapped_tasklet("first", {{"i", "0:N"}}, {{"a", "x[i]"}}, "b = a", {{"b", "t[i]"}}, ScheduleType::Default, &outer);
  s.mapped_tasklet("second", {{"i", "0:N"}}, {{"a", "t[i]"}}, "b = a", {{"b", "y[i]"}}, ScheduleType::Default, &outer);
  b.state("s2").mapped_tasklet("third", {{"i", "0:N"}}, {{"a", "t[i]"}}, "b = a", {{"b", "z[i]"}},
                               ScheduleType::Default, &later);
  b.edge(0, 1);
  auto sdfg = b.build();
  EXPECT_EQ(maps_after_fusion(*sdfg, true), 3);
  EXPECT_EQ(sdfg->find_data("t")->kind, DataKind::Array);
}

TEST(FuseMaps, FusedAndUnfusedProgramsComputeTheSame) {
  Pair plain;
  std::vector<double> unfused = run_pair(plain, false), fused = run_pair(plain, true);
  for (std::size_t i = 0; i < fused.size(); ++i) EXPECT_EQ(fused[i], (i + 1.0) * 2.0 + 1.0) << i;
  EXPECT_EQ(fused, unfused);
  // the write-after-read hazard: had it fused, point i would read y[i - 1] after point i - 1
  // overwrote it (in every order a loop runs them)
  Pair war;
  war.extra_read = "i - 1";
  war.first_range = war.second_range = "1:N";
  std::vector<double> y = run_pair(war, true);
  EXPECT_EQ(y[0], 0.5);
  for (std::size_t i = 1; i < y.size(); ++i) EXPECT_EQ(y[i], (i + 1.0) * 2.0 + 0.5 + 1.0) << i;
}

TEST(FuseMaps, ABodyWithThreadBlockMapsStaysApart) {
  // the second kernel's body has a thread-block map, so it launches blocks of that shape: the
  // first map's body would run differently in it
  SDFGBuilder b("thread_block");
  b.symbol("N")
      .array("x", DType::Float64, {"N"}, false, StorageType::GPU_Global)
      .array("t", DType::Float64, {"N"}, true, StorageType::GPU_Global)
      .array("y", DType::Float64, {"N"}, false, StorageType::GPU_Global)
      .array("z", DType::Float64, {"N"}, false, StorageType::GPU_Global);
  auto s = b.state("s");
  std::map<std::string, int> outer;
  s.mapped_tasklet("first", {{"i", "0:N"}}, {{"a", "x[i]"}}, "b = a", {{"b", "t[i]"}}, ScheduleType::GPU_Device,
                   &outer);
  auto [e2, x2] = s.map("second", {"i"}, {"0:N"}, ScheduleType::GPU_Device);
  int r = s.tasklet("r", {"a"}, {"b"}, "b = a", Language::Python, e2);
  auto [eb, xb] = s.map("block", {"j"}, {"0:1"}, ScheduleType::GPU_ThreadBlock, e2);
  int w = s.tasklet("w", {}, {"b"}, "b = 1.0", Language::Python, eb);
  int y = s.access("y"), z = s.access("z");
  s.edge(outer.at("t"), "", e2, "IN_t", "t", "0:N");
  s.edge(e2, "OUT_t", r, "a", "t", "i");
  s.edge(r, "b", x2, "IN_y", "y", "i");
  s.edge(x2, "OUT_y", y, "", "y", "0:N");
  s.edge(e2, "", eb, "", "", "");
  s.edge(eb, "", w, "", "", "");
  s.edge(w, "b", xb, "IN_z", "z", "i");
  s.edge(xb, "OUT_z", x2, "IN_z", "z", "i");
  s.edge(x2, "OUT_z", z, "", "z", "0:N");
  auto sdfg = b.build();
  EXPECT_EQ(maps_after_fusion(*sdfg, true, Target::CUDA), 3);
}
