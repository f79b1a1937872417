// The Clang tasklet check (clang_tools/TaskletCheck.h) on programs of 10, 100 and 1,000 small CPP
// tasklets (a chain of maps through transients, one tasklet each): one parse of one translation
// unit per program. Target: 1,000 tasklets in under 2 s on one core.
#include <benchmark/benchmark.h>

#include "clang_tools/TaskletCheck.h"
#include "compiler/Compile.h"
#include "ir/Builder.h"

namespace {

std::unique_ptr<sdfc::SDFG> chain_of_cpp_tasklets(int tasklets) {
  sdfc::SDFGBuilder b("chain");
  b.symbol("N", sdfc::DType::Int64);
  for (int i = 0; i <= tasklets; ++i)
    b.array("t" + std::to_string(i), sdfc::DType::Float64, {"N"}, i != 0 && i != tasklets);
  auto s = b.state("s");
  std::map<std::string, int> outer;
  for (int i = 0; i < tasklets; ++i) {
    std::string in = "t" + std::to_string(i), out = "t" + std::to_string(i + 1);
    s.mapped_tasklet(
        "m" + std::to_string(i), {{"i", "0:N"}}, {{"a", in + "[i]"}},
        "double t = std::sqrt(std::fabs(a)) + static_cast<double>(i % 7);\nb = std::min(t, 1e6) * 2.0 + 1.0;",
        {{"b", out + "[i]"}}, sdfc::ScheduleType::Default, &outer);
  }
  for (auto& n : s.state().nodes)
    if (n->kind == sdfc::NodeKind::Tasklet) n->code.language = sdfc::Language::CPP;
  auto sdfg = b.build();
  sdfc::run_pipeline(*sdfg, sdfc::CompileOptions{});
  return sdfg;
}

void BM_TaskletCheck(benchmark::State& state) {
  auto sdfg = chain_of_cpp_tasklets(static_cast<int>(state.range(0)));
  std::string include = sdfc::runtime_include_dir();
  for (auto _ : state) {
    auto r = sdfc::check_cpp_tasklets(*sdfg, sdfc::CompileOptions{}, "bench", include);
    if (!r.errors.empty()) state.SkipWithError(r.errors[0].str().c_str());
    benchmark::DoNotOptimize(r);
  }
  state.counters["tasklets"] = static_cast<double>(state.range(0));
}
BENCHMARK(BM_TaskletCheck)->Arg(10)->Arg(100)->Arg(1000)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
