// Device-side atomics for write-conflict resolution in generated CUDA/HIP kernels: addition for
// every element type (float64 included) and a compare-and-swap loop for min, max and general
// lambdas. Compiled by nvcc or hipcc only.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__) || defined(__HIPCC__)

namespace sdfc {
namespace gpu {

template <typename T>
__device__ inline void atomic_add(T* p, T v) {
  atomicAdd(p, v);
}
__device__ inline void atomic_add(std::int64_t* p, std::int64_t v) {
  atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
}
__device__ inline void atomic_add(std::uint64_t* p, std::uint64_t v) {
  atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
}

/// *p = f(*p, v), atomically, for 4- and 8-byte types.
template <typename T, typename F>
__device__ inline void atomic_update(T* p, T v, F f) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "atomic_update needs a 4- or 8-byte type");
  using Bits = typename std::conditional<sizeof(T) == 4, unsigned int, unsigned long long>::type;
  Bits* addr = reinterpret_cast<Bits*>(p);
  Bits old = *addr, assumed;
  do {
    assumed = old;
    T cur;
    memcpy(&cur, &assumed, sizeof(T));
    T next = f(cur, v);
    Bits next_bits;
    memcpy(&next_bits, &next, sizeof(T));
    old = atomicCAS(addr, assumed, next_bits);
  } while (old != assumed);
}

}  // namespace gpu
}  // namespace sdfc

#endif
