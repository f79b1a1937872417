#include "passes/TransientLifetimes.h"

#include <fmt/format.h>

#include <cctype>
#include <functional>
#include <map>
#include <optional>

#include "analysis/GpuOps.h"
#include "ir/Diagnostic.h"
#include "ir/Signature.h"
#include "ir/Walk.h"

namespace sdfc {
namespace {

/// Transients with an access node outside every map scope.
std::set<std::string> used_outside_maps(const SDFG& sdfg) {
  std::set<std::string> out;
  walk::for_each_block(sdfg.root, "", [&](const Block& b, const std::string&) {
    for (auto& n : b.nodes)
      if (n->kind == NodeKind::Access && n->scope_entry < 0) out.insert(n->data);
  });
  return out;
}

/// Where each default-lifetime transient of `sdfg` (and of its nested SDFGs) is allocated.
/// `in_kernel`: `sdfg` is called from inside a GPU kernel.
void place_transients(SDFG& sdfg, const std::string& ptr, bool in_kernel) {
  std::map<std::string, std::set<std::pair<const Block*, int>>> scopes;
  std::map<std::string, std::set<const Block*>> states;
  struct Nested {
    SDFG* sdfg;
    std::string ptr;
    bool in_kernel;
  };
  std::vector<Nested> nested;
  std::function<void(Block&, const std::string&)> walk = [&](Block& b, const std::string& bp) {
    if (b.kind == BlockKind::State)
      for (std::size_t i = 0; i < b.nodes.size(); ++i) {
        Node& n = *b.nodes[i];
        if (n.kind == NodeKind::Access) {
          scopes[n.data].insert({&b, n.scope_entry});
          states[n.data].insert(&b);
        }
        if (n.kind == NodeKind::NestedSDFG)
          nested.push_back({n.sdfg.get(), walk::nested_sdfg_pointer(walk::node_pointer(b, bp, i)),
                            in_kernel || enclosing_kernel(b, n.scope_entry) >= 0});
      }
    for (std::size_t i = 0; i < b.blocks.size(); ++i) walk(*b.blocks[i], bp + "/nodes/" + std::to_string(i));
    for (std::size_t i = 0; i < b.branches.size(); ++i)
      walk(*b.branches[i].second, bp + "/branches/" + std::to_string(i) + "/1");
  };
  walk(sdfg.root, ptr);
  auto assigned = assigned_symbols(sdfg);
  for (auto& [name, d] : sdfg.arrays) {
    d.place = DataDesc::Place::Call;
    d.place_state = nullptr;
    d.place_scope = -1;
    if (d.transient && !d.constant.is_null() && !ptr.empty())
      throw UserError(Diagnostic{"", ptr + "/attributes/_arrays/" + pointer_token(name), 0, 0,
                                 fmt::format("unsupported constant \"{}\" (constants_prop) of a nested SDFG called "
                                             "inside a map scope; declare the constant in the top-level SDFG",
                                             name)});
    if (!d.transient || d.lifetime == Lifetime::Persistent || d.lifetime == Lifetime::External ||
        d.lifetime == Lifetime::Global)
      continue;
    auto& sc = scopes[name];
    if (sc.size() == 1 && sc.begin()->second >= 0) {
      d.place = DataDesc::Place::MapScope;
      d.place_state = sc.begin()->first;
      d.place_scope = sc.begin()->second;
      continue;
    }
    std::set<std::string> used;
    for (auto& s : d.shape) free_symbols(s, used);
    bool late = false;
    for (auto& a : assigned) late |= used.count(a) > 0;
    if (!late) continue;
    if (states[name].size() != 1)
      throw UserError(Diagnostic{"", ptr + "/attributes/_arrays/" + pointer_token(name), 0, 0,
                                 fmt::format("transient \"{}\" has a size that depends on a symbol assigned during the "
                                             "program and is used in several states; sdfc cannot place its allocation",
                                             name)});
    d.place = DataDesc::Place::State;
    d.place_state = *states[name].begin();
    // Allocated once per execution of its state (a loop body: every iteration): from the
    // stream-ordered pool on the GPU, not with a device malloc that waits for the whole device.
    if (d.storage == StorageType::GPU_Global && !in_kernel) d.pool = true;
  }
  for (auto& n : nested) place_transients(*n.sdfg, n.ptr, n.in_kernel);
}

// ---- which transients the mode converts, and to what -------------------------------------------

/// GT4Py's selection: an array (not a scalar) at DaCe's default lifetimes, not pooled, not in
/// Register storage, with an access node outside every map scope (made longer-lived, one used only
/// inside a map would be shared between its iterations).
bool selected(const std::string& name, const DataDesc& d, const std::set<std::string>& outside_maps) {
  bool default_lifetime =
      d.lifetime == Lifetime::Scope || d.lifetime == Lifetime::State || d.lifetime == Lifetime::SDFG;
  return d.transient && d.constant.is_null() && default_lifetime && !d.pool && d.kind == DataKind::Array &&
         d.storage != StorageType::Register && outside_maps.count(name) > 0;
}

/// True when `e` (in the top-level SDFG's symbols) depends only on arguments of the program:
/// persistent and external transients are sized once, at init, from the init symbols.
bool depends_only_on(const Expr& e, const std::set<std::string>& args) {
  std::set<std::string> syms;
  free_symbols(e, syms);
  for (auto& s : syms)
    if (!args.count(s)) return false;
  return true;
}

/// The memory mode's decision for one selected transient. `sized_by_arguments` matters to
/// persistent and external only.
void convert(DataDesc& d, TransientMode mode, bool sized_by_arguments) {
  d.lifetime_from_mode = true;
  switch (mode) {
    case TransientMode::Scoped:
      d.lifetime = Lifetime::Scope;
      break;
    case TransientMode::Persistent:
      if (sized_by_arguments) d.lifetime = Lifetime::Persistent;
      break;
    case TransientMode::External:
      if (sized_by_arguments) d.lifetime = Lifetime::External;
      break;
    case TransientMode::Pool:
      if (is_gpu_storage(d.storage))
        d.pool = true;
      else
        d.lifetime = Lifetime::Scope;  // no pool on the CPU: scoped
      break;
    case TransientMode::AsDeclared:
      break;
  }
}

// ---- lifting transients of nested SDFGs --------------------------------------------------------

/// An expression in one SDFG's symbols, rewritten in the top-level SDFG's symbols; nullopt when it
/// cannot be written there.
using ToTop = std::function<std::optional<Expr>(const Expr&)>;

/// A nested SDFG node as its parent sees it: how the nested SDFG's symbols read in the parent.
struct Call {
  const SDFG* parent = nullptr;
  std::map<std::string, Expr> mapping;  ///< the node's symbol mapping, inner -> outer
  std::set<std::string> assigned;       ///< symbols the nested SDFG assigns itself

  /// `e` in the parent's symbols: each symbol through the mapping or, unmapped, the parent's symbol
  /// of that name (as the code generator passes it). Nullopt for a symbol the nested SDFG assigns
  /// (its value changes during the call) or that neither the mapping nor the parent defines.
  std::optional<Expr> outer(const Expr& e) const {
    std::set<std::string> syms;
    free_symbols(e, syms);
    for (auto& s : syms)
      if (assigned.count(s) || (!mapping.count(s) && !parent->symbol_type(s))) return std::nullopt;
    return simplify(substitute(e, mapping));
  }
};

/// The containers an SDFG reads (an edge leaves one of its access nodes; interstate code, loop and
/// branch conditions name it) and writes (an edge enters one of its access nodes).
struct Usage {
  std::set<std::string> read, written;
};

Usage usage_of(const SDFG& sdfg) {
  Usage u;
  auto code = [&](const std::string& text) {
    for (auto& id : identifiers_in(text)) u.read.insert(id);
  };
  walk::for_each_block(sdfg.root, "", [&](const Block& b, const std::string&) {
    for (auto& e : b.edges) {
      if (e.memlet.data.empty()) continue;
      if (b.node(e.src).kind == NodeKind::Access) u.read.insert(b.node(e.src).data);
      if (b.node(e.dst).kind == NodeKind::Access) u.written.insert(b.node(e.dst).data);
    }
    for (auto& e : b.cf_edges) {
      if (!e.unconditional()) code(e.condition.code);
      for (auto& [sym, value] : e.assignments) code(value);
    }
    if (b.kind == BlockKind::Loop) {
      code(b.loop_condition.code);
      if (b.init_statement) code(b.init_statement->code);
      if (b.update_statement) code(b.update_statement->code);
    }
    for (auto& [c, body] : b.branches)
      if (c) code(c->code);
  });
  return u;
}

/// `base` as a container name (characters outside [A-Za-z0-9_] become '_') that no container or
/// symbol of `sdfg` has yet.
std::string fresh_name(const SDFG& sdfg, const std::string& base) {
  std::string stem;
  for (char c : base) stem += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
  std::string name = stem;
  for (int k = 1; sdfg.find_data(name) || sdfg.symbol_type(name); ++k) name = fmt::format("{}_{}", stem, k);
  return name;
}

/// Connects container `data` of the state's SDFG to connector `conn` of nested SDFG node `x`, as
/// DaCe does for an argument: an access node with an edge into `x` when the nested SDFG reads it,
/// an edge out of `x` into a second access node when it writes it; memlets cover all of `data`.
void connect(Block& st, int x, const std::string& conn, const std::string& data, const DataDesc& desc, bool reads,
             bool writes) {
  Range all;
  for (auto& extent : desc.shape)
    all.push_back({make_int(0), simplify(make_binary(BinOp::Sub, extent, make_int(1))), make_int(1), make_int(1)});
  auto access = [&] {
    auto a = std::make_unique<Node>(NodeKind::Access);
    a->label = a->data = data;
    st.nodes.push_back(std::move(a));
    return static_cast<int>(st.nodes.size()) - 1;
  };
  auto edge = [&](int src, int dst, bool into_x) {
    DataEdge e;
    e.src = src;
    e.dst = dst;
    (into_x ? e.dst_conn : e.src_conn) = conn;
    e.memlet.data = data;
    e.memlet.subset = all;
    e.memlet.volume = simplify(product(desc.shape));
    e.memlet.is_data_src = into_x;  // the memlet names the access node's data
    st.edges.push_back(std::move(e));
  };
  if (reads) {
    st.node(x).in_connectors.push_back({conn, std::nullopt});
    edge(access(), x, true);
  }
  if (writes) {
    st.node(x).out_connectors.push_back({conn, std::nullopt});
    edge(x, access(), false);
  }
}

/// Applies the memory mode to an SDFG and, innermost first, to the nested SDFGs it calls outside
/// map scopes (see the header).
class ModeApplier {
 public:
  ModeApplier(const SDFG& top, TransientMode mode) : args_(free_symbols(top)), mode_(mode) {}

  void apply(SDFG& sdfg, const ToTop& to_top, bool top) {
    std::vector<std::pair<Block*, int>> calls;  // nested SDFG nodes outside map scopes
    walk::for_each_block(sdfg.root, "", [&](Block& b, const std::string&) {
      for (std::size_t i = 0; i < b.nodes.size(); ++i)
        if (b.nodes[i]->kind == NodeKind::NestedSDFG && b.nodes[i]->scope_entry < 0)
          calls.emplace_back(&b, static_cast<int>(i));
    });
    for (auto& [st, x] : calls) {
      Node& node = st->node(x);
      Call call;
      call.parent = &sdfg;
      call.mapping = std::map<std::string, Expr>(node.symbol_mapping.begin(), node.symbol_mapping.end());
      for (auto& s : assigned_symbols(*node.sdfg)) call.assigned.insert(s);
      ToTop inner_to_top = [&](const Expr& e) -> std::optional<Expr> {
        auto o = call.outer(e);
        return o ? to_top(*o) : std::nullopt;
      };
      apply(*node.sdfg, inner_to_top, false);
      lift(sdfg, *st, x, call, to_top);
    }
    // Persistent and external convert at the top level only: what they convert in a nested SDFG
    // has just been lifted out of it by its parent.
    // Constants (constants_prop) are filled once, at init: persistent, at the top level.
    if (top)
      for (auto& [name, d] : sdfg.arrays)
        if (d.transient && !d.constant.is_null()) d.lifetime = Lifetime::Persistent;
    if (mode_ == TransientMode::AsDeclared) return;
    if (!top && mode_ != TransientMode::Scoped && mode_ != TransientMode::Pool) return;
    std::set<std::string> outside = used_outside_maps(sdfg);
    for (auto& [name, d] : sdfg.arrays)
      if (selected(name, d, outside)) convert(d, mode_, top && depends_only_on(d.total_size, args_));
  }

 private:
  std::set<std::string> args_;  ///< the program's arguments (its free symbols)
  TransientMode mode_;

  /// Moves each transient of nested SDFG node `x` that the mode converts at the top level, each
  /// constant, each transient the file declares Persistent or External (DaCe's auto_optimize
  /// makes nested SDFGs' transients persistent) and, as declared, each GPU_Global one the mode
  /// would select into `parent`, connected to `x` through a connector of the transient's name. A
  /// declared lifetime is kept: level by level it reaches the top.
  void lift(SDFG& parent, Block& st, int x, const Call& call, const ToTop& to_top) {
    SDFG& inner = *st.node(x).sdfg;
    std::set<std::string> outside = used_outside_maps(inner);
    Usage usage = usage_of(inner);
    bool by_mode = mode_ == TransientMode::Persistent || mode_ == TransientMode::External;
    for (auto& [name, d] : inner.arrays) {
      bool constant = d.transient && !d.constant.is_null();
      bool declared = d.transient && (d.lifetime == Lifetime::Persistent || d.lifetime == Lifetime::External);
      // As declared, a nested SDFG's GPU transient at a default lifetime is allocated at each call
      // of the nested SDFG: in a loop, a device malloc and a free that waits for the device per
      // iteration (DaCe's expanded MatMult in a row loop: fe_rowdot_views_s). At the top level it
      // is allocated once per program call, in the call's arena.
      bool gpu_call = mode_ == TransientMode::AsDeclared && d.storage == StorageType::GPU_Global;
      if (!constant && !declared && !((by_mode || gpu_call) && selected(name, d, outside))) continue;
      // The layout in the parent's symbols; at the top it must depend only on arguments, so that
      // the transient can be sized at init and the program's signature does not change.
      DataDesc lifted = d;
      bool liftable = true;
      auto up = [&](Expr& e) {
        if (!e) return;
        std::optional<Expr> o = call.outer(e);
        std::optional<Expr> t = o ? to_top(*o) : std::nullopt;
        liftable &= t && depends_only_on(*t, args_);
        if (o) e = *o;
      };
      for (auto& e : lifted.shape) up(e);
      for (auto& e : lifted.strides) up(e);
      for (auto& e : lifted.offset) up(e);
      up(lifted.total_size);
      if (!liftable) continue;
      std::string outer_name = fresh_name(parent, st.node(x).label + "_" + name);
      d.transient = false;
      d.constant = nullptr;
      if (declared) d.lifetime = Lifetime::Scope;  // an argument now; the lifted container keeps it
      bool writes = usage.written.count(name) > 0;
      bool reads = usage.read.count(name) > 0 || !writes;  // an unused one is still an argument
      parent.arrays.emplace_back(outer_name, std::move(lifted));
      connect(st, x, name, outer_name, parent.arrays.back().second, reads, writes);
    }
  }
};

}  // namespace

void assign_transient_lifetimes(SDFG& sdfg, const CompileOptions& options) {
  const ToTop top_level = [](const Expr& e) { return std::optional<Expr>(e); };
  ModeApplier(sdfg, options.transients).apply(sdfg, top_level, true);
  place_transients(sdfg, "", false);
}

}  // namespace sdfc
