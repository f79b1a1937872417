// transient-layouts (passes/TransientLayouts.h): which GPU transients follow which argument's
// layout, and the strides they take at the call, evaluated for C and Fortran order.
#include "TestUtil.h"
#include "compiler/Compile.h"
#include "ir/Builder.h"
#include "ir/Walk.h"
#include "passes/Pipeline.h"
#include "passes/TransientLayouts.h"

using namespace sdfc;
using namespace sdfc::test;

namespace {

struct Shape {
  bool unpaired_middle = false;  ///< T is [N, 3, M] with dimension 1 indexed by a constant
  Lifetime lifetime = Lifetime::Scope;
  bool host_copy = false;         ///< T is also copied to a host array outside the kernels
  bool constant_strides = false;  ///< A and B in C order as the builder declares them: [M, 1]
};

/// Two GPU maps over [i, j]: the first reads A[i, j] and writes T, the second reads T and writes
/// B[i, j]. A and B have symbolic strides (GT4Py's arguments); T is declared with its first
/// dimension contiguous (GT4Py's transients).
std::unique_ptr<SDFG> two_maps(const Shape& shape) {
  SDFGBuilder b("two_maps");
  b.symbol("N").symbol("M");
  b.array("A", DType::Float64, {"N", "M"}, false, StorageType::GPU_Global);
  b.array("B", DType::Float64, {"N", "M"}, false, StorageType::GPU_Global);
  std::vector<std::string> t_shape =
      shape.unpaired_middle ? std::vector<std::string>{"N", "3", "M"} : std::vector<std::string>{"N", "M"};
  b.array("T", DType::Float64, t_shape, true, StorageType::GPU_Global, shape.lifetime);
  if (shape.host_copy) b.array("H", DType::Float64, t_shape, false, StorageType::CPU_Heap);
  std::string at = shape.unpaired_middle ? "T[i, 1, j]" : "T[i, j]";
  auto s = b.state("s");
  std::map<std::string, int> outer;
  s.mapped_tasklet("first", {{"i", "0:N"}, {"j", "0:M"}}, {{"x", "A[i, j]"}}, "y = x + 1", {{"y", at}},
                   ScheduleType::GPU_Device, &outer);
  s.mapped_tasklet("second", {{"i", "0:N"}, {"j", "0:M"}}, {{"x", at}}, "y = 2 * x", {{"y", "B[i, j]"}},
                   ScheduleType::GPU_Device, &outer);
  if (shape.host_copy) {
    std::string all = shape.unpaired_middle ? "0:N, 0:3, 0:M" : "0:N, 0:M";
    s.copy(outer.at("T"), s.access("H"), all, all);
  }
  auto sdfg = b.build();
  DataDesc& t = *sdfg->find_data("T");
  t.strides = shape.unpaired_middle ? std::vector<Expr>{parse_expr("1"), parse_expr("N"), parse_expr("3 * N")}
                                    : std::vector<Expr>{parse_expr("1"), parse_expr("N")};
  for (const char* name : {"A", "B"}) {
    DataDesc& d = *sdfg->find_data(name);
    if (shape.constant_strides) continue;  // C order, as the builder declares
    d.strides = {parse_expr(std::string("s") + name + "0"), parse_expr(std::string("s") + name + "1")};
    sdfg->symbols.emplace_back(std::string("s") + name + "0", DType::Int64);
    sdfg->symbols.emplace_back(std::string("s") + name + "1", DType::Int64);
  }
  return sdfg;
}

std::vector<std::int64_t> strides_at(const DataDesc& d, const std::map<std::string, std::int64_t>& syms) {
  std::vector<std::int64_t> out;
  for (auto& x : d.strides) out.push_back(evaluate(x, syms).value_or(-999));
  return out;
}

const DataDesc& laid_out(SDFG& sdfg, CompileOptions o = {}) {
  o.target = Target::CUDA;
  run_pipeline(sdfg, o);
  return *sdfg.find_data("T");
}

using Strides = std::vector<std::int64_t>;

Shape with(bool Shape::*flag) {
  Shape s;
  s.*flag = true;
  return s;
}

}  // namespace

TEST(TransientLayouts, ATransientTakesTheOrderOfTheArgumentBesideItAtTheCall) {
  auto sdfg = two_maps({});
  const DataDesc& t = laid_out(*sdfg);
  EXPECT_EQ(t.layout_follows, "A");  // A and B pair both dimensions in one kernel each: by name
  EXPECT_EQ(t.layout_dims, (std::vector<int>{0, 1}));
  std::map<std::string, std::int64_t> c_order = {{"N", 5}, {"M", 7}, {"sA0", 7}, {"sA1", 1}};
  std::map<std::string, std::int64_t> fortran = {{"N", 5}, {"M", 7}, {"sA0", 1}, {"sA1", 5}};
  std::map<std::string, std::int64_t> padded = {{"N", 5}, {"M", 7}, {"sA0", 8}, {"sA1", 1}};
  std::map<std::string, std::int64_t> negative = {{"N", 5}, {"M", 7}, {"sA0", -7}, {"sA1", -1}};
  std::map<std::string, std::int64_t> equal = {{"N", 1}, {"M", 1}, {"sA0", 1}, {"sA1", 1}};
  EXPECT_EQ(strides_at(t, c_order), (Strides{7, 1}));
  EXPECT_EQ(strides_at(t, fortran), (Strides{1, 5}));  // the declared layout
  EXPECT_EQ(strides_at(t, padded), (Strides{7, 1}));   // T stays dense
  EXPECT_EQ(strides_at(t, negative), (Strides{7, 1}));
  EXPECT_EQ(strides_at(t, equal), (Strides{1, 1}));  // ties: the declared order
  EXPECT_EQ(evaluate(t.total_size, c_order), 35);    // the size is unchanged
}

TEST(TransientLayouts, ADimensionNoParameterIndexesStaysAfterTheOneItFollows) {
  auto sdfg = two_maps(with(&Shape::unpaired_middle));
  const DataDesc& t = laid_out(*sdfg);
  EXPECT_EQ(t.layout_follows, "A");
  EXPECT_EQ(t.layout_dims, (std::vector<int>{0, -1, 1}));
  // C order: j fastest, then i, then the 3 (which follows i in the declared order)
  EXPECT_EQ(strides_at(t, {{"N", 5}, {"M", 7}, {"sA0", 7}, {"sA1", 1}}), (Strides{7, 35, 1}));
  EXPECT_EQ(strides_at(t, {{"N", 5}, {"M", 7}, {"sA0", 1}, {"sA1", 5}}), (Strides{1, 5, 15}));
}

TEST(TransientLayouts, TheKernelsThenChooseTheirLayoutAtTheLaunch) {
  auto sdfg = two_maps({});
  laid_out(*sdfg);
  for (auto& n : sdfg->root.blocks[0]->nodes)
    if (n->kind == NodeKind::MapEntry && n->kernel) {
      EXPECT_EQ(n->kernel->layouts.size(), 2u) << n->label;
    }
}

TEST(TransientLayouts, TransientsOutsideKernelsOrAcrossCallsOrBesideKnownLayoutsKeepTheFilesLayout) {
  auto declared = [](const DataDesc& t) {
    return t.layout_follows.empty() && equal(t.strides[0], parse_expr("1")) && equal(t.strides[1], parse_expr("N"));
  };
  {
    auto sdfg = two_maps(with(&Shape::host_copy));
    EXPECT_TRUE(declared(laid_out(*sdfg))) << "a copy to the host reads T outside the kernels";
  }
  {
    Shape persistent;
    persistent.lifetime = Lifetime::Persistent;
    auto sdfg = two_maps(persistent);
    EXPECT_TRUE(declared(laid_out(*sdfg))) << "a persistent transient holds data across calls";
  }
  {
    auto sdfg = two_maps(with(&Shape::constant_strides));
    EXPECT_TRUE(declared(laid_out(*sdfg))) << "arguments whose layout is known here";
  }
  {
    auto sdfg = two_maps({});
    CompileOptions o;
    o.transient_layouts = false;
    EXPECT_TRUE(declared(laid_out(*sdfg, o))) << "--declared-transient-layouts";
  }
  {
    auto sdfg = two_maps({});
    lay_out_transients(*sdfg, CompileOptions{});
    EXPECT_TRUE(declared(*sdfg->find_data("T"))) << "the CPU target";
  }
}

namespace {

/// GT4Py's neighbour reduction (tests/passes/transient_layouts_c2e.sdfg, the corpus's
/// gt4py_c2e_reduce_s program_gpu.sdfg): its transient gtir_tmp_1 reaches two nested SDFGs (the max
/// and min reductions) inside kernels, as their `_in`.
/// Its Reduce library nodes are nested SDFGs once expanded: the file after the passes before
/// transient-layouts.
std::unique_ptr<SDFG> c2e() {
  auto sdfg = load_sdfg_file(SDFC_CODEGEN_TESTS "/../passes/transient_layouts_c2e.sdfg");
  CompileOptions o;
  o.target = Target::CUDA;
  run_passes(*sdfg, {"expand-library-nodes", "fold-views", "normalize", "fuse-maps"}, o);
  return sdfg;
}

const DataDesc& after_transient_layouts(SDFG& sdfg) {
  CompileOptions o;
  o.target = Target::CUDA;
  run_passes(sdfg, {"transient-layouts"}, o);
  return *sdfg.find_data("gtir_tmp_1");
}

/// The nested SDFG nodes whose `_in` is gtir_tmp_1.
std::vector<Node*> reductions(SDFG& sdfg) {
  std::vector<Node*> out;
  walk::for_each_block(sdfg.root, "", [&](Block& b, const std::string&) {
    for (auto& n : b.nodes)
      if (n->kind == NodeKind::NestedSDFG && n->sdfg && n->sdfg->find_data("_in") &&
          n->sdfg->find_data("_in")->strides.size() == 3)
        out.push_back(n.get());
  });
  return out;
}

}  // namespace

TEST(TransientLayouts, NestedSdfgsReceivingTheTransientTakeItsStridesAndTheirSymbols) {
  auto sdfg = c2e();
  ASSERT_EQ(reductions(*sdfg).size(), 2u);
  const DataDesc& t = after_transient_layouts(*sdfg);
  ASSERT_EQ(t.layout_follows, "q_avg");
  for (Node* n : reductions(*sdfg)) {
    const DataDesc& in = *n->sdfg->find_data("_in");
    for (std::size_t j = 0; j < 3; ++j) EXPECT_TRUE(equal(in.strides[j], t.strides[j])) << n->label << " " << j;
    for (const char* sym : {"__q_avg_Cell_stride", "__q_avg_K_stride", "__q_avg_K_range_0"}) {
      EXPECT_TRUE(n->sdfg->symbol_type(sym).has_value()) << sym;
      bool mapped = false;
      for (auto& [inner, outer] : n->symbol_mapping) mapped |= inner == sym && equal(outer, make_symbol(sym));
      EXPECT_TRUE(mapped) << sym;
    }
  }
}

TEST(TransientLayouts, ANestedSdfgThatDeclaresOtherStridesOrNamesASymbolOtherwiseKeepsTheFilesLayout) {
  {
    auto sdfg = c2e();
    reductions(*sdfg)[0]->sdfg->find_data("_in")->strides[1] = parse_expr("7");
    EXPECT_EQ(after_transient_layouts(*sdfg).layout_follows, "") << "an _in with strides other than the transient's";
  }
  {
    auto sdfg = c2e();
    Node& n = *reductions(*sdfg)[1];
    n.sdfg->symbols.emplace_back("__q_avg_K_stride", DType::Int32);
    n.symbol_mapping.emplace_back("__q_avg_K_stride", parse_expr("__q_avg_K_stride + 1"));
    EXPECT_EQ(after_transient_layouts(*sdfg).layout_follows, "")
        << "a nested SDFG whose __q_avg_K_stride is another value";
  }
}
