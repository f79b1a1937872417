// workspace-layout: External transients get 256-byte aligned offsets; bytes are shared only
// between transients whose uses the schedule orders one after the other.
#include "TestUtil.h"
#include "ir/Builder.h"
#include "passes/Pipeline.h"

using namespace sdfc;
using namespace sdfc::test;

namespace {

/// x -> t1 (state 0) -> t2 (state 1) -> t3 (state 2) -> y (state 3); int32 arrays of N elements.
/// `back_edge`: state 2 may go back to state 1, which puts states 1 and 2 on one cycle.
std::unique_ptr<SDFG> chain(bool back_edge = false, Lifetime t3_lifetime = Lifetime::Scope) {
  SDFGBuilder b("chain");
  b.symbol("N").array("x", DType::Int32, {"N"}).array("y", DType::Int32, {"N"});
  b.array("t1", DType::Int32, {"N"}, true).array("t2", DType::Int32, {"N"}, true);
  b.array("t3", DType::Int32, {"N"}, true, StorageType::Default, t3_lifetime);
  std::map<std::string, int> m0, m1, m2, m3;
  b.state("s0").mapped_tasklet("a", {{"i", "0:N"}}, {{"a", "x[i]"}}, "b = a + 1", {{"b", "t1[i]"}}, ScheduleType::Default, &m0);
  b.state("s1").mapped_tasklet("b", {{"i", "0:N"}}, {{"a", "t1[i]"}}, "b = a * 2", {{"b", "t2[i]"}}, ScheduleType::Default, &m1);
  b.state("s2").mapped_tasklet("c", {{"i", "0:N"}}, {{"a", "t2[i]"}}, "b = a + 3", {{"b", "t3[i]"}}, ScheduleType::Default, &m2);
  b.state("s3").mapped_tasklet("d", {{"i", "0:N"}}, {{"a", "t3[i]"}}, "b = a", {{"b", "y[i]"}}, ScheduleType::Default, &m3);
  b.edge(0, 1).edge(1, 2).edge(2, 3, back_edge ? "x[0] > 0" : "1");
  if (back_edge) b.edge(2, 1, "x[0] <= 0");
  return b.build();
}

const Workspace& only_workspace(const SDFG& sdfg) {
  EXPECT_EQ(sdfg.workspaces.size(), 1u);
  return sdfg.workspaces.at(0);
}

std::int64_t at(const Expr& e, std::int64_t n) { return evaluate(e, {{"N", n}}).value_or(-1); }

CompileOptions external() {
  CompileOptions o;
  o.transients = TransientMode::External;
  return o;
}

}  // namespace

TEST(WorkspaceLayout, TransientsWithDisjointLiveRangesShareBytes) {
  auto sdfg = chain();
  run_pipeline(*sdfg, external());
  const Workspace& ws = only_workspace(*sdfg);
  EXPECT_EQ(ws.storage, StorageType::CPU_Heap);
  EXPECT_EQ(ws.members, (std::vector<std::string>{"t1", "t2", "t3"}));
  EXPECT_EQ(ws.alignment, 4u);
  // t1 (states 0-1) and t3 (states 2-3) take turns; t2 (states 1-2) overlaps both.
  const Expr& o1 = sdfg->find_data("t1")->workspace_offset;
  const Expr& o2 = sdfg->find_data("t2")->workspace_offset;
  const Expr& o3 = sdfg->find_data("t3")->workspace_offset;
  ASSERT_TRUE(o1 && o2 && o3);
  EXPECT_EQ(at(o1, 100), at(o3, 100));
  EXPECT_NE(at(o1, 100), at(o2, 100));
  for (std::int64_t n : {1, 64, 65, 100, 1000}) {
    std::int64_t slot = (4 * n + 255) / 256 * 256;
    EXPECT_EQ(at(ws.bytes, n), 2 * slot) << "N=" << n;
    EXPECT_EQ(at(ws.unshared_bytes, n), 3 * slot) << "N=" << n;
    EXPECT_EQ(at(o2, n) % 256, 0);
  }
}

TEST(WorkspaceLayout, BlocksOnACycleShareAPosition) {
  auto sdfg = chain(/*back_edge=*/true);
  run_pipeline(*sdfg, external());
  const Workspace& ws = only_workspace(*sdfg);
  // States 1 and 2 repeat: t1 (read in state 1) is live while t3 is written in state 2.
  EXPECT_EQ(at(ws.bytes, 100), 3 * 512);
  EXPECT_NE(at(sdfg->find_data("t1")->workspace_offset, 100), at(sdfg->find_data("t3")->workspace_offset, 100));
}

TEST(WorkspaceLayout, WhatTheFileDeclaresExternalKeepsItsOwnBytes) {
  auto sdfg = chain(false, Lifetime::External);
  run_pipeline(*sdfg, external());
  const Workspace& ws = only_workspace(*sdfg);
  EXPECT_EQ(at(ws.bytes, 100), 3 * 512);
  EXPECT_NE(at(sdfg->find_data("t1")->workspace_offset, 100), at(sdfg->find_data("t3")->workspace_offset, 100));
}

TEST(WorkspaceLayout, OtherModesHaveNoWorkspace) {
  for (TransientMode m : {TransientMode::AsDeclared, TransientMode::Scoped, TransientMode::Persistent}) {
    auto sdfg = chain();
    CompileOptions o;
    o.transients = m;
    run_pipeline(*sdfg, o);
    EXPECT_TRUE(sdfg->workspaces.empty());
    EXPECT_FALSE(sdfg->find_data("t1")->workspace_offset);
  }
}

TEST(WorkspaceLayout, GpuStorageNeedsAGpuTarget) {
  auto sdfg = chain(false, Lifetime::External);
  sdfg->find_data("t3")->storage = StorageType::GPU_Global;
  try {
    run_pipeline(*sdfg, external());
    FAIL() << "expected an error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.diagnostic().pointer, "/attributes/_arrays/t3/attributes/storage");
    EXPECT_NE(e.diagnostic().message.find("needs a GPU target"), std::string::npos) << e.what();
  }
}
