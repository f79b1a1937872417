#include "codegen/CheckedSize.h"

#include <fmt/format.h>

#include <map>

#include "lang/CodeWriter.h"

namespace sdfc {
namespace {

std::string unchecked(const Expr& e) {
  return fmt::format("sdfc::rt::size(static_cast<std::int64_t>({}))", print_cpp(e));
}

std::string print(const Expr& x) {
  const ExprNode& e = *x;
  switch (e.kind) {
    case ExprKind::Int:
      return fmt::format("sdfc::rt::Size{{{}, true}}",
                         e.ival == INT64_MIN ? "INT64_MIN" : std::to_string(e.ival) + "LL");
    case ExprKind::Symbol:
      return fmt::format("sdfc::rt::size({})", ident(e.name));
    case ExprKind::Unary:
      if (static_cast<UnaryOp>(e.op) == UnaryOp::Neg) return fmt::format("sdfc::rt::size_neg({})", print(e.args[0]));
      if (static_cast<UnaryOp>(e.op) == UnaryOp::Plus) return print(e.args[0]);
      return unchecked(x);
    case ExprKind::Binary: {
      static const std::map<BinOp, const char*> ops = {{BinOp::Add, "size_add"}, {BinOp::Sub, "size_sub"},
                                                       {BinOp::Mul, "size_mul"}, {BinOp::FloorDiv, "size_floordiv"},
                                                       {BinOp::Mod, "size_mod"}, {BinOp::Pow, "size_pow"}};
      auto op = ops.find(static_cast<BinOp>(e.op));
      if (op == ops.end()) return unchecked(x);
      return fmt::format("sdfc::rt::{}({}, {})", op->second, print(e.args[0]), print(e.args[1]));
    }
    case ExprKind::Call: {
      static const std::map<std::string, const char*> calls = {
          {"Max", "size_max"},          {"Min", "size_min"}, {"int_floor", "size_floordiv"},
          {"int_ceil", "size_ceildiv"}, {"Mod", "size_mod"}, {"Abs", "size_abs"}};
      auto f = calls.find(e.name);
      if (f == calls.end() || !e.kwnames.empty()) return unchecked(x);
      bool fold = e.name == "Max" || e.name == "Min";
      std::size_t arity = e.name == "Abs" ? 1 : 2;
      if (fold ? e.args.empty() : e.args.size() != arity) return unchecked(x);
      if (arity == 1) return fmt::format("sdfc::rt::{}({})", f->second, print(e.args[0]));
      // Max and Min take any number of arguments: fold from the left.
      std::string s = print(e.args[0]);
      for (std::size_t k = 1; k < e.args.size(); ++k)
        s = fmt::format("sdfc::rt::{}({}, {})", f->second, s, print(e.args[k]));
      return s;
    }
    default:
      return unchecked(x);
  }
}

}  // namespace

std::string checked_size(const Expr& e) {
  return print(simplify(e));
}

std::string checked_count(const std::string& what, const Expr& size, const std::string& element_bytes) {
  if (auto c = as_constant(size); c && *c >= 0) return fmt::format("static_cast<std::size_t>({})", *c);
  return fmt::format("sdfc::rt::element_count({}, {}, {}, {})", checked_size(size), element_bytes, c_string(what),
                     c_string(print_expr(size)));
}

}  // namespace sdfc
