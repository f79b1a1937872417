/// \file
/// Exact conversion of numbers into typed buffers (binding arguments by value and from inputs
/// files), and their shortest round-trip text.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "ir/Types.h"

namespace sdfc {

/// Writes `v` as `t` into `out` if the conversion is exact; false otherwise.
template <typename V>
inline bool convert_exact(V v, DType t, unsigned char* out) {
  auto put = [&](auto x) {
    using X = decltype(x);
    if constexpr (std::is_floating_point_v<V>) {
      if (std::isnan(v)) {
        if (!std::is_floating_point_v<X>) return false;
      } else if (static_cast<V>(x) != v) {
        return false;
      }
    } else if (static_cast<V>(x) != v || (std::is_signed_v<V> && !std::is_signed_v<X> && v < 0)) {
      return false;
    }
    std::memcpy(out, &x, sizeof x);
    return true;
  };
  if constexpr (std::is_floating_point_v<V>) {
    // Range checks before casting floats to integers (the cast itself would be undefined).
    auto in_range = [&](double lo, double hi) { return !std::isnan(v) && v >= lo && v <= hi; };
    switch (t) {
      case DType::Int8:
        if (!in_range(-128, 127)) return false;
        break;
      case DType::Int16:
        if (!in_range(-32768, 32767)) return false;
        break;
      case DType::Int32:
        if (!in_range(-2147483648.0, 2147483647.0)) return false;
        break;
      case DType::Int64:
        if (!in_range(-9.2233720368547758e18, 9.2233720368547748e18)) return false;
        break;
      case DType::UInt8:
        if (!in_range(0, 255)) return false;
        break;
      case DType::UInt16:
        if (!in_range(0, 65535)) return false;
        break;
      case DType::UInt32:
        if (!in_range(0, 4294967295.0)) return false;
        break;
      case DType::UInt64:
        if (!in_range(0, 1.8446744073709550e19)) return false;
        break;
      default:
        break;
    }
  }
  switch (t) {
    case DType::Bool:
      return put(static_cast<bool>(v));
    case DType::Int8:
      return put(static_cast<std::int8_t>(v));
    case DType::Int16:
      return put(static_cast<std::int16_t>(v));
    case DType::Int32:
      return put(static_cast<std::int32_t>(v));
    case DType::Int64:
      return put(static_cast<std::int64_t>(v));
    case DType::UInt8:
      return put(static_cast<std::uint8_t>(v));
    case DType::UInt16:
      return put(static_cast<std::uint16_t>(v));
    case DType::UInt32:
      return put(static_cast<std::uint32_t>(v));
    case DType::UInt64:
      return put(static_cast<std::uint64_t>(v));
    case DType::Float32:
      return put(static_cast<float>(v));
    case DType::Float64:
      return put(static_cast<double>(v));
    case DType::Complex64:
    case DType::Complex128: {
      // A real number is a complex number with imaginary part 0.
      DType part = t == DType::Complex64 ? DType::Float32 : DType::Float64;
      if (!convert_exact(v, part, out)) return false;
      return convert_exact(0.0, part, out + dtype_size(part));
    }
    default:
      return false;
  }
}

/// The element at `p` as JSON text: shortest round-trip for floats (as Python's repr), complex
/// numbers as `[re, im]` (the corpus's encoding); NaN and the infinities as the strings "NaN", "Infinity", "-Infinity"
/// (JSON has no such numbers; sdfc run reads the same strings in inputs.json).
std::string format_element(const unsigned char* p, DType t);

}  // namespace sdfc
