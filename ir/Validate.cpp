#include "ir/Validate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <unordered_map>

#include "ir/Memlets.h"
#include "ir/Signature.h"
#include "lang/CodeWriter.h"

namespace sdfc {
namespace {

class Validator {
 public:
  Validator(std::string file) : file_(std::move(file)) {}
  std::vector<Diagnostic> diags;

  void sdfg(const SDFG& s, const std::string& ptr) {
    // Lookups by name go through a hash map: files with thousands of containers stay linear.
    std::unordered_map<std::string, const DataDesc*> saved;
    saved.swap(data_);
    for (auto& [n, d] : s.arrays) data_.emplace(n, &d);
    sdfg_body(s, ptr);
    data_.swap(saved);
  }

 private:
  std::unordered_map<std::string, const DataDesc*> data_;

  std::set<std::string> defined_;                     ///< names the SDFG being validated defines (sdfg_body)
  std::map<std::string, DType> non_integer_symbols_;  ///< its float (and other non-integer) symbols
  std::string sdfg_ptr_;                              ///< the JSON pointer of the SDFG being validated ("" = the root)

  /// A node as messages name it: its label, or for an access node without one its data.
  static const std::string& node_name(const Node& n) {
    return n.label.empty() && n.kind == NodeKind::Access ? n.data : n.label;
  }

  static std::string blocks(int n) { return fmt::format("{} block{}", n, n == 1 ? "" : "s"); }

  /// Reports each free symbol of `e` that is neither defined by the SDFG nor in `scope` (map
  /// parameters and dynamic range inputs around it).
  /// undefined_symbols of Python code text (a condition or an assignment); text that does not
  /// parse is the reader's business, not repeated here.
  void code_symbols(const std::string& code, const std::string& ptr, const std::string& what) {
    Expr e;
    try {
      e = parse_expr(code, Dialect::Plain);
    } catch (const ExprSyntaxError&) {
      return;
    }
    undefined_symbols(e, {}, ptr, what);
  }

  /// code_symbols of the value of an assignment statement `NAME = VALUE` (a loop's init and
  /// update statements; the target is the loop variable, defined by the loop).
  void statement_symbols(const std::string& code, const std::string& ptr, const std::string& what) {
    std::string target, value;
    if (split_assignment(code, target, value)) code_symbols(value, ptr, what);
  }

  void undefined_symbols(const Expr& e, const std::set<std::string>& scope, const std::string& ptr,
                         const std::string& what, bool integer_only = false) {
    // Python and sympy names a condition may use without declaring them.
    static const std::set<std::string> builtins = {"True", "False", "None", "pi",  "e",   "E",
                                                   "inf",  "nan",   "oo",   "zoo", "math"};
    std::set<std::string> free;
    free_symbols(e, free);
    for (auto& n : free) {
      // A symbol, container or map parameter of that name shadows the built-in constant.
      bool declared = defined_.count(n) || scope.count(n);
      if (integer_only && !declared && builtins.count(n) && n != "True" && n != "False") {
        error(ptr, fmt::format("{} uses \"{}\", which is not an integer; subsets index elements", what, n));
        continue;
      }
      if (integer_only && !scope.count(n)) {
        auto t = non_integer_symbols_.find(n);
        if (t != non_integer_symbols_.end()) {
          error(ptr, fmt::format("{} uses symbol \"{}\" of type {}; sizes, ranges and subsets need integer symbols: "
                                 "declare it with an integer type",
                                 what, n, to_string(t->second)));
          continue;
        }
      }
      if (!defined_.count(n) && !scope.count(n) && !builtins.count(n) && n.find('.') == std::string::npos)
        error(ptr,
              fmt::format(
                  "undefined symbol \"{}\" in {}; declare it in the SDFG's symbols, assign it on an interstate edge, "
                  "or (inside a map) make it a map parameter",
                  n, what));
    }
  }

  /// The map parameters and dynamic range inputs of map entry `m` and the maps around it.
  static std::set<std::string> scope_symbols(const Block& st, int m) {
    std::set<std::string> scope;
    int n = static_cast<int>(st.nodes.size());
    for (int hops = 0; m >= 0 && m < n && hops <= n; m = st.node(m).scope_entry, ++hops) {
      const Node& mn = st.node(m);
      if (mn.kind != NodeKind::MapEntry) break;
      scope.insert(mn.map.params.begin(), mn.map.params.end());
      for (auto& c : mn.in_connectors)
        if (is_dynamic_range_input(c.name)) scope.insert(c.name);
    }
    return scope;
  }

  /// The innermost map an edge lies in (-1: the state itself): inside a map entry's scope after the
  /// entry, outside a map after its exit.
  static int edge_scope(const Block& st, const DataEdge& e) {
    const Node& src = st.node(e.src);
    if (src.kind == NodeKind::MapEntry) return e.src;
    int n = static_cast<int>(st.nodes.size());
    if (src.kind == NodeKind::MapExit)
      return src.scope_entry >= 0 && src.scope_entry < n ? st.node(src.scope_entry).scope_entry : -1;
    return src.scope_entry;
  }

  const DataDesc* find_data(const std::string& n) const {
    auto it = data_.find(n);
    return it == data_.end() ? nullptr : it->second;
  }

  /// DaCe's validate_name: an identifier of letters, digits and '_', not True, False or None.
  static bool valid_name(const std::string& n) {
    if (n.empty() || n == "True" || n == "False" || n == "None") return false;
    if (std::isdigit(static_cast<unsigned char>(n[0]))) return false;
    return std::all_of(n.begin(), n.end(),
                       [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; });
  }

  /// `A.x`, `A.x.y`: a member of the structure container named by what precedes the last dot.
  static bool member_name(const SDFG& s, const std::string& n) {
    auto dot = n.rfind('.');
    if (dot == std::string::npos || !valid_name(n.substr(dot + 1))) return false;
    const DataDesc* parent = s.find_data(n.substr(0, dot));
    return parent && parent->structure;
  }

  void sdfg_body(const SDFG& s, const std::string& ptr) {
    if (!valid_name(s.name))
      error(ptr + "/attributes/name",
            fmt::format("the SDFG name \"{}\" is not a valid name; expected letters, digits and '_', "
                        "not starting with a digit (as DaCe requires)",
                        s.name));
    std::set<std::string> names;
    std::map<std::string, std::string> by_cpp_name;
    for (auto& [n, d] : s.arrays) {
      std::string p = ptr + "/attributes/_arrays/" + pointer_token(n);
      if (!valid_name(n) && !member_name(s, n))
        error(p, fmt::format(
                     "data container name \"{}\" is not a valid name; expected letters, digits and '_', not starting "
                     "with a digit (as DaCe requires)",
                     n));
      if (!names.insert(n).second) error(p, fmt::format("two data containers are named \"{}\"; rename one of them", n));
      // A structure's member `A.x` is `A_x` in C++: no other container may have that name.
      auto [other, fresh] = by_cpp_name.emplace(ident(n), n);
      if (!fresh && other->second != n)
        error(p, fmt::format("data containers \"{}\" and \"{}\" have the same C++ name \"{}\" (a structure's members "
                             "are named <structure>_<member> there); rename one of them",
                             other->second, n, ident(n)));
      data_desc(n, d, p);
    }
    std::set<std::string> syms;
    for (auto& [n, t] : s.symbols)
      if (!syms.insert(n).second)
        error(ptr + "/attributes/symbols/" + pointer_token(n), fmt::format("symbol \"{}\" is declared twice", n));
    for (auto& [n, cb] : s.callbacks)
      if (!syms.insert(n).second)
        error(ptr + "/attributes/symbols/" + pointer_token(n), fmt::format("symbol \"{}\" is declared twice", n));
    // Names an expression of this SDFG may use: its symbols, its containers, and the symbols its
    // interstate edges assign and its loops count with (anywhere: DaCe orders them by the
    // control flow, which a file that compiles respects).
    std::set<std::string> saved_defined;
    saved_defined.swap(defined_);
    std::map<std::string, DType> saved_non_integer;
    saved_non_integer.swap(non_integer_symbols_);
    for (auto& [n, t] : s.symbols)
      if (!is_integer(t) && t != DType::Bool) non_integer_symbols_[n] = t;
    std::string saved_ptr = sdfg_ptr_;
    sdfg_ptr_ = ptr;
    for (auto& [n, t] : s.symbols) defined_.insert(n);
    for (auto& [n, cb] : s.callbacks) defined_.insert(n);
    for (auto& [n, d] : s.arrays) defined_.insert(n);
    for (auto& n : assigned_symbols(s)) defined_.insert(n);
    for (auto& [n, d] : s.arrays) {
      std::string p = ptr + "/attributes/_arrays/" + pointer_token(n) + "/attributes/shape/";
      for (std::size_t i = 0; i < d.shape.size(); ++i)
        undefined_symbols(d.shape[i], {}, p + std::to_string(i), "the shape of \"" + n + "\"", true);
      std::string ap = ptr + "/attributes/_arrays/" + pointer_token(n) + "/attributes/";
      for (std::size_t i = 0; i < d.strides.size(); ++i)
        undefined_symbols(d.strides[i], {}, ap + "strides/" + std::to_string(i), "the strides of \"" + n + "\"", true);
      for (std::size_t i = 0; i < d.offset.size(); ++i)
        undefined_symbols(d.offset[i], {}, ap + "offset/" + std::to_string(i), "the offset of \"" + n + "\"", true);
    }
    region(s, s.root, ptr);
    defined_.swap(saved_defined);
    non_integer_symbols_.swap(saved_non_integer);
    sdfg_ptr_ = saved_ptr;
  }

  std::string file_;
  std::map<std::pair<const ExprNode*, const ExprNode*>, std::optional<std::int64_t>> excess_memo_;

  void error(const std::string& ptr, std::string msg) { diags.push_back(Diagnostic{file_, ptr, 0, 0, std::move(msg)}); }

  void data_desc(const std::string& name, const DataDesc& d, const std::string& ptr) {
    std::string ap = ptr + "/attributes";
    for (std::size_t i = 0; i < d.shape.size(); ++i) {
      auto c = as_constant(d.shape[i]);
      if (c && *c < 0)
        error(ap + "/shape/" + std::to_string(i),
              fmt::format("data \"{}\" has a negative extent {} in dimension {}", name, *c, i));
    }
    if (d.kind == DataKind::Scalar && (d.shape.size() != 1 || as_constant(d.shape[0]) != 1))
      error(ap + "/shape", fmt::format("scalar \"{}\" must have shape [1]", name));
  }

  void region(const SDFG& s, const Block& r, const std::string& ptr) {
    int n = static_cast<int>(r.blocks.size());
    if (r.start_block >= n || (n > 0 && r.start_block < -1))
      error(ptr + "/start_block",
            fmt::format("start block {} does not exist; the region has {}", r.start_block, blocks(n)));
    for (std::size_t i = 0; i < r.cf_edges.size(); ++i) {
      const auto& e = r.cf_edges[i];
      std::string ep = ptr + "/edges/" + std::to_string(i);
      if (e.src >= n)
        error(ep + "/src", fmt::format("interstate edge starts at block {}, which does not exist (the region has {})",
                                       e.src, blocks(n)));
      if (e.dst >= n)
        error(ep + "/dst", fmt::format("interstate edge leads to block {}, which does not exist (the region has {})",
                                       e.dst, blocks(n)));
      std::set<std::string> seen;
      for (auto& [sym, val] : e.assignments) {
        std::string ap = ep + "/attributes/data/attributes/assignments/" + pointer_token(sym);
        if (find_data(sym))
          error(ap, fmt::format("interstate edge assigns to \"{}\", which is a data container, not a symbol", sym));
        code_symbols(val, ap, fmt::format("the value assigned to \"{}\"", sym));
      }
      code_symbols(e.condition.code, ep + "/attributes/data/attributes/condition", "the interstate edge's condition");
    }
    for (std::size_t i = 0; i < r.blocks.size(); ++i) block(s, *r.blocks[i], ptr + "/nodes/" + std::to_string(i));
  }

  void block(const SDFG& s, const Block& b, const std::string& ptr) {
    switch (b.kind) {
      case BlockKind::State:
        state(s, b, ptr);
        break;
      case BlockKind::Region:
        region(s, b, ptr);
        break;
      case BlockKind::Loop: {
        std::string ap = ptr + "/attributes/";
        std::string what = fmt::format("of loop \"{}\"", b.label);
        code_symbols(b.loop_condition.code, ap + "loop_condition/string_data", "the condition " + what);
        if (b.init_statement)
          statement_symbols(b.init_statement->code, ap + "init_statement/string_data", "the init statement " + what);
        if (b.update_statement)
          statement_symbols(b.update_statement->code, ap + "update_statement/string_data",
                            "the update statement " + what);
        region(s, b, ptr);
        break;
      }
      case BlockKind::Conditional:
        for (std::size_t i = 0; i < b.branches.size(); ++i) {
          std::string bp = ptr + "/branches/" + std::to_string(i);
          if (b.branches[i].first)
            code_symbols(b.branches[i].first->code, bp + "/0/string_data",
                         fmt::format("the condition of branch {} of conditional \"{}\"", i, b.label));
          if (!b.branches[i].first && i + 1 != b.branches.size())
            error(bp + "/0", "an else branch (null condition) must be the last branch of a conditional");
          region(s, *b.branches[i].second, bp + "/1");
        }
        break;
      default:
        break;
    }
  }

  static bool has_connectors(const Node& n) { return n.kind != NodeKind::Access; }

  void state(const SDFG& s, const Block& st, const std::string& ptr) {
    int n = static_cast<int>(st.nodes.size());
    auto node_ptr = [&](int i) { return ptr + "/nodes/" + std::to_string(i); };
    // Nodes
    for (int i = 0; i < n; ++i) {
      const Node& nd = st.node(i);
      std::string np = node_ptr(i);
      if (nd.kind == NodeKind::Access && !find_data(nd.data))
        error(np + "/attributes/data",
              fmt::format("access node refers to unknown data \"{}\"; declare it in {}/attributes/_arrays", nd.data,
                          sdfg_ptr_));
      if (const DataDesc* d = nd.kind == NodeKind::Access ? find_data(nd.data) : nullptr; d && !d->constant.is_null())
        for (auto& e : st.edges)
          if (e.dst == i && !e.memlet.data.empty())
            error(np, fmt::format("the program writes constant \"{}\" (one of the SDFG's constants_prop); "
                                  "constants are read only: copy it into a transient to change it",
                                  nd.data));
      if (nd.kind == NodeKind::MapExit) {
        if (nd.scope_entry < 0 || nd.scope_entry >= n || st.node(nd.scope_entry).kind != NodeKind::MapEntry)
          error(np + "/scope_entry", fmt::format("map exit \"{}\" has no matching map entry", nd.label));
        else if (st.node(nd.scope_entry).scope_exit != i)
          error(np + "/scope_entry", fmt::format("map exit \"{}\" names entry {}, but that entry's exit is {}",
                                                 nd.label, nd.scope_entry, st.node(nd.scope_entry).scope_exit));
      } else if (nd.scope_entry >= 0 && (nd.scope_entry >= n || st.node(nd.scope_entry).kind != NodeKind::MapEntry)) {
        error(np + "/scope_entry",
              fmt::format("node \"{}\" is placed in scope {}, which is not a map entry", nd.label, nd.scope_entry));
      }
      if (nd.kind == NodeKind::MapEntry) {
        if (nd.scope_exit < 0 || nd.scope_exit >= n || st.node(nd.scope_exit).kind != NodeKind::MapExit)
          error(np + "/scope_exit", fmt::format("map entry \"{}\" has no matching map exit", nd.label));
        std::set<std::string> ps;
        for (auto& p : nd.map.params)
          if (!ps.insert(p).second)
            error(np + "/attributes/params", fmt::format("map parameter \"{}\" appears twice", p));
        // Its range may use the parameters and dynamic range inputs of the maps around it (and
        // its own dynamic inputs).
        std::set<std::string> scope;
        int hops = 0;
        for (int m = i; m >= 0 && m < n && hops <= n; m = st.node(m).scope_entry, ++hops) {
          const Node& mn = st.node(m);
          if (mn.kind != NodeKind::MapEntry) break;
          if (m != i) scope.insert(mn.map.params.begin(), mn.map.params.end());
          for (auto& c : mn.in_connectors)
            if (is_dynamic_range_input(c.name)) scope.insert(c.name);
        }
        for (std::size_t k = 0; k < nd.map.range.size(); ++k) {
          std::string rp = np + "/attributes/range/ranges/" + std::to_string(k);
          const RangeDim& r = nd.map.range[k];
          std::string what = fmt::format("the range of map \"{}\"", nd.map.label);
          // and the parameters before its own (DaCe runs them as nested loops, outermost first:
          // its GPU reductions make such maps; legalize refuses them where sdfc does not)
          if (k > 0) scope.insert(nd.map.params[k - 1]);
          undefined_symbols(r.start, scope, rp + "/start", what, true);
          undefined_symbols(r.end, scope, rp + "/end", what, true);
          undefined_symbols(r.step, scope, rp + "/step", what, true);
        }
        for (std::size_t d = 0; d < nd.map.range.size(); ++d) {
          auto step = as_constant(nd.map.range[d].step);
          if (step && *step == 0)
            error(np + "/attributes/range/ranges/" + std::to_string(d) + "/step", "map range step is zero");
        }
      }
      if (nd.kind == NodeKind::NestedSDFG) nested(s, nd, np);
    }
    // Edges
    std::map<std::pair<int, std::string>, const DataEdge*> outer_passages;  // (scope node, IN_x / OUT_x)
    for (auto& e : st.edges) {
      if (e.dst >= 0 && e.dst < n && e.dst_conn && st.node(e.dst).kind == NodeKind::MapEntry)
        outer_passages[{e.dst, *e.dst_conn}] = &e;
      if (e.src >= 0 && e.src < n && e.src_conn && st.node(e.src).kind == NodeKind::MapExit)
        outer_passages[{e.src, *e.src_conn}] = &e;
    }
    std::vector<std::vector<int>> succ(static_cast<std::size_t>(n));
    std::map<std::pair<int, std::string>, int> in_uses, out_uses;
    for (std::size_t i = 0; i < st.edges.size(); ++i) {
      const DataEdge& e = st.edges[i];
      std::string ep = ptr + "/edges/" + std::to_string(i);
      bool ok = true;
      if (e.src < 0 || e.src >= n) {
        error(ep + "/src",
              fmt::format("edge starts at node {}, which does not exist (the state has {} nodes)", e.src, n));
        ok = false;
      }
      if (e.dst < 0 || e.dst >= n) {
        error(ep + "/dst",
              fmt::format("edge ends at node {}, which does not exist (the state has {} nodes)", e.dst, n));
        ok = false;
      }
      std::string mp = ep + "/attributes/data/attributes";
      const DataDesc* desc = nullptr;
      if (!e.memlet.data.empty()) {
        desc = find_data(e.memlet.data);
        if (!desc)
          error(mp + "/data", fmt::format("memlet refers to unknown data \"{}\"; declare it in {}/attributes/_arrays",
                                          e.memlet.data, sdfg_ptr_));
      }
      // Count connector uses at the valid end of a dangling edge too, so that one broken end
      // is reported once, not again as an unconnected connector.
      if (e.src >= 0 && e.src < n && e.src_conn) out_uses[{e.src, *e.src_conn}]++;
      if (e.dst >= 0 && e.dst < n && e.dst_conn) in_uses[{e.dst, *e.dst_conn}]++;
      if (!ok) continue;
      scope_agrees(st, e, ep);
      succ[static_cast<std::size_t>(e.src)].push_back(e.dst);
      const Node& src = st.node(e.src);
      const Node& dst = st.node(e.dst);
      if (e.src_conn) {
        if (!src.find_out(*e.src_conn) && has_connectors(src))
          error(ep + "/src_connector",
                fmt::format("edge leaves connector \"{}\", which node {} (\"{}\") does not declare", *e.src_conn, e.src,
                            src.label));
      } else if (src.kind == NodeKind::Tasklet || src.kind == NodeKind::NestedSDFG) {
        if (!e.memlet.data.empty())
          error(ep + "/src_connector",
                fmt::format("edge leaves {} \"{}\" without a connector",
                            src.kind == NodeKind::Tasklet ? "tasklet" : "nested SDFG", src.label));
      }
      if (e.dst_conn) {
        if (!dst.find_in(*e.dst_conn) && has_connectors(dst))
          error(ep + "/dst_connector",
                fmt::format("edge enters connector \"{}\", which node {} (\"{}\") does not declare", *e.dst_conn, e.dst,
                            dst.label));
      } else if (dst.kind == NodeKind::Tasklet || dst.kind == NodeKind::NestedSDFG) {
        if (!e.memlet.data.empty())
          error(ep + "/dst_connector",
                fmt::format("edge enters {} \"{}\" without a connector",
                            dst.kind == NodeKind::Tasklet ? "tasklet" : "nested SDFG", dst.label));
      }
      // Data passed to a nested SDFG is passed by pointer: the element types must agree.
      for (auto [node, conn, key] :
           {std::tuple{&dst, &e.dst_conn, "dst_connector"}, {&src, &e.src_conn, "src_connector"}}) {
        if (node->kind != NodeKind::NestedSDFG || !*conn || !desc || !node->sdfg) continue;
        const DataDesc* inner = node->sdfg->find_data(**conn);
        if (inner && inner->dtype != desc->dtype)
          error(ep + "/" + key,
                fmt::format("connector \"{}\" of nested SDFG \"{}\" is {} inside, but the memlet's data \"{}\" is {}; "
                            "nested SDFGs receive pointers, so the element types must match",
                            **conn, node->sdfg->name, to_string(inner->dtype), e.memlet.data, to_string(desc->dtype)));
      }
      // Symbols in subsets: those of the SDFG and the map parameters around the edge.
      {
        std::set<std::string> scope = scope_symbols(st, edge_scope(st, e));
        // a nested SDFG's own symbols on its memlet path, which normalize maps (DaCe leaves them)
        if (auto* mapping = path_nested_symbol_mapping(st, e))
          for (auto& [inner, outer] : *mapping) scope.insert(inner);
        std::string what = fmt::format("the memlet of \"{}\"", e.memlet.data);
        auto check_range = [&](const Range& r, const std::string& rp) {
          for (std::size_t k = 0; k < r.size(); ++k) {
            std::string dp = rp + "/ranges/" + std::to_string(k);
            undefined_symbols(r[k].start, scope, dp + "/start", what, true);
            undefined_symbols(r[k].end, scope, dp + "/end", what, true);
            undefined_symbols(r[k].step, scope, dp + "/step", what, true);
          }
        };
        if (e.memlet.subset) check_range(*e.memlet.subset, mp + "/subset");
        if (e.memlet.other_subset) check_range(*e.memlet.other_subset, mp + "/other_subset");
      }
      // DaCe skips its bounds check for memlets marked allow_oob.
      auto oob = e.memlet.extra.find("allow_oob");
      bool allow_oob = oob != e.memlet.extra.end() && oob->is_boolean() && oob->get<bool>();
      if (desc && e.memlet.subset && !allow_oob) {
        bounds(*desc, e.memlet.data, *e.memlet.subset, mp + "/subset");
      }
      covered(st, e, outer_passages, mp + "/subset");
      if (e.memlet.other_subset && !allow_oob) {
        // The other subset indexes the container at the other end of the memlet's path.
        EdgeSubsets ends = edge_subsets(s, st, e);
        const std::string& other = ends.data_is_src ? ends.dst_data : ends.src_data;
        if (ends.error.empty() && !other.empty())
          if (const DataDesc* od = find_data(other)) bounds(*od, other, *e.memlet.other_subset, mp + "/other_subset");
      }
    }
    // Connectors without edges
    for (int i = 0; i < n; ++i) {
      const Node& nd = st.node(i);
      if (!has_connectors(nd)) continue;
      for (std::size_t c = 0; c < nd.in_connectors.size(); ++c)
        if (!in_uses.count({i, nd.in_connectors[c].name}))
          error(
              node_ptr(i) + "/attributes/in_connectors/" + pointer_token(nd.in_connectors[c].name),
              fmt::format("input connector \"{}\" of \"{}\" has no incoming edge", nd.in_connectors[c].name, nd.label));
      for (std::size_t c = 0; c < nd.out_connectors.size(); ++c)
        if (!out_uses.count({i, nd.out_connectors[c].name}))
          error(node_ptr(i) + "/attributes/out_connectors/" + pointer_token(nd.out_connectors[c].name),
                fmt::format("output connector \"{}\" of \"{}\" has no outgoing edge", nd.out_connectors[c].name,
                            nd.label));
    }
    cycles(st, succ, ptr);
  }

  /// The scope an edge leaves `src` into (a map entry: its own map; a map exit: the map around
  /// its map; any other node: its own scope) must be the scope of `dst` (`scope_entry`; a map
  /// exit's is its own entry), as DaCe derives scopes from the edges. Nothing when a scope field
  /// is out of range (reported with the nodes).
  void scope_agrees(const Block& st, const DataEdge& e, const std::string& ep) {
    int n = static_cast<int>(st.nodes.size());
    auto valid = [&](int k) { return k >= -1 && k < n; };
    const Node& src = st.node(e.src);
    const Node& dst = st.node(e.dst);
    int out = src.scope_entry;
    if (src.kind == NodeKind::MapEntry) out = e.src;
    if (src.kind == NodeKind::MapExit) {
      if (src.scope_entry < 0 || src.scope_entry >= n) return;
      out = st.node(src.scope_entry).scope_entry;
    }
    if (!valid(out) || !valid(dst.scope_entry) || out == dst.scope_entry) return;
    auto where = [&](int k) {
      return k < 0 ? std::string("outside any map") : fmt::format("in map \"{}\" (node {})", st.node(k).label, k);
    };
    error(ep, fmt::format("edge from {} \"{}\" to {} \"{}\" crosses a scope boundary: it leaves the first {}, but "
                          "the second is {}; a node's scope_entry must follow its edges (into a map only through its "
                          "entry, out of it only through its exit)",
                          to_string(src.kind), node_name(src), to_string(dst.kind), node_name(dst), where(out),
                          where(dst.scope_entry)));
  }

  /// An edge inside a map scope (out of its entry's OUT_x, into its exit's IN_x) must lie within
  /// the memlet outside (into IN_x, out of OUT_x) over the whole map range: passes order the GPU
  /// work of a scope by its outer memlets (DaCe propagates them). Checked per dimension where the
  /// inner index is the map parameter plus a constant (or free of the map's parameters) and the
  /// excess is a constant.
  void covered(const Block& st, const DataEdge& e, const std::map<std::pair<int, std::string>, const DataEdge*>& outer,
               const std::string& ptr) {
    int scope = -1;
    std::string conn;
    if (st.node(e.src).kind == NodeKind::MapEntry && e.src_conn && e.src_conn->rfind("OUT_", 0) == 0) {
      scope = e.src;
      conn = "IN_" + e.src_conn->substr(4);
    } else if (st.node(e.dst).kind == NodeKind::MapExit && e.dst_conn && e.dst_conn->rfind("IN_", 0) == 0) {
      scope = e.dst;
      conn = "OUT_" + e.dst_conn->substr(3);
    } else {
      return;
    }
    auto it = outer.find({scope, conn});
    int entry = st.node(scope).kind == NodeKind::MapEntry ? scope : st.node(scope).scope_entry;
    if (it == outer.end() || entry < 0 || entry >= static_cast<int>(st.nodes.size())) return;
    const Memlet &in = e.memlet, &out = it->second->memlet;
    if (in.data.empty() || in.data != out.data || !in.subset || !out.subset || in.other_subset || in.dynamic ||
        in.subset->size() != out.subset->size())
      return;
    const MapInfo& m = st.node(entry).map;
    if (m.range.size() != m.params.size()) return;
    std::set<std::string> params(m.params.begin(), m.params.end());
    std::map<std::string, Expr> lo, hi;
    for (std::size_t k = 0; k < m.params.size(); ++k) {
      const RangeDim& r = m.range[k];
      lo[m.params[k]] = r.start;
      // The last point the parameter takes: the range's end only where the step reaches it
      // (2:9:2 ends at 8; DaCe's slice A[2:10:2] is such a map).
      auto step = as_constant(r.step);
      hi[m.params[k]] =
          step && *step == 1
              ? r.end
              : make_binary(
                    BinOp::Add, r.start,
                    make_binary(BinOp::Mul,
                                make_binary(BinOp::FloorDiv, make_binary(BinOp::Sub, r.end, r.start), r.step), r.step));
    }
    for (std::size_t d = 0; d < in.subset->size(); ++d) {
      const RangeDim &i = (*in.subset)[d], &o = (*out.subset)[d];
      bool affine = shifted_parameter(i.start, params) && shifted_parameter(i.end, params);
      if (!affine) continue;
      auto below = as_constant(simplify(make_binary(BinOp::Sub, substitute(i.start, lo), o.start)));
      auto above = as_constant(simplify(make_binary(BinOp::Sub, substitute(i.end, hi), o.end)));
      if ((below && *below < 0) || (above && *above > 0))
        error(ptr, fmt::format("the memlet of \"{}\" inside map \"{}\" reaches [{}, {}] in dimension {} over the "
                               "map's range, outside the memlet on the scope's other side [{}, {}]; that memlet must "
                               "cover what the scope accesses (DaCe: propagate the memlets, "
                               "dace.sdfg.propagation.propagate_memlets_sdfg)",
                               in.data, m.label, print_expr(simplify(substitute(i.start, lo))),
                               print_expr(simplify(substitute(i.end, hi))), d, print_expr(o.start), print_expr(o.end)));
    }
  }

  void nested(const SDFG& outer, const Node& nd, const std::string& np) {
    (void)outer;
    const SDFG& inner = *nd.sdfg;
    auto check = [&](const std::vector<Connector>& cs, const char* key) {
      for (auto& c : cs) {
        const DataDesc* d = inner.find_data(c.name);
        if (!d)
          error(np + "/attributes/" + key + "/" + pointer_token(c.name),
                fmt::format("connector \"{}\" of nested SDFG \"{}\" names no data container of the nested SDFG", c.name,
                            inner.name));
        else if (d->transient)
          error(np + "/attributes/" + key + "/" + pointer_token(c.name),
                fmt::format("connector \"{}\" of nested SDFG \"{}\" names a transient of the nested SDFG", c.name,
                            inner.name));
      }
    };
    check(nd.in_connectors, "in_connectors");
    check(nd.out_connectors, "out_connectors");
    sdfg(inner, np + "/attributes/sdfg");
  }

  void bounds(const DataDesc& d, const std::string& name, const Range& r, const std::string& ptr) {
    if (r.size() != d.shape.size()) {
      // DaCe accepts a one-element subset for a scalar and for any one-element container.
      error(ptr, fmt::format("subset has {} dimensions but \"{}\" has {}", r.size(), name, d.shape.size()));
      return;
    }
    for (auto& o : d.offset)
      if (as_constant(o) != 0) return;  // logical indices are shifted; do not guess
    for (std::size_t i = 0; i < r.size(); ++i) {
      std::string dp = ptr + "/ranges/" + std::to_string(i);
      auto lo = as_constant(r[i].start);
      if (lo && *lo < 0) {
        error(dp + "/start",
              fmt::format("subset starts at {} in dimension {} of \"{}\", before its first element", *lo, i, name));
        continue;
      }
      // end <= shape - 1 must hold; a constant positive excess is provably out of bounds.
      // Expressions are shared (the reader interns them), so the answer is memoized per pair.
      auto key = std::make_pair(r[i].end.get(), d.shape[i].get());
      auto memo = excess_memo_.find(key);
      if (memo == excess_memo_.end())
        memo = excess_memo_
                   .emplace(key, as_constant(make_binary(BinOp::Sub, r[i].end,
                                                         make_binary(BinOp::Sub, d.shape[i], make_int(1)))))
                   .first;
      auto excess = memo->second;
      if (excess && *excess > 0)
        error(dp + "/end", fmt::format("subset ends at {} in dimension {} of \"{}\", {} past its last index {}",
                                       print_expr(simplify(r[i].end)), i, name, *excess,
                                       print_expr(simplify(make_binary(BinOp::Sub, d.shape[i], make_int(1))))));
    }
  }

  void cycles(const Block& st, const std::vector<std::vector<int>>& succ, const std::string& ptr) {
    // Kahn's algorithm: nodes left over lie on or behind a cycle.
    std::size_t n = succ.size();
    std::vector<int> indeg(n, 0);
    for (auto& s : succ)
      for (int d : s) indeg[static_cast<std::size_t>(d)]++;
    std::vector<int> work;
    for (std::size_t i = 0; i < n; ++i)
      if (indeg[i] == 0) work.push_back(static_cast<int>(i));
    std::size_t done = 0;
    while (!work.empty()) {
      int v = work.back();
      work.pop_back();
      ++done;
      for (int d : succ[static_cast<std::size_t>(v)])
        if (--indeg[static_cast<std::size_t>(d)] == 0) work.push_back(d);
    }
    if (done == n) return;
    for (std::size_t i = 0; i < n; ++i)
      if (indeg[i] > 0) {
        error(ptr + "/nodes/" + std::to_string(i),
              fmt::format("state \"{}\" has a cycle through node {} (\"{}\"); dataflow inside a state must be acyclic",
                          st.label, i, node_name(st.node(static_cast<int>(i)))));
        return;
      }
  }
};

}  // namespace

std::vector<Diagnostic> validate(const SDFG& sdfg, const std::string& file_name) {
  Validator v(file_name);
  v.sdfg(sdfg, "");
  return v.diags;
}

}  // namespace sdfc
