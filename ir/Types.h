/// \file
/// Closed enums of the IR (DaCe's dtypes, storage, schedules, lifetimes, languages) with their
/// DaCe spellings. Parsing returns false for a name that is not in the enum.
#pragma once

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sdfc {

/// Element types (DaCe typeclass names).
enum class DType {
  Bool,
  Int8,
  Int16,
  Int32,
  Int64,
  UInt8,
  UInt16,
  UInt32,
  UInt64,
  Float16,
  Float32,
  Float64,
  Complex64,
  Complex128,
};

/// DaCe's `struct` dtype: named fields of scalar types in order, laid out as C lays out a struct
/// of them (DaCe's ctypes.Structure does the same). Struct types are interned: each definition
/// gets a DType value past the scalars (`intern_struct`), which every table of this file knows.
/// The fields named in `pointers` are pointers to their type (a DaCe `Structure`'s C type: its
/// array members are pointers to their elements, a nested structure a pointer to its struct).
struct StructType {
  std::string name;
  std::vector<std::pair<std::string, DType>> fields;
  std::vector<std::string> pointers;  ///< fields that are `type*` (sorted)
  bool is_pointer(const std::string& field) const {
    return std::binary_search(pointers.begin(), pointers.end(), field);
  }
  bool operator==(const StructType& o) const { return name == o.name && fields == o.fields && pointers == o.pointers; }
};
/// The DType standing for `s` (the same one for equal definitions; two definitions of one name
/// with different fields are two types, which one program cannot hold both of).
DType intern_struct(const StructType& s);
/// The struct type `t` stands for; nullptr for a scalar type.
const StructType* struct_of(DType t);
inline bool is_struct(DType t) {
  return struct_of(t) != nullptr;
}
/// Field `field` of struct type `t`: its type, or nullopt.
std::optional<DType> struct_field(DType t, const std::string& field);

enum class StorageType {
  Default,
  Register,
  CPU_Pinned,
  CPU_Heap,
  CPU_ThreadLocal,
  GPU_Global,
  GPU_Shared,
};

enum class ScheduleType {
  Default,
  Sequential,
  CPU_Multicore,
  GPU_Device,
  GPU_ThreadBlock,
};

enum class Lifetime { Scope, State, SDFG, Global, Persistent, External };

enum class Language { Python, CPP };

std::string_view to_string(DType t);
std::string_view to_string(StorageType t);
std::string_view to_string(ScheduleType t);
std::string_view to_string(Lifetime t);
std::string_view to_string(Language t);

/// Parses a DaCe name (`float64`, also `dace.float64`); nullopt when unknown.
std::optional<DType> parse_dtype(std::string_view s);
std::optional<StorageType> parse_storage(std::string_view s);
std::optional<ScheduleType> parse_schedule(std::string_view s);
std::optional<Lifetime> parse_lifetime(std::string_view s);
std::optional<Language> parse_language(std::string_view s);

/// Comma-separated list of every name of an enum, for "expected one of" messages.
std::string dtype_names();
std::string storage_names();
std::string schedule_names();
std::string lifetime_names();

/// Size in bytes of one element (a struct's with C's alignment of its fields).
std::size_t dtype_size(DType t);
/// C++ spelling used by generated code (`double`, `int`, `dace::float16`; a struct's name).
std::string_view dtype_ctype(DType t);
bool is_integer(DType t);
bool is_float(DType t);
bool is_signed(DType t);
/// The type a symbol's value has in generated code (docs/design.md, "Integer semantics"): every
/// integer symbol (int8 ... uint64) is held as int64_t wherever the code reads it, so that symbolic
/// expressions (ranges, sizes, subsets, interstate code, kernel grids) compute in 64-bit signed
/// arithmetic, never in a narrow or unsigned type that wraps (`stop - start - 1` of two uint32
/// symbols is -1, not 4294967295). Only the entry points keep the declared types (DaCe's ABI).
/// Other types (bool, floating point) stay as declared.
DType symbol_value_type(DType declared);

/// True for storage that lives in GPU memory.
bool is_gpu_storage(StorageType s);
/// True for schedules that run on a GPU.
bool is_gpu_schedule(ScheduleType s);

}  // namespace sdfc
