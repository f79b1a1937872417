#include "passes/FoldViews.h"

#include <fmt/format.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/Diagnostic.h"
#include "ir/Memlets.h"
#include "ir/Walk.h"

namespace sdfc {
namespace {

[[noreturn]] void refuse(const std::string& ptr, const std::string& what) {
  throw UserError(Diagnostic{"", ptr, 0, 0, what});
}

Expr add(const Expr& a, const Expr& b) {
  return make_binary(BinOp::Add, a, b);
}
Expr mul(const Expr& a, const Expr& b) {
  return make_binary(BinOp::Mul, a, b);
}
RangeDim single(const Expr& x) {
  Expr s = simplify(x);
  return {s, s, make_int(1), make_int(1)};
}

/// What a range of a view is used for (ViewMap::map).
enum class RangeUse {
  Element,        ///< one element (a tasklet's connector)
  StartAndBound,  ///< only its start and a bound: nested SDFG arguments, the outer memlets of a scope,
                  ///< a C++ tasklet's pointer connector
  CopySide,       ///< one side of a copy between two containers
};

/// How coordinates of one view node become coordinates of the container it views.
class ViewMap {
 public:
  ViewMap(const std::string& view, const DataDesc& v, const std::string& container, const DataDesc& c, Range viewed,
          const std::string& ptr)
      : view_(view), v_(v), container_(container), c_(c), viewed_(std::move(viewed)), ptr_(ptr) {
    if (viewed_.size() != c_.shape.size())
      refuse(ptr_, fmt::format("view \"{}\" views {} dimension(s) of \"{}\", which has {}", view_, viewed_.size(),
                               container_, c_.shape.size()));
    dim_of_ = pair_dimensions();
    linear_ = !dim_of_;
    int last = -1;
    for (int d : dim_of_.value_or(std::vector<int>{})) {
      if (d < 0) continue;
      monotone_ = monotone_ && d > last;
      last = d;
    }
    if (linear_ && !contiguous(c_))
      refuse(ptr_, fmt::format("view \"{}\" reshapes \"{}\", whose strides [{}] are not C-contiguous: its elements "
                               "cannot be addressed as elements of \"{}\"",
                               view_, container_, joined(c_.strides), container_));
  }

  const std::string& container() const { return container_; }
  const Range& viewed() const { return viewed_; }
  bool linear() const { return linear_; }

  /// `r` (in the view's coordinates) in the container's coordinates. `use`: what the range is
  /// for: one element, a range that only needs its start and a bound (nested SDFG arguments, scope
  /// memlets), or one side of a copy between containers.
  Range map(const Range& r, RangeUse use, const std::string& where) const {
    const bool whole_ok = use == RangeUse::StartAndBound;
    if (r.size() != v_.shape.size())
      refuse(where, fmt::format("subset of view \"{}\" has {} dimension(s), the view has {}", view_, r.size(),
                                v_.shape.size()));
    int moving = 0;
    for (auto& d : r) moving += same_value(d.start, d.end) ? 0 : 1;
    if (!linear_ && !monotone_ && moving > 1 && !whole_ok)
      refuse(where, fmt::format("view \"{}\" orders the dimensions of \"{}\" differently (a transposing view); a "
                                "part of it that moves in several dimensions can only be passed to a nested SDFG",
                                view_, container_));
    if (!linear_) {
      Range out;
      for (std::size_t d = 0; d < viewed_.size(); ++d) out.push_back(single(viewed_[d].start));
      for (std::size_t j = 0; j < r.size(); ++j) {
        int d = (*dim_of_)[j];
        if (d < 0) continue;
        const RangeDim& base = viewed_[static_cast<std::size_t>(d)];
        auto at = [&](const Expr& k) { return simplify(add(base.start, mul(base.step, add(k, v_.offset[j])))); };
        out[static_cast<std::size_t>(d)] = {at(r[j].start), at(r[j].end), simplify(mul(base.step, r[j].step)),
                                            r[j].tile};
      }
      return out;
    }
    bool one = true;
    for (auto& d : r) one = one && same_value(d.start, d.end);
    if (one) {
      std::vector<Expr> k;
      for (auto& d : r) k.push_back(d.start);
      return element(k);
    }
    bool from_first = true;
    for (std::size_t j = 0; j < r.size(); ++j)
      from_first = from_first && same_value(add(r[j].start, v_.offset[j]), make_int(0));
    // A copy of the whole view is a copy of the viewed part of the container when that part is
    // one block of memory in C order: element k of the view is then its k-th element, as a
    // reshaping copy pairs them (emit_copy: both sides in C order).
    if (use == RangeUse::CopySide && from_first && whole_view(r) && contiguous(v_) && dense_viewed_part())
      return viewed_;
    if (!whole_ok || !from_first)
      refuse(where, fmt::format("view \"{}\" reshapes \"{}\"; a part of it that is not one element can only be "
                                "passed whole to a nested SDFG or a map, or copied whole where it views one "
                                "block of memory",
                                view_, container_));
    return viewed_;
  }

 private:
  std::string view_;
  const DataDesc& v_;
  std::string container_;
  const DataDesc& c_;
  Range viewed_;
  std::string ptr_;
  std::optional<std::vector<int>> dim_of_;  ///< view dimension -> container dimension (-1: extent 1, dropped)
  bool linear_ = false;
  bool monotone_ = true;  ///< the paired container dimensions keep the view's order

  static std::string joined(const std::vector<Expr>& xs) {
    std::string s;
    for (auto& x : xs) s += (s.empty() ? "" : ", ") + print_expr(simplify(x));
    return s;
  }
  /// `r` is every element of the view, in order.
  bool whole_view(const Range& r) const {
    for (std::size_t j = 0; j < r.size(); ++j)
      if (!same_value(r[j].step, make_int(1)) || !same_value(range_extent(r[j]), v_.shape[j])) return false;
    return true;
  }
  /// The viewed part is one block of the (C-contiguous) container's memory: after its first moved
  /// dimension (step 1) every dimension is whole.
  bool dense_viewed_part() const {
    bool moved = false;
    for (std::size_t d = 0; d < viewed_.size(); ++d) {
      if (!same_value(c_.offset[d], make_int(0))) return false;
      const RangeDim& x = viewed_[d];
      if (moved) {
        if (!same_value(x.start, make_int(0)) || !same_value(x.step, make_int(1)) ||
            !same_value(range_extent(x), c_.shape[d]))
          return false;
      } else if (!same_value(range_extent(x), make_int(1))) {
        if (!same_value(x.step, make_int(1))) return false;
        moved = true;
      }
    }
    return true;
  }
  static bool contiguous(const DataDesc& d) {
    auto c = c_order_strides(d.shape);
    for (std::size_t i = 0; i < c.size(); ++i)
      if (!same_value(c[i], d.strides[i])) return false;
    return true;
  }

  /// Each view dimension of extent other than 1 gets a distinct container dimension whose stride
  /// times the viewed subset's step is the view dimension's stride; those whose viewed range moves
  /// first. Nullopt when some dimension finds none.
  std::optional<std::vector<int>> pair_dimensions() const {
    std::vector<int> dim_of(v_.shape.size(), -1);
    std::vector<bool> used(c_.shape.size(), false);
    for (std::size_t j = 0; j < v_.shape.size(); ++j) {
      if (as_constant(v_.shape[j]) == 1) continue;
      int found = -1;
      for (int pass = 0; pass < 2 && found < 0; ++pass)
        for (std::size_t d = 0; d < c_.shape.size() && found < 0; ++d) {
          bool moving = !same_value(viewed_[d].start, viewed_[d].end);
          if (used[d] || (pass == 0 && !moving)) continue;
          if (same_value(mul(c_.strides[d], viewed_[d].step), v_.strides[j])) found = static_cast<int>(d);
        }
      if (found < 0) return std::nullopt;
      used[static_cast<std::size_t>(found)] = true;
      dim_of[j] = found;
    }
    return dim_of;
  }

  /// Element `k` of the view as an element of the (C-contiguous) container.
  Range element(const std::vector<Expr>& k) const {
    Expr lin = make_int(0);
    for (std::size_t d = 0; d < viewed_.size(); ++d)
      lin = add(lin, mul(add(viewed_[d].start, c_.offset[d]), c_.strides[d]));
    for (std::size_t j = 0; j < k.size(); ++j) lin = add(lin, mul(add(k[j], v_.offset[j]), v_.strides[j]));
    lin = simplify(lin);
    Range out;
    for (std::size_t d = 0; d < c_.shape.size(); ++d) {
      Expr idx = make_binary(BinOp::FloorDiv, lin, c_.strides[d]);
      if (d > 0) idx = make_binary(BinOp::Mod, idx, c_.shape[d]);
      out.push_back(single(make_binary(BinOp::Sub, idx, c_.offset[d])));
    }
    return out;
  }
};

class Folder {
 public:
  Folder(SDFG& sdfg, const std::string& ptr) : sdfg_(sdfg), ptr_(ptr) {}

  void run() {
    std::set<std::string> views;
    for (auto& [n, d] : sdfg_.arrays)
      if (d.view) views.insert(n);
    if (views.empty()) return;
    walk::for_each_state(sdfg_, ptr_, [&](Block& st, const std::string& sp) { state(st, sp, views); });
    walk::for_each_state(sdfg_, ptr_, [&](Block& st, const std::string& sp) {
      for (std::size_t i = 0; i < st.edges.size(); ++i)
        SDFC_ASSERT(!views.count(st.edges[i].memlet.data), "memlet through a view left: " + walk::edge_pointer(sp, i));
      for (auto& n : st.nodes) SDFC_ASSERT(n->kind != NodeKind::Access || !views.count(n->data), "view node left");
    });
    std::vector<std::pair<std::string, DataDesc>> kept;
    for (auto& a : sdfg_.arrays)
      if (!views.count(a.first)) kept.push_back(std::move(a));
    sdfg_.arrays = std::move(kept);
  }

 private:
  SDFG& sdfg_;
  std::string ptr_;

  void state(Block& st, const std::string& sp, const std::set<std::string>& views) {
    std::vector<int> pending;
    for (int i = 0; i < static_cast<int>(st.nodes.size()); ++i)
      if (st.node(i).kind == NodeKind::Access && views.count(st.node(i).data)) pending.push_back(i);
    while (!pending.empty()) {
      std::vector<int> later;
      for (int v : pending) {
        std::size_t e = viewed_edge(st, v, sp);
        const DataEdge& edge = st.edges[e];
        int other = edge.src == v ? edge.dst : edge.src;
        if (views.count(st.node(other).data))
          later.push_back(v);  // a view of a view: the inner view folds first
        else
          fold(st, v, e, sp);
      }
      if (later.size() == pending.size())
        refuse(walk::node_pointer(sp, static_cast<std::size_t>(later[0])),
               fmt::format("views {}\"{}\" view each other", later.size() > 1 ? "" : "of ", st.node(later[0]).data));
      pending = std::move(later);
    }
  }

  /// DaCe's `get_view_edge`: the index of the edge through which view node `v` views its data.
  std::size_t viewed_edge(const Block& st, int v, const std::string& sp) const {
    std::string np = walk::node_pointer(sp, static_cast<std::size_t>(v));
    const std::string& name = st.node(v).data;
    std::vector<std::size_t> in, out;
    for (std::size_t i = 0; i < st.edges.size(); ++i) {
      if (st.edges[i].memlet.data.empty()) continue;
      if (st.edges[i].dst == v) in.push_back(i);
      if (st.edges[i].src == v) out.push_back(i);
    }
    if (in.empty() && out.empty()) refuse(np, fmt::format("view \"{}\" has no edges: it views nothing", name));
    if (in.size() == 1 && out.size() != 1) return in[0];
    if (out.size() == 1 && in.size() != 1) return out[0];
    if (in.size() != 1)
      refuse(np, fmt::format("view \"{}\" has {} incoming and {} outgoing edges: which one it views is ambiguous", name,
                             in.size(), out.size()));
    const DataEdge& a = st.edges[in[0]];
    const DataEdge& b = st.edges[out[0]];
    bool a_data = st.node(memlet_path_ends(st, a).src).kind == NodeKind::Access;
    bool b_data = st.node(memlet_path_ends(st, b).dst).kind == NodeKind::Access;
    if (a_data != b_data) return a_data ? in[0] : out[0];
    if (a.dst_conn == "views") return in[0];
    if (b.src_conn == "views") return out[0];
    bool a_names = a.memlet.data == name, b_names = b.memlet.data == name;
    if (a_names && b_names)
      refuse(np, fmt::format("both edges of view \"{}\" name the view: which one it views is ambiguous", name));
    if (a_names != b_names) return a_names ? out[0] : in[0];
    if (st.node(a.src).kind == NodeKind::MapEntry) return in[0];
    if (st.node(b.dst).kind == NodeKind::MapExit) return out[0];
    return in[0];
  }

  void fold(Block& st, int v, std::size_t e, const std::string& sp) {
    std::string np = walk::node_pointer(sp, static_cast<std::size_t>(v));
    std::string ep = walk::edge_pointer(sp, e);
    const std::string name = st.node(v).data;
    const DataEdge& edge = st.edges[e];
    int other = edge.src == v ? edge.dst : edge.src;
    // The viewed container is at the far end of the viewed edge's memlet path: the access node
    // itself, or (a view inside a map scope) the one outside the scope node.
    bool read_view = edge.dst == v;
    NodeKind through = st.node(other).kind;
    if (through != NodeKind::Access && !(read_view ? through == NodeKind::MapEntry : through == NodeKind::MapExit))
      refuse(ep, fmt::format("view \"{}\" views its data through a {}; a view is joined to the access node it "
                             "views, directly or through a map scope",
                             name, to_string(through)));
    EdgeSubsets subs = edge_subsets(sdfg_, st, edge);
    const std::string container = read_view ? subs.src_data : subs.dst_data;
    // Only the container's side of the viewed edge matters: a memlet that names the container
    // gives it even where its dimensions do not pair with the view's (a reshaping view).
    if (!subs.error.empty() && (container.empty() || edge.memlet.data != container)) refuse(ep, subs.error);
    if (container.empty() || container == name)
      refuse(ep, fmt::format("the memlet path through which view \"{}\" views its data does not reach an access node",
                             name));
    const DataDesc* vd = sdfg_.find_data(name);
    const DataDesc* cd = sdfg_.find_data(container);
    SDFC_ASSERT(vd && cd, "validated data missing: " + ep);
    if (vd->dtype != cd->dtype)
      refuse(np, fmt::format("view \"{}\" ({}) views \"{}\" ({}): views that reinterpret data (numpy's "
                             "A.view(dtype)) are not supported; copy the data into an array of the view's dtype "
                             "(A.astype(dtype)), or reinterpret it outside the program",
                             name, to_string(vd->dtype), container, to_string(cd->dtype)));
    ViewMap m(name, *vd, container, *cd, read_view ? subs.src : subs.dst, ep);

    // Every memlet that addresses this view node (its data names the view and its path ends here,
    // or the view is the side `other_subset` describes), rewritten from the state as it is now.
    struct Change {
      std::size_t edge;
      std::optional<Range> subset, other;
    };
    std::vector<Change> changes;
    for (std::size_t i = 0; i < st.edges.size(); ++i) {
      if (i == e) continue;
      const DataEdge& x = st.edges[i];
      if (x.memlet.data.empty()) continue;
      PathEnds ends = memlet_path_ends(st, x);
      bool at_src = ends.src == v, at_dst = ends.dst == v;
      // The viewed path (the edges outside a scope that lead to the viewed edge) stays.
      if ((read_view && at_dst) || (!read_view && at_src)) continue;
      if (!at_src && !at_dst) continue;
      std::string xp = walk::edge_pointer(sp, i);
      EdgeSubsets xs = edge_subsets(sdfg_, st, x);
      if (!xs.error.empty()) refuse(xp, xs.error);
      // Where a range is only a start and a bound: a nested SDFG's argument (a pointer to the
      // start, addressed with the inner descriptor's strides) and the outer memlets of a scope.
      // A C++ tasklet's connector of more than one element is a pointer to the first (its code
      // indexes memory as DaCe passes it: from the view's first element, with the view's strides).
      auto cpp_tasklet = [&](int n) {
        return st.node(n).kind == NodeKind::Tasklet && st.node(n).code.language == Language::CPP;
      };
      bool whole_ok = is_scope_passage(st, x) || st.node(x.src).kind == NodeKind::NestedSDFG ||
                      st.node(x.dst).kind == NodeKind::NestedSDFG || cpp_tasklet(x.src) || cpp_tasklet(x.dst);
      bool copy = !xs.src_data.empty() && !xs.dst_data.empty();
      RangeUse use = whole_ok ? RangeUse::StartAndBound : copy ? RangeUse::CopySide : RangeUse::Element;
      Change c{i, std::nullopt, std::nullopt};
      if (x.memlet.data == name) {
        c.subset = m.map(x.memlet.subset ? *x.memlet.subset : full_range(*vd), use, xp);
        // The copy's other side, explicit: it no longer pairs with the container's dimensions.
        if (use == RangeUse::CopySide && m.linear() && !x.memlet.other_subset)
          c.other = xs.data_is_src ? xs.dst : xs.src;
      } else {
        bool view_is_src = at_src && !xs.data_is_src;
        c.other = m.map(view_is_src ? xs.src : xs.dst, use, xp);
      }
      changes.push_back(std::move(c));
    }
    for (auto& c : changes) {
      Memlet& mm = st.edges[c.edge].memlet;
      if (c.subset) {
        mm.data = container;
        mm.subset = *c.subset;
      }
      if (c.other) mm.other_subset = *c.other;
    }
    // The view node becomes an access node of the container; the viewed edge keeps only its order.
    Node& n = st.node(v);
    n.data = container;
    auto drop_views = [](std::vector<Connector>& cs) {
      std::vector<Connector> kept;
      for (auto& c : cs)
        if (c.name != "views") kept.push_back(c);
      cs = std::move(kept);
    };
    drop_views(n.in_connectors);
    drop_views(n.out_connectors);
    DataEdge& ve = st.edges[e];
    ve.memlet = Memlet{};
    (read_view ? ve.dst_conn : ve.src_conn).reset();  // `views`; a scope node keeps its connector
  }
};

}  // namespace

void fold_views(SDFG& sdfg, const CompileOptions&) {
  walk::for_each_sdfg(sdfg, "", [&](SDFG& s, const std::string& ptr) { Folder(s, ptr).run(); });
}

}  // namespace sdfc
