// Experiment (issue 16): where does a blocking graph-mode call lose time against the floor (a
// graph of k empty kernels replayed on a non-blocking stream, then cudaStreamSynchronize)? A
// blocking call replays on the legacy default stream (the stream a plain call's kernels run on,
// ordered with the caller's default-stream work) and synchronizes it. Variants, each a replay +
// synchronize of the same graph (k empty kernels, or k dependent kernels launched as programmatic
// dependent launches, as sdfc emits them on sm_90+), on:
//   nonblocking  a stream created with cudaStreamNonBlocking (the floor's stream)
//   blocking     a stream created with default flags (ordered with the legacy stream)
//   legacy       the legacy default stream (0)
//   per-thread   cudaStreamPerThread
// and, on the legacy stream, with the host waiting through an event (record + cudaEventSynchronize)
// instead of cudaStreamSynchronize. Median of interleaved batches. Standalone:
//   nvcc -O3 -std=c++17 -arch=sm_90 blocking_replay.cu -o br && ./br [k]
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "experiment.h"

__global__ void empty_kernel() {}

__global__ void step(const double* __restrict__ a, double* __restrict__ b, int n) {
  cudaTriggerProgrammaticLaunchCompletion();
  cudaGridDependencySynchronize();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) b[i] = a[i] * 1.0001 + 1.0;
}

static double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main(int argc, char** argv) {
  int k = argc > 1 ? std::atoi(argv[1]) : 10;
  const int n = 1024, rounds = 15, batch = 400;
  cudaStream_t cap, nb, bl;
  CHECK(cudaStreamCreateWithFlags(&cap, cudaStreamNonBlocking));
  CHECK(cudaStreamCreateWithFlags(&nb, cudaStreamNonBlocking));
  CHECK(cudaStreamCreate(&bl));
  cudaEvent_t done;
  CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
  double *a, *b;
  CHECK(cudaMalloc(&a, n * 8));
  CHECK(cudaMalloc(&b, n * 8));
  CHECK(cudaMemset(a, 0, n * 8));
  cudaGraphExec_t graphs[2];
  for (int g = 0; g < 2; ++g) {
    cudaGraph_t graph;
    CHECK(cudaStreamBeginCapture(cap, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < k; ++i) {
      if (g == 0) {
        empty_kernel<<<1, 1, 0, cap>>>();
        continue;
      }
      cudaLaunchConfig_t cfg = {};
      cfg.gridDim = dim3((n + 255) / 256);
      cfg.blockDim = dim3(256);
      cfg.stream = cap;
      cudaLaunchAttribute attr[1];
      attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
      attr[0].val.programmaticStreamSerializationAllowed = 1;
      cfg.attrs = attr;
      cfg.numAttrs = 1;
      CHECK(cudaLaunchKernelEx(&cfg, step, i % 2 ? b : a, i % 2 ? a : b, n));
    }
    CHECK(cudaStreamEndCapture(cap, &graph));
    CHECK(cudaGraphInstantiate(&graphs[g], graph, 0));
  }
  const char* names[] = {"nonblocking", "blocking", "legacy", "per-thread", "legacy, event wait"};
  cudaStream_t streams[] = {nb, bl, 0, cudaStreamPerThread, 0};
  const int nv = 5;
  for (int g = 0; g < 2; ++g) {
    std::vector<std::vector<double>> t(nv);
    for (int v = 0; v < nv; ++v) {  // warm-up
      CHECK(cudaGraphLaunch(graphs[g], streams[v]));
      CHECK(cudaStreamSynchronize(streams[v]));
    }
    for (int r = 0; r < rounds; ++r)
      for (int v = 0; v < nv; ++v) {
        auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < batch; ++i) {
          CHECK(cudaGraphLaunch(graphs[g], streams[v]));
          if (v == 4) {
            CHECK(cudaEventRecord(done, streams[v]));
            CHECK(cudaEventSynchronize(done));
          } else {
            CHECK(cudaStreamSynchronize(streams[v]));
          }
        }
        t[v].push_back(seconds_since(t0) / batch * 1e6);
      }
    double floor = median(t[0]);
    for (int v = 0; v < nv; ++v)
      std::printf("| %s, %d kernels | replay + sync on %s | %.2f us | %.2f x nonblocking |\n",
                  g ? "dependent launches" : "empty", k, names[v], median(t[v]), median(t[v]) / floor);
  }
  return 0;
}
