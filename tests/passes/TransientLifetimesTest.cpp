// transient-lifetimes: memory modes change lifetimes; placement of the rest is written into the IR.
#include "TestUtil.h"
#include "ir/Builder.h"
#include "passes/Pipeline.h"

using namespace sdfc;
using namespace sdfc::test;

namespace {

/// state 0: tmp (whole-call transient) <- x; state 1 (after L = x[0]): late[L] used there only.
std::unique_ptr<SDFG> program() {
  SDFGBuilder b("placement");
  b.symbol("N").symbol("L").array("x", DType::Int32, {"N"}).array("tmp", DType::Int32, {"N"}, true)
      .array("late", DType::Int32, {"L"}, true).array("y", DType::Int32, {"N"});
  std::map<std::string, int> outer;
  b.state("first").mapped_tasklet("copy", {{"i", "0:N"}}, {{"a", "x[i]"}}, "b = a", {{"b", "tmp[i]"}}, ScheduleType::Default, &outer);
  std::map<std::string, int> second;
  auto s1 = b.state("second");
  s1.mapped_tasklet("fill", {{"i", "0:L"}}, {{"a", "tmp[i]"}}, "b = a + 1", {{"b", "late[i]"}}, ScheduleType::Default, &second);
  s1.mapped_tasklet("back", {{"i", "0:L"}}, {{"a", "late[i]"}}, "b = a", {{"b", "y[i]"}}, ScheduleType::Default, &second);
  b.edge(0, 1, "1", {{"L", "x[0]"}});
  return b.build();
}

}  // namespace

TEST(TransientLifetimes, PlacementIsDecidedByThePass) {
  auto sdfg = program();
  run_pipeline(*sdfg, CompileOptions{});
  EXPECT_EQ(sdfg->find_data("tmp")->place, DataDesc::Place::Call);
  const DataDesc* late = sdfg->find_data("late");
  EXPECT_EQ(late->place, DataDesc::Place::State);
  ASSERT_TRUE(late->place_state);
  EXPECT_EQ(late->place_state->label, "second");
}

TEST(TransientLifetimes, ModesChangeDefaultLifetimesOnly) {
  for (auto [mode, want] : {std::pair{TransientMode::Persistent, Lifetime::Persistent},
                            {TransientMode::External, Lifetime::External},
                            {TransientMode::Scoped, Lifetime::Scope}}) {
    auto sdfg = program();
    CompileOptions o;
    o.transients = mode;
    run_pipeline(*sdfg, o);
    EXPECT_EQ(sdfg->find_data("tmp")->lifetime, want);
    // `late` is sized by L, which is not an argument: persistent and external leave it.
    EXPECT_EQ(sdfg->find_data("late")->lifetime, Lifetime::Scope);
  }
}

TEST(TransientLifetimes, LateSizedTransientInTwoStatesIsAnError) {
  auto sdfg = program();
  // use `late` in the first state too
  StateBuilder first(*sdfg, *sdfg->root.blocks[0]);
  first.access("late");
  try {
    run_pipeline(*sdfg, CompileOptions{});
    FAIL() << "expected an error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.diagnostic().pointer, "/attributes/_arrays/late");
    EXPECT_NE(e.diagnostic().message.find("used in several states"), std::string::npos);
  }
}
