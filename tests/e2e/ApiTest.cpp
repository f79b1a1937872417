// The embedding API end to end, and generated-code semantics checked by running programs built
// with the builder API against results computed here.
#include <dlfcn.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <complex>
#include <fstream>
#include <numeric>

#include "DynamicRanges.h"
#include "NestedStages.h"
#include "Reductions.h"
#include "ScopeCopies.h"
#include "TestUtil.h"
#include "ir/Builder.h"
#include "sdfc/sdfc.h"

using namespace sdfc;
using namespace sdfc::test;

namespace {

std::string axpy_json() {
  SDFGBuilder b("axpy");
  b.symbol("N").array("x", DType::Float64, {"N"}).array("y", DType::Float64, {"N"}).scalar("a", DType::Float64);
  b.state("compute").mapped_tasklet("axpy", {{"i", "0:N"}}, {{"xi", "x[i]"}, {"yi", "y[i]"}, {"s", "a[0]"}},
                                    "out = s * xi + yi", {{"out", "y[i]"}});
  return write_sdfg(*b.build());
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST(Api, CompilesBindsByNameAndCalls) {
  Program p = Program::compile_string(axpy_json());
  EXPECT_EQ(p.name(), "axpy");
  ASSERT_EQ(p.arguments().size(), 4u);  // x, y, then a and N sorted together: N < a
  EXPECT_EQ(p.arguments()[0].name, "x");
  EXPECT_EQ(p.arguments()[2].name, "N");
  EXPECT_EQ(p.arguments()[3].name, "a");
  EXPECT_EQ(p.arguments()[0].shape, std::vector<std::string>{"N"});
  std::vector<double> x(100), y(100);
  std::iota(x.begin(), x.end(), 0.0);
  std::fill(y.begin(), y.end(), 1.0);
  p.set_array("x", x.data(), x.size());
  p.set_array("y", y.data(), y.size());
  p.set_value("a", 2.0);
  p.set_value("N", 100);
  p.call();
  for (int i = 0; i < 100; ++i) EXPECT_EQ(y[i], 2.0 * i + 1.0);
  // Calling again with a smaller N re-initializes for the new symbol values.
  p.set_value("N", 10);
  p.call();
  EXPECT_EQ(y[9], 2 * (2.0 * 9) + 1.0);
  EXPECT_EQ(y[10], 2.0 * 10 + 1.0);
  EXPECT_EQ(p.graph_captures(), 0);  // a CPU program never captures a graph
}

TEST(Api, BadBindingsAreReportedAndNothingRuns) {
  Program p = Program::compile_string(axpy_json());
  std::vector<double> x(10, 1.0), y(10, 1.0);
  std::vector<float> f(10);
  EXPECT_EQ(error_of([&] { p.set_array("x", f.data(), f.size()); }),
            "argument \"x\" of program \"axpy\" has dtype float64, but the bound array has dtype float32");
  EXPECT_EQ(error_of([&] { p.set_array("z", x.data(), x.size()); }),
            "program \"axpy\" has no argument \"z\" (its arguments: x, y, N, a)");
  EXPECT_EQ(error_of([&] { p.set_value("N", 2.5); }),
            "value 2.5 does not convert exactly to int32, the dtype of argument \"N\" of program \"axpy\"");
  EXPECT_EQ(error_of([&] { p.set_value("x", 1.0); }),
            "argument \"x\" of program \"axpy\" is an array; bind it with set_array");
  p.set_array("x", x.data(), x.size());
  p.set_array("y", y.data(), y.size());
  p.set_value("a", 3.0);
  EXPECT_EQ(error_of([&] { p.call(); }),
            "argument \"N\" of program \"axpy\" is not bound; bind it with set_value before calling");
  p.set_value("N", 11);
  EXPECT_EQ(
      error_of([&] { p.call(); }),
      "array argument \"x\" of program \"axpy\" has 10 elements, but its shape [N] needs 11 for these symbol values");
  EXPECT_EQ(y, std::vector<double>(10, 1.0));  // never called with a bad binding
  p.set_value("N", 10.0);                      // exact: fine
  p.call();
  EXPECT_EQ(y[0], 4.0);
}

TEST(Api, NegativeAndOverflowingSizesAreRefusedBeforeTheCall) {
  Program p = Program::compile_string(axpy_json());
  std::vector<double> x(10, 1.0), y(10, 1.0);
  p.set_array("x", x.data(), x.size());
  p.set_array("y", y.data(), y.size());
  p.set_value("a", 3.0);
  p.set_value("N", -5);
  EXPECT_EQ(error_of([&] { p.call(); }),
            "array argument \"x\" of program \"axpy\": extent 0 of its shape [N] is -5 for N = -5; sizes must be "
            "between 0 and 2^63 - 1: check the symbol values");
  // A product of extents beyond 64 bits is refused, not wrapped around into a small count.
  SDFGBuilder b("cube");
  b.symbol("N").array("A", DType::Float64, {"N", "N", "N", "N"});
  b.state("s").mapped_tasklet("t", {{"i", "0:N"}}, {}, "o = 1.0", {{"o", "A[i, 0, 0, 0]"}});
  Program cube = Program::compile_string(write_sdfg(*b.build()));
  cube.set_array("A", x.data(), x.size());
  cube.set_value("N", std::int64_t{1} << 20);
  EXPECT_EQ(error_of([&] { cube.call(); }),
            "array argument \"A\" of program \"cube\": its shape [N, N, N, N] has more than 2^63 elements for these "
            "symbol values");
  EXPECT_EQ(y, std::vector<double>(10, 1.0));
}

TEST(Api, InitFailuresAreReportedThroughTheCAbi) {
  // A persistent transient sized by a symbol that no argument's shape uses: only init sees it.
  SDFGBuilder b("persist");
  b.symbol("N")
      .symbol("M")
      .array("A", DType::Float64, {"M"})
      .array("tmp", DType::Float64, {"N"}, true, StorageType::Default, Lifetime::Persistent);
  auto s = b.state("s");
  s.mapped_tasklet("t", {{"i", "0:M"}}, {}, "o = 1.0", {{"o", "A[i]"}});
  Program p = Program::compile_string(write_sdfg(*b.build()));
  void* h = dlopen(p.library_path().c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  ASSERT_TRUE(h);
  auto init = reinterpret_cast<void* (*)(int, int)>(dlsym(h, "__dace_init_persist"));
  auto last_error = reinterpret_cast<const char* (*)(void*)>(dlsym(h, "__sdfc_last_error"));
  auto exit_fn = reinterpret_cast<int (*)(void*)>(dlsym(h, "__dace_exit_persist"));
  ASSERT_TRUE(init && last_error && exit_fn);
  // Before: std::bad_array_new_length left the extern "C" init (a C caller aborts).
  EXPECT_EQ(init(3, -5), nullptr);
  ASSERT_TRUE(last_error(nullptr));
  EXPECT_EQ(std::string(last_error(nullptr)),
            "persistent transient tmp would have N = -5 elements for these symbol values; sizes must not be negative");
  void* ok = init(3, 5);
  ASSERT_TRUE(ok);
  EXPECT_EQ(last_error(nullptr), nullptr);  // a successful init clears the reason
  EXPECT_EQ(exit_fn(ok), 0);
}

/// The process's virtual size in bytes (/proc/self/statm), which counts memory never touched.
std::size_t virtual_bytes() {
  std::ifstream in("/proc/self/statm");
  std::size_t pages = 0;
  in >> pages;
  return pages * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
}

TEST(Api, ARefusedSizeReleasesWhatTheCallAllocated) {
  // Two transients sized by a symbol the program assigns, so allocated in their state (where the
  // size is known): "big" (M doubles) first, then "huge" (M^4 doubles, refused). Before, every
  // refused call leaked "big": 64 MiB per call here.
  auto program = [](bool with_huge) {
    SDFGBuilder b(with_huge ? "unwind" : "unwind_ok");
    b.symbol("N").symbol("M", DType::Int64).array("A", DType::Float64, {"N"}).array("big", DType::Float64, {"M"}, true);
    if (with_huge) b.array("huge", DType::Float64, {"M * M * M * M"}, true);
    b.state("start").mapped_tasklet("z", {{"i", "0:N"}}, {}, "o = 0.0", {{"o", "A[i]"}});
    auto fill = b.state("fill");
    std::map<std::string, int> nodes;
    fill.mapped_tasklet("w1", {{"i", "0:N"}}, {}, "o = 1.0", {{"o", "big[i]"}}, ScheduleType::Default, &nodes);
    if (with_huge) {
      fill.mapped_tasklet("w2", {{"i", "0:N"}}, {}, "o = 2.0", {{"o", "huge[i]"}}, ScheduleType::Default, &nodes);
      fill.mapped_tasklet("r", {{"i", "0:N"}}, {{"x", "big[i]"}, {"y", "huge[i]"}}, "o = x + y", {{"o", "A[i]"}},
                          ScheduleType::Default, &nodes);
    } else {
      fill.mapped_tasklet("r", {{"i", "0:N"}}, {{"x", "big[i]"}}, "o = x + 1.0", {{"o", "A[i]"}}, ScheduleType::Default,
                          &nodes);
    }
    b.edge(0, 1, "1", {{"M", "N * 1024"}});
    return write_sdfg(*b.build());
  };
  Program p = Program::compile_string(program(true));
  std::vector<double> a(8192, -1.0);
  p.set_array("A", a.data(), a.size());
  p.set_value("N", 8192);
  std::string first = error_of([&] { p.call(); });
  EXPECT_NE(first.find("transient huge would have"), std::string::npos) << first;
  std::size_t before = virtual_bytes();
  for (int k = 0; k < 30; ++k) EXPECT_EQ(error_of([&] { p.call(); }), first);
  std::size_t after = virtual_bytes();
  EXPECT_LT(after, before + (std::size_t{256} << 20)) << "grew by " << (after - before) / (1 << 20) << " MiB";
  // Without the refused transient the same program runs.
  Program q = Program::compile_string(program(false));
  q.set_array("A", a.data(), a.size());
  q.set_value("N", 8192);
  q.call();
  EXPECT_EQ(a, std::vector<double>(8192, 2.0));
}

TEST(Api, TransientSizesAreCheckedInTheGeneratedCode) {
  // A caller of DaCe's ABI passes symbol values straight to __program_: the sizes of the
  // transients come from them. Computed in the symbols' C type (int), N * M * K overflows and
  // allocates a small buffer the program then overruns; checked, the call is refused before
  // anything is allocated and the reason is in __sdfc_last_error.
  SDFGBuilder b("tsize");
  b.symbol("N")
      .symbol("M")
      .symbol("K")
      .array("A", DType::Float64, {"N"})
      .array("tmp", DType::Float64, {"N", "M", "K"}, true);
  auto s = b.state("s");
  s.mapped_tasklet("w", {{"i", "0:N"}}, {}, "o = 2.0", {{"o", "tmp[i, 0, 0]"}});
  auto s2 = b.state("s2");
  s2.mapped_tasklet("r", {{"i", "0:N"}}, {{"v", "tmp[i, 0, 0]"}}, "o = v", {{"o", "A[i]"}});
  b.chain();
  Program p = Program::compile_string(write_sdfg(*b.build()));
  void* h = dlopen(p.library_path().c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  ASSERT_TRUE(h);
  auto init = reinterpret_cast<void* (*)(int, int, int)>(dlsym(h, "__dace_init_tsize"));
  auto program = reinterpret_cast<void (*)(void*, double*, int, int, int)>(dlsym(h, "__program_tsize"));
  auto last_error = reinterpret_cast<const char* (*)(void*)>(dlsym(h, "__sdfc_last_error"));
  auto exit_fn = reinterpret_cast<int (*)(void*)>(dlsym(h, "__dace_exit_tsize"));
  ASSERT_TRUE(init && program && last_error && exit_fn);
  std::vector<double> a(4, 0.0);
  struct Case {
    int n, m, k;
    const char* error;
  };
  for (const Case& c : {
           // 2^47 bytes: a size, just not one this machine can allocate
           Case{4, 1 << 21, 1 << 21, "tsize: out of memory while allocating transients"},
           Case{4, 1 << 30, 1 << 30,
                "tsize: transient tmp would have K * M * N = 4611686018427387904 elements of 8 bytes, more than memory "
                "can address"},
           Case{1 << 30, 1 << 30, 1 << 30,
                "tsize: transient tmp would have K * M * N elements, which overflows 64 bits for these symbol values"},
           Case{4, -1, 3,
                "tsize: transient tmp would have K * M * N = -12 elements for these symbol values; sizes must not be "
                "negative"},
       }) {
    void* st = init(c.k, c.m, c.n);
    ASSERT_TRUE(st);
    program(st, a.data(), c.k, c.m, c.n);
    ASSERT_TRUE(last_error(st));
    EXPECT_EQ(std::string(last_error(st)), c.error);
    EXPECT_EQ(a, std::vector<double>(4, 0.0));  // nothing ran
    EXPECT_EQ(exit_fn(st), 1);                  // the error is reported at exit too, as DaCe's frame does
  }
  void* st = init(1, 1, 4);
  program(st, a.data(), 1, 1, 4);
  EXPECT_EQ(last_error(st), nullptr);
  EXPECT_EQ(a, std::vector<double>(4, 2.0));
  EXPECT_EQ(exit_fn(st), 0);
}

TEST(Api, InterstateCodeHasPythonSemantics) {
  // Interstate conditions and assignments go through the tasklets' typed translator: math
  // functions, min/max, true division, and/or/not, int() truncation (before, `math.sqrt` reached
  // the C++ compiler verbatim and `min(N, 4) / 8` was an integer division).
  auto build = [] {
    SDFGBuilder b("interstate_py");
    b.symbol("N").symbol("k", DType::Int64).array("B", DType::Float64, {"2"});
    b.state("start");
    b.state("yes").mapped_tasklet("y", {{"i", "0:1"}}, {}, "o = k", {{"o", "B[0]"}});
    b.state("no").mapped_tasklet("n", {{"i", "0:1"}}, {}, "o = 1.0", {{"o", "B[1]"}});
    std::string cond = "math.sqrt(N) > 2.5 and min(N, 4) / 8 == 0.5";
    b.edge(0, 1, cond, {{"k", "int(math.floor(N / 2)) + abs(-1)"}});
    b.edge(0, 2, "not (" + cond + ")");
    return write_sdfg(*b.build());
  };
  Program p = Program::compile_string(build());
  for (int n : {9, 4}) {
    std::vector<double> out(2, 0.0);
    p.set_array("B", out.data(), out.size());
    p.set_value("N", n);
    p.call();
    std::vector<double> want = n == 9 ? std::vector<double>{5.0, 0.0} : std::vector<double>{0.0, 1.0};
    EXPECT_EQ(out, want) << "N = " << n;
  }
  // A name that is neither a symbol, a container nor a known function is an error naming the edge.
  SDFGBuilder b("interstate_bad");
  b.symbol("N").array("B", DType::Float64, {"2"});
  b.state("start");
  b.state("next").mapped_tasklet("y", {{"i", "0:1"}}, {}, "o = 1.0", {{"o", "B[0]"}});
  b.edge(0, 1, "numpy.frobnicate(N) > 1");
  EXPECT_EQ(error_of([&] { Program::compile_string(write_sdfg(*b.build())); }),
            "<string>: /edges/0/attributes/data/attributes/condition: error: unsupported function 'numpy.frobnicate' "
            "in \"numpy.frobnicate(N) > 1\"; expected a math function (such as math.sqrt or exp), abs, min, max, pow "
            "or a cast (such as float or dace.float32)");
}

TEST(Api, Float16DataIsRefusedNamingTheContainer) {
  // A mutant with a float16 container reached the C++ compiler ("dace::float16" is not declared).
  SDFGBuilder b("half");
  b.symbol("N").array("A", DType::Float16, {"N"});
  b.state("s").mapped_tasklet("t", {{"i", "0:N"}}, {}, "o = 1.0", {{"o", "A[i]"}});
  EXPECT_EQ(
      error_of([&] { Program::compile_string(write_sdfg(*b.build())); }),
      "<string>: /attributes/_arrays/A/attributes/dtype: error: data \"A\" is float16, which sdfc does not support "
      "yet; use float32\n"
      "<string>: /nodes/0/nodes/2/attributes/out_connectors/o: error: connector \"o\" of tasklet \"t\" is float16, "
      "which sdfc does not support yet; use float32");
}

TEST(Semantics, ComplexNumbersComputeAsPython) {
  // complex128 data, a complex scalar argument, imaginary literals, mixed arithmetic, abs, parts,
  // conjugates, exp/sqrt, integer powers, equality; a complex sum from a parallel map into one
  // element (the parts added atomically); a complex64 output from mixed precision.
  SDFGBuilder b("cplx");
  b.symbol("N")
      .array("z", DType::Complex128, {"N"})
      .array("w", DType::Complex128, {"N"})
      .array("m", DType::Float64, {"N"})
      .array("eq", DType::Int32, {"N"})
      .array("total", DType::Complex128, {"1"})
      .array("single", DType::Complex64, {"N"})
      .scalar("c", DType::Complex128);
  auto s = b.state("s");
  std::map<std::string, int> outer;
  s.mapped_tasklet("t", {{"i", "0:N"}}, {{"a", "z[i]"}, {"k", "c[0]"}},
                   "t1 = a * (1 + 2j) - a.conjugate() / 2 + 0.5j\n"
                   "w0 = t1 * k + abs(a) + a.real - 3 * a.imag + sqrt(a) + exp(1j * a.real) + a ** 3 - (2 ** -1) * a\n"
                   "m0 = abs(w0) + np.real(a) * np.imag(a)\n"
                   "e0 = 1 if (a == complex(a.real, a.imag) and a != w0) else 0\n"
                   "s0 = dace.complex64(a) * 2.0",
                   {{"w0", "w[i]"}, {"m0", "m[i]"}, {"e0", "eq[i]"}, {"s0", "single[i]"}}, ScheduleType::Default,
                   &outer);
  std::map<std::string, int> sum_nodes;
  auto [e, x] = s.map("sum", {"i"}, {"0:N"});
  int t = s.tasklet("add", {"v"}, {"o"}, "o = v", Language::Python, e);
  int zin = s.access("z"), tot = s.access("total");
  s.edge(zin, "", e, "IN_z", "z", "0:N");
  s.edge(e, "OUT_z", t, "v", "z", "i");
  s.edge(t, "o", x, "IN_total", "total", "0", "(lambda a, b: (a + b))");
  s.edge(x, "OUT_total", tot, "", "total", "0", "(lambda a, b: (a + b))");
  Program p = Program::compile_string(write_sdfg(*b.build()));
  const int n = 2000;
  using C = std::complex<double>;
  std::vector<C> z(n), w(n), total(1, C(1.0, -1.0));
  std::vector<std::complex<float>> single(n);
  std::vector<double> m(n);
  std::vector<std::int32_t> eq(n);
  for (int i = 0; i < n; ++i) z[i] = C(std::sin(i * 0.37) * 3, std::cos(i * 0.11) * 2);
  p.set_array("z", z.data(), n);
  p.set_array("w", w.data(), n);
  p.set_array("m", m.data(), n);
  p.set_array("eq", eq.data(), n);
  p.set_array("total", total.data(), 1);
  p.set_array("single", single.data(), n);
  p.set_value("c", C(0.25, -2.0));
  p.set_value("N", n);
  p.call();
  C k(0.25, -2.0), sum(1.0, -1.0);
  for (int i = 0; i < n; ++i) {
    C a = z[i];
    C t1 = a * C(1, 2) - std::conj(a) / 2.0 + C(0, 0.5);
    C w0 = t1 * k + std::abs(a) + a.real() - 3 * a.imag() + std::sqrt(a) + std::exp(C(0, 1) * a.real()) + a * a * a -
           0.5 * a;
    EXPECT_NEAR(std::abs(w[i] - w0), 0.0, 1e-12 * (1 + std::abs(w0))) << i;
    EXPECT_NEAR(m[i], std::abs(w0) + a.real() * a.imag(), 1e-12 * (1 + m[i])) << i;
    EXPECT_EQ(eq[i], 1) << i;
    EXPECT_EQ(single[i], std::complex<float>(a) * 2.0f) << i;
    sum += a;
  }
  EXPECT_NEAR(std::abs(total[0] - sum), 0.0, 1e-9);
}

TEST(Api, ComplexMisuseIsRefusedNamingIt) {
  SDFGBuilder b("cplx_bad");
  b.symbol("N").array("z", DType::Complex128, {"N"}).array("r", DType::Float64, {"N"});
  b.state("s").mapped_tasklet("t", {{"i", "0:N"}}, {{"a", "z[i]"}}, "o = a // 2", {{"o", "r[i]"}});
  std::string msg = error_of([&] { Program::compile_string(write_sdfg(*b.build())); });
  EXPECT_NE(msg.find("unsupported operand type complex for '//'"), std::string::npos) << msg;
  SDFGBuilder b2("cplx_bad2");
  b2.symbol("N").array("z", DType::Complex128, {"N"}).array("r", DType::Float64, {"N"});
  b2.state("s").mapped_tasklet("t", {{"i", "0:N"}}, {{"a", "z[i]"}}, "o = a * 2", {{"o", "r[i]"}});
  msg = error_of([&] { Program::compile_string(write_sdfg(*b2.build())); });
  EXPECT_NE(msg.find("cannot assign a complex128 value to 'o' of type float64"), std::string::npos) << msg;
}

TEST(Api, InvalidInputListsEveryProblem) {
  Json j = load_json("small.sdfg");
  j["nodes"][0]["nodes"][4]["attributes"]["data"] = "C";
  j["edges"][1]["dst"] = "9";
  std::string msg = error_of([&] { Program::compile_string(j.dump()); });
  EXPECT_NE(msg.find("<string>: /nodes/0/nodes/4/attributes/data: error: access node refers to unknown data \"C\""),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("<string>: /edges/1/dst: error: interstate edge leads to block 9"), std::string::npos) << msg;
}

namespace {
/// Compiles the program `b` built (arrays x, y, c over N) and calls it once on `x`, `y`, `c`.
template <typename C>
void run_xyc(SDFGBuilder& b, std::vector<double>& x, std::vector<double>& y, std::vector<C>& c) {
  Program p = Program::compile_string(write_sdfg(*b.build()));
  p.set_array("x", x.data(), x.size());
  p.set_array("y", y.data(), y.size());
  p.set_array("c", c.data(), c.size());
  p.set_value("N", static_cast<int>(x.size()));
  p.call();
}
}  // namespace

TEST(Api, TaskletsWithControlFlowRun) {
  // The statement form DaCe's frontend writes: if/elif/else, loops over range() (a negative step,
  // nested blocks), temporaries read after the blocks, the loop variable after its loop.
  SDFGBuilder b("stmts");
  b.symbol("N").array("x", DType::Float64, {"N"}).array("y", DType::Float64, {"N"}).array("c", DType::Int32, {"N"});
  b.state("s").mapped_tasklet("t", {{"i", "0:N"}}, {{"a", "x[i]"}},
                              "if a < -1.0:\n"
                              "    r = -1.0\n"
                              "    k = -1\n"
                              "elif a > 1.0:\n"
                              "    r = 0.0\n"
                              "    for j in range(4, 0, -1):\n"
                              "        if j % 2 == 0:\n"
                              "            r = r + a * j\n"
                              "        else:\n"
                              "            r = r - 1.0\n"
                              "    k = j\n"
                              "else:\n"
                              "    r = a * a\n"
                              "    k = 0\n"
                              "o = r\n"
                              "n = k",
                              {{"o", "y[i]"}, {"n", "c[i]"}});
  std::vector<double> x = {-3.0, -0.5, 0.0, 0.75, 1.5, 4.0}, y(x.size());
  std::vector<std::int32_t> c(x.size());
  run_xyc(b, x, y, c);
  for (std::size_t i = 0; i < x.size(); ++i) {
    double a = x[i], r;
    int k;
    if (a < -1.0) {
      r = -1.0;
      k = -1;
    } else if (a > 1.0) {
      r = 0.0;
      int j = 4;
      for (; j > 0; --j) r = j % 2 == 0 ? r + a * j : r - 1.0;
      k = 1;  // Python's j keeps its last value, 1
    } else {
      r = a * a;
      k = 0;
    }
    EXPECT_EQ(y[i], r) << i;
    EXPECT_EQ(c[i], k) << i;
  }
}

TEST(Api, TaskletsWithWhileBreakAndContinueRun) {
  // Newton's iteration for sqrt in a while loop with a break; a for loop that skips odd j with
  // continue and stops at the first j whose square exceeds a with break (j keeps that value).
  SDFGBuilder b("loops");
  b.symbol("N").array("x", DType::Float64, {"N"}).array("y", DType::Float64, {"N"}).array("c", DType::Int64, {"N"});
  b.state("s").mapped_tasklet("t", {{"i", "0:N"}}, {{"a", "x[i]"}},
                              "r = a\n"
                              "steps = 0\n"
                              "while True:\n"
                              "    nr = 0.5 * (r + a / r)\n"
                              "    steps += 1\n"
                              "    if abs(nr - r) < 1e-12 or steps >= 100:\n"
                              "        r = nr\n"
                              "        break\n"
                              "    r = nr\n"
                              "found = -1\n"
                              "for j in range(1, 50):\n"
                              "    if j % 2 == 1:\n"
                              "        continue\n"
                              "    if j * j > a:\n"
                              "        found = j\n"
                              "        break\n"
                              "o = r\n"
                              "n = found",
                              {{"o", "y[i]"}, {"n", "c[i]"}});
  std::vector<double> x = {2.0, 9.0, 10.5, 1000.0, 0.25}, y(x.size());
  std::vector<std::int64_t> c(x.size());
  run_xyc(b, x, y, c);
  for (std::size_t i = 0; i < x.size(); ++i) {
    EXPECT_NEAR(y[i], std::sqrt(x[i]), 1e-12 * std::sqrt(x[i])) << i;
    std::int64_t want = -1;
    for (int j = 2; j < 50; j += 2)
      if (j * j > x[i]) {
        want = j;
        break;
      }
    EXPECT_EQ(c[i], want) << i;
  }
}

TEST(Api, UnsupportedTaskletCodePointsAtTheTasklet) {
  SDFGBuilder b("bad");
  b.symbol("N").array("x", DType::Float64, {"N"});
  b.state("s").mapped_tasklet("t", {{"i", "0:N"}}, {{"a", "x[i]"}}, "import os\nb = a", {{"b", "x[i]"}});
  std::string msg = error_of([&] { Program::compile_string(write_sdfg(*b.build())); });
  EXPECT_NE(msg.find("<string>: /nodes/0/nodes/2/attributes/code: error: tasklet line 1: unsupported statement"),
            std::string::npos)
      << msg;
}

TEST(Api, TwoInstancesAreIndependent) {
  Program p = Program::compile_string(axpy_json());
  Program q = Program::load(p.library_path());
  std::vector<double> x(4, 1.0), y1(4, 0.0), y2(4, 0.0);
  for (Program* r : {&p, &q}) {
    r->set_array("x", x.data(), 4);
    r->set_value("N", 4);
  }
  p.set_array("y", y1.data(), 4);
  q.set_array("y", y2.data(), 4);
  p.set_value("a", 2.0);
  q.set_value("a", 5.0);
  p.call();
  q.call();
  EXPECT_EQ(y1, std::vector<double>(4, 2.0));
  EXPECT_EQ(y2, std::vector<double>(4, 5.0));
}

TEST(Api, ProgramErrorsSurfaceAsExceptions) {
  EXPECT_NE(error_of([] { Program::load("/nonexistent/libx.so"); }).find("cannot load /nonexistent/libx.so"),
            std::string::npos);
  EXPECT_EQ(error_of([] {
              Options o;
              o.transients = "bogus";
              Program::compile_string("{}", o);
            }),
            "transients must be as-declared, scoped, persistent, pool or external, not 'bogus'");
  EXPECT_EQ(error_of([] {
              Options o;
              o.gpu_streams = -1;
              Program::compile_string("{}", o);
            }),
            "gpu_streams must be 0 or more, not -1");
  // The API's checks are the command line's (one option table): more than 1,024 streams too.
  EXPECT_EQ(error_of([] {
              Options o;
              o.gpu_streams = 2000;
              Program::compile_string("{}", o);
            }),
            "gpu_streams must be at most 1024, not 2000");
}

// ---- semantics of generated code ----------------------------------------------------------------

TEST(Semantics, WriteConflictResolutionUnderOpenMP) {
  // sum, product, min, max and a general lambda, all from a parallel map into one element.
  SDFGBuilder b("wcr");
  b.symbol("N").array("x", DType::Float64, {"N"}).array("r", DType::Float64, {"5"});
  auto s = b.state("s");
  auto [e, x] = s.map("m", {"i"}, {"0:N"});
  int t = s.tasklet("t", {"v"}, {"s", "p", "lo", "hi", "g"}, "s = v\np = 1.0 + v / 1000.0\nlo = v\nhi = v\ng = v",
                    Language::Python, e);
  int xin = s.access("x"), rout = s.access("r");
  s.edge(xin, "", e, "IN_x", "x", "0:N");
  s.edge(e, "OUT_x", t, "v", "x", "i");
  const char* ops[] = {"(lambda a, b: (a + b))", "(lambda a, b: (a * b))", "(lambda a, b: min(a, b))",
                       "(lambda a, b: max(a, b))", "(lambda a, b: (a + 2 * b))"};
  const char* conns[] = {"s", "p", "lo", "hi", "g"};
  for (int k = 0; k < 5; ++k) s.edge(t, conns[k], x, "IN_r", "r", std::to_string(k), ops[k]);
  s.edge(x, "OUT_r", rout, "", "r", "0:5", "(lambda a, b: (a + b))");
  auto sdfg = b.build();
  Program p = Program::compile_string(write_sdfg(*sdfg));
  const int n = 1000;
  std::vector<double> xs(n), r = {0.0, 1.0, 1e9, -1e9, 0.0};
  for (int i = 0; i < n; ++i) xs[i] = (i * 37) % 1000;
  p.set_array("x", xs.data(), n);
  p.set_array("r", r.data(), 5);
  p.set_value("N", n);
  p.call();
  double sum = 0, prod = 1;
  for (double v : xs) {
    sum += v;
    prod *= 1.0 + v / 1000.0;
  }
  EXPECT_EQ(r[0], sum);
  EXPECT_NEAR(r[1], prod, std::abs(prod) * 1e-9);
  EXPECT_EQ(r[2], 0.0);
  EXPECT_EQ(r[3], 999.0);
  EXPECT_EQ(r[4], 2 * sum);
}

TEST(Semantics, PythonFloorDivisionAndModulo) {
  SDFGBuilder b("floors");
  b.symbol("N")
      .array("x", DType::Int64, {"N"})
      .array("q", DType::Int64, {"N"})
      .array("m", DType::Int64, {"N"})
      .array("f", DType::Float64, {"N"});
  b.state("s").mapped_tasklet("t", {{"i", "0:N"}}, {{"v", "x[i]"}}, "a = v // 3\nb = v % 3\nc = v / 2",
                              {{"a", "q[i]"}, {"b", "m[i]"}, {"c", "f[i]"}});
  Program p = Program::compile_string(write_sdfg(*b.build()));
  std::vector<std::int64_t> x = {-7, -6, -1, 0, 1, 7}, q(6), m(6);
  std::vector<double> f(6);
  p.set_array("x", x.data(), 6);
  p.set_array("q", q.data(), 6);
  p.set_array("m", m.data(), 6);
  p.set_array("f", f.data(), 6);
  p.set_value("N", 6);
  p.call();
  EXPECT_EQ(q, (std::vector<std::int64_t>{-3, -2, -1, 0, 0, 2}));
  EXPECT_EQ(m, (std::vector<std::int64_t>{2, 0, 2, 0, 1, 1}));
  EXPECT_EQ(f, (std::vector<double>{-3.5, -3, -0.5, 0, 0.5, 3.5}));
}

/// C++ tasklets written against DaCe's runtime: dace::math functions, pi and dtype names.
TEST(Semantics, DaceMathInCppTasklets) {
  SDFGBuilder b("dace_math");
  b.symbol("N").array("x", DType::Float64, {"N"}).array("y", DType::Float64, {"N"}).array("k", DType::Int64, {"N"});
  b.state("s").mapped_tasklet("t", {{"i", "0:N"}}, {{"v", "x[i]"}}, "", {{"o", "y[i]"}, {"f", "k[i]"}});
  auto sdfg = b.build();
  for (auto& n : sdfg->root.blocks[0]->nodes)
    if (n->kind == NodeKind::Tasklet) {
      n->code.language = Language::CPP;
      n->code.code =
          "dace::float64 e = dace::math::exp(v) + dace::math::pow(v, 2) + dace::math::ipow(2, 3) + "
          "dace::math::heaviside(v);\n"
          "o = e + dace::math::sin(dace::math::pi * v) + dace::math::max(v, 0.0) + dace::math::abs(-v);\n"
          "f = dace::math::ifloor(v * 1.5);";
    }
  Program p = Program::compile_string(write_sdfg(*sdfg));
  std::vector<double> x = {-1.5, 0.0, 0.25, 2.0}, y(4);
  std::vector<std::int64_t> k(4);
  p.set_array("x", x.data(), 4);
  p.set_array("y", y.data(), 4);
  p.set_array("k", k.data(), 4);
  p.set_value("N", 4);
  p.call();
  const double pi = 3.14159265358979323846;
  for (std::size_t i = 0; i < 4; ++i) {
    double v = x[i];
    double want = std::exp(v) + v * v + 8 + (v > 0 ? 1 : 0) + std::sin(pi * v) + std::max(v, 0.0) + std::fabs(v);
    EXPECT_DOUBLE_EQ(y[i], want) << i;
    EXPECT_EQ(k[i], static_cast<std::int64_t>(std::floor(v * 1.5))) << i;
  }
}

TEST(Semantics, StridedCopiesAndOffsets) {
  // B[0:N-2] = A[1:N-1] (other_subset), then a column of a 2D array into a vector.
  SDFGBuilder b("copies");
  b.symbol("N")
      .array("A", DType::Float64, {"N"})
      .array("B", DType::Float64, {"N"})
      .array("M2", DType::Float64, {"N", "N"})
      .array("col", DType::Float64, {"N"});
  auto s = b.state("s");
  int a = s.access("A"), bb = s.access("B");
  s.copy(a, bb, "1:N - 1", "0:N - 2");
  int m = s.access("M2"), c = s.access("col");
  s.copy(m, c, "0:N, 2", "0:N");
  Program p = Program::compile_string(write_sdfg(*b.build()));
  const int n = 6;
  std::vector<double> A(n), B(n, -1), M(n * n), col(n);
  std::iota(A.begin(), A.end(), 10.0);
  std::iota(M.begin(), M.end(), 0.0);
  for (auto [name, v] : {std::pair<const char*, std::vector<double>*>{"A", &A}, {"B", &B}, {"M2", &M}, {"col", &col}})
    p.set_array(name, v->data(), v->size());
  p.set_value("N", n);
  p.call();
  EXPECT_EQ(B, (std::vector<double>{11, 12, 13, 14, -1, -1}));
  for (int i = 0; i < n; ++i) EXPECT_EQ(col[i], i * n + 2);
}

TEST(Semantics, LoopsConditionsAndDataDependentAssignments) {
  // for t in 0..T: x[:] = x * 2 if t < 5 else x; then K = x[N - 1] // 1 on an interstate edge
  // (a symbol read from data), and out[0] = K.
  SDFGBuilder b("ctrl");
  b.symbol("N").symbol("T").symbol("K").array("x", DType::Float64, {"N"}).array("out", DType::Float64, {"1"});
  auto body = b.loop("lp", "t", "0", "t < T", "t + 1");
  body.mapped_tasklet("dbl", {{"i", "0:N"}}, {{"v", "x[i]"}}, "w = v * 2.0 if t < 5 else v", {{"w", "x[i]"}});
  auto sdfg = b.build();
  auto last = std::make_unique<Block>(BlockKind::State);
  last->label = "final";
  last->type_name = "SDFGState";
  sdfg->root.blocks.push_back(std::move(last));
  StateBuilder fin(*sdfg, *sdfg->root.blocks.back());
  int o = fin.access("out");
  int t = fin.tasklet("k", {}, {"r"}, "r = K * 1.0");
  fin.edge(t, "r", o, "", "out", "0");
  InterstateEdge e;
  e.src = 0;
  e.dst = 1;
  e.assignments = {{"K", "x[N - 1] // 1"}};
  sdfg->root.cf_edges.push_back(e);
  Program p = Program::compile_string(write_sdfg(*sdfg));
  std::vector<double> x = {1, 2, 3, 4}, out = {0};
  p.set_array("x", x.data(), 4);
  p.set_array("out", out.data(), 1);
  p.set_value("N", 4);
  p.set_value("T", 10);
  p.call();
  // doubling stops once x[0] >= 100 (at 128)
  EXPECT_EQ(x, (std::vector<double>{32, 64, 96, 128}));
  EXPECT_EQ(out[0], 128.0);
}

/// Names and labels from the file are data, never code: a container named like a C++ keyword and
/// labels holding newlines followed by preprocessor directives build and compute as plain ones.
TEST(Trust, HostileNamesAndLabelsStayData) {
  SDFGBuilder b("hostile");
  b.symbol("N").array("class", DType::Float64, {"N"}).array("y", DType::Float64, {"N"});
  b.state("s\n#error injected through a state label")
      .mapped_tasklet("t\\\n#error injected through a tasklet label", {{"i", "0:N"}}, {{"v", "class[i]"}}, "w = v * 3",
                      {{"w", "y[i]"}});
  auto sdfg = b.build();
  for (auto& n : sdfg->root.blocks[0]->nodes)
    if (n->kind == NodeKind::MapEntry) n->map.label = "m\\";
  Program p = Program::compile_string(write_sdfg(*sdfg));
  std::vector<double> x = {1, 2, 3}, y(3);
  p.set_array("class", x.data(), 3);
  p.set_array("y", y.data(), 3);
  p.set_value("N", 3);
  p.call();
  EXPECT_EQ(y, (std::vector<double>{3, 6, 9}));
}

/// Maps whose ranges come from data (dynamic map inputs): a parallel map over 0:cnt, and a
/// sequential map inside a parallel one over 0:lens[j] per row (tests/codegen/cpu/map_dynamic_range).
/// Copies into and out of map scopes with no tasklet in between (tests/codegen/cpu/scope_copy_*),
/// in every memory mode: each program computes its outputs only through the copy under test.
TEST(Semantics, ScopeCopiesComputeValues) {
  for (const std::string& name : scope_copy_programs())
    for (const char* mode : {"", "scoped", "persistent", "pool", "external"}) {
      SCOPED_TRACE(name + " " + mode);
      Options o;
      o.transients = mode;
      Program p = Program::compile_file(std::string(SDFC_TEST_DATA) + "/../codegen/cpu/" + name + ".sdfg", o);
      check_scope_copy(p, name, [](Program& q) {
        q.call();
        return true;
      });
    }
}

/// Reduce library nodes inside a map (tests/codegen/cpu/reduce_in_map): a float64 sum and an int32
/// max per row, through the expand-library-nodes pass.
TEST(Semantics, ReduceLibraryNodesInAMap) {
  Program p = Program::compile_file(std::string(SDFC_TEST_DATA) + "/../codegen/cpu/reduce_in_map.sdfg");
  check_reductions(p, [](Program& q) {
    q.call();
    return true;
  });
}

TEST(Semantics, DynamicMapRangeInputs) {
  Program p = Program::compile_file(std::string(SDFC_TEST_DATA) + "/../codegen/cpu/map_dynamic_range.sdfg");
  check_dynamic_ranges(p, [](Program& q) {
    q.call();
    return true;
  });
}

namespace {

/// What the callbacks of dace_callbacks.sdfg saw, in call order.
struct CallbackLog {
  std::vector<std::string> calls;
  int n = 0;
};
CallbackLog callback_log;

double clock_callback() {
  callback_log.calls.push_back("clock");
  return 1.5;
}
/// product(A, 0.5, B) as DaCe bakes it: the constant is the callback's, A and B come in, tmp
/// (N x N) and tmp2 (one element) go out through pointers.
void product_callback(const double* a, const double* b, const double* tmp, const double* tmp2) {
  callback_log.calls.push_back("product");
  int n = callback_log.n;
  auto* out = const_cast<double*>(tmp);  // DaCe declares every pointer const
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double s = 0;
      for (int k = 0; k < n; ++k) s += 0.5 * a[i * n + k] * b[k * n + j];
      out[i * n + j] = s;
    }
  *const_cast<double*>(tmp2) = 1.0;
}
void scale_callback(const double* c, double beta) {
  callback_log.calls.push_back("scale");
  auto* out = const_cast<double*>(c);
  for (int i = 0; i < callback_log.n * callback_log.n; ++i) out[i] *= beta;
}

}  // namespace

// DaCe's automatic callbacks (a program its frontend made from Python that calls functions it
// could not parse): C function pointers passed as arguments; arrays by pointer, scalars by
// value, several results through pointers, a scalar result returned; called in program order.
TEST(Semantics, CallbacksAreCalledWithTheirArgumentsInProgramOrder) {
  Program p = Program::compile_file(std::string(SDFC_TEST_DATA) + "/../codegen/cpu/dace_callbacks.sdfg");
  const int n = 3;
  callback_log = {{}, n};
  std::vector<double> a(n * n), b(n * n), c(n * n), expected(n * n);
  for (int i = 0; i < n * n; ++i) {
    a[i] = 0.25 * i;
    b[i] = 1.0 - 0.125 * i;
    c[i] = 2.0 + i;
  }
  const double beta = 0.5;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double s = 0;
      for (int k = 0; k < n; ++k) s += 0.5 * a[i * n + k] * b[k * n + j];
      expected[i * n + j] = beta * c[i * n + j] + s * 1.0 + 1.5;
    }
  p.set_array("A", a.data(), a.size());
  p.set_array("B", b.data(), b.size());
  p.set_array("C", c.data(), c.size());
  p.set_value("N", n);
  p.set_value("beta", beta);
  std::string info;
  for (auto& arg : p.arguments())
    if (arg.kind == "callback") info += arg.name + ": " + arg.signature + "; ";
  EXPECT_EQ(info,
            "clock: double (*)(); product: void (*)(double const *, double const *, double const *, double const *); "
            "scale: void (*)(double const *, double); ");
  EXPECT_NE(error_of([&] { p.call(); })
                .find("\"clock\" of program \"dace_callbacks\" is not bound; bind it with "
                      "set_callback"),
            std::string::npos);
  EXPECT_NE(error_of([&] { p.set_value("clock", 1.0); }).find("is a callback; bind it with set_callback"),
            std::string::npos);
  p.set_callback("clock", &clock_callback);
  p.set_callback("product", &product_callback);
  p.set_callback("scale", &scale_callback);
  p.call();
  EXPECT_EQ(callback_log.calls, (std::vector<std::string>{"product", "scale", "clock"}));
  for (int i = 0; i < n * n; ++i) EXPECT_DOUBLE_EQ(c[i], expected[i]) << "element " << i;
}

namespace {

/// y = ((x + shift) * 2) + shift through transients in three states (External under
/// --transients external; t1 and t3 share workspace bytes).
std::string staged_json(const std::string& name, double shift) {
  SDFGBuilder b(name);
  b.symbol("N").array("x", DType::Float64, {"N"}).array("y", DType::Float64, {"N"});
  for (const char* t : {"t1", "t2", "t3"}) b.array(t, DType::Float64, {"N"}, true);
  std::string s = fmt::format("{}", shift);
  b.state("s0").mapped_tasklet("a", {{"i", "0:N"}}, {{"a", "x[i]"}}, "b = a + " + s, {{"b", "t1[i]"}});
  b.state("s1").mapped_tasklet("b", {{"i", "0:N"}}, {{"a", "t1[i]"}}, "b = a * 2", {{"b", "t2[i]"}});
  b.state("s2").mapped_tasklet("c", {{"i", "0:N"}}, {{"a", "t2[i]"}}, "b = a + " + s, {{"b", "t3[i]"}});
  b.state("s3").mapped_tasklet("d", {{"i", "0:N"}}, {{"a", "t3[i]"}}, "b = a", {{"b", "y[i]"}});
  b.chain();
  return write_sdfg(*b.build());
}

Options external_mode() {
  Options o;
  o.transients = "external";
  return o;
}

}  // namespace

TEST(Workspace, OneBufferServesTwoProgramsCalledInTurn) {
  Program a = Program::compile_string(staged_json("stage_a", 1.0), external_mode());
  Program b = Program::compile_string(staged_json("stage_b", -3.0), external_mode());
  EXPECT_EQ(a.workspace_storages(), std::vector<std::string>{"CPU_Heap"});
  std::vector<double> xa(1000), ya(1000), xb(300), yb(300);
  std::iota(xa.begin(), xa.end(), 0.0);
  std::iota(xb.begin(), xb.end(), 5.0);
  a.set_array("x", xa.data(), xa.size());
  a.set_array("y", ya.data(), ya.size());
  a.set_value("N", 1000);
  b.set_array("x", xb.data(), xb.size());
  b.set_array("y", yb.data(), yb.size());
  b.set_value("N", 300);
  // Two 8,000-byte slots (t1 and t3 share one): 2 * 8,192 bytes.
  EXPECT_EQ(a.workspace_size("CPU_Heap"), 2u * 8192u);
  EXPECT_EQ(b.workspace_size("CPU_Heap"), 2u * 2560u);
  std::size_t bytes = std::max(a.workspace_size("CPU_Heap"), b.workspace_size("CPU_Heap"));
  void* shared = std::aligned_alloc(256, bytes);
  ASSERT_TRUE(shared);
  a.set_workspace("CPU_Heap", shared, bytes);
  b.set_workspace("CPU_Heap", shared, bytes);
  for (int round = 0; round < 3; ++round) {
    std::fill(ya.begin(), ya.end(), -1.0);
    std::fill(yb.begin(), yb.end(), -1.0);
    a.call();
    b.call();
    for (std::size_t i = 0; i < xa.size(); ++i)
      ASSERT_EQ(ya[i], (xa[i] + 1.0) * 2 + 1.0) << "round " << round << " i " << i;
    for (std::size_t i = 0; i < xb.size(); ++i)
      ASSERT_EQ(yb[i], (xb[i] - 3.0) * 2 - 3.0) << "round " << round << " i " << i;
  }
  // Symbol values that need more than the buffer holds are rejected at (re)initialization.
  std::vector<double> big_x(2000), big_y(2000);
  a.set_array("x", big_x.data(), big_x.size());
  a.set_array("y", big_y.data(), big_y.size());
  a.set_value("N", 2000);
  EXPECT_NE(error_of([&] { a.call(); }).find("the CPU_Heap workspace has 16384 bytes but the program needs 32256"),
            std::string::npos);
  std::free(shared);
}

TEST(Workspace, EachBadBufferIsRejectedAndNothingIsInstalled) {
  Program p = Program::compile_string(staged_json("stage_c", 0.5), external_mode());
  std::vector<double> x(64, 1.0), y(64, 0.0);
  p.set_array("x", x.data(), x.size());
  p.set_array("y", y.data(), y.size());
  p.set_value("N", 64);
  std::size_t bytes = p.workspace_size("CPU_Heap");
  EXPECT_EQ(bytes, 1024u);
  std::vector<double> good(bytes / sizeof(double) + 1);
  p.set_workspace("CPU_Heap", good.data(), bytes);
  EXPECT_NE(error_of([&] { p.set_workspace("CPU_Heap", nullptr, bytes); }).find("the workspace pointer is null"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              p.set_workspace("CPU_Heap", good.data(), bytes - 1);
            }).find("the CPU_Heap workspace has 1023 bytes but the program needs 1024"),
            std::string::npos);
  char* odd = reinterpret_cast<char*>(good.data()) + 4;
  EXPECT_NE(error_of([&] { p.set_workspace("CPU_Heap", odd, bytes); }).find("is not aligned to 8 bytes"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              p.set_workspace("GPU_Global", good.data(), bytes);
            }).find("program \"stage_c\" has no GPU_Global workspace (its workspaces: CPU_Heap)"),
            std::string::npos);
  // The good buffer is still the one in use.
  p.call();
  for (double v : y) EXPECT_EQ(v, (1.0 + 0.5) * 2 + 0.5);
}

TEST(Api, ACpuProgramRejectsAnExternalStream) {
  Program p = Program::compile_string(axpy_json());
  int fake_stream = 0;
  std::string why = error_of([&] { p.set_external_stream(&fake_stream); });
  EXPECT_NE(why.find("program axpy was compiled for the CPU (--target cpu): it has no GPU work to order against a "
                     "caller's stream"),
            std::string::npos)
      << why;
  // Nothing changed: the program still runs.
  std::vector<double> x(4, 1.0), y(4, 1.0);
  p.set_array("x", x.data(), x.size());
  p.set_array("y", y.data(), y.size());
  p.set_value("a", 2.0);
  p.set_value("N", 4);
  p.call();
  EXPECT_EQ(y[3], 3.0);
}

TEST(Semantics, NestedSdfgTransientsInEveryMemoryMode) {
  std::string json = nested_stages_json(false);
  Program declared = Program::compile_string(json);
  for (int n : {40, 17}) EXPECT_EQ(run_nested_stages(declared, n), nested_stages_expected(n)) << "N = " << n;
  for (const char* mode : {"scoped", "persistent", "pool", "external"}) {
    SCOPED_TRACE(mode);
    Options o;
    o.transients = mode;
    Program p = Program::compile_string(json, o);
    // External: the three nested transients, lifted to the top level, live in the workspace.
    EXPECT_EQ(p.workspace_storages(),
              std::string(mode) == "external" ? std::vector<std::string>{"CPU_Heap"} : std::vector<std::string>{});
    // Twice, with a smaller N the second time (persistent and external re-initialize).
    for (int n : {40, 17}) EXPECT_EQ(run_nested_stages(p, n), run_nested_stages(declared, n)) << "N = " << n;
  }
}
