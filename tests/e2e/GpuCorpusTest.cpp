// GPU end to end: every program_gpu*.sdfg of the corpus compiles for CUDA (nvcc) and HIP (hipcc,
// compile only: there is no AMD GPU here), and, where a GPU is present, reproduces expected.json
// in every transient memory mode; plus the seed reproducer of a device value read on the host
// (corpus d2h_symbol_s, handbuilt) with a pageable and a pinned host scalar, and transients of
// nested SDFGs in every memory mode. Without a GPU the runs skip, saying so; without nvcc/hipcc
// the compiles skip.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>

#include "CorpusKnown.h"
#include "DynamicRanges.h"
#include "LinearAlgebra.h"
#include "NestedStages.h"
#include "Reductions.h"
#include "ScopeCopies.h"
#include "TestUtil.h"
#include "compiler/Build.h"
#include "compiler/Compile.h"
#include "compiler/Convert.h"
#include "sdfc/sdfc.h"

using namespace sdfc;
using namespace sdfc::test;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> gpu_files() {
  return corpus_gpu_programs();
}

bool have(const char* tool, const char* env) {
  if (const char* e = std::getenv(env); e && *e) return true;
  for (std::string d : {"/usr/local/cuda/bin/", "/usr/bin/", "/opt/rocm/bin/"})
    if (fs::exists(d + tool)) return true;
  return run_process({"which", tool}).status == 0;
}

std::string param_name(const std::string& p) {
  std::string s = p;
  for (char& ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return s;
}

/// A FileCheck input (tests/codegen/cuda/NAME.sdfg) compiled for CUDA with `streams` streams.
Program cuda_codegen_input(const std::string& name, int streams = 0) {
  Options o;
  o.target = "cuda";
  o.gpu_streams = streams;
  return Program::compile_file(std::string(SDFC_TEST_DATA) + "/../codegen/cuda/" + name + ".sdfg", o);
}

/// Calls `p`; false when the call failed only because there is no GPU (the caller skips).
bool call_on_gpu(Program& p) {
  try {
    p.call();
    return true;
  } catch (const Error& e) {
    if (std::string(e.what()).find("no GPU device found") != std::string::npos) return false;
    throw;
  }
}

/// Runs `file` (a path) with the case's inputs; returns false (and skips) when there is no GPU.
/// The outputs go to `outputs` when given (the differential check compares configurations).
bool run_and_compare(const std::string& case_dir, const std::string& file, const Options& options,
                     std::map<std::string, TypedArray>* outputs = nullptr) {
  auto inputs = nlohmann::json::parse(slurp(case_dir + "/inputs.json"));
  auto expected = nlohmann::json::parse(slurp(case_dir + "/expected.json"));
  Program p = Program::compile_file(file, options);
  std::map<std::string, TypedArray> arrays = bind_corpus_inputs(p, inputs);
  // Symbols that only size arrays (not arguments; integers): the program checks the arrays with them.
  for (auto& [k, v] : inputs["symbols"].items()) {
    bool is_arg = false;
    for (auto& a : p.arguments()) is_arg |= a.name == k;
    if (!is_arg && v["value"].is_number_integer()) try {
        p.set_value(k, v["value"].get<std::int64_t>());
      } catch (const Error&) {
      }
  }
  if (!call_on_gpu(p)) return false;
  expect_corpus_outputs(expected, arrays);
  if (outputs) *outputs = std::move(arrays);
  return true;
}

class GpuCorpus : public ::testing::TestWithParam<std::string> {};

/// A GPU file on the known-unsupported list is refused for CUDA before anything is built, with the
/// construct named (no nvcc needed); one that compiles fails, so that the list shrinks.
TEST_P(GpuCorpus, KnownUnsupportedIsRefused) {
  const KnownUnsupported* k = find_known_unsupported(GetParam());
  if (!k) GTEST_SKIP() << "supported: the other GpuCorpus tests check it";
  std::string file = corpus_dir() + "/" + GetParam();
  CompileOptions o;
  o.target = Target::CUDA;
  try {
    auto sdfg = load_sdfg_file(file);
    generate_program(*sdfg, o, file);
    ADD_FAILURE() << GetParam() << " is on the known-unsupported list (issue " << k->issue
                  << ") but compiled: check its results on a GPU and remove it from tests/CorpusKnown.h";
  } catch (const InvalidInput& e) {
    std::string text;
    for (auto& d : e.diagnostics()) text += d.str() + "\n";
    EXPECT_NE(text.find(k->error), std::string::npos) << text;
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find(k->error), std::string::npos) << e.what();
  }
}

#define SKIP_KNOWN_UNSUPPORTED() \
  if (find_known_unsupported(GetParam())) GTEST_SKIP() << "known unsupported (see KnownUnsupportedIsRefused)"

TEST_P(GpuCorpus, CompilesForHip) {
  SKIP_KNOWN_UNSUPPORTED();
  if (!have("hipcc", "SDFC_HIPCC")) GTEST_SKIP() << "hipcc not found: HIP compile check skipped";
  // Compile and link only: nothing runs on AMD hardware here, and the library is not loaded.
  std::string file = corpus_dir() + "/" + GetParam();
  CompileOptions o;
  o.target = Target::HIP;
  auto sdfg = load_sdfg_file(file);
  auto program = generate_program(*sdfg, o, file);
  auto built = build_program(program, o, true);
  EXPECT_TRUE(fs::exists(built.library_path));
}

TEST_P(GpuCorpus, ReproducesDaCeOnTheGpu) {
  SKIP_KNOWN_UNSUPPORTED();
  if (!have("nvcc", "SDFC_NVCC")) GTEST_SKIP() << "nvcc not found: CUDA tests skipped";
  std::string case_dir = corpus_dir() + "/" + GetParam().substr(0, GetParam().find('/'));
  Options o;
  o.target = "cuda";
  if (!run_and_compare(case_dir, corpus_dir() + "/" + GetParam(), o))
    GTEST_SKIP() << "no GPU device: compiled for CUDA, not run";
}

TEST_P(GpuCorpus, EveryMemoryModeOnTheGpu) {
  SKIP_KNOWN_UNSUPPORTED();
  if (!have("nvcc", "SDFC_NVCC")) GTEST_SKIP() << "nvcc not found: CUDA tests skipped";
  if (!std::getenv("SDFC_GPU_MODES"))
    GTEST_SKIP() << "set SDFC_GPU_MODES=1 (the GPU test script does) to run every mode";
  std::string case_dir = corpus_dir() + "/" + GetParam().substr(0, GetParam().find('/'));
  for (const char* mode : {"scoped", "persistent", "pool", "external"}) {
    SCOPED_TRACE(mode);
    Options o;
    o.target = "cuda";
    o.transients = mode;
    if (!run_and_compare(case_dir, corpus_dir() + "/" + GetParam(), o)) GTEST_SKIP() << "no GPU device";
  }
}

/// GT4Py's metrics on the GPU (program_gpu.sdfg of the GT4Py cases: host timer tasklets calling
/// cudaDeviceSynchronize, GT4Py's init_code putting every stream on the default stream): at
/// gt_metrics_level 10 gt_compute_time receives a positive duration, and the results stay DaCe's.
TEST_P(GpuCorpus, GT4PyMetricsOnTheGpu) {
  SKIP_KNOWN_UNSUPPORTED();
  if (GetParam().rfind("gt4py_", 0) != 0) GTEST_SKIP() << "not a GT4Py file";
  if (!have("nvcc", "SDFC_NVCC")) GTEST_SKIP() << "nvcc not found: CUDA tests skipped";
  std::string case_dir = corpus_dir() + "/" + GetParam().substr(0, GetParam().find('/'));
  auto inputs = nlohmann::json::parse(slurp(case_dir + "/inputs.json"));
  auto expected = nlohmann::json::parse(slurp(case_dir + "/expected.json"));
  inputs["symbols"]["gt_metrics_level"]["value"] = 10;
  Options o;
  o.target = "cuda";
  Program p = Program::compile_file(corpus_dir() + "/" + GetParam(), o);
  std::map<std::string, TypedArray> arrays = bind_corpus_inputs(p, inputs);
  if (!call_on_gpu(p)) GTEST_SKIP() << "no GPU device: compiled for CUDA, not run";
  expect_corpus_outputs(expected, arrays);
  double t = element_value(arrays.at("gt_compute_time"), 0);
  EXPECT_TRUE(t > 0.0 && t < 60.0 && t != 1.0) << "gt_compute_time = " << t;
}

/// Several internal streams (--gpu-streams 1, 2, 4), with the external and the pooled memory modes
/// among them: every program with SDFC_GPU_MODES=1 (the GPU script); without it, a representative
/// few (fork-join, WCR, nested SDFG, data-dependent condition) compile and, with a GPU, run.
TEST_P(GpuCorpus, SeveralStreamsOnTheGpu) {
  SKIP_KNOWN_UNSUPPORTED();
  if (!have("nvcc", "SDFC_NVCC")) GTEST_SKIP() << "nvcc not found: CUDA tests skipped";
  bool all = std::getenv("SDFC_GPU_MODES") != nullptr;
  std::string name = GetParam().substr(0, GetParam().find('/'));
  bool representative =
      GetParam().find("handbuilt") == std::string::npos &&
      (name == "forkjoin2x2_s" || name == "colsum_wcr_s" || name == "nested_top_s" || name == "cond_datadep_s");
  if (!all && !representative) GTEST_SKIP() << "set SDFC_GPU_MODES=1 to run every program with several streams";
  std::string case_dir = corpus_dir() + "/" + name;
  struct Mode {
    int streams;
    const char* transients;
  };
  std::vector<Mode> modes =
      all ? std::vector<Mode>{{1, ""}, {2, ""}, {4, ""}, {4, "external"}, {2, "pool"}, {4, "persistent"}}
          : std::vector<Mode>{{4, ""}, {2, "external"}};
  // The differential check: every configuration gives the bits of one stream as declared
  // (floating-point write-conflict resolutions within tolerance: atomics order them).
  auto expected = nlohmann::json::parse(slurp(case_dir + "/expected.json"));
  auto tolerant = float_wcr_outputs(*load_sdfg_file(corpus_dir() + "/" + GetParam()));
  std::map<std::string, TypedArray> baseline;
  {
    Options o;
    o.target = "cuda";
    if (!run_and_compare(case_dir, corpus_dir() + "/" + GetParam(), o, &baseline))
      GTEST_SKIP() << "no GPU device: compiled for CUDA, not run";
  }
  for (const Mode& m : modes) {
    std::string what = fmt::format("--gpu-streams {} --transients {}", m.streams, m.transients);
    SCOPED_TRACE(what);
    Options o;
    o.target = "cuda";
    o.gpu_streams = m.streams;
    o.transients = m.transients;
    std::map<std::string, TypedArray> got;
    if (!run_and_compare(case_dir, corpus_dir() + "/" + GetParam(), o, &got))
      GTEST_SKIP() << "no GPU device: compiled for CUDA, not run";
    expect_same_outputs(expected, baseline, got, tolerant, "--gpu-streams 0 as declared vs " + what);
  }
}

/// --fuse-maps on the GPU: every program in which fusion merges maps gives DaCe's results with one
/// stream; with SDFC_GPU_MODES=1 (the GPU script) also with several streams, pooled and persistent
/// transients, and as a replayed graph.
TEST_P(GpuCorpus, FusedMapsOnTheGpu) {
  SKIP_KNOWN_UNSUPPORTED();
  if (!have("nvcc", "SDFC_NVCC")) GTEST_SKIP() << "nvcc not found: CUDA tests skipped";
  std::string path = corpus_dir() + "/" + GetParam();
  int before = maps_after_fusion(path, false, Target::CUDA), after = maps_after_fusion(path, true, Target::CUDA);
  if (after == before) GTEST_SKIP() << "no maps to fuse";
  std::printf("NOTE: --fuse-maps: %s: %d map scopes -> %d\n", GetParam().c_str(), before, after);
  std::string case_dir = corpus_dir() + "/" + GetParam().substr(0, GetParam().find('/'));
  struct Mode {
    int streams;
    const char* transients;
    bool graph;
  };
  std::vector<Mode> modes = {{0, "", false}};
  if (std::getenv("SDFC_GPU_MODES"))
    modes.insert(modes.end(), {{2, "", false}, {4, "pool", false}, {1, "persistent", false}, {2, "", true}});
  for (const Mode& m : modes) {
    SCOPED_TRACE(
        fmt::format("--gpu-streams {} --transients {}{}", m.streams, m.transients, m.graph ? " --gpu-graph" : ""));
    Options o;
    o.target = "cuda";
    o.fuse_maps = true;
    o.gpu_streams = m.streams;
    o.transients = m.transients;
    o.gpu_graph = m.graph;
    try {
      if (!run_and_compare(case_dir, path, o)) GTEST_SKIP() << "no GPU device: compiled for CUDA, not run";
    } catch (const Error& e) {
      if (!m.graph || std::string(e.what()).find("--gpu-graph: ") == std::string::npos) throw;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, GpuCorpus, ::testing::ValuesIn(gpu_files()),
                         [](const auto& info) { return param_name(info.param); });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GpuCorpus);

/// Seed 002: a GPU map writes a value, the host reads it (host tasklet, interstate edge), the next
/// state loops to that bound; with the host scalar in pageable and in pinned memory.
TEST(GpuSeed, DeviceValueReadOnTheHostPageableAndPinned) {
  if (corpus_dir().empty()) GTEST_SKIP() << "corpus not found";
  if (!have("nvcc", "SDFC_NVCC")) GTEST_SKIP() << "nvcc not found";
  std::string case_dir = corpus_dir() + "/d2h_symbol_s";
  Json j = Json::parse(slurp(case_dir + "/program_gpu_handbuilt.sdfg"));
  for (const char* storage : {"Default", "CPU_Pinned"}) {
    SCOPED_TRACE(storage);
    j["attributes"]["_arrays"]["cnt"]["attributes"]["storage"] = storage;
    std::string path = (fs::temp_directory_path() / fmt::format("seed002_{}_{}.sdfg", storage, ::getpid())).string();
    std::ofstream(path) << j.dump();
    Options o;
    o.target = "cuda";
    if (!run_and_compare(case_dir, path, o)) GTEST_SKIP() << "no GPU device: compiled for CUDA, not run";
    fs::remove(path);
  }
}

}  // namespace

namespace {
/// The seed-002 samples (samples/seed002*.sdfg): L = 7 and P = 2 * 7 - 1 come from the device; the
/// first L elements become res * P + 0.5 i, the rest stay.
TEST(GpuSeed, SamplesPageableAndPinned) {
  if (!have("nvcc", "SDFC_NVCC")) GTEST_SKIP() << "nvcc not found";
  for (const char* name : {"seed002", "seed002_pinned"}) {
    SCOPED_TRACE(name);
    Options o;
    o.target = "cuda";
    Program p = Program::compile_file(std::string(SDFC_SAMPLES) + "/" + name + ".sdfg", o);
    std::vector<float> res(10, 1.0f);
    p.set_array("res", res.data(), res.size());
    if (!call_on_gpu(p)) GTEST_SKIP() << "no GPU device";
    for (int i = 0; i < 10; ++i) EXPECT_EQ(res[i], i < 7 ? 13.0f + 0.5f * i : 1.0f) << i;
  }
}
}  // namespace

namespace {
/// The checked workspace setter of a GPU program asks the runtime what memory it was given: host
/// memory, or device memory of another device, is refused for GPU_Global and nothing is installed.
TEST(GpuWorkspace, HostMemoryIsRefusedForGpuGlobal) {
  if (corpus_dir().empty()) GTEST_SKIP() << "corpus not found";
  if (!have("nvcc", "SDFC_NVCC")) GTEST_SKIP() << "nvcc not found";
  Options o;
  o.target = "cuda";
  o.transients = "external";
  Program p = Program::compile_file(corpus_dir() + "/chain5_s/program_gpu.sdfg", o);
  ASSERT_EQ(p.workspace_storages(), std::vector<std::string>{"GPU_Global"});
  const int n = 128;
  std::vector<double> a(n), b(n), out(n, 0.0);
  for (int i = 0; i < n; ++i) a[i] = i, b[i] = 2 * i;
  p.set_array("a", a.data(), a.size());
  p.set_array("b", b.data(), b.size());
  p.set_array("out", out.data(), out.size());
  p.set_value("N", n);
  std::size_t bytes = 0;
  try {
    bytes = p.workspace_size("GPU_Global");
  } catch (const Error& e) {
    if (std::string(e.what()).find("no GPU device found") != std::string::npos) GTEST_SKIP() << "no GPU device";
    throw;
  }
  EXPECT_EQ(bytes, 4u * 1024u);  // 7 transients of 128 float64 in 4 slots (the chain shares bytes)
  std::vector<double> host(bytes / sizeof(double));
  try {
    p.set_workspace("GPU_Global", host.data(), bytes);
    FAIL() << "host memory was accepted as a GPU_Global workspace";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("is pageable host memory; it must be device memory"), std::string::npos)
        << e.what();
  }
  // The program's own workspace is still installed: the call works and matches the CPU version.
  p.call();
  Program cpu = Program::compile_file(corpus_dir() + "/chain5_s/program.sdfg");
  std::vector<double> want(n, 0.0);
  cpu.set_array("a", a.data(), a.size());
  cpu.set_array("b", b.data(), b.size());
  cpu.set_array("out", want.data(), want.size());
  cpu.set_value("N", n);
  cpu.call();
  // The GPU contracts a * b + c into FMAs: the last bits may differ from the CPU's.
  for (int i = 0; i < n; ++i) EXPECT_NEAR(out[i], want[i], 1e-12 * std::max(1.0, std::fabs(want[i]))) << i;
}
}  // namespace

namespace {
/// Transients of nested SDFGs on the GPU (NestedStages.h) in every memory mode — lifted to the top
/// level by persistent and external, pooled in place by pool — on one and on two streams.
TEST(GpuNested, NestedSdfgTransientsInEveryMemoryMode) {
  if (!have("nvcc", "SDFC_NVCC")) GTEST_SKIP() << "nvcc not found";
  std::string json = nested_stages_json(true);
  for (const char* mode : {"", "scoped", "persistent", "pool", "external"})
    for (int streams : {0, 2}) {
      SCOPED_TRACE(fmt::format("--transients {} --gpu-streams {}", mode, streams));
      Options o;
      o.target = "cuda";
      o.transients = mode;
      o.gpu_streams = streams;
      Program p = Program::compile_string(json, o);
      try {
        for (int n : {40, 17}) EXPECT_EQ(run_nested_stages(p, n), nested_stages_expected(n)) << "N = " << n;
      } catch (const Error& e) {
        if (std::string(e.what()).find("no GPU device found") != std::string::npos)
          GTEST_SKIP() << "no GPU device: compiled for CUDA, not run";
        throw;
      }
    }
}
}  // namespace

/// Copies of N-D blocks between host and GPU memory and a strided column (tests/codegen/cuda/
/// gpu_copies_nd.sdfg): the 3D interior of C over A on the GPU, a column of it, both back.
TEST(GpuCopies, NdBlocksAndStridedColumns) {
  if (!have("nvcc", "SDFC_NVCC")) GTEST_SKIP() << "nvcc not found";
  const std::int64_t n = 7;
  const std::size_t cells = static_cast<std::size_t>(n * n * n);
  for (int streams : {0, 2}) {
    SCOPED_TRACE(streams);
    Program p = cuda_codegen_input("gpu_copies_nd", streams);
    std::vector<double> a(cells), c(cells), b(cells, -1.0), hcol(static_cast<std::size_t>(n), -1.0);
    for (std::size_t i = 0; i < cells; ++i) {
      a[i] = static_cast<double>(i);
      c[i] = 1000.0 + static_cast<double>(i);
    }
    p.set_array("A", a.data(), cells);
    p.set_array("C", c.data(), cells);
    p.set_array("B", b.data(), cells);
    p.set_array("hcol", hcol.data(), hcol.size());
    p.set_value("N", n);
    if (!call_on_gpu(p)) GTEST_SKIP() << "no GPU device";
    auto at = [&](std::int64_t i, std::int64_t j, std::int64_t k) {
      return static_cast<std::size_t>((i * n + j) * n + k);
    };
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t k = 0; k < n; ++k) {
          bool interior = i > 0 && j > 0 && k > 0 && i < n - 1 && j < n - 1 && k < n - 1;
          ASSERT_EQ(b[at(i, j, k)], interior ? c[at(i, j, k)] : a[at(i, j, k)]) << i << "," << j << "," << k;
        }
    for (std::int64_t i = 0; i < n; ++i) EXPECT_EQ(hcol[static_cast<std::size_t>(i)], b[at(i, 2, 3)]) << i;
  }
}

/// A while loop whose condition reads a value the GPU computes (tests/codegen/cuda/
/// gpu_loop_cond.sdfg): r is halved on the GPU while r > 0.5, c counts the iterations.
TEST(GpuLoops, ConditionReadsAGpuValue) {
  if (!have("nvcc", "SDFC_NVCC")) GTEST_SKIP() << "nvcc not found";
  for (int streams : {0, 2}) {
    SCOPED_TRACE(streams);
    Program p = cuda_codegen_input("gpu_loop_cond", streams);
    double r = 10.0;
    std::int64_t c = 0;
    p.set_array("hr", &r, 1);
    p.set_array("hc", &c, 1);
    if (!call_on_gpu(p)) GTEST_SKIP() << "no GPU device";
    EXPECT_EQ(r, 0.3125);  // 10 -> 5 -> 2.5 -> 1.25 -> 0.625 -> 0.3125
    EXPECT_EQ(c, 5);
  }
}

/// Calls the CUDA build of codegen input `name` (float64 arrays A, B of `cells` elements, symbol N)
/// with A = `scale` * index and B = -1 on the GPU; fills `a` and `b`; false when there is no GPU.
static bool call_a_to_b(const std::string& name, std::int64_t n, std::size_t cells, double scale,
                        std::vector<double>& a, std::vector<double>& b) {
  Program p = cuda_codegen_input(name);
  a.assign(cells, 0.0);
  b.assign(cells, -1.0);
  for (std::size_t i = 0; i < cells; ++i) a[i] = scale * static_cast<double>(i);
  p.set_array("A", a.data(), cells);
  p.set_array("B", b.data(), cells);
  p.set_value("N", n);
  return call_on_gpu(p);
}

/// A GPU map of 4 parameters (tests/codegen/cuda/kernel_4d.sdfg): every point computed once, with
/// the right indices (host arrays bound to the device arguments are mirrored by the Program).
TEST(GpuKernels, FourParameterMap) {
  if (!have("nvcc", "SDFC_NVCC")) GTEST_SKIP() << "nvcc not found";
  const std::int64_t n = 9;
  const std::size_t cells = static_cast<std::size_t>(2 * 3 * n * 5);
  std::vector<double> a, b;
  if (!call_a_to_b("kernel_4d", n, cells, 0.5, a, b)) GTEST_SKIP() << "no GPU device";
  for (std::int64_t i = 0; i < 2; ++i)
    for (std::int64_t j = 0; j < 3; ++j)
      for (std::int64_t k = 0; k < n; ++k)
        for (std::int64_t l = 0; l < 5; ++l) {
          std::size_t at = static_cast<std::size_t>(((i * 3 + j) * n + k) * 5 + l);
          ASSERT_EQ(b[at], a[at] * 2.0 + static_cast<double>(i * 1000 + j * 100 + k * 10 + l)) << i << j << k << l;
        }
}

/// A 3D map whose x and y parameters have constant extents (tests/codegen/cuda/kernel_3d.sdfg:
/// three[k=0:N, j=0:3, l=0:5]): outline-kernels fits sdfc's block to them (5 x 3 x 17, 16 planes
/// per thread along z), so N = 600 spans three blocks along z, the last one partly.
TEST(GpuKernels, BlockFittedToConstantExtents) {
  if (!have("nvcc", "SDFC_NVCC")) GTEST_SKIP() << "nvcc not found";
  const std::int64_t n = 600;
  const std::size_t cells = static_cast<std::size_t>(n * 3 * 5);
  std::vector<double> a, b;
  if (!call_a_to_b("kernel_3d", n, cells, 0.25, a, b)) GTEST_SKIP() << "no GPU device";
  for (std::int64_t k = 0; k < n; ++k)
    for (std::int64_t j = 0; j < 3; ++j)
      for (std::int64_t l = 0; l < 5; ++l) {
        std::size_t at = static_cast<std::size_t>((k * 3 + j) * 5 + l);
        ASSERT_EQ(b[at], a[at] * 2.0 + static_cast<double>(k + j + l)) << k << " " << j << " " << l;
      }
}

/// Write-conflicted sums added up over each thread's 32 rows (tests/codegen/cuda/gpu_wcr_sums.sdfg,
/// KernelPlan::accumulations): colsum[j] per thread, total[0] and count[0] combined in each warp,
/// rowsum[i] one atomic per point combined in each warp by element, seen[j] one atomic per point. N = 1001 leaves the
/// last block's rows partly outside the map, M = 300 its last block's columns. The values are small integers, so every
/// order of the additions gives the same float64 sums.
TEST(GpuKernels, WriteConflictedSumsOverRows) {
  if (!have("nvcc", "SDFC_NVCC")) GTEST_SKIP() << "nvcc not found";
  const std::int64_t n = 1001, m = 300;
  std::vector<double> a(static_cast<std::size_t>(n * m)), colsum(static_cast<std::size_t>(m), 0.5),
      rowsum(static_cast<std::size_t>(n), 0.0), total(1, 1.0), seen(static_cast<std::size_t>(m), 0.0);
  std::vector<std::int64_t> count(1, 0);
  for (std::size_t k = 0; k < a.size(); ++k) a[k] = static_cast<double>(static_cast<std::int64_t>(k * 7 % 23) - 11);
  Program p = cuda_codegen_input("gpu_wcr_sums");
  p.set_array("A", a.data(), a.size());
  p.set_array("colsum", colsum.data(), colsum.size());
  p.set_array("rowsum", rowsum.data(), rowsum.size());
  p.set_array("total", total.data(), total.size());
  p.set_array("count", count.data(), count.size());
  p.set_array("seen", seen.data(), seen.size());
  p.set_value("N", n);
  p.set_value("M", m);
  if (!call_on_gpu(p)) GTEST_SKIP() << "no GPU device";
  double want_total = 1.0;
  for (std::int64_t j = 0; j < m; ++j) {
    double want = 0.0;
    for (std::int64_t i = 0; i < n; ++i) want += a[static_cast<std::size_t>(i * m + j)];
    ASSERT_EQ(colsum[static_cast<std::size_t>(j)], 0.5 + want) << j;
    ASSERT_EQ(seen[static_cast<std::size_t>(j)], want) << j;
    want_total += want;
  }
  for (std::int64_t i = 0; i < n; ++i) {
    double want = 0.0;
    for (std::int64_t j = 0; j < m; ++j) want += 2 * a[static_cast<std::size_t>(i * m + j)];
    ASSERT_EQ(rowsum[static_cast<std::size_t>(i)], want) << i;
  }
  EXPECT_EQ(total[0], want_total);
  EXPECT_EQ(count[0], n * m);
}

/// Dynamic map range inputs on the GPU (tests/codegen/cuda/map_dynamic_range.sdfg): a kernel over
/// 0:cnt (a host scalar read before the launch) and, inside a kernel, a sequential map over
/// 0:lens[j] (device memory); with 0 and 2 streams.
/// Copies into and out of map scopes inside kernels (tests/codegen/cuda/scope_copy_*), with one
/// and several streams.
TEST(GpuKernels, ScopeCopiesComputeValues) {
  if (!have("nvcc", "SDFC_NVCC")) GTEST_SKIP() << "nvcc not found";
  for (const std::string& name : scope_copy_programs())
    for (int streams : {0, 2}) {
      SCOPED_TRACE(name + " --gpu-streams " + std::to_string(streams));
      Program p = cuda_codegen_input(name, streams);
      if (!check_scope_copy(p, name, call_on_gpu)) GTEST_SKIP() << "no GPU device";
    }
}

/// Reduce library nodes inside a kernel map (tests/codegen/cuda/reduce_in_map), 0 and 2 streams.
TEST(GpuKernels, ReduceLibraryNodesInAMap) {
  if (!have("nvcc", "SDFC_NVCC")) GTEST_SKIP() << "nvcc not found";
  for (int streams : {0, 2}) {
    SCOPED_TRACE(streams);
    Program p = cuda_codegen_input("reduce_in_map", streams);
    if (!check_reductions(p, call_on_gpu)) GTEST_SKIP() << "no GPU device";
  }
}

/// Reduce library nodes outside any map on GPU data (tests/codegen/cuda/gpu_reduce.sdfg, made by
/// DaCe's frontend: row sums, column maxima, an int64 total), each two kernels: the identity, then
/// a thread per element applying the lambda as a write-conflict resolution. N = 1001 and M = 300
/// leave partial blocks along both axes; the values are small integers, so every order of the
/// additions gives the same float64 sums. With 0 and 2 streams.
TEST(GpuKernels, ReduceLibraryNodesOutsideAnyMap) {
  if (!have("nvcc", "SDFC_NVCC")) GTEST_SKIP() << "nvcc not found";
  const std::int64_t n = 1001, m = 300;
  for (int streams : {0, 2}) {
    SCOPED_TRACE(streams);
    std::vector<double> a(static_cast<std::size_t>(n * m)), rows(static_cast<std::size_t>(n), 7.0),
        cols(static_cast<std::size_t>(m), 7.0);
    std::vector<std::int64_t> ints(a.size()), total(1, 5);
    for (std::size_t k = 0; k < a.size(); ++k) {
      a[k] = static_cast<double>(static_cast<std::int64_t>(k * 7 % 23) - 30);  // every value negative
      ints[k] = static_cast<std::int64_t>(k % 11) - 4;
    }
    Program p = cuda_codegen_input("gpu_reduce", streams);
    p.set_array("A", a.data(), a.size());
    p.set_array("I", ints.data(), ints.size());
    p.set_array("rows", rows.data(), rows.size());
    p.set_array("cols", cols.data(), cols.size());
    p.set_array("total", total.data(), total.size());
    p.set_value("N", n);
    p.set_value("M", m);
    if (!call_on_gpu(p)) GTEST_SKIP() << "no GPU device";
    for (std::int64_t i = 0; i < n; ++i) {
      double want = 0.0;
      for (std::int64_t j = 0; j < m; ++j) want += a[static_cast<std::size_t>(i * m + j)];
      ASSERT_EQ(rows[static_cast<std::size_t>(i)], want) << i;
    }
    for (std::int64_t j = 0; j < m; ++j) {
      double want = a[static_cast<std::size_t>(j)];
      for (std::int64_t i = 0; i < n; ++i) want = std::max(want, a[static_cast<std::size_t>(i * m + j)]);
      ASSERT_EQ(cols[static_cast<std::size_t>(j)], want) << j;
    }
    std::int64_t want_total = 0;
    for (std::int64_t v : ints) want_total += v;
    EXPECT_EQ(total[0], want_total);
  }
}

/// BLAS and linear-algebra library nodes on GPU data outside any map (their maps become kernels)
/// and inside a kernel map (sequential loops in each thread), 0 and 2 streams; pure and, with
/// --blas vendor, the BLAS forms as cuBLAS calls on their nodes' streams.
TEST(GpuKernels, LinearAlgebraLibraryNodes) {
  if (!have("nvcc", "SDFC_NVCC")) GTEST_SKIP() << "nvcc not found";
  struct Variant {
    std::string name;
    Program outside, inside;
  };
  std::vector<Variant> variants;  // every variant compiled (and linked: cuBLAS too) before any runs
  for (auto [streams, blas] : {std::pair{0, "pure"}, {2, "pure"}, {0, "vendor"}, {2, "vendor"}, {4, "vendor"}}) {
    Options o;
    o.target = "cuda";
    o.gpu_streams = streams;
    o.blas = blas;
    variants.push_back({fmt::format("{} streams, --blas {}", streams, blas),
                        Program::compile_string(linear_algebra_json(true), o),
                        Program::compile_string(rows_in_a_map_json(true), o)});
  }
  for (auto& v : variants) {
    SCOPED_TRACE(v.name);
    if (!check_linear_algebra(v.outside, call_on_gpu) || !check_rows_in_a_map(v.inside, call_on_gpu))
      GTEST_SKIP() << "no GPU device: compiled for CUDA, not run";
  }
}

TEST(GpuKernels, DynamicMapRangeInputs) {
  if (!have("nvcc", "SDFC_NVCC")) GTEST_SKIP() << "nvcc not found";
  for (int streams : {0, 2}) {
    SCOPED_TRACE(streams);
    Program p = cuda_codegen_input("map_dynamic_range", streams);
    if (!check_dynamic_ranges(p, call_on_gpu)) GTEST_SKIP() << "no GPU device";
  }
}

/// GPU_ThreadBlock maps on the block's threads through __shared__ memory (tests/codegen/cuda/
/// thread_blocks.sdfg: each block doubles its 32 elements into shared memory, then writes them
/// reversed), and the same program with a symbolic thread-block extent (loops in each thread).
TEST(GpuKernels, ThreadBlockMapsThroughSharedMemory) {
  if (!have("nvcc", "SDFC_NVCC")) GTEST_SKIP() << "nvcc not found";
  for (const char* name : {"thread_blocks", "thread_blocks_symbolic"}) {
    SCOPED_TRACE(name);
    const std::int64_t n = 4 * 32;
    Program p = cuda_codegen_input(name);
    std::vector<double> a(static_cast<std::size_t>(n)), b(static_cast<std::size_t>(n), -1.0);
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = 1.0 + static_cast<double>(i);
    p.set_array("A", a.data(), a.size());
    p.set_array("B", b.data(), b.size());
    p.set_value("N", n);
    if (std::string(name) == "thread_blocks_symbolic") p.set_value("K", std::int64_t{32});
    if (!call_on_gpu(p)) GTEST_SKIP() << "no GPU device";
    for (std::int64_t blk = 0; blk < n / 32; ++blk)
      for (std::int64_t t = 0; t < 32; ++t)
        ASSERT_EQ(b[static_cast<std::size_t>(32 * blk + t)], 2.0 * a[static_cast<std::size_t>(32 * blk + 31 - t)])
            << blk << " " << t;
  }
}

namespace {

/// The hand-written GPU FileCheck inputs (tests/codegen/cuda, error cases excluded).
std::vector<std::string> gpu_codegen_inputs() {
  std::vector<std::string> out;
  for (auto& f : fs::directory_iterator(std::string(SDFC_TEST_DATA) + "/../codegen/cuda"))
    if (f.path().extension() == ".sdfg" && f.path().filename().string().rfind("error_", 0) != 0)
      out.push_back(f.path().stem().string());
  std::sort(out.begin(), out.end());
  return out;
}

/// Compiles and links (nothing runs) one FileCheck input for `target` (with `graph`: --gpu-graph
/// and 2 streams).
void compile_only(const std::string& name, Target target, bool graph = false) {
  std::string file = std::string(SDFC_TEST_DATA) + "/../codegen/cuda/" + name + ".sdfg";
  CompileOptions o;
  o.target = target;
  o.gpu_graph = graph;
  o.gpu_streams = graph ? 2 : 0;
  auto sdfg = load_sdfg_file(file);
  auto program = generate_program(*sdfg, o, file);
  auto built = build_program(program, o, true);
  EXPECT_TRUE(fs::exists(built.library_path));
}

class GpuCodegenInputs : public ::testing::TestWithParam<std::string> {};

}  // namespace

/// What the FileCheck tests read in the generated source also compiles: thread-block kernels with
/// shared memory, N-D copies, 4-parameter maps, events between streams, pools, workspaces.
TEST_P(GpuCodegenInputs, CompilesForCuda) {
  if (!have("nvcc", "SDFC_NVCC")) GTEST_SKIP() << "nvcc not found";
  compile_only(GetParam(), Target::CUDA);
}

TEST_P(GpuCodegenInputs, CompilesForHip) {
  if (!have("hipcc", "SDFC_HIPCC")) GTEST_SKIP() << "hipcc not found: HIP compile check skipped";
  compile_only(GetParam(), Target::HIP);
}

/// Graph mode's generated code (capture, key, replay; the runtime's graph calls) compiles and links
/// for both targets, on inputs with kernels, thread blocks, scope copies and write-conflict sums,
/// and graph segments with capture-aware events (gpu_loop_cond).
TEST(GpuGraphCodegen, CompilesForCudaAndHip) {
  for (const char* name : {"kernel_3d", "gpu_wcr", "scope_copy_nested", "thread_blocks", "gpu_loop_cond"}) {
    SCOPED_TRACE(name);
    if (have("nvcc", "SDFC_NVCC")) compile_only(name, Target::CUDA, true);
    if (have("hipcc", "SDFC_HIPCC")) compile_only(name, Target::HIP, true);
  }
}

INSTANTIATE_TEST_SUITE_P(FileCheckInputs, GpuCodegenInputs, ::testing::ValuesIn(gpu_codegen_inputs()),
                         [](const auto& info) { return info.param; });

namespace {

/// Every element of `buffer` outside the field (`inside` false) still holds `sentinel`.
void expect_padding_untouched(const std::vector<double>& buffer, const std::vector<bool>& inside, double sentinel,
                              const std::string& what) {
  for (std::size_t e = 0; e < inside.size(); ++e) {
    if (!inside[e]) {
      EXPECT_EQ(buffer[e], sentinel) << what << "padding element " << e << " was written";
    }
  }
}

/// GT4Py's 3D Laplacian (corpus gt4py_lap3d_s/program_gpu.sdfg: the map runs over [K, I, J], the
/// fields u and lap are [I, J, K] with strides that are symbols) with both fields laid out with
/// element strides `stride` = {I, J, K}; the elements outside the fields (padding) hold a
/// sentinel that must survive. At the corpus's shape (8 x 7 x 6) the inputs and DaCe's outputs
/// are the corpus's; at another `shape` u is pseudo-random, lap's border keeps its zeros and its
/// interior is GT4Py's Laplacian, inv_h2 * (u's six neighbours - 6 u), computed here. Returns
/// false when there is no GPU.
bool lap3d_with_strides(const std::array<std::int64_t, 3>& stride, const std::string& what,
                        std::array<std::int64_t, 3> shape = {8, 7, 6}) {
  SCOPED_TRACE(what);
  std::string dir = corpus_dir() + "/gt4py_lap3d_s";
  auto inputs = nlohmann::json::parse(slurp(dir + "/inputs.json"));
  auto expected = nlohmann::json::parse(slurp(dir + "/expected.json"));
  Options o;
  o.target = "cuda";
  Program p = Program::compile_file(dir + "/program_gpu.sdfg", o);
  const char* dim[] = {"I", "J", "K"};
  const bool corpus = inputs["arrays"]["u"]["shape"] == nlohmann::json(shape);
  std::int64_t extent = 1;
  for (int d = 0; d < 3; ++d) extent += (shape[static_cast<std::size_t>(d)] - 1) * stride[static_cast<std::size_t>(d)];
  constexpr double kSentinel = -12345.5;
  std::map<std::string, std::vector<double>> buffers;
  auto offset = [&](std::int64_t i, std::int64_t j, std::int64_t k) {
    return static_cast<std::size_t>(i * stride[0] + j * stride[1] + k * stride[2]);
  };
  auto each = [&](auto f) {
    for (std::int64_t i = 0; i < shape[0]; ++i)
      for (std::int64_t j = 0; j < shape[1]; ++j)
        for (std::int64_t k = 0; k < shape[2]; ++k)
          f(i, j, k, static_cast<std::size_t>((i * shape[1] + j) * shape[2] + k));
  };
  // The fields in C order: the corpus's, or u pseudo-random and lap zero.
  std::map<std::string, std::vector<double>> fields;
  const std::size_t points = static_cast<std::size_t>(shape[0] * shape[1] * shape[2]);
  for (const char* field : {"u", "lap"}) {
    auto& f = fields[field];
    if (corpus)
      for (auto& x : inputs["arrays"][field]["data"]) f.push_back(x.get<double>());
    else
      f.assign(points, 0.0);
  }
  if (!corpus)
    for (std::size_t c = 0; c < points; ++c) fields["u"][c] = static_cast<double>((c * 7919 + 13) % 1009) / 1009.0;
  const double inv_h2 = inputs["symbols"]["inv_h2"]["value"].get<double>();
  std::vector<double> want;
  if (corpus) {
    for (auto& x : expected["arrays"]["lap"]["data"]) want.push_back(x.get<double>());
  } else {
    want = fields["lap"];
    const auto& u = fields["u"];
    auto at = [&](std::int64_t i, std::int64_t j, std::int64_t k) {
      return u[static_cast<std::size_t>((i * shape[1] + j) * shape[2] + k)];
    };
    each([&](auto i, auto j, auto k, std::size_t c) {
      if (i < 1 || i > shape[0] - 2 || j < 1 || j > shape[1] - 2 || k < 1 || k > shape[2] - 2) return;
      double sum =
          at(i - 1, j, k) + at(i + 1, j, k) + at(i, j - 1, k) + at(i, j + 1, k) + at(i, j, k - 1) + at(i, j, k + 1);
      want[c] = inv_h2 * (sum - 6.0 * at(i, j, k));
    });
  }
  for (const char* field : {"u", "lap"}) {
    auto& b = buffers[field] = std::vector<double>(static_cast<std::size_t>(extent), kSentinel);
    each([&](auto i, auto j, auto k, std::size_t c) { b[offset(i, j, k)] = fields[field][c]; });
  }
  std::map<std::string, TypedArray> others;  // GT4Py's metrics timer
  for (auto& a : p.arguments()) {
    if (a.kind == "array" && buffers.count(a.name)) {
      p.set_array(a.name, buffers.at(a.name).data(), "float64", buffers.at(a.name).size());
      continue;
    }
    if (a.kind == "array") {
      TypedArray& t = others[a.name] = typed_array(inputs["arrays"][a.name]);
      p.set_array(a.name, t.bytes.data(), a.dtype, t.count);
      continue;
    }
    const auto& v = inputs[a.kind == "symbol" ? "symbols" : "scalars"][a.name]["value"];
    std::int64_t set = -1;
    for (int d = 0; d < 3; ++d) {
      for (const char* field : {"u", "lap"}) {
        if (a.name == fmt::format("__{}_{}_stride", field, dim[d])) set = stride[static_cast<std::size_t>(d)];
        if (a.name == fmt::format("__{}_{}_range_1", field, dim[d])) set = shape[static_cast<std::size_t>(d)];
      }
      if (a.name == std::string("n") + "xyz"[d]) set = shape[static_cast<std::size_t>(d)];
    }
    if (set >= 0)
      p.set_value(a.name, set);
    else if (v.is_number_float())
      p.set_value(a.name, v.get<double>());
    else
      p.set_value(a.name, v.get<std::int64_t>());
  }
  if (!call_on_gpu(p)) return false;
  int bad = 0;
  each([&](auto i, auto j, auto k, std::size_t c) {
    double g = buffers["lap"][offset(i, j, k)], w = want[c];
    if (!(std::abs(g - w) <= 1e-12 + 1e-9 * std::abs(w)) && ++bad <= 5)
      ADD_FAILURE() << "lap[" << i << ", " << j << ", " << k << "] = " << g << ", expected " << w;
  });
  EXPECT_EQ(bad, 0);
  std::vector<bool> inside(static_cast<std::size_t>(extent), false);
  each([&](auto i, auto j, auto k, std::size_t) { inside[offset(i, j, k)] = true; });
  expect_padding_untouched(buffers["lap"], inside, kSentinel, "");
  return true;
}

}  // namespace

/// outline-kernels gives the Laplacian's kernel two layouts (J on x, K on x) and the launch picks
/// by u's strides: every layout gives DaCe's numbers, and nothing outside the fields is written.
TEST(GpuLayouts, Gt4pyLaplacianIsRightInEveryLayout) {
  if (!have("nvcc", "SDFC_NVCC")) GTEST_SKIP() << "nvcc not found";
  std::string dir = corpus_dir() + "/gt4py_lap3d_s";
  if (!fs::exists(dir)) GTEST_SKIP() << "corpus not found";
  std::int64_t ni = 8, nj = 7, nk = 6;  // the corpus's shape (checked by the strides' use below)
  auto inputs = nlohmann::json::parse(slurp(dir + "/inputs.json"));
  ASSERT_EQ(inputs["arrays"]["u"]["shape"], nlohmann::json({ni, nj, nk}));
  struct Case {
    std::array<std::int64_t, 3> stride;
    const char* what;
  };
  for (const Case& c :
       std::vector<Case>{{{nj * nk, nk, 1}, "C order (K fastest): layout 1, K on x"},
                         {{nj, 1, ni * nj}, "GT4Py's GPU order (J fastest): layout 0"},
                         {{1, ni, ni * nj}, "Fortran order (I fastest): layout 2, I on x, J folded into I"},
                         {{1, ni + 3, (ni + 3) * (nj + 1)}, "Fortran order padded in I and J"},
                         {{(nj + 2) * (nk + 3), nk + 3, 1}, "C order padded in J and K"},
                         {{nj + 5, 1, (ni + 1) * (nj + 5)}, "J fastest, padded"},
                         {{nj * nk, nk, 1}, "C order again (the same library)"}}) {
    if (!lap3d_with_strides(c.stride, c.what)) GTEST_SKIP() << "no GPU device found: run on a GPU machine";
  }
}

namespace {

/// GT4Py's neighbour reduction (corpus gt4py_c2e_reduce_s/program_gpu.sdfg: q_avg, q_max and
/// q_min over [Cell, K] from q_e[Edge, K] gathered through gt_conn_C2E, weighted by w) at the
/// corpus's shape and numbers, with the 2D fields laid out with element strides `strides`
/// ({Cell or Edge, K} per field); elements outside the fields hold a sentinel that must survive.
/// The transient gtir_tmp_1[Cell, 3, K] follows q_avg's layout (transient-layouts). Returns false
/// when there is no GPU.
bool c2e_with_strides(const std::map<std::string, std::array<std::int64_t, 2>>& strides, const std::string& what) {
  SCOPED_TRACE(what);
  std::string dir = corpus_dir() + "/gt4py_c2e_reduce_s";
  auto inputs = nlohmann::json::parse(slurp(dir + "/inputs.json"));
  auto expected = nlohmann::json::parse(slurp(dir + "/expected.json"));
  Options o;
  o.target = "cuda";
  Program p = Program::compile_file(dir + "/program_gpu.sdfg", o);
  constexpr double kSentinel = -12345.5;
  struct Field {
    std::array<std::int64_t, 2> shape, stride;
    std::vector<double> buffer;
    std::size_t at(std::int64_t r, std::int64_t c) const {
      return static_cast<std::size_t>(r * stride[0] + c * stride[1]);
    }
  };
  std::map<std::string, Field> fields;
  for (auto& [name, stride] : strides) {
    Field& f = fields[name];
    const auto& a = inputs["arrays"][name];
    f.shape = {a["shape"][0].get<std::int64_t>(), a["shape"][1].get<std::int64_t>()};
    f.stride = stride;
    f.buffer.assign(static_cast<std::size_t>(1 + (f.shape[0] - 1) * stride[0] + (f.shape[1] - 1) * stride[1]),
                    kSentinel);
    for (std::int64_t r = 0; r < f.shape[0]; ++r)
      for (std::int64_t c = 0; c < f.shape[1]; ++c)
        f.buffer[f.at(r, c)] = a["data"][static_cast<std::size_t>(r * f.shape[1] + c)].get<double>();
  }
  std::map<std::string, TypedArray> others;  // gt_conn_C2E, w, GT4Py's metrics timer: the corpus's
  for (auto& a : p.arguments()) {
    if (a.kind == "array" && fields.count(a.name)) {
      Field& f = fields.at(a.name);
      p.set_array(a.name, f.buffer.data(), "float64", f.buffer.size());
    } else if (a.kind == "array") {
      TypedArray& t = others[a.name] = typed_array(inputs["arrays"][a.name]);
      p.set_array(a.name, t.bytes.data(), a.dtype, t.count);
    } else {
      std::int64_t value = inputs[a.kind == "symbol" ? "symbols" : "scalars"][a.name]["value"].get<std::int64_t>();
      for (auto& [name, f] : fields) {
        if (a.name == fmt::format("__{}_K_stride", name)) value = f.stride[1];
        if (a.name == fmt::format("__{}_Cell_stride", name) || a.name == fmt::format("__{}_Edge_stride", name))
          value = f.stride[0];
      }
      p.set_value(a.name, value);
    }
  }
  if (!call_on_gpu(p)) return false;
  for (const char* out : {"q_avg", "q_max", "q_min"}) {
    const Field& f = fields.at(out);
    const auto& want = expected["arrays"][out]["data"];
    int bad = 0;
    std::vector<bool> inside(f.buffer.size(), false);
    for (std::int64_t r = 0; r < f.shape[0]; ++r)
      for (std::int64_t c = 0; c < f.shape[1]; ++c) {
        inside[f.at(r, c)] = true;
        double g = f.buffer[f.at(r, c)], w = want[static_cast<std::size_t>(r * f.shape[1] + c)].get<double>();
        if (!(std::abs(g - w) <= 1e-12 + 1e-9 * std::abs(w)) && ++bad <= 5)
          ADD_FAILURE() << out << "[" << r << ", " << c << "] = " << g << ", expected " << w;
      }
    EXPECT_EQ(bad, 0) << out;
    expect_padding_untouched(f.buffer, inside, kSentinel, std::string(out) + ": ");
  }
  return true;
}

}  // namespace

/// transient-layouts lays GT4Py's transient out as q_avg at each call, and its kernels pick their
/// layout by the transient's strides: every order of the arguments, alike or mixed, padded or
/// not, gives DaCe's numbers (the corpus's, computed in C order), and nothing outside the fields
/// is written.
TEST(GpuLayouts, NeighbourReductionIsRightInEveryLayout) {
  if (!have("nvcc", "SDFC_NVCC")) GTEST_SKIP() << "nvcc not found";
  std::string dir = corpus_dir() + "/gt4py_c2e_reduce_s";
  if (!fs::exists(dir)) GTEST_SKIP() << "corpus not found";
  const std::int64_t cells = 24, edges = 36, levels = 4;  // the corpus's shape
  auto inputs = nlohmann::json::parse(slurp(dir + "/inputs.json"));
  ASSERT_EQ(inputs["arrays"]["q_avg"]["shape"], nlohmann::json({cells, levels}));
  ASSERT_EQ(inputs["arrays"]["q_e"]["shape"], nlohmann::json({edges, levels}));
  using Strides = std::map<std::string, std::array<std::int64_t, 2>>;
  auto alike = [&](std::int64_t pad, bool k_fastest) {
    Strides s;
    for (auto [name, rows] :
         {std::pair("q_e", edges), std::pair("q_avg", cells), std::pair("q_max", cells), std::pair("q_min", cells)})
      s[name] = k_fastest ? std::array<std::int64_t, 2>{levels + pad, 1} : std::array<std::int64_t, 2>{1, rows + pad};
    return s;
  };
  Strides mixed = alike(0, true);
  mixed["q_avg"] = {1, cells + 3};  // the transient follows q_avg: Cell fastest; q_max and q_min K fastest
  Strides mixed_other = alike(2, false);
  mixed_other["q_avg"] = {levels + 1, 1};  // q_avg K fastest, the rest Cell fastest
  for (auto& [strides, what] : std::vector<std::pair<Strides, const char*>>{
           {alike(0, true), "C order (K fastest): the transient K fastest"},
           {alike(0, false), "GT4Py's GPU order (Cell fastest): the transient as declared"},
           {alike(3, true), "C order padded"},
           {alike(5, false), "Cell fastest padded"},
           {mixed, "q_avg Cell fastest, the others K fastest"},
           {mixed_other, "q_avg K fastest, the others Cell fastest, padded"}}) {
    if (!c2e_with_strides(strides, what)) GTEST_SKIP() << "no GPU device found: run on a GPU machine";
  }
}

/// The C-order layout folds J into K, the Fortran-order one J into I (one index over the plane at
/// the pitch the launch picks: J's stride where x's is 1 and rows leave at most 32 idle points,
/// else x's extent). At shapes of many blocks, with rows of odd lengths, every pitch gives the
/// Laplacian.
TEST(GpuLayouts, FoldedLaplacianIsRightAtEveryPitch) {
  if (!have("nvcc", "SDFC_NVCC")) GTEST_SKIP() << "nvcc not found";
  if (!fs::exists(corpus_dir() + "/gt4py_lap3d_s")) GTEST_SKIP() << "corpus not found";
  struct Case {
    std::array<std::int64_t, 3> shape, stride;
    const char* what;
  };
  auto c_order = [](std::array<std::int64_t, 3> n, std::int64_t pad_j, std::int64_t pad_k) {
    return std::array<std::int64_t, 3>{(n[1] + pad_j) * (n[2] + pad_k), n[2] + pad_k, 1};
  };
  const std::array<std::int64_t, 3> a = {9, 37, 83}, b = {5, 300, 7}, c = {4, 11, 300};
  for (const Case& t :
       std::vector<Case>{{a, c_order(a, 0, 0), "C order, 35 rows of 81 points: pitch 83 (J's stride)"},
                         {a, c_order(a, 2, 5), "C order, K padded by 5: pitch 88"},
                         {a, c_order(a, 0, 40), "C order, K padded by 40 (past a warp): pitch 81 (K's extent)"},
                         {a, {a[2], a[0] * a[2], 1}, "K fastest, J slowest: pitch 81 (K's extent)"},
                         {b, c_order(b, 0, 0), "C order, 298 rows of 5 points"},
                         {c, c_order(c, 0, 0), "C order, 9 rows of 298 points"},
                         {c, c_order(c, 1, 30), "C order, K padded by 30: pitch 330"},
                         {a, {1, a[0] + 2, (a[0] + 2) * a[1]}, "Fortran order, I padded by 2: layout 2, pitch 11"},
                         {c, {1, c[0], c[0] * c[1]}, "Fortran order, 9 rows of 2 points: pitch 4"}}) {
    if (!lap3d_with_strides(t.stride, t.what, t.shape)) GTEST_SKIP() << "no GPU device found: run on a GPU machine";
  }
}
