#include "passes/GpuGraph.h"

#include <fmt/format.h>

#include <set>
#include <utility>

#include "analysis/GpuOps.h"
#include "ir/Diagnostic.h"
#include "ir/Dump.h"
#include "ir/Signature.h"
#include "ir/Walk.h"

namespace sdfc {
namespace {

[[noreturn]] void refuse(const std::string& pointer, const std::string& what) {
  throw UserError(Diagnostic{"", pointer, 0, 0, fmt::format("--gpu-graph: {}", what)});
}

/// The names of `s`'s containers that code outside state `st` may read or write: access nodes of
/// its other states and interstate code (it may read a scalar after `st` ran).
std::set<std::string> used_outside(const SDFG& s, const Block& st) {
  std::set<std::string> used = interstate_names(s);
  walk::for_each_state(s, "", [&](const Block& b, const std::string&) {
    if (&b == &st) return;
    for (auto& n : b.nodes)
      if (n->kind == NodeKind::Access) used.insert(n->data);
  });
  return used;
}

/// The host tasklets of state `st` that a graph may run only when it is captured: Python
/// tasklets (the functions they may call are math functions, without side effects) whose inputs
/// are scalar arguments the program never writes (`root`: their values are in the key) or scalars
/// of this state computed by such tasklets, and whose outputs are host-value scalar transients
/// used nowhere but in this state, read only by GPU kernels (as arguments by value) and by such
/// tasklets. A capture computes them and bakes the values into the kernels' launches; a replay
/// with the same key would compute the same values, and no one else reads them. GT4Py computes
/// `dt / nsub` so in the state of the kernel that takes it.
std::set<int> capture_only_tasklets(const SDFG& s, const Block& st, bool root) {
  std::set<int> pure;
  for (std::size_t i = 0; i < st.nodes.size(); ++i) {
    const Node& n = *st.nodes[i];
    if (n.kind == NodeKind::Tasklet && n.scope_entry < 0 && n.code.language == Language::Python &&
        n.library_call.empty() && n.host_waits.empty())
      pure.insert(static_cast<int>(i));
  }
  if (pure.empty()) return pure;
  std::set<std::string> outside = used_outside(s, st);
  auto local_scalar = [&](const std::string& name) {
    const DataDesc* d = s.find_data(name);
    return d && d->kind == DataKind::Scalar && d->transient && d->alloc == DataDesc::Alloc::HostValue &&
           !outside.count(name);
  };
  auto unwritten_argument = [&](const std::string& name) {
    const DataDesc* d = s.find_data(name);
    if (!root || !d || d->kind != DataKind::Scalar || d->transient || is_gpu_storage(d->storage)) return false;
    for (auto& e : st.edges)
      if (st.node(e.dst).kind == NodeKind::Access && st.node(e.dst).data == name) return false;
    return !outside.count(name);  // another state could write it
  };
  // A local scalar is computed at capture when all its writers are such tasklets and all its
  // readers are kernels or such tasklets.
  auto computed_at_capture = [&](const std::string& name) {
    if (!local_scalar(name)) return false;
    for (auto& e : st.edges) {
      const Node &src = st.node(e.src), &dst = st.node(e.dst);
      if (dst.kind == NodeKind::Access && dst.data == name && !pure.count(e.src)) return false;
      if (src.kind == NodeKind::Access && src.data == name && !pure.count(e.dst) && !is_host_kernel(dst)) return false;
    }
    return true;
  };
  for (bool changed = true; changed;) {  // the greatest set that passes
    changed = false;
    for (auto it = pure.begin(); it != pure.end();) {
      bool ok = true;
      for (auto& e : st.edges) {
        if (e.memlet.data.empty()) continue;
        if (e.dst == *it) {
          const Node& src = st.node(e.src);
          ok &= src.kind == NodeKind::Access && (unwritten_argument(src.data) || computed_at_capture(src.data));
        }
        if (e.src == *it) {
          const Node& dst = st.node(e.dst);
          ok &= dst.kind == NodeKind::Access && computed_at_capture(dst.data);
        }
      }
      if (ok) {
        ++it;
      } else {
        it = pure.erase(it);
        changed = true;
      }
    }
  }
  return pure;
}

/// Whether a block's host code only queues GPU work that is a function of the arguments and
/// symbols (throws UserError naming the first construct that is not). `strict`: no exception for
/// branches that do host work (graph segments hold no such branch).
class Checker {
 public:
  explicit Checker(bool strict = false) : strict_(strict) {}

  void sdfg(SDFG& s, const std::string& ptr) {
    if (s.gpu_exit_sync && !ptr.empty()) refuse(ptr, "the nested SDFG waits for the GPU on the host at its end");
    if (!ptr.empty()) allocations(s, ptr, nullptr, Place::Call);
    std::string outer = std::exchange(sdfg_ptr_, ptr);
    tree(s, s.root, ptr);
    sdfg_ptr_ = outer;
  }

  /// `b` and the blocks inside it. A conditional's branch whose body does host work (and whose
  /// conditions read symbols only, checked with the conditional) is marked instead of refused:
  /// the call that enters it abandons its capture (GT4Py's metrics timers behind
  /// `gt_metrics_level`).
  void tree(SDFG& s, Block& b, const std::string& bp) {
    block(s, b, bp);
    for (std::size_t i = 0; i < b.blocks.size(); ++i) tree(s, *b.blocks[i], walk::block_pointer(bp, i));
    for (std::size_t k = 0; k < b.branches.size(); ++k) {
      Block& body = *b.branches[k].second;
      body.graph_host_work = false;
      if (strict_) {
        tree(s, body, walk::branch_pointer(bp, k));
        continue;
      }
      std::size_t marked = capture_only_.size();
      try {
        tree(s, body, walk::branch_pointer(bp, k));
      } catch (const UserError&) {
        body.graph_host_work = true;
        capture_only_.resize(marked);  // the body runs without a graph
      }
    }
  }

  /// Marks the host tasklets the checked code runs only at capture (Node::graph_capture_only).
  void commit() const {
    for (Node* n : capture_only_) n->graph_capture_only = true;
  }

  using Place = DataDesc::Place;

  /// Transients allocated with a device malloc where the graph is captured (nested SDFGs'
  /// call-level ones, those of state `st`): a replay would reuse a buffer freed at capture time.
  static void allocations(const SDFG& s, const std::string& ptr, const Block* st, Place place) {
    for (auto& [name, d] : s.arrays)
      if (d.transient && d.place == place && (place == Place::Call || d.place_state == st) &&
          (d.alloc == DataDesc::Alloc::DeviceMalloc || d.alloc == DataDesc::Alloc::PinnedHost))
        refuse(walk::data_pointer(ptr, name),
               fmt::format("transient \"{}\" is allocated with a device malloc inside the call (its size is known "
                           "only there); a replay would reuse a buffer freed when the graph was captured (use "
                           "--transients pool)",
                           name));
  }

 private:
  bool strict_;
  std::string sdfg_ptr_;             ///< the pointer of the SDFG being checked
  std::vector<Node*> capture_only_;  ///< host tasklets that run only at capture (commit marks them)

  /// The data containers of `s` that `code` reads.
  static void symbols_only(const SDFG& s, const std::string& code, const std::string& ptr, const std::string& what) {
    for (auto& id : identifiers_in(code))
      if (s.find_data(id))
        refuse(ptr, fmt::format("{} reads data container \"{}\" on the host (\"{}\")", what, id, code));
  }

  void block(SDFG& s, Block& b, const std::string& bp) {
    if (!b.host_waits.empty()) refuse(bp, fmt::format("\"{}\" waits for the GPU on the host", b.label));
    if (b.kind == BlockKind::Loop) {
      symbols_only(s, b.loop_condition.code, bp + "/attributes/loop_condition", "the loop condition");
      if (b.init_statement) symbols_only(s, b.init_statement->code, bp + "/attributes/init_statement", "the loop");
      if (b.update_statement)
        symbols_only(s, b.update_statement->code, bp + "/attributes/update_statement", "the loop");
    }
    for (std::size_t k = 0; k < b.branches.size(); ++k)
      if (b.branches[k].first)
        symbols_only(s, b.branches[k].first->code, bp + "/branches/" + std::to_string(k) + "/0",
                     "the branch condition");
    for (std::size_t i = 0; i < b.cf_edges.size(); ++i) {
      const InterstateEdge& e = b.cf_edges[i];
      std::string ep = bp + "/edges/" + std::to_string(i);
      if (!e.host_waits.empty()) refuse(ep, "the interstate edge waits for the GPU on the host");
      if (!e.unconditional()) symbols_only(s, e.condition.code, ep + "/attributes/data/condition", "the condition");
      for (auto& [k, v] : e.assignments)
        symbols_only(s, v, ep + "/attributes/data/assignments", fmt::format("the assignment {} = ...", k));
    }
    if (b.kind == BlockKind::State) state(s, b, bp);
  }

  void state(SDFG& s, Block& st, const std::string& sp) {
    allocations(s, sdfg_ptr_, &st, Place::State);
    // Host memory a graph's copy may read or write: memory whose address stays what the key says,
    // the root's array arguments (their pointers are in the key) and its Persistent/External
    // transients (held by the instance; External pointers are in the key). Not host scalars or
    // per-call heap transients (their addresses change from call to call), nor a nested SDFG's
    // containers (they may be any of those outside).
    auto unstable_host = [&](const std::string& data) {
      const DataDesc* d = s.find_data(data);
      if (!d || is_gpu_storage(d->storage)) return false;
      bool stable = sdfg_ptr_.empty() && d->kind == DataKind::Array &&
                    (!d->transient || d->alloc == DataDesc::Alloc::StateStruct);
      return !stable;
    };
    std::set<int> capture_only = capture_only_tasklets(s, st, sdfg_ptr_.empty());
    for (std::size_t i = 0; i < st.nodes.size(); ++i) {
      Node& n = *st.nodes[i];
      std::string np = walk::node_pointer(st, sp, i);
      if (n.scope_entry >= 0) continue;  // inside a kernel (device code) or a host map (refused below)
      if (!n.host_waits.empty()) refuse(np, fmt::format("node \"{}\" waits for the GPU on the host", n.label));
      switch (n.kind) {
        case NodeKind::Access:
        case NodeKind::MapExit:
          break;
        case NodeKind::MapEntry:
          if (!is_host_kernel(n)) refuse(np, fmt::format("map \"{}\" runs on the host", n.map.label));
          break;
        case NodeKind::Tasklet:
          if (capture_only.count(static_cast<int>(i)))
            capture_only_.push_back(&n);
          else if (!is_gpu_library_call(n))
            refuse(np, fmt::format("tasklet \"{}\" runs on the host", n.label));
          break;
        case NodeKind::NestedSDFG:
          sdfg(*n.sdfg, walk::nested_sdfg_pointer(np));
          break;
        case NodeKind::Library:
          SDFC_ASSERT(false, "library nodes are expanded before gpu-graph (expand-library-nodes)");
      }
    }
    for (std::size_t i = 0; i < st.edges.size(); ++i) {
      const DataEdge& e = st.edges[i];
      const Node &src = st.node(e.src), &dst = st.node(e.dst);
      if (src.kind != NodeKind::Access || dst.kind != NodeKind::Access || e.memlet.data.empty()) continue;
      if (src.scope_entry >= 0) continue;
      if (e.stream < 0 || unstable_host(src.data) || unstable_host(dst.data))
        refuse(walk::edge_pointer(st, sp, i),
               fmt::format("the copy {} -> {} is host code or reads or writes host memory whose address changes "
                           "between calls",
                           src.data, dst.data));
    }
  }
};

/// Whether block `b` queues GPU work (a kernel, a GPU library call or copy, a nested SDFG that does).
bool queues_gpu(const Block& b) {
  bool found = false;
  walk::for_each_block(b, "", [&](const Block& blk, const std::string&) {
    if (blk.kind != BlockKind::State) return;
    for (auto& n : blk.nodes)
      if (n->scope_entry < 0 &&
          (is_stream_node(*n) || (n->kind == NodeKind::NestedSDFG && n->sdfg && queues_gpu_work(*n->sdfg))))
        found = true;
    for (auto& e : blk.edges)
      if (e.stream >= 0 && blk.node(e.src).kind == NodeKind::Access && blk.node(e.dst).kind == NodeKind::Access)
        found = true;
  });
  return found;
}

/// Whether `b` leaves itself other than at its end: a return block, or a break/continue of a loop
/// around it (`loops`: loops entered inside `b` so far).
bool escapes(const Block& b, int loops = 0) {
  if (b.kind == BlockKind::Return) return true;
  if ((b.kind == BlockKind::Break || b.kind == BlockKind::Continue) && loops == 0) return true;
  int inner = loops + (b.kind == BlockKind::Loop ? 1 : 0);
  for (auto& c : b.blocks)
    if (escapes(*c, inner)) return true;
  for (auto& br : b.branches)
    if (escapes(*br.second, inner)) return true;
  return false;
}

/// Graph segments: the largest blocks of the root's control-flow tree (states, loops, regions,
/// branch bodies) that queue GPU work and whose host code passes the strict check. Each gets an id
/// and the key a replay must match: the call's arguments, the symbols the program assigns, and
/// the host values and per-call pointers of the root's transients.
class Planner {
 public:
  explicit Planner(SDFG& root) : root_(root), assigned_(assigned_symbols(root)) {
    for (auto& a : signature(root).args) key_.push_back(a.name);
  }

  void plan(Block& b, const std::string& bp, bool top = false) {
    if (!top && queues_gpu(b) && !escapes(b)) {
      try {
        Checker checker(true);
        checker.tree(root_, b, bp);
        checker.commit();
        std::vector<std::string> key = key_;
        for (auto& name : locals_read(b)) key.push_back(name);
        b.graph_segment = count_++;
        b.graph_key = std::move(key);
        return;
      } catch (const UserError&) {  // host work inside: look for segments in its blocks
      }
    }
    if (b.kind == BlockKind::State) return;
    for (std::size_t i = 0; i < b.blocks.size(); ++i) plan(*b.blocks[i], walk::block_pointer(bp, i));
    for (std::size_t k = 0; k < b.branches.size(); ++k) plan(*b.branches[k].second, walk::branch_pointer(bp, k));
  }

  int count() const { return count_; }

 private:
  /// What segment `b` bakes into its graph besides the arguments, which a call may change while
  /// it runs: the symbols the program assigns (loop variables included) that `b` mentions (any
  /// identifier in its IR dump, nested SDFGs and their symbol mappings included, or in the shape
  /// of a container it accesses: an over-approximation), and the root's transients whose value or
  /// pointer is a local of the call and that `b` accesses: host scalars (kernel arguments by
  /// value), per-call heap allocations, External workspaces. (The arena is held: stable.)
  std::vector<std::string> locals_read(const Block& b) const {
    std::set<std::string> accessed, computed;  // computed: by tasklets that run only at capture
    walk::for_each_block(b, "", [&](const Block& blk, const std::string&) {
      for (auto& n : blk.nodes)
        if (n->kind == NodeKind::Access) accessed.insert(n->data);
      for (auto& e : blk.edges)
        if (blk.node(e.src).graph_capture_only) computed.insert(blk.node(e.dst).data);
    });
    std::set<std::string> mentioned = identifiers_in(dump_block(b));
    std::vector<std::string> out;
    for (auto& [name, d] : root_.arrays) {
      if (!accessed.count(name) || computed.count(name)) continue;
      for (auto* exprs : {&d.shape, &d.strides, &d.offset})
        for (auto& e : *exprs) mentioned.merge(identifiers_in(print_expr(e, Dialect::Plain)));
      mentioned.merge(identifiers_in(print_expr(d.total_size, Dialect::Plain)));
      if (d.transient && d.place == DataDesc::Place::Call &&
          (d.alloc == DataDesc::Alloc::HostValue || is_heap_alloc(d.alloc) ||
           (d.alloc == DataDesc::Alloc::StateStruct && d.lifetime == Lifetime::External)))
        out.push_back(name);
    }
    std::vector<std::string> symbols;
    for (auto& s : assigned_)
      if (mentioned.count(s)) symbols.push_back(s);
    symbols.insert(symbols.end(), out.begin(), out.end());
    return symbols;
  }

  SDFG& root_;
  std::vector<std::string> assigned_;
  std::vector<std::string> key_;
  int count_ = 0;
};

/// The call's arena is held by the instance between calls: a graph then keeps its kernels'
/// pointers (no memory nodes, so a new capture updates the graph in place).
void hold_arena(SDFG& sdfg) {
  if (sdfg.arena.members.empty()) return;
  sdfg.arena.held = true;
  sdfg.arena.stream_ordered = false;
}

}  // namespace

void decide_gpu_graph(SDFG& sdfg, const CompileOptions& options) {
  sdfg.gpu_graph = false;
  sdfg.graph_segments = 0;
  auto clear = [](Block& b, const std::string&) {
    b.graph_host_work = false;
    b.graph_segment = -1;
    b.graph_key.clear();
  };
  walk::for_each_block(sdfg.root, "", clear);
  walk::for_each_sdfg(sdfg, "", [](SDFG& s, const std::string&) {
    walk::for_each_node(s, "", [](Block&, int, Node& n, const std::string&) { n.graph_capture_only = false; });
  });
  if (!options.gpu_graph || options.target == Target::CPU) return;
  try {  // the whole call as one graph
    Checker::allocations(sdfg, "", nullptr, DataDesc::Place::Call);
    Checker checker;
    checker.sdfg(sdfg, "");
    checker.commit();
    sdfg.gpu_graph = true;
  } catch (const UserError& whole) {  // else graph segments between the host work
    walk::for_each_block(sdfg.root, "", clear);
    Planner planner(sdfg);
    planner.plan(sdfg.root, "", true);
    if (planner.count() == 0) {
      Diagnostic d = whole.diagnostic();
      d.message +=
          "; a replayed graph runs no host code, and no state, loop or branch of this program queues GPU "
          "work without such host work, so no part of it can be recorded as a graph; compile without "
          "--gpu-graph";
      throw UserError(d);
    }
    sdfg.graph_segments = planner.count();
  }
  hold_arena(sdfg);
}

}  // namespace sdfc
