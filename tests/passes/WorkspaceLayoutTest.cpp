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
  b.state("s0").mapped_tasklet("a", {{"i", "0:N"}}, {{"a", "x[i]"}}, "b = a + 1", {{"b", "t1[i]"}},
                               ScheduleType::Default, &m0);
  b.state("s1").mapped_tasklet("b", {{"i", "0:N"}}, {{"a", "t1[i]"}}, "b = a * 2", {{"b", "t2[i]"}},
                               ScheduleType::Default, &m1);
  b.state("s2").mapped_tasklet("c", {{"i", "0:N"}}, {{"a", "t2[i]"}}, "b = a + 3", {{"b", "t3[i]"}},
                               ScheduleType::Default, &m2);
  b.state("s3").mapped_tasklet("d", {{"i", "0:N"}}, {{"a", "t3[i]"}}, "b = a", {{"b", "y[i]"}}, ScheduleType::Default,
                               &m3);
  b.edge(0, 1).edge(1, 2).edge(2, 3, back_edge ? "x[0] > 0" : "1");
  if (back_edge) b.edge(2, 1, "x[0] <= 0");
  return b.build();
}

const Workspace& only_workspace(const SDFG& sdfg) {
  EXPECT_EQ(sdfg.workspaces.size(), 1u);
  return sdfg.workspaces.at(0);
}

std::int64_t at(const Expr& e, std::int64_t n) {
  return evaluate(e, {{"N", n}}).value_or(-1);
}

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

namespace {

/// One state: x -> t1 -> t2 -> t3 -> t4 -> y through five GPU kernels (a chain, one stream).
std::unique_ptr<SDFG> gpu_chain_in_one_state() {
  SDFGBuilder b("one_state_chain");
  b.symbol("N")
      .array("x", DType::Float64, {"N"}, false, StorageType::GPU_Global)
      .array("y", DType::Float64, {"N"}, false, StorageType::GPU_Global);
  for (int i = 1; i <= 4; ++i) b.array("t" + std::to_string(i), DType::Float64, {"N"}, true, StorageType::GPU_Global);
  auto s = b.state("s");
  std::map<std::string, int> acc;
  std::vector<std::string> names = {"x", "t1", "t2", "t3", "t4", "y"};
  for (std::size_t i = 0; i + 1 < names.size(); ++i)
    s.mapped_tasklet("k" + std::to_string(i), {{"i", "0:N"}}, {{"a", names[i] + "[i]"}}, "b = a + 1.0",
                     {{"b", names[i + 1] + "[i]"}}, ScheduleType::GPU_Device, &acc);
  return b.build();
}

CompileOptions gpu_external(int streams) {
  CompileOptions o = external();
  o.target = Target::CUDA;
  o.gpu_streams = streams;
  return o;
}

std::int64_t offset_of(const SDFG& sdfg, const std::string& n) {
  return at(sdfg.find_data(n)->workspace_offset, 100);
}

}  // namespace

TEST(WorkspaceLayout, KernelsInOneStateOnOneStreamShareBytes) {
  // Positions inside a state follow the issue order: t1 is dead once kernel k1 (t1 -> t2) is done,
  // so t3 (written by k2, after k1 on the same stream) takes its bytes; a kernel's input and output
  // never share (k1 reads t1 while it writes t2).
  for (int streams : {0, 2}) {
    SCOPED_TRACE(streams);
    auto sdfg = gpu_chain_in_one_state();
    run_pipeline(*sdfg, gpu_external(streams));
    const Workspace& ws = only_workspace(*sdfg);
    EXPECT_EQ(ws.storage, StorageType::GPU_Global);
    EXPECT_EQ(offset_of(*sdfg, "t1"), offset_of(*sdfg, "t3"));
    EXPECT_EQ(offset_of(*sdfg, "t2"), offset_of(*sdfg, "t4"));
    EXPECT_NE(offset_of(*sdfg, "t1"), offset_of(*sdfg, "t2"));
    EXPECT_EQ(at(ws.bytes, 100), 2 * 1024);
    EXPECT_EQ(at(ws.unshared_bytes, 100), 4 * 1024);
  }
}

TEST(WorkspaceLayout, KernelsInOneStateOnTwoStreamsDoNotShare) {
  // Two independent branches x -> a1 -> ya and x -> b1 -> yb run on two streams: nothing orders a1's
  // last use before b1's first, so they keep bytes of their own although a1's kernels come first.
  auto program = [] {
    SDFGBuilder b("two_branches");
    b.symbol("N")
        .array("x", DType::Float64, {"N"}, false, StorageType::GPU_Global)
        .array("ya", DType::Float64, {"N"}, false, StorageType::GPU_Global)
        .array("yb", DType::Float64, {"N"}, false, StorageType::GPU_Global)
        .array("a1", DType::Float64, {"N"}, true, StorageType::GPU_Global)
        .array("b1", DType::Float64, {"N"}, true, StorageType::GPU_Global);
    auto s = b.state("s");
    std::map<std::string, int> acc;
    s.mapped_tasklet("ka", {{"i", "0:N"}}, {{"v", "x[i]"}}, "o = v + 1.0", {{"o", "a1[i]"}}, ScheduleType::GPU_Device,
                     &acc);
    s.mapped_tasklet("ka2", {{"i", "0:N"}}, {{"v", "a1[i]"}}, "o = v + 1.0", {{"o", "ya[i]"}}, ScheduleType::GPU_Device,
                     &acc);
    s.mapped_tasklet("kb", {{"i", "0:N"}}, {{"v", "x[i]"}}, "o = v + 2.0", {{"o", "b1[i]"}}, ScheduleType::GPU_Device,
                     &acc);
    s.mapped_tasklet("kb2", {{"i", "0:N"}}, {{"v", "b1[i]"}}, "o = v + 2.0", {{"o", "yb[i]"}}, ScheduleType::GPU_Device,
                     &acc);
    return b.build();
  };
  auto sdfg = program();
  run_pipeline(*sdfg, gpu_external(2));
  std::set<int> streams;
  for (auto& n : sdfg->root.blocks[0]->nodes)
    if (n->kind == NodeKind::MapEntry) streams.insert(n->stream);
  ASSERT_EQ(streams, (std::set<int>{0, 1}));
  EXPECT_NE(offset_of(*sdfg, "a1"), offset_of(*sdfg, "b1"));
  // With one stream the same program shares: the stream orders the branches.
  auto one = program();
  run_pipeline(*one, gpu_external(0));
  EXPECT_EQ(offset_of(*one, "a1"), offset_of(*one, "b1"));
}

TEST(WorkspaceLayout, PerCallGpuTransientsShareOneArena) {
  // At DaCe's default lifetimes the chain's GPU transients are allocated once per call: one arena
  // (one allocation) holds them, with the same sharing as a workspace (t1/t3 and t2/t4).
  CompileOptions o;
  o.target = Target::CUDA;
  auto sdfg = gpu_chain_in_one_state();
  run_pipeline(*sdfg, o);
  EXPECT_TRUE(sdfg->workspaces.empty());
  EXPECT_EQ(sdfg->arena.members, (std::vector<std::string>{"t1", "t2", "t3", "t4"}));
  EXPECT_EQ(at(sdfg->arena.bytes, 100), 2 * 1024);
  EXPECT_EQ(at(sdfg->arena.unshared_bytes, 100), 4 * 1024);
  auto arena_at = [&](const std::string& n) { return at(sdfg->find_data(n)->arena_offset, 100); };
  EXPECT_EQ(arena_at("t1"), arena_at("t3"));
  EXPECT_NE(arena_at("t1"), arena_at("t2"));
  // Not in the arena: pooled transients (stream-ordered allocation), the other modes, the CPU.
  auto pooled = gpu_chain_in_one_state();
  pooled->find_data("t2")->pool = true;
  run_pipeline(*pooled, o);
  EXPECT_EQ(pooled->arena.members, (std::vector<std::string>{"t1", "t3", "t4"}));
  EXPECT_FALSE(pooled->find_data("t2")->arena_offset);
  for (TransientMode m : {TransientMode::Persistent, TransientMode::External, TransientMode::Pool}) {
    auto other = gpu_chain_in_one_state();
    CompileOptions om = o;
    om.transients = m;
    run_pipeline(*other, om);
    EXPECT_TRUE(other->arena.members.empty()) << to_string(m);
  }
  auto cpu = chain();
  run_pipeline(*cpu, CompileOptions{});
  EXPECT_TRUE(cpu->arena.members.empty());
}
