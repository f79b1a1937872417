#include "lang/PythonTasklet.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <set>
#include <string_view>
#include <vector>

#include "ir/Diagnostic.h"
#include "ir/Expr.h"
#include "ir/Memlets.h"
#include "ir/Signature.h"
#include "ir/Walk.h"

namespace sdfc {
namespace {

// ---------------------------------------------------------------------------------------------
// Types. Expressions are typed as the C++ they print to computes them; where C++ would differ
// from Python (integer true division, mixed signed/unsigned wrap-around) operands are cast.

bool is_int_like(DType t) {
  return t == DType::Bool || is_integer(t);
}
bool is_complex(DType t) {
  return t == DType::Complex64 || t == DType::Complex128;
}
bool is_unsigned_int(DType t) {
  return t >= DType::UInt8 && t <= DType::UInt64;
}
bool is_signed_int(DType t) {
  return t >= DType::Int8 && t <= DType::Int64;
}

int int_rank(DType t) {
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
int float_rank(DType t) {
  return t == DType::Float16 ? 1 : t == DType::Float32 ? 2 : 3;
}

// C++ integral promotion: everything narrower than int computes as int.
DType promote(DType t) {
  return is_int_like(t) && int_rank(t) < 3 ? DType::Int32 : t;
}

// C++'s usual arithmetic conversions of two promoted operand types.
DType usual_conversion(DType a, DType b) {
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
DType cpp_arith(DType a, DType b) {
  return usual_conversion(promote(a), promote(b));
}
// The type of `c ? a : b` and of std::common_type, which the sdfc::rt helpers use.
DType cpp_common(DType a, DType b) {
  return a == b ? a : cpp_arith(a, b);
}

// Python integers do not wrap around: where C++ would compute a mix of signed and unsigned
// operands in a 32-bit unsigned type, compute in int64 instead.
DType python_type(DType cpp, DType a, DType b) {
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
bool needs_parens(const Value& v, int parent, bool right) {
  if (v.prec < parent || (right && v.prec == parent)) return true;
  bool bitwise_parent = (parent >= kBitOr && parent <= kBitAnd) || parent == kShift;
  bool logical_not = v.prec == kUnary && v.text[0] == '!';
  if (bitwise_parent && ((v.prec != parent && v.prec < kUnary) || logical_not)) return true;
  bool comparison_parent = parent == kEq || parent == kRel;
  if (comparison_parent && (v.prec == kEq || v.prec == kRel || logical_not)) return true;
  return parent == kOr && v.prec == kAnd;
}
std::string operand(const Value& v, int parent, bool right) {
  return needs_parens(v, parent, right) ? "(" + v.text + ")" : v.text;
}
Value infix(const Value& a, std::string_view op, const Value& b, int prec, DType type) {
  return {fmt::format("{} {} {}", operand(a, prec, false), op, operand(b, prec, true)), prec, type};
}

// The truth value of `v` where C++ wants a bool: an arithmetic result compares with zero, which is
// Python's truth test and keeps GCC's -Wint-in-bool-context quiet.
Value truth_value(const Value& v) {
  if (v.type == DType::Bool || v.prec >= kUnary) return v;
  return {operand(v, kEq, false) + " != 0", kEq, DType::Bool};
}

std::string float_literal(const ExprNode& e) {
  std::string s = e.name.empty() ? fmt::format("{}", e.fval) : e.name;
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

// `static_cast<T>(v)`; a number literal converts in the literal instead (`1.0`, `0.25f`).
Value cast_to(const Value& v, DType t) {
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
bool cast_until(std::vector<Value>& ops, DType want, F cpp_type) {
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
DType arith_of(const std::vector<Value>& ops) {
  return cpp_arith(ops[0].type, ops[1].type);
}
DType common_of(const std::vector<Value>& ops) {
  DType t = ops[0].type;
  for (std::size_t i = 1; i < ops.size(); ++i) t = cpp_common(t, ops[i].type);
  return t;
}
// What Python computes for a fold of `ops` (max, min, conditional).
DType python_common(const std::vector<Value>& ops) {
  DType t = ops[0].type;
  for (std::size_t i = 1; i < ops.size(); ++i) t = python_type(cpp_common(t, ops[i].type), t, ops[i].type);
  return t;
}

// The complex type of an operation with a complex operand: complex128 unless every operand is at
// most 32 bits wide (numpy's promotion; number literals are weak, as Python's scalars are).
DType complex_result(const std::vector<Value>& ops) {
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
DType complex_part(DType t) {
  return t == DType::Complex64 ? DType::Float32 : DType::Float64;
}

std::string join_args(const std::vector<Value>& args) {
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
  RtMinMax,      // sdfc::rt::min / max over two or more arguments
  RtPow,         // sdfc::rt::pow, as `**`
};
struct Function {
  const char* cpp;
  FnKind kind;
  int arity;  // 0: two or more
};

const Function* find_function(std::string_view name) {
  static const std::map<std::string_view, Function> table = {
      {"sqrt", {"std::sqrt", FnKind::StdReal, 1}},         {"cbrt", {"std::cbrt", FnKind::StdReal, 1}},
      {"exp", {"std::exp", FnKind::StdReal, 1}},           {"exp2", {"std::exp2", FnKind::StdReal, 1}},
      {"expm1", {"std::expm1", FnKind::StdReal, 1}},       {"log", {"std::log", FnKind::StdReal, 1}},
      {"log2", {"std::log2", FnKind::StdReal, 1}},         {"log10", {"std::log10", FnKind::StdReal, 1}},
      {"log1p", {"std::log1p", FnKind::StdReal, 1}},       {"sin", {"std::sin", FnKind::StdReal, 1}},
      {"cos", {"std::cos", FnKind::StdReal, 1}},           {"tan", {"std::tan", FnKind::StdReal, 1}},
      {"asin", {"std::asin", FnKind::StdReal, 1}},         {"acos", {"std::acos", FnKind::StdReal, 1}},
      {"atan", {"std::atan", FnKind::StdReal, 1}},         {"arcsin", {"std::asin", FnKind::StdReal, 1}},
      {"arccos", {"std::acos", FnKind::StdReal, 1}},       {"arctan", {"std::atan", FnKind::StdReal, 1}},
      {"sinh", {"std::sinh", FnKind::StdReal, 1}},         {"cosh", {"std::cosh", FnKind::StdReal, 1}},
      {"tanh", {"std::tanh", FnKind::StdReal, 1}},         {"asinh", {"std::asinh", FnKind::StdReal, 1}},
      {"acosh", {"std::acosh", FnKind::StdReal, 1}},       {"atanh", {"std::atanh", FnKind::StdReal, 1}},
      {"arcsinh", {"std::asinh", FnKind::StdReal, 1}},     {"arccosh", {"std::acosh", FnKind::StdReal, 1}},
      {"arctanh", {"std::atanh", FnKind::StdReal, 1}},     {"erf", {"std::erf", FnKind::StdReal, 1}},
      {"erfc", {"std::erfc", FnKind::StdReal, 1}},         {"fabs", {"std::fabs", FnKind::StdReal, 1}},
      {"atan2", {"std::atan2", FnKind::StdReal, 2}},       {"arctan2", {"std::atan2", FnKind::StdReal, 2}},
      {"copysign", {"std::copysign", FnKind::StdReal, 2}}, {"fmod", {"std::fmod", FnKind::StdReal, 2}},
      {"hypot", {"std::hypot", FnKind::StdReal, 2}},       {"isnan", {"std::isnan", FnKind::StdPredicate, 1}},
      {"isinf", {"std::isinf", FnKind::StdPredicate, 1}},  {"isfinite", {"std::isfinite", FnKind::StdPredicate, 1}},
      {"abs", {"sdfc::rt::abs", FnKind::RtAbs, 1}},        {"absolute", {"sdfc::rt::abs", FnKind::RtAbs, 1}},
      {"floor", {"sdfc::rt::floor", FnKind::RtRound, 1}},  {"ceil", {"sdfc::rt::ceil", FnKind::RtRound, 1}},
      {"min", {"sdfc::rt::min", FnKind::RtMinMax, 0}},     {"max", {"sdfc::rt::max", FnKind::RtMinMax, 0}},
      {"minimum", {"sdfc::rt::min", FnKind::RtMinMax, 2}}, {"maximum", {"sdfc::rt::max", FnKind::RtMinMax, 2}},
      {"pow", {"sdfc::rt::pow", FnKind::RtPow, 2}},        {"power", {"sdfc::rt::pow", FnKind::RtPow, 2}},
  };
  auto it = table.find(name);
  return it == table.end() ? nullptr : &it->second;
}

// Splits `math.sqrt` into the module prefix (`math.`) and the name (`sqrt`).
std::pair<std::string_view, std::string_view> split_module(std::string_view name) {
  for (std::string_view prefix : {"dace.math.", "math.", "numpy.", "np.", "dace."})
    if (name.substr(0, prefix.size()) == prefix) return {prefix, name.substr(prefix.size())};
  return {"", name};
}

// Names a temporary cannot have in C++: keywords, and names the generated code refers to.
bool reserved_in_cpp(const std::string& name) {
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

bool is_ident_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool is_ident_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}
bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v';
}

// Statement hints for Python keywords that start a statement outside the subset.
std::optional<std::string_view> keyword_hint(std::string_view word) {
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
constexpr std::string_view kAssignmentsOnly =
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
                                       bool condition) {
    what_ = what;
    code_pointer_ = code_pointer;
    Value v = expr(e, condition);
    if (condition) {
      require_real(v, "a condition");
      v = truth_value(v);
    }
    return {v.text, v.type};
  }

  std::string run() {
    std::vector<Statement> statements = split();
    collect_words();
    std::optional<std::size_t> base;
    for (const Statement& s : statements)
      if (s.indent && (!base || *s.indent < *base)) base = s.indent;
    std::size_t next = 0;
    std::vector<Compound> body = block(statements, next, base);
    if (next != statements.size()) {  // a statement indented less than the first: Python rejects it
      line_ = statements[next].line;
      fail(fmt::format("tasklet line {}: unexpected indentation", line_));
    }
    bool control_flow = false;
    for (const Compound& c : body) control_flow |= c.kind != Compound::Kind::Simple;
    if (control_flow) {
      // Python's variables live in the whole tasklet: a temporary assigned in a branch or a loop
      // is read after it. A first translation finds each temporary's type; the second declares
      // them all before the first statement (one type per temporary; value-initialized).
      Translator first(*this);
      first.emit(body);
      std::string declarations;
      for (auto& [name, assigned] : first.temp_types_) {
        std::set<DType> types = unify_integers(assigned);
        if (types.size() > 1) {
          std::vector<std::string> names;
          for (DType t : types) names.emplace_back(to_string(t));
          fail(
              fmt::format("temporary '{}' is assigned values of types {} in a tasklet with control flow; sdfc needs "
                          "one type per temporary there (convert the values, e.g. float(...))",
                          name, fmt::join(names, " and ")));
        }
        std::string cpp = fresh_name(name, true);
        declarations += fmt::format("{} {}{{}};\n", dtype_ctype(*types.begin()), cpp);
        temps_[name] = Temporary{cpp, *types.begin()};
      }
      out_ = declarations;
      hoisted_ = true;
    }
    emit(body);
    return out_;
  }

 private:
  struct Temporary {
    std::string cpp_name;
    DType type;
  };

  [[noreturn]] void fail(std::string message) const {
    throw UserError(Diagnostic{file_, code_pointer_.empty() ? pointer_ + "/attributes/code" : code_pointer_, 0, 0,
                               std::move(message)});
  }
  [[noreturn]] void syntax_error(std::size_t offset, const std::string& what) const {
    int line = line_of(offset);
    std::size_t column = offset - line_starts_[line - 1] + 1;
    fail(fmt::format("tasklet line {}: syntax error at column {}: {}", line, column, what));
  }

  // 1-based line of a character of the code.
  int line_of(std::size_t offset) const {
    return static_cast<int>(std::upper_bound(line_starts_.begin(), line_starts_.end(), offset) - line_starts_.begin());
  }

  // Blanks out comments and line continuations in text_ (offsets stay those of the code) and
  // splits it into statements at newlines and semicolons outside brackets.
  std::vector<Statement> split() {
    std::vector<Statement> out;
    std::vector<std::size_t> open;  // offsets of unclosed brackets
    std::size_t begin = 0;
    bool line_start = true;
    auto finish = [&](std::size_t end, bool next_starts_line) {
      std::size_t b = begin;
      while (b < end && is_space(text_[b])) ++b;
      std::size_t e = end;
      while (e > b && is_space(text_[e - 1])) --e;
      if (b < e) {
        int line = line_of(b);
        bool starts_line = line_start || code_.substr(begin, b - begin).find('\n') != std::string::npos;
        std::optional<std::size_t> indent;
        if (starts_line) indent = b - line_starts_[line - 1];
        out.push_back({b, e, line, indent});
      }
      begin = end + 1;
      line_start = next_starts_line;
    };
    for (std::size_t i = 0; i < text_.size(); ++i) {
      char c = text_[i];
      if (c == '#') {
        while (i < text_.size() && text_[i] != '\n') text_[i++] = ' ';
        --i;
      } else if (c == '\'' || c == '"') {
        line_ = line_of(i);
        fail(fmt::format("tasklet line {}: string literals are not supported in python tasklets", line_));
      } else if (c == '\\' && (text_.compare(i + 1, 1, "\n") == 0 || text_.compare(i + 1, 2, "\r\n") == 0)) {
        text_[i] = ' ';
        i = text_.find('\n', i);
        text_[i] = ' ';
      } else if (c == '(' || c == '[' || c == '{') {
        open.push_back(i);
      } else if (c == ')' || c == ']' || c == '}') {
        if (open.empty()) syntax_error(i, fmt::format("unmatched '{}'", c));
        char o = text_[open.back()];
        if ((o == '(') != (c == ')') || (o == '[') != (c == ']'))
          syntax_error(i, fmt::format("closing '{}' does not match '{}'", c, o));
        open.pop_back();
      } else if (open.empty() && (c == '\n' || c == ';')) {
        finish(i, c == '\n');
      }
    }
    if (!open.empty()) syntax_error(open.back(), fmt::format("'{}' was never closed", text_[open.back()]));
    finish(text_.size(), false);
    return out;
  }

  // Identifiers of the code, which names invented for temporaries avoid.
  void collect_words() {
    for (std::size_t i = 0; i < text_.size();) {
      if (!is_ident_start(text_[i])) {
        ++i;
        continue;
      }
      std::size_t b = i;
      while (i < text_.size() && is_ident_char(text_[i])) ++i;
      words_.insert(text_.substr(b, i - b));
    }
  }

  // The statement's text for messages: blanks collapsed, long text shortened.
  std::string display(std::size_t begin, std::size_t end) const {
    std::string s;
    for (std::size_t i = begin; i < end; ++i) {
      if (!is_space(text_[i]))
        s += text_[i];
      else if (!s.empty() && s.back() != ' ')
        s += ' ';
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s.size() > 60 ? s.substr(0, 57) + "..." : s;
  }

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
                              std::optional<std::size_t> indent) {
    std::vector<Compound> out;
    while (next < statements.size()) {
      const Statement& s = statements[next];
      line_ = s.line;
      if (s.indent && indent && *s.indent < *indent) break;
      if (s.indent && indent && *s.indent > *indent) {
        // The body of a compound statement sdfc does not support (while, def, ...): name that.
        if (!out.empty() && out.back().kind == Compound::Kind::Simple && text_[out.back().head.end - 1] == ':') {
          line_ = out.back().head.line;
          statement(out.back().head);
        }
        fail(fmt::format("tasklet line {}: unexpected indentation", line_));
      }
      ++next;
      Compound c = header(s);
      if (c.kind != Compound::Kind::Simple) {
        if (next >= statements.size() || !statements[next].indent || !s.indent || *statements[next].indent <= *s.indent)
          fail(fmt::format("tasklet line {}: '{}' needs an indented block on the lines after it", line_,
                           display(s.begin, s.end)));
        c.body = block(statements, next, statements[next].indent);
      }
      out.push_back(std::move(c));
    }
    return out;
  }

  /// Classifies a statement: a control-flow header ending in `:` or a simple statement.
  Compound header(const Statement& s) {
    Compound c;
    c.head = s;
    std::size_t w = s.begin;
    while (w < s.end && is_ident_char(text_[w])) ++w;
    std::string_view word(text_.data() + s.begin, w - s.begin);
    bool colon = text_[s.end - 1] == ':';
    if (word == "if" || word == "elif" || word == "else" || word == "for" || word == "while") {
      if (!colon)
        fail(fmt::format("tasklet line {}: '{}': put the body of '{}' on the lines after it, indented", line_,
                         display(s.begin, s.end), word));
      c.expr_begin = w;
      c.expr_end = s.end - 1;
    }
    if (word == "if") c.kind = Compound::Kind::If;
    if (word == "while") c.kind = Compound::Kind::While;
    if (word == "elif") c.kind = Compound::Kind::Elif;
    if (word == "else") {
      c.kind = Compound::Kind::Else;
      for (std::size_t i = w; i < s.end - 1; ++i)
        if (!is_space(text_[i]))
          fail(fmt::format("tasklet line {}: unsupported statement '{}'", line_, display(s.begin, s.end)));
    }
    if (word == "for") {
      c.kind = Compound::Kind::For;
      std::size_t v = w;
      while (v < s.end && is_space(text_[v])) ++v;
      std::size_t ve = v;
      while (ve < s.end && is_ident_char(text_[ve])) ++ve;
      c.variable = text_.substr(v, ve - v);
      std::size_t in = ve;
      while (in < s.end && is_space(text_[in])) ++in;
      if (c.variable.empty() || text_.compare(in, 3, "in ") != 0)
        fail(fmt::format("tasklet line {}: unsupported loop '{}'; loops in tasklets are 'for NAME in range(...):'",
                         line_, display(s.begin, s.end)));
      c.expr_begin = in + 3;
    }
    return c;
  }

  void emit(const std::vector<Compound>& body) {
    for (std::size_t i = 0; i < body.size(); ++i) {
      const Compound& c = body[i];
      line_ = c.head.line;
      switch (c.kind) {
        case Compound::Kind::Simple:
          statement(c.head);
          break;
        case Compound::Kind::Elif:
        case Compound::Kind::Else:
          fail(fmt::format("tasklet line {}: '{}' without an 'if' before it", line_,
                           c.kind == Compound::Kind::Elif ? "elif" : "else"));
        case Compound::Kind::If: {
          out_ += fmt::format("if ({}) {{\n", condition(c));
          emit_indented(c.body);
          while (i + 1 < body.size() &&
                 (body[i + 1].kind == Compound::Kind::Elif || body[i + 1].kind == Compound::Kind::Else)) {
            const Compound& next = body[++i];
            line_ = next.head.line;
            if (next.kind == Compound::Kind::Elif)
              out_ += fmt::format("}} else if ({}) {{\n", condition(next));
            else
              out_ += "} else {\n";
            emit_indented(next.body);
            if (next.kind == Compound::Kind::Else) break;
          }
          out_ += "}\n";
          break;
        }
        case Compound::Kind::For:
          loop(c);
          break;
        case Compound::Kind::While:
          out_ += fmt::format("while ({}) {{\n", condition(c));
          ++loop_depth_;
          emit_indented(c.body);
          --loop_depth_;
          out_ += "}\n";
          break;
      }
    }
  }

  std::string condition(const Compound& c) {
    Value v = expr(parse(c.expr_begin, c.expr_end), true);
    require_real(v, "a condition");
    return truth_value(v).text;
  }

  /// `for k in range(a, b, step)` with a constant step: a C++ counter, and k assigned from it at
  /// the start of each iteration, so that k keeps its last value after the loop as in Python.
  void loop(const Compound& c) {
    Expr call = parse(c.expr_begin, c.expr_end);
    if (call->kind != ExprKind::Call || call->name != "range" || call->args.empty() || call->args.size() > 3)
      fail(fmt::format("tasklet line {}: unsupported loop over '{}'; loops in tasklets are 'for NAME in range(...):'",
                       line_, print_expr(call)));
    std::vector<Value> args;
    for (auto& a : call->args) {
      Value v = expr(a);
      if (!is_int_like(v.type) || v.type == DType::Bool)
        fail(fmt::format("tasklet line {}: range() takes integers, got {} '{}'", line_, to_string(v.type),
                         print_expr(a)));
      args.push_back(v);
    }
    std::string start = args.size() > 1 ? args[0].text : "0";
    std::string stop = args.size() > 1 ? args[1].text : args[0].text;
    long long step = 1;
    if (args.size() == 3) {
      auto k = as_constant(simplify(call->args[2]));
      if (!k || *k == 0)
        fail(fmt::format("tasklet line {}: the step of range() must be a nonzero integer constant, not '{}'", line_,
                         print_expr(call->args[2])));
      step = *k;
    }
    if (scope_.inputs.count(c.variable) || scope_.outputs.count(c.variable) || scope_.symbols.count(c.variable))
      fail(fmt::format("tasklet line {}: the loop variable '{}' is a connector or a symbol; use a new name", line_,
                       c.variable));
    std::string counter = fresh_name("__for_" + c.variable, true);
    out_ += fmt::format("for (int64_t {0} = {1}; {0} {2} {3}; {0} += {4}) {{\n", counter, start, step > 0 ? "<" : ">",
                        stop, step);
    record_temporary(c.variable, DType::Int64);
    auto it = temps_.find(c.variable);
    if (it == temps_.end() || it->second.type != DType::Int64) {
      std::string cpp = fresh_name(c.variable, it == temps_.end());
      out_ += fmt::format("  int64_t {} = {};\n", cpp, counter);
      temps_[c.variable] = Temporary{cpp, DType::Int64};
    } else {
      out_ += fmt::format("  {} = {};\n", it->second.cpp_name, counter);
    }
    ++loop_depth_;
    emit_indented(c.body);
    --loop_depth_;
    out_ += "}\n";
  }

  /// emit() of a block's body, each of its lines indented by two more spaces.
  void emit_indented(const std::vector<Compound>& body) {
    std::string outer = std::move(out_);
    out_.clear();
    emit(body);
    std::string inner = std::move(out_);
    out_ = std::move(outer);
    for (std::size_t b = 0; b < inner.size();) {
      std::size_t e = inner.find('\n', b);
      if (e == std::string::npos) e = inner.size();
      out_ += "  " + inner.substr(b, e - b) + "\n";
      b = e + 1;
    }
  }

  void record_temporary(const std::string& name, DType t) { temp_types_[name].insert(t); }

  /// Python has one integer type: integer values of several C types (a literal is int32, a loop
  /// variable int64) make one temporary of the widest (int64 when signedness differs).
  static std::set<DType> unify_integers(const std::set<DType>& types) {
    bool all_int = true, is_signed = false, is_unsigned = false;
    DType widest = *types.begin();
    for (DType t : types) {
      all_int &= is_int_like(t) && t != DType::Bool;
      is_signed |= is_signed_int(t);
      is_unsigned |= is_unsigned_int(t);
      if (is_int_like(t) && int_rank(t) > int_rank(widest)) widest = t;
    }
    if (!all_int || types.size() < 2) return types;
    return {is_signed && is_unsigned ? DType::Int64 : widest};
  }

  // ---- statements --------------------------------------------------------------------------

  void statement(const Statement& s) {
    std::size_t w = s.begin;
    while (w < s.end && is_ident_char(text_[w])) ++w;
    std::string_view word(text_.data() + s.begin, w - s.begin);
    if (word == "pass" && w == s.end) return;
    if ((word == "break" || word == "continue") && w == s.end && loop_depth_ > 0) {
      out_ += std::string(word) + ";\n";
      return;
    }
    if (auto hint = keyword_hint(word))
      fail(fmt::format("tasklet line {}: unsupported statement '{}'; {}", line_, display(s.begin, s.end),
                       hint->empty() ? kAssignmentsOnly : *hint));
    auto assignment = find_assignment(s.begin, s.end);
    if (!assignment)
      fail(fmt::format("tasklet line {}: unsupported statement '{}'; {}", line_, display(s.begin, s.end),
                       kAssignmentsOnly));
    if (find_assignment(assignment->end, s.end))
      fail(
          fmt::format("tasklet line {}: chained assignment '{}' is not supported; assign each target in its "
                      "own statement",
                      line_, display(s.begin, s.end)));
    if (has_top_level_comma(s.begin, assignment->begin))
      fail(
          fmt::format("tasklet line {}: tuple assignment '{}' is not supported; assign each target in its own "
                      "statement",
                      line_, display(s.begin, s.end)));
    if (has_top_level_comma(assignment->end, s.end))
      fail(fmt::format("tasklet line {}: tuple value in '{}' is not supported; assign one value per statement", line_,
                       display(s.begin, s.end)));
    Expr target = parse(s.begin, assignment->begin);
    Expr value = parse(assignment->end, s.end);
    assign(target, assignment->op, value);
  }

  std::optional<Assignment> find_assignment(std::size_t begin, std::size_t end) const {
    int depth = 0;
    for (std::size_t i = begin; i < end; ++i) {
      char c = text_[i];
      if (c == '(' || c == '[' || c == '{') ++depth;
      if (c == ')' || c == ']' || c == '}') --depth;
      if (depth != 0 || c != '=') continue;
      if (i + 1 < end && text_[i + 1] == '=') {  // ==
        ++i;
        continue;
      }
      char prev = i > begin ? text_[i - 1] : '\0';
      char prev2 = i > begin + 1 ? text_[i - 2] : '\0';
      if ((prev == '<' || prev == '>') && prev2 == prev)
        return Assignment{i - 2, i + 1, prev == '<' ? BinOp::LShift : BinOp::RShift};
      if (prev == '<' || prev == '>' || prev == '!' || prev == ':') continue;  // <=, >=, !=, :=
      if (prev == '/' && prev2 == '/') return Assignment{i - 2, i + 1, BinOp::FloorDiv};
      if (prev == '*' && prev2 == '*') return Assignment{i - 2, i + 1, BinOp::Pow};
      static const std::map<char, BinOp> single = {{'+', BinOp::Add},   {'-', BinOp::Sub},   {'*', BinOp::Mul},
                                                   {'/', BinOp::Div},   {'%', BinOp::Mod},   {'&', BinOp::BitAnd},
                                                   {'|', BinOp::BitOr}, {'^', BinOp::BitXor}};
      auto it = single.find(prev);
      if (it != single.end()) return Assignment{i - 1, i + 1, it->second};
      return Assignment{i, i + 1, std::nullopt};
    }
    return std::nullopt;
  }

  bool has_top_level_comma(std::size_t begin, std::size_t end) const {
    int depth = 0;
    for (std::size_t i = begin; i < end; ++i) {
      char c = text_[i];
      if (c == '(' || c == '[' || c == '{') ++depth;
      if (c == ')' || c == ']' || c == '}') --depth;
      if (depth == 0 && c == ',') return true;
    }
    return false;
  }

  Expr parse(std::size_t begin, std::size_t end) const {
    try {
      return parse_expr(std::string_view(text_).substr(begin, end - begin), Dialect::Plain);
    } catch (const ExprSyntaxError& e) {
      syntax_error(begin + e.offset, e.what());
    }
  }

  void assign(const Expr& target, std::optional<BinOp> op, const Expr& value) {
    const ExprNode& t = *target;
    bool plain_name = t.kind == ExprKind::Symbol && t.name.find('.') == std::string::npos;
    const std::string& name = t.name;
    if ((plain_name || t.kind == ExprKind::Subscript) && !scope_.outputs.count(name)) {
      if (scope_.inputs.count(name))
        fail(
            fmt::format("tasklet line {}: cannot assign to input connector '{}'; input connectors are read-only "
                        "(assign to an output connector or a new temporary)",
                        line_, name));
      if (scope_.symbols.count(name))
        fail(fmt::format("tasklet line {}: cannot assign to symbol '{}'; symbols are read-only in a tasklet", line_,
                         name));
      if (t.kind == ExprKind::Subscript)
        fail(fmt::format("tasklet line {}: cannot assign to '{}'; only output connectors can be subscripted", line_,
                         print_expr(target)));
    }
    if (!plain_name && t.kind != ExprKind::Subscript)
      fail(
          fmt::format("tasklet line {}: cannot assign to '{}'; expected an output connector, an element of one "
                      "or a temporary name",
                      line_, print_expr(target)));

    bool to_output = scope_.outputs.count(name) > 0;
    DType out_type = to_output ? scope_.outputs.at(name) : DType::Int32;
    Value rhs = expr(value, to_output && !op && out_type == DType::Bool);
    Value result = rhs;
    bool compound = false;
    Value lhs;
    if (op) {
      lhs = expr(target);
      bool plain = false;
      result = binary(*op, lhs, rhs, *value, &plain);
      compound = plain;
    } else if (to_output) {
      lhs = t.kind == ExprKind::Subscript ? subscript(t) : name_value(t);
    }
    auto compound_text = [&](const std::string& cpp) {
      return fmt::format("{} {}= {};\n", cpp, binop_text(*op), rhs.text);
    };

    if (to_output) {
      bool truncate = is_int_like(out_type) && out_type != DType::Bool && is_float(result.type);
      if (is_complex(result.type) && !is_complex(out_type))
        fail(fmt::format("tasklet line {}: cannot assign a {} value to '{}' of type {}", line_, to_string(result.type),
                         name, to_string(out_type)));
      if (out_type == DType::Bool && result.type != DType::Bool) {
        result = truth_value(result);
        compound = false;
      }
      if (compound && !truncate)
        out_ += compound_text(lhs.text);
      else
        out_ += fmt::format("{} = {};\n", lhs.text, truncate ? cast_to(result, out_type).text : result.text);
      return;
    }
    record_temporary(name, result.type);
    auto it = temps_.find(name);
    if (it != temps_.end() && (it->second.type == result.type || hoisted_)) {  // hoisted: converts implicitly
      if (compound)
        out_ += compound_text(it->second.cpp_name);
      else
        out_ += fmt::format("{} = {};\n", it->second.cpp_name, result.text);
      return;
    }
    // A new temporary, or one that changes its type (Python's variables are untyped): declare a
    // new C++ variable, which later reads refer to. The code is straight-line, so this is exact.
    std::string cpp = fresh_name(name, it == temps_.end());
    out_ += fmt::format("{} {} = {};\n", dtype_ctype(result.type), cpp, result.text);
    temps_[name] = Temporary{cpp, result.type};
  }

  std::string fresh_name(const std::string& name, bool may_keep) {
    auto taken = [&](const std::string& n) {
      return reserved_in_cpp(n) || cpp_names_.count(n) || scope_.inputs.count(n) || scope_.outputs.count(n) ||
             scope_.symbols.count(n);
    };
    std::string cpp = name;
    for (int i = 1; !may_keep || taken(cpp); ++i) {
      cpp = fmt::format("{}_{}", name, i);
      may_keep = !words_.count(cpp);
    }
    cpp_names_.insert(cpp);
    return cpp;
  }

  // ---- expressions -------------------------------------------------------------------------

  std::string where() const { return what_.empty() ? fmt::format("tasklet line {}", line_) : what_; }

  void require_real(const Value& v, std::string_view what) const {
    if (is_complex(v.type))
      fail(fmt::format("unsupported operand type {} for '{}' in {}; Python does not define it for complex numbers",
                       to_string(v.type), what, where()));
  }
  void require_integer(const Value& v, std::string_view what) const {
    if (!is_int_like(v.type))
      fail(fmt::format("unsupported operand type {} for '{}' in {}; the operator needs integers", to_string(v.type),
                       what, where()));
  }

  // `truth`: only the truth value of the result matters (a condition, an operand of `not`).
  Value expr(const Expr& ep, bool truth = false) {
    const ExprNode& e = *ep;
    switch (e.kind) {
      case ExprKind::Int: {
        DType natural = e.ival >= INT32_MIN && e.ival <= INT32_MAX ? DType::Int32 : DType::Int64;
        Value v{std::to_string(e.ival), kPrimary, natural, &e};
        if (e.dtype && *e.dtype != natural) v = cast_to(v, *e.dtype);
        v.literal = &e;
        return v;
      }
      case ExprKind::Float:
        return {float_literal(e), kPrimary, DType::Float64, &e};
      case ExprKind::Bool:
        return {e.ival ? "true" : "false", kPrimary, DType::Bool};
      case ExprKind::Symbol:
        return name_value(e);
      case ExprKind::Subscript:
        return subscript(e);
      case ExprKind::Call:
        return call(e);
      case ExprKind::Unary: {
        auto op = static_cast<UnaryOp>(e.op);
        return unary(op, expr(e.args[0], op == UnaryOp::Not));
      }
      case ExprKind::Binary:
        return binary(static_cast<BinOp>(e.op), expr(e.args[0]), expr(e.args[1]), *e.args[1]);
      case ExprKind::Compare:
        return compare(static_cast<CmpOp>(e.op), expr(e.args[0]), expr(e.args[1]));
      case ExprKind::BoolOp: {
        std::vector<Value> ops;
        for (const Expr& a : e.args) ops.push_back(expr(a, truth));
        return bool_op(e.op == static_cast<int>(BoolOpKind::And), std::move(ops), truth);
      }
      case ExprKind::IfExp: {
        Value cond = expr(e.args[0], true);
        require_real(cond, "if");
        std::vector<Value> ops{expr(e.args[1], truth), expr(e.args[2], truth)};
        return conditional(cond, ops[0], ops[1]);
      }
    }
    internal_error(__FILE__, __LINE__, "unknown expression kind");
  }

  Value name_value(const ExprNode& e) {
    if (auto it = temps_.find(e.name); it != temps_.end()) return {it->second.cpp_name, kPrimary, it->second.type};
    // z.real, z.imag
    if (auto dot = e.name.rfind('.'); dot != std::string::npos && is_value_name(e.name.substr(0, dot))) {
      std::string attr = e.name.substr(dot + 1);
      if (attr == "real" || attr == "imag") {
        Value z = name_value(*make_symbol(e.name.substr(0, dot)));
        if (!is_complex(z.type)) return attr == "real" ? z : Value{"0", kPrimary, DType::Int32};
        return {fmt::format("{}.{}", z.text, attr == "real" ? "re" : "im"), kPrimary, complex_part(z.type)};
      }
    }
    if (scope_.pointers.count(e.name))
      fail(
          fmt::format("connector '{}' is used as a single value in {}, but its memlet binds {} (it moves more than "
                      "one element, or is dynamic); subscript it ('{}[0]', '{}[i]') or make the memlet one element",
                      e.name, where(), "a pointer", e.name, e.name));
    for (const auto* names : {&scope_.inputs, &scope_.outputs, &scope_.symbols})
      if (auto it = names->find(e.name); it != names->end()) return {e.name, kPrimary, it->second};
    auto [module, base] = split_module(e.name);
    bool known_module = !module.empty() && module != "dace.math.";
    if (base == "pi" && (known_module || module.empty())) return {"3.141592653589793", kPrimary, DType::Float64};
    if (known_module) {
      if (base == "e") return {"2.718281828459045", kPrimary, DType::Float64};
      if (base == "tau") return {"6.283185307179586", kPrimary, DType::Float64};
      if (base == "inf") return {"HUGE_VAL", kPrimary, DType::Float64};
      if (base == "nan") return {"static_cast<double>(NAN)", kPrimary, DType::Float64};
    }
    fail(fmt::format("unknown name '{}' in {}; expected a connector, a symbol or a known constant", e.name, where()));
  }

  Value subscript(const ExprNode& e) {
    const std::map<std::string, DType>* owner = nullptr;
    for (const auto* names : {&scope_.inputs, &scope_.outputs})
      if (names->count(e.name)) owner = names;
    if (!owner) {
      if (temps_.count(e.name) || scope_.symbols.count(e.name))
        fail(fmt::format("cannot subscript '{}' in {}; only connectors can be subscripted", e.name, where()));
      fail(fmt::format("unknown name '{}' in {}; expected a connector, a symbol or a known constant", e.name, where()));
    }
    std::string shown = print_expr(make_node(e));
    // The element strides the indices go with (the memlet's subset through the container's strides).
    std::vector<std::string> strides{"1"};
    if (auto l = scope_.layouts.find(e.name); l != scope_.layouts.end()) {
      if (e.args.size() == l->second.moving.size())
        strides = l->second.moving;
      else if (e.args.size() == l->second.all.size())
        strides = l->second.all;
      else
        fail(
            fmt::format("subscript '{}' in {} has {} indices, but the memlet of connector '{}' has {} dimension(s), "
                        "{} of them of more than one element",
                        shown, where(), e.args.size(), e.name, l->second.all.size(), l->second.moving.size()));
    } else if (e.args.size() != 1) {
      fail(fmt::format("subscript '{}' in {} has {} indices; connector '{}' takes one", shown, where(), e.args.size(),
                       e.name));
    }
    std::string offset;
    for (std::size_t k = 0; k < e.args.size(); ++k) {
      Value index = expr(e.args[k]);
      if (!is_int_like(index.type))
        fail(fmt::format("subscript index of '{}' in {} has type {}; expected an integer", shown, where(),
                         to_string(index.type)));
      std::string term = strides[k] != "1"    ? fmt::format("({}) * ({})", index.text, strides[k])
                         : e.args.size() == 1 ? index.text
                                              : "(" + index.text + ")";
      offset += (k ? " + " : "") + term;
    }
    return {fmt::format("{}[{}]", e.name, offset), kPrimary, owner->at(e.name)};
  }

  Value unary(UnaryOp op, const Value& a) {
    auto wrap = [&](const char* sign) { return std::string(sign) + (a.prec <= kUnary ? "(" + a.text + ")" : a.text); };
    switch (op) {
      case UnaryOp::Not: {
        require_real(a, "not");
        Value t = truth_value(a);
        return {"!" + (t.prec <= kUnary ? "(" + t.text + ")" : t.text), kUnary, DType::Bool};
      }
      case UnaryOp::Neg:
      case UnaryOp::Plus:
        if (is_complex(a.type)) return {wrap(op == UnaryOp::Neg ? "-" : "+"), kUnary, a.type};
        return {wrap(op == UnaryOp::Neg ? "-" : "+"), kUnary, promote(a.type)};
      case UnaryOp::Invert:
        require_integer(a, "~");
        if (a.type == DType::Bool) return unary(op, cast_to(a, DType::Int32));  // ~True == -2
        return {wrap("~"), kUnary, promote(a.type)};
    }
    internal_error(__FILE__, __LINE__, "unknown unary operator");
  }

  // `a op b`. `rhs` is b's expression. `plain` (when given) is set when the result is `a op b` with
  // a C++ operator and no casts, so that `a op= b` computes the same.
  Value binary(BinOp op, Value a, Value b, const ExprNode& rhs, bool* plain = nullptr) {
    const char* py = binop_text(op);
    if (is_complex(a.type) || is_complex(b.type)) {
      if (plain) *plain = false;
      return complex_binary(op, std::move(a), std::move(b));
    }
    require_real(a, py);
    require_real(b, py);
    if (plain) *plain = false;
    std::vector<Value> ops{std::move(a), std::move(b)};
    DType ta = ops[0].type, tb = ops[1].type;
    DType want = python_type(cpp_arith(ta, tb), ta, tb);
    bool both_int = is_int_like(ta) && is_int_like(tb);
    switch (op) {
      case BinOp::Div:
        if (both_int) want = DType::Float64;  // true division
        [[fallthrough]];
      case BinOp::Add:
      case BinOp::Sub:
      case BinOp::Mul: {
        bool cast = cast_until(ops, want, arith_of);
        if (plain) *plain = !cast;
        int prec = op == BinOp::Add || op == BinOp::Sub ? kAdd : kMul;
        return infix(ops[0], py, ops[1], prec, want);
      }
      case BinOp::FloorDiv:
      case BinOp::Mod:
      case BinOp::Pow: {
        // A negative integer power is a float in Python (2 ** -1 == 0.5).
        bool negative_power = rhs.kind == ExprKind::Unary && rhs.op == static_cast<int>(UnaryOp::Neg) &&
                              rhs.args[0]->kind == ExprKind::Int;
        if (op == BinOp::Pow && both_int && negative_power) want = DType::Float64;
        cast_until(ops, want, common_of);
        const char* fn = op == BinOp::FloorDiv ? "floordiv" : op == BinOp::Mod ? "floormod" : "pow";
        return {fmt::format("sdfc::rt::{}({})", fn, join_args(ops)), kPrimary, want};
      }
      case BinOp::BitAnd:
      case BinOp::BitOr:
      case BinOp::BitXor: {
        require_integer(ops[0], py);
        require_integer(ops[1], py);
        bool cast = cast_until(ops, want, arith_of);
        if (plain) *plain = !cast;
        int prec = op == BinOp::BitAnd ? kBitAnd : op == BinOp::BitOr ? kBitOr : kBitXor;
        return infix(ops[0], py, ops[1], prec, want);
      }
      case BinOp::LShift:
      case BinOp::RShift: {
        require_integer(ops[0], py);
        require_integer(ops[1], py);
        // C++ shifts compute in the left operand's type, Python in the wider one.
        bool cast = cast_until(ops, want, [](const std::vector<Value>& o) { return promote(o[0].type); });
        if (plain) *plain = !cast;
        return infix(ops[0], py, ops[1], kShift, want);
      }
    }
    internal_error(__FILE__, __LINE__, "unknown binary operator");
  }

  /// Arithmetic with a complex operand (sdfc::rt::complex, runtime/include/sdfc/complex.h): both
  /// operands in the result's complex type; `**` through complex_pow (integer exponents exact).
  Value complex_binary(BinOp op, Value a, Value b) {
    std::vector<Value> ops{std::move(a), std::move(b)};
    DType want = complex_result(ops);
    switch (op) {
      case BinOp::Add:
      case BinOp::Sub:
      case BinOp::Mul:
      case BinOp::Div:
        for (Value& v : ops) v = cast_to(v, want);
        return infix(ops[0], binop_text(op), ops[1], op == BinOp::Add || op == BinOp::Sub ? kAdd : kMul, want);
      case BinOp::Pow:
        if (!is_int_like(ops[1].type)) ops[1] = cast_to(ops[1], want);
        ops[0] = cast_to(ops[0], want);
        return {fmt::format("sdfc::rt::complex_pow({})", join_args(ops)), kPrimary, want};
      default:
        fail(
            fmt::format("unsupported operand type complex for '{}' in {}; Python does not define it for complex "
                        "numbers",
                        binop_text(op), where()));
    }
  }

  Value compare(CmpOp op, Value a, Value b) {
    static const char* const text[] = {"<", "<=", ">", ">=", "==", "!="};
    const char* t = text[static_cast<int>(op)];
    if ((is_complex(a.type) || is_complex(b.type)) && (op == CmpOp::Eq || op == CmpOp::Ne)) {
      std::vector<Value> ops{std::move(a), std::move(b)};
      DType want = complex_result(ops);
      for (Value& v : ops) v = cast_to(v, want);
      return infix(ops[0], t, ops[1], kEq, DType::Bool);
    }
    require_real(a, t);
    require_real(b, t);
    std::vector<Value> ops{std::move(a), std::move(b)};
    DType ta = ops[0].type, tb = ops[1].type;
    cast_until(ops, python_type(cpp_arith(ta, tb), ta, tb), arith_of);
    int prec = op == CmpOp::Eq || op == CmpOp::Ne ? kEq : kRel;
    return infix(ops[0], t, ops[1], prec, DType::Bool);
  }

  // Python's `and`/`or` return an operand; on booleans, or for a truth value, that is C++'s &&/||.
  Value bool_op(bool is_and, std::vector<Value> ops, bool truth) {
    const char* py = is_and ? "and" : "or";
    bool all_bool = true;
    for (const Value& v : ops) {
      require_real(v, py);
      all_bool &= v.type == DType::Bool;
    }
    if (truth || all_bool) {
      int prec = is_and ? kAnd : kOr;
      Value out{"", prec, DType::Bool};
      for (std::size_t i = 0; i < ops.size(); ++i)
        out.text += (i ? (is_and ? " && " : " || ") : "") + operand(truth_value(ops[i]), prec, i > 0);
      return out;
    }
    // `a and b` is `b` if a is true, else `a`; `a or b` is `a` if a is true, else `b`.
    Value acc = ops.back();
    for (std::size_t i = ops.size() - 1; i-- > 0;)
      acc = is_and ? conditional(ops[i], acc, ops[i]) : conditional(ops[i], ops[i], acc);
    return acc;
  }

  Value conditional(const Value& cond, const Value& a, const Value& b) {
    std::vector<Value> ops{a, b};
    DType want = is_complex(a.type) || is_complex(b.type) ? complex_result(ops) : python_common(ops);
    if (is_complex(want))
      for (Value& v : ops) v = cast_to(v, want);
    cast_until(ops, want, common_of);
    return {fmt::format("({} ? {} : {})", truth_value(cond).text, ops[0].text, ops[1].text), kPrimary, want};
  }

  Value call(const ExprNode& e) {
    if (!e.kwnames.empty())
      fail(fmt::format("keyword argument '{}' in the call of '{}' in {} is not supported", e.kwnames[0], e.name,
                       where()));
    auto [module, base] = split_module(e.name);

    // Casts: float(x), int(x), bool(x), dace.float32(x), np.int64(x), ...
    std::optional<DType> cast;
    if (module.empty()) {
      if (base == "float") cast = DType::Float64;
      if (base == "int") cast = DType::Int64;
      if (base == "bool") cast = DType::Bool;
    } else if (module == "dace." || module == "np." || module == "numpy.") {
      cast = parse_dtype(base);
    }
    if (cast) {
      check_arity(e, 1);
      Value v = expr(e.args[0]);
      if (!is_complex(*cast)) require_real(v, e.name);
      return cast_to(v, *cast);
    }
    // complex(re[, im]) (also the imaginary literal `1j`, read as complex(0, 1.0)).
    if (module.empty() && base == "complex" && (e.args.size() == 1 || e.args.size() == 2)) {
      std::vector<Value> parts;
      for (const Expr& a : e.args) parts.push_back(expr(a));
      DType want = complex_result(parts);
      if (parts.size() == 1) return cast_to(parts[0], want);
      for (Value& v : parts) {
        require_real(v, "complex");
        v = cast_to(v, complex_part(want));
      }
      return {fmt::format("{}({})", dtype_ctype(want), join_args(parts)), kPrimary, want};
    }
    // z.conjugate()
    if (auto dot = e.name.rfind('.'); dot != std::string::npos && e.name.substr(dot + 1) == "conjugate" &&
                                      e.args.empty() && is_value_name(e.name.substr(0, dot))) {
      Value z = name_value(*make_symbol(e.name.substr(0, dot)));
      return is_complex(z.type) ? Value{fmt::format("sdfc::rt::conj({})", z.text), kPrimary, z.type} : z;
    }
    if (auto v = complex_function(e, base)) return *v;

    const Function* fn = find_function(base);
    // math.pow is a float function in Python (math.pow(2, 3) == 8.0); pow and ** are not.
    static const Function math_pow{"std::pow", FnKind::StdReal, 2};
    if (module == "math." && base == "pow") fn = &math_pow;
    if (!fn)
      fail(
          fmt::format("unsupported function '{}' in {}; expected a math function (such as math.sqrt or exp), "
                      "abs, min, max, pow or a cast (such as float or dace.float32)",
                      e.name, where()));
    check_arity(e, fn->arity);
    std::vector<Value> args;
    for (const Expr& a : e.args) {
      args.push_back(expr(a));
      require_real(args.back(), e.name);
    }
    switch (fn->kind) {
      case FnKind::StdReal: {
        bool single = true;
        for (Value& a : args) {
          if (a.type == DType::Float16) a = cast_to(a, DType::Float32);
          single &= a.type == DType::Float32;
        }
        return {fmt::format("{}({})", fn->cpp, join_args(args)), kPrimary, single ? DType::Float32 : DType::Float64};
      }
      case FnKind::StdPredicate:
        return {fmt::format("{}({})", fn->cpp, join_args(args)), kPrimary, DType::Bool};
      case FnKind::RtAbs:
      case FnKind::RtRound: {
        DType t = fn->kind == FnKind::RtAbs && is_int_like(args[0].type) ? promote(args[0].type) : args[0].type;
        return {fmt::format("{}({})", fn->cpp, args[0].text), kPrimary, t};
      }
      case FnKind::RtMinMax: {
        DType want = python_common(args);
        cast_until(args, want, common_of);
        return {fmt::format("{}({})", fn->cpp, join_args(args)), kPrimary, want};
      }
      case FnKind::RtPow:
        return binary(BinOp::Pow, args[0], args[1], *e.args[1]);
    }
    internal_error(__FILE__, __LINE__, "unknown function kind");
  }

  /// Functions of complex arguments (and real/imag/conj of any number): nullopt when `e` is not
  /// one of them or has no complex argument.
  std::optional<Value> complex_function(const ExprNode& e, std::string_view base) {
    static const std::set<std::string_view> parts = {"real", "imag", "conj", "conjugate", "angle"};
    static const std::set<std::string_view> complex_valued = {"exp", "log",  "sqrt", "sin", "cos",
                                                              "tan", "sinh", "cosh", "tanh"};
    bool part = parts.count(base) > 0;
    if (!part && !complex_valued.count(base) && base != "abs" && base != "absolute") return std::nullopt;
    if (e.args.size() != 1) return std::nullopt;
    Value z = expr(e.args[0]);
    if (!is_complex(z.type)) {
      if (!part) return std::nullopt;
      if (base == "imag") return Value{"0", kPrimary, DType::Int32};
      if (base == "angle")
        return Value{fmt::format("({} < 0 ? 3.141592653589793 : 0.0)", z.text), kPrimary, DType::Float64};
      return z;  // real, conj of a real number
    }
    if (base == "abs" || base == "absolute" || base == "real" || base == "imag" || base == "angle")
      return Value{fmt::format("sdfc::rt::{}({})",
                               base == "absolute" ? "abs"
                               : base == "angle"  ? "arg"
                                                  : base,
                               z.text),
                   kPrimary, complex_part(z.type)};
    if (base == "conj" || base == "conjugate")
      return Value{fmt::format("sdfc::rt::conj({})", z.text), kPrimary, z.type};
    return Value{fmt::format("sdfc::rt::{}({})", base, z.text), kPrimary, z.type};
  }

  /// Whether `name` is a connector, a symbol or a temporary (a value attributes apply to).
  bool is_value_name(const std::string& name) const {
    return temps_.count(name) || scope_.inputs.count(name) || scope_.outputs.count(name) || scope_.symbols.count(name);
  }

  void check_arity(const ExprNode& e, int arity) const {
    std::size_t n = e.args.size();
    if (arity == 0 && n < 2)
      fail(fmt::format("function '{}' in {} takes at least 2 arguments, got {}", e.name, where(), n));
    if (arity > 0 && n != static_cast<std::size_t>(arity))
      fail(fmt::format("function '{}' in {} takes {} argument{}, got {}", e.name, where(), arity, arity == 1 ? "" : "s",
                       n));
  }

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
  int loop_depth_ = 0;                                 // loops around the statement being translated
  bool hoisted_ = false;                               // temporaries declared before the first statement (control flow)
  std::set<std::string> cpp_names_;                    // C++ names of temporaries
  std::set<std::string> words_;                        // identifiers of the code
  std::vector<std::size_t> line_starts_;               // offsets of the lines of the code
  std::string out_;
};

}  // namespace

namespace {
bool single_element(const Range& r) {
  for (auto& d : r)
    if (!equal(simplify(d.start), simplify(d.end))) return false;
  return true;
}

TaskletScope::Layout layout(const SDFG& sdfg, const std::string& data, const Range& r) {
  TaskletScope::Layout l;
  const DataDesc* desc = sdfg.find_data(data);
  if (!desc || desc->kind == DataKind::Scalar || desc->strides.size() != r.size()) return l;
  for (std::size_t k = 0; k < r.size(); ++k) {
    std::string s = print_cpp(simplify(make_binary(BinOp::Mul, desc->strides[k], r[k].step)));
    l.all.push_back(s);
    if (as_constant(range_extent(r[k])) != 1) l.moving.push_back(s);
  }
  return l;
}
}  // namespace

bool input_bound_by_value(const Memlet& m, const Range& r) {
  return single_element(r) && !m.dynamic;
}
bool output_bound_by_value(const Memlet& m, const Range& r) {
  return single_element(r) && !(m.dynamic && !m.wcr);
}
bool output_bound_by_reference(const Memlet& m, const Range& r) {
  return single_element(r) && m.dynamic && !m.wcr;
}

TaskletScope python_tasklet_scope(const SDFG& sdfg, const Block& st, int id, const std::vector<const DataEdge*>& in,
                                  const std::vector<const DataEdge*>& out) {
  const Node& n = st.node(id);
  TaskletScope scope;
  for (auto& [s, t] : sdfg.symbols) scope.symbols[s] = t;
  for (auto& s : assigned_symbols(sdfg))
    if (!scope.symbols.count(s)) scope.symbols[s] = DType::Int64;  // loop variables not in the symbol table
  for (int s = n.scope_entry; s >= 0; s = st.node(s).scope_entry)
    for (auto& p : st.node(s).map.params) scope.symbols[p] = DType::Int64;
  for (int e = n.scope_entry; e >= 0; e = st.node(e).scope_entry)
    for (auto& d : dynamic_range_inputs(sdfg, st, e)) scope.symbols[d.name] = d.type;
  auto data_type = [&](const DataEdge& e) {
    const DataDesc* d = sdfg.find_data(e.memlet.data);
    return d ? d->dtype : DType::Float64;
  };
  // Each connector binds through its first edge; pointers get a layout for their subscripts.
  auto bind = [&](const std::vector<Connector>& conns, const std::vector<const DataEdge*>& edges, bool inputs) {
    for (auto& conn : conns) {
      const DataEdge* e = nullptr;
      for (auto* x : edges) {
        const std::optional<std::string>& end = inputs ? x->dst_conn : x->src_conn;
        if (end && *end == conn.name) {
          e = x;
          break;
        }
      }
      if (!e || e->memlet.data.empty() || !e->memlet.subset) continue;
      const Range& r = *e->memlet.subset;
      (inputs ? scope.inputs : scope.outputs)[conn.name] = conn.dtype.value_or(data_type(*e));
      if (inputs ? !input_bound_by_value(e->memlet, r) : !single_element(r)) {
        scope.layouts[conn.name] = layout(sdfg, e->memlet.data, r);
        scope.pointers.insert(conn.name);
      }
    }
  };
  bind(n.in_connectors, in, true);
  bind(n.out_connectors, out, false);
  return scope;
}

std::string translate_python_tasklet(const std::string& code, const TaskletScope& scope, const std::string& file,
                                     const std::string& pointer) {
  return Translator(code, scope, file, pointer).run();
}

std::vector<Diagnostic> check_python_tasklets(const SDFG& root, const std::string& file) {
  std::vector<Diagnostic> diags;
  walk::for_each_sdfg(root, "", [&](const SDFG& s, const std::string& ptr) {
    walk::for_each_state(s, ptr, [&](const Block& st, const std::string& sp) {
      std::vector<std::vector<const DataEdge*>> in(st.nodes.size()), out(st.nodes.size());
      for (auto& e : st.edges) {
        if (e.dst >= 0 && static_cast<std::size_t>(e.dst) < st.nodes.size())
          in[static_cast<std::size_t>(e.dst)].push_back(&e);
        if (e.src >= 0 && static_cast<std::size_t>(e.src) < st.nodes.size())
          out[static_cast<std::size_t>(e.src)].push_back(&e);
      }
      for (std::size_t i = 0; i < st.nodes.size(); ++i) {
        const Node& n = *st.nodes[i];
        if (n.kind != NodeKind::Tasklet || n.code.language != Language::Python) continue;
        try {
          (void)translate_python_tasklet(n.code.code, python_tasklet_scope(s, st, static_cast<int>(i), in[i], out[i]),
                                         file, walk::node_pointer(sp, i));
        } catch (const UserError& e) {
          for (auto& d : e.diagnostics()) diags.push_back(d);
        }
      }
    });
  });
  return diags;
}

ExpressionTranslation translate_python_expression(const Expr& e, const TaskletScope& scope, const std::string& file,
                                                  const std::string& code_pointer, const std::string& what,
                                                  bool condition) {
  std::string text = print_expr(e);
  return Translator(text, scope, file, code_pointer).run_expression(e, what, code_pointer, condition);
}

}  // namespace sdfc
