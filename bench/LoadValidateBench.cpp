// Load + validate of synthetic SDFGs with 100, 1,000 and 10,000 map scopes (a chain of maps
// through transients, built with the builder API and serialized as DaCe JSON).
#include <benchmark/benchmark.h>

#include "ir/Builder.h"
#include "ir/JsonReader.h"
#include "ir/JsonWriter.h"
#include "ir/Validate.h"

namespace {

std::string chain_json(int maps) {
  sdfc::SDFGBuilder b("chain");
  b.symbol("N");
  for (int i = 0; i <= maps; ++i) b.array("t" + std::to_string(i), sdfc::DType::Float64, {"N"}, i != 0 && i != maps);
  auto s = b.state("s");
  std::map<std::string, int> outer;
  for (int i = 0; i < maps; ++i) {
    std::string in = "t" + std::to_string(i), out = "t" + std::to_string(i + 1);
    s.mapped_tasklet("m" + std::to_string(i), {{"i", "0:N"}}, {{"a", in + "[i]"}}, "b = a * 2.0 + 1.0",
                     {{"b", out + "[i]"}}, sdfc::ScheduleType::Default, &outer);
  }
  return sdfc::write_sdfg(*b.build());
}

void BM_LoadValidate(benchmark::State& state) {
  std::string json = chain_json(static_cast<int>(state.range(0)));
  std::size_t nodes = 0;
  for (auto _ : state) {
    auto sdfg = sdfc::read_sdfg(json, "bench");
    auto diags = sdfc::validate(*sdfg, "bench");
    if (!diags.empty()) state.SkipWithError(diags[0].str().c_str());
    nodes = sdfg->root.blocks[0]->nodes.size();
    benchmark::DoNotOptimize(diags);
  }
  state.counters["nodes"] = static_cast<double>(nodes);
  state.counters["json_MB"] = static_cast<double>(json.size()) / 1e6;
}
BENCHMARK(BM_LoadValidate)->Arg(100)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
