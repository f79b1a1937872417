// Experiment (issue 14): GT4Py's 3D Laplacian at 512 x 512 x 80 float64 on the GPU, the kernel sdfc
// generates against hand-written variants, to find what reaches 0.85 of the device-to-device copy
// bandwidth. Standalone: nvcc -O3 -std=c++17 -arch=sm_90 lap3d_variants.cu -o lap3d && ./lap3d [NX NY NZ]
// Layout as GT4Py allocates GPU fields: J fastest, then I, then K. Every variant is checked against
// the generated kernel's result before it is timed (50 launches on one stream, CUDA events, the
// median of 5 repetitions).
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
#include "lap3d_generated.inc"
#include "lap3d_generated_lead.inc"

__device__ __forceinline__ double lap_point(const double* __restrict__ u, int64_t c, int si, int sj, int sk,
                                            double below, double center, double above, double inv) {
  double s = u[c - si] + u[c + si];
  s += u[c - sj];
  s += u[c + sj];
  s += below;
  s += above;
  return inv * (s - 6.0 * center);
}

// One base index per thread, P planes per thread (the generated kernel's shape, simple indices).
template <int P>
__global__ void __launch_bounds__(256) simple(double* __restrict__ lap, const double* __restrict__ u, int si, int sj,
                                              int sk, double inv, int nx, int ny, int nz) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x + 1;
  const int i = blockIdx.y * blockDim.y + threadIdx.y + 1;
  if (j > ny - 2 || i > nx - 2) return;
  const int k0 = (blockIdx.z * blockDim.z + threadIdx.z) * P + 1;
  int64_t c = int64_t(i) * si + int64_t(j) * sj + int64_t(k0) * sk;
#pragma unroll
  for (int p = 0; p < P; ++p) {
    if (k0 + p > nz - 2) return;
    lap[c] = lap_point(u, c, si, sj, sk, u[c - sk], u[c], u[c + sk], inv);
    c += sk;
  }
}

// March along K over KC planes (blockIdx.z picks the chunk), k-1/k/k+1 in a register queue.
// ALIGN: threads along x start at j = 0 (warps aligned to 256 bytes; j = 0 and ny - 1 idle).
template <int KC, bool ALIGN>
__global__ void __launch_bounds__(256) zqueue(double* __restrict__ lap, const double* __restrict__ u, int si, int sj,
                                              int sk, double inv, int nx, int ny, int nz) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x + (ALIGN ? 0 : 1);
  const int i = blockIdx.y * blockDim.y + threadIdx.y + 1;
  if (j > ny - 2 || i > nx - 2 || j < 1) return;
  const int k0 = blockIdx.z * KC + 1;
  const int k1 = min(k0 + KC, nz - 1);
  int64_t c = int64_t(i) * si + int64_t(j) * sj + int64_t(k0) * sk;
  double below = u[c - sk], center = u[c];
#pragma unroll 4
  for (int k = k0; k < k1; ++k) {
    const double above = u[c + sk];
    lap[c] = lap_point(u, c, si, sj, sk, below, center, above, inv);
    below = center;
    center = above;
    c += sk;
  }
}

// 2.5D blocking: the block's I x J tile of plane k with its halo in shared memory, marching along K
// over KC planes; k-1/k+1 of the tile's own points in registers.
template <int BX, int BY, int KC>
__global__ void __launch_bounds__(BX* BY) tiled(double* __restrict__ lap, const double* __restrict__ u, int si, int sj,
                                                int sk, double inv, int nx, int ny, int nz) {
  __shared__ double tile[BY + 2][BX + 2];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int j = blockIdx.x * BX + tx + 1;
  const int i = blockIdx.y * BY + ty + 1;
  const bool inside = j <= ny - 2 && i <= nx - 2;
  const bool loads = j <= ny - 1 && i <= nx - 1;
  const int k0 = blockIdx.z * KC + 1;
  const int k1 = min(k0 + KC, nz - 1);
  int64_t c = int64_t(i) * si + int64_t(j) * sj + int64_t(k0) * sk;
  double below = loads ? u[c - sk] : 0, center = loads ? u[c] : 0;
  for (int k = k0; k < k1; ++k) {
    const double above = loads ? u[c + sk] : 0;
    __syncthreads();
    tile[ty + 1][tx + 1] = center;
    if (loads) {
      if (tx == 0) tile[ty + 1][0] = u[c - sj];
      if (tx == BX - 1 || j == ny - 2) tile[ty + 1][tx + 2] = u[c + sj];
      if (ty == 0) tile[0][tx + 1] = u[c - si];
      if (ty == BY - 1 || i == nx - 2) tile[ty + 2][tx + 1] = u[c + si];
    }
    __syncthreads();
    if (inside) {
      double s = tile[ty][tx + 1] + tile[ty + 2][tx + 1];
      s += tile[ty + 1][tx];
      s += tile[ty + 1][tx + 2];
      s += below;
      s += above;
      lap[c] = inv * (s - 6.0 * center);
    }
    below = center;
    center = above;
    c += sk;
  }
}

int main(int argc, char** argv) {
  const int nx = argc > 3 ? std::atoi(argv[1]) : 512, ny = argc > 3 ? std::atoi(argv[2]) : 512,
            nz = argc > 3 ? std::atoi(argv[3]) : 80;
  std::printf("%d x %d x %d float64\n", nx, ny, nz);
  const int si = ny, sj = 1, sk = nx * ny;
  const size_t cells = size_t(nx) * ny * nz, bytes = cells * 8;
  const double inv = 0.390625;
  double *u, *ref, *out, *big0, *big1;
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
  // Copy bandwidth: the same size, and 2 GiB.
  double copy_us = time([&] { CHECK(cudaMemcpyAsync(out, u, bytes, cudaMemcpyDeviceToDevice, s)); });
  const size_t big = size_t(1) << 30;
  CHECK(cudaMalloc(&big0, big));
  CHECK(cudaMalloc(&big1, big));
  double big_us = time([&] { CHECK(cudaMemcpyAsync(big1, big0, big, cudaMemcpyDeviceToDevice, s)); });
  CHECK(cudaFree(big0));
  CHECK(cudaFree(big1));
  const double copy_bw = 2.0 * bytes / copy_us / 1e3, big_bw = 2.0 * big / big_us / 1e3;
  std::printf("D2D copy, same size: %.1f us, %.0f GB/s; 1 GiB: %.0f GB/s\n", copy_us, copy_bw, big_bw);

  auto generated = [&](double* dst) {
    const dim3 grid((ny - 2 + 31) / 32, (nx - 2 + 7) / 8, (nz - 2 + 3) / 4), block(32, 8, 1);
    map_10_fieldop_7_kernel0<<<grid, block, 0, s>>>(dst, u, 0, si, 0, sj, 0, sk, 0, si, 0, sj, 0, sk, inv, nx, ny, nz);
  };
  generated(ref);
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
    std::printf("| %-44s | %7.1f us | %5.0f GB/s | %.3f of same-size D2D | %.3f of 1 GiB D2D | max err %.1e%s\n",
                name.c_str(), us, bw, bw / copy_bw, bw / big_bw, err, err > 1e-12 ? "  WRONG" : "");
  };
  report("generated (sdfc, 4 planes, 32 x 8)", generated);
  auto simple_launch = [&](auto kernel, int p, int bx, int by) {
    return [=](double* dst) {
      const dim3 grid((ny - 2 + bx - 1) / bx, (nx - 2 + by - 1) / by, (nz - 2 + p - 1) / p), block(bx, by, 1);
      kernel<<<grid, block, 0, s>>>(dst, u, si, sj, sk, inv, nx, ny, nz);
    };
  };
  auto lead_launch = [&](auto kernel, int planes) {
    return [=](double* dst) {
      const dim3 grid((ny - 2 + 1 + 31) / 32, (nx - 2 + 7) / 8, (nz - 2 + planes - 1) / planes), block(32, 8, 1);
      kernel<<<grid, block, 0, s>>>(dst, u, 0, si, 0, sj, 0, sk, 0, si, 0, sj, 0, sk, inv, nx, ny, nz);
    };
  };
  report("generated, lead 1 (sdfc now), 4 planes", lead_launch(gen_lead4, 4));
  report("generated, lead 1, 8 planes", lead_launch(gen_lead8, 8));
  report("generated, lead 1, 16 planes", lead_launch(gen_lead16, 16));
  report("generated, lead 1, 16 planes, unroll 4", lead_launch(gen_lead16u4, 16));
  report("generated, lead 1, 16 planes, unroll 1", lead_launch(gen_lead16u1, 16));
  report("generated, lead 1, 32 planes, unroll 4", lead_launch(gen_lead32u4, 32));
  report("generated, lead 1, 8 planes, unroll 1", lead_launch(gen_lead8u1, 8));
  report("simple, 4 planes, 32 x 8", simple_launch(simple<4>, 4, 32, 8));
  report("simple, 4 planes, 64 x 4", simple_launch(simple<4>, 4, 64, 4));
  auto zq_launch = [&](auto kernel, int kc, bool align, int bx, int by) {
    return [=](double* dst) {
      const int jx = align ? ny : ny - 2;
      const dim3 grid((jx + bx - 1) / bx, (nx - 2 + by - 1) / by, (nz - 2 + kc - 1) / kc), block(bx, by, 1);
      kernel<<<grid, block, 0, s>>>(dst, u, si, sj, sk, inv, nx, ny, nz);
    };
  };
  report("z queue 4, 32 x 8", zq_launch(zqueue<4, false>, 4, false, 32, 8));
  report("z queue 8, 32 x 8", zq_launch(zqueue<8, false>, 8, false, 32, 8));
  report("z queue 13, 32 x 8", zq_launch(zqueue<13, false>, 13, false, 32, 8));
  report("z queue 26, 32 x 8", zq_launch(zqueue<26, false>, 26, false, 32, 8));
  report("z queue 78, 32 x 8", zq_launch(zqueue<78, false>, 78, false, 32, 8));
  report("z queue 8, 64 x 4", zq_launch(zqueue<8, false>, 8, false, 64, 4));
  report("z queue 8, 128 x 2", zq_launch(zqueue<8, false>, 8, false, 128, 2));
  report("z queue 13, 64 x 4", zq_launch(zqueue<13, false>, 13, false, 64, 4));
  report("aligned z queue 4, 32 x 8", zq_launch(zqueue<4, true>, 4, true, 32, 8));
  report("aligned z queue 8, 32 x 8", zq_launch(zqueue<8, true>, 8, true, 32, 8));
  report("aligned z queue 13, 32 x 8", zq_launch(zqueue<13, true>, 13, true, 32, 8));
  report("aligned z queue 26, 32 x 8", zq_launch(zqueue<26, true>, 26, true, 32, 8));
  report("aligned z queue 8, 64 x 4", zq_launch(zqueue<8, true>, 8, true, 64, 4));
  report("aligned z queue 13, 64 x 4", zq_launch(zqueue<13, true>, 13, true, 64, 4));
  report("aligned z queue 8, 128 x 2", zq_launch(zqueue<8, true>, 8, true, 128, 2));
  auto tiled_launch = [&](auto kernel, int bx, int by, int kc) {
    return [=](double* dst) {
      const dim3 grid((ny - 2 + bx - 1) / bx, (nx - 2 + by - 1) / by, (nz - 2 + kc - 1) / kc), block(bx, by, 1);
      kernel<<<grid, block, 0, s>>>(dst, u, si, sj, sk, inv, nx, ny, nz);
    };
  };
  report("shared tile 32 x 8, 8 planes", tiled_launch(tiled<32, 8, 8>, 32, 8, 8));
  report("shared tile 32 x 8, 13 planes", tiled_launch(tiled<32, 8, 13>, 32, 8, 13));
  report("shared tile 32 x 8, 26 planes", tiled_launch(tiled<32, 8, 26>, 32, 8, 26));
  report("shared tile 64 x 4, 13 planes", tiled_launch(tiled<64, 4, 13>, 64, 4, 13));
  report("shared tile 32 x 16, 13 planes", tiled_launch(tiled<32, 16, 13>, 32, 16, 13));
  return 0;
}
