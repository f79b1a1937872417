// A write-conflicted sum into one address that every thread of a kernel adds into
// (KernelPlan::accumulations, "combined"): the threads of a warp that reach it together add their
// values first (cooperative groups' reduce over the coalesced group), and one of them adds the
// sum atomically, so that one atomic stands for a warp (atomic_add_grouped: for each element the
// warp's threads name). HIP adds per thread. Included by
// generated device code that uses it (compiled by nvcc or hipcc only).
#pragma once

#include "sdfc/gpu_atomics.h"

#if defined(__CUDACC__) && !defined(__HIPCC__)
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#endif

#if defined(__CUDACC__) || defined(__HIPCC__)

namespace sdfc {
namespace gpu {

/// *p += v for 4- and 8-byte integers and floating point, every calling thread naming the same p.
template <typename T>
__device__ inline void atomic_add_combined(T* p, T v) {
#if defined(__CUDACC__) && !defined(__HIPCC__)
  namespace cg = cooperative_groups;
  cg::coalesced_group g = cg::coalesced_threads();
  const T sum = cg::reduce(g, v, cg::plus<T>());
  if (g.thread_rank() == 0) atomic_add(p, sum);
#else
  atomic_add(p, v);
#endif
}

/// *p += v as atomic_add_combined, the calling threads naming any elements: the threads of a warp
/// that reach it together and name the same element add their values first (cooperative groups'
/// labeled partition by address, a warp match instruction: sm_70 and later; per thread before).
template <typename T>
__device__ inline void atomic_add_grouped(T* p, T v) {
#if defined(__CUDACC__) && !defined(__HIPCC__) && (!defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 700)
  namespace cg = cooperative_groups;
  cg::coalesced_group same = cg::labeled_partition(cg::coalesced_threads(), p);
  const T sum = cg::reduce(same, v, cg::plus<T>());
  if (same.thread_rank() == 0) atomic_add(p, sum);
#else
  atomic_add(p, v);
#endif
}

}  // namespace gpu
}  // namespace sdfc

#endif
