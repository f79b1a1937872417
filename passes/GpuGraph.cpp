#include "passes/GpuGraph.h"

#include <fmt/format.h>

#include "analysis/GpuOps.h"
#include "ir/Diagnostic.h"
#include "ir/Signature.h"
#include "ir/Walk.h"

namespace sdfc {
namespace {

[[noreturn]] void refuse(const std::string& pointer, const std::string& what) {
  throw UserError(Diagnostic{"", pointer, 0, 0,
                             fmt::format("--gpu-graph: {}; a replayed graph runs no host code, and sdfc does not "
                                         "split a call into graph segments yet; compile without --gpu-graph",
                                         what)});
}

class Checker {
 public:
  void sdfg(SDFG& s, const std::string& ptr) {
    if (s.gpu_exit_sync && !ptr.empty()) refuse(ptr, "the nested SDFG waits for the GPU on the host at its end");
    tree(s, s.root, ptr);
  }

 private:
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
      try {
        tree(s, body, walk::branch_pointer(bp, k));
      } catch (const UserError&) {
        body.graph_host_work = true;
      }
    }
  }

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
    auto host = [&](const std::string& data) {
      const DataDesc* d = s.find_data(data);
      return d && !is_gpu_storage(d->storage);
    };
    for (std::size_t i = 0; i < st.nodes.size(); ++i) {
      Node& n = *st.nodes[i];
      std::string np = walk::node_pointer(sp, i);
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
          if (!is_gpu_library_call(n)) refuse(np, fmt::format("tasklet \"{}\" runs on the host", n.label));
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
      if (e.stream < 0 || host(src.data) || host(dst.data))
        refuse(walk::edge_pointer(sp, i),
               fmt::format("the copy {} -> {} reads or writes host memory", src.data, dst.data));
    }
  }
};

}  // namespace

void decide_gpu_graph(SDFG& sdfg, const CompileOptions& options) {
  sdfg.gpu_graph = false;
  if (!options.gpu_graph || options.target == Target::CPU) return;
  Checker().sdfg(sdfg, "");
  sdfg.gpu_graph = true;
}

}  // namespace sdfc
