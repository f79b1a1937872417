// Experiment (issue 16): does programmatic dependent launch (PDL, sm_90+) bring a graph of a chain
// of k small dependent kernels (N = 1,024 float64, b = a * 1.0001 + 1) close to a graph of k empty
// kernels? Variants, each captured into a CUDA graph and replayed (replay + synchronize, and bare
// replays queued back to back), and in stream mode (k launches + synchronize):
//   empty     k empty kernels (the floor of the issue's targets)
//   plain     k dependent kernels, ordinary launches
//   pdl-end   the same launched with programmatic stream serialization; each kernel waits for its
//             predecessor (griddepcontrol.wait) before it reads; the trigger is implicit (at exit)
//   pdl-early as pdl-end, and each kernel triggers its dependants' launch first thing
//   no-wait   (only checked, not timed) pdl-early without the wait: what a kernel launched this
//             way computes when it does not wait (the race the wait prevents; expected wrong)
// Every variant's result is checked against the host. Standalone:
//   nvcc -O3 -std=c++17 -arch=sm_90 pdl_chain.cu -o pdl && ./pdl [k]
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "experiment.h"

__global__ void empty_kernel() {}

template <int Mode>  // 0 plain, 1 wait only, 2 trigger early + wait, 3 trigger early, no wait
__global__ void step(const double* __restrict__ a, double* __restrict__ b, int n) {
  if (Mode >= 2) cudaTriggerProgrammaticLaunchCompletion();
  if (Mode == 1 || Mode == 2) cudaGridDependencySynchronize();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) b[i] = a[i] * 1.0001 + 1.0;
}

template <int Mode>
void launch(cudaStream_t s, const double* a, double* b, int n) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3((n + 255) / 256);
  cfg.blockDim = dim3(256);
  cfg.stream = s;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr;
  cfg.numAttrs = Mode >= 1 ? 1 : 0;
  CHECK(cudaLaunchKernelEx(&cfg, step<Mode>, a, b, n));
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int main(int argc, char** argv) {
  const int k = argc > 1 ? std::atoi(argv[1]) : 10, n = 1024, batch = 500, rounds = 9;
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  std::vector<double*> buf(k + 1);
  for (auto& p : buf) CHECK(cudaMalloc(&p, n * sizeof(double)));
  std::vector<double> h(n);
  for (int i = 0; i < n; ++i) h[i] = 0.001 * i;
  CHECK(cudaMemcpy(buf[0], h.data(), n * sizeof(double), cudaMemcpyHostToDevice));
  std::vector<double> want = h;
  for (int r = 0; r < k; ++r)
    for (auto& x : want) x = x * 1.0001 + 1.0;

  auto enqueue = [&](int mode) {
    for (int i = 0; i < k; ++i) {
      if (mode == 0) {
        empty_kernel<<<1, 1, 0, s>>>();
        continue;
      }
      if (mode == 1) launch<0>(s, buf[i], buf[i + 1], n);
      if (mode == 2) launch<1>(s, buf[i], buf[i + 1], n);
      if (mode == 3) launch<2>(s, buf[i], buf[i + 1], n);
      if (mode == 4) launch<3>(s, buf[i], buf[i + 1], n);
    }
  };
  {  // the race without the wait, in stream mode (expected: a nonzero error)
    CHECK(cudaMemset(buf[k], 0, n * sizeof(double)));
    for (int i = 1; i <= k; ++i) CHECK(cudaMemset(buf[i], 0, n * sizeof(double)));
    enqueue(4);
    CHECK(cudaStreamSynchronize(s));
    std::vector<double> got(n);
    CHECK(cudaMemcpy(got.data(), buf[k], n * sizeof(double), cudaMemcpyDeviceToHost));
    double err = 0;
    for (int i = 0; i < n; ++i) err = std::max(err, std::fabs(got[i] - want[i]));
    std::printf("no-wait   stream: max error %.3g (the race a missing wait would be)\n", err);
  }
  const char* names[] = {"empty", "plain", "pdl-end", "pdl-early"};
  cudaGraphExec_t ge[4];
  for (int m = 0; m < 4; ++m) {
    cudaGraph_t g;
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    enqueue(m);
    CHECK(cudaStreamEndCapture(s, &g));
    CHECK(cudaGraphInstantiate(&ge[m], g, 0));
    if (m == 0) continue;
    // correctness, graph and stream
    for (int how = 0; how < 2; ++how) {
      CHECK(cudaMemset(buf[k], 0, n * sizeof(double)));
      if (how == 0)
        CHECK(cudaGraphLaunch(ge[m], s));
      else
        enqueue(m);
      CHECK(cudaStreamSynchronize(s));
      std::vector<double> got(n);
      CHECK(cudaMemcpy(got.data(), buf[k], n * sizeof(double), cudaMemcpyDeviceToHost));
      double err = 0;
      for (int i = 0; i < n; ++i) err = std::max(err, std::fabs(got[i] - want[i]));
      std::printf("%-9s %s: max error %.3g\n", names[m], how == 0 ? "graph " : "stream", err);
      if (err > 1e-9) return 1;
    }
  }
  // interleaved rounds, median (microseconds per call)
  std::vector<double> t[4][3];
  for (int round = 0; round < rounds; ++round) {
    for (int m = 0; m < 4; ++m) {
      auto t0 = std::chrono::steady_clock::now();
      for (int r = 0; r < batch; ++r) {
        CHECK(cudaGraphLaunch(ge[m], s));
        CHECK(cudaStreamSynchronize(s));
      }
      t[m][0].push_back(seconds_since(t0) / batch * 1e6);
      t0 = std::chrono::steady_clock::now();
      for (int r = 0; r < batch; ++r) CHECK(cudaGraphLaunch(ge[m], s));
      CHECK(cudaStreamSynchronize(s));
      t[m][1].push_back(seconds_since(t0) / batch * 1e6);
      t0 = std::chrono::steady_clock::now();
      for (int r = 0; r < batch; ++r) {
        enqueue(m);
        CHECK(cudaStreamSynchronize(s));
      }
      t[m][2].push_back(seconds_since(t0) / batch * 1e6);
    }
  }
  auto med = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  std::printf("k = %d, N = %d; us per call, median of %d batches of %d\n", k, n, rounds, batch);
  std::printf("%-9s %14s %14s %16s\n", "variant", "replay+sync", "bare replay", "stream+sync");
  for (int m = 0; m < 4; ++m)
    std::printf("%-9s %8.2f (%.2fx) %8.2f (%.2fx) %10.2f (%.2fx)\n", names[m], med(t[m][0]),
                med(t[m][0]) / med(t[0][0]), med(t[m][1]), med(t[m][1]) / med(t[0][1]), med(t[m][2]),
                med(t[m][2]) / med(t[0][2]));
  return 0;
}
