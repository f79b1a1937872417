// gpu-graph's host tasklets that run only when the graph is captured (passes/GpuGraph.h): a chain
// of Python tasklets computing a kernel's scalar argument from a scalar argument and a symbol is
// marked and the call is one graph; each way of making the value something a replay could not
// reproduce (a reader outside the state, an input from a host array, another host reader, an
// argument written in the call) leaves the tasklets unmarked and the state out of every graph; and
// a graph segment's key holds no scalar such tasklets compute.
#include <gtest/gtest.h>

#include <algorithm>

#include "TestUtil.h"
#include "compiler/Compile.h"
#include "ir/Builder.h"
#include "passes/Pipeline.h"

using namespace sdfc;

namespace {

enum class Variant {
  Plain,
  ConditionReadsTheScalar,
  ReadsAHostArray,
  AHostTaskletReadsTheScalar,
  ArgumentWritten,
  HostStateAfter
};

/// State 0: t0 computes s = a * dt (a scalar argument, dt a symbol), t1 s2 = s + 1, and a GPU
/// kernel x[i] += s2. State 1: a kernel x[i] *= 2. `v` adds what its name says.
std::unique_ptr<SDFG> scaled(Variant v) {
  SDFGBuilder b("scaled");
  b.symbol("N").symbol("dt", DType::Float64);
  b.array("x", DType::Float64, {"N"}, false, StorageType::GPU_Global);
  b.array("h", DType::Float64, {"1"});
  b.scalar("a", DType::Float64);
  b.scalar("s", DType::Float64, true);
  b.scalar("s2", DType::Float64, true);
  auto st = b.state("compute");
  int in = v == Variant::ReadsAHostArray ? st.access("h") : st.access("a");
  int t0 = st.tasklet("t0", {"p"}, {"o"}, "o = p * dt");
  st.edge(in, "", t0, "p", v == Variant::ReadsAHostArray ? "h" : "a", "0");
  if (v == Variant::ArgumentWritten) {
    int t3 = st.tasklet("t3", {}, {"o"}, "o = 1.0");
    st.edge(t3, "o", in, "", "a", "0");
  }
  int s = st.access("s");
  st.edge(t0, "o", s, "", "s", "0");
  int t1 = st.tasklet("t1", {"p"}, {"o"}, "o = p + 1");
  st.edge(s, "", t1, "p", "s", "0");
  int s2 = st.access("s2");
  st.edge(t1, "o", s2, "", "s2", "0");
  if (v == Variant::AHostTaskletReadsTheScalar) {
    int t2 = st.tasklet("t2", {"p"}, {"o"}, "o = p");
    st.edge(s2, "", t2, "p", "s2", "0");
    st.edge(t2, "o", st.access("h"), "", "h", "0");
  }
  std::map<std::string, int> outer{{"s2", s2}};
  st.mapped_tasklet("add", {{"i", "0:N"}}, {{"v", "x[i]"}, {"c", "s2"}}, "w = v + c", {{"w", "x[i]"}},
                    ScheduleType::GPU_Device, &outer);
  auto second = b.state("twice");
  second.mapped_tasklet("twice", {{"i", "0:N"}}, {{"v", "x[i]"}}, "w = 2 * v", {{"w", "x[i]"}},
                        ScheduleType::GPU_Device);
  if (v == Variant::HostStateAfter) {
    auto host = b.state("host");
    int t = host.tasklet("t4", {}, {"o"}, "o = 3.0");
    host.edge(t, "o", host.access("h"), "", "h", "0");
  }
  if (v == Variant::ConditionReadsTheScalar) b.edge(0, 1, "s2 > 0");
  b.chain();
  auto sdfg = b.build();
  CompileOptions o;
  o.target = Target::CUDA;
  o.gpu_graph = true;
  run_pipeline(*sdfg, o);
  return sdfg;
}

/// The labels of the tasklets of state `i` marked capture-only.
std::vector<std::string> capture_only(const SDFG& sdfg, int i) {
  std::vector<std::string> out;
  for (auto& n : sdfg.root.blocks[static_cast<std::size_t>(i)]->nodes)
    if (n->graph_capture_only) out.push_back(n->label);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST(GpuGraph, TaskletsComputingAKernelsScalarFromTheKeyRunOnlyAtCapture) {
  auto sdfg = scaled(Variant::Plain);
  EXPECT_TRUE(sdfg->gpu_graph);
  EXPECT_EQ(capture_only(*sdfg, 0), (std::vector<std::string>{"t0", "t1"}));
}

TEST(GpuGraph, TaskletsWhoseValueAReplayCouldNotReproduceStayHostWork) {
  for (Variant v : {Variant::ConditionReadsTheScalar, Variant::ReadsAHostArray, Variant::AHostTaskletReadsTheScalar,
                    Variant::ArgumentWritten}) {
    SCOPED_TRACE(static_cast<int>(v));
    auto sdfg = scaled(v);
    EXPECT_FALSE(sdfg->gpu_graph);
    EXPECT_TRUE(capture_only(*sdfg, 0).empty());
    EXPECT_EQ(sdfg->root.blocks[0]->graph_segment, -1);  // the state runs without a graph
    EXPECT_GE(sdfg->root.blocks[1]->graph_segment, 0);   // the next one is a segment
  }
}

TEST(GpuGraph, ASegmentsKeyHoldsNoScalarComputedAtCapture) {
  auto sdfg = scaled(Variant::HostStateAfter);
  EXPECT_FALSE(sdfg->gpu_graph);
  EXPECT_EQ(capture_only(*sdfg, 0), (std::vector<std::string>{"t0", "t1"}));
  const Block& segment = *sdfg->root.blocks[0];
  ASSERT_GE(segment.graph_segment, 0);
  EXPECT_NE(std::find(segment.graph_key.begin(), segment.graph_key.end(), "a"), segment.graph_key.end());
  for (const char* computed : {"s", "s2"})
    EXPECT_EQ(std::find(segment.graph_key.begin(), segment.graph_key.end(), computed), segment.graph_key.end())
        << computed;
}
