// What the standalone CUDA experiments of this folder share: CHECK (exit with the CUDA error and
// its line) and the median time per launch of a batch of launches on one stream between CUDA events.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#define CHECK(x)                                                                       \
  do {                                                                                 \
    cudaError_t e_ = (x);                                                              \
    if (e_ != cudaSuccess) {                                                           \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      std::exit(1);                                                                    \
    }                                                                                  \
  } while (0)

/// Microseconds per launch: `launch` once to warm up, then `reps` batches of `calls` launches on
/// `s`, each timed with CUDA events; the median batch.
inline double median_us_per_launch(cudaStream_t s, int calls, int reps, const std::function<void()>& launch) {
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  launch();
  CHECK(cudaStreamSynchronize(s));
  std::vector<float> t;
  for (int r = 0; r < reps; ++r) {
    CHECK(cudaEventRecord(e0, s));
    for (int c = 0; c < calls; ++c) launch();
    CHECK(cudaEventRecord(e1, s));
    CHECK(cudaEventSynchronize(e1));
    float ms;
    CHECK(cudaEventElapsedTime(&ms, e0, e1));
    t.push_back(ms * 1e3f / calls);
  }
  CHECK(cudaEventDestroy(e0));
  CHECK(cudaEventDestroy(e1));
  std::sort(t.begin(), t.end());
  return double(t[reps / 2]);
}
