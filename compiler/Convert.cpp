#include "compiler/Convert.h"

#include <fmt/format.h>

namespace sdfc {
namespace {
template <typename T>
std::string float_text(T v) {
  // JSON has no NaN or infinities: the strings sdfc run reads on input (compiler/Convert.h).
  if (std::isnan(v)) return "\"NaN\"";
  if (std::isinf(v)) return v > 0 ? "\"Infinity\"" : "\"-Infinity\"";
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}
template <typename T>
T load(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
}  // namespace

std::string format_element(const unsigned char* p, DType t) {
  switch (t) {
    case DType::Bool:
      return load<bool>(p) ? "true" : "false";
    case DType::Int8:
      return std::to_string(load<std::int8_t>(p));
    case DType::Int16:
      return std::to_string(load<std::int16_t>(p));
    case DType::Int32:
      return std::to_string(load<std::int32_t>(p));
    case DType::Int64:
      return std::to_string(load<std::int64_t>(p));
    case DType::UInt8:
      return std::to_string(load<std::uint8_t>(p));
    case DType::UInt16:
      return std::to_string(load<std::uint16_t>(p));
    case DType::UInt32:
      return std::to_string(load<std::uint32_t>(p));
    case DType::UInt64:
      return std::to_string(load<std::uint64_t>(p));
    case DType::Float32:
      return float_text(load<float>(p));
    case DType::Float64:
      return float_text(load<double>(p));
    case DType::Complex64:
      return "[" + float_text(load<float>(p)) + ", " + float_text(load<float>(p + 4)) + "]";
    case DType::Complex128:
      return "[" + float_text(load<double>(p)) + ", " + float_text(load<double>(p + 8)) + "]";
    default:
      return "null";
  }
}

}  // namespace sdfc
