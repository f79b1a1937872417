// Experiment (issue 39): GT4Py's 3D Laplacian with fields in C order (K fastest), the layout sdfc's
// second kernel layout is for (K on x, J on y, 16 planes of I per thread). At 512 x 512 x 80 the x
// range is 78 points plus one lead thread, so blocks 32 wide launch 96 threads per K row (0.82 of
// them work). Variants: the generated kernel under other block shapes (16 x 16; a block as wide as
// the padded row, so that warps run on across rows, which are contiguous in C order) and a kernel
// over the flattened (J, K) plane. Every variant is checked against a plain kernel before it is
// timed (50 launches on one stream, CUDA events, the median of 5 repetitions).
// Standalone: nvcc -O3 -std=c++17 -arch=sm_90 -I runtime/include lap3d_corder.cu -o lap3d_corder
//             ./lap3d_corder [NX NY NZ]
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
#include "lap3d_corder_generated.inc"

// The reference: one point per thread, no tricks.
__global__ void reference(double* __restrict__ lap, const double* __restrict__ u, int64_t si, int64_t sj, double inv,
                          int nx, int ny, int nz) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y, i = blockIdx.z;
  if (k < 1 || k > nz - 2 || j < 1 || j > ny - 2 || i < 1 || i > nx - 2) return;
  const int64_t c = i * si + j * sj + k;
  lap[c] = inv * (u[c - si] + u[c + si] + u[c - sj] + u[c + sj] + u[c - 1] + u[c + 1] - 6.0 * u[c]);
}

// x runs over the flattened (J, K) plane (contiguous in C order), blockIdx.y picks P planes of I,
// which each thread marches with I - 1, I, I + 1 in registers (QUEUE) or loaded per plane.
template <int P, bool QUEUE>
__global__ void __launch_bounds__(256) flat(double* __restrict__ lap, const double* __restrict__ u, int64_t si,
                                            int64_t sj, double inv, int nx, int ny, int nz) {
  const int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= static_cast<int64_t>(ny) * sj) return;
  const int j = static_cast<int>(t / sj), k = static_cast<int>(t - j * sj);
  if (j < 1 || j > ny - 2 || k < 1 || k > nz - 2) return;
  const int i0 = blockIdx.y * P + 1;
  int64_t c = i0 * si + t;
  double below = QUEUE ? u[c - si] : 0, center = QUEUE ? u[c] : 0;
#pragma unroll
  for (int p = 0; p < P; ++p) {
    if (i0 + p > nx - 2) return;
    const double above = QUEUE ? u[c + si] : 0;
    const double s = (QUEUE ? below + above : u[c - si] + u[c + si]) + u[c - sj] + u[c + sj] + u[c - 1] + u[c + 1];
    lap[c] = inv * (s - 6.0 * (QUEUE ? center : u[c]));
    if (QUEUE) {
      below = center;
      center = above;
    }
    c += si;
  }
}

int main(int argc, char** argv) {
  const int nx = argc > 3 ? std::atoi(argv[1]) : 512, ny = argc > 3 ? std::atoi(argv[2]) : 512,
            nz = argc > 3 ? std::atoi(argv[3]) : 80;
  const int64_t sk = 1, sj = nz, si = int64_t(ny) * nz;
  std::printf("%d x %d x %d float64, C order (K fastest)\n", nx, ny, nz);
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
  const int calls = 50, reps = 5;
  auto time = [&](const std::function<void()>& launch) { return median_us_per_launch(s, calls, reps, launch); };
  const double copy_us = time([&] { CHECK(cudaMemcpyAsync(out, u, bytes, cudaMemcpyDeviceToDevice, s)); });
  const double copy_bw = 2.0 * bytes / copy_us / 1e3;
  std::printf("D2D copy, same size: %.1f us, %.0f GB/s\n", copy_us, copy_bw);

  reference<<<dim3((nz + 127) / 128, ny, nx), 128, 0, s>>>(ref, u, si, sj, inv, nx, ny, nz);
  CHECK(cudaGetLastError());
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
    const double us = time([&] { launch(out); });
    const double bw = 2.0 * bytes / us / 1e3;
    std::printf("| %-52s | %7.1f us | %5.0f GB/s | %.3f of same-size D2D | max err %.1e%s\n", name.c_str(), us, bw,
                bw / copy_bw, err, err > 1e-12 ? "  WRONG" : "");
  };
  // The generated kernel: x = K + 1 lead thread (nz - 1 threads), y = J, z = I in chunks of 16.
  auto generated = [&](unsigned bx, unsigned by) {
    return [=](double* dst) {
      const dim3 grid((nz - 2 + 1 + bx - 1) / bx, (ny - 2 + by - 1) / by, (nx - 2 + 15) / 16), block(bx, by, 1);
      map_10_fieldop_7_kernel1<<<grid, block, 0, s>>>(dst, u, 0, si, 0, sj, 0, sk, 0, si, 0, sj, 0, sk, inv, nx, ny,
                                                      nz);
    };
  };
  report("generated, 32 x 8 (sdfc)", generated(32, 8));
  auto folded = [&](int planes) {
    return [=](double* dst) {
      const dim3 grid(static_cast<unsigned>((int64_t(nz - 2) * (ny - 2) + 255) / 256), 1,
                      (nx - 2 + planes - 1) / planes);
      gen_folded<<<grid, 256, 0, s>>>(dst, u, 0, si, 0, sj, 0, sk, 0, si, 0, sj, 0, sk, inv, nx, ny, nz);
    };
  };
  report("generated, y folded into x, 8 planes (tried, reverted)", folded(8));
  report("generated, 16 x 16", generated(16, 16));
  report("generated, 8 x 32", generated(8, 32));
  report("generated, 64 x 4", generated(64, 4));
  const unsigned row = static_cast<unsigned>(nz - 2 + 1);  // the x range with its lead thread
  if (row <= 256) {
    report("generated, x = the padded row (" + std::to_string(row) + " x " + std::to_string(256 / row) + ")",
           generated(row, 256 / row));
    const unsigned row32 = (row + 31) / 32 * 32;
    report("generated, x = the row rounded to 32 (" + std::to_string(row32) + " x " + std::to_string(256 / row32) + ")",
           generated(row32, 256 / row32));
  }
  auto flat_launch = [&](auto kernel, int p, unsigned threads) {
    return [=](double* dst) {
      const dim3 grid(static_cast<unsigned>((int64_t(ny) * nz + threads - 1) / threads), (nx - 2 + p - 1) / p, 1);
      kernel<<<grid, threads, 0, s>>>(dst, u, si, sj, inv, nx, ny, nz);
    };
  };
  report("flat (J, K), 16 planes, I queue, 256", flat_launch(flat<16, true>, 16, 256));
  report("flat (J, K), 16 planes, no queue, 256", flat_launch(flat<16, false>, 16, 256));
  report("flat (J, K), 8 planes, I queue, 256", flat_launch(flat<8, true>, 8, 256));
  report("flat (J, K), 16 planes, I queue, 128", flat_launch(flat<16, true>, 16, 128));
  report("flat (J, K), 32 planes, I queue, 256", flat_launch(flat<32, true>, 32, 256));
  return 0;
}
