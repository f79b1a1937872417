// stream-assignment and the events of the synchronization pass on a small fork-join built here:
// two kernels that only share an input run on two streams with no event between them; the merge
// waits for exactly one event; the verifier proves the result. Across two states that follow each
// other, streams carry their work without a join in between.
#include <fmt/format.h>

#include <random>

#include "StreamTasklet.h"
#include "TestUtil.h"
#include "TwoStages.h"
#include "analysis/GpuOps.h"
#include "compiler/Compile.h"
#include "ir/Builder.h"
#include "ir/JsonWriter.h"
#include "passes/Pipeline.h"
#include "passes/VerifySync.h"

using namespace sdfc;
using namespace sdfc::test;

namespace {

std::unique_ptr<SDFG> fork_join() {
  SDFGBuilder b("fj");
  b.symbol("N");
  for (const char* a : {"x", "y"}) b.array(a, DType::Float64, {"N"}, false, StorageType::GPU_Global);
  for (const char* a : {"a", "c"}) b.array(a, DType::Float64, {"N"}, true, StorageType::GPU_Global);
  auto s = b.state("s");
  std::map<std::string, int> acc;
  s.mapped_tasklet("left", {{"i", "0:N"}}, {{"v", "x[i]"}}, "o = v * 2.0", {{"o", "a[i]"}}, ScheduleType::GPU_Device,
                   &acc);
  s.mapped_tasklet("right", {{"i", "0:N"}}, {{"v", "x[i]"}}, "o = v - 1.0", {{"o", "c[i]"}}, ScheduleType::GPU_Device,
                   &acc);
  s.mapped_tasklet("merge", {{"i", "0:N"}}, {{"p", "a[i]"}, {"q", "c[i]"}}, "o = p + q", {{"o", "y[i]"}},
                   ScheduleType::GPU_Device, &acc);
  return b.build();
}

const Node& map_named(const SDFG& sdfg, const std::string& label) {
  for (auto& n : sdfg.root.blocks[0]->nodes)
    if (n->kind == NodeKind::MapEntry && n->map.label == label) return *n;
  throw std::runtime_error("no map " + label);
}

}  // namespace

TEST(StreamAssignment, IndependentKernelsSharingAnInputRunConcurrently) {
  for (int streams : {0, 1, 2, 4}) {
    SCOPED_TRACE(streams);
    auto sdfg = fork_join();
    CompileOptions o;
    o.target = Target::CUDA;
    o.gpu_streams = streams;
    run_pipeline(*sdfg, o);
    const Node &left = map_named(*sdfg, "left"), &right = map_named(*sdfg, "right"), &merge = map_named(*sdfg, "merge");
    EXPECT_EQ(left.stream, 0);
    EXPECT_EQ(right.stream, streams >= 2 ? 1 : 0);
    EXPECT_EQ(merge.stream, 0);  // continues the first branch's chain
    EXPECT_TRUE(left.wait_events.empty());
    EXPECT_TRUE(right.wait_events.empty());  // reading x together needs no ordering
    if (streams >= 2) {
      ASSERT_EQ(merge.wait_events.size(), 1u);  // the other branch's event; its own is stream order
      EXPECT_EQ(merge.wait_events[0], right.record_event);
      EXPECT_EQ(sdfg->root.blocks[0]->fork_streams, std::vector<int>{1});
      EXPECT_TRUE(sdfg->root.blocks[0]->join_events.empty());  // stream 0 already waited for stream 1
      EXPECT_EQ(sdfg->num_events, 2);                          // right's event and the fork
    } else {
      EXPECT_TRUE(merge.wait_events.empty());
      EXPECT_EQ(sdfg->num_events, 0);
    }
    SyncReport r = verify_sync(*sdfg, o);
    EXPECT_TRUE(r.ok());
  }
}

namespace {
/// Two kernels writing parts of one transient (`right_range` decides whether they overlap), then
/// one kernel reading all of it.
std::unique_ptr<SDFG> halves(const std::string& right_range) {
  SDFGBuilder b("halves");
  b.symbol("N");
  for (const char* a : {"x", "y"}) b.array(a, DType::Float64, {"N"}, false, StorageType::GPU_Global);
  b.array("t", DType::Float64, {"N"}, true, StorageType::GPU_Global);
  auto s = b.state("s");
  std::map<std::string, int> acc;
  s.mapped_tasklet("left", {{"i", "0:N // 2"}}, {{"v", "x[i]"}}, "o = v * 2.0", {{"o", "t[i]"}},
                   ScheduleType::GPU_Device, &acc);
  s.mapped_tasklet("right", {{"i", right_range}}, {{"v", "x[i]"}}, "o = v - 1.0", {{"o", "t[i]"}},
                   ScheduleType::GPU_Device, &acc);
  s.mapped_tasklet("all", {{"i", "0:N"}}, {{"v", "t[i]"}}, "o = v", {{"o", "y[i]"}}, ScheduleType::GPU_Device, &acc);
  return b.build();
}
}  // namespace

TEST(StreamAssignment, WritesToDisjointPartsOfOneContainerRunConcurrently) {
  CompileOptions o;
  o.target = Target::CUDA;
  o.gpu_streams = 2;
  auto disjoint = halves("N // 2:N");
  run_pipeline(*disjoint, o);
  // The builder's outer memlets cover each map's range: t[0:N//2] and t[N//2:N] share no element.
  EXPECT_EQ(map_named(*disjoint, "left").stream, 0);
  EXPECT_EQ(map_named(*disjoint, "right").stream, 1);
  EXPECT_TRUE(map_named(*disjoint, "right").wait_events.empty());
  EXPECT_EQ(map_named(*disjoint, "all").wait_events.size(), 1u);  // reads both halves
  EXPECT_TRUE(verify_sync(*disjoint, o).ok());
  // Overlapping by one element: the second writer is ordered after the first (same stream here).
  auto overlapping = halves("N // 2 - 1:N");
  run_pipeline(*overlapping, o);
  EXPECT_EQ(map_named(*overlapping, "right").stream, 0);
  SyncReport r = verify_sync(*overlapping, o);
  EXPECT_TRUE(r.ok());
  // Forcing the overlapping writers onto two streams without an event is caught by the verifier.
  const_cast<Node&>(map_named(*overlapping, "right")).stream = 1;
  EXPECT_FALSE(verify_sync(*overlapping, o).ok());
}

TEST(StreamAssignment, CopiesIntoDisjointPartsRunConcurrently) {
  // Two host arrays copied into the two halves of one device array, then a kernel reading all of it.
  SDFGBuilder b("halves_copy");
  b.symbol("N");
  b.array("a", DType::Float64, {"N"}).array("b", DType::Float64, {"N"});
  b.array("d", DType::Float64, {"2 * N"}, false, StorageType::GPU_Global);
  b.array("y", DType::Float64, {"2 * N"}, false, StorageType::GPU_Global);
  auto s = b.state("s");
  int a = s.access("a"), bb = s.access("b"), d = s.access("d");
  s.copy(a, d, "0:N", "0:N");
  s.copy(bb, d, "0:N", "N:2 * N");
  std::map<std::string, int> acc{{"d", d}};
  s.mapped_tasklet("use", {{"i", "0:2 * N"}}, {{"v", "d[i]"}}, "o = v", {{"o", "y[i]"}}, ScheduleType::GPU_Device,
                   &acc);
  auto sdfg = b.build();
  CompileOptions o;
  o.target = Target::CUDA;
  o.gpu_streams = 2;
  run_pipeline(*sdfg, o);
  const Block& st = *sdfg->root.blocks[0];
  ASSERT_EQ(st.edges[0].stream, 0);
  ASSERT_EQ(st.edges[1].stream, 1);  // d[0:N] and d[N:2N] share no element
  EXPECT_TRUE(st.edges[1].wait_events.empty());
  EXPECT_EQ(map_named(*sdfg, "use").wait_events.size(), 1u);  // reads both halves
  EXPECT_TRUE(verify_sync(*sdfg, o).ok());
}

// Schedules across states: two states that follow each other unconditionally share their streams'
// clocks (tests/TwoStages.h), so a second-state kernel waits only for what it reads.
namespace {

const int kReps[2][4] = {{20, 2, 2, 2}, {2, 20, 20, 20}};

CompileOptions cuda_streams(int streams) {
  CompileOptions o;
  o.target = Target::CUDA;
  o.gpu_streams = streams;
  return o;
}

std::unique_ptr<SDFG> two_stages_scheduled(int shift, bool joined, int streams, bool graph = false) {
  auto sdfg = load_sdfg_text(two_stages(kReps, shift, joined), "two_stages");
  CompileOptions o = cuda_streams(streams);
  o.gpu_graph = graph;
  run_pipeline(*sdfg, o);
  return sdfg;
}

/// With `waiter`'s events removed, the verifier (4 streams) reports exactly `race`.
void expect_race_without_events(SDFG& sdfg, Node& waiter, const std::string& race) {
  waiter.wait_events.clear();
  SyncReport r = verify_sync(sdfg, cuda_streams(4));
  ASSERT_EQ(r.races.size(), 1u);
  EXPECT_EQ(r.races[0], race);
}

Node& kernel(SDFG& sdfg, int state, const std::string& label) {
  for (auto& n : sdfg.root.blocks[static_cast<std::size_t>(state)]->nodes)
    if (n->kind == NodeKind::MapEntry && n->map.label == label) return *n;
  throw std::runtime_error("no map " + label);
}

}  // namespace

TEST(Synchronization, StreamsCarryTheirWorkIntoTheNextState) {
  auto sdfg = two_stages_scheduled(0, false, 4);
  Block &first = *sdfg->root.blocks[0], &second = *sdfg->root.blocks[1];
  EXPECT_EQ(first.fork_streams, (std::vector<int>{1, 2, 3}));
  EXPECT_TRUE(first.join_events.empty());  // no join between the states
  EXPECT_EQ(second.fork_event, -1);        // nor a second fork
  for (int k = 0; k < 4; ++k) {            // each kernel follows its producer on its own stream
    Node& b = kernel(*sdfg, 1, "b" + std::to_string(k));
    EXPECT_EQ(b.stream, kernel(*sdfg, 0, "a" + std::to_string(k)).stream);
    EXPECT_TRUE(b.wait_events.empty()) << k;
  }
  ASSERT_EQ(second.join_events.size(), 3u);  // the chain's end
  EXPECT_EQ(sdfg->num_events, 4);            // the fork and three joins (was: two forks, six joins)
  SyncReport r = verify_sync(*sdfg, cuda_streams(4));
  EXPECT_TRUE(r.ok()) << r.races.front();
}

TEST(Synchronization, AKernelWaitsAcrossTheStateBoundaryForTheOneItReads) {
  auto sdfg = two_stages_scheduled(1, false, 4);
  for (int k = 0; k < 4; ++k) {
    Node& b = kernel(*sdfg, 1, "b" + std::to_string(k));
    Node& a = kernel(*sdfg, 0, "a" + std::to_string((k + 1) % 4));
    ASSERT_EQ(b.wait_events.size(), 1u) << k;
    EXPECT_EQ(b.wait_events[0], a.record_event) << k;
  }
  ASSERT_TRUE(verify_sync(*sdfg, cuda_streams(4)).ok());
  // Without the wait, the verifier finds the race across the state boundary.
  expect_race_without_events(
      *sdfg, kernel(*sdfg, 1, "b2"),
      "kernel a3 in state \"first\" writes on stream 3 and kernel b2 in state \"second\" reads on "
      "stream 2 are not ordered (container y3)");
}

TEST(Synchronization, StatesJoinWhereControlFlowMayLeave) {
  // A condition on the edge: the first state may be the last, so its streams join there.
  auto sdfg = two_stages_scheduled(1, true, 4);
  Block &first = *sdfg->root.blocks[0], &second = *sdfg->root.blocks[1];
  EXPECT_EQ(first.join_events.size(), 3u);
  EXPECT_EQ(second.fork_streams, (std::vector<int>{1, 2, 3}));
  for (int k = 0; k < 4; ++k) EXPECT_TRUE(kernel(*sdfg, 1, "b" + std::to_string(k)).wait_events.empty()) << k;
  EXPECT_TRUE(verify_sync(*sdfg, cuda_streams(4)).ok());
}

TEST(Synchronization, StatesChainUnderGpuGraphToo) {
  // --gpu-graph: the whole call is one graph, and its two states chain as in stream mode (no join
  // between them: events become graph edges, so independent work of the two states overlaps).
  auto sdfg = two_stages_scheduled(1, false, 4, true);
  ASSERT_TRUE(sdfg->gpu_graph);
  Block &first = *sdfg->root.blocks[0], &second = *sdfg->root.blocks[1];
  EXPECT_TRUE(first.join_events.empty());
  EXPECT_EQ(second.fork_event, -1);
  ASSERT_EQ(second.join_events.size(), 3u);  // the chain's end: the capture ends joined
  for (int k = 0; k < 4; ++k) {
    Node& b = kernel(*sdfg, 1, "b" + std::to_string(k));
    ASSERT_EQ(b.wait_events.size(), 1u) << k;
    EXPECT_EQ(b.wait_events[0], kernel(*sdfg, 0, "a" + std::to_string((k + 1) % 4)).record_event) << k;
  }
  EXPECT_TRUE(verify_sync(*sdfg, cuda_streams(4)).ok());
}

namespace {

std::unique_ptr<SDFG> loop_stages_scheduled(int shift, bool joined, int streams) {
  auto sdfg = load_sdfg_text(loop_stages(kReps, shift, joined), "loop_stages");
  run_pipeline(*sdfg, cuda_streams(streams));
  return sdfg;
}

Node& loop_kernel(SDFG& sdfg, int state, const std::string& label) {
  for (auto& n : sdfg.root.blocks[0]->blocks[static_cast<std::size_t>(state)]->nodes)
    if (n->kind == NodeKind::MapEntry && n->map.label == label) return *n;
  throw std::runtime_error("no map " + label);
}

}  // namespace

TEST(Synchronization, StreamsCarryTheirWorkAcrossLoopIterations) {
  // Kernel a_k reads x_{k+1}, which b_{k+1} wrote on another stream in the previous iteration, and
  // b_{k+1} overwrites it after a_k read it in this one: both are events, not a join per iteration.
  auto sdfg = loop_stages_scheduled(1, false, 4);
  Block& loop = *sdfg->root.blocks[0];
  EXPECT_EQ(loop.fork_streams, (std::vector<int>{1, 2, 3}));  // once, before the loop
  EXPECT_EQ(loop.join_events.size(), 3u);                     // once, after it
  for (auto& st : loop.blocks) {
    EXPECT_EQ(st->fork_event, -1) << st->label;
    EXPECT_TRUE(st->join_events.empty()) << st->label;
  }
  for (int k = 0; k < 4; ++k) {
    Node& a = loop_kernel(*sdfg, 0, "a" + std::to_string(k));
    Node& b_next = loop_kernel(*sdfg, 1, "b" + std::to_string((k + 1) % 4));
    EXPECT_EQ(a.wait_events, (std::vector<int>{b_next.record_event})) << k;  // the previous iteration's write
    EXPECT_EQ(b_next.wait_events, (std::vector<int>{a.record_event})) << k;  // this iteration's read
  }
  SyncReport r = verify_sync(*sdfg, cuda_streams(4));
  EXPECT_TRUE(r.ok()) << r.races.front();
  // Without the wait for the previous iteration, the verifier finds the race across the back edge.
  expect_race_without_events(*sdfg, loop_kernel(*sdfg, 0, "a0"),
                             "kernel b1 in state \"back\" writes on stream 1 and kernel a0 in state \"step\" reads on "
                             "stream 0 are not ordered (container x1)");
}

TEST(Synchronization, ALoopWithoutAChainBodyJoinsEveryIteration) {
  // A conditional edge in the body: the streams join into stream 0 at every iteration's end, as
  // before; the same loop with every stream setting is proven by the verifier.
  auto sdfg = loop_stages_scheduled(1, true, 4);
  Block& loop = *sdfg->root.blocks[0];
  EXPECT_EQ(loop.fork_event, -1);
  EXPECT_TRUE(loop.join_events.empty());
  EXPECT_EQ(loop.blocks[0]->fork_streams, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(loop.blocks[1]->join_events.size(), 3u);
  EXPECT_TRUE(loop_kernel(*sdfg, 0, "a0").wait_events.empty());  // after the fork: ordered already
  for (int streams : {0, 1, 2, 4})
    for (bool joined : {false, true}) {
      auto s = loop_stages_scheduled(1, joined, streams);
      SyncReport r = verify_sync(*s, cuda_streams(streams));
      EXPECT_TRUE(r.ok()) << streams << " " << joined << ": " << r.races.front();
    }
}

TEST(Synchronization, BranchesContinueTheChainBeforeThem) {
  // branch_stages, shift 1: the "then" branch's kernels read what first-state kernels of other
  // streams wrote (one event each), the "else" branch's what their own streams wrote (none); the
  // streams join once, after the conditional.
  const int reps[3][4] = {{20, 2, 2, 2}, {2, 20, 20, 20}, {3, 3, 3, 3}};
  auto sdfg = load_sdfg_text(branch_stages(reps, 1), "branch_stages");
  run_pipeline(*sdfg, cuda_streams(4));
  Block &first = *sdfg->root.blocks[0], &choose = *sdfg->root.blocks[1];
  ASSERT_EQ(choose.kind, BlockKind::Conditional);
  EXPECT_EQ(first.fork_streams, (std::vector<int>{1, 2, 3}));
  EXPECT_TRUE(first.join_events.empty());
  EXPECT_EQ(choose.join_events.size(), 3u);
  auto branch_kernel = [&](int branch, const std::string& label) -> Node& {
    for (auto& n : choose.branches[static_cast<std::size_t>(branch)].second->blocks[0]->nodes)
      if (n->kind == NodeKind::MapEntry && n->map.label == label) return *n;
    throw std::runtime_error("no map " + label);
  };
  for (int k = 0; k < 4; ++k) {
    Node& b = branch_kernel(0, "b" + std::to_string(k));
    EXPECT_EQ(b.wait_events, (std::vector<int>{kernel(*sdfg, 0, "a" + std::to_string((k + 1) % 4)).record_event})) << k;
    EXPECT_TRUE(branch_kernel(1, "c" + std::to_string(k)).wait_events.empty()) << k;
  }
  for (int streams : {0, 1, 2, 4}) {
    auto s = load_sdfg_text(branch_stages(reps, 1), "branch_stages");
    run_pipeline(*s, cuda_streams(streams));
    SyncReport r = verify_sync(*s, cuda_streams(streams));
    EXPECT_TRUE(r.ok()) << streams << ": " << r.races.front();
  }
  // Without b0's event, the verifier finds the race across the conditional's entry.
  expect_race_without_events(
      *sdfg, branch_kernel(0, "b0"),
      "kernel a1 in state \"first\" writes on stream 1 and kernel b0 in state \"second\" reads on "
      "stream 0 are not ordered (container y1)");
}

namespace {

const int kBranchReps[4][4] = {{2, 20, 2, 2}, {3, 3, 30, 3}, {4, 40, 4, 4}, {5, 5, 5, 50}};

std::unique_ptr<SDFG> loop_branch_scheduled(int shift, int streams, bool looped = true) {
  auto sdfg = load_sdfg_text(loop_branch_stages(kBranchReps, shift, looped), "loop_branch_stages");
  run_pipeline(*sdfg, cuda_streams(streams));
  return sdfg;
}

/// Kernel `label` in the state `state` of region `r`, or of a branch of a conditional in it.
Node& kernel_in(Block& r, const std::string& state, const std::string& label) {
  for (auto& b : r.blocks) {
    if (b->kind == BlockKind::Conditional)
      for (auto& [cond, body] : b->branches)
        for (auto& st : body->blocks)
          if (st->label == state) return kernel_in(*body, state, label);
    if (b->label != state) continue;
    for (auto& n : b->nodes)
      if (n->kind == NodeKind::MapEntry && n->map.label == label) return *n;
  }
  throw std::runtime_error("no map " + label + " in " + state);
}

/// With `waiter` (kernel d0) without its events, the verifier (4 streams) reports its read of z1
/// racing with each writer named in `writers`.
void expect_races_without_events(SDFG& sdfg, Node& waiter, const std::vector<std::string>& writers) {
  waiter.wait_events.clear();
  SyncReport r = verify_sync(sdfg, cuda_streams(4));
  for (auto& w : writers) {
    std::string race = w +
                       " writes on stream 1 and kernel d0 in state \"back\" reads on stream 0 are not ordered "
                       "(container z1)";
    EXPECT_NE(std::find(r.races.begin(), r.races.end(), race), r.races.end())
        << race << "\nfound:\n"
        << fmt::format("{}", fmt::join(r.races, "\n"));
  }
}

/// Every block of `r` (and of its conditionals' branches): no fork, no join of its own.
void expect_no_fork_or_join(const Block& r) {
  for (auto& b : r.blocks) {
    EXPECT_EQ(b->fork_event, -1) << b->label;
    EXPECT_TRUE(b->join_events.empty()) << b->label;
    for (auto& [cond, body] : b->branches) expect_no_fork_or_join(*body);
    if (b->kind == BlockKind::Loop) expect_no_fork_or_join(*b);
  }
}

}  // namespace

TEST(Synchronization, StreamsCarryTheirWorkThroughAConditionalInALoop) {
  // loop_branch_stages, shift 1: the body is step -> (even | odd) -> back. The "odd" kernels read
  // what "step" kernels of other streams wrote (one event each), the "even" ones what their own
  // stream wrote (they wait only for the previous iteration's reader of what they overwrite); "back" waits for
  // whichever branch wrote its input on another stream (both branches' events: a wait for the one that did not run
  // costs nothing). The streams fork once before the loop and join once after it: no block of the body forks or joins.
  auto sdfg = loop_branch_scheduled(1, 4);
  Block& loop = *sdfg->root.blocks[0];
  EXPECT_EQ(loop.fork_streams, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(loop.join_events.size(), 3u);
  expect_no_fork_or_join(loop);
  for (int k = 0; k < 4; ++k) {
    std::string ks = std::to_string(k), next = std::to_string((k + 1) % 4);
    Node& a_next = kernel_in(loop, "step", "a" + next);
    // b_k overwrites z_k, which d_{k-1} of the previous iteration read on another stream.
    EXPECT_EQ(kernel_in(loop, "even", "b" + ks).wait_events,
              (std::vector<int>{kernel_in(loop, "back", "d" + std::to_string((k + 3) % 4)).record_event}))
        << k;
    std::vector<int> odd = kernel_in(loop, "odd", "c" + ks).wait_events;
    EXPECT_NE(std::find(odd.begin(), odd.end(), a_next.record_event), odd.end()) << k;
    std::vector<int> back = kernel_in(loop, "back", "d" + ks).wait_events;
    for (const char* branch : {"even", "odd"}) {
      Node& writer = kernel_in(loop, branch, (branch[0] == 'e' ? "b" : "c") + next);
      EXPECT_NE(writer.record_event, -1) << k;
      EXPECT_NE(std::find(back.begin(), back.end(), writer.record_event), back.end()) << k << " " << branch;
    }
  }
  for (int streams : {0, 1, 2, 4})
    for (int shift : {0, 1}) {
      auto s = loop_branch_scheduled(shift, streams);
      SyncReport r = verify_sync(*s, cuda_streams(streams));
      EXPECT_TRUE(r.ok()) << streams << " " << shift << ": " << r.races.front();
    }
  // Without "back"'s waits, the verifier finds the races with both branches that write its input.
  expect_races_without_events(*sdfg, kernel_in(loop, "back", "d0"),
                              {"kernel b1 in state \"even\"", "kernel c1 in state \"odd\""});
}

TEST(Synchronization, StreamsCarryTheirWorkThroughAnInnerLoop) {
  // loop_substeps, shift 1: a time loop whose body is step -> substeps (an inner loop over
  // sub_a -> sub_b) -> back. The streams fork once before the time loop and join once after it;
  // neither the inner loop nor any state forks or joins. b_k (sub_a) reads z_{k+1}, which a_{k+1}
  // (before the inner loop) or c_{k+1} (the previous substep) wrote on another stream: it waits
  // for both events.
  const int reps[4][4] = {{2, 20, 2, 2}, {3, 3, 30, 3}, {4, 40, 4, 4}, {5, 5, 5, 50}};
  auto scheduled = [&](int shift, int streams) {
    auto sdfg = load_sdfg_text(loop_substeps(reps, shift), "loop_substeps");
    run_pipeline(*sdfg, cuda_streams(streams));
    return sdfg;
  };
  auto sdfg = scheduled(1, 4);
  Block& loop = *sdfg->root.blocks[0];
  Block& sub = *loop.blocks[1];
  ASSERT_EQ(sub.kind, BlockKind::Loop);
  EXPECT_EQ(loop.fork_streams, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(loop.join_events.size(), 3u);
  expect_no_fork_or_join(loop);
  for (int k = 0; k < 4; ++k) {
    std::string ks = std::to_string(k), next = std::to_string((k + 1) % 4);
    std::vector<int> waits = kernel_in(sub, "sub_a", "b" + ks).wait_events;
    for (Node* writer : {&kernel_in(loop, "step", "a" + next), &kernel_in(sub, "sub_b", "c" + next)}) {
      EXPECT_NE(writer->record_event, -1) << k;
      EXPECT_NE(std::find(waits.begin(), waits.end(), writer->record_event), waits.end()) << k;
    }
  }
  for (int streams : {0, 1, 2, 4})
    for (int shift : {0, 1}) {
      auto s = scheduled(shift, streams);
      SyncReport r = verify_sync(*s, cuda_streams(streams));
      EXPECT_TRUE(r.ok()) << streams << " " << shift << ": " << r.races.front();
    }
  // Without sub_a's waits, the verifier finds its read racing with the writers of z1.
  kernel_in(sub, "sub_a", "b0").wait_events.clear();
  SyncReport broken = verify_sync(*sdfg, cuda_streams(4));
  ASSERT_FALSE(broken.ok());
  EXPECT_NE(broken.races[0].find("(container z1)"), std::string::npos) << broken.races[0];
}

TEST(Synchronization, TheChainGoesOnAfterAConditional) {
  // The same body once, at the top level: "back" continues the chain through the conditional (no
  // join after it, nor a fork at "back"); the streams join at the end of "back", the chain's end.
  auto sdfg = loop_branch_scheduled(1, 4, false);
  Block &step = *sdfg->root.blocks[0], &choose = *sdfg->root.blocks[1], &back = *sdfg->root.blocks[2];
  ASSERT_EQ(choose.kind, BlockKind::Conditional);
  EXPECT_EQ(step.fork_streams, (std::vector<int>{1, 2, 3}));
  EXPECT_TRUE(step.join_events.empty());
  EXPECT_TRUE(choose.join_events.empty());
  EXPECT_EQ(back.fork_event, -1);
  EXPECT_EQ(back.join_events.size(), 3u);
  for (int streams : {0, 1, 2, 4})
    for (int shift : {0, 1}) {
      auto s = loop_branch_scheduled(shift, streams, false);
      SyncReport r = verify_sync(*s, cuda_streams(streams));
      EXPECT_TRUE(r.ok()) << streams << " " << shift << ": " << r.races.front();
    }
  expect_races_without_events(*sdfg, kernel_in(sdfg->root, "back", "d0"),
                              {"kernel b1 in state \"even\"", "kernel c1 in state \"odd\""});
}

namespace {

/// Random programs over five device arrays: a time loop (or the top level) whose body is a chain of
/// states of 1-3 kernels (each reads one or two arrays and writes another, all of it or a half) and
/// conditionals (one or two branches on t, with or without an else; a branch is a chain itself,
/// conditionals nested two deep) and, with `loops`, loops of 1-3 iterations over a chain.
class RandomChains {
 public:
  /// `loops`: inner loops too (nested two deep).
  RandomChains(unsigned seed, bool loops) : loops_(loops), rng_(seed), b_("random_chains") {}

  std::string program() {
    b_.symbol("N").symbol("T").symbol("t").symbol("u0").symbol("u1");
    for (int a = 0; a < kArrays; ++a) b_.array(name(a), DType::Float64, {"N"}, false, StorageType::GPU_Global);
    Block* body = &b_.sdfg().root;
    if (pick(4) != 0) {
      b_.loop("time", "t", "0", "t < T", "t + 1");
      body = b_.sdfg().root.blocks.back().get();
      body->blocks.clear();
      body->cf_edges.clear();
    }
    chain(*body, 0, 2 + pick(2));
    return write_sdfg(*b_.build());
  }

 private:
  static constexpr int kArrays = 5;
  bool loops_;
  std::mt19937 rng_;
  SDFGBuilder b_;
  int blocks_ = 0, kernels_ = 0;

  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  static std::string name(int a) { return "a" + std::to_string(a); }
  std::string part() {
    switch (pick(3)) {
      case 0:
        return "[i]";
      case 1:
        return "[i / 2]";  // the first half
      default:
        return "[N / 2 + i / 2]";  // the second half (N even)
    }
  }

  std::unique_ptr<Block> block(BlockKind kind, const char* type) {
    auto b = std::make_unique<Block>(kind);
    b->label = (kind == BlockKind::State         ? "s"
                : kind == BlockKind::Conditional ? "c"
                                                 : "r") +
               std::to_string(blocks_++);
    b->type_name = type;
    return b;
  }

  std::unique_ptr<Block> state() {
    auto st = block(BlockKind::State, "SDFGState");
    StateBuilder sb(b_.sdfg(), *st);
    for (int k = 1 + pick(3); k > 0; --k) {
      int out = pick(kArrays), in = pick(kArrays - 1), other = pick(kArrays - 1);
      in += in >= out;
      other += other >= out;
      std::vector<std::pair<std::string, std::string>> inputs{{"v", name(in) + part()}};
      if (other != in && pick(2)) inputs.emplace_back("w", name(other) + part());
      sb.mapped_tasklet("k" + std::to_string(kernels_++), {{"i", "0:N"}}, inputs,
                        inputs.size() == 2 ? "o = v + w" : "o = v + 1.0", {{"o", name(out) + part()}},
                        ScheduleType::GPU_Device);
    }
    return st;
  }

  /// A loop of 1-3 iterations over a chain of its own (loop variable u<depth>).
  std::unique_ptr<Block> loop(int depth) {
    auto l = block(BlockKind::Loop, "LoopRegion");
    std::string u = "u" + std::to_string(depth);
    l->loop_variable = u;
    l->init_statement = CodeBlock{u + " = 0", Language::Python};
    l->loop_condition = CodeBlock{fmt::format("{} < {}", u, 1 + pick(3)), Language::Python};
    l->update_statement = CodeBlock{u + " = " + u + " + 1", Language::Python};
    chain(*l, depth + 1, 1 + pick(2));
    return l;
  }

  std::unique_ptr<Block> conditional(int depth) {
    auto c = block(BlockKind::Conditional, "ConditionalBlock");
    int branches = 1 + pick(2);
    bool has_else = pick(2) == 0;
    for (int i = 0; i < branches; ++i) {
      auto body = block(BlockKind::Region, "ControlFlowRegion");
      chain(*body, depth + 1, 1 + pick(2));
      std::optional<CodeBlock> cond;
      if (!has_else || i + 1 < branches)
        cond = CodeBlock{fmt::format("t % {} == {}", 2 + i, pick(2)), Language::Python};
      c->branches.emplace_back(std::move(cond), std::move(body));
    }
    return c;
  }

  void chain(Block& region, int depth, int length) {
    for (int i = 0; i < length; ++i) {
      int kind = depth < 2 ? pick(6) : 5;
      region.blocks.push_back(kind < 2 ? conditional(depth) : kind == 2 && loops_ ? loop(depth) : state());
      if (i == 0) continue;
      InterstateEdge e;
      e.src = i - 1;
      e.dst = i;
      e.condition = {"1", Language::Python};
      region.cf_edges.push_back(std::move(e));
    }
    region.start_block = 0;
  }
};

/// Whether `r` holds a block of `kind` planned as part of a chain (no join of its own) in a loop
/// whose streams carry their work across iterations.
bool carried_through(const Block& r, BlockKind kind) {
  if (r.kind == BlockKind::Loop && r.fork_event >= 0)
    for (auto& b : r.blocks)
      if (b->kind == kind && b->join_events.empty()) return true;
  for (auto& b : r.blocks)
    if (carried_through(*b, kind)) return true;
  for (auto& [cond, body] : r.branches)
    if (carried_through(*body, kind)) return true;
  return false;
}

}  // namespace

TEST(Synchronization, TheVerifierProvesRandomChainsWithConditionalsAndLoops) {
  // 100 random programs (RandomChains) with 1, 2, 3 and 4 streams, and 37 with inner loops too,
  // with 2 and 4 streams: the verifier replays every control-flow path (each branch and none, 0-2 iterations of
  // every loop) and finds every conflicting pair ordered. Most loops carry their streams through
  // their conditionals and inner loops.
  const unsigned kSeeds = 100;
  int through_conditional = 0, through_loop = 0, programs = 0, proven = 0;
  for (bool loops : {false, true})
    for (unsigned seed = 0; seed < (loops ? 37u : kSeeds); ++seed) {
      std::string text = RandomChains(seed, loops).program();
      for (int streams : loops ? std::vector<int>{2, 4} : std::vector<int>{1, 2, 3, 4}) {
        auto sdfg = load_sdfg_text(text, "random_chains");
        run_pipeline(*sdfg, cuda_streams(streams));
        SyncReport r = verify_sync(*sdfg, cuda_streams(streams));
        ASSERT_TRUE(r.ok()) << "seed " << seed << (loops ? " with loops" : "") << ", --gpu-streams " << streams << ": "
                            << r.races.front() << "\n"
                            << text;
        through_conditional += streams == 4 && carried_through(sdfg->root, BlockKind::Conditional);
        through_loop += streams == 4 && carried_through(sdfg->root, BlockKind::Loop);
        proven += !r.bounded;  // else the first 256 paths were replayed
        ++programs;
      }
    }
  EXPECT_GT(through_conditional, static_cast<int>(kSeeds / 4)) << "with 4 streams";
  EXPECT_GT(through_loop, 4) << "with 4 streams";
  EXPECT_GT(proven, programs * 8 / 10) << "programs whose every path was replayed";
  std::printf(
      "[   NOTE   ] %d programs, %d proven on every path; with 4 streams, %d loops carry their streams through a "
      "conditional, %d through an inner loop\n",
      programs, proven, through_conditional, through_loop);
}

namespace {

/// The verifier proves `sdfg`; without `waiter`'s host waits it reports a race naming `names`.
void expect_race_without_wait(SDFG& sdfg, const CompileOptions& o, Node& waiter,
                              const std::vector<std::string>& names) {
  SyncReport r = verify_sync(sdfg, o);
  EXPECT_TRUE(r.ok()) << fmt::format("{}", fmt::join(r.races, "\n"));
  waiter.host_waits.clear();
  SyncReport broken = verify_sync(sdfg, o);
  ASSERT_FALSE(broken.ok());
  for (auto& name : names) EXPECT_NE(broken.races[0].find(name), std::string::npos) << broken.races[0];
}

}  // namespace

// A host CPP tasklet that names __dace_current_stream queues its work on a stream of its own
// (tests/StreamTasklet.h): its stream waits for the kernel it reads from, the host map that reads
// what it wrote waits for that stream, and the verifier proves it in every stream setting.
TEST(StreamTasklet, IsOrderedLikeAKernelAndItsHostReaderWaits) {
  for (int streams : {0, 1, 2, 4}) {
    SCOPED_TRACE(fmt::format("--gpu-streams {}", streams));
    auto sdfg = stream_tasklet_program();
    CompileOptions o = cuda_streams(streams);
    run_pipeline(*sdfg, o);
    Block& st = *sdfg->root.blocks[0];
    Node* fetch = nullptr;
    Node* plus = nullptr;
    Node* twice = nullptr;
    for (auto& n : st.nodes) {
      if (n->kind == NodeKind::Tasklet && n->label == "fetch") fetch = n.get();
      if (n->kind == NodeKind::MapEntry && n->map.label == "plus") plus = n.get();
      if (n->kind == NodeKind::MapEntry && n->map.label == "twice") twice = n.get();
    }
    ASSERT_TRUE(fetch && plus && twice);
    ASSERT_GE(fetch->stream, 0);
    if (fetch->stream != twice->stream) {
      EXPECT_EQ(fetch->wait_events.size(), 1u);
    }
    EXPECT_EQ(plus->host_waits, std::vector<int>{fetch->stream});
    // Without the host's wait the verifier names the tasklet's copy and the host map.
    expect_race_without_wait(*sdfg, o, *plus, {"stream tasklet fetch", "host map plus"});
  }
}

// A host tasklet that touches device memory itself (a synchronous cudaMemcpy: outside every
// stream) waits on the host for the kernel that wrote it, in every stream setting.
TEST(StreamTasklet, HostCodeOnDeviceMemoryWaitsForItsWriters) {
  for (int streams : {0, 1, 2, 4}) {
    SCOPED_TRACE(fmt::format("--gpu-streams {}", streams));
    auto sdfg = stream_tasklet_program(true);
    CompileOptions o = cuda_streams(streams);
    run_pipeline(*sdfg, o);
    Node* fetch = nullptr;
    Node* twice = nullptr;
    for (auto& n : sdfg->root.blocks[0]->nodes) {
      if (n->kind == NodeKind::Tasklet && n->label == "fetch") fetch = n.get();
      if (n->kind == NodeKind::MapEntry && n->map.label == "twice") twice = n.get();
    }
    ASSERT_TRUE(fetch && twice);
    EXPECT_LT(fetch->stream, 0);  // host code
    EXPECT_EQ(fetch->host_waits, std::vector<int>{twice->stream});
    expect_race_without_wait(*sdfg, o, *fetch, {"host tasklet fetch"});
  }
}

TEST(StreamTasklet, OnlyCppTaskletsThatNameTheStreamGetOne) {
  auto sdfg = stream_tasklet_program();
  Node* fetch = nullptr;
  for (auto& n : sdfg->root.blocks[0]->nodes)
    if (n->kind == NodeKind::Tasklet && n->label == "fetch") fetch = n.get();
  ASSERT_TRUE(fetch);
  EXPECT_TRUE(is_stream_tasklet(*fetch));
  fetch->code.code = "// __dace_current_stream is not used here\ncudaMemcpy(dst, src, N, cudaMemcpyDeviceToHost);";
  EXPECT_TRUE(is_stream_tasklet(*fetch));  // a comment is not code, but the name is there: conservative
  fetch->code.code = "cudaMemcpy(dst, src, N, cudaMemcpyDeviceToHost);";
  EXPECT_FALSE(is_stream_tasklet(*fetch));
  fetch->code.code = "x = __dace_current_stream";
  fetch->code.language = Language::Python;
  EXPECT_FALSE(is_stream_tasklet(*fetch));
}

// The same copy inside a host nested SDFG: the nested SDFG's own planning starts from nothing
// pending, so the call waits for the kernel that wrote the device array it passes in.
TEST(StreamTasklet, ANestedSdfgWhoseHostCodeTouchesDeviceMemoryWaits) {
  SDFGBuilder inner("inner");
  inner.symbol("N", DType::Int32)
      .array("src", DType::Float64, {"N"}, false, StorageType::GPU_Global)
      .array("dst", DType::Float64, {"N"});
  auto is = inner.state("copy");
  int t =
      is.tasklet("fetch", {"s"}, {"d"}, "cudaMemcpy(d, s, N * sizeof(double), cudaMemcpyDeviceToHost);", Language::CPP);
  is.edge(is.access("src"), "", t, "s", "src", "0:N");
  is.edge(t, "d", is.access("dst"), "", "dst", "0:N");
  SDFGBuilder b("outer");
  b.symbol("N", DType::Int32)
      .array("gA", DType::Float64, {"N"}, false, StorageType::GPU_Global)
      .array("gB", DType::Float64, {"N"}, false, StorageType::GPU_Global)
      .array("H", DType::Float64, {"N"});
  auto s = b.state("s");
  std::map<std::string, int> acc;
  s.mapped_tasklet("twice", {{"i", "0:N"}}, {{"a", "gA[i]"}}, "b = 2 * a", {{"b", "gB[i]"}}, ScheduleType::GPU_Device,
                   &acc);
  int x = s.nested(inner.build(), {"src"}, {"dst"}, {{"N", "N"}});
  s.edge(acc.at("gB"), "", x, "src", "gB", "0:N");
  s.edge(x, "dst", s.access("H"), "", "H", "0:N");
  auto sdfg = b.build();
  for (int streams : {0, 2}) {
    SCOPED_TRACE(fmt::format("--gpu-streams {}", streams));
    auto copy = load_sdfg_text(write_sdfg(*sdfg), "outer");
    CompileOptions o = cuda_streams(streams);
    run_pipeline(*copy, o);
    const Node* call = nullptr;
    for (auto& n : copy->root.blocks[0]->nodes)
      if (n->kind == NodeKind::NestedSDFG) call = n.get();
    ASSERT_TRUE(call);
    EXPECT_EQ(call->host_waits, std::vector<int>{0});
    EXPECT_TRUE(verify_sync(*copy, o).ok());
  }
}
