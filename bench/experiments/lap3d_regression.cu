// Experiment (issue 39): GT4Py's 3D Laplacian at 512 x 512 x 80 float64 (GT4Py's GPU layout, J
// fastest) on the H200 ran at 93.5 us per call on 2026-12-03 and at 107.2 us on 2026-12-06. This
// times the kernel sdfc generated then (gen_lead16: int symbols, no dependent launch) against the
// kernel it generates now (gen_now: int64_t symbols, the dependent-launch prologue), launched as a
// programmatic dependent launch (as sdfc's default) and plainly, and the two changes one at a time.
// Same grid and block (32 x 8, 16 planes, a lead of one thread), every result checked against
// gen_lead16's, 50 launches on one stream between CUDA events, the median of 7 repetitions.
//   nvcc -O3 -std=c++17 -arch=sm_90 -I runtime/include bench/experiments/lap3d_regression.cu -o lap3d_regression
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "experiment.h"
#include "sdfc/gpu_portability.h"

// the kernels (they use sdfc's runtime)
#include "lap3d_generated_lead.inc"
#include "lap3d_now.inc"
#include "lap3d_widened.inc"

int main(int argc, char** argv) {
  const int nx = argc > 3 ? std::atoi(argv[1]) : 512, ny = argc > 3 ? std::atoi(argv[2]) : 512,
            nz = argc > 3 ? std::atoi(argv[3]) : 80;
  std::printf("%d x %d x %d float64, GT4Py's GPU layout\n", nx, ny, nz);
  const int si = ny, sj = 1, sk = nx * ny;
  const size_t cells = size_t(nx) * ny * nz, bytes = cells * 8;
  const double inv = 0.390625;
  double *u, *ref, *out;
  CHECK(cudaMalloc(&u, bytes));
  CHECK(cudaMalloc(&ref, bytes));
  CHECK(cudaMalloc(&out, bytes));
  std::vector<double> h(cells);
  srand(7);
  for (auto& x : h) x = double(rand()) / RAND_MAX;
  CHECK(cudaMemcpy(u, h.data(), bytes, cudaMemcpyHostToDevice));
  CHECK(cudaMemset(ref, 0, bytes));
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  const int calls = 50, reps = 7;
  auto time = [&](const std::function<void()>& launch) { return median_us_per_launch(s, calls, reps, launch); };
  double copy_us = time([&] { CHECK(cudaMemcpyAsync(out, u, bytes, cudaMemcpyDeviceToDevice, s)); });
  const double copy_bw = 2.0 * bytes / copy_us / 1e3;
  std::printf("D2D copy, same size: %.1f us, %.0f GB/s\n", copy_us, copy_bw);

  const dim3 grid((ny - 2 + 1 + 31) / 32, (nx - 2 + 7) / 8, (nz - 2 + 15) / 16), block(32, 8, 1);
  gen_lead16<<<grid, block, 0, s>>>(ref, u, 0, si, 0, sj, 0, sk, 0, si, 0, sj, 0, sk, inv, nx, ny, nz);
  CHECK(cudaStreamSynchronize(s));
  std::vector<double> want(cells), got(cells);
  CHECK(cudaMemcpy(want.data(), ref, bytes, cudaMemcpyDeviceToHost));
  auto report = [&](const std::string& name, const std::function<void(double*)>& launch) {
    CHECK(cudaMemset(out, 0, bytes));
    launch(out);
    CHECK(cudaGetLastError());
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaMemcpy(got.data(), out, bytes, cudaMemcpyDeviceToHost));
    double err = 0;
    for (size_t q = 0; q < cells; ++q) err = std::max(err, std::abs(got[q] - want[q]));
    double us = time([&] { launch(out); });
    double bw = 2.0 * bytes / us / 1e3;
    std::printf("| %-58s | %7.1f us | %5.0f GB/s | %.3f of same-size D2D | max err %.1e%s\n", name.c_str(), us, bw,
                bw / copy_bw, err, err > 1e-12 ? "  WRONG" : "");
  };
  const int64_t SI = si, SJ = sj, SK = sk, NX = nx, NY = ny, NZ = nz;
  report("2026-12-03 kernel (int symbols), plain launch", [&](double* dst) {
    gen_lead16<<<grid, block, 0, s>>>(dst, u, 0, si, 0, sj, 0, sk, 0, si, 0, sj, 0, sk, inv, nx, ny, nz);
  });
  report("now (int64_t symbols, prologue), dependent launch", [&](double* dst) {
    CHECK(sdfc::gpu::launch_dependent(gen_now, grid, block, s, dst, u, 0, SI, 0, SJ, 0, SK, 0, SI, 0, SJ, 0, SK, inv,
                                      NX, NY, NZ));
  });
  report("now, plain launch", [&](double* dst) {
    gen_now<<<grid, block, 0, s>>>(dst, u, 0, SI, 0, SJ, 0, SK, 0, SI, 0, SJ, 0, SK, inv, NX, NY, NZ);
  });
  report("now with int symbols, dependent launch", [&](double* dst) {
    CHECK(sdfc::gpu::launch_dependent(gen_now_int32, grid, block, s, dst, u, 0, si, 0, sj, 0, sk, 0, si, 0, sj, 0, sk,
                                      inv, nx, ny, nz));
  });
  report("now with int symbols, plain launch", [&](double* dst) {
    gen_now_int32<<<grid, block, 0, s>>>(dst, u, 0, si, 0, sj, 0, sk, 0, si, 0, sj, 0, sk, inv, nx, ny, nz);
  });
  report("now, int symbols widened at the top, dependent launch", [&](double* dst) {
    CHECK(sdfc::gpu::launch_dependent(gen_widened, grid, block, s, dst, u, 0, si, 0, sj, 0, sk, 0, si, 0, sj, 0, sk,
                                      inv, nx, ny, nz));
  });
  report("now, int strides and starts widened, dependent launch", [&](double* dst) {
    CHECK(sdfc::gpu::launch_dependent(gen_widened_strides, grid, block, s, dst, u, 0, si, 0, sj, 0, sk, 0, si, 0, sj, 0,
                                      sk, inv, NX, NY, NZ));
  });
  report("now, common offsets hoisted per container, dependent launch", [&](double* dst) {
    CHECK(sdfc::gpu::launch_dependent(gen_hoisted, grid, block, s, dst, u, 0, SI, 0, SJ, 0, SK, 0, SI, 0, SJ, 0, SK,
                                      inv, NX, NY, NZ));
  });
  report("grouped products (sdfc after this experiment), dependent launch", [&](double* dst) {
    CHECK(sdfc::gpu::launch_dependent(gen_grouped, grid, block, s, dst, u, 0, SI, 0, SJ, 0, SK, 0, SI, 0, SJ, 0, SK,
                                      inv, NX, NY, NZ));
  });
  report("now without the prologue, plain launch", [&](double* dst) {
    gen_now_noprologue<<<grid, block, 0, s>>>(dst, u, 0, SI, 0, SJ, 0, SK, 0, SI, 0, SJ, 0, SK, inv, NX, NY, NZ);
  });
  return 0;
}
