/// \file
/// Internal to lang/: the Python translator's value model (typed C++ text with its precedence, the
/// type rules that make C++ compute what Python does, the functions it knows), the lexer's pieces,
/// and the `Translator` class, whose statement half is in PythonTasklet.cpp and whose expression
/// half is in PythonExpressions.cpp. The public interface is lang/PythonTasklet.h.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "ir/Diagnostic.h"
#include "ir/Expr.h"
#include "lang/PythonTasklet.h"

namespace sdfc::python {

// ---------------------------------------------------------------------------------------------
// Types. Expressions are typed as the C++ they print to computes them; where C++ would differ
// from Python (integer true division, mixed signed/unsigned wrap-around) operands are cast.

inline bool is_int_like(DType t) {
  return t == DType::Bool || is_integer(t);
}
inline bool is_complex(DType t) {
  return t == DType::Complex64 || t == DType::Complex128;
}
inline bool is_unsigned_int(DType t) {
  return t >= DType::UInt8 && t <= DType::UInt64;
}
inline bool is_signed_int(DType t) {
  return t >= DType::Int8 && t <= DType::Int64;
}

inline int int_rank(DType t) {
  switch (t) {
    case DType::Bool:
      return 0;
    case DType::Int8:
    case DType::UInt8:
      return 1;
    case DType::Int16:
    case DType::UInt16:
      return 2;
    case DType::Int32:
    case DType::UInt32:
      return 3;
    default:
      return 4;
  }
}
inline int float_rank(DType t) {
  return t == DType::Float16 ? 1 : t == DType::Float32 ? 2 : 3;
}

// C++ integral promotion: everything narrower than int computes as int.
inline DType promote(DType t) {
  return is_int_like(t) && int_rank(t) < 3 ? DType::Int32 : t;
}

// C++'s usual arithmetic conversions of two promoted operand types.
inline DType usual_conversion(DType a, DType b) {
  if (a == b) return a;
  if (is_float(a) || is_float(b)) {
    if (!is_float(a)) return b;
    if (!is_float(b)) return a;
    return float_rank(a) >= float_rank(b) ? a : b;
  }
  if (is_unsigned_int(a) == is_unsigned_int(b)) return int_rank(a) >= int_rank(b) ? a : b;
  DType u = is_unsigned_int(a) ? a : b;
  DType s = is_unsigned_int(a) ? b : a;
  return int_rank(u) >= int_rank(s) ? u : s;
}

// The type of a built-in binary operator (`a + b`).
inline DType cpp_arith(DType a, DType b) {
  return usual_conversion(promote(a), promote(b));
}
// The type of `c ? a : b` and of std::common_type, which the sdfc::rt helpers use.
inline DType cpp_common(DType a, DType b) {
  return a == b ? a : cpp_arith(a, b);
}

// Python integers do not wrap around: where C++ would compute a mix of signed and unsigned
// operands in a 32-bit unsigned type, compute in int64 instead.
inline DType python_type(DType cpp, DType a, DType b) {
  bool mixed = (is_signed_int(a) && is_unsigned_int(b)) || (is_unsigned_int(a) && is_signed_int(b));
  return mixed && is_unsigned_int(cpp) && dtype_size(cpp) <= 4 ? DType::Int64 : cpp;
}

// ---------------------------------------------------------------------------------------------
// Printed C++ values

// C++ operator precedence, higher binds tighter.
enum Prec : int { kOr = 5, kAnd, kBitOr, kBitXor, kBitAnd, kEq, kRel, kShift, kAdd, kMul, kUnary, kPrimary };

/// A translated expression: C++ text, its precedence and its type.
struct Value {
  std::string text;
  int prec = kPrimary;
  DType type = DType::Int32;
  const ExprNode* literal = nullptr;  // the number literal this value prints, for tidier casts
};

// Parentheses around an operand of a binary operator of precedence `parent`: by precedence
// (operators are left-associative), and where GCC's -Wparentheses would ask for them.
inline bool needs_parens(const Value& v, int parent, bool right) {
  if (v.prec < parent || (right && v.prec == parent)) return true;
  bool bitwise_parent = (parent >= kBitOr && parent <= kBitAnd) || parent == kShift;
  bool logical_not = v.prec == kUnary && v.text[0] == '!';
  if (bitwise_parent && ((v.prec != parent && v.prec < kUnary) || logical_not)) return true;
  bool comparison_parent = parent == kEq || parent == kRel;
  if (comparison_parent && (v.prec == kEq || v.prec == kRel || logical_not)) return true;
  return parent == kOr && v.prec == kAnd;
}
inline std::string operand(const Value& v, int parent, bool right) {
  return needs_parens(v, parent, right) ? "(" + v.text + ")" : v.text;
}
inline Value infix(const Value& a, std::string_view op, const Value& b, int prec, DType type) {
  return {fmt::format("{} {} {}", operand(a, prec, false), op, operand(b, prec, true)), prec, type};
}

// The truth value of `v` where C++ wants a bool: an arithmetic result compares with zero, which is
// Python's truth test and keeps GCC's -Wint-in-bool-context quiet.
inline Value truth_value(const Value& v) {
  if (v.type == DType::Bool || v.prec >= kUnary) return v;
  return {operand(v, kEq, false) + " != 0", kEq, DType::Bool};
}

inline std::string float_literal(const ExprNode& e) {
  std::string s = e.name.empty() ? fmt::format("{}", e.fval) : e.name;
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

// `static_cast<T>(v)`; a number literal converts in the literal instead (`1.0`, `0.25f`).
inline Value cast_to(const Value& v, DType t) {
  if (v.type == t) return v;
  if (v.literal && (t == DType::Float32 || t == DType::Float64)) {
    bool single = t == DType::Float32;
    const char* suffix = single ? "f" : "";
    const ExprNode& lit = *v.literal;
    std::int64_t exact = single ? std::int64_t{1} << 24 : std::int64_t{1} << 53;
    if (lit.kind == ExprKind::Int && lit.ival <= exact) return {fmt::format("{}.0{}", lit.ival, suffix), kPrimary, t};
    if (lit.kind == ExprKind::Float && single) {
      // `0.1f` rounds once, `float(0.1)` twice: use the suffix only where both agree.
      std::string s = float_literal(lit);
      float f = static_cast<float>(lit.fval);
      if (std::isfinite(f) && std::strtof(s.c_str(), nullptr) == f) return {s + suffix, kPrimary, t};
    }
  }
  return {fmt::format("static_cast<{}>({})", dtype_ctype(t), v.text), kPrimary, t};
}

// Casts operands, first to last, until C++ computes them in `want`; `cpp_type` says what C++
// computes for the current operand types.
template <typename F>
inline bool cast_until(std::vector<Value>& ops, DType want, F cpp_type) {
  bool cast = false;
  for (Value& op : ops) {
    if (cpp_type(ops) == want) break;
    if (op.type != want) {
      op = cast_to(op, want);
      cast = true;
    }
  }
  SDFC_ASSERT(cpp_type(ops) == want, "operand casts do not reach the wanted type");
  return cast;
}
inline DType arith_of(const std::vector<Value>& ops) {
  return cpp_arith(ops[0].type, ops[1].type);
}
inline DType common_of(const std::vector<Value>& ops) {
  DType t = ops[0].type;
  for (std::size_t i = 1; i < ops.size(); ++i) t = cpp_common(t, ops[i].type);
  return t;
}
// What Python computes for a fold of `ops` (max, min, conditional).
inline DType python_common(const std::vector<Value>& ops) {
  DType t = ops[0].type;
  for (std::size_t i = 1; i < ops.size(); ++i) t = python_type(cpp_common(t, ops[i].type), t, ops[i].type);
  return t;
}

// The complex type of an operation with a complex operand: complex128 unless every operand is at
// most 32 bits wide (numpy's promotion; number literals are weak, as Python's scalars are).
inline DType complex_result(const std::vector<Value>& ops) {
  bool single = false;
  for (const Value& v : ops) {
    if (v.type == DType::Complex128) return DType::Complex128;
    bool literal = v.literal != nullptr || v.type == DType::Bool;
    if (!is_complex(v.type) && !literal && dtype_size(v.type) > 4) return DType::Complex128;
    single |= v.type == DType::Complex64 || (!literal && v.type == DType::Float32);
  }
  return single ? DType::Complex64 : DType::Complex128;  // Python's own complex numbers are double
}
// The real type of a complex type's parts.
inline DType complex_part(DType t) {
  return t == DType::Complex64 ? DType::Float32 : DType::Float64;
}

inline std::string join_args(const std::vector<Value>& args) {
  std::string s;
  for (std::size_t i = 0; i < args.size(); ++i) s += (i ? ", " : "") + args[i].text;
  return s;
}

// ---------------------------------------------------------------------------------------------
// Names

// Functions a tasklet may call, by their name without a module prefix.
enum class FnKind {
  StdReal,       // std:: math on floating point: float32 stays float32, everything else is double
  StdPredicate,  // std::isnan and friends: bool
  RtAbs,         // sdfc::rt::abs: integers stay integers
  RtRound,       // sdfc::rt::floor / ceil: integers stay integers
  RtMinMax,      // sdfc::rt::min / max over two or more arguments (arity 0), or a function of two
                 // arguments of their common Python type (py_mod, gcd)
  RtPow,         // sdfc::rt::pow, as `**`
  RtToInt,       // sdfc::rt::ifloor / iround: an int64 of any number
  StdFloat64,    // std:: math on the arguments as double, a double (NumPy's float_power)
};
struct Function {
  const char* cpp;
  FnKind kind;
  int arity;  // 0: two or more
};

inline const Function* find_function(std::string_view name) {
  static const std::map<std::string_view, Function> table = {
      {"sqrt", {"std::sqrt", FnKind::StdReal, 1}},
      {"cbrt", {"std::cbrt", FnKind::StdReal, 1}},
      {"exp", {"std::exp", FnKind::StdReal, 1}},
      {"exp2", {"std::exp2", FnKind::StdReal, 1}},
      {"expm1", {"std::expm1", FnKind::StdReal, 1}},
      {"log", {"std::log", FnKind::StdReal, 1}},
      {"log2", {"std::log2", FnKind::StdReal, 1}},
      {"log10", {"std::log10", FnKind::StdReal, 1}},
      {"log1p", {"std::log1p", FnKind::StdReal, 1}},
      {"sin", {"std::sin", FnKind::StdReal, 1}},
      {"cos", {"std::cos", FnKind::StdReal, 1}},
      {"tan", {"std::tan", FnKind::StdReal, 1}},
      {"asin", {"std::asin", FnKind::StdReal, 1}},
      {"acos", {"std::acos", FnKind::StdReal, 1}},
      {"atan", {"std::atan", FnKind::StdReal, 1}},
      {"arcsin", {"std::asin", FnKind::StdReal, 1}},
      {"arccos", {"std::acos", FnKind::StdReal, 1}},
      {"arctan", {"std::atan", FnKind::StdReal, 1}},
      {"sinh", {"std::sinh", FnKind::StdReal, 1}},
      {"cosh", {"std::cosh", FnKind::StdReal, 1}},
      {"tanh", {"std::tanh", FnKind::StdReal, 1}},
      {"asinh", {"std::asinh", FnKind::StdReal, 1}},
      {"acosh", {"std::acosh", FnKind::StdReal, 1}},
      {"atanh", {"std::atanh", FnKind::StdReal, 1}},
      {"arcsinh", {"std::asinh", FnKind::StdReal, 1}},
      {"arccosh", {"std::acosh", FnKind::StdReal, 1}},
      {"arctanh", {"std::atanh", FnKind::StdReal, 1}},
      {"erf", {"std::erf", FnKind::StdReal, 1}},
      {"erfc", {"std::erfc", FnKind::StdReal, 1}},
      {"fabs", {"std::fabs", FnKind::StdReal, 1}},
      {"atan2", {"std::atan2", FnKind::StdReal, 2}},
      {"arctan2", {"std::atan2", FnKind::StdReal, 2}},
      {"copysign", {"std::copysign", FnKind::StdReal, 2}},
      {"fmod", {"std::fmod", FnKind::StdReal, 2}},
      {"hypot", {"std::hypot", FnKind::StdReal, 2}},
      {"isnan", {"std::isnan", FnKind::StdPredicate, 1}},
      {"isinf", {"std::isinf", FnKind::StdPredicate, 1}},
      {"isfinite", {"std::isfinite", FnKind::StdPredicate, 1}},
      {"abs", {"sdfc::rt::abs", FnKind::RtAbs, 1}},
      {"absolute", {"sdfc::rt::abs", FnKind::RtAbs, 1}},
      {"floor", {"sdfc::rt::floor", FnKind::RtRound, 1}},
      {"ceil", {"sdfc::rt::ceil", FnKind::RtRound, 1}},
      {"min", {"sdfc::rt::min", FnKind::RtMinMax, 0}},
      {"max", {"sdfc::rt::max", FnKind::RtMinMax, 0}},
      {"minimum", {"sdfc::rt::min", FnKind::RtMinMax, 2}},
      {"maximum", {"sdfc::rt::max", FnKind::RtMinMax, 2}},
      {"pow", {"sdfc::rt::pow", FnKind::RtPow, 2}},
      {"float_power", {"std::pow", FnKind::StdFloat64, 2}},
      {"np_float_pow", {"std::pow", FnKind::StdFloat64, 2}},
      {"power", {"sdfc::rt::pow", FnKind::RtPow, 2}},
      // The rest of what DaCe's runtime gives Python tasklets (dace/math.h, pyinterop.h), and
      // SymPy's spellings that reach tasklets through symbolic expressions (Min, Max, Abs, ceiling).
      {"tgamma", {"std::tgamma", FnKind::StdReal, 1}},
      {"lgamma", {"std::lgamma", FnKind::StdReal, 1}},
      {"trunc", {"std::trunc", FnKind::StdReal, 1}},
      {"nearbyint", {"std::nearbyint", FnKind::StdReal, 1}},
      {"rint", {"std::nearbyint", FnKind::StdReal, 1}},
      {"nextafter", {"std::nextafter", FnKind::StdReal, 2}},
      {"ldexp", {"std::ldexp", FnKind::StdReal, 2}},  // x * 2**k; an integer k as C's int exponent
      {"fmin", {"std::fmin", FnKind::StdReal, 2}},
      {"fmax", {"std::fmax", FnKind::StdReal, 2}},
      {"deg2rad", {"sdfc::rt::deg2rad", FnKind::StdReal, 1}},
      {"rad2deg", {"sdfc::rt::rad2deg", FnKind::StdReal, 1}},
      {"radians", {"sdfc::rt::deg2rad", FnKind::StdReal, 1}},
      {"degrees", {"sdfc::rt::rad2deg", FnKind::StdReal, 1}},
      {"heaviside", {"sdfc::rt::heaviside", FnKind::StdReal, 2}},
      {"signbit", {"std::signbit", FnKind::StdPredicate, 1}},
      // round: to nearest, ties to even (Python's and NumPy's rounding), of the argument's type
      {"round", {"sdfc::rt::round", FnKind::RtRound, 1}},
      {"sign", {"sdfc::rt::sign", FnKind::RtRound, 1}},
      {"sgn", {"sdfc::rt::sign", FnKind::RtRound, 1}},
      {"sign_numpy_2", {"sdfc::rt::sign", FnKind::RtRound, 1}},
      {"reciprocal", {"sdfc::rt::reciprocal", FnKind::RtRound, 1}},
      {"ceiling", {"sdfc::rt::ceil", FnKind::RtRound, 1}},
      {"Abs", {"sdfc::rt::abs", FnKind::RtAbs, 1}},
      {"Min", {"sdfc::rt::min", FnKind::RtMinMax, 0}},
      {"Max", {"sdfc::rt::max", FnKind::RtMinMax, 0}},
      {"py_mod", {"sdfc::rt::floormod", FnKind::RtMinMax, 2}},
      {"Mod", {"sdfc::rt::floormod", FnKind::RtMinMax, 2}},
      {"py_floor", {"sdfc::rt::floordiv", FnKind::RtMinMax, 2}},
      {"int_floor", {"sdfc::rt::floordiv", FnKind::RtMinMax, 2}},
      {"int_ceil", {"sdfc::rt::ceildiv", FnKind::RtMinMax, 2}},
      {"cpp_mod", {"sdfc::rt::cpp_mod", FnKind::RtMinMax, 2}},
      {"gcd", {"sdfc::rt::gcd", FnKind::RtMinMax, 2}},
      {"lcm", {"sdfc::rt::lcm", FnKind::RtMinMax, 2}},
      {"ifloor", {"sdfc::rt::ifloor", FnKind::RtToInt, 1}},
      {"iround", {"sdfc::rt::iround", FnKind::RtToInt, 1}},
  };
  auto it = table.find(name);
  return it == table.end() ? nullptr : &it->second;
}

// Splits `math.sqrt` into the module prefix (`math.`) and the name (`sqrt`).
inline std::pair<std::string_view, std::string_view> split_module(std::string_view name) {
  for (std::string_view prefix : {"dace.math.", "math.", "numpy.", "np.", "dace."})
    if (name.substr(0, prefix.size()) == prefix) return {prefix, name.substr(prefix.size())};
  return {"", name};
}

// Names a temporary cannot have in C++: keywords, and names the generated code refers to.
inline bool reserved_in_cpp(const std::string& name) {
  static const std::set<std::string> reserved = {
      "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch", "char",
      "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "const", "consteval", "constexpr", "constinit",
      "const_cast", "continue", "co_await", "co_return", "co_yield", "decltype", "default", "delete", "do", "double",
      "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float", "for", "friend", "goto", "if",
      "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq", "nullptr", "operator", "or",
      "or_eq", "private", "protected", "public", "register", "reinterpret_cast", "requires", "return", "short",
      "signed", "sizeof", "static", "static_assert", "static_cast", "struct", "switch", "template", "this",
      "thread_local", "throw", "true", "try", "typedef", "typeid", "typename", "union", "unsigned", "using", "virtual",
      "void", "volatile", "wchar_t", "while", "xor", "xor_eq",
      // referred to by the statements this file emits
      "std", "sdfc", "dace", "int8_t", "int16_t", "int64_t", "uint8_t", "uint16_t", "uint64_t", "NAN", "HUGE_VAL",
      "INFINITY"};
  return reserved.count(name) > 0;
}

inline bool is_ident_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
inline bool is_ident_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}
inline bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v';
}

// Statement hints for Python keywords that start a statement outside the subset.
inline std::optional<std::string_view> keyword_hint(std::string_view word) {
  static const std::map<std::string_view, std::string_view> hints = {
      {"import", "math functions such as math.sqrt need no import"},
      {"from", "math functions such as math.sqrt need no import"},
      {"def", "functions cannot be defined in a tasklet"},
      {"class", "classes cannot be defined in a tasklet"},
      {"return", "a tasklet returns values by assigning its output connectors"},
      {"with", ""},
      {"try", ""},
      {"except", ""},
      {"finally", ""},
      {"raise", ""},
      {"assert", ""},
      {"del", ""},
      {"global", ""},
      {"nonlocal", ""},
      {"yield", ""},
      {"async", ""},
      {"await", ""},
      {"break", "'break' belongs inside a 'for' or 'while' loop of the tasklet"},
      {"continue", "'continue' belongs inside a 'for' or 'while' loop of the tasklet"},
      {"lambda", ""},
  };
  auto it = hints.find(word);
  if (it == hints.end()) return std::nullopt;
  return it->second;
}
inline constexpr std::string_view kAssignmentsOnly =
    "python tasklets may contain assignments ('name = expr', 'name += expr', 'out[i] = expr'), if/elif/else, "
    "'for name in range(...)', 'while condition' and, in loops, break and continue";

// ---------------------------------------------------------------------------------------------
// Translation

/// One statement of the code: [begin, end) without surrounding blanks.
struct Statement {
  std::size_t begin;
  std::size_t end;
  int line;
  std::optional<std::size_t> indent;  // columns before it when it starts its line
};

/// A top-level `=` or `op=` inside a statement.
struct Assignment {
  std::size_t begin;  // first character of the operator
  std::size_t end;    // one past the `=`
  std::optional<BinOp> op;
};

class Translator {
 public:
  Translator(const std::string& code, const TaskletScope& scope, const std::string& file, const std::string& pointer)
      : code_(code), text_(code), scope_(scope), file_(file), pointer_(pointer) {
    line_starts_.push_back(0);
    for (std::size_t i = 0; i < code_.size(); ++i)
      if (code_[i] == '\n') line_starts_.push_back(i + 1);
  }

  /// One expression (not a tasklet): `what` names it in messages, `code_pointer` is where its
  /// text is in the file. With `condition`, the result is a C++ bool (Python's truth test).
  ExpressionTranslation run_expression(const Expr& e, const std::string& what, const std::string& code_pointer,
                                       bool condition);

  std::string run();

 private:
  struct Temporary {
    std::string cpp_name;
    DType type;
  };

  [[noreturn]] void fail(std::string message) const;
  [[noreturn]] void syntax_error(std::size_t offset, const std::string& what) const;

  // 1-based line of a character of the code.
  int line_of(std::size_t offset) const {
    return static_cast<int>(std::upper_bound(line_starts_.begin(), line_starts_.end(), offset) - line_starts_.begin());
  }

  // Blanks out comments and line continuations in text_ (offsets stay those of the code) and
  // splits it into statements at newlines and semicolons outside brackets.
  std::vector<Statement> split();

  // Identifiers of the code, which names invented for temporaries avoid.
  void collect_words();

  // The statement's text for messages: blanks collapsed, long text shortened.
  std::string display(std::size_t begin, std::size_t end) const;

  // ---- control flow ------------------------------------------------------------------------

  /// A statement with the statements it governs: `if`/`elif`/`else` and `for ... in range(...)`
  /// headers own the more indented statements after them.
  struct Compound {
    enum class Kind { Simple, If, Elif, Else, For, While } kind = Kind::Simple;
    Statement head;
    std::size_t expr_begin = 0, expr_end = 0;  // the condition, or the `range(...)` call
    std::string variable;                      // the `for` variable
    std::vector<Compound> body;
  };

  /// The statements from `next` on at indentation `indent` (statements that follow another on
  /// its line, after `;`, have none and belong to the same block).
  std::vector<Compound> block(const std::vector<Statement>& statements, std::size_t& next,
                              std::optional<std::size_t> indent);

  /// Classifies a statement: a control-flow header ending in `:` or a simple statement.
  Compound header(const Statement& s);

  void emit(const std::vector<Compound>& body);

  std::string condition(const Compound& c);

  /// `for k in range(a, b, step)` with a constant step: a C++ counter, and k assigned from it at
  /// the start of each iteration, so that k keeps its last value after the loop as in Python.
  void loop(const Compound& c);

  /// emit() of a block's body, each of its lines indented by two more spaces.
  void emit_indented(const std::vector<Compound>& body);

  void record_temporary(const std::string& name, DType t) { temp_types_[name].insert(t); }

  /// Python has one integer type: integer values of several C types (a literal is int32, a loop
  /// variable int64) make one temporary of the widest (int64 when signedness differs).
  static std::set<DType> unify_integers(const std::set<DType>& types);

  // ---- statements --------------------------------------------------------------------------

  void statement(const Statement& s);
  bool output_call(const Statement& s);
  bool lambda_definition(const Expr& target, std::size_t begin, std::size_t end);

  std::optional<Assignment> find_assignment(std::size_t begin, std::size_t end) const;

  bool has_top_level_comma(std::size_t begin, std::size_t end) const;

  Expr parse(std::size_t begin, std::size_t end) const;

  void assign(const Expr& target, std::optional<BinOp> op, const Expr& value);

  std::string fresh_name(const std::string& name, bool may_keep);

  // ---- expressions -------------------------------------------------------------------------

  std::string where() const { return what_.empty() ? fmt::format("tasklet line {}", line_) : what_; }

  void require_real(const Value& v, std::string_view what) const;
  void require_integer(const Value& v, std::string_view what) const;

  // `truth`: only the truth value of the result matters (a condition, an operand of `not`).
  Value expr(const Expr& ep, bool truth = false);

  Value name_value(const ExprNode& e);

  Value subscript(const ExprNode& e);

  Value unary(UnaryOp op, const Value& a);

  // `a op b`. `rhs` is b's expression. `plain` (when given) is set when the result is `a op b` with
  // a C++ operator and no casts, so that `a op= b` computes the same.
  Value binary(BinOp op, Value a, Value b, const ExprNode& rhs, bool* plain = nullptr);

  /// Arithmetic with a complex operand (sdfc::rt::complex, runtime/include/sdfc/complex.h): both
  /// operands in the result's complex type; `**` through complex_pow (integer exponents exact).
  Value complex_binary(BinOp op, Value a, Value b);

  Value compare(CmpOp op, Value a, Value b);
  Value identity(CmpOp op, const ExprNode& e);

  // Python's `and`/`or` return an operand; on booleans, or for a truth value, that is C++'s &&/||.
  Value bool_op(bool is_and, std::vector<Value> ops, bool truth);

  Value conditional(const Value& cond, const Value& a, const Value& b);

  Value call(const ExprNode& e);
  /// `S(f=..., ...)` of a struct type `t`: every field, by keyword or in order, as `S{...}`.
  Value struct_value(const ExprNode& e, DType t);
  /// Fails where a struct value meets an operator or a function: structs are read field by field.
  void require_scalar(const Value& v, std::string_view what) const;
  /// `name[0]`: the element a connector of `element_pointers` points to.
  static Expr element_of(const std::string& name) {
    ExprNode n(ExprKind::Subscript);
    n.name = name;
    n.args = {make_int(0)};
    return make_node(std::move(n));
  }
  /// A call of the callback `cb` (DaCe's `callback` dtype): array parameters take a connector bound
  /// to a pointer (or the address of one bound to an element), scalars a value converted to their
  /// type; a function with results beyond one scalar takes pointers to output connectors after its
  /// arguments. The value has the scalar result's type (a call of a function without one is a
  /// statement only: `statement` says so with `as_statement`).
  Value callback_call(const ExprNode& e, const Callback& cb, bool as_statement);

  /// Functions of complex arguments (and real/imag/conj of any number): nullopt when `e` is not
  /// one of them or has no complex argument.
  std::optional<Value> complex_function(const ExprNode& e, std::string_view base);

  /// Whether `name` is a connector, a symbol or a temporary of a struct type (DaCe's struct dtypes).
  bool struct_named(const std::string& name) const {
    if (auto it = temps_.find(name); it != temps_.end()) return is_struct(it->second.type);
    for (const auto* names : {&scope_.inputs, &scope_.outputs, &scope_.symbols})
      if (auto it = names->find(name); it != names->end()) return is_struct(it->second);
    return false;
  }
  /// Whether `name` is a connector, a symbol or a temporary (a value attributes apply to).
  bool is_value_name(const std::string& name) const {
    return temps_.count(name) || scope_.inputs.count(name) || scope_.outputs.count(name) || scope_.symbols.count(name);
  }

  void check_arity(const ExprNode& e, int arity) const;

  const std::string& code_;
  std::string text_;  // the code with comments and line continuations blanked out
  const TaskletScope& scope_;
  const std::string& file_;
  const std::string& pointer_;
  int line_ = 0;                                       // tasklet line of the statement being translated
  std::string what_;                                   // an expression's name in messages ("" for a tasklet)
  std::string code_pointer_;                           // an expression's JSON pointer ("" for a tasklet)
  std::map<std::string, Temporary> temps_;             // Python name -> current C++ variable
  std::map<std::string, std::set<DType>> temp_types_;  // Python name -> the types assigned to it
  /// `f = lambda a, b: a + b`: a local function of expressions, inlined where it is called.
  struct Lambda {
    std::vector<std::string> params;
    Expr body;
  };
  std::map<std::string, Lambda> lambdas_;  // Python name -> its lambda
  int loop_depth_ = 0;                     // loops around the statement being translated
  bool hoisted_ = false;                   // temporaries declared before the first statement (control flow)
  std::set<std::string> cpp_names_;        // C++ names of temporaries
  std::set<std::string> words_;            // identifiers of the code
  std::vector<std::size_t> line_starts_;   // offsets of the lines of the code
  std::string out_;
};

}  // namespace sdfc::python
