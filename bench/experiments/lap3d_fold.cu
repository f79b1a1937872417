// Experiment (issue 39): GT4Py's 3D Laplacian with fields in C order (K fastest), the kernels sdfc
// generates for that layout before and after folding J into K (lap3d_fold_generated.inc: one index
// over the (J, K) plane at the pitch sdfc::gpu::fold_pitch picks, so that warps run on across K's
// short rows), under a few block sizes and plane counts, and the hand-written flat kernel of
// lap3d_corder.cu (8 planes) as the mark to reach. Every variant is checked against a plain
// kernel before it is timed (50 launches on one stream, CUDA events, the median of 5 repetitions);
// fractions are of a same-size device-to-device copy.
//   nvcc -O3 -std=c++17 -arch=sm_90 -I runtime/include bench/experiments/lap3d_fold.cu -o lap3d_fold
//   ./lap3d_fold [NX NY NZ]...   (default 512 512 80)
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
#include "lap3d_fold_generated.inc"

namespace {

__global__ void reference(double* __restrict__ lap, const double* __restrict__ u, int64_t si, int64_t sj, double inv,
                          int nx, int ny, int nz) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y, i = blockIdx.z;
  if (k < 1 || k > nz - 2 || j < 1 || j > ny - 2 || i < 1 || i > nx - 2) return;
  const int64_t c = i * si + j * sj + k;
  lap[c] = inv * (u[c - si] + u[c + si] + u[c - sj] + u[c + sj] + u[c - 1] + u[c + 1] - 6.0 * u[c]);
}

// lap3d_corder.cu's best: x over the whole (J, K) plane, 8 planes of I with I - 1, I, I + 1 in registers.
__global__ void __launch_bounds__(256) flat8(double* __restrict__ lap, const double* __restrict__ u, int64_t si,
                                             int64_t sj, double inv, int nx, int ny, int nz) {
  const int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= static_cast<int64_t>(ny) * sj) return;
  const int j = static_cast<int>(t / sj), k = static_cast<int>(t - j * sj);
  if (j < 1 || j > ny - 2 || k < 1 || k > nz - 2) return;
  const int i0 = blockIdx.y * 8 + 1;
  int64_t c = i0 * si + t;
  double below = u[c - si], center = u[c];
#pragma unroll
  for (int p = 0; p < 8; ++p) {
    if (i0 + p > nx - 2) return;
    const double above = u[c + si];
    lap[c] = inv * (below + above + u[c - sj] + u[c + sj] + u[c - 1] + u[c + 1] - 6.0 * center);
    below = center;
    center = above;
    c += si;
  }
}

void run(int nx, int ny, int nz) {
  const int64_t sk = 1, sj = nz, si = int64_t(ny) * nz;
  std::printf("\n%d x %d x %d float64, C order (K fastest)\n", nx, ny, nz);
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
  auto time = [&](const std::function<void()>& launch) { return median_us_per_launch(s, 50, 5, launch); };
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
    std::printf("| %-50s | %7.1f us | %5.0f GB/s | %.3f of same-size D2D | max err %.1e%s\n", name.c_str(), us, bw,
                bw / copy_bw, err, err > 1e-12 ? "  WRONG" : "");
  };
  report("unfolded, 32 x 8, 16 planes (sdfc before)", [&](double* dst) {
    const dim3 grid((nz - 2 + 1 + 31) / 32, (ny - 2 + 7) / 8, (nx - 2 + 15) / 16), block(32, 8, 1);
    lap_unfolded<<<grid, block, 0, s>>>(dst, u, 0, si, 0, sj, 0, sk, 0, si, 0, sj, 0, sk, inv, nx, ny, nz);
  });
  auto folded = [&](auto kernel, int planes, unsigned threads) {
    return [=](double* dst) {
      const int64_t pitch = sdfc::gpu::fold_pitch(sk, sj, nz - 2);
      const int64_t nf = int64_t(ny - 2) * pitch + sdfc::gpu::fold_lead(1 * pitch + 1);
      const dim3 grid(static_cast<unsigned>((nf + threads - 1) / threads), 1, (nx - 2 + planes - 1) / planes);
      kernel<<<grid, threads, 0, s>>>(dst, u, 0, si, 0, sj, 0, sk, 0, si, 0, sj, 0, sk, inv, nx, ny, nz);
    };
  };
  report("folded, 256, 8 planes (sdfc now)", folded(lap_folded8, 8, 256));
  report("folded, 256, 16 planes", folded(lap_folded16, 16, 256));
  report("folded, 128, 16 planes", folded(lap_folded16, 16, 128));
  report("folded, 128, 8 planes", folded(lap_folded8, 8, 128));
  report("hand-written flat, 256, 8 planes (lap3d_corder.cu)", [&](double* dst) {
    const dim3 grid(static_cast<unsigned>((int64_t(ny) * nz + 255) / 256), (nx - 2 + 7) / 8, 1);
    flat8<<<grid, 256, 0, s>>>(dst, u, si, sj, inv, nx, ny, nz);
  });
  CHECK(cudaFree(u));
  CHECK(cudaFree(ref));
  CHECK(cudaFree(out));
  CHECK(cudaStreamDestroy(s));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) run(512, 512, 80);
  for (int a = 1; a + 2 < argc; a += 3) run(std::atoi(argv[a]), std::atoi(argv[a + 1]), std::atoi(argv[a + 2]));
  return 0;
}
