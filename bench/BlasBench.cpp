// --blas pure against --blas vendor on the CPU: C = A @ B and y = A @ x on N x N float64 through
// sdfc's generated code (the embedding API), the MatMul node expanded into OpenMP maps (pure) or
// a CBLAS call (vendor: Debian's libblas, the reference BLAS unless OpenBLAS is installed as its
// alternative). Reported as time per call and, for the product, GFLOP/s (2 N^3 flops).
#include <benchmark/benchmark.h>

#include <vector>

#include "BlasProgram.h"
#include "sdfc/sdfc.h"

namespace {

void run(benchmark::State& state, bool matrix, const char* blas) {
  const std::int64_t n = state.range(0);
  sdfc::Options o;
  o.blas = blas;
  sdfc::Program p = sdfc::Program::compile_string(sdfc::bench::blas_program(matrix, false), o);
  std::size_t nn = static_cast<std::size_t>(n * n), nv = matrix ? nn : static_cast<std::size_t>(n);
  std::vector<double> a(nn), b(nv), c(nv);
  for (std::size_t i = 0; i < nn; ++i) a[i] = static_cast<double>(i % 13) * 0.25 - 1;
  for (std::size_t i = 0; i < nv; ++i) b[i] = static_cast<double>(i % 7) * 0.5 - 1;
  p.set_array("A", a.data(), a.size());
  p.set_array("B", b.data(), b.size());
  p.set_array("C", c.data(), c.size());
  p.set_value("N", n);
  p.call();  // init outside the timed loop
  for (auto _ : state) {
    p.call();
    benchmark::ClobberMemory();
  }
  double flops = 2.0 * static_cast<double>(n) * static_cast<double>(n) * (matrix ? static_cast<double>(n) : 1.0);
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops * static_cast<double>(state.iterations()) * 1e-9, benchmark::Counter::kIsRate);
}

void BM_GemmPure(benchmark::State& s) {
  run(s, true, "pure");
}
void BM_GemmVendor(benchmark::State& s) {
  run(s, true, "vendor");
}
void BM_GemvPure(benchmark::State& s) {
  run(s, false, "pure");
}
void BM_GemvVendor(benchmark::State& s) {
  run(s, false, "vendor");
}

BENCHMARK(BM_GemmPure)->Arg(128)->Arg(512)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_GemmVendor)->Arg(128)->Arg(512)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_GemvPure)->Arg(512)->Arg(4096)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_GemvVendor)->Arg(512)->Arg(4096)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
