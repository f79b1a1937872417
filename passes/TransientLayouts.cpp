#include "passes/TransientLayouts.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <variant>

#include "analysis/GpuOps.h"
#include "ir/Signature.h"
#include "ir/Walk.h"

namespace sdfc {
namespace {

/// For one kernel: container -> map parameter -> the container's dimensions the parameter indexes
/// (the parameter alone, plus a term free of the kernel's parameters).
using Indexing = std::map<std::string, std::map<std::string, std::set<int>>>;

/// A kernel's accesses: what its code nodes and the access nodes in its scope read and write.
Indexing kernel_indexing(const Block& st, const ScopeIndex& ix, int entry) {
  const MapInfo& m = st.node(entry).map;
  std::set<std::string> params(m.params.begin(), m.params.end());
  Indexing out;
  for (int v : ix.scope_nodes(st, entry)) {
    if (!is_code_node(st.node(v)) && st.node(v).kind != NodeKind::Access) continue;
    std::vector<const DataEdge*> edges = ix.in[static_cast<std::size_t>(v)];
    edges.insert(edges.end(), ix.out[static_cast<std::size_t>(v)].begin(), ix.out[static_cast<std::size_t>(v)].end());
    for (const DataEdge* e : edges) {
      if (e->memlet.data.empty() || !e->memlet.subset || is_scope_passage(st, *e)) continue;
      const Range& subset = *e->memlet.subset;
      for (std::size_t j = 0; j < subset.size(); ++j) {
        auto p = shifted_parameter(subset[j].start, params);
        if (p && !p->empty()) out[e->memlet.data][*p].insert(static_cast<int>(j));
      }
    }
  }
  return out;
}

/// The dimensions of `d` from the fastest, when its strides are dense in some order (1, then each
/// the product of the sizes before it); empty when they are not.
std::vector<int> dense_order(const DataDesc& d) {
  std::vector<int> order;
  std::set<int> left;
  for (std::size_t j = 0; j < d.strides.size(); ++j) left.insert(static_cast<int>(j));
  Expr expected = make_int(1);
  while (!left.empty()) {
    auto next = std::find_if(left.begin(), left.end(),
                             [&](int j) { return same_value(d.strides[static_cast<std::size_t>(j)], expected); });
    if (next == left.end()) return {};
    order.push_back(*next);
    expected = simplify(make_binary(BinOp::Mul, expected, d.shape[static_cast<std::size_t>(*next)]));
    left.erase(next);
  }
  return order;
}

/// A nested SDFG in a kernel that receives the transient through connector `conn`.
struct NestedUse {
  Node* node;
  std::string conn;
};

/// Whether `inner` (a nested SDFG's) passes its container `name` to a nested SDFG of its own.
bool passes_on(const SDFG& inner, const std::string& name) {
  bool found = false;
  walk::for_each_block(inner.root, "", [&](const Block& b, const std::string&) {
    if (b.kind != BlockKind::State) return;
    for (auto& e : b.edges)
      if (e.memlet.data == name &&
          (b.node(e.src).kind == NodeKind::NestedSDFG || b.node(e.dst).kind == NodeKind::NestedSDFG))
        found = true;
  });
  return found;
}

/// Whether the nested SDFG of `n` declares its container `conn` with the strides `outer` of the
/// container it receives (after its symbol mapping), and keeps it to itself.
bool nested_agrees(const Node& n, const std::string& conn, const std::vector<Expr>& outer) {
  const DataDesc* inner = n.sdfg ? n.sdfg->find_data(conn) : nullptr;
  if (!inner || inner->kind != DataKind::Array || inner->transient || inner->strides.size() != outer.size())
    return false;
  std::map<std::string, Expr> mapping(n.symbol_mapping.begin(), n.symbol_mapping.end());
  for (std::size_t j = 0; j < outer.size(); ++j)
    if (!same_value(substitute(inner->strides[j], mapping), outer[j])) return false;
  return !passes_on(*n.sdfg, conn);
}

Expr compare(CmpOp op, Expr a, Expr b) {
  ExprNode n{ExprKind::Compare};
  n.op = static_cast<int>(op);
  n.args = {std::move(a), std::move(b)};
  return make_node(std::move(n));
}

Expr if_else(Expr cond, Expr then, Expr other) {
  ExprNode n{ExprKind::IfExp};
  n.args = {std::move(cond), std::move(then), std::move(other)};
  return make_node(std::move(n));
}

class Layouts {
 public:
  explicit Layouts(SDFG& s) : s_(s), interstate_(interstate_names(s)) {
    walk::for_each_block(s.root, "", [&](Block& b, const std::string&) {
      if (b.kind != BlockKind::State) return;
      ScopeIndex ix(b);
      for (std::size_t v = 0; v < b.nodes.size(); ++v)
        if (is_host_kernel(*b.nodes[v])) kernels_.push_back(kernel_indexing(b, ix, static_cast<int>(v)));
    });
  }

  void run() {
    for (auto& [name, d] : s_.arrays) {
      std::vector<int> declared = laid_out_by_file(name, d);
      std::vector<NestedUse> nested;
      if (declared.empty() || !only_kernels_touch(name, d, nested)) continue;
      auto [model, pairs] = choose_model(name);
      if (model.empty()) continue;
      follow(d, declared, model, pairs, nested);
    }
  }

 private:
  /// T's declared order (fastest first) when T is a transient this pass may lay out; else empty.
  std::vector<int> laid_out_by_file(const std::string& name, const DataDesc& d) const {
    bool kind = d.kind == DataKind::Array && d.transient && !d.view && !d.structure && !d.member &&
                d.storage == StorageType::GPU_Global && d.strides.size() >= 2 && d.constant.is_null();
    bool lifetime = d.lifetime == Lifetime::Scope || d.lifetime == Lifetime::State || d.lifetime == Lifetime::SDFG;
    bool zero = std::all_of(d.offset.begin(), d.offset.end(), [](const Expr& o) { return as_constant(o) == 0; });
    if (!kind || !lifetime || !zero || interstate_.count(name)) return {};
    return dense_order(d);
  }

  /// Whether only kernels touch `name` (see the header); collects the nested SDFGs receiving it.
  bool only_kernels_touch(const std::string& name, const DataDesc& d, std::vector<NestedUse>& nested) {
    bool ok = true;
    walk::for_each_block(s_.root, "", [&](Block& b, const std::string&) {
      if (b.kind != BlockKind::State || !ok) return;
      for (auto& np : b.nodes) {
        const Node& n = *np;
        if (n.kind == NodeKind::Access && n.data == name && n.scope_entry >= 0 &&
            enclosing_kernel(b, n.scope_entry) < 0)
          ok = false;
      }
      auto top_access = [&](const Node& n) {
        return n.kind == NodeKind::Access && n.data == name && n.scope_entry < 0;
      };
      for (auto& e : b.edges) {
        const Node& src = b.node(e.src);
        const Node& dst = b.node(e.dst);
        if (top_access(src) || top_access(dst)) {
          // out of the access node into a kernel's entry, or out of a kernel's exit into it
          const Node& other = top_access(src) ? dst : src;
          bool kernel = (other.kind == NodeKind::MapEntry && is_host_kernel(other)) ||
                        (other.kind == NodeKind::MapExit && is_host_kernel(b.node(other.scope_entry)));
          if (!kernel) ok = false;
        }
        if (e.memlet.data != name) continue;
        for (auto [end, conn] : {std::pair(e.src, e.src_conn), std::pair(e.dst, e.dst_conn)}) {
          Node& n = b.node(end);
          if (n.kind != NodeKind::NestedSDFG) continue;
          if (!conn || n.scope_entry < 0 || enclosing_kernel(b, n.scope_entry) < 0 ||
              !nested_agrees(n, *conn, d.strides))
            ok = false;
          else
            nested.push_back({&n, *conn});
        }
      }
    });
    return ok;
  }

  /// The argument T follows and T's dimension -> the argument's; {"", {}} when none can lead.
  std::pair<std::string, std::map<int, int>> choose_model(const std::string& name) const {
    struct Candidate {
      std::map<int, int> pairs;
      int kernels = 0;
      bool conflict = false;
    };
    std::map<std::string, Candidate> candidates;
    for (const Indexing& k : kernels_) {
      auto t = k.find(name);
      if (t == k.end()) continue;
      for (auto& [arg, by_param] : k) {
        const DataDesc* a = s_.find_data(arg);
        if (arg == name || !a || !leads(*a)) continue;
        Candidate& c = candidates[arg];
        bool paired = false;
        for (auto& [param, dims] : by_param) {
          auto td = t->second.find(param);
          if (dims.size() != 1 || td == t->second.end() || td->second.size() != 1) continue;
          auto [it, fresh] = c.pairs.emplace(*td->second.begin(), *dims.begin());
          if (!fresh && it->second != *dims.begin()) c.conflict = true;
          paired = true;
        }
        c.kernels += paired;
      }
    }
    const std::pair<const std::string, Candidate>* best = nullptr;
    for (auto& entry : candidates) {
      const Candidate& c = entry.second;
      std::set<int> partners;
      for (auto& [t, a] : c.pairs) partners.insert(a);
      if (c.conflict || c.pairs.size() < 2 || partners.size() != c.pairs.size()) continue;
      if (!best || std::tuple(c.pairs.size(), c.kernels) > std::tuple(best->second.pairs.size(), best->second.kernels))
        best = &entry;
    }
    if (!best) return {};
    return {best->first, best->second.pairs};
  }

  /// An argument whose layout T may follow: GPU data of two or more dimensions whose unit stride
  /// only the call tells (no stride is the constant 1: GT4Py passes every stride as a symbol).
  static bool leads(const DataDesc& a) {
    return a.kind == DataKind::Array && !a.transient && is_gpu_storage(a.storage) && a.strides.size() >= 2 &&
           std::none_of(a.strides.begin(), a.strides.end(), [](const Expr& x) { return as_constant(x) == 1; });
  }

  /// Rewrites T's strides (see the header) and those of the nested SDFGs receiving it.
  void follow(DataDesc& d, const std::vector<int>& declared, const std::string& model, const std::map<int, int>& pairs,
              const std::vector<NestedUse>& nested) {
    const DataDesc& a = *s_.find_data(model);
    std::size_t rank = d.shape.size();
    std::vector<int> pos(rank), anchor(rank, -1);
    int current = -1;
    for (std::size_t i = 0; i < declared.size(); ++i) {
      int j = declared[i];
      pos[static_cast<std::size_t>(j)] = static_cast<int>(i);
      if (pairs.count(j)) current = j;
      anchor[static_cast<std::size_t>(j)] = current;
    }
    auto key = [&](int j) { return make_call("Abs", {a.strides[static_cast<std::size_t>(pairs.at(j))]}); };
    // Whether dimension e comes before dimension f at run time: a constant, or a comparison.
    auto before = [&](int e, int f) -> std::variant<bool, Expr> {
      int ae = anchor[static_cast<std::size_t>(e)], af = anchor[static_cast<std::size_t>(f)];
      if (ae == af) return pos[static_cast<std::size_t>(e)] < pos[static_cast<std::size_t>(f)];
      if (ae < 0 || af < 0) return ae < 0;
      bool declared_first = pos[static_cast<std::size_t>(ae)] < pos[static_cast<std::size_t>(af)];
      return compare(declared_first ? CmpOp::Le : CmpOp::Lt, key(ae), key(af));
    };
    std::vector<Expr> strides;
    for (std::size_t f = 0; f < rank; ++f) {
      Expr stride = make_int(1);
      for (std::size_t e = 0; e < rank; ++e) {
        if (e == f) continue;
        auto b = before(static_cast<int>(e), static_cast<int>(f));
        Expr factor = std::holds_alternative<bool>(b) ? (std::get<bool>(b) ? d.shape[e] : make_int(1))
                                                      : if_else(std::get<Expr>(b), d.shape[e], make_int(1));
        stride = simplify(make_binary(BinOp::Mul, stride, factor));
      }
      strides.push_back(stride);
    }
    std::set<std::string> syms;
    for (auto& x : strides) free_symbols(x, syms);
    for (const NestedUse& u : nested)
      if (!takes_symbols(*u.node, syms)) return;
    d.strides = strides;
    d.layout_follows = model;
    d.layout_dims.assign(rank, -1);
    for (auto& [t, m] : pairs) d.layout_dims[static_cast<std::size_t>(t)] = m;
    for (const NestedUse& u : nested) {
      SDFG& inner = *u.node->sdfg;
      inner.find_data(u.conn)->strides = strides;
      for (auto& sym : syms)
        if (!mapping_of(*u.node, sym)) {
          u.node->symbol_mapping.emplace_back(sym, make_symbol(sym));
          inner.symbols.emplace_back(sym, s_.symbol_type(sym).value_or(DType::Int64));
        }
    }
  }

  static const Expr* mapping_of(const Node& n, const std::string& sym) {
    for (auto& [inner, outer] : n.symbol_mapping)
      if (inner == sym) return &outer;
    return nullptr;
  }

  /// Whether nested SDFG node `n` can read each of `syms` under its own name: mapped to itself, or
  /// a name it does not use (then mapped to itself by follow()).
  static bool takes_symbols(const Node& n, const std::set<std::string>& syms) {
    return std::all_of(syms.begin(), syms.end(), [&](const std::string& sym) {
      if (const Expr* outer = mapping_of(n, sym)) return equal(*outer, make_symbol(sym));
      return !n.sdfg->symbol_type(sym) && !n.sdfg->find_data(sym) && !n.sdfg->find_callback(sym);
    });
  }

  SDFG& s_;
  std::set<std::string> interstate_;
  std::vector<Indexing> kernels_;
};

}  // namespace

void lay_out_transients(SDFG& sdfg, const CompileOptions& options) {
  if (options.target == Target::CPU || !options.transient_layouts) return;
  Layouts(sdfg).run();
}

}  // namespace sdfc
