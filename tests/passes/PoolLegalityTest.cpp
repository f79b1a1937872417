// pool-legality: pooled transients with several streams are accepted when their uses are ordered
// after the allocation and before the free; a pool with External lifetime, a pool inside a GPU
// kernel, and a schedule that leaves a pooled block's use unordered are rejected with errors that
// name the transient, the streams and the fix.
#include <fmt/format.h>

#include "TestUtil.h"
#include "compiler/Compile.h"
#include "ir/Builder.h"
#include "passes/Pipeline.h"
#include "passes/PoolLegality.h"

using namespace sdfc;
using namespace sdfc::test;

namespace {

CompileOptions cuda(int streams, TransientMode mode = TransientMode::AsDeclared) {
  CompileOptions o;
  o.target = Target::CUDA;
  o.gpu_streams = streams;
  o.transients = mode;
  return o;
}

/// State "use": `tmp` (pooled, sized by the symbol K that the interstate edge into the state
/// assigns, so it is allocated around that one state) is written by one kernel and read by two
/// independent ones, which run on two streams.
std::unique_ptr<SDFG> pooled_fanout() {
  SDFGBuilder b("pooled_fanout");
  b.symbol("N")
      .symbol("K")
      .array("x", DType::Float64, {"N"}, false, StorageType::GPU_Global)
      .array("tmp", DType::Float64, {"K"}, true, StorageType::GPU_Global)
      .array("y", DType::Float64, {"N"}, false, StorageType::GPU_Global)
      .array("z", DType::Float64, {"N"}, false, StorageType::GPU_Global);
  b.state("start");
  auto s = b.state("use");
  std::map<std::string, int> acc;
  s.mapped_tasklet("fill", {{"i", "0:K"}}, {{"a", "x[i]"}}, "b = a + 1.0", {{"b", "tmp[i]"}}, ScheduleType::GPU_Device,
                   &acc);
  s.mapped_tasklet("left", {{"i", "0:K"}}, {{"a", "tmp[i]"}}, "b = a * 2.0", {{"b", "y[i]"}}, ScheduleType::GPU_Device,
                   &acc);
  s.mapped_tasklet("right", {{"i", "0:K"}}, {{"a", "tmp[i]"}}, "b = a * 3.0", {{"b", "z[i]"}}, ScheduleType::GPU_Device,
                   &acc);
  b.edge(0, 1, "1", {{"K", "N - 1"}});
  auto sdfg = b.build();
  sdfg->find_data("tmp")->pool = true;
  return sdfg;
}

std::string error_of(SDFG& sdfg, const CompileOptions& o) {
  try {
    check_pool_legality(sdfg, o);
  } catch (const UserError& e) {
    return e.diagnostic().pointer + ": " + e.diagnostic().message;
  } catch (const std::logic_error& e) {  // a race in sdfc's own schedule: an internal error
    return e.what();
  }
  return "";
}

}  // namespace

TEST(PoolLegality, PooledTransientOnSeveralStreamsIsAccepted) {
  for (int streams : {0, 1, 2, 4}) {
    SCOPED_TRACE(streams);
    auto sdfg = pooled_fanout();
    EXPECT_NO_THROW(run_pipeline(*sdfg, cuda(streams)));
    const DataDesc* tmp = sdfg->find_data("tmp");
    EXPECT_EQ(tmp->place, DataDesc::Place::State);  // allocated around state "use"
  }
  // The two readers really run on two streams (otherwise this test proves nothing).
  auto sdfg = pooled_fanout();
  run_pipeline(*sdfg, cuda(2));
  std::set<int> streams;
  for (auto& n : sdfg->root.blocks[1]->nodes)
    if (n->kind == NodeKind::MapEntry) streams.insert(n->stream);
  EXPECT_EQ(streams, (std::set<int>{0, 1}));
}

TEST(PoolLegality, EveryCorpusGpuProgramInPoolModeIsAccepted) {
  auto files = supported_corpus_gpu_programs();
  if (files.empty()) GTEST_SKIP() << "corpus not found";
  for (const std::string& f : files)
    for (int streams : {0, 1, 2, 4}) {
      SCOPED_TRACE(fmt::format("{} --gpu-streams {}", f, streams));
      auto sdfg = load_sdfg_file(corpus_dir() + "/" + f);
      EXPECT_NO_THROW(run_pipeline(*sdfg, cuda(streams, TransientMode::Pool)));
    }
}

TEST(PoolLegality, AFreeNotOrderedAfterAnotherStreamsUseIsRejected) {
  auto sdfg = pooled_fanout();
  run_pipeline(*sdfg, cuda(2));
  Block& use = *sdfg->root.blocks[1];
  ASSERT_FALSE(use.join_events.empty());
  use.join_events.clear();  // stream 0 frees tmp without waiting for the reader on stream 1
  std::string e = error_of(*sdfg, cuda(2));
  EXPECT_NE(e.find("/attributes/_arrays/tmp: pooled transient \"tmp\" is used on a stream that nothing orders against "
                   "its pool free "
                   "on stream 0"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("this is an sdfc bug"), std::string::npos) << e;
  EXPECT_NE(e.find("on stream 1"), std::string::npos) << e;
  EXPECT_NE(e.find("compile with --gpu-streams 0, or remove pool from \"tmp\""), std::string::npos) << e;
}

TEST(PoolLegality, AnAllocationNotOrderedBeforeAnotherStreamsUseIsRejected) {
  if (corpus_dir().empty()) GTEST_SKIP() << "corpus not found";
  auto sdfg = load_sdfg_file(corpus_dir() + "/forkjoin2x2_s/program_gpu.sdfg");
  run_pipeline(*sdfg, cuda(2, TransientMode::Pool));
  Block& st = *sdfg->root.blocks[0];
  ASSERT_GE(st.fork_event, 0);
  st.fork_event = -1;  // stream 1 starts without waiting for stream 0's allocations
  st.fork_streams.clear();
  std::string e = error_of(*sdfg, cuda(2, TransientMode::Pool));
  EXPECT_NE(e.find("is used on a stream that nothing orders against its pool allocation on stream 0"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("on stream 1"), std::string::npos) << e;
}

TEST(PoolLegality, PoolWithExternalLifetimeIsRejected) {
  auto sdfg = pooled_fanout();
  sdfg->find_data("tmp")->lifetime = Lifetime::External;
  try {
    run_pipeline(*sdfg, cuda(2));
    FAIL() << "accepted";
  } catch (const UserError& e) {
    EXPECT_EQ(e.diagnostic().pointer, "/attributes/_arrays/tmp");
    EXPECT_EQ(e.diagnostic().message,
              "transient \"tmp\" is marked pool but has External lifetime: the caller owns its memory, so sdfc cannot "
              "allocate it "
              "from the pool; remove pool, or make its lifetime Scope");
  }
}

TEST(PoolLegality, PoolInsideAGpuKernelIsRejected) {
  // `t` is used only inside the kernel's map scope (a per-thread buffer).
  SDFGBuilder b("pool_in_kernel");
  b.symbol("N")
      .array("x", DType::Float64, {"N"}, false, StorageType::GPU_Global)
      .array("t", DType::Float64, {"1"}, true, StorageType::GPU_Global)
      .array("y", DType::Float64, {"N"}, false, StorageType::GPU_Global);
  std::map<std::string, int> acc;
  b.state("s").mapped_tasklet("k", {{"i", "0:N"}}, {{"a", "x[i]"}}, "b = a", {{"b", "y[i]"}}, ScheduleType::GPU_Device,
                              &acc);
  auto sdfg = b.build();
  sdfg->find_data("t")->pool = true;
  DataDesc& t = *sdfg->find_data("t");
  Block& st = *sdfg->root.blocks[0];
  int entry = -1;
  for (std::size_t i = 0; i < st.nodes.size(); ++i)
    if (st.nodes[i]->kind == NodeKind::MapEntry) entry = static_cast<int>(i);
  ASSERT_GE(entry, 0);
  t.place = DataDesc::Place::MapScope;  // what transient-lifetimes decides for a transient used only there
  t.place_state = &st;
  t.place_scope = entry;
  EXPECT_EQ(
      error_of(*sdfg, cuda(0)),
      "/attributes/_arrays/t: transient \"t\" is marked pool but is used only inside GPU kernel \"k\": stream-ordered "
      "allocation is a host call; remove pool (the kernel's scope allocates it), or use it outside the map too");
}

TEST(PoolLegality, NothingToCheckOnTheCpu) {
  auto sdfg = pooled_fanout();
  sdfg->find_data("tmp")->lifetime = Lifetime::External;  // would be rejected for a GPU target
  CompileOptions cpu;
  EXPECT_EQ(error_of(*sdfg, cpu), "");
}
