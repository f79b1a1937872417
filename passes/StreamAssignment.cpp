#include "passes/StreamAssignment.h"

#include "analysis/GpuOps.h"
#include "ir/Walk.h"

namespace sdfc {
namespace {

void assign(SDFG& sdfg, int streams);

/// The streams of one state's GPU operations (nested SDFGs called from the host first).
void assign_state(SDFG& sdfg, Block& b, int streams) {
  {
    for (auto& n : b.nodes)
      if (n->kind == NodeKind::NestedSDFG && n->scope_entry < 0) assign(*n->sdfg, streams);
    if (streams == 0) {
      for (auto& n : b.nodes)
        if (is_stream_node(*n) || (n->kind == NodeKind::NestedSDFG && n->scope_entry < 0 && queues_gpu_work(*n->sdfg)))
          n->stream = 0;
      for (auto& e : b.edges)
        if (is_gpu_copy(sdfg, b, e)) e.stream = 0;
    } else {
      std::vector<GpuOp> ops = gpu_ops(sdfg, b);
      std::vector<int> stream_of(ops.size(), 0);
      std::vector<int> tail(static_cast<std::size_t>(streams), -1);  // last op on each stream
      int next = 0;
      for (std::size_t i = 0; i < ops.size(); ++i) {
        const GpuOp& op = ops[i];
        std::set<int> preds;  // earlier operations this one conflicts with
        for (std::size_t q = 0; q < i; ++q)
          for (const Touch& a : ops[q].touches)
            for (const Touch& b : op.touches)
              if (conflict(a, b)) preds.insert(static_cast<int>(q));
        int s = -1;
        if (op.node >= 0 && b.node(op.node).kind == NodeKind::NestedSDFG) {
          s = 0;
        } else {
          for (int q : preds) {
            int t = stream_of[static_cast<std::size_t>(q)];
            if (tail[static_cast<std::size_t>(t)] == q && (s < 0 || t < s)) s = t;
          }
          if (s < 0) s = next++ % streams;
        }
        stream_of[i] = s;
        tail[static_cast<std::size_t>(s)] = static_cast<int>(i);
        if (op.node >= 0)
          b.node(op.node).stream = s;
        else
          b.edges[static_cast<std::size_t>(op.edge)].stream = s;
      }
    }
  }
}

void assign(SDFG& sdfg, int streams) {
  walk::for_each_state(sdfg, "", [&](Block& st, const std::string&) { assign_state(sdfg, st, streams); });
}

}  // namespace

void assign_streams(SDFG& sdfg, const CompileOptions& options) {
  if (options.target == Target::CPU) return;
  assign(sdfg, options.gpu_streams);
}

}  // namespace sdfc
