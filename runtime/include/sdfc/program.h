// The part of the sdfc runtime every generated program includes (CPU, CUDA and HIP host code):
// error recording (the first error wins), atomic read-modify-write for write-conflict resolution,
// and the export macro. Everything here is inline or hidden, so that many sdfc-built libraries
// live in one process without clashing.
#pragma once

#include <pthread.h>

#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <new>
#include <utility>

#include "sdfc/rt.h"

/// Marks the C entry points a program exports (DaCe's ABI and sdfc's own `__sdfc_` hooks).
#define SDFC_EXPORT extern "C" __attribute__((visibility("default")))

namespace sdfc {
namespace rt {

/// Holds a mutex for its scope. POSIX's mutex, not <mutex>: sdfc's runtime headers include only
/// what is cheap to compile (each generated program reads them; DaCe's whole environment is
/// included only where a program's own C++ code may need it, lang/CppEnvironment.h).
class Lock {
 public:
  explicit Lock(pthread_mutex_t* m) : m_(m) { pthread_mutex_lock(m_); }
  ~Lock() { pthread_mutex_unlock(m_); }
  Lock(const Lock&) = delete;
  Lock& operator=(const Lock&) = delete;

 private:
  pthread_mutex_t* m_;
};

/// The first error a program instance hit; later errors do not overwrite it.
struct ErrorSlot {
  int set = 0;
  char message[1024] = {};
};

/// The first exception thrown by an iteration of an OpenMP parallel loop (an exception must not
/// leave the parallel region): each iteration's body catches into it, the loop's end rethrows it.
class LoopErrors {
 public:
  LoopErrors() = default;
  LoopErrors(const LoopErrors&) = delete;
  LoopErrors& operator=(const LoopErrors&) = delete;
  void capture() noexcept {
    Lock lock(&mutex_);
    if (!first_) first_ = std::current_exception();
  }
  void rethrow() {
    if (first_) std::rethrow_exception(first_);
  }

 private:
  pthread_mutex_t mutex_ = PTHREAD_MUTEX_INITIALIZER;
  std::exception_ptr first_;
};

/// Runs a release when its scope is left by an exception (a size refused, or memory exhausted,
/// after earlier allocations of the same call): generated code frees on the normal path itself,
/// in the order the passes decided, and declares one of these after each heap allocation.
template <class F>
class OnUnwind {
 public:
  explicit OnUnwind(F release) : release_(std::move(release)), pending_(std::uncaught_exceptions()) {}
  OnUnwind(const OnUnwind&) = delete;
  OnUnwind& operator=(const OnUnwind&) = delete;
  ~OnUnwind() {
    if (std::uncaught_exceptions() > pending_) release_();
  }

 private:
  F release_;
  int pending_;
};
template <class F>
OnUnwind<F> on_unwind(F release) {
  return OnUnwind<F>(std::move(release));
}

/// Prints a refusal on stderr the first time its message occurs in this library (programs built
/// with `--dace-layout` define SDFC_REPORT_REFUSALS: DaCe's loader never reads __sdfc_last_error,
/// so its users would otherwise see only "An error was detected" at finalize).
inline void report_refusal(const char* message) {
#ifdef SDFC_REPORT_REFUSALS
  // A plain table, not a std::unordered_set<std::string> (see Lock).
  static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
  static char* seen[1024];
  static std::size_t count = 0;
  Lock lock(&mutex);
  for (std::size_t i = 0; i < count; ++i)
    if (std::strcmp(seen[i], message) == 0) return;
  if (count == sizeof seen / sizeof seen[0]) return;
  std::size_t n = std::strlen(message) + 1;
  char* copy = static_cast<char*>(std::malloc(n));
  if (!copy) return;
  std::memcpy(copy, message, n);
  seen[count++] = copy;
  std::fprintf(stderr, "sdfc: %s\n", message);
#else
  (void)message;
#endif
}

__attribute__((format(printf, 2, 3))) inline void record_error(ErrorSlot& slot, const char* fmt, ...) {
  char message[sizeof slot.message];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(message, sizeof message, fmt, ap);
  va_end(ap);
  report_refusal(message);
  if (slot.set) return;
  slot.set = 1;
  std::memcpy(slot.message, message, sizeof message);
}

/// The live handles of one program library (each library has its own): __dace_init_ adds, __dace_exit_
/// removes, and every exported function that takes a handle checks it first, so that a null handle,
/// a call after exit and a second exit are refused with a message instead of touching freed
/// memory. A lookup is a mutex and a scan of the live handles (a program has a few; the most
/// recently made is found first). A plain array, not a std::unordered_set (see Lock).
class HandleRegistry {
 public:
  HandleRegistry() = default;
  HandleRegistry(const HandleRegistry&) = delete;
  HandleRegistry& operator=(const HandleRegistry&) = delete;
  ~HandleRegistry() { std::free(live_); }
  /// False when memory for the table is exhausted (the caller refuses to make the handle).
  bool add(const void* h) {
    Lock lock(&mutex_);
    if (count_ == capacity_) {
      std::size_t capacity = capacity_ ? 2 * capacity_ : 8;
      void* grown = std::realloc(static_cast<void*>(live_), capacity * sizeof(const void*));
      if (!grown) return false;
      live_ = static_cast<const void**>(grown);
      capacity_ = capacity;
    }
    live_[count_++] = h;
    return true;
  }
  bool remove(const void* h) {
    Lock lock(&mutex_);
    std::size_t i = find(h);
    if (i == count_) return false;
    live_[i] = live_[--count_];
    return true;
  }
  bool live(const void* h) const {
    Lock lock(&mutex_);
    return h && find(h) != count_;
  }

 private:
  std::size_t find(const void* h) const {
    for (std::size_t i = count_; i-- > 0;)
      if (live_[i] == h) return i;
    return count_;
  }
  mutable pthread_mutex_t mutex_ = PTHREAD_MUTEX_INITIALIZER;
  const void** live_ = nullptr;
  std::size_t count_ = 0, capacity_ = 0;
};

/// A size (element count or bytes) computed from symbol values with every step checked: `ok`
/// turns false when a step overflows 64 bits or divides by zero, and stays false. Generated code
/// computes the sizes of the containers it allocates with these (not with the symbols' C types,
/// where `N * M` of two `int` symbols overflows at 2^31 elements), then `element_count` refuses a
/// failed or negative size before anything is allocated.
struct Size {
  std::int64_t v = 0;
  bool ok = true;
};
template <typename T>
inline Size size(T v) {
  static_assert(std::is_integral_v<T>, "sizes are computed from integer symbols");
  if constexpr (std::is_unsigned_v<T>)
    if (v > static_cast<std::make_unsigned_t<std::int64_t>>(std::numeric_limits<std::int64_t>::max()))
      return {0, false};
  return {static_cast<std::int64_t>(v), true};
}
inline Size size_add(Size a, Size b) {
  Size r;
  r.ok = a.ok && b.ok && !__builtin_add_overflow(a.v, b.v, &r.v);
  return r;
}
inline Size size_sub(Size a, Size b) {
  Size r;
  r.ok = a.ok && b.ok && !__builtin_sub_overflow(a.v, b.v, &r.v);
  return r;
}
inline Size size_mul(Size a, Size b) {
  Size r;
  r.ok = a.ok && b.ok && !__builtin_mul_overflow(a.v, b.v, &r.v);
  return r;
}
inline Size size_neg(Size a) {
  return size_sub(Size{0, true}, a);
}
/// Python's floor division and modulo (the sign of the divisor).
inline Size size_floordiv(Size a, Size b) {
  if (!a.ok || !b.ok || b.v == 0 || (a.v == std::numeric_limits<std::int64_t>::min() && b.v == -1)) return {0, false};
  std::int64_t q = a.v / b.v;
  if ((a.v % b.v != 0) && ((a.v < 0) != (b.v < 0))) --q;
  return {q, true};
}
inline Size size_ceildiv(Size a, Size b) {
  return size_neg(size_floordiv(size_neg(a), b));
}
inline Size size_mod(Size a, Size b) {
  Size q = size_floordiv(a, b);
  return size_sub(a, size_mul(q, b));
}
inline Size size_pow(Size a, Size b) {
  if (!a.ok || !b.ok || b.v < 0) return {0, false};
  Size r{1, true};
  for (std::int64_t k = 0; k < b.v && r.ok; ++k) r = size_mul(r, a);
  return r;
}
inline Size size_max(Size a, Size b) {
  return {a.v > b.v ? a.v : b.v, a.ok && b.ok};
}
inline Size size_min(Size a, Size b) {
  return {a.v < b.v ? a.v : b.v, a.ok && b.ok};
}
inline Size size_abs(Size a) {
  return a.v < 0 ? size_neg(a) : a;
}

/// Whether `n` elements of `element_bytes` each fit in `bytes` (false when `n` overflowed or is negative).
inline bool size_fits(Size n, std::size_t element_bytes, std::size_t bytes) {
  return n.ok && n.v >= 0 && static_cast<std::uint64_t>(n.v) <= bytes / (element_bytes ? element_bytes : 1);
}

/// Thrown by `element_count`; the exported function that called the program records its message.
class SizeError : public std::exception {
 public:
  explicit SizeError(const char* message) { std::snprintf(message_, sizeof message_, "%s", message); }
  const char* what() const noexcept override { return message_; }

 private:
  char message_[512];
};

/// The element count `n` of `what` (`text`: its size expression, as the SDFG writes it): refuses
/// a size whose computation overflowed, a negative one, and one whose bytes (`element_bytes` per
/// element) do not fit in size_t.
inline std::size_t element_count(Size n, std::size_t element_bytes, const char* what, const char* text) {
  char message[512];
  if (!n.ok)
    std::snprintf(message, sizeof message, "%s would have %s elements, which overflows 64 bits for these symbol values",
                  what, text);
  else if (n.v < 0)
    std::snprintf(message, sizeof message,
                  "%s would have %s = %lld elements for these symbol values; sizes must not be negative", what, text,
                  static_cast<long long>(n.v));
  else if (element_bytes && static_cast<std::uint64_t>(n.v) > std::numeric_limits<std::size_t>::max() / element_bytes)
    std::snprintf(message, sizeof message,
                  "%s would have %s = %lld elements of %zu bytes, more than memory can address", what, text,
                  static_cast<long long>(n.v), element_bytes);
  else
    return static_cast<std::size_t>(n.v);
  throw SizeError(message);
}

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
