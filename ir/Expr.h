/// \file
/// Symbolic and Python expressions. One immutable, shared AST serves three uses: DaCe's symbolic
/// properties (shapes, ranges, volumes, symbol mappings) in both dialects, interstate-edge code
/// (conditions, assignments), and Python tasklet expressions. "Unchanged" is a pointer comparison.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "ir/Types.h"

namespace sdfc {

enum class ExprKind { Int, Float, Bool, Symbol, Unary, Binary, Compare, BoolOp, IfExp, Call, Subscript };
enum class UnaryOp { Neg, Plus, Not, Invert };
enum class BinOp { Add, Sub, Mul, Div, FloorDiv, Mod, Pow, BitAnd, BitOr, BitXor, LShift, RShift };
/// Is / IsNot: Python's `is` and `is not`, kept for `x is None` (DaCe's optional arguments;
/// `None` is read as the symbol "None", which is no free symbol).
enum class CmpOp { Lt, Le, Gt, Ge, Eq, Ne, Is, IsNot };
enum class BoolOpKind { And, Or };

struct ExprNode;
/// An immutable expression; share freely.
using Expr = std::shared_ptr<const ExprNode>;

/// One expression node. Which fields are meaningful depends on `kind`:
/// Int: ival (+ dtype for typed literals such as `7i64`); Float: fval and text; Bool: ival;
/// Symbol: name (+ dtype from `symbol($N, dtype=...)`); Unary/Binary/Compare/BoolOp: op, args;
/// IfExp: args = {cond, then, else}; Call: name (dotted, e.g. `math.log`), args, kwnames (one per
/// trailing keyword argument); Subscript: name (the container), args = indices.
struct ExprNode {
  ExprKind kind;
  int op = 0;
  std::int64_t ival = 0;
  double fval = 0;
  std::string name;
  std::optional<DType> dtype;
  std::vector<Expr> args;
  std::vector<std::string> kwnames;

  explicit ExprNode(ExprKind k) : kind(k) {}
};

/// Which spelling of symbolic expressions a file uses (selected by `dace_version`).
enum class Dialect {
  Plain,  ///< Python / sympy text: `N - 1`, `Max(0, N)` (DaCe < 2.0.0a4, and all code blocks)
  Typed,  ///< DaCe >= 2.0.0a4: `$N`, `symbol($N, dtype=dace.int64)`, typed literals `7i64`
};

/// A syntax error inside an expression; `offset` is the 0-based character position.
struct ExprSyntaxError : std::runtime_error {
  ExprSyntaxError(std::size_t offset, const std::string& what) : std::runtime_error(what), offset(offset) {}
  std::size_t offset;
};

// Construction
Expr make_int(std::int64_t v, std::optional<DType> t = std::nullopt);
Expr make_float(double v, std::string text = "");
Expr make_bool(bool v);
Expr make_symbol(std::string name, std::optional<DType> t = std::nullopt);
Expr make_unary(UnaryOp op, Expr a);
Expr make_binary(BinOp op, Expr a, Expr b);
Expr make_call(std::string name, std::vector<Expr> args);
Expr make_node(ExprNode n);

/// Parses one expression. Throws ExprSyntaxError.
Expr parse_expr(std::string_view text, Dialect dialect = Dialect::Plain);

/// DaCe's lambda text `(lambda x, y: body)` -> {x, y, body} (write-conflict resolutions, Reduce);
/// empty on anything else.
std::vector<std::string> split_lambda(std::string text);

/// Prints for a file in `dialect` (inverse of parse_expr: parse(print(e)) prints the same).
std::string print_expr(const Expr& e, Dialect dialect = Dialect::Plain);
/// Prints as C++ (integer floor division and power through runtime helpers in `sdfc::rt`).
std::string print_cpp(const Expr& e);

/// Replaces symbols by expressions.
Expr substitute(const Expr& e, const std::map<std::string, Expr>& repl);
/// Folds constants and brings sums of products into a canonical order (`N - 1`, `2*N*M`).
Expr simplify(const Expr& e);
/// Value with all symbols bound, or nullopt if a symbol is unbound or the expression is not an
/// integer expression (division by zero included).
std::optional<std::int64_t> evaluate(const Expr& e, const std::map<std::string, std::int64_t>& syms);
/// The integer value of an expression without symbols, after simplification.
std::optional<std::int64_t> as_constant(const Expr& e);
/// Adds every free symbol name to `out` (function names and subscripted containers excluded).
void free_symbols(const Expr& e, std::set<std::string>& out);
/// Structural equality.
bool equal(const Expr& a, const Expr& b);
/// Equality after simplifying both sides (`i + 1 - 1` is `i`); false where simplify cannot tell.
bool same_value(const Expr& a, const Expr& b);
/// How `e` depends on the symbols `params`: "" when it mentions none of them, p when it is p plus
/// a term free of them (an index shifted by a constant or a symbol), nullopt otherwise.
std::optional<std::string> shifted_parameter(const Expr& e, const std::set<std::string>& params);

/// The Python spelling of a binary operator ("+", "//", "**", ...).
const char* binop_text(BinOp op);

/// Python floor division and modulo on integers (as `//` and `%`).
std::int64_t floor_div(std::int64_t a, std::int64_t b);
std::int64_t floor_mod(std::int64_t a, std::int64_t b);

/// Splits a Python assignment statement `lhs = rhs` (not `==`, `<=`, ...) into its two trimmed
/// sides (a loop's init and update statements); false when there is none or a side is empty.
bool split_assignment(const std::string& code, std::string& lhs, std::string& rhs);

}  // namespace sdfc
