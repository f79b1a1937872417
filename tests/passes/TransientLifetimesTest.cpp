// transient-lifetimes: memory modes change lifetimes (of nested SDFGs too, lifting their transients
// to the top level for persistent and external); placement of the rest is written into the IR.
#include <fmt/format.h>

#include "NestedStages.h"
#include "TestUtil.h"
#include "compiler/Compile.h"
#include "ir/Builder.h"
#include "ir/Signature.h"
#include "passes/Pipeline.h"
#include "passes/VerifySync.h"

using namespace sdfc;
using namespace sdfc::test;

namespace {

/// state 0: tmp (whole-call transient) <- x; state 1 (after L = x[0]): late[L] used there only.
std::unique_ptr<SDFG> program() {
  SDFGBuilder b("placement");
  b.symbol("N")
      .symbol("L")
      .array("x", DType::Int32, {"N"})
      .array("tmp", DType::Int32, {"N"}, true)
      .array("late", DType::Int32, {"L"}, true)
      .array("y", DType::Int32, {"N"});
  std::map<std::string, int> outer;
  b.state("first").mapped_tasklet("copy", {{"i", "0:N"}}, {{"a", "x[i]"}}, "b = a", {{"b", "tmp[i]"}},
                                  ScheduleType::Default, &outer);
  std::map<std::string, int> second;
  auto s1 = b.state("second");
  s1.mapped_tasklet("fill", {{"i", "0:L"}}, {{"a", "tmp[i]"}}, "b = a + 1", {{"b", "late[i]"}}, ScheduleType::Default,
                    &second);
  s1.mapped_tasklet("back", {{"i", "0:L"}}, {{"a", "late[i]"}}, "b = a", {{"b", "y[i]"}}, ScheduleType::Default,
                    &second);
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

// ---- nested SDFGs ----------------------------------------------------------------------------

namespace {

/// outer(N): x[N] -> twice_plus_three "inner" (L = N - 2, on x[1:N-1]) -> y[N].
std::unique_ptr<SDFG> one_level() {
  SDFGBuilder b("outer");
  b.symbol("N").array("x", DType::Float64, {"N"}).array("y", DType::Float64, {"N"});
  auto st = b.state("call");
  call_nested(st, twice_plus_three("inner", "L"), {{"L", "N - 2"}}, "x", "y", "1:N - 1");
  return b.build();
}

/// top(N) calls "mid" (M = N - 2), which calls "leaf" (K = M) holding tmp[K + 1].
std::unique_ptr<SDFG> two_levels() {
  SDFGBuilder mid("mid");
  mid.symbol("M").array("src", DType::Float64, {"M"}).array("dst", DType::Float64, {"M"});
  auto ms = mid.state("body");
  call_nested(ms, twice_plus_three("leaf", "K", StorageType::Default, ScheduleType::Default, "K + 1"), {{"K", "M"}},
              "src", "dst", "0:M");
  SDFGBuilder b("top");
  b.symbol("N").array("x", DType::Float64, {"N"}).array("y", DType::Float64, {"N"});
  auto st = b.state("call");
  call_nested(st, mid.build(), {{"M", "N - 2"}}, "x", "y", "1:N - 1");
  return b.build();
}

CompileOptions mode(TransientMode m, Target t = Target::CPU, int streams = 0) {
  CompileOptions o;
  o.transients = m;
  o.target = t;
  o.gpu_streams = streams;
  return o;
}

std::string text(const Expr& e) {
  return print_expr(simplify(e));
}
std::string text(const std::string& e) {
  return print_expr(simplify(parse_expr(e)));
}

const Node& only_nested(const Block& st) {
  const Node* found = nullptr;
  for (auto& n : st.nodes)
    if (n->kind == NodeKind::NestedSDFG) {
      EXPECT_EQ(found, nullptr) << "two nested SDFG nodes";
      found = n.get();
    }
  EXPECT_NE(found, nullptr);
  return *found;
}

/// The edge that connects `data` to connector `conn` of nested SDFG node `x` (into it when `into`).
const DataEdge* connection(const Block& st, const Node& x, const std::string& conn, const std::string& data,
                           bool into) {
  for (auto& e : st.edges) {
    const Node& src = st.node(e.src);
    const Node& dst = st.node(e.dst);
    if (into && &dst == &x && e.dst_conn == conn && src.kind == NodeKind::Access && src.data == data &&
        e.memlet.data == data)
      return &e;
    if (!into && &src == &x && e.src_conn == conn && dst.kind == NodeKind::Access && dst.data == data &&
        e.memlet.data == data)
      return &e;
  }
  return nullptr;
}

void expect_valid(const SDFG& sdfg) {
  for (auto& d : validate(sdfg, "lifted")) ADD_FAILURE() << d.str();
}

}  // namespace

TEST(TransientLifetimes, NestedTransientIsLiftedInExternalAndPersistentMode) {
  for (auto [m, want] :
       {std::pair{TransientMode::External, Lifetime::External}, {TransientMode::Persistent, Lifetime::Persistent}}) {
    SCOPED_TRACE(to_string(m));
    auto sdfg = one_level();
    std::set<std::string> args_before = free_symbols(*sdfg);
    run_pipeline(*sdfg, mode(m));
    expect_valid(*sdfg);
    // In the parent: a new transient named after the nested SDFG node, its layout through L = N - 2.
    const DataDesc* lifted = sdfg->find_data("inner_tmp");
    ASSERT_NE(lifted, nullptr);
    EXPECT_TRUE(lifted->transient);
    EXPECT_EQ(lifted->lifetime, want);
    EXPECT_TRUE(lifted->lifetime_from_mode);
    EXPECT_EQ(lifted->dtype, DType::Float64);
    EXPECT_EQ(lifted->storage, StorageType::CPU_Heap);
    ASSERT_EQ(lifted->shape.size(), 1u);
    EXPECT_EQ(text(lifted->shape[0]), text("N - 2"));
    EXPECT_EQ(text(lifted->total_size), text("N - 2"));
    EXPECT_EQ(text(lifted->strides[0]), "1");
    EXPECT_EQ(free_symbols(*sdfg), args_before);  // the signature does not change
    // In the nested SDFG: an argument, written in the first state and read in the second.
    const Block& st = *sdfg->root.blocks[0];
    const Node& x = only_nested(st);
    const DataDesc* inner = x.sdfg->find_data("tmp");
    ASSERT_NE(inner, nullptr);
    EXPECT_FALSE(inner->transient);
    EXPECT_EQ(text(inner->shape[0]), "L");
    ASSERT_TRUE(x.find_in("tmp"));
    ASSERT_TRUE(x.find_out("tmp"));
    const DataEdge* in = connection(st, x, "tmp", "inner_tmp", true);
    const DataEdge* out = connection(st, x, "tmp", "inner_tmp", false);
    ASSERT_TRUE(in && out);
    EXPECT_NE(in->src, out->dst);  // two access nodes: no cycle through the nested SDFG
    ASSERT_TRUE(in->memlet.subset);
    EXPECT_EQ(text(in->memlet.subset->at(0).start), "0");
    EXPECT_EQ(text(in->memlet.subset->at(0).end), text("N - 3"));
    EXPECT_EQ(text(out->memlet.volume), text("N - 2"));
  }
}

TEST(TransientLifetimes, OnlyWrittenNestedTransientGetsAnOutputOnly) {
  auto sdfg = one_level();
  // Without the nested SDFG's second state, tmp is written and never read.
  SDFG& inner = *only_nested(*sdfg->root.blocks[0]).sdfg;
  inner.root.blocks.pop_back();
  inner.root.cf_edges.clear();
  run_pipeline(*sdfg, mode(TransientMode::External));
  expect_valid(*sdfg);
  const Block& st = *sdfg->root.blocks[0];
  const Node& x = only_nested(st);
  EXPECT_FALSE(x.find_in("tmp"));
  EXPECT_TRUE(x.find_out("tmp"));
  EXPECT_TRUE(connection(st, x, "tmp", "inner_tmp", false));
}

TEST(TransientLifetimes, TwoLevelNestingIsLiftedToTheTop) {
  auto sdfg = two_levels();
  run_pipeline(*sdfg, mode(TransientMode::External));
  expect_valid(*sdfg);
  // leaf's tmp[K + 1] -> mid's leaf_tmp[M + 1] -> top's mid_leaf_tmp[N - 1].
  const DataDesc* top = sdfg->find_data("mid_leaf_tmp");
  ASSERT_NE(top, nullptr);
  EXPECT_TRUE(top->transient);
  EXPECT_EQ(top->lifetime, Lifetime::External);
  EXPECT_EQ(text(top->shape[0]), text("N - 1"));
  ASSERT_EQ(sdfg->workspaces.size(), 1u);
  EXPECT_EQ(sdfg->workspaces[0].members, std::vector<std::string>{"mid_leaf_tmp"});

  const Block& st = *sdfg->root.blocks[0];
  const Node& mid = only_nested(st);
  EXPECT_TRUE(connection(st, mid, "leaf_tmp", "mid_leaf_tmp", true));
  EXPECT_TRUE(connection(st, mid, "leaf_tmp", "mid_leaf_tmp", false));
  const DataDesc* in_mid = mid.sdfg->find_data("leaf_tmp");
  ASSERT_NE(in_mid, nullptr);
  EXPECT_FALSE(in_mid->transient);
  EXPECT_EQ(text(in_mid->shape[0]), text("M + 1"));

  const Block& mst = *mid.sdfg->root.blocks[0];
  const Node& leaf = only_nested(mst);
  EXPECT_TRUE(connection(mst, leaf, "tmp", "leaf_tmp", true));
  EXPECT_TRUE(connection(mst, leaf, "tmp", "leaf_tmp", false));
  EXPECT_FALSE(leaf.sdfg->find_data("tmp")->transient);
}

TEST(TransientLifetimes, LiftedNamesAreUnique) {
  auto sdfg = one_level();
  DataDesc taken = *sdfg->find_data("x");
  sdfg->arrays.emplace_back("inner_tmp", taken);
  run_pipeline(*sdfg, mode(TransientMode::External));
  expect_valid(*sdfg);
  ASSERT_NE(sdfg->find_data("inner_tmp_1"), nullptr);
  EXPECT_EQ(sdfg->find_data("inner_tmp_1")->lifetime, Lifetime::External);
  EXPECT_FALSE(sdfg->find_data("inner_tmp")->transient);  // the container that had the name
}

TEST(TransientLifetimes, NestedSdfgInsideAMapIsLeftAlone) {
  SDFGBuilder b("mapped");
  b.symbol("N").array("x", DType::Float64, {"N"}).array("y", DType::Float64, {"N"});
  auto st = b.state("s");
  auto [entry, exit] = st.map("m", {"i"}, {"0:N"});
  int x = st.nested(twice_plus_three("inner", "L"), {"src"}, {"dst"}, {{"L", "1"}}, entry);
  st.edge(st.access("x"), "", entry, "IN_x", "x", "0:N");
  st.edge(entry, "OUT_x", x, "src", "x", "i");
  st.edge(x, "dst", exit, "IN_y", "y", "i");
  st.edge(exit, "OUT_y", st.access("y"), "", "y", "0:N");
  auto sdfg = b.build();
  for (TransientMode m :
       {TransientMode::External, TransientMode::Persistent, TransientMode::Scoped, TransientMode::Pool}) {
    SCOPED_TRACE(to_string(m));
    auto copy = load_sdfg_text(write_sdfg(*sdfg), "mapped");
    run_pipeline(*copy, mode(m));
    expect_valid(*copy);
    EXPECT_EQ(copy->arrays.size(), 2u);
    const DataDesc* tmp = only_nested(*copy->root.blocks[0]).sdfg->find_data("tmp");
    EXPECT_TRUE(tmp->transient);
    EXPECT_EQ(tmp->lifetime, Lifetime::Scope);
    EXPECT_FALSE(tmp->lifetime_from_mode);
  }
}

TEST(TransientLifetimes, NestedTransientSizedByANonArgumentSymbolIsLeftAlone) {
  // tmp[K]: K assigned inside the nested SDFG.
  {
    SDFGBuilder ib("late");
    ib.symbol("L")
        .symbol("K")
        .array("src", DType::Float64, {"L"})
        .array("dst", DType::Float64, {"L"})
        .array("tmp", DType::Float64, {"K"}, true);
    ib.state("start").mapped_tasklet("copy", {{"i", "0:L"}}, {{"a", "src[i]"}}, "b = a", {{"b", "dst[i]"}});
    ib.state("use").mapped_tasklet("fill", {{"i", "0:K"}}, {{"a", "src[i]"}}, "b = a", {{"b", "tmp[i]"}});
    ib.edge(0, 1, "1", {{"K", "L - 1"}});
    SDFGBuilder b("outer");
    b.symbol("N").array("x", DType::Float64, {"N"}).array("y", DType::Float64, {"N"});
    auto st = b.state("call");
    call_nested(st, ib.build(), {{"L", "N"}}, "x", "y", "0:N");
    auto sdfg = b.build();
    run_pipeline(*sdfg, mode(TransientMode::External));
    expect_valid(*sdfg);
    EXPECT_EQ(sdfg->arrays.size(), 2u);
    const DataDesc* tmp = only_nested(*sdfg->root.blocks[0]).sdfg->find_data("tmp");
    EXPECT_TRUE(tmp->transient);
    EXPECT_EQ(tmp->lifetime, Lifetime::Scope);
    EXPECT_EQ(tmp->place, DataDesc::Place::State);
  }
  // tmp[L] with L = P, a symbol the top level assigns (not an argument).
  {
    SDFGBuilder b("outer");
    b.symbol("N").symbol("P").array("x", DType::Float64, {"N"}).array("y", DType::Float64, {"N"});
    b.state("before");
    auto st = b.state("call");
    call_nested(st, twice_plus_three("inner", "L"), {{"L", "P"}}, "x", "y", "0:P");
    b.edge(0, 1, "1", {{"P", "N - 1"}});
    auto sdfg = b.build();
    for (TransientMode m : {TransientMode::External, TransientMode::Persistent}) {
      auto copy = load_sdfg_text(write_sdfg(*sdfg), "outer");
      run_pipeline(*copy, mode(m));
      EXPECT_EQ(copy->arrays.size(), 2u) << to_string(m);
      EXPECT_TRUE(only_nested(*copy->root.blocks[1]).sdfg->find_data("tmp")->transient) << to_string(m);
    }
  }
}

TEST(TransientLifetimes, ScopedAndPoolApplyInPlaceInNestedSdfgs) {
  auto sdfg = one_level();
  run_pipeline(*sdfg, mode(TransientMode::Scoped));
  EXPECT_EQ(sdfg->arrays.size(), 2u);
  const DataDesc* tmp = only_nested(*sdfg->root.blocks[0]).sdfg->find_data("tmp");
  EXPECT_TRUE(tmp->transient);
  EXPECT_EQ(tmp->lifetime, Lifetime::Scope);
  EXPECT_TRUE(tmp->lifetime_from_mode);
  // Without --transients nothing changes.
  auto plain = one_level();
  run_pipeline(*plain, CompileOptions{});
  EXPECT_EQ(plain->arrays.size(), 2u);
  EXPECT_FALSE(only_nested(*plain->root.blocks[0]).sdfg->find_data("tmp")->lifetime_from_mode);
}

TEST(TransientLifetimes, NestedGpuTransientsInEveryModeAreProvenByTheVerifier) {
  // x, y and the nested SDFG's tmp on the GPU; the nested maps are kernels.
  auto build = [] {
    SDFGBuilder b("gpu_outer");
    b.symbol("N")
        .array("x", DType::Float64, {"N"}, false, StorageType::GPU_Global)
        .array("y", DType::Float64, {"N"}, false, StorageType::GPU_Global);
    auto st = b.state("call");
    call_nested(st, twice_plus_three("inner", "L", StorageType::GPU_Global, ScheduleType::GPU_Device), {{"L", "N - 2"}},
                "x", "y", "1:N - 1");
    return b.build();
  };
  for (TransientMode m : {TransientMode::External, TransientMode::Persistent, TransientMode::Pool,
                          TransientMode::Scoped, TransientMode::AsDeclared})
    for (int streams : {0, 2}) {
      SCOPED_TRACE(fmt::format("{} --gpu-streams {}", to_string(m), streams));
      auto sdfg = build();
      CompileOptions o = mode(m, Target::CUDA, streams);
      GeneratedProgram prog = generate_program(*sdfg, o, "gpu_outer");
      expect_valid(*sdfg);
      SyncReport r = verify_sync(*sdfg, o);
      for (auto& race : r.races) ADD_FAILURE() << race;
      const DataDesc* lifted = sdfg->find_data("inner_tmp");
      const DataDesc* inner = only_nested(*sdfg->root.blocks[0]).sdfg->find_data("tmp");
      if (m == TransientMode::External || m == TransientMode::Persistent) {
        ASSERT_NE(lifted, nullptr);
        EXPECT_EQ(lifted->storage, StorageType::GPU_Global);
        EXPECT_FALSE(inner->transient);
      } else if (m == TransientMode::AsDeclared) {
        // As declared, the GPU transient rises with its default lifetime: once per program call
        // (the call's arena), not a device malloc and free at each call of the nested SDFG.
        ASSERT_NE(lifted, nullptr);
        EXPECT_EQ(lifted->storage, StorageType::GPU_Global);
        EXPECT_EQ(lifted->lifetime, Lifetime::Scope);
        EXPECT_FALSE(lifted->lifetime_from_mode);
        EXPECT_EQ(lifted->place, DataDesc::Place::Call);
        EXPECT_FALSE(inner->transient);
      } else {
        EXPECT_EQ(lifted, nullptr);
        EXPECT_TRUE(inner->transient);
        EXPECT_EQ(inner->pool, m == TransientMode::Pool);
      }
      if (m == TransientMode::External) {
        ASSERT_EQ(sdfg->workspaces.size(), 1u);
        EXPECT_EQ(sdfg->workspaces[0].storage, StorageType::GPU_Global);
      }
    }
}

TEST(TransientLifetimes, NestedDefaultArgumentsTakeTheStorageTheyAreJoinedTo) {
  // normalize (which runs first): the nested SDFG leaves src and dst at Default storage, as DaCe's
  // frontend does; DaCe's rule gives them the storage of the containers their connectors are
  // joined to: GPU_Global from the GPU arrays, CPU_Heap from the host ones.
  for (StorageType outer : {StorageType::GPU_Global, StorageType::CPU_Heap}) {
    SCOPED_TRACE(to_string(outer));
    SDFGBuilder b("joined");
    b.symbol("N").array("x", DType::Float64, {"N"}, false, outer).array("y", DType::Float64, {"N"}, false, outer);
    auto st = b.state("call");
    call_nested(st, twice_plus_three("inner", "L"), {{"L", "N"}}, "x", "y", "0:N");
    auto sdfg = b.build();
    run_passes(*sdfg, {"expand-library-nodes", "fold-views", "normalize"},
               mode(TransientMode::AsDeclared, Target::CUDA));
    const SDFG& inner = *only_nested(*sdfg->root.blocks[0]).sdfg;
    EXPECT_EQ(inner.find_data("src")->storage, outer);
    EXPECT_EQ(inner.find_data("dst")->storage, outer);
    EXPECT_EQ(inner.find_data("tmp")->storage, StorageType::CPU_Heap);  // a transient: Default's meaning
  }
}
