// Forms DaCe's frontends and expansions make, end to end: maps whose range of one dimension uses
// the parameter of an earlier one (DaCe runs a map's dimensions as nested loops, outermost first;
// its GPU reduction expansion makes such maps), compiled and run on the host, refused on a GPU
// map, an error of validation where a range uses a later parameter; and tasklets that assign a
// dynamic output with a write-conflict resolution under a condition.
#include <fmt/format.h>

#include <cmath>

#include "TestUtil.h"
#include "ir/Builder.h"
#include "ir/Memlets.h"
#include "sdfc/sdfc.h"

using namespace sdfc;
using namespace sdfc::test;

namespace {

constexpr int kN = 6;

/// out[i, j] = i * N + j over the upper triangle (j from i), in one map of `schedule`.
std::string triangle(const std::string& j_range, ScheduleType schedule = ScheduleType::Default) {
  SDFGBuilder b("triangle");
  b.symbol("N").array("out", DType::Float64, {"N", "N"});
  auto s = b.state("s");
  s.mapped_tasklet("upper", {{"i", "0:N"}, {"j", j_range}}, {}, "o = i * N + j", {{"o", "out[i, j]"}}, schedule);
  auto sdfg = b.build();
  // outside the map, the write covers the whole of out (the builder's propagation would keep i)
  for (auto& e : sdfg->root.blocks[0]->edges)
    if (sdfg->root.blocks[0]->node(e.src).kind == NodeKind::MapExit)
      e.memlet.subset = full_range(*sdfg->find_data("out"));
  return write_sdfg(*sdfg);
}

std::string refusal(const std::string& text, const Options& o = {}) {
  try {
    Program::compile_string(text, o);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST(MapRanges, ARangeUsingAnEarlierParameterRunsAsNestedLoops) {
  for (ScheduleType schedule : {ScheduleType::Default, ScheduleType::Sequential}) {
    SCOPED_TRACE(to_string(schedule));
    Program p = Program::compile_string(triangle("i:N", schedule));
    std::vector<double> out(kN * kN, -1.0);
    p.set_array("out", out.data(), out.size());
    p.set_value("N", kN);
    p.call();
    for (int i = 0; i < kN; ++i)
      for (int j = 0; j < kN; ++j) EXPECT_EQ(out[i * kN + j], j >= i ? double(i * kN + j) : -1.0) << i << ", " << j;
  }
}

TEST(MapRanges, ARangeUsingALaterParameterIsAnErrorOfValidation) {
  SDFGBuilder b("later");
  b.symbol("N").array("out", DType::Float64, {"N", "N"});
  auto s = b.state("s");
  s.mapped_tasklet("m", {{"i", "j:N"}, {"j", "0:N"}}, {}, "o = 1.0", {{"o", "out[i, j]"}});
  std::string e = refusal(write_sdfg(*b.build()));
  EXPECT_NE(e.find("undefined symbol \"j\" in the range of map"), std::string::npos) << e;
}

TEST(MapRanges, AGpuMapWhoseRangeUsesItsOwnParameterIsRefused) {
  Options o;
  o.target = "cuda";
  std::string e = refusal(triangle("i:N", ScheduleType::GPU_Device), o);
  EXPECT_NE(e.find("the range of parameter \"j\" of GPU_Device map"), std::string::npos) << e;
  EXPECT_NE(e.find("uses its parameter \"i\""), std::string::npos) << e;
  EXPECT_NE(e.find("/attributes/range/ranges/1"), std::string::npos) << e;
}

namespace {

/// out[0] (+)= X[i] for the positive X[i] only: a tasklet whose dynamic output with a
/// write-conflict resolution is assigned under a condition (DaCe's GPU reductions write so).
std::string conditional_wcr(const std::string& wcr, ScheduleType schedule) {
  SDFGBuilder b("conditional_wcr");
  b.symbol("N").array("X", DType::Float64, {"N"}).array("out", DType::Float64, {"1"});
  auto s = b.state("s");
  s.mapped_tasklet("pos", {{"i", "0:N"}}, {{"a", "X[i]"}}, "if a > 0:\n    o = a", {{"o", "out[0]"}}, schedule);
  auto sdfg = b.build();
  for (auto& e : sdfg->root.blocks[0]->edges)
    if (e.memlet.data == "out") {
      e.memlet.dynamic = true;
      e.memlet.wcr = wcr;
    }
  return write_sdfg(*sdfg);
}

}  // namespace

TEST(ConditionalWcr, AnOutputNotAssignedWritesNothing) {
  struct Case {
    std::string wcr;
    double init, expected;
  };
  std::vector<double> x = {3, -1, 4, -1.5, 5, -9, 2, 6};
  for (ScheduleType schedule : {ScheduleType::Sequential, ScheduleType::CPU_Multicore})
    for (const Case& c : {Case{"(lambda x, y: (x + y))", 0.5, 0.5 + 3 + 4 + 5 + 2 + 6},
                          Case{"(lambda x, y: (x * y))", 0.5, 0.5 * 3 * 4 * 5 * 2 * 6},
                          Case{"(lambda x, y: min(x, y))", 100, 2}, Case{"(lambda x, y: max(x, y))", -100, 6}}) {
      SCOPED_TRACE(c.wcr + " " + std::string(to_string(schedule)));
      Program p = Program::compile_string(conditional_wcr(c.wcr, schedule));
      std::vector<double> out = {c.init};
      p.set_array("X", x.data(), x.size());
      p.set_array("out", out.data(), out.size());
      p.set_value("N", static_cast<int64_t>(x.size()));
      p.call();
      EXPECT_EQ(out[0], c.expected);
    }
}

TEST(ConditionalWcr, AGeneralLambdaOnADynamicOutputIsRefused) {
  std::string e = refusal(conditional_wcr("(lambda x, y: (2 * x + y))", ScheduleType::Sequential));
  EXPECT_NE(e.find("dynamic output \"o\" of tasklet \"pos\" with write-conflict resolution"), std::string::npos) << e;
  EXPECT_NE(e.find("only a sum, product, min or max has an identity"), std::string::npos) << e;
}

TEST(DaceCblas, DaCesOwnCblasExpansionRunsWithTheBlasLibrary) {
  // NPBench's gemm, C = alpha * A @ B + beta * C, as DaCe's auto_optimize expands it (a CPP tasklet
  // calling cblas_dgemm, with DaCe's OpenBLAS environment), against a product computed here.
  constexpr int NI = 5, NJ = 4, NK = 3;
  Program p = Program::compile_file(std::string(SDFC_TEST_DATA) + "/dace_openblas_gemm.sdfg");
  std::vector<double> A(NI * NK), B(NK * NJ), C(NI * NJ);
  for (int i = 0; i < NI * NK; ++i) A[i] = 0.5 * i - 1;
  for (int i = 0; i < NK * NJ; ++i) B[i] = 2.0 - 0.25 * i;
  for (int i = 0; i < NI * NJ; ++i) C[i] = i;
  std::vector<double> expected(NI * NJ);
  for (int i = 0; i < NI; ++i)
    for (int j = 0; j < NJ; ++j) {
      double s = 0;
      for (int k = 0; k < NK; ++k) s += A[i * NK + k] * B[k * NJ + j];
      expected[i * NJ + j] = 1.5 * s + 0.25 * C[i * NJ + j];
    }
  p.set_array("A", A.data(), A.size());
  p.set_array("B", B.data(), B.size());
  p.set_array("C", C.data(), C.size());
  p.set_value("alpha", 1.5);
  p.set_value("beta", 0.25);
  p.set_value("NI", NI);
  p.set_value("NJ", NJ);
  p.set_value("NK", NK);
  p.call();
  for (int i = 0; i < NI * NJ; ++i) EXPECT_DOUBLE_EQ(C[i], expected[i]) << i;
}

TEST(NestedPersistent, ATransientDeclaredPersistentInANestedSdfgKeepsItsValueBetweenCalls) {
  // DaCe's auto_optimize makes transients of nested SDFGs Persistent. tests/data/
  // make_nested_persistent.py: the nested SDFG copies tmp[0] into prev (what the previous call
  // left), then writes tmp = 2 * A and B = tmp + 1. transient-lifetimes moves tmp to the top level.
  constexpr int N = 5;
  Program p = Program::compile_file(std::string(SDFC_TEST_DATA) + "/nested_persistent.sdfg");
  std::vector<double> A(N), B(N, -1), prev(1, -1);
  p.set_array("A", A.data(), N);
  p.set_array("B", B.data(), N);
  p.set_array("prev", prev.data(), 1);
  p.set_value("N", N);
  for (int call = 0; call < 3; ++call) {
    for (int i = 0; i < N; ++i) A[i] = 10.0 * call + i;
    p.call();
    for (int i = 0; i < N; ++i) EXPECT_DOUBLE_EQ(B[i], 2 * A[i] + 1) << call << " " << i;
    if (call > 0) {
      EXPECT_DOUBLE_EQ(prev[0], 2 * (10.0 * (call - 1))) << call;
    }
  }
}

TEST(NestedPersistent, OneInsideAMapScopeIsRefused) {
  std::string e = "no error";
  try {
    Program::compile_file(std::string(SDFC_TEST_DATA) + "/nested_persistent_in_map.sdfg");
  } catch (const Error& x) {
    e = x.what();
  }
  EXPECT_NE(e.find("/attributes/_arrays/tmp/attributes/lifetime"), std::string::npos) << e;
  EXPECT_NE(e.find("only when no map scope encloses the nested SDFG"), std::string::npos) << e;
}

namespace {

std::string reshapes(const std::string& name) {
  return std::string(SDFC_TEST_DATA) + "/reshapes/" + name + ".sdfg";
}

/// Compiles tests/data/reshapes/<name>.sdfg and calls it once on the named arrays.
void call_reshape(const std::string& name, const std::vector<std::pair<const char*, std::vector<double>*>>& arrays) {
  Program p = Program::compile_file(reshapes(name));
  for (auto& [n, v] : arrays) p.set_array(n, v->data(), v->size());
  p.call();
}

}  // namespace

TEST(ReshapingCopies, ACopyThroughAReshapingViewPairsTheElementsInCOrder) {
  // DaCe's reshape_test: A[2, 3] viewed as Av[6] and copied to B[6], the memlet naming the view or B.
  for (const char* name : {"reshape_copy", "reshape_copy_dst"}) {
    std::vector<double> A(6), B(6, -1);
    for (int i = 0; i < 6; ++i) A[i] = 1.5 * i + 1;
    call_reshape(name, {{"A", &A}, {"B", &B}});
    for (int i = 0; i < 6; ++i) EXPECT_DOUBLE_EQ(B[i], A[i]) << name << " " << i;
  }
}

TEST(ReshapingCopies, ABlockOfAnArrayViewedFlatIsReadElementByElement) {
  // A[1, 0:3, 0:4] of A[2, 3, 4] viewed as Av[12]; B[i] += Av[i].
  std::vector<double> A(24), B(12);
  for (int i = 0; i < 24; ++i) A[i] = 0.25 * i;
  for (int i = 0; i < 12; ++i) B[i] = 100 + i;
  call_reshape("reshape_subset", {{"A", &A}, {"B", &B}});
  for (int i = 0; i < 12; ++i) EXPECT_DOUBLE_EQ(B[i], 100 + i + A[12 + i]) << i;
}

TEST(ReshapingCopies, NumpysReshapeOfTheDestinationIsWrittenInCOrder) {
  // C = np.reshape(B, [2, 3, 4]); C[:] = A with B[8, 3]: B's elements in C order are A's.
  std::vector<double> A(24), B(24, -1);
  for (int i = 0; i < 24; ++i) A[i] = 3.0 - 0.5 * i;
  call_reshape("reshape_dst", {{"A", &A}, {"B", &B}});
  for (int i = 0; i < 24; ++i) EXPECT_DOUBLE_EQ(B[i], A[i]) << i;
}

TEST(ReshapingCopies, AViewOfAPartReadsMemoryAsDaCesPointerDoes) {
  // Av[4] views A[0:2, 0:2] of A[2, 3] with stride 1: DaCe's view is a pointer to A[0, 0] with the
  // view's strides, so Av holds A's first 4 elements in memory (DaCe's own build: [1, 2, 3, 4] for
  // A = 1..6), not the part's elements in C order.
  std::vector<double> A{1, 2, 3, 4, 5, 6}, B(4, -1);
  call_reshape("reshape_strided_part", {{"A", &A}, {"B", &B}});
  for (int i = 0; i < 4; ++i) EXPECT_DOUBLE_EQ(B[i], A[i]) << i;
}

TEST(ReshapingCopies, AHostCopyBetweenPartsOfDifferentSizesIsRefused) {
  // C[0:N, 0:N] -> D[0:N]: a reshape of N * N elements into N.
  SDFGBuilder b("reshape_sizes");
  b.symbol("N").array("C", DType::Float64, {"N", "N"}).array("D", DType::Float64, {"N"});
  auto s = b.state("s");
  s.copy(s.access("C"), s.access("D"), "0:N, 0:N", "0:N");
  std::string e = refusal(write_sdfg(*b.build()));
  EXPECT_NE(e.find("copy from \"C\" to \"D\" reshapes N ** 2 element(s) into N"), std::string::npos) << e;
}

TEST(ReshapingCopies, AHostCopyThatReshapesPairsTheElementsInCOrder) {
  // C[1:3, 0:4] (8 elements) -> D[0:2, 0:2, 0:2]: D's elements in C order are C's rows 1 and 2.
  SDFGBuilder b("reshape_host");
  b.array("C", DType::Float64, {"4", "4"}).array("D", DType::Float64, {"2", "2", "2"});
  auto s = b.state("s");
  s.copy(s.access("C"), s.access("D"), "1:3, 0:4", "0:2, 0:2, 0:2");
  Program p = Program::compile_string(write_sdfg(*b.build()));
  std::vector<double> C(16), D(8, -1);
  for (int i = 0; i < 16; ++i) C[i] = i;
  p.set_array("C", C.data(), C.size());
  p.set_array("D", D.data(), D.size());
  p.call();
  for (int i = 0; i < 8; ++i) EXPECT_DOUBLE_EQ(D[i], C[4 + i]) << i;
}

TEST(ReshapingCopies, AWholeReshapingViewReachesACppTaskletAsAPointerToItsFirstElement) {
  // A[2, 3] viewed as Av[6], whole, on a C++ tasklet's pointer connector (DaCe's CBLAS expansions
  // take NPBench's lenet reshapes so): s = sum of (k + 1) * Av[k].
  std::vector<double> A{1, 2, 3, 4, 5, 6}, s(1, -1);
  call_reshape("reshape_cpp_tasklet", {{"A", &A}, {"s", &s}});
  double want = 0;
  for (int k = 0; k < 6; ++k) want += (k + 1) * A[k];
  EXPECT_DOUBLE_EQ(s[0], want);
}

// ---- DaCe's struct dtypes (NumPy's argmin and argmax, tests/data/structs) ----------------------

TEST(StructDtypes, ArgminAlongAnAxisMatchesNumpy) {
  // np.argmin(A, axis=1), A float64[10, 5, 3] with distinct values (DaCe's lambda keeps either
  // index on ties, in whatever order the parallel map reduces): the index of each minimum.
  Program p = Program::compile_file(data_path("structs/argmin_axis1.sdfg"));
  std::vector<double> A(150);
  for (int i = 0; i < 150; ++i) A[i] = std::sin(0.7 * i + 0.3) * 100;  // distinct
  std::vector<int> R(30, -7);
  p.set_array("A", A.data(), A.size());
  p.set_array("__return", R.data(), R.size());
  p.call();
  for (int i = 0; i < 10; ++i)
    for (int k = 0; k < 3; ++k) {
      int best = 0;
      for (int j = 1; j < 5; ++j)
        if (A[(i * 5 + j) * 3 + k] < A[(i * 5 + best) * 3 + k]) best = j;
      EXPECT_EQ(R[i * 3 + k], best) << i << " " << k;
    }
}

TEST(StructDtypes, ArgmaxOfAWholeIntegerArrayMatchesNumpy) {
  // np.argmax(A), A int32[7, 4]: the flat index of the maximum, called twice (the struct transient
  // starts from its identity on every call).
  Program p = Program::compile_file(data_path("structs/argmax_int32.sdfg"));
  for (int maximum : {5, 22}) {
    std::vector<int> A(28);
    for (int i = 0; i < 28; ++i) A[i] = (i * 13) % 28 - 40;  // distinct, all below the maximum
    A[maximum] = 100;
    int r = -1;
    p.set_array("A", A.data(), A.size());
    p.set_array("__return", &r, 1);
    p.call();
    EXPECT_EQ(r, maximum);
  }
}

TEST(StructDtypes, AStructArgumentIsRefusedByName) {
  Json j = load_json("structs/argmin_axis1.sdfg");
  j["attributes"]["_arrays"]["argmin_A"]["attributes"]["transient"] = false;
  std::string e = refusal(j.dump());
  EXPECT_NE(e.find("argument \"argmin_A\" has struct type \"_val_and_idx\": sdfc takes struct data as transients only"),
            std::string::npos)
      << e;
}

// DaCe's Structure descriptors (tests/data/structs/make_structs.py): the C structs DaCe's loader
// passes (ctypes structures of member pointers and scalar values), laid out as the library's.
struct CSRMatrix {
  int* indptr;
  int* indices;
  float* data;
};
struct InnerStruct {
  float* a;
  int b;
};
struct OuterStruct {
  InnerStruct* x;
  double* y;
};
struct BoundedArray {
  double* data;
  int length;
};

TEST(Structures, CsrToDenseThroughNestedSdfgsMatchesTheMatrix) {
  // A 6 x 5 CSR matrix with an empty row and a full one, read through the structure passed whole
  // into two nested SDFGs (interstate reads of indptr, memlet reads of indices and data).
  Program p = Program::compile_file(data_path("structs/csr_to_dense.sdfg"));
  std::vector<int> indptr{0, 2, 2, 7, 8, 8, 10}, indices{1, 3, 0, 1, 2, 3, 4, 4, 0, 2};
  std::vector<float> data{1.5f, -2, 3, 4, 5, 6, 7, 8, 9, 10};
  CSRMatrix A{indptr.data(), indices.data(), data.data()};
  for (int call = 0; call < 2; ++call) {
    std::vector<float> B(30, -1.0f);
    p.set_array("A", &A, "CSRMatrix", 1);
    p.set_array("B", B.data(), B.size());
    p.set_value("M", 6);
    p.set_value("N", 5);
    p.call();
    std::vector<float> expected(30, -1.0f);
    for (int i = 0; i < 6; ++i)
      for (int k = indptr[i]; k < indptr[i + 1]; ++k) expected[i * 5 + indices[k]] = data[k];
    EXPECT_EQ(B, expected);
    data[0] += 1;
  }
}

TEST(Structures, NestedStructuresAreCopiedMemberByMember) {
  // B.x.a[:] = A.x.a[:]; B.x.b = A.x.b + 1; C[0] = B.x.b; B.y[:] = A.y[:]: the scalar member is
  // written through the caller's struct.
  Program p = Program::compile_file(data_path("structs/struct_recursive.sdfg"));
  std::vector<float> aa(20), ba(20, 0.0f);
  std::vector<double> ay(100), by(100, 0.0);
  for (int i = 0; i < 20; ++i) aa[i] = 0.5f * i - 3;
  for (int i = 0; i < 100; ++i) ay[i] = std::cos(0.1 * i);
  InnerStruct ax{aa.data(), 41}, bx{ba.data(), 0};
  OuterStruct A{&ax, ay.data()}, B{&bx, by.data()};
  int C = -1;
  p.set_array("A", &A, "OuterStruct", 1);
  p.set_array("B", &B, "OuterStruct", 1);
  p.set_array("C", &C, 1);
  p.call();
  EXPECT_EQ(ba, aa);
  EXPECT_EQ(by, ay);
  EXPECT_EQ(bx.b, 42);
  EXPECT_EQ(C, 42);
  EXPECT_EQ(ax.b, 41);
}

TEST(Structures, DenseToCsrThroughATransientStructure) {
  // The transient structure's members are arrays of their own (sized by M and nnz), filled in
  // loops and copied into the argument's members.
  Program p = Program::compile_file(data_path("structs/dense_to_csr_local.sdfg"));
  const int M = 4, N = 5;
  std::vector<float> A{0, 1, 0, 2, 0, 0, 0, 0, 0, 0, 3, 0, 4, 0, 5, 0, 0, 0, 0, 6};
  std::vector<int> indptr(M + 1, -1), indices(6, -1);
  std::vector<float> data(6, -1.0f);
  CSRMatrix B{indptr.data(), indices.data(), data.data()};
  p.set_array("A", A.data(), A.size());
  p.set_array("B", &B, "CSRMatrix", 1);
  p.set_value("M", M);
  p.set_value("N", N);
  p.set_value("nnz", 6);
  p.call();
  EXPECT_EQ(indptr, (std::vector<int>{0, 2, 2, 5, 6}));
  EXPECT_EQ(indices, (std::vector<int>{1, 3, 0, 2, 4, 4}));
  EXPECT_EQ(data, (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

TEST(Structures, ALoopBoundedByAScalarMember) {
  // for i in range(S.length): S.data[i] += 1, with length 0, 7 and 20 (of 20 elements).
  Program p = Program::compile_file(data_path("structs/for_with_field.sdfg"));
  for (int length : {0, 7, 20}) {
    std::vector<double> data(20);
    for (int i = 0; i < 20; ++i) data[i] = 0.25 * i;
    BoundedArray S{data.data(), length};
    p.set_array("S", &S, "BoundedArray", 1);
    p.call();
    for (int i = 0; i < 20; ++i) EXPECT_EQ(data[i], 0.25 * i + (i < length ? 1 : 0)) << length << " " << i;
  }
}

TEST(Structures, ATransientStructureUsedWholeAndGpuTargetsAreRefusedByName) {
  Json j = load_json("structs/csr_to_dense.sdfg");  // A passed whole into a nested SDFG
  j["attributes"]["_arrays"]["A"]["attributes"]["transient"] = true;
  std::string e = refusal(j.dump());
  EXPECT_NE(e.find("transient structure \"A\" is used as a whole; sdfc allocates a transient structure's members"),
            std::string::npos)
      << e;
  Options gpu;
  gpu.target = "cuda";
  e = refusal(load_json("structs/for_with_field.sdfg").dump(), gpu);
  EXPECT_NE(e.find("structure \"S\" (DaCe's Structure \"BoundedArray\"): sdfc runs structures on the CPU target "
                   "only"),
            std::string::npos)
      << e;
  Json bad = load_json("structs/for_with_field.sdfg");
  bad["attributes"]["_arrays"]["S"]["attributes"]["members"][0][1]["type"] = "StructureView";
  e = refusal(bad.dump());
  EXPECT_NE(e.find("unsupported data descriptor type \"StructureView\"; supported: Array, Scalar, ArrayView, View, "
                   "Structure"),
            std::string::npos)
      << e;
}

// numpy.linalg's inv, solve and cholesky (DaCe's Inv, Solve and Cholesky library nodes, which
// DaCe computes with LAPACK; tests/data/linalg/make_linalg.py), checked by their definitions.
namespace {
/// A well-conditioned n x n matrix that needs row exchanges (a zero first pivot).
std::vector<double> pivoting_matrix(int n) {
  std::vector<double> a(n * n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) a[i * n + j] = std::sin(1.3 * i + 0.7 * j) + (i == j ? n : 0);
  a[0] = 0;
  return a;
}
}  // namespace

TEST(Linalg, InverseTimesTheMatrixIsTheIdentity) {
  Program p = Program::compile_file(data_path("linalg/inv.sdfg"));
  for (int n : {1, 7, 40}) {
    std::vector<double> a = pivoting_matrix(n), r(n * n, -1);
    if (n == 1) a[0] = 4;
    p.set_array("A", a.data(), a.size());
    p.set_array("__return", r.data(), r.size());
    p.set_value("N", n);
    p.call();
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        double s = 0;
        for (int k = 0; k < n; ++k) s += a[i * n + k] * r[k * n + j];
        EXPECT_NEAR(s, i == j ? 1 : 0, 1e-12) << n << " " << i << " " << j;
      }
  }
}

TEST(Linalg, SolveGivesTheRightHandSideBack) {
  const int n = 9;
  std::vector<double> a = pivoting_matrix(n);
  Program matrix = Program::compile_file(data_path("linalg/solve.sdfg"));
  std::vector<double> b(n * 3), x(n * 3, -1);
  for (int i = 0; i < n * 3; ++i) b[i] = std::cos(0.4 * i);
  matrix.set_array("A", a.data(), a.size());
  matrix.set_array("B", b.data(), b.size());
  matrix.set_array("__return", x.data(), x.size());
  matrix.set_value("N", n);
  matrix.call();
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < 3; ++j) {
      double s = 0;
      for (int k = 0; k < n; ++k) s += a[i * n + k] * x[k * 3 + j];
      EXPECT_NEAR(s, b[i * 3 + j], 1e-12) << i << " " << j;
    }
  Program vector = Program::compile_file(data_path("linalg/solve_vector.sdfg"));
  std::vector<double> v(n), y(n, -1);
  for (int i = 0; i < n; ++i) v[i] = 1.0 / (i + 1);
  vector.set_array("A", a.data(), a.size());
  vector.set_array("b", v.data(), v.size());
  vector.set_array("__return", y.data(), y.size());
  vector.set_value("N", n);
  vector.call();
  for (int i = 0; i < n; ++i) {
    double s = 0;
    for (int k = 0; k < n; ++k) s += a[i * n + k] * y[k];
    EXPECT_NEAR(s, v[i], 1e-12) << i;
  }
}

TEST(Linalg, CholeskyFactorIsLowerAndMultipliesBack) {
  const int n = 12;
  std::vector<double> m = pivoting_matrix(n), a(n * n, 0), l(n * n, -1);
  for (int i = 0; i < n; ++i)  // a = m m^T + n I: symmetric positive definite
    for (int j = 0; j < n; ++j) {
      for (int k = 0; k < n; ++k) a[i * n + j] += m[i * n + k] * m[j * n + k];
      if (i == j) a[i * n + j] += n;
    }
  Program p = Program::compile_file(data_path("linalg/cholesky.sdfg"));
  p.set_array("A", a.data(), a.size());
  p.set_array("__return", l.data(), l.size());
  p.set_value("N", n);
  p.call();
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      if (j > i) EXPECT_EQ(l[i * n + j], 0.0) << i << " " << j;
      double s = 0;
      for (int k = 0; k < n; ++k) s += l[i * n + k] * l[j * n + k];
      EXPECT_NEAR(s, a[i * n + j], 1e-9 * n * n) << i << " " << j;
    }
  for (int i = 0; i < n; ++i) EXPECT_GT(l[i * n + i], 0) << i;
}

TEST(Linalg, ComplexInverseOfASliceAndSingularMatricesAreErrors) {
  const int n = 5;
  Program p = Program::compile_file(data_path("linalg/inv_complex.sdfg"));
  std::vector<std::complex<double>> a(2 * n * n), r(n * n);
  for (int s = 0; s < 2; ++s)  // two well-conditioned complex matrices (a diagonal of n added)
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j)
        a[(s * n + i) * n + j] = {std::sin(1.3 * i + 0.7 * j + s) + (i == j ? n : 0), std::cos(0.4 * i - 1.1 * j)};
  p.set_array("A", a.data(), a.size());
  p.set_array("__return", r.data(), r.size());
  p.set_value("N", n);
  p.call();
  const std::complex<double>* m = a.data() + n * n;  // A[1]
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      std::complex<double> s = 0;
      for (int k = 0; k < n; ++k) s += m[i * n + k] * r[k * n + j];
      EXPECT_NEAR(std::abs(s - (i == j ? 1.0 : 0.0)), 0, 1e-12) << i << " " << j;
    }
  Program q = Program::compile_file(data_path("linalg/inv.sdfg"));
  std::vector<double> singular(9, 1.0), out(9);
  q.set_array("A", singular.data(), singular.size());
  q.set_array("__return", out.data(), out.size());
  q.set_value("N", 3);
  try {
    q.call();
    ADD_FAILURE() << "a singular matrix was inverted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the matrix is singular (column 1)"), std::string::npos) << e.what();
  }
}
