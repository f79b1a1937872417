#include "ir/Types.h"

#include <algorithm>
#include <array>
#include <deque>
#include <mutex>

#include "ir/Diagnostic.h"

namespace sdfc {
namespace {

template <typename E, std::size_t N>
struct EnumTable {
  std::array<std::string_view, N> names;

  std::string_view name(E e) const { return names[static_cast<std::size_t>(e)]; }
  std::optional<E> parse(std::string_view s) const {
    for (std::size_t i = 0; i < N; ++i)
      if (names[i] == s) return static_cast<E>(i);
    return std::nullopt;
  }
  std::string list() const {
    std::string out;
    for (std::size_t i = 0; i < N; ++i) {
      if (i) out += ", ";
      out += names[i];
    }
    return out;
  }
};

constexpr EnumTable<DType, 14> kDTypes{{"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                                        "uint64", "float16", "float32", "float64", "complex64", "complex128"}};
constexpr EnumTable<StorageType, 7> kStorage{
    {"Default", "Register", "CPU_Pinned", "CPU_Heap", "CPU_ThreadLocal", "GPU_Global", "GPU_Shared"}};
constexpr EnumTable<ScheduleType, 5> kSchedules{
    {"Default", "Sequential", "CPU_Multicore", "GPU_Device", "GPU_ThreadBlock"}};
constexpr EnumTable<Lifetime, 6> kLifetimes{{"Scope", "State", "SDFG", "Global", "Persistent", "External"}};
constexpr EnumTable<Language, 2> kLanguages{{"Python", "CPP"}};

constexpr std::array<std::string_view, 14> kCTypes{
    "bool",         "int8_t",   "int16_t",       "int",   "int64_t", "uint8_t",         "uint16_t",
    "unsigned int", "uint64_t", "dace::float16", "float", "double",  "dace::complex64", "dace::complex128"};
constexpr std::array<std::size_t, 14> kSizes{1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 4, 8, 8, 16};

constexpr std::size_t kScalarTypes = 14;

/// Interned struct types: DType value kScalarTypes + i is types()[i]. A deque, so that names and
/// fields handed out stay where they are while others are added.
struct StructRegistry {
  std::mutex mutex;
  std::deque<StructType> types;
  std::deque<std::size_t> sizes;
};
StructRegistry& registry() {
  static StructRegistry r;
  return r;
}

std::size_t struct_size(const StructType& s) {
  std::size_t size = 0, align = 1;
  for (auto& [name, t] : s.fields) {
    bool pointer = s.is_pointer(name);
    SDFC_ASSERT(pointer || static_cast<std::size_t>(t) < kScalarTypes, "struct field of struct type by value: " + name);
    std::size_t n = pointer ? sizeof(void*) : kSizes[static_cast<std::size_t>(t)];
    std::size_t a = pointer ? alignof(void*) : t == DType::Complex64 ? 4 : t == DType::Complex128 ? 8 : n;
    size = (size + a - 1) / a * a + n;
    align = std::max(align, a);
  }
  return (size + align - 1) / align * align;
}

}  // namespace

DType intern_struct(const StructType& s) {
  StructRegistry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (std::size_t i = 0; i < r.types.size(); ++i)
    if (r.types[i] == s) return static_cast<DType>(kScalarTypes + i);
  r.types.push_back(s);
  r.sizes.push_back(struct_size(s));
  return static_cast<DType>(kScalarTypes + r.types.size() - 1);
}

const StructType* struct_of(DType t) {
  auto i = static_cast<std::size_t>(t);
  if (i < kScalarTypes) return nullptr;
  StructRegistry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return i - kScalarTypes < r.types.size() ? &r.types[i - kScalarTypes] : nullptr;
}

std::optional<DType> struct_field(DType t, const std::string& field) {
  if (const StructType* s = struct_of(t))
    for (auto& [name, type] : s->fields)
      if (name == field) return type;
  return std::nullopt;
}

std::string_view to_string(DType t) {
  if (const StructType* s = struct_of(t)) return s->name;
  return kDTypes.name(t);
}
std::string_view to_string(StorageType t) {
  return kStorage.name(t);
}
std::string_view to_string(ScheduleType t) {
  return kSchedules.name(t);
}
std::string_view to_string(Lifetime t) {
  return kLifetimes.name(t);
}
std::string_view to_string(Language t) {
  return kLanguages.name(t);
}

std::optional<DType> parse_dtype(std::string_view s) {
  if (s.substr(0, 5) == "dace.") s.remove_prefix(5);
  if (s == "bool_") s = "bool";
  return kDTypes.parse(s);
}
std::optional<StorageType> parse_storage(std::string_view s) {
  return kStorage.parse(s);
}
std::optional<ScheduleType> parse_schedule(std::string_view s) {
  return kSchedules.parse(s);
}
std::optional<Lifetime> parse_lifetime(std::string_view s) {
  return kLifetimes.parse(s);
}
std::optional<Language> parse_language(std::string_view s) {
  return kLanguages.parse(s);
}

std::string dtype_names() {
  return kDTypes.list();
}
std::string storage_names() {
  return kStorage.list();
}
std::string schedule_names() {
  return kSchedules.list();
}
std::string lifetime_names() {
  return kLifetimes.list();
}

std::size_t dtype_size(DType t) {
  if (is_struct(t)) {
    StructRegistry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    return r.sizes[static_cast<std::size_t>(t) - kScalarTypes];
  }
  return kSizes[static_cast<std::size_t>(t)];
}
std::string_view dtype_ctype(DType t) {
  if (const StructType* s = struct_of(t)) return s->name;
  return kCTypes[static_cast<std::size_t>(t)];
}

bool is_integer(DType t) {
  return t >= DType::Int8 && t <= DType::UInt64;
}
DType symbol_value_type(DType declared) {
  return is_integer(declared) ? DType::Int64 : declared;
}
bool is_float(DType t) {
  return t >= DType::Float16 && t <= DType::Float64;
}
bool is_signed(DType t) {
  return (t >= DType::Int8 && t <= DType::Int64) || (t >= DType::Float16 && t <= DType::Complex128);
}

bool is_gpu_storage(StorageType s) {
  return s == StorageType::GPU_Global || s == StorageType::GPU_Shared;
}
bool is_gpu_schedule(ScheduleType s) {
  return s == ScheduleType::GPU_Device || s == ScheduleType::GPU_ThreadBlock;
}

}  // namespace sdfc
