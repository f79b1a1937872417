#include "ir/Builder.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <stdexcept>

#include "ir/Diagnostic.h"
#include "ir/Memlets.h"

namespace sdfc {
namespace {

/// Splits at top-level occurrences of `sep` (outside parentheses and brackets).
std::vector<std::string> split_top(const std::string& s, char sep) {
  std::vector<std::string> out;
  int depth = 0;
  std::string cur;
  for (char c : s) {
    if (c == '(' || c == '[') ++depth;
    if (c == ')' || c == ']') --depth;
    if (c == sep && depth == 0) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

[[noreturn]] void builder_error(const std::string& what) {
  throw UserError(Diagnostic{"<builder>", "", 0, 0, what});
}

Expr parse_or_throw(const std::string& text) {
  try {
    return parse_expr(text, Dialect::Plain);
  } catch (const ExprSyntaxError& e) {
    builder_error(fmt::format("malformed expression \"{}\": {}", text, e.what()));
  }
}

/// "A[i, j]" -> {"A", "i, j"}; "A" -> {"A", ""}.
std::pair<std::string, std::string> split_access(const std::string& text) {
  auto b = text.find('[');
  if (b == std::string::npos) return {text, ""};
  if (text.back() != ']') builder_error(fmt::format("expected \"name[subset]\" but found \"{}\"", text));
  return {text.substr(0, b), text.substr(b + 1, text.size() - b - 2)};
}

Expr volume_of(const Range& r) {
  Expr v = make_int(1);
  for (auto& d : r) {
    Expr len = make_binary(BinOp::Add, make_binary(BinOp::Sub, d.end, d.start), make_int(1));
    if (as_constant(d.step) != 1)
      len = make_binary(BinOp::FloorDiv, make_binary(BinOp::Add, len, make_binary(BinOp::Sub, d.step, make_int(1))),
                        d.step);
    v = make_binary(BinOp::Mul, v, len);
  }
  return simplify(v);
}

}  // namespace

Range parse_subset(const std::string& text) {
  Range r;
  if (text.find_first_not_of(" ") == std::string::npos) return r;
  for (auto& dim : split_top(text, ',')) {
    auto parts = split_top(dim, ':');
    RangeDim d;
    if (parts.size() == 1) {
      d.start = d.end = simplify(parse_or_throw(parts[0]));
      d.step = make_int(1);
    } else if (parts.size() == 2 || parts.size() == 3) {
      d.start = simplify(parse_or_throw(parts[0]));
      d.end = simplify(make_binary(BinOp::Sub, parse_or_throw(parts[1]), make_int(1)));
      d.step = parts.size() == 3 ? simplify(parse_or_throw(parts[2])) : make_int(1);
    } else {
      builder_error(fmt::format("malformed range \"{}\"", dim));
    }
    d.tile = make_int(1);
    r.push_back(d);
  }
  return r;
}

// ---------------------------------------------------------------------------------------------

int StateBuilder::add(std::unique_ptr<Node> n) {
  state_->nodes.push_back(std::move(n));
  return static_cast<int>(state_->nodes.size()) - 1;
}

int StateBuilder::access(const std::string& data, int scope) {
  if (!sdfg_->find_data(data)) builder_error(fmt::format("access to unknown data \"{}\"", data));
  auto n = std::make_unique<Node>(NodeKind::Access);
  n->label = data;
  n->data = data;
  n->scope_entry = scope;
  return add(std::move(n));
}

std::pair<int, int> StateBuilder::map(const std::string& label, const std::vector<std::string>& params,
                                      const std::vector<std::string>& ranges, ScheduleType schedule, int scope) {
  if (params.size() != ranges.size()) builder_error(fmt::format("map \"{}\": one range per parameter", label));
  auto entry = std::make_unique<Node>(NodeKind::MapEntry);
  entry->map.label = label;
  entry->map.params = params;
  for (auto& r : ranges) {
    Range one = parse_subset(r);
    if (one.size() != 1) builder_error(fmt::format("map \"{}\": malformed range \"{}\"", label, r));
    entry->map.range.push_back(one[0]);
  }
  entry->map.schedule = schedule;
  std::string desc;
  for (std::size_t i = 0; i < params.size(); ++i) desc += (i ? ", " : "") + params[i] + "=" + ranges[i];
  entry->label = label + "[" + desc + "]";
  entry->scope_entry = scope;
  auto exit = std::make_unique<Node>(NodeKind::MapExit);
  exit->label = entry->label;
  int e = add(std::move(entry));
  exit->scope_entry = e;
  exit->scope_exit = -1;
  int x = add(std::move(exit));
  state_->node(e).scope_exit = x;
  state_->node(x).scope_exit = x;
  return {e, x};
}

int StateBuilder::tasklet(const std::string& label, const std::vector<std::string>& ins,
                          const std::vector<std::string>& outs, const std::string& code, Language language, int scope) {
  auto n = std::make_unique<Node>(NodeKind::Tasklet);
  n->label = label;
  for (auto& c : ins) n->in_connectors.push_back({c, std::nullopt});
  for (auto& c : outs) n->out_connectors.push_back({c, std::nullopt});
  n->code = {code, language};
  n->scope_entry = scope;
  if (scope >= 0) n->scope_exit = state_->node(scope).scope_exit;
  return add(std::move(n));
}

int StateBuilder::nested(std::unique_ptr<SDFG> inner, const std::vector<std::string>& ins,
                         const std::vector<std::string>& outs, const std::map<std::string, std::string>& symbol_mapping,
                         int scope) {
  auto n = std::make_unique<Node>(NodeKind::NestedSDFG);
  n->label = inner->name;
  for (auto& c : ins) n->in_connectors.push_back({c, std::nullopt});
  for (auto& c : outs) n->out_connectors.push_back({c, std::nullopt});
  for (auto& [k, v] : symbol_mapping) n->symbol_mapping.emplace_back(k, parse_or_throw(v));
  inner->dace_version.clear();
  n->sdfg = std::move(inner);
  n->scope_entry = scope;
  if (scope >= 0) n->scope_exit = state_->node(scope).scope_exit;
  return add(std::move(n));
}

int StateBuilder::library(const std::string& label, const std::string& classpath, const std::vector<std::string>& ins,
                          const std::vector<std::string>& outs, const Json& properties, int scope) {
  auto n = std::make_unique<Node>(NodeKind::Library);
  n->label = label;
  n->classpath = classpath;
  for (auto& c : ins) n->in_connectors.push_back({c, std::nullopt});
  for (auto& c : outs) n->out_connectors.push_back({c, std::nullopt});
  n->extra = properties;
  n->extra["label"] = label;
  n->scope_entry = scope;
  if (scope >= 0) n->scope_exit = state_->node(scope).scope_exit;
  return add(std::move(n));
}

void StateBuilder::edge(int src, const std::string& src_conn, int dst, const std::string& dst_conn,
                        const std::string& data, const std::string& subset_text, const std::string& wcr) {
  DataEdge e;
  e.src = src;
  e.dst = dst;
  if (!src_conn.empty()) e.src_conn = src_conn;
  if (!dst_conn.empty()) e.dst_conn = dst_conn;
  Node& s = state_->node(src);
  Node& d = state_->node(dst);
  if (!src_conn.empty() && (s.kind == NodeKind::MapEntry || s.kind == NodeKind::MapExit) && !s.find_out(src_conn))
    s.out_connectors.push_back({src_conn, std::nullopt});
  if (!dst_conn.empty() && (d.kind == NodeKind::MapEntry || d.kind == NodeKind::MapExit) && !d.find_in(dst_conn))
    d.in_connectors.push_back({dst_conn, std::nullopt});
  e.memlet.data = data;
  if (!data.empty()) {
    const DataDesc* desc = sdfg_->find_data(data);
    if (!desc) builder_error(fmt::format("memlet of unknown data \"{}\"", data));
    Range r;
    if (subset_text.empty()) {
      r = full_range(*desc);
    } else {
      r = parse_subset(subset_text);
    }
    e.memlet.volume = volume_of(r);
    e.memlet.subset = r;
    // Reads (from an access node or through a map entry) describe the source; writes (out of a
    // tasklet, a map exit or a nested SDFG) describe the destination, as DaCe records them.
    e.memlet.is_data_src = s.kind == NodeKind::Access || s.kind == NodeKind::MapEntry;
  } else {
    e.memlet.volume = make_int(0);
  }
  if (!wcr.empty()) e.memlet.wcr = wcr;
  state_->edges.push_back(std::move(e));
}

void StateBuilder::copy(int src, int dst, const std::string& src_subset, const std::string& dst_subset) {
  edge(src, "", dst, "", state_->node(src).data, src_subset);
  state_->edges.back().memlet.other_subset = parse_subset(dst_subset);
}

void StateBuilder::view_of(int view, int viewed, const std::string& subset, bool written) {
  const std::string data = state_->node(viewed).data;
  if (written) {
    edge(view, "views", viewed, "", data, subset);
    state_->node(view).out_connectors.push_back({"views", std::nullopt});
  } else {
    edge(viewed, "", view, "views", data, subset);
    state_->node(view).in_connectors.push_back({"views", std::nullopt});
  }
  std::vector<std::string> extents;
  for (auto& d : sdfg_->find_data(state_->node(view).data)->shape) extents.push_back("0:" + print_expr(d));
  state_->edges.back().memlet.other_subset = parse_subset(fmt::format("{}", fmt::join(extents, ", ")));
}

std::pair<int, int> StateBuilder::mapped_tasklet(const std::string& label,
                                                 const std::vector<std::pair<std::string, std::string>>& map_ranges,
                                                 const std::vector<std::pair<std::string, std::string>>& inputs,
                                                 const std::string& code,
                                                 const std::vector<std::pair<std::string, std::string>>& outputs,
                                                 ScheduleType schedule, std::map<std::string, int>* outer) {
  std::vector<std::string> params, ranges;
  for (auto& [p, r] : map_ranges) {
    params.push_back(p);
    ranges.push_back(r);
  }
  auto [entry, exit] = map(label, params, ranges, schedule);
  std::vector<std::string> ins, outs;
  for (auto& [c, _] : inputs) ins.push_back(c);
  for (auto& [c, _] : outputs) outs.push_back(c);
  int t = tasklet(label, ins, outs, code, Language::Python, entry);
  // The outer memlet of a container covers every inner subset of it over the whole map range
  // (monotone indices): per dimension the least start and the greatest end where their difference
  // is a constant, else the whole dimension.
  std::map<std::string, Expr> lo, hi;
  for (std::size_t i = 0; i < params.size(); ++i) {
    lo[params[i]] = state_->node(entry).map.range[i].start;
    hi[params[i]] = state_->node(entry).map.range[i].end;
  }
  auto outer_subset = [&](const std::string& data, const std::vector<Range>& inners) {
    const DataDesc& d = *sdfg_->find_data(data);
    std::string s;
    for (std::size_t i = 0; i < inners[0].size(); ++i) {
      Expr a, b;
      bool whole = false;
      for (const Range& inner : inners) {
        if (inner.size() != inners[0].size())
          builder_error(fmt::format("\"{}\" is accessed with different ranks", data));
        Expr x = simplify(substitute(inner[i].start, lo)), y = simplify(substitute(inner[i].end, hi));
        auto below = [](const Expr& p, const Expr& q) { return as_constant(simplify(make_binary(BinOp::Sub, p, q))); };
        if (!a) {
          a = x;
          b = y;
          continue;
        }
        auto da = below(x, a), db = below(y, b);
        if (!da || !db) whole = true;
        if (da && *da < 0) a = x;
        if (db && *db > 0) b = y;
      }
      if (whole && i < d.shape.size()) {
        a = make_int(0);
        b = simplify(make_binary(BinOp::Sub, d.shape[i], make_int(1)));
      }
      s += (i ? ", " : "") + print_expr(a) + ":" + print_expr(simplify(make_binary(BinOp::Add, b, make_int(1))));
    }
    return s;
  };
  auto node_for = [&](const std::string& data) {
    if (outer) {
      auto it = outer->find(data);
      if (it != outer->end()) return it->second;
      int a = access(data);
      (*outer)[data] = a;
      return a;
    }
    return access(data);
  };
  // Containers in the order of their first access, with every inner subset of each.
  auto group = [&](const std::vector<std::pair<std::string, std::string>>& accesses, const char* what) {
    std::vector<std::pair<std::string, std::vector<Range>>> out;
    for (auto& [conn, acc] : accesses) {
      auto split = split_access(acc);
      const std::string& data = split.first;
      const std::string& sub = split.second;
      if (!sdfg_->find_data(data)) builder_error(fmt::format("{} of unknown data \"{}\"", what, data));
      auto it = std::find_if(out.begin(), out.end(), [&](auto& g) { return g.first == data; });
      if (it == out.end()) it = out.insert(out.end(), {data, {}});
      it->second.push_back(parse_subset(sub));
    }
    return out;
  };
  auto in_groups = group(inputs, "input"), out_groups = group(outputs, "output");
  auto inners_of = [](const std::vector<std::pair<std::string, std::vector<Range>>>& groups, const std::string& data) {
    return std::find_if(groups.begin(), groups.end(), [&](auto& g) { return g.first == data; })->second;
  };
  std::set<std::string> connected_in, connected_out;
  for (auto& [conn, acc] : inputs) {
    auto [data, sub] = split_access(acc);
    if (connected_in.insert(data).second)
      edge(node_for(data), "", entry, "IN_" + data, data, outer_subset(data, inners_of(in_groups, data)));
    edge(entry, "OUT_" + data, t, conn, data, sub);
  }
  for (auto& [conn, acc] : outputs) {
    auto [data, sub] = split_access(acc);
    edge(t, conn, exit, "IN_" + data, data, sub);
    if (connected_out.insert(data).second)
      edge(exit, "OUT_" + data, node_for(data), "", data, outer_subset(data, inners_of(out_groups, data)));
  }
  return {entry, exit};
}

// ---------------------------------------------------------------------------------------------

SDFGBuilder::SDFGBuilder(std::string name) : sdfg_(std::make_unique<SDFG>()) {
  sdfg_->name = std::move(name);
  sdfg_->dace_version = "2.0.0a6";
}

SDFGBuilder& SDFGBuilder::symbol(const std::string& name, DType t) {
  sdfg_->symbols.emplace_back(name, t);
  return *this;
}

SDFGBuilder& SDFGBuilder::view(const std::string& name, DType t, const std::vector<std::string>& shape,
                               const std::vector<std::string>& strides, StorageType storage) {
  array(name, t, shape, true, storage);
  DataDesc& d = sdfg_->arrays.back().second;
  d.view = true;
  if (strides.size() != shape.size()) builder_error(fmt::format("view \"{}\": one stride per dimension", name));
  d.strides.clear();
  for (auto& s : strides) d.strides.push_back(simplify(parse_or_throw(s)));
  return *this;
}

SDFGBuilder& SDFGBuilder::array(const std::string& name, DType t, const std::vector<std::string>& shape, bool transient,
                                StorageType storage, Lifetime lifetime) {
  if (sdfg_->find_data(name)) builder_error(fmt::format("data \"{}\" declared twice", name));
  DataDesc d;
  d.kind = DataKind::Array;
  d.dtype = t;
  for (auto& s : shape) d.shape.push_back(simplify(parse_or_throw(s)));
  d.strides = c_order_strides(d.shape);
  d.total_size = product(d.shape);
  d.offset.assign(d.shape.size(), make_int(0));
  d.transient = transient;
  d.storage = storage;
  d.lifetime = lifetime;
  d.optional_ = transient ? std::optional<bool>(false) : std::nullopt;
  sdfg_->arrays.emplace_back(name, std::move(d));
  return *this;
}

SDFGBuilder& SDFGBuilder::scalar(const std::string& name, DType t, bool transient, StorageType storage) {
  if (sdfg_->find_data(name)) builder_error(fmt::format("data \"{}\" declared twice", name));
  DataDesc d;
  d.kind = DataKind::Scalar;
  d.dtype = t;
  d.shape = {make_int(1)};
  d.strides = {make_int(1)};
  d.total_size = make_int(1);
  d.offset = {make_int(0)};
  d.transient = transient;
  d.storage = storage;
  sdfg_->arrays.emplace_back(name, std::move(d));
  return *this;
}

StateBuilder SDFGBuilder::state(const std::string& label) {
  auto b = std::make_unique<Block>(BlockKind::State);
  b->label = label;
  b->type_name = "SDFGState";
  sdfg_->root.blocks.push_back(std::move(b));
  return StateBuilder(*sdfg_, *sdfg_->root.blocks.back());
}

StateBuilder SDFGBuilder::loop(const std::string& label, const std::string& var, const std::string& init,
                               const std::string& cond, const std::string& update) {
  auto l = std::make_unique<Block>(BlockKind::Loop);
  l->label = label;
  l->type_name = "LoopRegion";
  l->loop_variable = var;
  l->init_statement = CodeBlock{var + " = " + init, Language::Python};
  l->loop_condition = CodeBlock{cond, Language::Python};
  l->update_statement = CodeBlock{var + " = " + update, Language::Python};
  auto body = std::make_unique<Block>(BlockKind::State);
  body->label = label + "_body";
  body->type_name = "SDFGState";
  l->blocks.push_back(std::move(body));
  sdfg_->root.blocks.push_back(std::move(l));
  return StateBuilder(*sdfg_, *sdfg_->root.blocks.back()->blocks.back());
}

SDFGBuilder& SDFGBuilder::edge(int src, int dst, const std::string& condition,
                               const std::vector<std::pair<std::string, std::string>>& assignments) {
  InterstateEdge e;
  e.src = src;
  e.dst = dst;
  e.condition = {condition, Language::Python};
  e.assignments = assignments;
  sdfg_->root.cf_edges.push_back(std::move(e));
  return *this;
}

SDFGBuilder& SDFGBuilder::chain() {
  int n = static_cast<int>(sdfg_->root.blocks.size());
  for (int i = 0; i + 1 < n; ++i) {
    bool has = false;
    for (auto& e : sdfg_->root.cf_edges) has |= e.src == i;
    if (!has) edge(i, i + 1);
  }
  return *this;
}

std::unique_ptr<SDFG> SDFGBuilder::build() {
  if (!sdfg_) throw std::logic_error("SDFGBuilder::build: the SDFG was already handed over by an earlier build()");
  return std::move(sdfg_);
}

}  // namespace sdfc
