// Whole-process `sdfc compile` timings: --emit-source of map chains (100 .. 4,000 maps, built with
// the builder API), a cached `sdfc compile -o` of an unchanged program, and --emit-source of every
// GT4Py corpus file as GT4Py writes it (program.sdfg, with its CPP metrics tasklets) with the
// tasklet check parsing (--no-cache) and remembered (the check passed before; Compile.h). Each
// iteration runs the sdfc binary as a user would (process start to exit); "check_pch" forgets the
// passed checks before each iteration but keeps the check's precompiled header (a new program). Usage: bench_compile
// [--benchmark_*] with SDFC_BIN pointing at the sdfc binary (default: the one in this build tree)
// and SDFC_CORPUS at the corpus (else the GT4Py benchmarks are not registered).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>

#include "compiler/Build.h"
#include "ir/Builder.h"
#include "ir/JsonWriter.h"

namespace fs = std::filesystem;

namespace {

std::string sdfc_bin() {
  const char* env = std::getenv("SDFC_BIN");
  return env ? env : SDFC_BIN_DEFAULT;
}

fs::path work_dir() {
  static fs::path dir = fs::temp_directory_path() / ("sdfc_bench_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

/// A chain of `maps` elementwise maps through transients; with `gpu`, GPU_Global arrays and
/// GPU_Device maps (for --target cuda).
std::string chain_file(int maps, bool gpu = false) {
  fs::path p = work_dir() / ((gpu ? "gpu_chain" : "chain") + std::to_string(maps) + ".sdfg");
  if (fs::exists(p)) return p.string();
  sdfc::SDFGBuilder b("chain");
  b.symbol("N");
  for (int i = 0; i <= maps; ++i)
    b.array("t" + std::to_string(i), sdfc::DType::Float64, {"N"}, i != 0 && i != maps,
            gpu ? sdfc::StorageType::GPU_Global : sdfc::StorageType::Default);
  auto s = b.state("s");
  std::map<std::string, int> outer;
  for (int i = 0; i < maps; ++i)
    s.mapped_tasklet("m" + std::to_string(i), {{"i", "0:N"}}, {{"a", "t" + std::to_string(i) + "[i]"}},
                     "b = a * 2.0 + 1.0", {{"b", "t" + std::to_string(i + 1) + "[i]"}},
                     gpu ? sdfc::ScheduleType::GPU_Device : sdfc::ScheduleType::Default, &outer);
  std::ofstream(p) << sdfc::write_sdfg(*b.build());
  return p.string();
}

/// `before`: run before each iteration, untimed.
void run_timed(benchmark::State& state, const std::vector<std::string>& argv,
               const std::function<void()>& before = nullptr) {
  for (auto _ : state) {
    if (before) before();
    auto t0 = std::chrono::steady_clock::now();
    auto r = sdfc::run_process(argv);
    auto t1 = std::chrono::steady_clock::now();
    if (r.status != 0) {
      state.SkipWithError(r.output.c_str());
      return;
    }
    state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count());
  }
}

void BM_EmitSource(benchmark::State& state) {
  int maps = static_cast<int>(state.range(0));
  std::string file = chain_file(maps);
  run_timed(state,
            {sdfc_bin(), "compile", file, "--emit-source", (work_dir() / ("src" + std::to_string(maps))).string()});
  state.counters["maps"] = maps;
}
BENCHMARK(BM_EmitSource)->Arg(100)->Arg(1000)->Arg(2000)->Arg(4000)->UseManualTime()->Unit(benchmark::kMillisecond);

/// The whole process emitting CUDA for a chain of GPU maps (issue 13's compile-speed target: 1,000
/// maps under 0.25 s).
void BM_EmitCudaSource(benchmark::State& state) {
  int maps = static_cast<int>(state.range(0));
  std::string file = chain_file(maps, true);
  run_timed(state, {sdfc_bin(), "compile", file, "--target", "cuda", "--emit-source",
                    (work_dir() / ("gpu_src" + std::to_string(maps))).string()});
  state.counters["maps"] = maps;
}
BENCHMARK(BM_EmitCudaSource)->Arg(1000)->UseManualTime()->Unit(benchmark::kMillisecond);

void BM_CachedCompile(benchmark::State& state) {
  std::string file = chain_file(100);
  std::string lib = (work_dir() / "libchain.so").string();
  auto warm = sdfc::run_process({sdfc_bin(), "compile", file, "-o", lib});  // fills the cache
  if (warm.status != 0) {
    state.SkipWithError(warm.output.c_str());
    return;
  }
  run_timed(state, {sdfc_bin(), "compile", file, "-o", lib});
}
BENCHMARK(BM_CachedCompile)->UseManualTime()->Unit(benchmark::kMillisecond);

/// How a GT4Py file's tasklet check runs: parsed from scratch (--no-cache), parsed with the
/// precompiled header of the check's headers (a unit the cache does not remember: a new program),
/// or remembered (the check passed in an earlier process).
enum class Check { Parsed, Precompiled, Remembered };

/// One GT4Py file's load, validate, passes, tasklet check and emit.
void BM_GT4PyEmitSource(benchmark::State& state, const std::string& file, Check check) {
  std::vector<std::string> argv = {sdfc_bin(), "compile", file, "--emit-source", (work_dir() / "gt4py").string()};
  if (check == Check::Parsed) argv.push_back("--no-cache");
  auto first = sdfc::run_process(argv);  // makes the precompiled header, remembers the check
  if (first.status != 0) {
    state.SkipWithError(first.output.c_str());
    return;
  }
  auto forget = [] {
    std::error_code ec;
    fs::remove_all(work_dir() / "cache" / "checks", ec);
  };
  run_timed(state, argv, check == Check::Precompiled ? std::function<void()>(forget) : nullptr);
}

}  // namespace

int main(int argc, char** argv) {
  // A private build cache: the remembered checks are this run's own.
  setenv("SDFC_CACHE_DIR", (work_dir() / "cache").c_str(), 1);
  if (const char* corpus = std::getenv("SDFC_CORPUS")) {
    std::vector<fs::path> files;
    for (auto& e : fs::directory_iterator(corpus))
      if (e.path().filename().string().rfind("gt4py_", 0) == 0 && fs::exists(e.path() / "program.sdfg"))
        files.push_back(e.path() / "program.sdfg");
    std::sort(files.begin(), files.end());
    for (auto& f : files)
      for (auto [check, name] : {std::pair{Check::Parsed, "check_parsed"}, std::pair{Check::Precompiled, "check_pch"},
                                 std::pair{Check::Remembered, "check_remembered"}})
        benchmark::RegisterBenchmark(("BM_GT4PyEmitSource/" + f.parent_path().filename().string() + "/" + name).c_str(),
                                     BM_GT4PyEmitSource, f.string(), check)
            ->UseManualTime()
            ->Unit(benchmark::kMillisecond);
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  fs::remove_all(work_dir());
  return 0;
}
