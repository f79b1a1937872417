// GPU benchmarks on the H200 (CUDA events and host clocks, one run, ratios in the same process):
//  1. bandwidth: an sdfc-generated elementwise kernel (b = 2a + 1) and a 2D 5-point stencil over a
//     few GB, as minimum bytes moved over time, against cudaMemcpy device-to-device (bytes read +
//     written over its time);
//  2. per-call overhead: a program of K = 10 small kernels (chain of maps, N = 1,024) called in a
//     loop, against K empty-kernel launches plus one stream synchronization (median of batches
//     interleaved across the variants);
//  3. DaCe's reference point: the same 10-map chain with 9 transients at N = 1,024 and 16,777,216;
//  4. several streams (fork-join, entry/exit cost);
//  5. GT4Py's 3D Laplacian as GT4Py wrote it (corpus gt4py_lap3d_s/program_gpu.sdfg, $SDFC_CORPUS)
//     at 512 x 512 x 80 float64, calls queued on a stream and timed with CUDA events, against
//     cudaMemcpy D2D bandwidth;
//  6. --blas pure against --blas vendor (cuBLAS): C = A @ B and y = A @ x on N x N float64 device
//     data, calls queued on a stream and timed with CUDA events;
//  7. graph mode (--gpu-graph): the chain of 10 (and 100) maps at N = 1,024, blocking and on a
//     caller's stream, against a hand-built graph of as many empty kernels (replay + synchronize,
//     and bare replays), with pointers swapped every call, with and without dependent launch, and
//     at N = 16,777,216 against stream mode;
//  8. schedules across states: two dependent states of 4 small kernels with --gpu-streams 4,
//     chained (no join between the states) against joined after each state (tests/TwoStages.h);
//  9. a time loop over two such states, --gpu-streams 4: streams carried across iterations against
//     joined into stream 0 at every iteration's end (tests/TwoStages.h, loop_stages);
// 10. a chain of 10 maps made with DaCe's API (bench/data/dace_chain10_b128.sdfg, block size 128)
//     from 1,024 to 16,777,216 points: dependent launch (the default) against plain launches and
//     against --fuse-maps, calls queued on a caller's stream, CUDA events, median of 5 interleaved
//     rounds.
// Build: cmake -DSDFC_GPU_BENCH=ON (needs nvcc). Run: bench_gpu (prints a table);
// SDFC_GPU_BENCH_SECTIONS=5 (or "1,5") runs only those sections (the D2D reference always runs).
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "BlasProgram.h"
#include "TwoStages.h"
#include "ir/Builder.h"
#include "ir/JsonWriter.h"
#include "sdfc/sdfc.h"

namespace {

__global__ void empty_kernel() {}

/// The chain's own work, written by hand: b = 2a + 1 over n elements.
__global__ void axpb_kernel(const double* __restrict__ a, double* __restrict__ b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) b[i] = a[i] * 2.0 + 1.0;
}

// Hand-written 5-point stencils: what the hardware allows, for comparison with generated code.
// (a) one point per thread, 32-bit indices;
__global__ void __launch_bounds__(256) stencil_i32(const double* __restrict__ A, double* __restrict__ B, int n) {
  int j = blockIdx.x * blockDim.x + threadIdx.x + 1, i = blockIdx.y * blockDim.y + threadIdx.y + 1;
  if (i >= n - 1 || j >= n - 1) return;
  int c = i * n + j;
  B[c] = 0.2 * (A[c] + A[c - n] + A[c + n] + A[c - 1] + A[c + 1]);
}
// (b) R consecutive rows per thread, the column kept in registers (each A element loaded once
// per thread from the cache instead of three times).
template <int R>
__global__ void __launch_bounds__(256) stencil_rows(const double* __restrict__ A, double* __restrict__ B, int n) {
  int j = blockIdx.x * blockDim.x + threadIdx.x + 1, i0 = (blockIdx.y * blockDim.y + threadIdx.y) * R + 1;
  if (j >= n - 1 || i0 >= n - 1) return;
  std::size_t c = static_cast<std::size_t>(i0) * n + j;
  double up = A[c - n], mid = A[c];
#pragma unroll
  for (int r = 0; r < R; ++r) {
    if (i0 + r >= n - 1) return;
    double down = A[c + n];
    B[c] = 0.2 * (mid + up + down + A[c - 1] + A[c + 1]);
    up = mid;
    mid = down;
    c += n;
  }
}

#define CHECK(x)                                                          \
  do {                                                                    \
    cudaError_t e = (x);                                                  \
    if (e != cudaSuccess) {                                               \
      std::fprintf(stderr, "%s failed: %s\n", #x, cudaGetErrorString(e)); \
      std::exit(1);                                                       \
    }                                                                     \
  } while (0)

/// Microseconds per call of `p` queued on caller's stream `cs` (CUDA events around `calls` calls,
/// after one warm-up call).
double queued_call_us(sdfc::Program& p, cudaStream_t cs, int calls) {
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  p.set_external_stream(cs);
  p.call();
  CHECK(cudaEventRecord(e0, cs));
  for (int r = 0; r < calls; ++r) p.call();
  CHECK(cudaEventRecord(e1, cs));
  CHECK(cudaEventSynchronize(e1));
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, e0, e1));
  p.set_external_stream(nullptr);
  CHECK(cudaEventDestroy(e0));
  CHECK(cudaEventDestroy(e1));
  return ms / calls * 1e3;
}

/// Whether to run section k (1-7 above): all, unless $SDFC_GPU_BENCH_SECTIONS lists some ("5", "1,5").
bool run_section(int k) {
  const char* only = std::getenv("SDFC_GPU_BENCH_SECTIONS");
  if (!only || !*only) return true;
  return ("," + std::string(only) + ",").find("," + std::to_string(k) + ",") != std::string::npos;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// A chain of `maps` elementwise maps on GPU arrays (device pointers as arguments), through
/// GPU_Global transients (or, with `transients` false, through arguments: nothing to allocate).
std::string chain(int maps, bool transients = true) {
  sdfc::SDFGBuilder b("chain");
  b.symbol("N");
  for (int i = 0; i <= maps; ++i)
    b.array("t" + std::to_string(i), sdfc::DType::Float64, {"N"}, transients && i != 0 && i != maps,
            sdfc::StorageType::GPU_Global);
  auto s = b.state("s");
  std::map<std::string, int> outer;
  for (int i = 0; i < maps; ++i)
    s.mapped_tasklet("m" + std::to_string(i), {{"i", "0:N"}}, {{"a", "t" + std::to_string(i) + "[i]"}},
                     "b = a * 2.0 + 1.0", {{"b", "t" + std::to_string(i + 1) + "[i]"}}, sdfc::ScheduleType::GPU_Device,
                     &outer);
  return sdfc::write_sdfg(*b.build());
}

std::string stencil(std::vector<int> block = {}) {
  sdfc::SDFGBuilder b("stencil");
  b.symbol("N")
      .array("A", sdfc::DType::Float64, {"N", "N"}, false, sdfc::StorageType::GPU_Global)
      .array("B", sdfc::DType::Float64, {"N", "N"}, false, sdfc::StorageType::GPU_Global);
  b.state("s").mapped_tasklet(
      "st", {{"i", "1:N - 1"}, {"j", "1:N - 1"}},
      {{"c", "A[i, j]"}, {"n", "A[i - 1, j]"}, {"s", "A[i + 1, j]"}, {"w", "A[i, j - 1]"}, {"e", "A[i, j + 1]"}},
      "o = 0.2 * (c + n + s + w + e)", {{"o", "B[i, j]"}}, sdfc::ScheduleType::GPU_Device);
  auto sdfg = b.build();
  if (!block.empty()) sdfg->root.blocks[0]->node(0).map.gpu_block_size = block;
  return sdfc::write_sdfg(*sdfg);
}

/// Four independent kernels of 2 blocks each (a CPP tasklet loops 20,000 times per element): each
/// is far too small to fill the GPU, so several streams can run them side by side.
std::string four_small_kernels() {
  sdfc::SDFGBuilder b("four_small");
  b.symbol("N");
  for (int k = 0; k < 4; ++k) {
    b.array("x" + std::to_string(k), sdfc::DType::Float64, {"N"}, false, sdfc::StorageType::GPU_Global);
    b.array("y" + std::to_string(k), sdfc::DType::Float64, {"N"}, false, sdfc::StorageType::GPU_Global);
  }
  auto s = b.state("s");
  for (int k = 0; k < 4; ++k) {
    std::string ks = std::to_string(k);
    s.mapped_tasklet("work" + ks, {{"i", "0:N"}}, {{"v", "x" + ks + "[i]"}}, "o = v", {{"o", "y" + ks + "[i]"}},
                     sdfc::ScheduleType::GPU_Device);
  }
  auto sdfg = b.build();
  for (auto& n : sdfg->root.blocks[0]->nodes)
    if (n->kind == sdfc::NodeKind::Tasklet) {
      n->code.language = sdfc::Language::CPP;
      n->code.code = "double a = v; for (int r = 0; r < 20000; ++r) a = a * 1.0000001 + 1e-9; o = a;";
    }
  return sdfc::write_sdfg(*sdfg);
}

/// One elementwise kernel on device arguments.
std::string one_kernel() {
  sdfc::SDFGBuilder b("one_kernel");
  b.symbol("N")
      .array("x", sdfc::DType::Float64, {"N"}, false, sdfc::StorageType::GPU_Global)
      .array("y", sdfc::DType::Float64, {"N"}, false, sdfc::StorageType::GPU_Global);
  b.state("s").mapped_tasklet("k", {{"i", "0:N"}}, {{"a", "x[i]"}}, "b = a * 2.0 + 1.0", {{"b", "y[i]"}},
                              sdfc::ScheduleType::GPU_Device);
  return sdfc::write_sdfg(*b.build());
}

}  // namespace

int main() {
  std::setvbuf(stdout, nullptr, _IONBF, 0);
  sdfc::Options cuda;
  cuda.target = "cuda";
  // ---- 1. bandwidth -------------------------------------------------------------------------
  const std::size_t n = std::size_t(1) << 28;  // 2 GiB per float64 array
  double *a, *b;
  CHECK(cudaMalloc(&a, n * 8));
  CHECK(cudaMalloc(&b, n * 8));
  CHECK(cudaMemset(a, 0, n * 8));
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  float ms = 0;
  CHECK(cudaMemcpy(b, a, n * 8, cudaMemcpyDeviceToDevice));
  CHECK(cudaEventRecord(e0));
  for (int r = 0; r < 10; ++r) CHECK(cudaMemcpy(b, a, n * 8, cudaMemcpyDeviceToDevice));
  CHECK(cudaEventRecord(e1));
  CHECK(cudaEventSynchronize(e1));
  CHECK(cudaEventElapsedTime(&ms, e0, e1));
  double memcpy_bw = 10 * 2.0 * n * 8 / (ms / 1e3) / 1e9;
  std::printf("| cudaMemcpy D2D, 2 GiB | %.1f GB/s (read + written) | 1.00 |\n", memcpy_bw);

  auto t0 = std::chrono::steady_clock::now();
  const int rounds = 9, batch = 300;  // host-timed batches (sections 2 and 4)
  if (run_section(1)) {
    sdfc::Program ew = sdfc::Program::compile_string(chain(1, ""), cuda);
    ew.set_array("t0", a, n);
    ew.set_array("t1", b, n);
    ew.set_value("N", static_cast<std::int64_t>(n));
    ew.call();
    t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < 10; ++r) ew.call();  // each call returns after its work (no external stream)
    double ew_s = seconds_since(t0) / 10;
    double ew_bw = 2.0 * n * 8 / ew_s / 1e9;
    std::printf("| sdfc elementwise b = 2a + 1, 2^28 float64 | %.1f GB/s | %.2f |\n", ew_bw, ew_bw / memcpy_bw);

    const std::size_t side = 16384;  // 2 GiB per array
    sdfc::Program st = sdfc::Program::compile_string(stencil(), cuda);
    st.set_array("A", a, side * side);
    st.set_array("B", b, side * side);
    st.set_value("N", static_cast<std::int64_t>(side));
    st.call();
    t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < 10; ++r) st.call();
    double st_s = seconds_since(t0) / 10;
    double st_bw = 2.0 * side * side * 8 / st_s / 1e9;
    std::printf("| sdfc 2D 5-point stencil, 16384^2 float64 | %.1f GB/s | %.2f |\n", st_bw, st_bw / memcpy_bw);

    for (std::vector<int> blk : {std::vector<int>{64, 4, 1}, {128, 2, 1}, {256, 1, 1}, {32, 16, 1}, {64, 8, 1}}) {
      sdfc::Program sb = sdfc::Program::compile_string(stencil(blk), cuda);
      sb.set_array("A", a, side * side);
      sb.set_array("B", b, side * side);
      sb.set_value("N", static_cast<std::int64_t>(side));
      sb.call();
      t0 = std::chrono::steady_clock::now();
      for (int r = 0; r < 10; ++r) sb.call();
      double bs = seconds_since(t0) / 10;
      double bw = 2.0 * side * side * 8 / bs / 1e9;
      std::printf("| stencil with block %dx%dx%d | %.1f GB/s | %.2f |\n", blk[0], blk[1], blk[2], bw, bw / memcpy_bw);
    }
    {
      auto time_kernel = [&](const char* label, auto launch) {
        launch();
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaEventRecord(e0));
        for (int r = 0; r < 10; ++r) launch();
        CHECK(cudaEventRecord(e1));
        CHECK(cudaEventSynchronize(e1));
        float kms = 0;
        CHECK(cudaEventElapsedTime(&kms, e0, e1));
        double bw = 10 * 2.0 * side * side * 8 / (kms / 1e3) / 1e9;
        std::printf("| hand-written stencil, %s | %.1f GB/s | %.2f |\n", label, bw, bw / memcpy_bw);
      };
      int ns = static_cast<int>(side);
      time_kernel("one point per thread, 64 x 4, int32 indices",
                  [&] { stencil_i32<<<dim3((ns - 2 + 63) / 64, (ns - 2 + 3) / 4), dim3(64, 4)>>>(a, b, ns); });
      time_kernel("4 rows per thread, 64 x 4",
                  [&] { stencil_rows<4><<<dim3((ns - 2 + 63) / 64, (ns - 2 + 15) / 16), dim3(64, 4)>>>(a, b, ns); });
      time_kernel("8 rows per thread, 128 x 2",
                  [&] { stencil_rows<8><<<dim3((ns - 2 + 127) / 128, (ns - 2 + 15) / 16), dim3(128, 2)>>>(a, b, ns); });
    }
  }
  if (run_section(2)) {
    // ---- 2. per-call overhead, and the memory modes ---------------------------------------------
    // The chain of k kernels through k - 1 transients in each mode, beside the same chain through
    // argument arrays (nothing to allocate) and k empty launches + one stream synchronization.
    const int k = 10;

    // Host-side timings drift by 10-20% between runs on a shared machine: every variant (and the
    // empty-launch baseline) is timed in batches interleaved round by round, and the median batch
    // is reported, so the ratios compare like with like.
    auto empty_batch = [&] {
      for (int i = 0; i < k; ++i) empty_kernel<<<1, 1>>>();
      CHECK(cudaStreamSynchronize(nullptr));
    };
    empty_batch();
    std::vector<double*> args(k + 1);
    for (auto& p : args) CHECK(cudaMalloc(&p, 16777216 * 8));
    struct Variant {
      const char* label;
      const char* mode;
      bool transients;
    };
    const Variant variants[] = {{"no transients (11 argument arrays)", "", false},
                                {"9 transients, as declared (scoped)", "", true},
                                {"9 transients, --transients scoped", "scoped", true},
                                {"9 transients, --transients persistent", "persistent", true},
                                {"9 transients, --transients pool", "pool", true},
                                {"9 transients, --transients external", "external", true}};
    const std::size_t nv = sizeof variants / sizeof variants[0];
    std::vector<sdfc::Program> programs;
    auto bind = [&](std::size_t v, std::size_t count) {
      sdfc::Program& p = programs[v];
      for (int i = 0; i <= k; ++i)
        if (!variants[v].transients || i == 0 || i == k)
          p.set_array("t" + std::to_string(i), args[static_cast<std::size_t>(i)], count);
      p.set_value("N", static_cast<std::int64_t>(count));
      p.call();
    };
    for (std::size_t v = 0; v < nv; ++v) {
      sdfc::Options o = cuda;
      o.transients = variants[v].mode;
      programs.push_back(sdfc::Program::compile_string(chain(k, variants[v].transients), o));
      bind(v, 1024);
    }
    // times[0]: empty launches; times[1 + v]: variant v (microseconds per call, one entry per round).
    std::vector<std::vector<double>> times(nv + 1);
    for (int round = 0; round < rounds; ++round)
      for (std::size_t v = 0; v <= nv; ++v) {
        t0 = std::chrono::steady_clock::now();
        for (int r = 0; r < batch; ++r) v == 0 ? empty_batch() : programs[v - 1].call();
        times[v].push_back(seconds_since(t0) / batch * 1e6);
      }
    double empty_us = median(times[0]);
    std::printf(
        "| program (10 kernels) | per call N = 1,024 (median of %d batches of %d) | vs empty launches + sync (%.1f us) "
        "| "
        "vs no transients | per call N = 16,777,216 |\n",
        rounds, batch, empty_us);
    double base_small = median(times[1]), base_big = 0;
    for (std::size_t v = 0; v < nv; ++v) {
      bind(v, 16777216);
      t0 = std::chrono::steady_clock::now();
      for (int r = 0; r < 20; ++r) programs[v].call();
      double big_ms = seconds_since(t0) / 20 * 1e3;
      if (v == 0) base_big = big_ms;
      double small_us = median(times[v + 1]);
      std::printf("| %s | %.1f us | %.2f x | %.2f x | %.3f ms (%.2f x) |\n", variants[v].label, small_us,
                  small_us / empty_us, small_us / base_small, big_ms, big_ms / base_big);
    }
    programs.clear();
    std::printf("DaCe 2.0.0a6 on the H200 (issue #4): 85-89 us at N = 1,024 and 2.2-2.8 ms at N = 16,777,216.\n");
    for (auto& p : args) CHECK(cudaFree(p));
  }
  if (run_section(4)) {
    // ---- 4. several streams: a fork-join of 4 small kernels, and the entry/exit cost ---------------
    {
      const int m = 512;  // 2 blocks of 256 threads per kernel
      double* bufs[8];
      for (auto& p : bufs) CHECK(cudaMalloc(&p, m * 8));
      double fj[2] = {0, 0};
      int idx = 0;
      for (int streams : {0, 4}) {
        sdfc::Options o = cuda;
        o.gpu_streams = streams;
        sdfc::Program p = sdfc::Program::compile_string(four_small_kernels(), o);
        for (int k = 0; k < 4; ++k) {
          p.set_array("x" + std::to_string(k), bufs[k], m);
          p.set_array("y" + std::to_string(k), bufs[4 + k], m);
        }
        p.set_value("N", m);
        p.call();
        t0 = std::chrono::steady_clock::now();
        for (int r = 0; r < 50; ++r) p.call();
        fj[idx++] = seconds_since(t0) / 50 * 1e6;
      }
      std::printf(
          "| fork-join of 4 small kernels, per call | --gpu-streams 0: %.1f us | --gpu-streams 4: %.1f us | speedup "
          "%.2f "
          "x (target >= 2.5) |\n",
          fj[0], fj[1], fj[0] / fj[1]);
      std::vector<sdfc::Program> ones;
      for (int streams : {0, 1, 4}) {
        sdfc::Options o = cuda;
        o.gpu_streams = streams;
        ones.push_back(sdfc::Program::compile_string(one_kernel(), o));
        ones.back().set_array("x", bufs[0], m);
        ones.back().set_array("y", bufs[1], m);
        ones.back().set_value("N", m);
        ones.back().call();
      }
      std::vector<std::vector<double>> one_times(3);
      for (int round = 0; round < rounds; ++round)
        for (std::size_t v = 0; v < 3; ++v) {
          t0 = std::chrono::steady_clock::now();
          for (int r = 0; r < batch; ++r) ones[v].call();
          one_times[v].push_back(seconds_since(t0) / batch * 1e6);
        }
      double one[3] = {median(one_times[0]), median(one_times[1]), median(one_times[2])};
      std::printf(
          "| one-kernel program, per call | --gpu-streams 0: %.1f us | 1: %.1f us (+%.1f) | 4: %.1f us (+%.1f; target "
          "<= "
          "+5 us) |\n",
          one[0], one[1], one[1] - one[0], one[2], one[2] - one[0]);
      for (auto& p : bufs) CHECK(cudaFree(p));
    }
  }
  // ---- 5. GT4Py's 3D Laplacian -----------------------------------------------------------------
  const char* corpus = std::getenv("SDFC_CORPUS");
  if (corpus && run_section(5)) {
    const int nx = 512, ny = 512, nz = 80;
    const std::size_t cells = std::size_t(nx) * ny * nz;
    double *u, *lap, *timer;
    CHECK(cudaMalloc(&u, cells * 8));
    CHECK(cudaMalloc(&lap, cells * 8));
    CHECK(cudaMalloc(&timer, 8));
    CHECK(cudaMemset(u, 0, cells * 8));
    // The default (programmatic dependent launch) and plain launches, to see what the launch costs.
    sdfc::Options plain_launch = cuda;
    plain_launch.dependent_launch = false;
    const std::string lap3d = std::string(corpus) + "/gt4py_lap3d_s/program_gpu.sdfg";
    struct Build {
      const char* label;
      sdfc::Program program;
    };
    Build builds[] = {{"", sdfc::Program::compile_file(lap3d, cuda)},
                      {", --no-dependent-launch", sdfc::Program::compile_file(lap3d, plain_launch)}};
    for (Build& b : builds) {
      b.program.set_array("u", u, cells);
      b.program.set_array("lap", lap, cells);
      b.program.set_array("gt_compute_time", timer, 1);
    }
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    const int calls = 50;
    // The same bytes as one copy, for the size-for-size comparison.
    CHECK(cudaEventRecord(e0, s));
    for (int r = 0; r < calls; ++r) CHECK(cudaMemcpyAsync(lap, u, cells * 8, cudaMemcpyDeviceToDevice, s));
    CHECK(cudaEventRecord(e1, s));
    CHECK(cudaEventSynchronize(e1));
    float copy_ms = 0;
    CHECK(cudaEventElapsedTime(&copy_ms, e0, e1));
    double copy_bw = calls * 2.0 * cells * 8 / (copy_ms / 1e3) / 1e9;
    // GT4Py passes sizes, strides and range starts as int32 symbols. On the GPU it allocates fields
    // horizontal dimensions first (K slowest, J fastest), the layout its GPU map order [K, I, J]
    // with J along threadIdx.x is made for; in C order (K fastest) neighbouring threads read 80
    // elements apart.
    struct Layout {
      const char* label;
      double si, sj, sk;
    };
    for (Build& b : builds) {
      sdfc::Program& p = b.program;
      for (Layout l : {Layout{"GT4Py's GPU layout (J fastest)", double(ny), 1, double(nx) * ny},
                       Layout{"C order (K fastest)", double(ny) * nz, double(nz), 1}}) {
        for (auto& arg : p.arguments()) {
          const std::string& a = arg.name;
          if (arg.kind == "array") continue;
          auto has = [&](const char* part) { return a.find(part) != std::string::npos; };
          double v = a == "nx"         ? nx
                     : a == "ny"       ? ny
                     : a == "nz"       ? nz
                     : a == "inv_h2"   ? 0.390625
                     : has("I_stride") ? l.si
                     : has("J_stride") ? l.sj
                     : has("K_stride") ? l.sk
                                       : 0;  // range starts 0, gt_metrics_level 0
          p.set_value(a, v);
        }
        double us = queued_call_us(p, s, calls);
        double lap_bw = 2.0 * cells * 8 / (us / 1e6) / 1e9;
        std::printf(
            "| GT4Py lap3d program_gpu.sdfg, 512 x 512 x 80 float64, %s%s | %.1f us per call | %.1f GB/s | %.2f of 2 "
            "GiB D2D | %.2f of a D2D copy of the same size (%.1f GB/s) |\n",
            l.label, b.label, us, lap_bw, lap_bw / memcpy_bw, lap_bw / copy_bw, copy_bw);
      }
    }
    CHECK(cudaStreamDestroy(s));
    for (double* d : {u, lap, timer}) CHECK(cudaFree(d));
  } else {
    std::printf("GT4Py lap3d: skipped (set SDFC_CORPUS to the corpus folder)\n");
  }
  if (run_section(6)) {
    // ---- 6. BLAS: pure expansion against cuBLAS ---------------------------------------------------
    cudaStream_t bs;
    CHECK(cudaStreamCreateWithFlags(&bs, cudaStreamNonBlocking));
    struct Case {
      bool matrix;
      std::int64_t n;
      int calls;
    };
    for (Case c : {Case{true, 256, 50}, Case{true, 1024, 10}, Case{true, 2048, 3}, Case{false, 4096, 100},
                   Case{false, 16384, 20}}) {
      std::size_t nn = static_cast<std::size_t>(c.n * c.n), nv = c.matrix ? nn : static_cast<std::size_t>(c.n);
      double *A, *B, *C;
      CHECK(cudaMalloc(&A, nn * 8));
      CHECK(cudaMalloc(&B, nv * 8));
      CHECK(cudaMalloc(&C, nv * 8));
      std::vector<double> host(nn);
      for (std::size_t i = 0; i < nn; ++i) host[i] = static_cast<double>(i % 13) * 0.25 - 1;
      CHECK(cudaMemcpy(A, host.data(), nn * 8, cudaMemcpyHostToDevice));
      CHECK(cudaMemcpy(B, host.data(), nv * 8, cudaMemcpyHostToDevice));
      double flops = 2.0 * double(c.n) * double(c.n) * (c.matrix ? double(c.n) : 1.0);
      double pure_ms = 0;
      std::vector<double> results[2];
      for (const char* blas : {"pure", "vendor"}) {
        sdfc::Options o = cuda;
        o.blas = blas;
        sdfc::Program p = sdfc::Program::compile_string(sdfc::bench::blas_program(c.matrix, true), o);
        p.set_array("A", A, nn);
        p.set_array("B", B, nv);
        p.set_array("C", C, nv);
        p.set_value("N", c.n);
        p.set_external_stream(bs);
        p.call();
        CHECK(cudaEventRecord(e0, bs));
        for (int r = 0; r < c.calls; ++r) p.call();
        CHECK(cudaEventRecord(e1, bs));
        CHECK(cudaEventSynchronize(e1));
        CHECK(cudaEventElapsedTime(&ms, e0, e1));
        p.set_external_stream(nullptr);
        double per_call = ms / c.calls;
        auto& res = results[blas[0] == 'v'];
        res.resize(nv);
        CHECK(cudaMemcpy(res.data(), C, nv * 8, cudaMemcpyDeviceToHost));
        if (blas[0] == 'p') pure_ms = per_call;
        std::printf("| %s N = %lld, --blas %s | %.3f ms per call | %.1f GFLOP/s | %.2fx pure |\n",
                    c.matrix ? "C = A @ B" : "y = A @ x", static_cast<long long>(c.n), blas, per_call,
                    flops / (per_call / 1e3) / 1e9, pure_ms / per_call);
      }
      double diff = 0;
      for (std::size_t i = 0; i < nv; ++i) diff = std::max(diff, std::abs(results[0][i] - results[1][i]));
      std::printf("|   max |pure - vendor| = %.3g |\n", diff);
      for (double* d : {A, B, C}) CHECK(cudaFree(d));
    }
    CHECK(cudaStreamDestroy(bs));
  }
  if (run_section(7)) {
    // ---- 7. graph mode ----------------------------------------------------------------------------
    cudaStream_t gs;
    CHECK(cudaStreamCreateWithFlags(&gs, cudaStreamNonBlocking));
    for (int k : {10, 100}) {
      // A hand-built graph of k empty kernels: the floor of a replay.
      cudaGraph_t g;
      cudaGraphExec_t ge;
      CHECK(cudaStreamBeginCapture(gs, cudaStreamCaptureModeThreadLocal));
      for (int i = 0; i < k; ++i) empty_kernel<<<1, 1, 0, gs>>>();
      CHECK(cudaStreamEndCapture(gs, &g));
      CHECK(cudaGraphInstantiate(&ge, g, 0));
      std::vector<double*> bufs(k + 2);
      for (auto& p : bufs) CHECK(cudaMalloc(&p, 16777216 * 8));
      // A hand-built graph of the chain's own k kernels (N = 1,024, through two buffers as the
      // arena's shared slots): the floor with the kernels' run time in it.
      cudaGraph_t gw;
      cudaGraphExec_t gwe;
      CHECK(cudaStreamBeginCapture(gs, cudaStreamCaptureModeThreadLocal));
      for (int i = 0; i < k; ++i) axpb_kernel<<<4, 256, 0, gs>>>(bufs[i % 2], bufs[(i + 1) % 2], 1024);
      CHECK(cudaStreamEndCapture(gs, &gw));
      CHECK(cudaGraphInstantiate(&gwe, gw, 0));
      sdfc::Options plain = cuda, graph = cuda;
      graph.gpu_graph = true;
      sdfc::Program ps = sdfc::Program::compile_string(chain(k), plain);
      sdfc::Program pg = sdfc::Program::compile_string(chain(k), graph);
      // A second instance for the caller's stream: a Program keeps its stream once set (nullptr
      // means the default stream, still stream-ordered), and pg's calls must stay blocking.
      sdfc::Program pgs = sdfc::Program::compile_string(chain(k), graph);
      pgs.set_external_stream(gs);
      // The same chain through arguments only (no arena): what the transients cost in a graph.
      sdfc::Program pga = sdfc::Program::compile_string(chain(k, false), graph);
      // --fuse-maps: the chain is one map (one kernel, the transients registers); in a graph,
      // blocking and on the caller's stream, and in stream mode.
      sdfc::Options fused = graph, fused_plain = plain;
      fused.fuse_maps = fused_plain.fuse_maps = true;
      sdfc::Program pf = sdfc::Program::compile_string(chain(k), fused);
      sdfc::Program pfs = sdfc::Program::compile_string(chain(k), fused);
      pfs.set_external_stream(gs);
      sdfc::Program pfp = sdfc::Program::compile_string(chain(k), fused_plain);
      // --no-dependent-launch: the kernels launched without programmatic stream serialization (the
      // default launches them as programmatic dependent launches on the H200), in a graph,
      // blocking and on the caller's stream, and in stream mode.
      sdfc::Options serial = graph, serial_plain = plain;
      serial.dependent_launch = serial_plain.dependent_launch = false;
      sdfc::Program pn = sdfc::Program::compile_string(chain(k), serial);
      sdfc::Program pns = sdfc::Program::compile_string(chain(k), serial);
      pns.set_external_stream(gs);
      sdfc::Program pnp = sdfc::Program::compile_string(chain(k), serial_plain);
      for (int i = 0; i <= k; ++i) pga.set_array("t" + std::to_string(i), bufs[i], 1024);
      pga.set_value("N", static_cast<std::int64_t>(1024));
      pga.call();
      auto bind = [&](sdfc::Program& p, std::size_t n, bool swapped) {
        p.set_array("t0", bufs[swapped ? 1 : 0], n);
        p.set_array("t" + std::to_string(k), bufs[swapped ? 0 : 1], n);
        p.set_value("N", static_cast<std::int64_t>(n));
      };
      bind(ps, 1024, false);
      bind(pg, 1024, false);
      bind(pgs, 1024, false);
      for (sdfc::Program* p : {&pf, &pfs, &pfp, &pn, &pns, &pnp}) bind(*p, 1024, false);
      ps.call();
      pg.call();
      pgs.call();
      for (sdfc::Program* p : {&pf, &pfs, &pfp, &pn, &pns, &pnp}) p->call();
      CHECK(cudaStreamSynchronize(gs));
      // interleaved rounds; median batch (microseconds per call)
      std::vector<double> t_replay_sync, t_replay, t_work_sync, t_work, t_plain, t_graph, t_graph_args, t_graph_stream,
          t_swap, t_fused, t_fused_stream, t_fused_plain, t_serial, t_serial_stream, t_serial_plain;
      for (int round = 0; round < rounds; ++round) {
        t0 = std::chrono::steady_clock::now();
        for (int r = 0; r < batch; ++r) {
          CHECK(cudaGraphLaunch(ge, gs));
          CHECK(cudaStreamSynchronize(gs));
        }
        t_replay_sync.push_back(seconds_since(t0) / batch * 1e6);
        t0 = std::chrono::steady_clock::now();
        for (int r = 0; r < batch; ++r) CHECK(cudaGraphLaunch(ge, gs));
        CHECK(cudaStreamSynchronize(gs));
        t_replay.push_back(seconds_since(t0) / batch * 1e6);
        t0 = std::chrono::steady_clock::now();
        for (int r = 0; r < batch; ++r) {
          CHECK(cudaGraphLaunch(gwe, gs));
          CHECK(cudaStreamSynchronize(gs));
        }
        t_work_sync.push_back(seconds_since(t0) / batch * 1e6);
        t0 = std::chrono::steady_clock::now();
        for (int r = 0; r < batch; ++r) CHECK(cudaGraphLaunch(gwe, gs));
        CHECK(cudaStreamSynchronize(gs));
        t_work.push_back(seconds_since(t0) / batch * 1e6);
        t0 = std::chrono::steady_clock::now();
        for (int r = 0; r < batch; ++r) ps.call();
        t_plain.push_back(seconds_since(t0) / batch * 1e6);
        t0 = std::chrono::steady_clock::now();
        for (int r = 0; r < batch; ++r) pg.call();
        t_graph.push_back(seconds_since(t0) / batch * 1e6);
        t0 = std::chrono::steady_clock::now();
        for (int r = 0; r < batch; ++r) pga.call();
        t_graph_args.push_back(seconds_since(t0) / batch * 1e6);
        t0 = std::chrono::steady_clock::now();
        for (int r = 0; r < batch; ++r) pgs.call();
        CHECK(cudaStreamSynchronize(gs));
        t_graph_stream.push_back(seconds_since(t0) / batch * 1e6);
        t0 = std::chrono::steady_clock::now();
        for (int r = 0; r < batch / 10; ++r) {
          bind(pg, 1024, r % 2 == 1);
          pg.call();
        }
        t_swap.push_back(seconds_since(t0) / (batch / 10) * 1e6);
        bind(pg, 1024, false);
        t0 = std::chrono::steady_clock::now();
        for (int r = 0; r < batch; ++r) pf.call();
        t_fused.push_back(seconds_since(t0) / batch * 1e6);
        t0 = std::chrono::steady_clock::now();
        for (int r = 0; r < batch; ++r) pfs.call();
        CHECK(cudaStreamSynchronize(gs));
        t_fused_stream.push_back(seconds_since(t0) / batch * 1e6);
        t0 = std::chrono::steady_clock::now();
        for (int r = 0; r < batch; ++r) pfp.call();
        t_fused_plain.push_back(seconds_since(t0) / batch * 1e6);
        t0 = std::chrono::steady_clock::now();
        for (int r = 0; r < batch; ++r) pn.call();
        t_serial.push_back(seconds_since(t0) / batch * 1e6);
        t0 = std::chrono::steady_clock::now();
        for (int r = 0; r < batch; ++r) pns.call();
        CHECK(cudaStreamSynchronize(gs));
        t_serial_stream.push_back(seconds_since(t0) / batch * 1e6);
        t0 = std::chrono::steady_clock::now();
        for (int r = 0; r < batch; ++r) pnp.call();
        t_serial_plain.push_back(seconds_since(t0) / batch * 1e6);
      }
      double floor_sync = median(t_replay_sync), floor_bare = median(t_replay);
      std::printf(
          "| %d-map chain, N = 1,024 | hand-built graph of %d empty kernels: replay + sync %.1f us, bare replay "
          "%.1f us |\n",
          k, k, floor_sync, floor_bare);
      double work_sync = median(t_work_sync), work_bare = median(t_work);
      std::printf(
          "|   hand-built graph of the chain's own %d kernels (b = 2a + 1): replay + sync %.1f us, bare replay %.1f "
          "us |\n",
          k, work_sync, work_bare);
      std::printf("|   stream mode (no graph), blocking | %.1f us | %.2f x replay + sync |\n", median(t_plain),
                  median(t_plain) / floor_sync);
      std::printf(
          "|   --gpu-graph, blocking | %.1f us | %.2f x replay + sync | %.2f x the own kernels' graph | %.2f x faster "
          "than stream mode |\n",
          median(t_graph), median(t_graph) / floor_sync, median(t_graph) / work_sync,
          median(t_plain) / median(t_graph));
      std::printf("|   --gpu-graph, blocking, no transients (arguments only) | %.1f us | %.2f x replay + sync |\n",
                  median(t_graph_args), median(t_graph_args) / floor_sync);
      std::printf(
          "|   --gpu-graph, caller's stream | %.1f us | %.2f x bare replay | %.2f x the own kernels' bare replay |\n",
          median(t_graph_stream), median(t_graph_stream) / floor_bare, median(t_graph_stream) / work_bare);
      std::printf("|   --gpu-graph, pointers swapped every call | %.1f us | %.2f x unchanged pointers |\n",
                  median(t_swap), median(t_swap) / median(t_graph));
      std::printf("|   --gpu-graph --no-dependent-launch, blocking | %.1f us | %.2f x replay + sync |\n",
                  median(t_serial), median(t_serial) / floor_sync);
      std::printf("|   --gpu-graph --no-dependent-launch, caller's stream | %.1f us | %.2f x bare replay |\n",
                  median(t_serial_stream), median(t_serial_stream) / floor_bare);
      std::printf("|   stream mode --no-dependent-launch, blocking | %.1f us | %.2f x replay + sync |\n",
                  median(t_serial_plain), median(t_serial_plain) / floor_sync);
      std::printf("|   --gpu-graph --fuse-maps (one kernel), blocking | %.1f us | %.2f x replay + sync |\n",
                  median(t_fused), median(t_fused) / floor_sync);
      std::printf("|   --gpu-graph --fuse-maps, caller's stream | %.1f us | %.2f x bare replay |\n",
                  median(t_fused_stream), median(t_fused_stream) / floor_bare);
      std::printf("|   --fuse-maps (stream mode, no graph), blocking | %.1f us | %.2f x replay + sync |\n",
                  median(t_fused_plain), median(t_fused_plain) / floor_sync);
      if (k == 10) {
        bind(ps, 16777216, false);
        bind(pg, 16777216, false);
        bind(pf, 16777216, false);
        ps.call();
        pg.call();
        pf.call();
        std::vector<double> big_plain, big_graph, big_fused;
        for (int round = 0; round < 5; ++round) {
          t0 = std::chrono::steady_clock::now();
          for (int r = 0; r < 10; ++r) pf.call();
          big_fused.push_back(seconds_since(t0) / 10 * 1e3);
          t0 = std::chrono::steady_clock::now();
          for (int r = 0; r < 10; ++r) ps.call();
          big_plain.push_back(seconds_since(t0) / 10 * 1e3);
          t0 = std::chrono::steady_clock::now();
          for (int r = 0; r < 10; ++r) pg.call();
          big_graph.push_back(seconds_since(t0) / 10 * 1e3);
        }
        std::printf("|   N = 16,777,216: stream mode %.3f ms, --gpu-graph %.3f ms | %.3f x |\n", median(big_plain),
                    median(big_graph), median(big_graph) / median(big_plain));
        std::printf("|   N = 16,777,216: --gpu-graph --fuse-maps %.3f ms | %.3f x stream mode |\n", median(big_fused),
                    median(big_fused) / median(big_plain));
      }
      CHECK(cudaGraphExecDestroy(ge));
      CHECK(cudaGraphDestroy(g));
      CHECK(cudaGraphExecDestroy(gwe));
      CHECK(cudaGraphDestroy(gw));
      for (auto* p : bufs) CHECK(cudaFree(p));
    }
    CHECK(cudaStreamDestroy(gs));
  }
  if (run_section(8)) {
    // ---- 8. schedules across states: two dependent states of 4 kernels, --gpu-streams 4 -----------
    // Chained (the streams carry their work into the second state) against joined (a condition on
    // the edge: every stream joins into stream 0 after the first state, the schedule of every
    // state before chains). Kernels of 2 blocks, each a dependent loop of additions per element.
    cudaStream_t cs;
    CHECK(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking));
    const int m = 512, L = 20000, S = 2000;
    std::vector<double*> xs(12);
    for (auto& p : xs) CHECK(cudaMalloc(&p, m * 8));
    for (auto* p : xs) CHECK(cudaMemset(p, 0, m * 8));
    struct Shape {
      const char* name;
      int reps[2][4];
    };
    for (const Shape& sh : {Shape{"long kernel on stream 0 first, on streams 1-3 second", {{L, S, S, S}, {S, L, L, L}}},
                            Shape{"all kernels alike", {{L, L, L, L}, {L, L, L, L}}}}) {
      for (int shift : {0, 1}) {
        double per_call[2] = {0, 0};
        for (int joined : {1, 0}) {
          sdfc::Options o = cuda;
          o.gpu_streams = 4;
          sdfc::Program p = sdfc::Program::compile_string(sdfc::test::two_stages(sh.reps, shift, joined), o);
          for (int k = 0; k < 4; ++k) {
            p.set_array("x" + std::to_string(k), xs[k], m);
            p.set_array("y" + std::to_string(k), xs[4 + k], m);
            p.set_array("z" + std::to_string(k), xs[8 + k], m);
          }
          p.set_value("N", m);
          per_call[joined] = queued_call_us(p, cs, 50);
        }
        std::printf(
            "| two states x 4 kernels (%s), shift %d | joined per state: %.1f us | chained: %.1f us | %.2f x |\n",
            sh.name, shift, per_call[1], per_call[0], per_call[1] / per_call[0]);
      }
    }
    for (auto* p : xs) CHECK(cudaFree(p));
    CHECK(cudaStreamDestroy(cs));
  }
  if (run_section(9)) {
    // ---- 9. a time loop over two states of 4 kernels, --gpu-streams 4 ------------------------------
    // Carried (the streams keep their work across iterations: events only between conflicting
    // kernels) against joined (an empty third state after a conditional edge in the body: every
    // iteration ends with a join into stream 0, the schedule of every loop before). Kernels of 2
    // blocks; with "rotating", the long kernel of each state moves to the next stream every iteration.
    cudaStream_t cs;
    CHECK(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking));
    const int m = 512, L = 20000, S = 2000, T = 20;
    std::vector<double*> xs(8);
    for (auto& p : xs) CHECK(cudaMalloc(&p, m * 8));
    for (auto* p : xs) CHECK(cudaMemset(p, 0, m * 8));
    struct Shape {
      const char* name;
      int reps[2][4];
      bool rotate;
      int shift;
    };
    for (const Shape& sh :
         {Shape{"one long kernel per state, rotating, own stream's input", {{L, S, S, S}, {L, S, S, S}}, true, 0},
          Shape{"one long kernel per state, rotating, another stream's input", {{L, S, S, S}, {L, S, S, S}}, true, 1},
          Shape{"all kernels alike and long", {{L, L, L, L}, {L, L, L, L}}, false, 0},
          Shape{"all kernels alike and short (launch-bound)", {{1, 1, 1, 1}, {1, 1, 1, 1}}, false, 0}}) {
      double per_call[2] = {0, 0};
      for (int joined : {1, 0}) {
        sdfc::Options o = cuda;
        o.gpu_streams = 4;
        sdfc::Program p =
            sdfc::Program::compile_string(sdfc::test::loop_stages(sh.reps, sh.shift, joined, sh.rotate), o);
        for (int k = 0; k < 4; ++k) {
          p.set_array("x" + std::to_string(k), xs[k], m);
          p.set_array("y" + std::to_string(k), xs[4 + k], m);
        }
        p.set_value("N", m);
        p.set_value("T", T);
        per_call[joined] = queued_call_us(p, cs, 20);
      }
      std::printf(
          "| time loop of %d iterations, two states x 4 kernels (%s) | joined per iteration: %.1f us | "
          "carried: %.1f us | %.2f x |\n",
          T, sh.name, per_call[1], per_call[0], per_call[1] / per_call[0]);
    }
    for (auto* p : xs) CHECK(cudaFree(p));
    CHECK(cudaStreamDestroy(cs));
  }
  if (run_section(10)) {
    // ---- 10. DaCe's chain: dependent launch against plain launches at every size ------------------
    cudaStream_t cs;
    CHECK(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking));
    const std::string file = std::string(SDFC_BENCH_DATA) + "/dace_chain10_b128.sdfg";
    const std::int64_t big = 16777216;
    double *src, *dst;
    CHECK(cudaMalloc(&src, big * 8));
    CHECK(cudaMalloc(&dst, big * 8));
    CHECK(cudaMemset(src, 0, big * 8));
    struct Variant {
      const char* label;
      const char* transients;
      bool dependent_launch, fuse;
    };
    const Variant variants[] = {{"dependent launch (default)", "", true, false},
                                {"--no-dependent-launch", "", false, false},
                                {"dependent launch, persistent", "persistent", true, false},
                                {"--no-dependent-launch, persistent", "persistent", false, false},
                                {"--fuse-maps", "", true, true}};
    std::vector<sdfc::Program> programs;
    for (const Variant& v : variants) {
      sdfc::Options o = cuda;
      o.transients = v.transients;
      o.dependent_launch = v.dependent_launch;
      o.fuse_maps = v.fuse;
      programs.push_back(sdfc::Program::compile_file(file, o));
    }
    std::printf("| DaCe-made chain of 10 maps (block 128), N | variant | per call (us) | vs plain launches |\n");
    for (std::int64_t count : {std::int64_t(1024), std::int64_t(65536), std::int64_t(1048576), big}) {
      std::vector<std::vector<double>> times(programs.size());
      const int calls = count >= big ? 20 : 200;
      for (int round = 0; round < 5; ++round)
        for (std::size_t v = 0; v < programs.size(); ++v) {
          programs[v].set_array("t0", src, static_cast<std::size_t>(count));
          programs[v].set_array("t10", dst, static_cast<std::size_t>(count));
          programs[v].set_value("N", count);
          times[v].push_back(queued_call_us(programs[v], cs, calls));
        }
      for (std::size_t v = 0; v < programs.size(); ++v) {
        // the plain-launch row of the same memory mode (fused: against the unfused plain chain)
        std::size_t plain = v == 0 || v == 4 ? 1 : v == 2 ? 3 : v;
        std::printf("| %lld | %s | %.1f | %.3f |\n", static_cast<long long>(count), variants[v].label, median(times[v]),
                    median(times[v]) / median(times[plain]));
      }
    }
    CHECK(cudaFree(src));
    CHECK(cudaFree(dst));
    CHECK(cudaStreamDestroy(cs));
  }
  return 0;
}
