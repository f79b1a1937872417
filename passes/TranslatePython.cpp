#include "passes/TranslatePython.h"

#include <fmt/format.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ir/Diagnostic.h"
#include "ir/Signature.h"
#include "ir/Walk.h"
#include "lang/CodeWriter.h"
#include "lang/PythonTasklet.h"

namespace sdfc {
namespace {

/// Translates the control code of one SDFG (not of its nested SDFGs).
class ControlTranslator {
 public:
  ControlTranslator(const SDFG& sdfg, std::vector<Diagnostic>& diags) : sdfg_(sdfg), diags_(diags) {
    for (auto& [s, t] : sdfg.symbols) symbols_[ident(s)] = symbol_value_type(t);
    for (auto& s : assigned_symbols(sdfg))
      if (!symbols_.count(ident(s))) symbols_[ident(s)] = DType::Int64;  // loop variables
  }

  /// `text` as a C++ expression (with `condition`, a bool); `what` names it in errors.
  ControlCode expression(const std::string& text, const std::string& ptr, bool condition,
                         const std::string& what = "") {
    ControlCode out;
    try {
      Expr e;
      try {
        e = parse_expr(text);
      } catch (const ExprSyntaxError& err) {
        throw UserError(Diagnostic{"", ptr, 0, 0, fmt::format("malformed expression \"{}\": {}", text, err.what())});
      }
      TaskletScope scope;
      scope.symbols = symbols_;
      Expr rewritten = rewrite(e, out, scope, ptr);
      out.cpp = translate_python_expression(rewritten, scope, "", ptr,
                                            what.empty() ? fmt::format("\"{}\"", text) : what, condition)
                    .text;
    } catch (const UserError& err) {
      for (auto& d : err.diagnostics()) diags_.push_back(d);
      out = ControlCode{};
    }
    return out;
  }

  /// `code`, a Python assignment `name = value`, as the C++ expression `name = value`.
  ControlCode assignment(const std::string& code, const std::string& ptr) {
    std::string lhs, rhs;
    if (!split_assignment(code, lhs, rhs)) {
      diags_.push_back(
          Diagnostic{"", ptr, 0, 0, fmt::format("expected an assignment 'name = expression' but found \"{}\"", code)});
      return {};
    }
    if (!is_identifier(lhs) && !sdfg_.find_data(lhs)) {
      diags_.push_back(Diagnostic{"", ptr, 0, 0, fmt::format("cannot assign to \"{}\"", lhs)});
      return {};
    }
    return assigned(ident(lhs), expression(rhs, ptr, false));
  }

  /// `value` assigned to `name` (an interstate edge's assignment).
  static ControlCode assigned(const std::string& name, ControlCode value) {
    if (value.translated()) value.cpp = fmt::format("{} = {}", name, value.cpp);
    return value;
  }

 private:
  const SDFG& sdfg_;
  std::vector<Diagnostic>& diags_;
  std::map<std::string, DType> symbols_;

  /// A read of element `idx` of `name`, as the name standing for it.
  Expr read(const std::string& name, std::vector<Expr> idx, ControlCode& out, TaskletScope& scope,
            const std::string& ptr) const {
    const DataDesc& d = *sdfg_.find_data(name);
    if (d.kind != DataKind::Scalar && idx.size() != d.shape.size())
      throw UserError(Diagnostic{
          "", ptr, 0, 0,
          fmt::format("subset of \"{}\" has {} dimensions, the data has {}", name, idx.size(), d.shape.size())});
    std::string stands_for = control_read_name(out.reads.size());
    out.reads.push_back({name, std::move(idx)});
    scope.symbols[stands_for] = d.dtype;
    return make_symbol(stands_for);
  }

  Expr rewrite(const Expr& x, ControlCode& out, TaskletScope& scope, const std::string& ptr) const {
    // `A is None`, `A is not None` for an array A (DaCe's optional arguments, passed as null
    // pointers): a null test of its pointer. Other values are never None (the translator knows).
    if (x->kind == ExprKind::Compare &&
        (x->op == static_cast<int>(CmpOp::Is) || x->op == static_cast<int>(CmpOp::IsNot))) {
      auto none = [](const Expr& y) { return y->kind == ExprKind::Symbol && y->name == "None"; };
      const Expr& other = none(x->args[0]) ? x->args[1] : x->args[0];
      const DataDesc* d = other->kind == ExprKind::Symbol ? sdfg_.find_data(other->name) : nullptr;
      if (d && d->kind != DataKind::Scalar && none(x->args[0]) != none(x->args[1])) {
        std::string test =
            fmt::format("({} {} nullptr)", ident(other->name), x->op == static_cast<int>(CmpOp::Is) ? "==" : "!=");
        scope.symbols[test] = DType::Bool;
        return make_symbol(test);
      }
    }
    if (x->kind == ExprKind::Subscript && sdfg_.find_data(x->name)) {
      std::vector<Expr> idx;
      for (auto& a : x->args) idx.push_back(rewrite(a, out, scope, ptr));
      return read(x->name, std::move(idx), out, scope, ptr);
    }
    if (x->kind == ExprKind::Symbol && sdfg_.find_data(x->name))
      return read(x->name, std::vector<Expr>(sdfg_.find_data(x->name)->shape.size(), make_int(0)), out, scope, ptr);
    if (x->kind == ExprKind::Symbol) {
      std::string id = ident(x->name);
      // a symbol the SDFG does not declare (validation checked it is defined): an integer
      if (!scope.symbols.count(id) && x->name.find('.') == std::string::npos) scope.symbols[id] = DType::Int64;
      return make_symbol(id);
    }
    if (x->args.empty()) return x;
    ExprNode n = *x;
    for (auto& a : n.args) a = rewrite(a, out, scope, ptr);
    if (n.kind == ExprKind::Call && n.args.size() == 2 && n.kwnames.empty()) {
      if (n.name == "int_floor") return make_binary(BinOp::FloorDiv, n.args[0], n.args[1]);
      if (n.name == "Mod") return make_binary(BinOp::Mod, n.args[0], n.args[1]);
      if (n.name == "int_ceil")
        return make_unary(UnaryOp::Neg, make_binary(BinOp::FloorDiv, make_unary(UnaryOp::Neg, n.args[0]), n.args[1]));
    }
    static const std::map<std::string, std::string> sympy = {
        {"Max", "max"}, {"Min", "min"}, {"Abs", "abs"}, {"ceiling", "ceil"}};
    if (auto it = sympy.find(n.name); n.kind == ExprKind::Call && it != sympy.end()) n.name = it->second;
    return make_node(std::move(n));
  }
};

void translate_region(ControlTranslator& t, Block& r, const std::string& ptr) {
  for (std::size_t i = 0; i < r.cf_edges.size(); ++i) {
    InterstateEdge& e = r.cf_edges[i];
    std::string ep = ptr + "/edges/" + std::to_string(i) + "/attributes/data/attributes";
    e.cpp_condition = e.unconditional() ? ControlCode{} : t.expression(e.condition.code, ep + "/condition", true);
    e.cpp_assignments.clear();
    for (auto& [name, value] : e.assignments)
      e.cpp_assignments.push_back(ControlTranslator::assigned(
          ident(name), t.expression(value, ep + "/assignments/" + pointer_token(name), false)));
  }
}

void translate_block(ControlTranslator& t, Block& b, const std::string& ptr) {
  if (b.is_region()) translate_region(t, b, ptr);
  if (b.kind == BlockKind::Loop) {
    std::string ap = ptr + "/attributes";
    b.cpp_init = b.init_statement ? t.assignment(b.init_statement->code, ap + "/init_statement") : ControlCode{};
    b.cpp_condition = t.expression(b.loop_condition.code, ap + "/loop_condition", true);
    b.cpp_update =
        b.update_statement ? t.assignment(b.update_statement->code, ap + "/update_statement") : ControlCode{};
  }
  if (b.kind == BlockKind::Conditional) {
    b.cpp_branch_conditions.clear();
    for (std::size_t i = 0; i < b.branches.size(); ++i) {
      auto& cond = b.branches[i].first;
      b.cpp_branch_conditions.push_back(
          cond ? t.expression(cond->code, ptr + "/branches/" + std::to_string(i) + "/0", true) : ControlCode{});
    }
  }
}

}  // namespace

void translate_python(SDFG& root, const CompileOptions&) {
  std::map<const Node*, std::string> tasklets;
  std::vector<Diagnostic> diags =
      translate_python_tasklets(root, "", [&](const Node& n, std::string text) { tasklets[&n] = std::move(text); });
  walk::for_each_sdfg(root, "", [&](SDFG& s, const std::string& ptr) {
    ControlTranslator t(s, diags);
    walk::for_each_block(s.root, ptr, [&](Block& b, const std::string& bp) {
      translate_block(t, b, bp);
      for (auto& n : b.nodes)
        if (auto it = tasklets.find(n.get()); it != tasklets.end()) n->cpp_code = std::move(it->second);
    });
  });
  if (!diags.empty()) throw UserError(std::move(diags));
}

}  // namespace sdfc
