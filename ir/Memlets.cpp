#include "ir/Memlets.h"

#include <fmt/format.h>

#include <map>

namespace sdfc {

namespace {

bool is_scope_node(const Node& n) {
  return n.kind == NodeKind::MapEntry || n.kind == NodeKind::MapExit;
}

/// `IN_x` <-> `OUT_x`; nullopt when `conn` is neither.
std::optional<std::string> partner(const std::string& conn, const char* from, const char* to) {
  std::string f = from;
  if (conn.rfind(f, 0) != 0) return std::nullopt;
  return to + conn.substr(f.size());
}

}  // namespace

PathEnds memlet_path_ends(const Block& st, const DataEdge& e) {
  PathEnds ends{e.src, e.dst};
  int n = static_cast<int>(st.nodes.size());
  auto valid = [&](const DataEdge& x) { return x.src >= 0 && x.src < n && x.dst >= 0 && x.dst < n; };
  if (!valid(e)) return ends;
  // Backwards: the edge into the scope node's matching IN_ connector (at most one, validated).
  const DataEdge* cur = &e;
  for (std::size_t guard = 0; guard <= st.edges.size(); ++guard) {
    if (!is_scope_node(st.node(cur->src)) || !cur->src_conn) break;
    auto in = partner(*cur->src_conn, "OUT_", "IN_");
    if (!in) break;
    const DataEdge* next = nullptr;
    for (const DataEdge& x : st.edges)
      if (valid(x) && x.dst == cur->src && x.dst_conn == *in) next = &x;
    if (!next) break;
    cur = next;
  }
  ends.src = cur->src;
  // Forwards: the unique edge out of the matching OUT_ connector.
  cur = &e;
  for (std::size_t guard = 0; guard <= st.edges.size(); ++guard) {
    if (!is_scope_node(st.node(cur->dst)) || !cur->dst_conn) break;
    auto out = partner(*cur->dst_conn, "IN_", "OUT_");
    if (!out) break;
    const DataEdge* next = nullptr;
    int count = 0;
    for (const DataEdge& x : st.edges)
      if (valid(x) && x.src == cur->dst && x.src_conn == *out) {
        next = &x;
        ++count;
      }
    if (count != 1) break;
    cur = next;
  }
  ends.dst = cur->dst;
  return ends;
}

const std::vector<std::pair<std::string, Expr>>* path_nested_symbol_mapping(const Block& st, const DataEdge& e) {
  PathEnds ends = memlet_path_ends(st, e);
  for (int end : {ends.src, ends.dst})
    if (end >= 0 && end < static_cast<int>(st.nodes.size()) && st.node(end).kind == NodeKind::NestedSDFG)
      return &st.node(end).symbol_mapping;
  return nullptr;
}

EdgeRole edge_role(const Block& st, const DataEdge& e) {
  const Node& s = st.node(e.src);
  const Node& d = st.node(e.dst);
  bool data = !e.memlet.data.empty();
  bool code_to_code = is_code_node(s) && is_code_node(d);
  if (code_to_code) return EdgeRole::Unsupported;  // a value passed between connectors without a container
  if (!data) {
    // Connectors of code nodes carry values; without data they have nothing to bind.
    if (is_code_node(s) && e.src_conn) return EdgeRole::Unsupported;
    if (is_code_node(d) && e.dst_conn) return EdgeRole::Unsupported;
    return EdgeRole::Ordering;
  }
  auto into_code = [&] {
    return d.kind == NodeKind::Tasklet      ? EdgeRole::TaskletInput
           : d.kind == NodeKind::NestedSDFG ? EdgeRole::NestedInput
                                            : EdgeRole::LibraryInput;
  };
  auto into_entry = [&] {
    return e.dst_conn && is_dynamic_range_input(*e.dst_conn) ? EdgeRole::DynamicRangeInput : EdgeRole::ScopeInput;
  };
  switch (s.kind) {
    case NodeKind::Access:
      switch (d.kind) {
        case NodeKind::Access:
          return EdgeRole::Copy;
        case NodeKind::MapEntry:
          return into_entry();
        case NodeKind::MapExit:
          return EdgeRole::ScopeCopyOut;
        case NodeKind::Tasklet:
        case NodeKind::NestedSDFG:
        case NodeKind::Library:
          return into_code();
      }
      break;
    case NodeKind::MapEntry:
      switch (d.kind) {
        case NodeKind::Access:
          return EdgeRole::ScopeCopyIn;
        case NodeKind::MapEntry:
          return into_entry();
        case NodeKind::MapExit:
          return EdgeRole::Unsupported;
        case NodeKind::Tasklet:
        case NodeKind::NestedSDFG:
        case NodeKind::Library:
          return into_code();
      }
      break;
    case NodeKind::MapExit:
      switch (d.kind) {
        case NodeKind::Access:
        case NodeKind::MapExit:
          return EdgeRole::ScopeOutput;
        case NodeKind::MapEntry:
        case NodeKind::Tasklet:
        case NodeKind::NestedSDFG:
        case NodeKind::Library:
          return EdgeRole::Unsupported;
      }
      break;
    case NodeKind::Tasklet:
    case NodeKind::NestedSDFG:
    case NodeKind::Library: {
      EdgeRole out = s.kind == NodeKind::Tasklet      ? EdgeRole::TaskletOutput
                     : s.kind == NodeKind::NestedSDFG ? EdgeRole::NestedOutput
                                                      : EdgeRole::LibraryOutput;
      switch (d.kind) {
        case NodeKind::Access:
        case NodeKind::MapExit:
          return out;
        case NodeKind::MapEntry:
        case NodeKind::Tasklet:
        case NodeKind::NestedSDFG:
        case NodeKind::Library:
          return EdgeRole::Unsupported;
      }
      break;
    }
  }
  return EdgeRole::Unsupported;  // not reached: every kind pair returns above
}

std::string edge_role_problem(const Block& st, const DataEdge& e) {
  const Node& s = st.node(e.src);
  const Node& d = st.node(e.dst);
  auto what = [](const Node& n) -> std::string {
    if (n.kind == NodeKind::MapExit) return "a map exit";
    if (n.kind == NodeKind::MapEntry) return fmt::format("the entry of map \"{}\"", n.map.label);
    return fmt::format("{} \"{}\"", to_string(n.kind), n.kind == NodeKind::Access ? n.data : n.label);
  };
  std::string route = fmt::format("an edge from {} to {}", what(s), what(d));
  if (e.memlet.data.empty())
    return route +
           " connects a connector without data (a value passed between code nodes without a container); "
           "not supported yet: pass the value through a transient scalar";
  return route + " carrying data is not supported; route the data through an access node";
}

const char* to_string(EdgeRole r) {
  switch (r) {
    case EdgeRole::Ordering:
      return "ordering edge";
    case EdgeRole::Copy:
      return "copy";
    case EdgeRole::ScopeCopyIn:
      return "scope copy-in";
    case EdgeRole::ScopeCopyOut:
      return "scope copy-out";
    case EdgeRole::ScopeInput:
      return "scope input";
    case EdgeRole::DynamicRangeInput:
      return "dynamic map range input";
    case EdgeRole::ScopeOutput:
      return "scope output";
    case EdgeRole::TaskletInput:
      return "tasklet input";
    case EdgeRole::TaskletOutput:
      return "tasklet output";
    case EdgeRole::NestedInput:
      return "nested SDFG input";
    case EdgeRole::NestedOutput:
      return "nested SDFG output";
    case EdgeRole::LibraryInput:
      return "library node input";
    case EdgeRole::LibraryOutput:
      return "library node output";
    case EdgeRole::Unsupported:
      return "unsupported edge";
  }
  return "edge";
}

Range full_range(const DataDesc& d) {
  Range r;
  for (auto& s : d.shape)
    r.push_back({make_int(0), simplify(make_binary(BinOp::Sub, s, make_int(1))), make_int(1), make_int(1)});
  return r;
}

Expr element_offset(const DataDesc& d, const std::vector<Expr>& idx) {
  Expr lin = make_int(0);
  for (std::size_t k = 0; k < idx.size(); ++k)
    lin = make_binary(BinOp::Add, lin,
                      make_binary(BinOp::Mul, make_binary(BinOp::Add, idx[k], d.offset[k]), d.strides[k]));
  return lin;
}

std::pair<Expr, Expr> split_invariant(const Expr& index, const std::set<std::string>& symbols) {
  std::set<std::string> names;
  free_symbols(index, names);
  std::map<std::string, Expr> at_zero;
  for (auto& n : names)
    if (!symbols.count(n)) at_zero[n] = make_int(0);
  Expr invariant = simplify(substitute(index, at_zero));
  return {simplify(make_binary(BinOp::Sub, index, invariant)), invariant};
}

namespace {

void collect_terms(const Expr& e, bool negative, std::vector<std::pair<bool, Expr>>& out) {
  if (e->kind == ExprKind::Binary && (e->op == static_cast<int>(BinOp::Add) || e->op == static_cast<int>(BinOp::Sub))) {
    collect_terms(e->args[0], negative, out);
    collect_terms(e->args[1], e->op == static_cast<int>(BinOp::Sub) ? !negative : negative, out);
    return;
  }
  if (e->kind == ExprKind::Unary && e->op == static_cast<int>(UnaryOp::Neg)) {
    collect_terms(e->args[0], !negative, out);
    return;
  }
  out.emplace_back(negative, e);
}

}  // namespace

std::vector<std::pair<bool, Expr>> additive_terms(const Expr& e) {
  std::vector<std::pair<bool, Expr>> out;
  collect_terms(e, false, out);
  return out;
}

Expr range_extent(const RangeDim& d) {
  Expr len = make_binary(BinOp::Add, make_binary(BinOp::Sub, d.end, d.start), make_int(1));
  if (as_constant(d.step) != 1)
    len = make_binary(BinOp::FloorDiv, make_binary(BinOp::Add, len, make_binary(BinOp::Sub, d.step, make_int(1))),
                      d.step);
  return simplify(len);
}

std::vector<std::size_t> moved_dimensions(const Range& r) {
  std::vector<std::size_t> dims;
  for (std::size_t k = 0; k < r.size(); ++k)
    if (as_constant(range_extent(r[k])) != 1) dims.push_back(k);
  return dims;
}

EdgeSubsets edge_subsets(const SDFG& sdfg, const Block& st, const DataEdge& e) {
  EdgeSubsets out;
  const Memlet& m = e.memlet;
  int n = static_cast<int>(st.nodes.size());
  if (m.data.empty() || e.src < 0 || e.src >= n || e.dst < 0 || e.dst >= n) return out;
  PathEnds ends = memlet_path_ends(st, e);
  const Node& first = st.node(ends.src);
  const Node& last = st.node(ends.dst);
  if (first.kind == NodeKind::Access) out.src_data = first.data;
  if (last.kind == NodeKind::Access) out.dst_data = last.data;
  bool at_src = out.src_data == m.data, at_dst = out.dst_data == m.data;
  out.data_is_src = at_src && at_dst ? m.is_data_src : at_src;
  if (!at_src && !at_dst && (!out.src_data.empty() || !out.dst_data.empty())) {
    out.error =
        fmt::format("the memlet names \"{}\", but its path runs from {} to {}", m.data,
                    out.src_data.empty() ? "a " + std::string(first.kind == NodeKind::Tasklet ? "tasklet" : "node")
                                         : "\"" + out.src_data + "\"",
                    out.dst_data.empty() ? "a " + std::string(last.kind == NodeKind::Tasklet ? "tasklet" : "node")
                                         : "\"" + out.dst_data + "\"");
    return out;
  }
  const DataDesc* named = sdfg.find_data(m.data);
  Range main = m.subset ? *m.subset : (named ? full_range(*named) : Range{});
  const std::string& other_data = out.data_is_src ? out.dst_data : out.src_data;
  Range other;
  if (m.other_subset) {
    other = *m.other_subset;
  } else if (!other_data.empty()) {
    // DaCe copies without other_subset start the other side at index 0 with the copy's extents.
    const DataDesc* od = sdfg.find_data(other_data);
    std::vector<Expr> extents;
    for (auto& d : main) extents.push_back(range_extent(d));
    if (od && od->shape.size() == main.size()) {
      for (auto& x : extents)
        other.push_back({make_int(0), simplify(make_binary(BinOp::Sub, x, make_int(1))), make_int(1), make_int(1)});
    } else if (od) {
      // Ranks differ: pair the dimensions of extent other than 1, in order.
      std::vector<Expr> moving;
      for (auto& x : extents)
        if (as_constant(x) != 1) moving.push_back(x);
      std::size_t k = 0;
      for (auto& s : od->shape) {
        bool unit = as_constant(simplify(s)) == 1;
        Expr x = unit || k >= moving.size() ? make_int(1) : moving[k++];
        other.push_back({make_int(0), simplify(make_binary(BinOp::Sub, x, make_int(1))), make_int(1), make_int(1)});
      }
      if (k != moving.size())
        out.error = fmt::format(
            "cannot pair the {} dimension(s) the memlet moves in \"{}\" with the {} dimension(s) of \"{}\"; give "
            "other_subset",
            moving.size(), m.data, od->shape.size(), other_data);
    }
  }
  out.src = out.data_is_src ? main : other;
  out.dst = out.data_is_src ? other : main;
  return out;
}

bool single_element(const Range& r) {
  for (auto& d : r)
    if (!equal(simplify(d.start), simplify(d.end))) return false;
  return true;
}

}  // namespace sdfc
