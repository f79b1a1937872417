// A 2D 5-point stencil over 4096 x 4096 float64, and GT4Py's 3D Laplacian (the corpus file
// gt4py_lap3d_s/program_nometrics.sdfg as GT4Py wrote it) over 128 x 128 x 80 float64: sdfc-generated
// CPU code (through the embedding API) against hand-written OpenMP loop nests compiled with the same
// flags (-O3 -fopenmp). The GT4Py pair needs $SDFC_CORPUS (else it is skipped with a message).
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "ir/Builder.h"
#include "ir/JsonWriter.h"
#include "sdfc/sdfc.h"

namespace {

constexpr int kN = 4096;

std::vector<double>& input() {
  static std::vector<double> a = [] {
    std::vector<double> v(static_cast<std::size_t>(kN) * kN);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i % 97) * 0.01;
    return v;
  }();
  return a;
}

void hand_written(const double* __restrict__ a, double* __restrict__ b, int n) {
#pragma omp parallel for
  for (int i = 1; i < n - 1; ++i)
    for (int j = 1; j < n - 1; ++j)
      b[i * n + j] =
          0.2 * (a[i * n + j] + a[(i - 1) * n + j] + a[(i + 1) * n + j] + a[i * n + j - 1] + a[i * n + j + 1]);
}

void BM_HandWrittenOpenMP(benchmark::State& state) {
  std::vector<double> b(input().size());
  for (auto _ : state) {
    hand_written(input().data(), b.data(), kN);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * 2 * static_cast<int64_t>(b.size() * sizeof(double)));
}
BENCHMARK(BM_HandWrittenOpenMP)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_SdfcGenerated(benchmark::State& state) {
  sdfc::SDFGBuilder sb("stencil");
  sb.symbol("N").array("A", sdfc::DType::Float64, {"N", "N"}).array("B", sdfc::DType::Float64, {"N", "N"});
  sb.state("s").mapped_tasklet(
      "st", {{"i", "1:N - 1"}, {"j", "1:N - 1"}},
      {{"c", "A[i, j]"}, {"n", "A[i - 1, j]"}, {"s", "A[i + 1, j]"}, {"w", "A[i, j - 1]"}, {"e", "A[i, j + 1]"}},
      "o = 0.2 * (c + n + s + w + e)", {{"o", "B[i, j]"}});
  sdfc::Program p = sdfc::Program::compile_string(sdfc::write_sdfg(*sb.build()));
  std::vector<double> b(input().size());
  p.set_array("A", input().data(), input().size());
  p.set_array("B", b.data(), b.size());
  p.set_value("N", kN);
  p.call();  // init outside the timed loop
  for (auto _ : state) {
    p.call();
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * 2 * static_cast<int64_t>(b.size() * sizeof(double)));
}
BENCHMARK(BM_SdfcGenerated)->Unit(benchmark::kMillisecond)->UseRealTime();

// ---- GT4Py's 3D Laplacian ------------------------------------------------------------------------

constexpr int kNx = 128, kNy = 128, kNz = 80;
constexpr double kInvH2 = 0.390625;

std::vector<double>& field_u() {
  static std::vector<double> u = [] {
    std::vector<double> v(static_cast<std::size_t>(kNx) * kNy * kNz);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i % 101) * 0.013 - 0.6;
    return v;
  }();
  return u;
}

/// GT4Py's layout: C order, strides (ny * nz, nz, 1); the domain is the interior.
void lap3d_hand_written(const double* __restrict__ u, double* __restrict__ lap, double inv_h2) {
  constexpr long si = static_cast<long>(kNy) * kNz, sj = kNz;
#pragma omp parallel for
  for (int i = 1; i < kNx - 1; ++i)
    for (int j = 1; j < kNy - 1; ++j)
      for (int k = 1; k < kNz - 1; ++k) {
        long c = i * si + j * sj + k;
        lap[c] = (u[c - si] + u[c + si] + u[c - sj] + u[c + sj] + u[c - 1] + u[c + 1] - 6.0 * u[c]) * inv_h2;
      }
}

void BM_GT4PyLap3dHandWrittenOpenMP(benchmark::State& state) {
  std::vector<double> lap(field_u().size());
  for (auto _ : state) {
    lap3d_hand_written(field_u().data(), lap.data(), kInvH2);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * 2 * static_cast<int64_t>(lap.size() * sizeof(double)));
}
BENCHMARK(BM_GT4PyLap3dHandWrittenOpenMP)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_GT4PyLap3dSdfc(benchmark::State& state) {
  const char* corpus = std::getenv("SDFC_CORPUS");
  if (!corpus) {
    state.SkipWithError("set SDFC_CORPUS to the corpus folder (gt4py_lap3d_s/program_nometrics.sdfg)");
    return;
  }
  sdfc::Program p = sdfc::Program::compile_file(std::string(corpus) + "/gt4py_lap3d_s/program_nometrics.sdfg");
  std::vector<double> lap(field_u().size()), expected(field_u().size());
  p.set_array("u", field_u().data(), field_u().size());
  p.set_array("lap", lap.data(), lap.size());
  // GT4Py passes sizes, strides and range starts as int32 symbols, inv_h2 as a float64 symbol.
  std::map<std::string, double> values = {
      {"nx", kNx},       {"ny", kNy},    {"nz", kNz}, {"inv_h2", kInvH2}, {"I_stride", kNy * kNz},
      {"J_stride", kNz}, {"K_stride", 1}};
  for (auto& a : p.arguments()) {
    if (a.kind == "array") continue;
    std::string key = a.name;
    for (const char* field : {"__u_", "__lap_"})
      if (key.rfind(field, 0) == 0) key = key.substr(std::string(field).size());
    if (key.find("_range_0") != std::string::npos)
      p.set_value(a.name, 0);
    else if (values.count(key))
      p.set_value(a.name, values.at(key));
    else
      p.set_value(a.name, std::int64_t{0});
  }
  p.call();  // init outside the timed loop; and the result must be the hand-written one's
  lap3d_hand_written(field_u().data(), expected.data(), kInvH2);
  for (std::size_t c = 0; c < lap.size(); ++c)
    if (std::abs(lap[c] - expected[c]) > 1e-12 * (1.0 + std::abs(expected[c]))) {
      state.SkipWithError(("sdfc's result differs from the hand-written loop at element " + std::to_string(c)).c_str());
      return;
    }
  for (auto _ : state) {
    p.call();
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * 2 * static_cast<int64_t>(lap.size() * sizeof(double)));
}
BENCHMARK(BM_GT4PyLap3dSdfc)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
