// The Python translator's expressions: names, subscripts, operators with Python's semantics,
// comparisons, calls of the functions it knows, complex arithmetic. See PythonTranslator.h.
#include "lang/PythonTranslator.h"

namespace sdfc::python {

/// One expression (not a tasklet): `what` names it in messages, `code_pointer` is where its
/// text is in the file. With `condition`, the result is a C++ bool (Python's truth test).
ExpressionTranslation Translator::run_expression(const Expr& e, const std::string& what,
                                                 const std::string& code_pointer, bool condition) {
  what_ = what;
  code_pointer_ = code_pointer;
  Value v = expr(e, condition);
  if (condition) {
    require_real(v, "a condition");
    v = truth_value(v);
  }
  return {v.text, v.type};
}

Value Translator::struct_value(const ExprNode& e, DType t) {
  const StructType& st = *struct_of(t);
  std::size_t positional = e.args.size() - e.kwnames.size();
  if (positional > st.fields.size())
    fail(fmt::format("struct '{}' has {} fields, but {} builds it from {} values", st.name, st.fields.size(), where(),
                     positional));
  std::vector<std::optional<Value>> values(st.fields.size());
  for (std::size_t i = 0; i < e.args.size(); ++i) {
    std::size_t f = i;
    if (i >= positional) {
      const std::string& kw = e.kwnames[i - positional];
      auto it = std::find_if(st.fields.begin(), st.fields.end(), [&](const auto& x) { return x.first == kw; });
      if (it == st.fields.end()) fail(fmt::format("struct '{}' has no field '{}' (in {})", st.name, kw, where()));
      f = static_cast<std::size_t>(it - st.fields.begin());
    }
    if (values[f])
      fail(fmt::format("field '{}' of struct '{}' is given twice in {}", st.fields[f].first, st.name, where()));
    Value v = expr(e.args[i]);
    require_scalar(v, st.name);
    if (is_complex(v.type) && !is_complex(st.fields[f].second))
      fail(fmt::format("field '{}' of struct '{}' is {}, but {} gives it a complex value", st.fields[f].first, st.name,
                       to_string(st.fields[f].second), where()));
    values[f] = cast_to(v, st.fields[f].second);
  }
  std::vector<std::string> texts;
  for (std::size_t f = 0; f < values.size(); ++f) {
    if (!values[f])
      fail(fmt::format("field '{}' of struct '{}' is not given in {}; give every field", st.fields[f].first, st.name,
                       where()));
    texts.push_back(values[f]->text);
  }
  return {fmt::format("{}{{{}}}", st.name, fmt::join(texts, ", ")), kPrimary, t};
}

void Translator::require_scalar(const Value& v, std::string_view what) const {
  if (const StructType* st = struct_of(v.type))
    fail(
        fmt::format("a value of struct type '{}' is used by '{}' in {}; struct values can be built (`{}(...)`), "
                    "assigned, and read field by field (`x.{}`)",
                    st->name, what, where(), st->name, st->fields[0].first));
}

void Translator::require_real(const Value& v, std::string_view what) const {
  if (is_complex(v.type))
    fail(fmt::format("unsupported operand type {} for '{}' in {}; Python does not define it for complex numbers",
                     to_string(v.type), what, where()));
}

void Translator::require_integer(const Value& v, std::string_view what) const {
  if (!is_int_like(v.type))
    fail(fmt::format("unsupported operand type {} for '{}' in {}; the operator needs integers", to_string(v.type), what,
                     where()));
}

// `truth`: only the truth value of the result matters (a condition, an operand of `not`).
Value Translator::expr(const Expr& ep, bool truth) {
  const ExprNode& e = *ep;
  switch (e.kind) {
    case ExprKind::Int: {
      DType natural = e.ival >= INT32_MIN && e.ival <= INT32_MAX ? DType::Int32 : DType::Int64;
      Value v{e.ival == INT64_MIN ? "(-9223372036854775807LL - 1)" : std::to_string(e.ival), kPrimary, natural, &e};
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
      Value a = expr(e.args[0], op == UnaryOp::Not);
      require_scalar(a, "a unary operator");
      return unary(op, a);
    }
    case ExprKind::Binary: {
      Value a = expr(e.args[0]), b = expr(e.args[1]);
      require_scalar(a, "a binary operator");
      require_scalar(b, "a binary operator");
      return binary(static_cast<BinOp>(e.op), a, b, *e.args[1]);
    }
    case ExprKind::Compare: {
      auto op = static_cast<CmpOp>(e.op);
      if (op == CmpOp::Is || op == CmpOp::IsNot) return identity(op, e);
      Value a = expr(e.args[0]), b = expr(e.args[1]);
      require_scalar(a, "a comparison");
      require_scalar(b, "a comparison");
      return compare(op, a, b);
    }
    case ExprKind::BoolOp: {
      std::vector<Value> ops;
      for (const Expr& a : e.args) ops.push_back(expr(a, truth));
      for (auto& v : ops) require_scalar(v, e.op == static_cast<int>(BoolOpKind::And) ? "and" : "or");
      return bool_op(e.op == static_cast<int>(BoolOpKind::And), std::move(ops), truth);
    }
    case ExprKind::IfExp: {
      Value cond = expr(e.args[0], true);
      require_scalar(cond, "if");
      require_real(cond, "if");
      std::vector<Value> ops{expr(e.args[1], truth), expr(e.args[2], truth)};
      if (is_struct(ops[0].type) || is_struct(ops[1].type)) {
        if (ops[0].type != ops[1].type)
          fail(
              fmt::format("the two values of a conditional expression in {} are {} and {}; with a struct both must "
                          "be of that struct type",
                          where(), to_string(ops[0].type), to_string(ops[1].type)));
        return {fmt::format("({} ? {} : {})", truth_value(cond).text, ops[0].text, ops[1].text), kPrimary, ops[0].type};
      }
      return conditional(cond, ops[0], ops[1]);
    }
  }
  internal_error(__FILE__, __LINE__, "unknown expression kind");
}

Value Translator::name_value(const ExprNode& e) {
  if (auto it = temps_.find(e.name); it != temps_.end()) return {it->second.cpp_name, kPrimary, it->second.type};
  // s.field of a struct value (DaCe's struct dtypes)
  if (auto dot = e.name.find('.'); dot != std::string::npos && struct_named(e.name.substr(0, dot))) {
    Value v = name_value(*make_symbol(e.name.substr(0, dot)));
    if (const StructType* st = struct_of(v.type)) {
      std::string field = e.name.substr(dot + 1);
      auto t = struct_field(v.type, field);
      if (!t) {
        std::vector<std::string> names;
        for (auto& f : st->fields) names.push_back(f.first);
        fail(fmt::format("struct '{}' has no field '{}' (read in {}); its fields: {}", st->name, field, where(),
                         fmt::join(names, ", ")));
      }
      return {fmt::format("{}.{}", v.text, field), kPrimary, *t};
    }
  }
  // z.real, z.imag
  if (auto dot = e.name.rfind('.'); dot != std::string::npos && is_value_name(e.name.substr(0, dot))) {
    std::string attr = e.name.substr(dot + 1);
    if (attr == "real" || attr == "imag") {
      Value z = name_value(*make_symbol(e.name.substr(0, dot)));
      if (!is_complex(z.type)) return attr == "real" ? z : Value{"0", kPrimary, DType::Int32};
      return {fmt::format("{}.{}", z.text, attr == "real" ? "re" : "im"), kPrimary, complex_part(z.type)};
    }
  }
  if (scope_.element_pointers.count(e.name)) return subscript(*element_of(e.name));
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
  // DaCe's runtime defines `inf` and `nan` for tasklets (connectors and symbols of these names,
  // found above, shadow them).
  if (known_module || module.empty()) {
    if (base == "inf") return {"HUGE_VAL", kPrimary, DType::Float64};
    if (base == "nan") return {"static_cast<double>(NAN)", kPrimary, DType::Float64};
  }
  if (known_module) {
    if (base == "e") return {"2.718281828459045", kPrimary, DType::Float64};
    if (base == "tau") return {"6.283185307179586", kPrimary, DType::Float64};
    if (base == "inf") return {"HUGE_VAL", kPrimary, DType::Float64};
    if (base == "nan") return {"static_cast<double>(NAN)", kPrimary, DType::Float64};
  }
  fail(fmt::format("unknown name '{}' in {}; expected a connector, a symbol or a known constant", e.name, where()));
}

Value Translator::subscript(const ExprNode& e) {
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

Value Translator::unary(UnaryOp op, const Value& a) {
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
Value Translator::binary(BinOp op, Value a, Value b, const ExprNode& rhs, bool* plain) {
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
      bool negative_power =
          rhs.kind == ExprKind::Unary && rhs.op == static_cast<int>(UnaryOp::Neg) && rhs.args[0]->kind == ExprKind::Int;
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
Value Translator::complex_binary(BinOp op, Value a, Value b) {
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

/// `a is None`, `a is not None` (and None on the left): a value here (a connector, a symbol, a
/// number) is never None, so the answer is known. The code generator turns such a comparison of
/// a pointer argument (DaCe's optional arrays) into a null test before it gets here. `b is True`,
/// `b is not False` (either order) of a bool value: Python's bools are the two singletons, so
/// identity is equality there (DaCe's `if C is False:` over a bool argument).
Value Translator::identity(CmpOp op, const ExprNode& e) {
  auto none = [](const Expr& x) { return x->kind == ExprKind::Symbol && x->name == "None"; };
  auto boolean = [](const Expr& x) { return x->kind == ExprKind::Bool; };
  const char* text = op == CmpOp::Is ? "is" : "is not";
  if (!none(e.args[0]) && !none(e.args[1])) {
    if (boolean(e.args[0]) || boolean(e.args[1])) {
      Value a = expr(e.args[0]), b = expr(e.args[1]);
      if (a.type == DType::Bool && b.type == DType::Bool)
        return infix(a, op == CmpOp::Is ? "==" : "!=", b, kEq, DType::Bool);
    }
    fail(fmt::format(
        "'{}' between two values in {} is not supported; only comparisons with None, and of a bool with True or "
        "False, are (use == or !=)",
        text, where()));
  }
  bool same = none(e.args[0]) && none(e.args[1]);
  for (const Expr& x : e.args)
    if (!none(x)) expr(x);  // the other side must be a known name
  return {(op == CmpOp::Is) == same ? "true" : "false", kPrimary, DType::Bool};
}

Value Translator::compare(CmpOp op, Value a, Value b) {
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
Value Translator::bool_op(bool is_and, std::vector<Value> ops, bool truth) {
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

Value Translator::conditional(const Value& cond, const Value& a, const Value& b) {
  std::vector<Value> ops{a, b};
  DType want = is_complex(a.type) || is_complex(b.type) ? complex_result(ops) : python_common(ops);
  if (is_complex(want))
    for (Value& v : ops) v = cast_to(v, want);
  cast_until(ops, want, common_of);
  return {fmt::format("({} ? {} : {})", truth_value(cond).text, ops[0].text, ops[1].text), kPrimary, want};
}

Value Translator::callback_call(const ExprNode& e, const Callback& cb, bool as_statement) {
  std::vector<std::pair<Callback::Value, bool>> params;  // (type, a result written through a pointer)
  for (auto& v : cb.arguments) params.push_back({v, false});
  if (!cb.returns_scalar())
    for (auto& v : cb.results) params.push_back({v, true});
  if (!e.kwnames.empty() || e.args.size() != params.size())
    fail(
        fmt::format("callback '{}' takes {} positional arguments ({} values and {} result pointers), but {} "
                    "passes {}",
                    e.name, params.size(), cb.arguments.size(), params.size() - cb.arguments.size(), where(),
                    e.args.size() + e.kwnames.size()));
  std::vector<std::string> args;
  for (std::size_t k = 0; k < params.size(); ++k) {
    auto [v, result] = params[k];
    const Expr& a = e.args[k];
    if (!v.array && !result) {
      args.push_back(cast_to(expr(a), v.dtype).text);
      continue;
    }
    // A pointer: to an output connector for a result, to any connector for an array.
    const std::map<std::string, DType>* owner = nullptr;
    if (a->kind == ExprKind::Symbol)
      for (const auto* names : {&scope_.inputs, &scope_.outputs})
        if (names->count(a->name)) owner = names;
    if (!owner || (result && owner != &scope_.outputs))
      fail(
          fmt::format("argument {} of callback '{}' in {} must be {} connector (the callback takes a pointer to {} "
                      "{}), not '{}'",
                      k + 1, e.name, where(), result ? "an output" : "a", to_string(v.dtype),
                      v.array ? "array" : "result", print_expr(a)));
    DType t = owner->at(a->name);
    if (t != v.dtype)
      fail(fmt::format("argument {} of callback '{}' in {}: connector '{}' is {}, the callback takes {}", k + 1, e.name,
                       where(), a->name, to_string(t), to_string(v.dtype)));
    args.push_back(scope_.pointers.count(a->name) ? a->name : "&" + a->name);
  }
  std::string text = fmt::format("{}({})", e.name, fmt::join(args, ", "));
  if (cb.returns_scalar() && !cb.results.empty()) return {text, kPrimary, cb.results[0].dtype};
  if (!as_statement)
    fail(fmt::format("callback '{}' returns no single value, but {} uses its value; call it as a statement", e.name,
                     where()));
  return {text, kPrimary, DType::Int32};
}

Value Translator::call(const ExprNode& e) {
  // A callback's name shadows every built-in function.
  if (auto cb = scope_.callbacks.find(e.name); cb != scope_.callbacks.end())
    return callback_call(e, *cb->second, false);
  if (auto st = scope_.structs.find(e.name); st != scope_.structs.end()) return struct_value(e, st->second);
  if (auto l = lambdas_.find(e.name); l != lambdas_.end()) {
    if (!e.kwnames.empty() || e.args.size() != l->second.params.size())
      fail(fmt::format("lambda '{}' takes {} positional argument(s), but {} calls it with {}", e.name,
                       l->second.params.size(), where(), e.args.size()));
    std::map<std::string, Expr> bound;
    for (std::size_t k = 0; k < e.args.size(); ++k) bound[l->second.params[k]] = e.args[k];
    return expr(substitute(l->second.body, bound));
  }
  for (const Expr& a : e.args)
    if (a->kind == ExprKind::Symbol && struct_named(a->name)) require_scalar(name_value(*a), e.name);
  if (!e.kwnames.empty())
    fail(
        fmt::format("keyword argument '{}' in the call of '{}' in {} is not supported", e.kwnames[0], e.name, where()));
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
  // decltype(name)(value) (parsed as decltype(name, value)): DaCe's frontend casts to a connector's
  // type so in numpy.arange's tasklet.
  if (module.empty() && base == "decltype" && e.args.size() == 2 && e.args[0]->kind == ExprKind::Symbol) {
    const std::string& name = e.args[0]->name;
    std::optional<DType> type;
    if (auto it = temps_.find(name); it != temps_.end()) type = it->second.type;
    for (const auto* names : {&scope_.inputs, &scope_.outputs, &scope_.symbols})
      if (auto it = names->find(name); !type && it != names->end()) type = it->second;
    if (!type)
      fail(fmt::format("decltype({}) in {}: '{}' is not a connector, a symbol or a temporary", name, where(), name));
    return cast_to(expr(e.args[1]), *type);
  }

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
    case FnKind::StdFloat64:
      for (Value& a : args) a = cast_to(a, DType::Float64);
      return {fmt::format("{}({})", fn->cpp, join_args(args)), kPrimary, DType::Float64};
    case FnKind::RtToInt:
      return {fmt::format("{}({})", fn->cpp, args[0].text), kPrimary, DType::Int64};
  }
  internal_error(__FILE__, __LINE__, "unknown function kind");
}

/// Functions of complex arguments (and real/imag/conj of any number): nullopt when `e` is not
/// one of them or has no complex argument.
std::optional<Value> Translator::complex_function(const ExprNode& e, std::string_view base) {
  static const std::set<std::string_view> parts = {"real", "imag", "conj", "conjugate", "angle"};
  static const std::set<std::string_view> complex_valued = {
      "exp",   "exp2",  "expm1", "log",   "log10", "log2", "log1p", "reciprocal",  "sqrt",
      "sin",   "cos",   "tan",   "sinh",  "cosh",  "tanh", "asin",  "acos",        "atan",
      "asinh", "acosh", "atanh", "round", "rint",  "sign", "sgn",   "sign_numpy_2"};
  static const std::set<std::string_view> predicates = {"isnan", "isinf", "isfinite"};
  bool part = parts.count(base) > 0;
  if (!part && !complex_valued.count(base) && !predicates.count(base) && base != "abs" && base != "absolute")
    return std::nullopt;
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
  if (base == "conj" || base == "conjugate") return Value{fmt::format("sdfc::rt::conj({})", z.text), kPrimary, z.type};
  if (predicates.count(base)) return Value{fmt::format("sdfc::rt::{}({})", base, z.text), kPrimary, DType::Bool};
  std::string_view fn = base == "rint" ? "round" : base == "sgn" ? "sign" : base;
  return Value{fmt::format("sdfc::rt::{}({})", fn, z.text), kPrimary, z.type};
}

void Translator::check_arity(const ExprNode& e, int arity) const {
  std::size_t n = e.args.size();
  if (arity == 0 && n < 2)
    fail(fmt::format("function '{}' in {} takes at least 2 arguments, got {}", e.name, where(), n));
  if (arity > 0 && n != static_cast<std::size_t>(arity))
    fail(fmt::format("function '{}' in {} takes {} argument{}, got {}", e.name, where(), arity, arity == 1 ? "" : "s",
                     n));
}

}  // namespace sdfc::python
