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
#include "lang/PythonTranslator.h"

namespace sdfc {

namespace python {

std::string Translator::run() {
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

[[noreturn]] void Translator::fail(std::string message) const {
  throw UserError(Diagnostic{file_, code_pointer_.empty() ? pointer_ + "/attributes/code" : code_pointer_, 0, 0,
                             std::move(message)});
}

[[noreturn]] void Translator::syntax_error(std::size_t offset, const std::string& what) const {
  int line = line_of(offset);
  std::size_t column = offset - line_starts_[line - 1] + 1;
  fail(fmt::format("tasklet line {}: syntax error at column {}: {}", line, column, what));
}

// Blanks out comments and line continuations in text_ (offsets stay those of the code) and
// splits it into statements at newlines and semicolons outside brackets.
std::vector<Statement> Translator::split() {
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
void Translator::collect_words() {
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
std::string Translator::display(std::size_t begin, std::size_t end) const {
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

/// The statements from `next` on at indentation `indent` (statements that follow another on
/// its line, after `;`, have none and belong to the same block).
std::vector<Translator::Compound> Translator::block(const std::vector<Statement>& statements, std::size_t& next,
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
Translator::Compound Translator::header(const Statement& s) {
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
      fail(fmt::format("tasklet line {}: unsupported loop '{}'; loops in tasklets are 'for NAME in range(...):'", line_,
                       display(s.begin, s.end)));
    c.expr_begin = in + 3;
  }
  return c;
}

void Translator::emit(const std::vector<Compound>& body) {
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

std::string Translator::condition(const Compound& c) {
  Value v = expr(parse(c.expr_begin, c.expr_end), true);
  require_real(v, "a condition");
  return truth_value(v).text;
}

/// `for k in range(a, b, step)` with a constant step: a C++ counter, and k assigned from it at
/// the start of each iteration, so that k keeps its last value after the loop as in Python.
void Translator::loop(const Compound& c) {
  Expr call = parse(c.expr_begin, c.expr_end);
  if (call->kind != ExprKind::Call || call->name != "range" || call->args.empty() || call->args.size() > 3)
    fail(fmt::format("tasklet line {}: unsupported loop over '{}'; loops in tasklets are 'for NAME in range(...):'",
                     line_, print_expr(call)));
  std::vector<Value> args;
  for (auto& a : call->args) {
    Value v = expr(a);
    if (!is_int_like(v.type) || v.type == DType::Bool)
      fail(
          fmt::format("tasklet line {}: range() takes integers, got {} '{}'", line_, to_string(v.type), print_expr(a)));
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
void Translator::emit_indented(const std::vector<Compound>& body) {
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

/// Python has one integer type: integer values of several C types (a literal is int32, a loop
/// variable int64) make one temporary of the widest (int64 when signedness differs).
std::set<DType> Translator::unify_integers(const std::set<DType>& types) {
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

void Translator::statement(const Statement& s) {
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
  if (!assignment && output_call(s)) return;
  if (!assignment) {
    Expr e = parse(s.begin, s.end);
    if (auto cb = scope_.callbacks.find(e->name); e->kind == ExprKind::Call && cb != scope_.callbacks.end()) {
      out_ += callback_call(*e, *cb->second, true).text + ";\n";
      return;
    }
  }
  if (!assignment)
    fail(fmt::format("tasklet line {}: unsupported statement '{}'; {}", line_, display(s.begin, s.end),
                     kAssignmentsOnly));
  if (!assignment->op && !has_top_level_comma(s.begin, assignment->begin) &&
      lambda_definition(parse(s.begin, assignment->begin), assignment->end, s.end))
    return;
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

/// `NAME = lambda a, b: expression` (parenthesized or not, as DaCe's frontend writes it): recorded
/// in `lambdas_`, inlined at each call (`call`: its parameters replaced by the call's arguments).
/// False when the value is not a lambda.
bool Translator::lambda_definition(const Expr& target, std::size_t begin, std::size_t end) {
  std::size_t open = 0;  // parentheses opened before `lambda`: they close at the statement's end
  for (; begin < end && (text_[begin] == ' ' || text_[begin] == '('); ++begin) open += text_[begin] == '(';
  static constexpr std::string_view kLambda = "lambda";
  if (text_.compare(begin, kLambda.size(), kLambda) != 0 || begin + kLambda.size() >= end ||
      is_ident_char(text_[begin + kLambda.size()]))
    return false;
  std::size_t stop = end;
  for (std::size_t k = 0; k < open; ++k) {
    while (stop > begin && text_[stop - 1] == ' ') --stop;
    if (stop <= begin || text_[stop - 1] != ')')
      fail(fmt::format("tasklet line {}: malformed lambda in '{}'", line_, display(begin, end)));
    --stop;
  }
  std::size_t colon = text_.find(':', begin);
  if (colon == std::string::npos || colon >= stop)
    fail(fmt::format("tasklet line {}: malformed lambda in '{}'", line_, display(begin, end)));
  if (target->kind != ExprKind::Symbol || target->name.find('.') != std::string::npos ||
      scope_.outputs.count(target->name) || scope_.inputs.count(target->name))
    fail(fmt::format("tasklet line {}: a lambda must be assigned to a new name, not '{}'", line_, print_expr(target)));
  Lambda l;
  std::size_t p = begin + kLambda.size();
  while (p < colon) {
    while (p < colon && (text_[p] == ' ' || text_[p] == ',')) ++p;
    std::size_t q = p;
    while (q < colon && is_ident_char(text_[q])) ++q;
    if (q == p && p < colon)
      fail(
          fmt::format("tasklet line {}: unsupported lambda parameters in '{}'; sdfc inlines lambdas of plain "
                      "names (no defaults, *args or tuple unpacking)",
                      line_, display(begin, stop)));
    if (q > p) l.params.emplace_back(text_.substr(p, q - p));
    p = q;
  }
  l.body = parse(colon + 1, stop);
  lambdas_[target->name] = std::move(l);
  return true;
}

/// DaCe's ufunc tasklets that write two outputs through a call: `py_divmod(n, d, q, r)` (numpy's
/// divmod: q = n // d, r = n % d, as Python computes them), `np_modf(a, i, f)` (numpy's modf: the
/// integral and fractional parts; of an integer, the integer as a float and 0) and
/// `np_frexp(a, m, e)` (numpy's frexp: a = m * 2**e, 0.5 <= |m| < 1). False when `s` is no such
/// call; an error when it is one with other arguments than inputs and two output connectors.
bool Translator::output_call(const Statement& s) {
  Expr call = parse(s.begin, s.end);
  const ExprNode& c = *call;
  static const std::map<std::string, std::size_t> arity = {{"py_divmod", 4}, {"np_modf", 3}, {"np_frexp", 3}};
  auto it = c.kind == ExprKind::Call ? arity.find(c.name) : arity.end();
  if (it == arity.end()) return false;
  std::size_t n = c.args.size();
  bool ok = n == it->second && c.kwnames.empty();
  for (std::size_t k = n >= 2 ? n - 2 : 0; ok && k < n; ++k)
    ok = c.args[k]->kind == ExprKind::Symbol && scope_.outputs.count(c.args[k]->name);
  if (!ok)
    fail(fmt::format("tasklet line {}: '{}' takes {} arguments, the last two output connectors it writes", line_,
                     display(s.begin, s.end), it->second));
  const Expr& out1 = c.args[n - 2];
  const Expr& out2 = c.args[n - 1];
  if (c.name == "py_divmod") {
    assign(out1, std::nullopt, make_binary(BinOp::FloorDiv, c.args[0], c.args[1]));
    assign(out2, std::nullopt, make_binary(BinOp::Mod, c.args[0], c.args[1]));
    return true;
  }
  Value a = expr(c.args[0]);
  require_real(a, c.name);
  Value first = name_value(*out1), second = name_value(*out2);
  if (c.name == "np_modf" && is_int_like(a.type)) {
    out_ += fmt::format("{} = static_cast<double>({});\n{} = 0.0;\n", first.text, a.text, second.text);
    return true;
  }
  DType t = a.type == DType::Float32 ? DType::Float32 : DType::Float64;
  a = cast_to(a, t);
  std::string scratch = fresh_name(c.name == "np_modf" ? "__integral" : "__exponent", true);
  if (c.name == "np_modf")
    out_ += fmt::format("{{\n  {0} {1};\n  {2} = std::modf({3}, &{1});\n  {4} = {1};\n}}\n", dtype_ctype(t), scratch,
                        second.text, a.text, first.text);
  else
    out_ += fmt::format("{{\n  int {0};\n  {1} = std::frexp({2}, &{0});\n  {3} = {0};\n}}\n", scratch, first.text,
                        a.text, second.text);
  return true;
}

std::optional<Assignment> Translator::find_assignment(std::size_t begin, std::size_t end) const {
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

bool Translator::has_top_level_comma(std::size_t begin, std::size_t end) const {
  int depth = 0;
  for (std::size_t i = begin; i < end; ++i) {
    char c = text_[i];
    if (c == '(' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == ']' || c == '}') --depth;
    if (depth == 0 && c == ',') return true;
  }
  return false;
}

Expr Translator::parse(std::size_t begin, std::size_t end) const {
  try {
    return parse_expr(std::string_view(text_).substr(begin, end - begin), Dialect::Plain);
  } catch (const ExprSyntaxError& e) {
    syntax_error(begin + e.offset, e.what());
  }
}

void Translator::assign(const Expr& target, std::optional<BinOp> op, const Expr& value) {
  if (target->kind == ExprKind::Symbol && scope_.element_pointers.count(target->name))
    return assign(element_of(target->name), op, value);
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
    if ((is_struct(out_type) || is_struct(result.type)) && result.type != out_type)
      fail(fmt::format("tasklet line {}: cannot assign a {} value to '{}' of type {}", line_, to_string(result.type),
                       name, to_string(out_type)));
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

std::string Translator::fresh_name(const std::string& name, bool may_keep) {
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

}  // namespace python

using python::Translator;

namespace {

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

ConnectorBinding input_binding(const Connector& c, const Memlet& m, const Range& r) {
  if (c.pointer || !single_element(r)) return ConnectorBinding::Pointer;
  return m.dynamic ? ConnectorBinding::Reference : ConnectorBinding::Value;
}
ConnectorBinding output_binding(const Connector& c, const Memlet& m, const Range& r) {
  if (c.pointer || !single_element(r)) return ConnectorBinding::Pointer;
  return m.dynamic && !m.wcr ? ConnectorBinding::Reference : ConnectorBinding::Value;
}

TaskletScope python_tasklet_scope(const SDFG& sdfg, const Block& st, int id, const std::vector<const DataEdge*>& in,
                                  const std::vector<const DataEdge*>& out) {
  const Node& n = st.node(id);
  TaskletScope scope;
  for (auto& [s, t] : sdfg.symbols) scope.symbols[s] = t;
  for (auto& [s, cb] : sdfg.callbacks) scope.callbacks[s] = &cb;
  for (auto& [name, d] : sdfg.arrays)
    if (const StructType* t = struct_of(d.dtype)) scope.structs[t->name] = d.dtype;
  for (auto* list : {&n.in_connectors, &n.out_connectors})
    for (auto& c : *list)
      if (const StructType* t = c.dtype ? struct_of(*c.dtype) : nullptr) scope.structs[t->name] = *c.dtype;
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
      ConnectorBinding b = inputs ? input_binding(conn, e->memlet, r) : output_binding(conn, e->memlet, r);
      if (b != ConnectorBinding::Pointer) continue;
      scope.pointers.insert(conn.name);
      if (single_element(r))
        scope.element_pointers.insert(conn.name);
      else
        scope.layouts[conn.name] = layout(sdfg, e->memlet.data, r);
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

std::vector<Diagnostic> translate_python_tasklets(const SDFG& root, const std::string& file,
                                                  const std::function<void(const Node&, std::string)>& done) {
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
          std::string text =
              translate_python_tasklet(n.code.code, python_tasklet_scope(s, st, static_cast<int>(i), in[i], out[i]),
                                       file, walk::node_pointer(st, sp, i));
          if (done) done(n, std::move(text));
        } catch (const UserError& e) {
          for (auto& d : e.diagnostics()) diags.push_back(d);
        }
      }
    });
  });
  return diags;
}

std::vector<Diagnostic> check_python_tasklets(const SDFG& root, const std::string& file) {
  return translate_python_tasklets(root, file, nullptr);
}

ExpressionTranslation translate_python_expression(const Expr& e, const TaskletScope& scope, const std::string& file,
                                                  const std::string& code_pointer, const std::string& what,
                                                  bool condition) {
  std::string text = print_expr(e);
  return Translator(text, scope, file, code_pointer).run_expression(e, what, code_pointer, condition);
}

}  // namespace sdfc
