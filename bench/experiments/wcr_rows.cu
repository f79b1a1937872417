// Experiment (issue 39): a map whose tasklet adds each element into a write-conflicted sum, as the
// corpus's colsum_wcr_s does (int32 A[N][M]; colsum[j] += A[i][j]; total[0] += A[i][j]). sdfc and
// DaCe both printed one atomic per element and destination (0.05 of the roofline on the H100): the
// single address total[0] takes every warp's atomic in turn. How many atomics are left, and how
// fast it runs, when each thread adds its rows (points along i) in registers first, and the
// threads that share an address combine before the atomic?
// Variants (each checked against the host), blocks of 64 x 4 threads (x along j), R rows per thread:
//   elemR    one atomic per element and destination (what sdfc printed: R = 4)
//   accR     the thread's R rows summed in registers: one atomic per thread and destination
//   warpR    as accR, and total[0]'s partial sums combined by the threads of a warp that reach it
//            together (cooperative groups' coalesced group) before one atomic
//   blockR   as warpR, and the warps of a block combined in shared memory (no early exit: the
//            block's threads all reach the barrier) before one atomic per block
// Standalone: nvcc -O3 -std=c++17 -arch=sm_90 wcr_rows.cu -o wcr && ./wcr [N M]
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "experiment.h"

namespace cg = cooperative_groups;

template <int R>
__global__ void elem(const int* __restrict__ a, int* __restrict__ colsum, int* __restrict__ total, int64_t m,
                     int64_t n) {
  const int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= m) return;
  const int64_t i0 = (static_cast<int64_t>(blockIdx.y) * blockDim.y + threadIdx.y) * R;
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const int64_t i = i0 + r;
    if (i >= n) return;
    const int v = a[m * i + j];
    atomicAdd(&colsum[j], v);
    atomicAdd(&total[0], v);
  }
}

// Mode 0: per-thread atomics; 1: total combined per coalesced group; 2: per block.
template <int R, int Mode>
__global__ void acc(const int* __restrict__ a, int* __restrict__ colsum, int* __restrict__ total, int64_t m,
                    int64_t n) {
  const int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (Mode != 2 && j >= m) return;
  const int64_t i0 = (static_cast<int64_t>(blockIdx.y) * blockDim.y + threadIdx.y) * R;
  int c = 0, t = 0;
  if (j < m) {
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const int64_t i = i0 + r;
      if (i >= n) break;
      const int v = a[m * i + j];
      c += v;
      t += v;
    }
    atomicAdd(&colsum[j], c);
  }
  if (Mode == 0) {
    atomicAdd(&total[0], t);
  } else if (Mode == 1) {
    cg::coalesced_group g = cg::coalesced_threads();
    int s = cg::reduce(g, t, cg::plus<int>());
    if (g.thread_rank() == 0) atomicAdd(&total[0], s);
  } else {
    __shared__ int part[32];
    cg::thread_block_tile<32> w = cg::tiled_partition<32>(cg::this_thread_block());
    int s = cg::reduce(w, t, cg::plus<int>());
    const unsigned warp = (threadIdx.z * blockDim.y * blockDim.x + threadIdx.y * blockDim.x + threadIdx.x) / 32;
    const unsigned warps = (blockDim.x * blockDim.y * blockDim.z + 31) / 32;
    if (w.thread_rank() == 0) part[warp] = s;
    __syncthreads();
    if (warp == 0) {
      int p = w.thread_rank() < warps ? part[w.thread_rank()] : 0;
      p = cg::reduce(w, p, cg::plus<int>());
      if (w.thread_rank() == 0) atomicAdd(&total[0], p);
    }
  }
}

int main(int argc, char** argv) {
  const int64_t n = argc > 2 ? std::atoll(argv[1]) : 5495, m = argc > 2 ? std::atoll(argv[2]) : 3053;
  std::vector<int> h(static_cast<size_t>(n * m));
  for (size_t k = 0; k < h.size(); ++k) h[k] = static_cast<int>((k * 2654435761u) % 97) - 48;
  std::vector<long long> want_col(static_cast<size_t>(m), 0);
  long long want_total = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j) {
      want_col[static_cast<size_t>(j)] += h[static_cast<size_t>(i * m + j)];
      want_total += h[static_cast<size_t>(i * m + j)];
    }
  int *a, *col, *tot, *copy;
  CHECK(cudaMalloc(&a, h.size() * sizeof(int)));
  CHECK(cudaMalloc(&copy, h.size() * sizeof(int)));
  CHECK(cudaMalloc(&col, m * sizeof(int)));
  CHECK(cudaMalloc(&tot, sizeof(int)));
  CHECK(cudaMemcpy(a, h.data(), h.size() * sizeof(int), cudaMemcpyHostToDevice));
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  const double read_us = median_us_per_launch(
      s, 20, 7, [&] { cudaMemcpyAsync(copy, a, h.size() * sizeof(int), cudaMemcpyDeviceToDevice, s); });
  // a copy reads and writes; the sums only read A: the floor is half a copy's time
  std::printf("N %lld M %lld: read floor (half a D2D copy) %.1f us\n", static_cast<long long>(n),
              static_cast<long long>(m), read_us / 2);
  const dim3 block(64, 4, 1);
  int failures = 0;
  auto run = [&](const char* name, int rows, auto kernel) {
    const dim3 grid(static_cast<unsigned>((m + 63) / 64), static_cast<unsigned>((n + 4 * rows - 1) / (4 * rows)), 1);
    auto once = [&] {
      cudaMemsetAsync(col, 0, m * sizeof(int), s);
      cudaMemsetAsync(tot, 0, sizeof(int), s);
      kernel<<<grid, block, 0, s>>>(a, col, tot, m, n);
    };
    once();
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaGetLastError());
    std::vector<int> got(static_cast<size_t>(m));
    int got_total;
    CHECK(cudaMemcpy(got.data(), col, m * sizeof(int), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(&got_total, tot, sizeof(int), cudaMemcpyDeviceToHost));
    bool ok = got_total == static_cast<int>(want_total);
    for (int64_t j = 0; j < m; ++j)
      ok = ok && got[static_cast<size_t>(j)] == static_cast<int>(want_col[static_cast<size_t>(j)]);
    failures += !ok;
    const double us = median_us_per_launch(s, 20, 7, once);
    std::printf("%-8s R=%-2d %9.1f us  %.2f of the floor  %s\n", name, rows, us, read_us / 2 / us, ok ? "ok" : "WRONG");
  };
  run("elem", 4, elem<4>);
  run("acc", 4, acc<4, 0>);
  run("acc", 16, acc<16, 0>);
  run("acc", 32, acc<32, 0>);
  run("warp", 4, acc<4, 1>);
  run("warp", 8, acc<8, 1>);
  run("warp", 16, acc<16, 1>);
  run("warp", 32, acc<32, 1>);
  run("block", 4, acc<4, 2>);
  run("block", 8, acc<8, 2>);
  run("block", 16, acc<16, 2>);
  std::printf(failures ? "%d variant(s) WRONG\n" : "all variants equal to the host\n", failures);
  return failures ? 1 : 0;
}
