// Experiment (issue 39): how close does a 1D elementwise kernel (b = 2a + 1 over float64[N], the
// body of the DaCe-made chain of bench/data/dace_chain10_b128.sdfg) get to a device-to-device copy
// of the same bytes, by points per thread and block size? sdfc's 1D kernels compute one point per
// thread; the chain's kernels reach ~0.78 of a copy at N = 16.7 M on the H200.
// Variants (each checked against the host):
//   p1/B        one point per thread, blocks of B threads (sdfc today; DaCe's block size 128)
//   pR/B        R points per thread at a stride of B (a block covers R * B consecutive points, so
//               each row of the block is coalesced); the rows' bounds checked one by one
//   fR/B        as pR/B, with a fast path: a block whose R * B points are all inside runs the rows
//               without checks (loads can be issued together), the last block checks each row
//   gs/B        grid-stride loop over 4 waves of blocks
// Standalone: nvcc -O3 -std=c++17 -arch=sm_90 elementwise_1d.cu -o ew && ./ew [N]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "experiment.h"

__global__ void p1(const double* __restrict__ a, double* __restrict__ b, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  b[i] = 2.0 * a[i] + 1.0;
}

template <int R>
__global__ void pr(const double* __restrict__ a, double* __restrict__ b, int64_t n) {
  const int64_t i0 = static_cast<int64_t>(blockIdx.x) * blockDim.x * R + threadIdx.x;
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const int64_t i = i0 + static_cast<int64_t>(r) * blockDim.x;
    if (i >= n) return;
    b[i] = 2.0 * a[i] + 1.0;
  }
}

template <int R>
__global__ void fr(const double* __restrict__ a, double* __restrict__ b, int64_t n) {
  const int64_t i0 = static_cast<int64_t>(blockIdx.x) * blockDim.x * R + threadIdx.x;
  if (static_cast<int64_t>(blockIdx.x + 1) * blockDim.x * R <= n) {
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const int64_t i = i0 + static_cast<int64_t>(r) * blockDim.x;
      b[i] = 2.0 * a[i] + 1.0;
    }
    return;
  }
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const int64_t i = i0 + static_cast<int64_t>(r) * blockDim.x;
    if (i >= n) return;
    b[i] = 2.0 * a[i] + 1.0;
  }
}

__global__ void gs(const double* __restrict__ a, double* __restrict__ b, int64_t n) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    b[i] = 2.0 * a[i] + 1.0;
}

int main(int argc, char** argv) {
  const int64_t n = argc > 1 ? std::atoll(argv[1]) : (int64_t(1) << 24);
  const std::size_t bytes = static_cast<std::size_t>(n) * 8;
  double *a, *b;
  CHECK(cudaMalloc(&a, bytes));
  CHECK(cudaMalloc(&b, bytes));
  std::vector<double> h(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) h[static_cast<std::size_t>(i)] = static_cast<double>(i % 1000) * 0.5;
  CHECK(cudaMemcpy(a, h.data(), bytes, cudaMemcpyHostToDevice));
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  const int launches = 20, rounds = 5;
  auto time_us = [&](auto&& run) {
    run();
    CHECK(cudaDeviceSynchronize());
    std::vector<float> t;
    for (int r = 0; r < rounds; ++r) {
      CHECK(cudaEventRecord(e0));
      for (int l = 0; l < launches; ++l) run();
      CHECK(cudaEventRecord(e1));
      CHECK(cudaEventSynchronize(e1));
      float ms = 0;
      CHECK(cudaEventElapsedTime(&ms, e0, e1));
      t.push_back(ms * 1000 / launches);
    }
    std::sort(t.begin(), t.end());
    return static_cast<double>(t[t.size() / 2]);
  };
  double copy = time_us([&] { CHECK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice)); });
  std::printf("N = %lld float64, %d SMs: D2D copy of the same bytes %.1f us (%.0f GB/s read + written)\n",
              static_cast<long long>(n), sms, copy, 2.0 * bytes / copy / 1e3);
  auto check = [&](const char* name) {
    std::vector<double> out(static_cast<std::size_t>(n));
    CHECK(cudaMemcpy(out.data(), b, bytes, cudaMemcpyDeviceToHost));
    for (int64_t i = 0; i < n; ++i)
      if (out[static_cast<std::size_t>(i)] != 2.0 * h[static_cast<std::size_t>(i)] + 1.0) {
        std::printf("%s: WRONG at %lld\n", name, static_cast<long long>(i));
        std::exit(1);
      }
    CHECK(cudaMemset(b, 0, bytes));
  };
  auto report = [&](const char* name, int block, double us) {
    check(name);
    std::printf("| %-6s | %4d | %8.1f us | %.3f of the copy |\n", name, block, us, copy / us);
  };
  for (int block : {128, 256, 512}) {
    auto blocks = [&](int r) { return static_cast<unsigned>((n + int64_t(block) * r - 1) / (int64_t(block) * r)); };
    report("p1", block, time_us([&] { p1<<<blocks(1), block>>>(a, b, n); }));
    report("p2", block, time_us([&] { pr<2><<<blocks(2), block>>>(a, b, n); }));
    report("p4", block, time_us([&] { pr<4><<<blocks(4), block>>>(a, b, n); }));
    report("p8", block, time_us([&] { pr<8><<<blocks(8), block>>>(a, b, n); }));
    report("f2", block, time_us([&] { fr<2><<<blocks(2), block>>>(a, b, n); }));
    report("f4", block, time_us([&] { fr<4><<<blocks(4), block>>>(a, b, n); }));
    report("f8", block, time_us([&] { fr<8><<<blocks(8), block>>>(a, b, n); }));
    report("gs", block, time_us([&] { gs<<<static_cast<unsigned>(sms * 4 * (2048 / block)), block>>>(a, b, n); }));
  }
  return 0;
}
