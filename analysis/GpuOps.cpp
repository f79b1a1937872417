#include "analysis/GpuOps.h"

#include <algorithm>
#include <map>

#include "ir/Memlets.h"

namespace sdfc {
namespace {

bool block_queues_gpu_work(const SDFG& sdfg, const Block& b) {
  if (b.kind == BlockKind::State) {
    for (auto& n : b.nodes) {
      if (is_stream_node(*n)) return true;
      if (n->kind == NodeKind::NestedSDFG && n->scope_entry < 0 && queues_gpu_work(*n->sdfg)) return true;
    }
    for (auto& e : b.edges)
      if (is_gpu_copy(sdfg, b, e)) return true;
  }
  for (auto& c : b.blocks)
    if (block_queues_gpu_work(sdfg, *c)) return true;
  for (auto& [cond, body] : b.branches)
    if (block_queues_gpu_work(sdfg, *body)) return true;
  return false;
}

}  // namespace

bool is_host_kernel(const Node& n) {
  return n.kind == NodeKind::MapEntry && n.map.schedule == ScheduleType::GPU_Device && n.scope_entry < 0;
}

int enclosing_kernel(const Block& st, int v) {
  for (int e = v; e >= 0; e = st.node(e).scope_entry) {
    const Node& n = st.node(e);
    if (n.kind == NodeKind::MapEntry && n.map.schedule == ScheduleType::GPU_Device) return e;
  }
  return -1;
}

bool is_gpu_library_call(const Node& n) {
  return n.kind == NodeKind::Tasklet && n.library_call == "cublas" && n.scope_entry < 0;
}

bool is_gpu_copy(const SDFG& sdfg, const Block& st, const DataEdge& e) {
  const Node& s = st.node(e.src);
  const Node& d = st.node(e.dst);
  if (s.kind != NodeKind::Access || d.kind != NodeKind::Access || e.memlet.data.empty()) return false;
  const DataDesc* a = sdfg.find_data(s.data);
  const DataDesc* b = sdfg.find_data(d.data);
  return a && b && (is_gpu_storage(a->storage) || is_gpu_storage(b->storage));
}

bool queues_gpu_work(const SDFG& sdfg) {
  return block_queues_gpu_work(sdfg, sdfg.root);
}

bool may_overlap(const std::optional<Range>& a, const std::optional<Range>& b) {
  if (!a || !b || a->size() != b->size()) return true;
  for (std::size_t k = 0; k < a->size(); ++k) {
    auto gap = [](const Expr& later_start, const Expr& earlier_end) {
      auto c = as_constant(simplify(make_binary(BinOp::Sub, later_start, earlier_end)));
      return c && *c > 0;
    };
    if (gap((*b)[k].start, (*a)[k].end) || gap((*a)[k].start, (*b)[k].end)) return false;
  }
  return true;
}

bool conflict(const Touch& a, const Touch& b) {
  return a.data == b.data && (a.write || b.write) && may_overlap(a.subset, b.subset);
}

std::vector<Touch> copy_touches(const SDFG& sdfg, const Block& st, const DataEdge& e) {
  EdgeSubsets ends = edge_subsets(sdfg, st, e);
  std::optional<Range> src_part, dst_part;
  if (ends.error.empty()) {
    src_part = ends.src;
    dst_part = ends.dst;
  }
  if (ends.src_data == ends.dst_data) src_part = dst_part = std::nullopt;  // a copy inside one container: all of it
  return {Touch{ends.src_data, src_part, false}, Touch{ends.dst_data, dst_part, true}};
}

std::vector<Touch> node_touches(const Block& st, int id) {
  const Node& n = st.node(id);
  int out_from = n.kind == NodeKind::MapEntry ? n.scope_exit : id;
  std::vector<Touch> out;
  for (const DataEdge& e : st.edges) {
    if (e.memlet.data.empty()) continue;
    if (e.dst == id) out.push_back(Touch{e.memlet.data, e.memlet.subset, false});
    if (e.src == out_from) out.push_back(Touch{e.memlet.data, e.memlet.subset, true});
  }
  return out;
}

std::vector<int> scope_order(const Block& st, int scope) {
  int n = static_cast<int>(st.nodes.size());
  // The node that stands for `v` among the direct children of `scope` (-1 = none): a map exit is
  // its entry; a node deeper inside is the child scope that holds it.
  auto representative = [&](int v) {
    if (st.node(v).kind == NodeKind::MapExit) v = st.node(v).scope_entry;
    while (v >= 0 && st.node(v).scope_entry != scope) v = st.node(v).scope_entry;
    return v;
  };
  std::vector<int> indeg(static_cast<std::size_t>(n), 0);
  std::vector<std::set<int>> succ(static_cast<std::size_t>(n));
  for (auto& e : st.edges) {
    int a = representative(e.src), b = representative(e.dst);
    if (a < 0 || b < 0 || a == b) continue;
    if (succ[static_cast<std::size_t>(a)].insert(b).second) indeg[static_cast<std::size_t>(b)]++;
  }
  std::set<int> ready;
  for (int i = 0; i < n; ++i)
    if (indeg[static_cast<std::size_t>(i)] == 0 && representative(i) == i) ready.insert(i);
  std::vector<int> order;
  while (!ready.empty()) {
    int v = *ready.begin();
    ready.erase(ready.begin());
    order.push_back(v);
    for (int s : succ[static_cast<std::size_t>(v)])
      if (--indeg[static_cast<std::size_t>(s)] == 0) ready.insert(s);
  }
  return order;
}

std::vector<int> issue_order(const Block& st) {
  return scope_order(st, -1);
}

std::vector<GpuOp> gpu_ops(const SDFG& sdfg, const Block& st) {
  std::vector<GpuOp> ops;
  for (int v : issue_order(st)) {
    const Node& n = st.node(v);
    if (n.kind == NodeKind::Access) {
      // Copies are issued at their source access node, in edge order.
      for (std::size_t i = 0; i < st.edges.size(); ++i) {
        const DataEdge& e = st.edges[i];
        if (e.src != v || !is_gpu_copy(sdfg, st, e)) continue;
        GpuOp op;
        op.edge = static_cast<int>(i);
        op.reads.insert(n.data);
        op.writes.insert(st.node(e.dst).data);
        op.touches = copy_touches(sdfg, st, e);
        ops.push_back(std::move(op));
      }
    } else if (is_stream_node(n) || (n.kind == NodeKind::NestedSDFG && queues_gpu_work(*n.sdfg))) {
      GpuOp op;
      op.node = v;
      op.touches = node_touches(st, v);
      for (const Touch& t : op.touches) (t.write ? op.writes : op.reads).insert(t.data);
      if (n.kind == NodeKind::NestedSDFG)  // a nested SDFG: whole containers
        for (Touch& t : op.touches) t.subset = std::nullopt;
      ops.push_back(std::move(op));
    }
  }
  return ops;
}

}  // namespace sdfc
