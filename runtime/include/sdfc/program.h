// The part of the sdfc runtime every generated program includes (CPU, CUDA and HIP host code):
// error recording (the first error wins), atomic read-modify-write for write-conflict resolution,
// and the export macro. Everything here is inline or hidden, so that many sdfc-built libraries
// live in one process without clashing.
#pragma once

#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <new>
#include <unordered_set>

#include "sdfc/rt.h"

/// Marks the C entry points a program exports (DaCe's ABI and sdfc's own `__sdfc_` hooks).
#define SDFC_EXPORT extern "C" __attribute__((visibility("default")))

namespace sdfc {
namespace rt {

/// The first error a program instance hit; later errors do not overwrite it.
struct ErrorSlot {
  int set = 0;
  char message[1024] = {};
};

__attribute__((format(printf, 2, 3))) inline void record_error(ErrorSlot& slot, const char* fmt, ...) {
  if (slot.set) return;
  slot.set = 1;
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(slot.message, sizeof slot.message, fmt, ap);
  va_end(ap);
}

/// The live handles of one program library (each library has its own): __dace_init_ adds, __dace_exit_
/// removes, and every exported function that takes a handle checks it first, so that a null handle,
/// a call after exit and a second exit are refused with a message instead of touching freed
/// memory. A lookup is a mutex and a hash probe (tens of nanoseconds) per call.
class HandleRegistry {
 public:
  void add(const void* h) {
    std::lock_guard<std::mutex> lock(mutex_);
    live_.insert(h);
  }
  bool remove(const void* h) {
    std::lock_guard<std::mutex> lock(mutex_);
    return live_.erase(h) > 0;
  }
  bool live(const void* h) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return h && live_.count(h) > 0;
  }

 private:
  mutable std::mutex mutex_;
  std::unordered_set<const void*> live_;
};

/// Rounds up to a multiple of `a` (a power of two).
inline std::size_t align_up(std::size_t x, std::size_t a) {
  return (x + a - 1) & ~(a - 1);
}

/// Atomically replaces *p by f(*p, v) (compare-and-swap loop); for write-conflict resolution
/// with min, max and general lambdas under OpenMP.
template <typename T, typename F>
inline void atomic_update(T* p, T v, F f) {
  static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8, "unsupported atomic size");
  T expected;
  __atomic_load(p, &expected, __ATOMIC_RELAXED);
  T desired = f(expected, v);
  while (!__atomic_compare_exchange(p, &expected, &desired, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
    desired = f(expected, v);
}

}  // namespace rt
}  // namespace sdfc
