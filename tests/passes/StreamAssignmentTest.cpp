// stream-assignment and the events of the synchronization pass on a small fork-join built here:
// two kernels that only share an input run on two streams with no event between them; the merge
// waits for exactly one event; the verifier proves the result.
#include "TestUtil.h"
#include "ir/Builder.h"
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
  s.mapped_tasklet("left", {{"i", "0:N"}}, {{"v", "x[i]"}}, "o = v * 2.0", {{"o", "a[i]"}}, ScheduleType::GPU_Device, &acc);
  s.mapped_tasklet("right", {{"i", "0:N"}}, {{"v", "x[i]"}}, "o = v - 1.0", {{"o", "c[i]"}}, ScheduleType::GPU_Device, &acc);
  s.mapped_tasklet("merge", {{"i", "0:N"}}, {{"p", "a[i]"}, {"q", "c[i]"}}, "o = p + q", {{"o", "y[i]"}}, ScheduleType::GPU_Device, &acc);
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
