// outline-kernels' launch geometry (passes/OutlineKernels.h): the lead along x for maps over an
// interior, the planes a 3D kernel's thread marches (16, or 4 for big bodies), the layouts of
// kernels over data whose unit stride is known here or only at the call, and which kernels are
// programmatic dependent launches.
#include <fmt/format.h>

#include "TestUtil.h"
#include "compiler/Compile.h"
#include "ir/Builder.h"
#include "passes/Pipeline.h"

using namespace sdfc;
using namespace sdfc::test;

namespace {

/// A 3D GPU map over [k, i, j] from `start` in every dimension whose body is a chain of `tasklets`
/// tasklets (each adds 1 to the previous one's value), reading A and writing B at `index`.
std::unique_ptr<SDFG> chain3d(int tasklets, const std::string& start, const std::string& index = "k, i, j") {
  SDFGBuilder b("chain3d");
  b.symbol("N");
  b.array("A", DType::Float64, {"N", "N", "N"}, false, StorageType::GPU_Global);
  b.array("B", DType::Float64, {"N", "N", "N"}, false, StorageType::GPU_Global);
  for (int t = 0; t + 1 < tasklets; ++t) b.scalar(fmt::format("s{}", t), DType::Float64, true);
  auto s = b.state("s");
  std::string r = start + ":N";
  auto [entry, exit] = s.map("m", {"k", "i", "j"}, {r, r, r}, ScheduleType::GPU_Device);
  int a = s.access("A"), out = s.access("B");
  int prev = -1;
  for (int t = 0; t < tasklets; ++t) {
    int node = s.tasklet(fmt::format("t{}", t), {"x"}, {"y"}, "y = x + 1", Language::Python, entry);
    if (t == 0)
      s.edge(entry, "OUT_A", node, "x", "A", index);
    else
      s.edge(prev, "", node, "x", fmt::format("s{}", t - 1), "0");
    if (t + 1 == tasklets) {
      s.edge(node, "y", exit, "IN_B", "B", index);
    } else {
      prev = s.access(fmt::format("s{}", t), entry);
      s.edge(node, "y", prev, "", fmt::format("s{}", t), "0");
    }
  }
  s.edge(a, "", entry, "IN_A", "A", fmt::format("{0}:N, {0}:N, {0}:N", start));
  s.edge(exit, "OUT_B", out, "", "B", fmt::format("{0}:N, {0}:N, {0}:N", start));
  return b.build();
}

const KernelPlan& plan_of(SDFG& sdfg, CompileOptions o = {}) {
  if (o.target == Target::CPU) o.target = Target::CUDA;
  run_pipeline(sdfg, o);
  for (auto& n : sdfg.root.blocks[0]->nodes)
    if (n->kind == NodeKind::MapEntry && n->kernel) return *n->kernel;
  throw std::runtime_error("no kernel");
}

/// chain3d's A and B with the strides `strides` (symbols, or constants).
std::unique_ptr<SDFG> with_strides(std::unique_ptr<SDFG> sdfg, const std::vector<std::string>& strides) {
  for (const char* name : {"A", "B"}) {
    DataDesc* d = sdfg->find_data(name);
    d->strides.clear();
    for (auto& s : strides) {
      d->strides.push_back(parse_expr(s));
      bool known = std::any_of(sdfg->symbols.begin(), sdfg->symbols.end(), [&](auto& sym) { return sym.first == s; });
      if (!as_constant(d->strides.back()) && !known) sdfg->symbols.emplace_back(s, DType::Int64);
    }
  }
  return sdfg;
}

/// A 2D GPU map over [i, j] whose tasklet adds A[i, j] into S[j] and T[0] with the resolution
/// `wcr`; A's strides `strides` (symbols: a layout per dimension on x, chosen at the call).
std::unique_ptr<SDFG> sums2d(const std::vector<std::string>& strides, const std::string& wcr) {
  SDFGBuilder b("sums2d");
  b.symbol("N");
  b.array("A", DType::Float64, {"N", "N"}, false, StorageType::GPU_Global);
  b.array("S", DType::Float64, {"N"}, false, StorageType::GPU_Global);
  b.array("T", DType::Float64, {"1"}, false, StorageType::GPU_Global);
  b.array("R", DType::Float64, {"N"}, false, StorageType::GPU_Global);
  auto s = b.state("s");
  auto [entry, exit] = s.map("m", {"i", "j"}, {"0:N", "0:N"}, ScheduleType::GPU_Device);
  int a = s.access("A"), sums = s.access("S"), total = s.access("T"), rows = s.access("R");
  int t = s.tasklet("t", {"x"}, {"c", "d", "e"}, "c = x\nd = x\ne = x", Language::Python, entry);
  s.edge(a, "", entry, "IN_A", "A", "0:N, 0:N");
  s.edge(entry, "OUT_A", t, "x", "A", "i, j");
  s.edge(t, "c", exit, "IN_S", "S", "j", wcr);
  s.edge(t, "d", exit, "IN_T", "T", "0", wcr);
  s.edge(t, "e", exit, "IN_R", "R", "i", wcr);
  s.edge(exit, "OUT_S", sums, "", "S", "0:N", wcr);
  s.edge(exit, "OUT_T", total, "", "T", "0", wcr);
  s.edge(exit, "OUT_R", rows, "", "R", "0:N", wcr);
  auto sdfg = b.build();
  DataDesc* d = sdfg->find_data("A");
  d->strides.clear();
  for (auto& x : strides) {
    d->strides.push_back(parse_expr(x));
    if (!as_constant(d->strides.back())) sdfg->symbols.emplace_back(x, DType::Int64);
  }
  return sdfg;
}

/// The data each of `k`'s accumulations adds into, with " combined" where a warp's threads combine
/// and " per point" where it does not add up over the rows.
std::vector<std::string> accumulated(const SDFG& sdfg, const KernelPlan& k) {
  std::vector<std::string> out;
  for (auto& a : k.accumulations)
    out.push_back(sdfg.root.blocks[0]->edges[static_cast<std::size_t>(a.edge)].memlet.data +
                  (a.combined ? " combined" : "") + (a.per_point ? " per point" : ""));
  return out;
}

}  // namespace

TEST(OutlineKernels, DataWhoseUnitStrideIsKnownOnlyAtTheCallGetsALayoutPerDimensionOnX) {
  // The map [k, i, j] reads A[i, j, k], as GT4Py writes its 3D stencils: the default layout puts j
  // on x (GT4Py's GPU order, A's dimension 1 fastest); in C order k indexes the unit stride, in
  // Fortran order i.
  auto gt4py = with_strides(chain3d(1, "1", "i, j, k"), {"sA0", "sA1", "sA2"});
  const KernelPlan& p = plan_of(*gt4py);
  ASSERT_EQ(p.layouts.size(), 3u);
  EXPECT_EQ(p.layout_data, "A");
  EXPECT_EQ(p.layouts[0].x, 2);
  EXPECT_EQ(p.layouts[0].data_dim, 1);
  EXPECT_EQ(p.layouts[1].x, 0);
  EXPECT_EQ(p.layouts[1].data_dim, 2);
  EXPECT_EQ(p.layouts[2].x, 1);
  EXPECT_EQ(p.layouts[2].data_dim, 0);
  EXPECT_EQ(p.layouts[2].pitch_dim, 1);  // Fortran order folds j (A's dimension 1) into i
  EXPECT_EQ(p.layouts[0].lead, 1);       // the default aligns its x range (from 1)
  // C order's layout folds y (j, A's dimension 1) into x: its warps align at run time.
  EXPECT_EQ(p.layouts[0].pitch_dim, -1);
  EXPECT_EQ(p.layouts[1].pitch_dim, 1);
  EXPECT_EQ(p.layouts[1].lead, 0);
  EXPECT_EQ(p.layouts[1].rows, 8);  // folded layouts march 8 planes, the others the plan's 16
  EXPECT_EQ(p.layouts[0].rows, 0);
  // y and z: the others in their order, the last on y.
  EXPECT_EQ(dim_on_axis(p.layouts[1], 1, 3), 2);
  EXPECT_EQ(dim_on_axis(p.layouts[1], 2, 3), 1);
  EXPECT_EQ(dim_on_axis(p.layouts[0], 1, 3), 1);
  EXPECT_EQ(dim_on_axis(p.layouts[0], 2, 3), 0);

  // Where the map's last parameter indexes the last dimension, C order is the default; the other
  // dimensions get a layout each, the last first.
  auto c_order = with_strides(chain3d(1, "1"), {"sA0", "sA1", "sA2"});
  const KernelPlan& q = plan_of(*c_order);
  ASSERT_EQ(q.layouts.size(), 3u);
  for (int l = 0; l < 3; ++l) {
    EXPECT_EQ(q.layouts[static_cast<std::size_t>(l)].x, 2 - l);
    EXPECT_EQ(q.layouts[static_cast<std::size_t>(l)].data_dim, 2 - l);
  }

  // Known strides decide here: one layout.
  auto known = with_strides(chain3d(1, "1"), {"N * N", "N", "1"});
  EXPECT_EQ(plan_of(*known).layouts.size(), 1u);
}

TEST(OutlineKernels, AKnownUnitStridePutsTheParameterIndexingItOnX) {
  // The map [k, i, j] over A[k, i, j] in Fortran order (k's dimension contiguous, as GT4Py's
  // transients on the GPU): k on x, decided here, one layout.
  auto fortran = with_strides(chain3d(1, "0"), {"1", "N", "N * N"});
  const KernelPlan& p = plan_of(*fortran);
  ASSERT_EQ(p.layouts.size(), 1u);
  EXPECT_EQ(p.layout_data, "A");  // A and B tie; the first by name
  EXPECT_EQ(p.layouts[0].x, 0);
  EXPECT_EQ(p.layouts[0].data_dim, 0);
  EXPECT_EQ(dim_on_axis(p.layouts[0], 1, 3), 2);  // the others in their order, the last on y
  EXPECT_EQ(dim_on_axis(p.layouts[0], 2, 3), 1);
  // C order, known: the default already has the contiguous dimension on x.
  auto c_order = with_strides(chain3d(1, "0"), {"N * N", "N", "1"});
  const KernelPlan& c = plan_of(*c_order);
  ASSERT_EQ(c.layouts.size(), 1u);
  EXPECT_EQ(c.layouts[0].x, 2);
  EXPECT_TRUE(c.layout_data.empty());
}

TEST(OutlineKernels, ThreeDimensionalKernelsMarchSixteenPlanesUnlessTheirBodyIsBig) {
  auto small = chain3d(3, "0");
  const KernelPlan& p = plan_of(*small);
  EXPECT_EQ(p.rows, 16);
  EXPECT_EQ(p.march, 2);
  EXPECT_EQ(p.block[0] * p.block[1] * p.block[2], 256);
  auto big = chain3d(40, "0");
  EXPECT_EQ(plan_of(*big).rows, 4);
}

TEST(OutlineKernels, MapsOverAnInteriorLeadWithIdleThreads) {
  auto from0 = chain3d(1, "0");
  EXPECT_EQ(plan_of(*from0).layouts[0].lead, 0);
  auto from1 = chain3d(1, "1");
  EXPECT_EQ(plan_of(*from1).layouts[0].lead, 1);
  auto from33 = chain3d(1, "33");
  EXPECT_EQ(plan_of(*from33).layouts[0].lead, 1);  // warps start at 32, 64, ...
  auto from32 = chain3d(1, "32");
  EXPECT_EQ(plan_of(*from32).layouts[0].lead, 0);
}

TEST(OutlineKernels, KernelsAreDependentLaunchesOnCudaFromSm90Only) {
  auto dependent = [](Target target, const std::string& arch, bool option = true) {
    auto sdfg = chain3d(1, "0");
    CompileOptions o;
    o.target = target;
    o.gpu_arch = arch;
    o.dependent_launch = option;
    return plan_of(*sdfg, o).dependent_launch;
  };
  EXPECT_TRUE(dependent(Target::CUDA, ""));  // the default architecture, sm_90
  for (const char* arch : {"sm_90", "sm_90a", "sm_100", "sm_100a", "sm_120f", "compute_90"})
    EXPECT_TRUE(dependent(Target::CUDA, arch)) << arch;
  for (const char* arch : {"sm_80", "sm_89", "compute_86", "native", "sm_", "sm_90x", "sm_90,sm_80", "gfx90a"})
    EXPECT_FALSE(dependent(Target::CUDA, arch)) << arch;
  EXPECT_FALSE(dependent(Target::CUDA, "sm_90", false));  // --no-dependent-launch
  EXPECT_FALSE(dependent(Target::HIP, ""));
  EXPECT_FALSE(dependent(Target::HIP, "gfx942"));
}

namespace {

/// A 1D GPU map over i in [start, N) with `tasklets` chained tasklets, B[i] = A[i] + tasklets.
std::unique_ptr<SDFG> map1d(const std::string& start, int tasklets = 1) {
  SDFGBuilder b("map1d");
  b.symbol("N");
  b.array("A", DType::Float64, {"N"}, false, StorageType::GPU_Global);
  b.array("B", DType::Float64, {"N"}, false, StorageType::GPU_Global);
  for (int t = 0; t + 1 < tasklets; ++t) b.scalar(fmt::format("s{}", t), DType::Float64, true);
  auto s = b.state("s");
  auto [entry, exit] = s.map("m", {"i"}, {start + ":N"}, ScheduleType::GPU_Device);
  int a = s.access("A"), out = s.access("B");
  int prev = -1;
  for (int t = 0; t < tasklets; ++t) {
    int node = s.tasklet(fmt::format("t{}", t), {"x"}, {"y"}, "y = x + 1", Language::Python, entry);
    if (t == 0)
      s.edge(entry, "OUT_A", node, "x", "A", "i");
    else
      s.edge(prev, "", node, "x", fmt::format("s{}", t - 1), "0");
    if (t + 1 == tasklets) {
      s.edge(node, "y", exit, "IN_B", "B", "i");
    } else {
      prev = s.access(fmt::format("s{}", t), entry);
      s.edge(node, "y", prev, "", fmt::format("s{}", t), "0");
    }
  }
  s.edge(a, "", entry, "IN_A", "A", start + ":N");
  s.edge(exit, "OUT_B", out, "", "B", start + ":N");
  return b.build();
}

}  // namespace

TEST(OutlineKernels, OneDimensionalKernelsComputeTwoPointsABlockApart) {
  auto small = map1d("0");
  const KernelPlan& p = plan_of(*small);
  EXPECT_EQ(p.rows, 2);
  EXPECT_EQ(p.march, 0);
  // Not where the range needs idle lead threads (from 1: aligned warps instead) or the body is
  // big (it is printed twice).
  auto interior = map1d("1");
  EXPECT_EQ(plan_of(*interior).rows, 1);
  EXPECT_EQ(plan_of(*interior).layouts[0].lead, 1);
  auto big = map1d("0", 40);
  EXPECT_EQ(plan_of(*big).rows, 1);
}

// A sum accumulates over a thread's rows only where no layout marches along a parameter of its
// index: with A's unit stride known (x = j, rows along i) S[j] and T[0] do, and the kernel marches
// 32 rows; R[i] changes along the rows but not along x: per point, a warp's threads combined by
// element. With strides known only at the call (a layout with i on x marches along j) only T[0]
// (R[i] and S[j] change along x in one layout or the other); CUDA combines T[0]'s in each warp,
// HIP does not, and HIP has no per-point sums; a max is no device add, and stays per point.
TEST(OutlineKernels, WriteConflictedSumsAccumulateOverRowsNoLayoutMarchesThrough) {
  using Sums = std::vector<std::string>;
  const std::string sum = "lambda a, b: a + b";
  {
    auto sdfg = sums2d({"N", "1"}, sum);
    const KernelPlan& k = plan_of(*sdfg);
    EXPECT_EQ(accumulated(*sdfg, k), (Sums{"S", "T combined", "R combined per point"}));
    EXPECT_EQ(k.rows, 32);
  }
  {
    auto sdfg = sums2d({"sA0", "sA1"}, sum);
    const KernelPlan& k = plan_of(*sdfg);
    ASSERT_EQ(k.layouts.size(), 2u);
    EXPECT_EQ(accumulated(*sdfg, k), (Sums{"T combined"}));
  }
  {
    auto sdfg = sums2d({"N", "1"}, sum);
    CompileOptions hip;
    hip.target = Target::HIP;
    EXPECT_EQ(accumulated(*sdfg, plan_of(*sdfg, hip)), (Sums{"S", "T"}));
  }
  {
    auto sdfg = sums2d({"N", "1"}, "lambda a, b: max(a, b)");
    const KernelPlan& k = plan_of(*sdfg);
    EXPECT_TRUE(k.accumulations.empty());
    EXPECT_EQ(k.rows, 4);
  }
}
