#include "ir/Expr.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <numeric>

#include "ir/Diagnostic.h"

namespace sdfc {

// ---------------------------------------------------------------------------------------------
// Construction

Expr make_node(ExprNode n) {
  return std::make_shared<const ExprNode>(std::move(n));
}

Expr make_int(std::int64_t v, std::optional<DType> t) {
  ExprNode n{ExprKind::Int};
  n.ival = v;
  n.dtype = t;
  return make_node(std::move(n));
}
Expr make_float(double v, std::string text) {
  ExprNode n{ExprKind::Float};
  n.fval = v;
  n.name = std::move(text);
  return make_node(std::move(n));
}
Expr make_bool(bool v) {
  ExprNode n{ExprKind::Bool};
  n.ival = v;
  return make_node(std::move(n));
}
Expr make_symbol(std::string name, std::optional<DType> t) {
  ExprNode n{ExprKind::Symbol};
  n.name = std::move(name);
  n.dtype = t;
  return make_node(std::move(n));
}
Expr make_unary(UnaryOp op, Expr a) {
  ExprNode n{ExprKind::Unary};
  n.op = static_cast<int>(op);
  n.args = {std::move(a)};
  return make_node(std::move(n));
}
Expr make_binary(BinOp op, Expr a, Expr b) {
  ExprNode n{ExprKind::Binary};
  n.op = static_cast<int>(op);
  n.args = {std::move(a), std::move(b)};
  return make_node(std::move(n));
}
Expr make_call(std::string name, std::vector<Expr> args) {
  ExprNode n{ExprKind::Call};
  n.name = std::move(name);
  n.args = std::move(args);
  return make_node(std::move(n));
}

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  std::int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
std::int64_t floor_mod(std::int64_t a, std::int64_t b) {
  std::int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

// ---------------------------------------------------------------------------------------------
// Parsing: a Pratt parser over Python expression syntax plus DaCe's typed extensions.

namespace {

constexpr int kMaxDepth = 64;  // deeper inputs cost seconds in simplification (issue 18: 180 powers took 26 s)
// Binary operators in one expression: a chain `a + b + ...` is a tree as deep as it is long,
// and everything after parsing (simplify, printing) recurses over it.
constexpr int kMaxBinaryOperators = 2000;

struct Parser {
  std::string_view src;
  Dialect dialect;
  std::size_t pos = 0;
  int depth = 0;
  int binary_operators = 0;

  [[noreturn]] void fail(std::size_t at, const std::string& msg) { throw ExprSyntaxError(at, msg); }

  void skip_ws() {
    while (pos < src.size() && (src[pos] == ' ' || src[pos] == '\t' || src[pos] == '\n' || src[pos] == '\r')) ++pos;
  }
  bool peek(std::string_view tok) {
    skip_ws();
    return src.substr(pos, tok.size()) == tok;
  }
  bool peek_word(std::string_view w) {
    skip_ws();
    if (src.substr(pos, w.size()) != w) return false;
    std::size_t e = pos + w.size();
    return e >= src.size() || !(std::isalnum(static_cast<unsigned char>(src[e])) || src[e] == '_');
  }
  bool accept(std::string_view tok) {
    if (!peek(tok)) return false;
    pos += tok.size();
    return true;
  }
  void expect(std::string_view tok) {
    if (!accept(tok)) fail(pos, fmt::format("expected '{}' but found {}", tok, describe_here()));
  }
  std::string describe_here() {
    skip_ws();
    if (pos >= src.size()) return "the end of the expression";
    return fmt::format("'{}'", src.substr(pos, std::min<std::size_t>(12, src.size() - pos)));
  }

  struct DepthGuard {
    Parser& p;
    explicit DepthGuard(Parser& p) : p(p) {
      if (++p.depth > kMaxDepth) p.fail(p.pos, fmt::format("expression nested deeper than {} levels", kMaxDepth));
    }
    ~DepthGuard() { --p.depth; }
  };

  Expr parse_all() {
    Expr e = parse_ifexp();
    skip_ws();
    if (pos != src.size()) fail(pos, fmt::format("unexpected {} after the expression", describe_here()));
    return e;
  }

  Expr parse_ifexp() {
    DepthGuard g(*this);
    Expr body = parse_or();
    if (peek_word("if")) {
      pos += 2;
      Expr cond = parse_or();
      if (!peek_word("else")) fail(pos, "expected 'else' in a conditional expression");
      pos += 4;
      Expr other = parse_ifexp();
      ExprNode n{ExprKind::IfExp};
      n.args = {cond, body, other};
      return make_node(std::move(n));
    }
    return body;
  }

  Expr parse_boolop(BoolOpKind k, std::string_view word, Expr (Parser::*next)()) {
    Expr first = (this->*next)();
    if (!peek_word(word)) return first;
    ExprNode n{ExprKind::BoolOp};
    n.op = static_cast<int>(k);
    n.args.push_back(first);
    while (peek_word(word)) {
      pos += word.size();
      n.args.push_back((this->*next)());
    }
    return make_node(std::move(n));
  }
  Expr parse_or() { return parse_boolop(BoolOpKind::Or, "or", &Parser::parse_and); }
  Expr parse_and() { return parse_boolop(BoolOpKind::And, "and", &Parser::parse_not); }
  Expr parse_not() {
    if (peek_word("not")) {
      DepthGuard g(*this);
      pos += 3;
      return make_unary(UnaryOp::Not, parse_not());
    }
    return parse_compare();
  }

  std::optional<CmpOp> cmp_op() {
    skip_ws();
    static const std::pair<std::string_view, CmpOp> ops[] = {{"<=", CmpOp::Le}, {">=", CmpOp::Ge}, {"==", CmpOp::Eq},
                                                             {"!=", CmpOp::Ne}, {"<", CmpOp::Lt},  {">", CmpOp::Gt}};
    // `is not` and `is` (keywords: a name may only start with them)
    auto keyword = [&](std::string_view k, std::size_t at) {
      return src.substr(at, k.size()) == k &&
             !(at + k.size() < src.size() &&
               (std::isalnum(static_cast<unsigned char>(src[at + k.size()])) || src[at + k.size()] == '_'));
    };
    if (keyword("is", pos)) {
      std::size_t after = pos + 2;
      while (after < src.size() && std::isspace(static_cast<unsigned char>(src[after]))) ++after;
      if (keyword("not", after)) {
        pos = after + 3;
        return CmpOp::IsNot;
      }
      pos += 2;
      return CmpOp::Is;
    }
    for (auto& [t, op] : ops) {
      if (src.substr(pos, t.size()) == t && !(t.size() == 1 && src.substr(pos, 2) == "<<") &&
          !(t.size() == 1 && src.substr(pos, 2) == ">>")) {
        pos += t.size();
        return op;
      }
    }
    return std::nullopt;
  }
  Expr parse_compare() {
    Expr left = parse_binary(0);
    std::size_t save = pos;
    auto op = cmp_op();
    if (!op) {
      pos = save;
      return left;
    }
    // a < b < c becomes (a < b) and (b < c), as in Python
    std::vector<Expr> parts;
    Expr prev = left;
    while (op) {
      Expr right = parse_binary(0);
      ExprNode n{ExprKind::Compare};
      n.op = static_cast<int>(*op);
      n.args = {prev, right};
      parts.push_back(make_node(std::move(n)));
      prev = right;
      save = pos;
      op = cmp_op();
      if (!op) pos = save;
    }
    if (parts.size() == 1) return parts[0];
    ExprNode n{ExprKind::BoolOp};
    n.op = static_cast<int>(BoolOpKind::And);
    n.args = std::move(parts);
    return make_node(std::move(n));
  }

  // Binary operator levels from loosest to tightest (Python's precedence).
  std::optional<BinOp> bin_op_at_level(int level) {
    skip_ws();
    auto at = [&](std::string_view t) { return src.substr(pos, t.size()) == t; };
    switch (level) {
      case 0:
        if (at("|") && !at("||")) return BinOp::BitOr;
        break;
      case 1:
        if (at("^")) return BinOp::BitXor;
        break;
      case 2:
        if (at("&") && !at("&&")) return BinOp::BitAnd;
        break;
      case 3:
        if (at("<<")) return BinOp::LShift;
        if (at(">>")) return BinOp::RShift;
        break;
      case 4:
        if (at("+")) return BinOp::Add;
        if (at("-")) return BinOp::Sub;
        break;
      case 5:
        if (at("**")) return std::nullopt;
        if (at("//")) return BinOp::FloorDiv;
        if (at("*")) return BinOp::Mul;
        if (at("/")) return BinOp::Div;
        if (at("%")) return BinOp::Mod;
        break;
    }
    return std::nullopt;
  }
  static std::size_t op_len(BinOp op) {
    return (op == BinOp::FloorDiv || op == BinOp::LShift || op == BinOp::RShift) ? 2 : 1;
  }
  Expr parse_binary(int level) {
    if (level > 5) return parse_unary();
    DepthGuard g(*this);
    Expr left = parse_binary(level + 1);
    while (auto op = bin_op_at_level(level)) {
      if (++binary_operators > kMaxBinaryOperators)
        fail(pos, fmt::format("expression has more than {} binary operators; split it", kMaxBinaryOperators));
      pos += op_len(*op);
      Expr right = parse_binary(level + 1);
      left = make_binary(*op, left, right);
    }
    return left;
  }
  Expr parse_unary() {
    DepthGuard g(*this);
    skip_ws();
    if (accept("-")) {
      // -9223372036854775808: the smallest int64, whose magnitude alone does not fit in 64 bits
      // (unless a power follows: -2**63 is -(2**63)).
      skip_ws();
      static constexpr std::string_view kMin = "9223372036854775808";
      std::size_t after = pos + kMin.size();
      if (src.compare(pos, kMin.size(), kMin) == 0 &&
          (after == src.size() ||
           !(std::isalnum(static_cast<unsigned char>(src[after])) || src[after] == '_' || src[after] == '.'))) {
        std::size_t next = after;
        while (next < src.size() && src[next] == ' ') ++next;
        if (src.compare(next, 2, "**") != 0) {
          pos = after;
          return make_int(std::numeric_limits<std::int64_t>::min());
        }
      }
      return make_unary(UnaryOp::Neg, parse_unary());
    }
    if (accept("+")) return make_unary(UnaryOp::Plus, parse_unary());
    if (accept("~")) return make_unary(UnaryOp::Invert, parse_unary());
    return parse_power();
  }
  Expr parse_power() {
    Expr base = parse_postfix();
    if (accept("**")) {
      if (++binary_operators > kMaxBinaryOperators)
        fail(pos, fmt::format("expression has more than {} binary operators; split it", kMaxBinaryOperators));
      return make_binary(BinOp::Pow, base, parse_unary());
    }
    return base;
  }
  Expr parse_postfix() {
    Expr e = parse_primary();
    while (peek("[")) {
      if (e->kind != ExprKind::Symbol) fail(pos, "only names can be subscripted");
      ++pos;
      ExprNode n{ExprKind::Subscript};
      n.name = e->name;
      do {
        n.args.push_back(parse_ifexp());
      } while (accept(","));
      expect("]");
      e = make_node(std::move(n));
    }
    return e;
  }

  std::string parse_name() {
    std::size_t start = pos;
    while (pos < src.size() && (std::isalnum(static_cast<unsigned char>(src[pos])) || src[pos] == '_')) ++pos;
    return std::string(src.substr(start, pos - start));
  }

  Expr parse_number() {
    std::size_t start = pos;
    bool is_float = false;
    while (pos < src.size() && std::isdigit(static_cast<unsigned char>(src[pos]))) ++pos;
    if (pos < src.size() && src[pos] == '.') {
      is_float = true;
      ++pos;
      while (pos < src.size() && std::isdigit(static_cast<unsigned char>(src[pos]))) ++pos;
    }
    if (pos < src.size() && (src[pos] == 'e' || src[pos] == 'E')) {
      std::size_t save = pos++;
      if (pos < src.size() && (src[pos] == '+' || src[pos] == '-')) ++pos;
      if (pos < src.size() && std::isdigit(static_cast<unsigned char>(src[pos]))) {
        is_float = true;
        while (pos < src.size() && std::isdigit(static_cast<unsigned char>(src[pos]))) ++pos;
      } else {
        pos = save;
      }
    }
    std::string text(src.substr(start, pos - start));
    // Typed literal suffix (DaCe >= 2.0.0a4): 7i64, 1.5f32, 3u8
    std::optional<DType> suffix;
    if (pos < src.size() && (src[pos] == 'i' || src[pos] == 'u' || src[pos] == 'f')) {
      std::size_t save = pos;
      char c = src[pos++];
      std::string digits = parse_name();
      std::string tname = std::string(c == 'i' ? "int" : c == 'u' ? "uint" : "float") + digits;
      suffix = parse_dtype(tname);
      if (!suffix) {
        pos = save;
        fail(pos, fmt::format("unknown typed-literal suffix '{}{}'", c, digits));
      }
    }
    // Python's imaginary literal (`1j`, `0.5J`): the call complex(0, value), which prints back
    // as valid Python.
    if (!suffix && pos < src.size() && (src[pos] == 'j' || src[pos] == 'J') &&
        !(pos + 1 < src.size() && (std::isalnum(static_cast<unsigned char>(src[pos + 1])) || src[pos + 1] == '_'))) {
      ++pos;
      double v = std::strtod(text.c_str(), nullptr);
      std::string ftext = is_float ? text : text + ".0";
      return make_call("complex", {make_int(0), make_float(v, ftext)});
    }
    if (pos < src.size() && (std::isalpha(static_cast<unsigned char>(src[pos])) || src[pos] == '_'))
      fail(pos, fmt::format("malformed number '{}'", src.substr(start, pos - start + 1)));
    if (is_float || (suffix && is_float_dtype(*suffix))) {
      char* end = nullptr;
      double v = std::strtod(text.c_str(), &end);
      return make_float(v, text);
    }
    errno = 0;
    char* end = nullptr;
    unsigned long long v = std::strtoull(text.c_str(), &end, 10);
    if (errno == ERANGE || v > static_cast<unsigned long long>(std::numeric_limits<std::int64_t>::max()))
      fail(start, fmt::format("integer literal {} does not fit in 64 bits", text));
    return make_int(static_cast<std::int64_t>(v), suffix);
  }
  static bool is_float_dtype(DType t) { return is_float(t); }

  Expr parse_primary() {
    DepthGuard g(*this);
    skip_ws();
    if (pos >= src.size()) fail(pos, "expected an expression but found the end of the text");
    char c = src[pos];
    if (c == '(') {
      ++pos;
      Expr e = parse_ifexp();
      expect(")");
      return e;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) ||
        (c == '.' && pos + 1 < src.size() && std::isdigit(static_cast<unsigned char>(src[pos + 1]))))
      return parse_number();
    if (c == '$') {
      ++pos;
      if (accept("?")) return make_symbol("?");
      std::string name = parse_name();
      if (name.empty()) fail(pos, "expected a symbol name after '$'");
      return make_symbol(name);
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      std::size_t start = pos;
      std::string name = parse_name();
      while (peek(".") && pos + 1 < src.size() &&
             (std::isalpha(static_cast<unsigned char>(src[pos + 1])) || src[pos + 1] == '_')) {
        ++pos;
        name += "." + parse_name();
      }
      if (name == "True") return make_bool(true);
      if (name == "False") return make_bool(false);
      if (peek("(")) return parse_call(name, start);
      return make_symbol(name);
    }
    fail(pos, fmt::format("unexpected character '{}'", c));
  }

  Expr parse_call(const std::string& name, std::size_t start) {
    expect("(");
    ExprNode n{ExprKind::Call};
    n.name = name;
    if (!peek(")")) {
      do {
        skip_ws();
        // keyword argument?
        std::size_t save = pos;
        std::string kw = parse_name();
        if (!kw.empty() && peek("=") && !peek("==")) {
          ++pos;
          n.kwnames.push_back(kw);
          n.args.push_back(parse_ifexp());
          continue;
        }
        pos = save;
        if (!n.kwnames.empty()) fail(pos, "positional argument after a keyword argument");
        n.args.push_back(parse_ifexp());
      } while (accept(","));
    }
    expect(")");
    // decltype(name)(value): a cast to the type of `name` (DaCe's frontend writes numpy.arange's
    // tasklet so); read as the call decltype(name, value), printed back as written.
    if (name == "decltype" && n.args.size() == 1 && n.kwnames.empty() && n.args[0]->kind == ExprKind::Symbol &&
        peek("(")) {
      expect("(");
      n.args.push_back(parse_ifexp());
      expect(")");
      return make_node(std::move(n));
    }
    // symbol($N, dtype=dace.int64) is a typed symbol; sympy assumptions may follow
    // (`nonnegative=True`, `positive=True`, `algebraic=True`, ...). They are kept for the writer and
    // do not make another symbol: all spellings of one name are one symbol.
    if (name == "symbol") {
      bool ok = n.args.size() >= 2 && n.args.size() == n.kwnames.size() + 1 && n.kwnames[0] == "dtype" &&
                n.args[0]->kind == ExprKind::Symbol && n.args[1]->kind == ExprKind::Symbol;
      for (std::size_t k = 2; ok && k < n.args.size(); ++k) ok = n.args[k]->kind == ExprKind::Bool;
      if (!ok) fail(start, "expected symbol($NAME, dtype=dace.TYPE) with optional ASSUMPTION=True|False arguments");
      auto t = parse_dtype(n.args[1]->name);
      if (!t) fail(start, fmt::format("unknown dtype '{}' in symbol()", n.args[1]->name));
      if (n.args.size() == 2) return make_symbol(n.args[0]->name, *t);
      ExprNode sym{ExprKind::Symbol};
      sym.name = n.args[0]->name;
      sym.dtype = *t;
      sym.kwnames.assign(n.kwnames.begin() + 1, n.kwnames.end());
      sym.args.assign(n.args.begin() + 2, n.args.end());
      return make_node(std::move(sym));
    }
    // DaCe's operator-backed functions are the operators: `__int_floor(a, b)` is DaCe 2.0's `a // b`,
    // `bitwise_and(a, b)` and `__bitwise_and(a, b)` are `a & b`, and so on (DaCe prints them so).
    if (n.kwnames.empty()) {
      static const std::map<std::string, BinOp> binary = {
          {"__int_floor", BinOp::FloorDiv}, {"bitwise_and", BinOp::BitAnd},  {"__bitwise_and", BinOp::BitAnd},
          {"bitwise_or", BinOp::BitOr},     {"__bitwise_or", BinOp::BitOr},  {"bitwise_xor", BinOp::BitXor},
          {"__bitwise_xor", BinOp::BitXor}, {"left_shift", BinOp::LShift},   {"__left_shift", BinOp::LShift},
          {"right_shift", BinOp::RShift},   {"__right_shift", BinOp::RShift}};
      if (auto it = binary.find(name); it != binary.end() && n.args.size() == 2)
        return make_binary(it->second, n.args[0], n.args[1]);
      if ((name == "bitwise_invert" || name == "__bitwise_invert") && n.args.size() == 1)
        return make_unary(UnaryOp::Invert, n.args[0]);
    }
    return make_node(std::move(n));
  }
};

// ---------------------------------------------------------------------------------------------
// Printing

// Binding strength, higher binds tighter (Python's order).
int precedence(const ExprNode& e) {
  switch (e.kind) {
    case ExprKind::IfExp:
      return 1;
    case ExprKind::BoolOp:
      return e.op == static_cast<int>(BoolOpKind::Or) ? 2 : 3;
    case ExprKind::Compare:
      return 5;
    case ExprKind::Unary:
      return e.op == static_cast<int>(UnaryOp::Not) ? 4 : 12;
    case ExprKind::Binary:
      switch (static_cast<BinOp>(e.op)) {
        case BinOp::BitOr:
          return 6;
        case BinOp::BitXor:
          return 7;
        case BinOp::BitAnd:
          return 8;
        case BinOp::LShift:
        case BinOp::RShift:
          return 9;
        case BinOp::Add:
        case BinOp::Sub:
          return 10;
        case BinOp::Mul:
        case BinOp::Div:
        case BinOp::FloorDiv:
        case BinOp::Mod:
          return 11;
        case BinOp::Pow:
          return 13;
      }
      return 0;
    case ExprKind::Int:
    case ExprKind::Float:
      // a negative literal prints with a leading '-'
      return (e.kind == ExprKind::Int ? e.ival < 0 : std::signbit(e.fval)) ? 12 : 15;
    default:
      return 15;
  }
}

const char* cmpop_text(CmpOp op) {
  switch (op) {
    case CmpOp::Lt:
      return "<";
    case CmpOp::Le:
      return "<=";
    case CmpOp::Gt:
      return ">";
    case CmpOp::Ge:
      return ">=";
    case CmpOp::Eq:
      return "==";
    case CmpOp::Ne:
      return "!=";
    case CmpOp::Is:
      return "is";
    case CmpOp::IsNot:
      return "is not";
  }
  return "?";
}

std::string float_text(const ExprNode& e) {
  if (!e.name.empty()) return e.name;
  std::string s = fmt::format("{}", e.fval);
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

std::string int_suffix(DType t) {
  std::string n(to_string(t));
  if (n.rfind("uint", 0) == 0) return "u" + n.substr(4);
  if (n.rfind("int", 0) == 0) return "i" + n.substr(3);
  if (n.rfind("float", 0) == 0) return "f" + n.substr(5);
  return "";
}

bool integer_valued(const Expr& e);

struct Printer {
  Dialect dialect;
  bool cpp;

  std::string wrap(const Expr& e, int min_prec) {
    std::string s = print(e);
    return precedence(*e) < min_prec ? "(" + s + ")" : s;
  }

  std::string print(const Expr& ep) {
    const ExprNode& e = *ep;
    switch (e.kind) {
      case ExprKind::Int: {
        std::string s = std::to_string(e.ival);
        if (cpp && e.ival == INT64_MIN) return "(-9223372036854775807LL - 1)";
        if (cpp) return e.ival > INT32_MAX || e.ival < INT32_MIN ? s + "LL" : s;
        if (dialect == Dialect::Typed && e.dtype) s += int_suffix(*e.dtype);
        return s;
      }
      case ExprKind::Float:
        return float_text(e);
      case ExprKind::Bool:
        return cpp ? (e.ival ? "true" : "false") : (e.ival ? "True" : "False");
      case ExprKind::Symbol:
        if (e.name == "None") return cpp ? "nullptr" : "None";
        if (cpp || dialect == Dialect::Plain) return e.name;
        if (e.name == "?") return "$?";
        if ((e.dtype && *e.dtype != DType::Int32) || !e.kwnames.empty()) {
          std::string out = fmt::format("symbol(${}, dtype=dace.{}", e.name, to_string(e.dtype.value_or(DType::Int32)));
          for (std::size_t k = 0; k < e.kwnames.size(); ++k)  // sympy assumptions, as read
            out += fmt::format(", {}={}", e.kwnames[k], e.args[k]->ival ? "True" : "False");
          return out + ")";
        }
        return "$" + e.name;
      case ExprKind::Unary: {
        auto op = static_cast<UnaryOp>(e.op);
        if (op == UnaryOp::Not) return (cpp ? "!" : "not ") + wrap(e.args[0], cpp ? 12 : 4);
        const char* t = op == UnaryOp::Neg ? "-" : op == UnaryOp::Plus ? "+" : "~";
        // "- -x" keeps the two minus signs apart so that they never read as "--"
        std::string inner = wrap(e.args[0], 12);
        return std::string(t) + (inner[0] == t[0] ? " " : "") + inner;
      }
      case ExprKind::Binary: {
        auto op = static_cast<BinOp>(e.op);
        int p = precedence(e);
        // Small constant integer powers print as products (N * N), as C++ would write them.
        if (cpp && op == BinOp::Pow && e.args[1]->kind == ExprKind::Int && e.args[1]->ival >= 2 &&
            e.args[1]->ival <= 4) {
          std::string base = wrap(e.args[0], 12);
          std::string s = base;
          for (std::int64_t k = 1; k < e.args[1]->ival; ++k) s += " * " + base;
          return "(" + s + ")";
        }
        // SymPy's `/` is exact division: of two integers, a double (C++ would truncate 1 / 2 to 0).
        if (cpp && op == BinOp::Div && integer_valued(e.args[0]) && integer_valued(e.args[1]))
          return fmt::format("sdfc::rt::truediv({}, {})", print(e.args[0]), print(e.args[1]));
        if (cpp && (op == BinOp::FloorDiv || op == BinOp::Mod || op == BinOp::Pow))
          return fmt::format("sdfc::rt::{}({}, {})",
                             op == BinOp::FloorDiv ? "floordiv"
                             : op == BinOp::Mod    ? "floormod"
                                                   : "pow",
                             print(e.args[0]), print(e.args[1]));
        // Left-associative: the right operand needs parentheses at equal precedence.
        // Power is right-associative: the other way round.
        int lp = op == BinOp::Pow ? p + 1 : p;
        int rp = op == BinOp::Pow ? p : p + 1;
        return fmt::format("{} {} {}", wrap(e.args[0], lp), binop_text(op), wrap(e.args[1], rp));
      }
      case ExprKind::Compare: {
        auto op = static_cast<CmpOp>(e.op);
        if (cpp && (op == CmpOp::Is || op == CmpOp::IsNot)) op = op == CmpOp::Is ? CmpOp::Eq : CmpOp::Ne;
        return fmt::format("{} {} {}", wrap(e.args[0], 6), cmpop_text(op), wrap(e.args[1], 6));
      }
      case ExprKind::BoolOp: {
        bool is_and = e.op == static_cast<int>(BoolOpKind::And);
        const char* t = cpp ? (is_and ? " && " : " || ") : (is_and ? " and " : " or ");
        int p = precedence(e);
        std::string s;
        for (std::size_t i = 0; i < e.args.size(); ++i) {
          if (i) s += t;
          s += wrap(e.args[i], p + 1);
        }
        return s;
      }
      case ExprKind::IfExp:
        if (cpp) return fmt::format("({} ? {} : {})", print(e.args[0]), print(e.args[1]), print(e.args[2]));
        return fmt::format("{} if {} else {}", wrap(e.args[1], 2), wrap(e.args[0], 2), wrap(e.args[2], 1));
      case ExprKind::Call: {
        if (e.name == "decltype" && e.args.size() == 2)  // the same text in Python and C++
          return fmt::format("decltype({})({})", print(e.args[0]), print(e.args[1]));
        std::string s = cpp ? cpp_function(e.name) + "(" : e.name + "(";
        for (std::size_t i = 0; i < e.args.size(); ++i) {
          if (i) s += ", ";
          std::size_t kw = e.args.size() - e.kwnames.size();
          if (!cpp && i >= kw) s += e.kwnames[i - kw] + "=";
          s += print(e.args[i]);
        }
        return s + ")";
      }
      case ExprKind::Subscript: {
        std::string s = e.name + "[";
        for (std::size_t i = 0; i < e.args.size(); ++i) {
          if (i) s += cpp ? "][" : ", ";
          s += print(e.args[i]);
        }
        return s + "]";
      }
    }
    return "?";
  }

  static std::string cpp_function(const std::string& name) {
    static const std::map<std::string, std::string> known = {
        {"Max", "sdfc::rt::max"},          {"Min", "sdfc::rt::min"},      {"int_floor", "sdfc::rt::floordiv"},
        {"int_ceil", "sdfc::rt::ceildiv"}, {"Mod", "sdfc::rt::floormod"}, {"Abs", "sdfc::rt::abs"},
        {"floor", "sdfc::rt::floor"},      {"ceiling", "sdfc::rt::ceil"}, {"max", "sdfc::rt::max"},
        {"min", "sdfc::rt::min"},          {"abs", "sdfc::rt::abs"},
    };
    auto it = known.find(name);
    return it == known.end() ? name : it->second;
  }
};

// ---------------------------------------------------------------------------------------------
// Simplification: sums of integer-coefficient products of atoms in a canonical order.
// Atoms are symbols and any subexpression that is not +, -, * or a small integer power.

using Monomial = std::vector<std::pair<std::string, int>>;  // sorted (atom key, exponent)
struct Poly {
  std::map<Monomial, std::int64_t> terms;
  std::map<std::string, Expr> atoms;
};

bool mul_overflows(std::int64_t a, std::int64_t b, std::int64_t& out) {
  return __builtin_mul_overflow(a, b, &out);
}

std::optional<Poly> to_poly(const Expr& e);

Poly poly_const(std::int64_t c) {
  Poly p;
  if (c != 0) p.terms[{}] = c;
  return p;
}
Poly poly_atom(const Expr& e) {
  Poly p;
  // Keyed by the plain spelling: `N` and `symbol($N, dtype=dace.int64)` are one atom.
  std::string key = print_expr(e, Dialect::Plain);
  p.atoms[key] = e;
  p.terms[{{key, 1}}] = 1;
  return p;
}
std::optional<Poly> poly_add(Poly a, const Poly& b, std::int64_t sign) {
  for (auto& [k, v] : b.atoms) a.atoms[k] = v;
  for (auto& [m, c] : b.terms) {
    std::int64_t sc, sum;
    if (mul_overflows(c, sign, sc) || __builtin_add_overflow(a.terms[m], sc, &sum)) return std::nullopt;
    if (sum == 0)
      a.terms.erase(m);
    else
      a.terms[m] = sum;
  }
  return a;
}
std::optional<Poly> poly_mul(const Poly& a, const Poly& b) {
  Poly r;
  r.atoms = a.atoms;
  for (auto& [k, v] : b.atoms) r.atoms[k] = v;
  for (auto& [ma, ca] : a.terms) {
    for (auto& [mb, cb] : b.terms) {
      std::map<std::string, int> m(ma.begin(), ma.end());
      for (auto& [k, x] : mb) m[k] += x;
      Monomial mono(m.begin(), m.end());
      std::int64_t c, sum;
      if (mul_overflows(ca, cb, c) || __builtin_add_overflow(r.terms[mono], c, &sum)) return std::nullopt;
      if (sum == 0)
        r.terms.erase(mono);
      else
        r.terms[mono] = sum;
    }
  }
  return r;
}

std::optional<Poly> to_poly(const Expr& e);

/// Whether `e` is an integer for certain: integer literals, symbols not typed as floating point,
/// and +, -, *, //, % of such (the rules below do not hold for floats: 2.5 % 1 is 0.5).
bool integer_valued(const Expr& e) {
  switch (e->kind) {
    case ExprKind::Int:
      return true;
    case ExprKind::Symbol:
      return !e->dtype || !is_float(*e->dtype);
    case ExprKind::Unary:
      return static_cast<UnaryOp>(e->op) == UnaryOp::Neg && integer_valued(e->args[0]);
    case ExprKind::Binary: {
      auto op = static_cast<BinOp>(e->op);
      if (op != BinOp::Add && op != BinOp::Sub && op != BinOp::Mul && op != BinOp::FloorDiv && op != BinOp::Mod)
        return false;
      return integer_valued(e->args[0]) && integer_valued(e->args[1]);
    }
    default:
      return false;
  }
}

/// `c * (x // b) * b + c * (x % b)` is `c * x` for integers (Python's floor division and modulo, any signs),
/// where b is one monomial: how an element addressed through a reshaping view (its linear
/// position split into indices) becomes its linear position again.
std::optional<Poly> recombine_div_mod(Poly p) {
  for (auto& [mk, me] : p.atoms) {
    if (me->kind != ExprKind::Binary || static_cast<BinOp>(me->op) != BinOp::Mod) continue;
    for (auto& [dk, de] : p.atoms) {
      if (de->kind != ExprKind::Binary || static_cast<BinOp>(de->op) != BinOp::FloorDiv) continue;
      if (!equal(de->args[0], me->args[0]) || !equal(de->args[1], me->args[1]) || !integer_valued(me)) continue;
      auto b = to_poly(me->args[1]);
      if (!b || b->terms.size() != 1 || b->terms.begin()->second != 1) continue;
      auto mod_term = p.terms.find(Monomial{{mk, 1}});
      std::map<std::string, int> dm(b->terms.begin()->first.begin(), b->terms.begin()->first.end());
      dm[dk] += 1;
      auto div_term = p.terms.find(Monomial(dm.begin(), dm.end()));
      if (mod_term == p.terms.end() || div_term == p.terms.end() || mod_term->second != div_term->second) continue;
      std::int64_t c = mod_term->second;
      p.terms.erase(mod_term);
      p.terms.erase(div_term);
      auto x = to_poly(me->args[0]);
      if (!x) return std::nullopt;
      auto cx = poly_mul(poly_const(c), *x);
      if (!cx) return std::nullopt;
      auto r = poly_add(p, *cx, 1);
      if (!r) return std::nullopt;
      return recombine_div_mod(*r);  // atoms of p stay keyed; unused ones are harmless
    }
  }
  return p;
}

std::optional<Poly> to_poly(const Expr& e) {
  switch (e->kind) {
    case ExprKind::Int:
      return poly_const(e->ival);
    case ExprKind::Symbol:
      return poly_atom(e);
    case ExprKind::Unary: {
      auto op = static_cast<UnaryOp>(e->op);
      if (op != UnaryOp::Neg && op != UnaryOp::Plus) break;
      auto a = to_poly(e->args[0]);
      if (!a) return std::nullopt;
      return op == UnaryOp::Plus ? a : poly_add(Poly{}, *a, -1);
    }
    case ExprKind::Binary: {
      auto op = static_cast<BinOp>(e->op);
      if (op == BinOp::Add || op == BinOp::Sub || op == BinOp::Mul) {
        auto a = to_poly(e->args[0]);
        auto b = to_poly(e->args[1]);
        if (!a || !b) return std::nullopt;
        if (op == BinOp::Mul) return poly_mul(*a, *b);
        auto sum = poly_add(*a, *b, op == BinOp::Add ? 1 : -1);
        return sum ? recombine_div_mod(*sum) : sum;
      }
      if (op == BinOp::Pow && e->args[1]->kind == ExprKind::Int && e->args[1]->ival >= 0 && e->args[1]->ival <= 8) {
        auto a = to_poly(e->args[0]);
        if (!a) return std::nullopt;
        Poly r = poly_const(1);
        for (int i = 0; i < e->args[1]->ival; ++i) {
          auto m = poly_mul(r, *a);
          if (!m) return std::nullopt;
          r = *m;
        }
        return r;
      }
      // Integer floor division and modulo of constants fold; anything else is an atom.
      auto a = to_poly(e->args[0]);
      auto b = to_poly(e->args[1]);
      if (a && b && b->terms.size() == 1 && b->terms.begin()->first.empty() && b->terms.begin()->second == 1 &&
          integer_valued(e->args[0])) {
        if (op == BinOp::FloorDiv) return a;  // x // 1
        if (op == BinOp::Mod) return poly_const(0);
      }
      if (a && b && a->terms.size() <= 1 && b->terms.size() == 1 &&
          (a->terms.empty() || a->terms.begin()->first.empty()) && b->terms.begin()->first.empty()) {
        std::int64_t x = a->terms.empty() ? 0 : a->terms.begin()->second;
        std::int64_t y = b->terms.begin()->second;
        if (op == BinOp::FloorDiv) return poly_const(floor_div(x, y));
        if (op == BinOp::Mod) return poly_const(floor_mod(x, y));
        if (op == BinOp::Div && x % y == 0) return poly_const(x / y);
      }
      break;
    }
    default:
      break;
  }
  return poly_atom(e);
}

/// A value as numerator / denominator: an expression of integers and a positive integer.
struct Ratio {
  Expr num;
  std::int64_t den;
};

/// Functions whose value is an integer whatever their (integer or rational) arguments.
bool integer_function(const std::string& f) {
  static const std::set<std::string> names = {"int_floor", "int_ceil", "floor", "ceiling", "Mod", "int"};
  return names.count(f) > 0;
}

/// `e` as an integer expression over a constant positive denominator, where `e` is built of
/// integers, integer symbols, integer-valued functions, +, -, * and division by a constant: SymPy's
/// rationals (`1/2*N` is N / 2 exactly, not C's 1 / 2 == 0). nullopt for anything else.
std::optional<Ratio> rational_form(const Expr& e) {
  auto scaled = [](const Ratio& r, std::int64_t l) -> Expr {
    if (l == r.den) return r.num;
    return make_binary(BinOp::Mul, make_int(l / r.den), r.num);
  };
  switch (e->kind) {
    case ExprKind::Int:
      return Ratio{e, 1};
    case ExprKind::Symbol:
      if (!integer_valued(e)) return std::nullopt;
      return Ratio{e, 1};
    case ExprKind::Call:
      if (integer_function(e->name) && e->kwnames.empty()) return Ratio{e, 1};
      return std::nullopt;
    case ExprKind::Unary: {
      auto op = static_cast<UnaryOp>(e->op);
      if (op != UnaryOp::Neg && op != UnaryOp::Plus) return std::nullopt;
      auto a = rational_form(e->args[0]);
      if (!a || op == UnaryOp::Plus) return a;
      return Ratio{make_unary(UnaryOp::Neg, a->num), a->den};
    }
    case ExprKind::Binary: {
      auto op = static_cast<BinOp>(e->op);
      if (op == BinOp::FloorDiv || op == BinOp::Mod)
        return integer_valued(e) ? std::optional<Ratio>(Ratio{e, 1}) : std::nullopt;
      auto a = rational_form(e->args[0]);
      auto b = rational_form(e->args[1]);
      if (!a || !b) return std::nullopt;
      std::int64_t den;
      switch (op) {
        case BinOp::Add:
        case BinOp::Sub: {
          std::int64_t g = std::gcd(a->den, b->den), l;
          if (mul_overflows(a->den / g, b->den, l)) return std::nullopt;
          return Ratio{make_binary(op, scaled(*a, l), scaled(*b, l)), l};
        }
        case BinOp::Mul:
          if (mul_overflows(a->den, b->den, den)) return std::nullopt;
          return Ratio{make_binary(BinOp::Mul, a->num, b->num), den};
        case BinOp::Div: {
          // (p / q) / (c / d) = p d / (q c), for a constant c != 0
          auto c = as_constant(b->num);
          if (!c || *c == 0 || *c == INT64_MIN || mul_overflows(a->den, *c < 0 ? -*c : *c, den)) return std::nullopt;
          Expr num = make_binary(BinOp::Mul, make_int(*c < 0 ? -b->den : b->den), a->num);
          return Ratio{num, den};
        }
        default:
          return std::nullopt;
      }
    }
    default:
      return std::nullopt;
  }
}

/// `ceiling(x)` and `floor(x)` of a rational x = p / q as integer divisions (`int_ceil(p, q)`,
/// `int_floor(p, q)`), so that no C++ integer division truncates a SymPy rational on the way.
Expr integer_rounding(const Expr& e) {
  if (e->kind != ExprKind::Call || e->args.size() != 1 || !e->kwnames.empty() ||
      (e->name != "ceiling" && e->name != "floor"))
    return e;
  auto r = rational_form(e->args[0]);
  // Nothing to divide: left as it is (a name without a dtype may be a float in code blocks, where
  // ceiling(x) is not x).
  if (!r || r->den == 1) return e;
  return make_call(e->name == "ceiling" ? "int_ceil" : "int_floor", {simplify(r->num), make_int(r->den)});
}

Expr from_poly(const Poly& p) {
  if (p.terms.empty()) return make_int(0);
  // Constant first (as DaCe/sympy write "-1 + $N"), then monomials in key order.
  Expr sum;
  for (auto& [mono, coeff] : p.terms) {
    Expr term;
    for (auto& [key, exp] : mono) {
      Expr f = p.atoms.at(key);
      if (exp != 1) f = make_binary(BinOp::Pow, f, make_int(exp));
      term = term ? make_binary(BinOp::Mul, term, f) : f;
    }
    std::int64_t c = coeff;
    bool negate = false;
    if (term && sum && c < 0) {
      negate = true;
      c = -c;
    }
    if (!term)
      term = make_int(c);
    else if (c == -1)
      term = make_unary(UnaryOp::Neg, term);
    else if (c != 1)
      term = make_binary(BinOp::Mul, make_int(c), term);
    if (!sum)
      sum = term;
    else
      sum = make_binary(negate ? BinOp::Sub : BinOp::Add, sum, term);
  }
  return sum;
}

Expr simplify_children(const Expr& e) {
  if (e->args.empty()) return e;
  ExprNode n = *e;
  bool changed = false;
  for (auto& a : n.args) {
    Expr s = simplify(a);
    changed |= s != a;
    a = s;
  }
  return changed ? make_node(std::move(n)) : e;
}

}  // namespace

const char* binop_text(BinOp op) {
  switch (op) {
    case BinOp::Add:
      return "+";
    case BinOp::Sub:
      return "-";
    case BinOp::Mul:
      return "*";
    case BinOp::Div:
      return "/";
    case BinOp::FloorDiv:
      return "//";
    case BinOp::Mod:
      return "%";
    case BinOp::Pow:
      return "**";
    case BinOp::BitAnd:
      return "&";
    case BinOp::BitOr:
      return "|";
    case BinOp::BitXor:
      return "^";
    case BinOp::LShift:
      return "<<";
    case BinOp::RShift:
      return ">>";
  }
  return "?";
}

Expr parse_expr(std::string_view text, Dialect dialect) {
  Parser p{text, dialect};
  return p.parse_all();
}

std::string print_expr(const Expr& e, Dialect dialect) {
  return Printer{dialect, false}.print(e);
}
std::string print_cpp(const Expr& e) {
  return Printer{Dialect::Plain, true}.print(e);
}

Expr substitute(const Expr& e, const std::map<std::string, Expr>& repl) {
  if (e->kind == ExprKind::Symbol) {
    auto it = repl.find(e->name);
    return it == repl.end() ? e : it->second;
  }
  if (e->args.empty()) return e;
  ExprNode n = *e;
  bool changed = false;
  for (auto& a : n.args) {
    Expr s = substitute(a, repl);
    changed |= s != a;
    a = s;
  }
  return changed ? make_node(std::move(n)) : e;
}

Expr simplify(const Expr& e) {
  Expr s = integer_rounding(simplify_children(e));
  if (s->kind == ExprKind::Int || s->kind == ExprKind::Symbol) return s;
  if (s->kind == ExprKind::Binary || s->kind == ExprKind::Unary) {
    auto p = to_poly(s);
    // An expression that is a single opaque atom stays as it is.
    if (p && !(p->terms.size() == 1 && p->terms.begin()->second == 1 && p->terms.begin()->first.size() == 1 &&
               p->terms.begin()->first[0].second == 1 && p->atoms.at(p->terms.begin()->first[0].first) == s))
      return from_poly(*p);
  }
  return s;
}

std::optional<std::int64_t> evaluate(const Expr& e, const std::map<std::string, std::int64_t>& syms) {
  switch (e->kind) {
    case ExprKind::Int:
      return e->ival;
    case ExprKind::Bool:
      return e->ival;
    case ExprKind::Symbol: {
      auto it = syms.find(e->name);
      if (it == syms.end()) return std::nullopt;
      return it->second;
    }
    case ExprKind::Unary: {
      auto a = evaluate(e->args[0], syms);
      if (!a) return std::nullopt;
      switch (static_cast<UnaryOp>(e->op)) {
        case UnaryOp::Neg:
          return -*a;
        case UnaryOp::Plus:
          return *a;
        case UnaryOp::Not:
          return !*a;
        case UnaryOp::Invert:
          return ~*a;
      }
      return std::nullopt;
    }
    case ExprKind::Binary: {
      auto a = evaluate(e->args[0], syms);
      auto b = evaluate(e->args[1], syms);
      if (!a || !b) return std::nullopt;
      std::int64_t r;
      switch (static_cast<BinOp>(e->op)) {
        case BinOp::Add:
          if (__builtin_add_overflow(*a, *b, &r)) return std::nullopt;
          return r;
        case BinOp::Sub:
          if (__builtin_sub_overflow(*a, *b, &r)) return std::nullopt;
          return r;
        case BinOp::Mul:
          if (__builtin_mul_overflow(*a, *b, &r)) return std::nullopt;
          return r;
        case BinOp::Div:
          if (*b == 0 || *a % *b != 0) return std::nullopt;
          return *a / *b;
        case BinOp::FloorDiv:
          if (*b == 0) return std::nullopt;
          return floor_div(*a, *b);
        case BinOp::Mod:
          if (*b == 0) return std::nullopt;
          return floor_mod(*a, *b);
        case BinOp::Pow: {
          if (*b < 0) return std::nullopt;
          std::int64_t v = 1;
          for (std::int64_t i = 0; i < *b; ++i)
            if (__builtin_mul_overflow(v, *a, &v)) return std::nullopt;
          return v;
        }
        case BinOp::BitAnd:
          return *a & *b;
        case BinOp::BitOr:
          return *a | *b;
        case BinOp::BitXor:
          return *a ^ *b;
        case BinOp::LShift:
          if (*b < 0 || *b > 62) return std::nullopt;
          return *a << *b;
        case BinOp::RShift:
          if (*b < 0 || *b > 63) return std::nullopt;
          return *a >> *b;
      }
      return std::nullopt;
    }
    case ExprKind::Compare: {
      auto a = evaluate(e->args[0], syms);
      auto b = evaluate(e->args[1], syms);
      if (!a || !b) return std::nullopt;
      switch (static_cast<CmpOp>(e->op)) {
        case CmpOp::Lt:
          return *a < *b;
        case CmpOp::Le:
          return *a <= *b;
        case CmpOp::Gt:
          return *a > *b;
        case CmpOp::Ge:
          return *a >= *b;
        case CmpOp::Eq:
          return *a == *b;
        case CmpOp::Ne:
          return *a != *b;
        case CmpOp::Is:
        case CmpOp::IsNot:
          return std::nullopt;  // identity, not integer comparison
      }
      return std::nullopt;
    }
    case ExprKind::BoolOp: {
      bool is_and = e->op == static_cast<int>(BoolOpKind::And);
      for (auto& a : e->args) {
        auto v = evaluate(a, syms);
        if (!v) return std::nullopt;
        if (is_and && !*v) return 0;
        if (!is_and && *v) return 1;
      }
      return is_and ? 1 : 0;
    }
    case ExprKind::IfExp: {
      auto c = evaluate(e->args[0], syms);
      if (!c) return std::nullopt;
      return evaluate(e->args[*c ? 1 : 2], syms);
    }
    case ExprKind::Call: {
      std::vector<std::int64_t> v;
      for (auto& a : e->args) {
        auto x = evaluate(a, syms);
        if (!x) return std::nullopt;
        v.push_back(*x);
      }
      const std::string& f = e->name;
      if ((f == "Max" || f == "max") && !v.empty()) return *std::max_element(v.begin(), v.end());
      if ((f == "Min" || f == "min") && !v.empty()) return *std::min_element(v.begin(), v.end());
      if (v.size() == 2 && (f == "int_floor") && v[1] != 0) return floor_div(v[0], v[1]);
      if (v.size() == 2 && (f == "int_ceil") && v[1] != 0) return -floor_div(-v[0], v[1]);
      if (v.size() == 2 && f == "Mod" && v[1] != 0) return floor_mod(v[0], v[1]);
      if (v.size() == 1 && (f == "Abs" || f == "abs")) return v[0] < 0 ? -v[0] : v[0];
      if (v.size() == 1 && (f == "floor" || f == "ceiling" || f == "int")) return v[0];
      return std::nullopt;
    }
    default:
      return std::nullopt;
  }
}

std::optional<std::int64_t> as_constant(const Expr& e) {
  if (e->kind == ExprKind::Int) return e->ival;
  if (e->kind == ExprKind::Symbol) return std::nullopt;
  Expr s = simplify(e);
  if (s->kind == ExprKind::Int) return s->ival;
  return std::nullopt;
}

void free_symbols(const Expr& e, std::set<std::string>& out) {
  if (e->kind == ExprKind::Symbol) {
    if (e->name != "?" && e->name != "None") out.insert(e->name);
    return;
  }
  std::size_t positional = e->args.size() - e->kwnames.size();
  for (std::size_t i = 0; i < positional; ++i) free_symbols(e->args[i], out);
}

bool same_value(const Expr& a, const Expr& b) {
  return equal(simplify(a), simplify(b));
}

std::optional<std::string> shifted_parameter(const Expr& e, const std::set<std::string>& params) {
  std::set<std::string> syms;
  free_symbols(e, syms);
  std::vector<std::string> in;
  for (auto& s : syms)
    if (params.count(s)) in.push_back(s);
  if (in.empty()) return std::string();
  if (in.size() != 1) return std::nullopt;
  std::set<std::string> rest;
  free_symbols(simplify(make_binary(BinOp::Sub, e, make_symbol(in[0]))), rest);
  for (auto& s : rest)
    if (params.count(s)) return std::nullopt;
  return in[0];
}

bool equal(const Expr& a, const Expr& b) {
  if (a == b) return true;
  if (a->kind == ExprKind::Symbol && b->kind == ExprKind::Symbol) return a->name == b->name;
  // A symbol's dtype is a spelling (`N` and `symbol($N, dtype=dace.int64)` are one symbol, as
  // in DaCe, whose symbols are sympy symbols compared by name).
  if (a->kind != b->kind || a->op != b->op || a->ival != b->ival || a->name != b->name ||
      (a->kind != ExprKind::Symbol && a->dtype != b->dtype) || a->args.size() != b->args.size() ||
      a->kwnames != b->kwnames)
    return false;
  if (a->kind == ExprKind::Float && a->fval != b->fval) return false;
  for (std::size_t i = 0; i < a->args.size(); ++i)
    if (!equal(a->args[i], b->args[i])) return false;
  return true;
}

bool split_assignment(const std::string& code, std::string& lhs, std::string& rhs) {
  for (std::size_t i = 0; i < code.size(); ++i) {
    if (code[i] != '=') continue;
    char prev = i ? code[i - 1] : ' ';
    char next = i + 1 < code.size() ? code[i + 1] : ' ';
    if (next == '=' || prev == '=' || prev == '<' || prev == '>' || prev == '!') continue;
    lhs = code.substr(0, i);
    rhs = code.substr(i + 1);
    auto trim = [](std::string& s) {
      s.erase(0, s.find_first_not_of(" \t\n"));
      s.erase(s.find_last_not_of(" \t\n") + 1);
    };
    trim(lhs);
    trim(rhs);
    return !lhs.empty() && !rhs.empty();
  }
  return false;
}

std::vector<std::string> split_lambda(std::string text) {
  auto trim = [](std::string s) {
    std::size_t a = s.find_first_not_of(" \t\n"), b = s.find_last_not_of(" \t\n");
    return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
  };
  text = trim(text);
  while (text.size() > 2 && text.front() == '(' && text.back() == ')') text = trim(text.substr(1, text.size() - 2));
  if (text.rfind("lambda", 0) != 0) return {};
  std::size_t colon = text.find(':');
  if (colon == std::string::npos) return {};
  std::string params = text.substr(6, colon - 6);
  std::size_t comma = params.find(',');
  if (comma == std::string::npos) return {};
  std::string a = trim(params.substr(0, comma)), b = trim(params.substr(comma + 1));
  if (a.empty() || b.empty()) return {};
  return {a, b, trim(text.substr(colon + 1))};
}

}  // namespace sdfc
