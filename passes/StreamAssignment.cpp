#include "passes/StreamAssignment.h"

#include <algorithm>
#include <map>

namespace sdfc {
namespace {

/// Containers read and written by a top-level node (a map: its whole scope, through the edges
/// into its entry and out of its exit; a nested SDFG: its connector edges).
void node_access(const Block& st, int id, std::set<std::string>& reads, std::set<std::string>& writes) {
  const Node& n = st.node(id);
  int out_from = n.kind == NodeKind::MapEntry ? n.scope_exit : id;
  for (const DataEdge& e : st.edges) {
    if (e.memlet.data.empty()) continue;
    if (e.dst == id) reads.insert(e.memlet.data);
    if (e.src == out_from) writes.insert(e.memlet.data);
  }
}

bool is_kernel(const Node& n) {
  return n.kind == NodeKind::MapEntry && n.map.schedule == ScheduleType::GPU_Device && n.scope_entry < 0;
}

void assign(SDFG& sdfg, Block& b, int streams) {
  if (b.kind == BlockKind::State) {
    for (auto& n : b.nodes)
      if (n->kind == NodeKind::NestedSDFG && n->scope_entry < 0) assign(*n->sdfg, n->sdfg->root, streams);
    if (streams == 0) {
      for (auto& n : b.nodes)
        if (is_kernel(*n) || (n->kind == NodeKind::NestedSDFG && n->scope_entry < 0 && queues_gpu_work(*n->sdfg))) n->stream = 0;
      for (auto& e : b.edges)
        if (is_gpu_copy(sdfg, b, e)) e.stream = 0;
    } else {
      std::vector<GpuOp> ops = gpu_ops(sdfg, b);
      std::vector<int> stream_of(ops.size(), 0);
      std::vector<int> tail(static_cast<std::size_t>(streams), -1);  // last op on each stream
      std::map<std::string, int> writer;                              // last op writing a container
      std::map<std::string, std::vector<int>> readers;                // ops reading it since
      int next = 0;
      for (std::size_t i = 0; i < ops.size(); ++i) {
        const GpuOp& op = ops[i];
        std::set<int> preds;
        for (auto& r : op.reads)
          if (writer.count(r)) preds.insert(writer[r]);
        for (auto& w : op.writes) {
          if (writer.count(w)) preds.insert(writer[w]);
          for (int q : readers[w]) preds.insert(q);
        }
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
        for (auto& r : op.reads) readers[r].push_back(static_cast<int>(i));
        for (auto& w : op.writes) {
          writer[w] = static_cast<int>(i);
          readers[w].clear();
        }
        if (op.node >= 0) b.node(op.node).stream = s;
        else b.edges[static_cast<std::size_t>(op.edge)].stream = s;
      }
    }
  }
  for (auto& c : b.blocks) assign(sdfg, *c, streams);
  for (auto& [cond, body] : b.branches) assign(sdfg, *body, streams);
}

bool block_queues_gpu_work(const SDFG& sdfg, const Block& b) {
  if (b.kind == BlockKind::State) {
    for (auto& n : b.nodes) {
      if (is_kernel(*n)) return true;
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

bool is_gpu_copy(const SDFG& sdfg, const Block& st, const DataEdge& e) {
  const Node& s = st.node(e.src);
  const Node& d = st.node(e.dst);
  if (s.kind != NodeKind::Access || d.kind != NodeKind::Access || e.memlet.data.empty()) return false;
  const DataDesc* a = sdfg.find_data(s.data);
  const DataDesc* b = sdfg.find_data(d.data);
  return a && b && (is_gpu_storage(a->storage) || is_gpu_storage(b->storage));
}

bool queues_gpu_work(const SDFG& sdfg) { return block_queues_gpu_work(sdfg, sdfg.root); }

std::vector<int> issue_order(const Block& st) {
  int n = static_cast<int>(st.nodes.size());
  std::vector<int> indeg(static_cast<std::size_t>(n), 0);
  std::vector<std::vector<int>> succ(static_cast<std::size_t>(n));
  auto top = [&](int v) {
    if (st.node(v).kind == NodeKind::MapExit) v = st.node(v).scope_entry;
    while (v >= 0 && st.node(v).scope_entry >= 0) v = st.node(v).scope_entry;
    return v;
  };
  for (auto& e : st.edges) {
    int a = top(e.src), b = top(e.dst);
    if (a < 0 || b < 0 || a == b) continue;
    succ[static_cast<std::size_t>(a)].push_back(b);
    indeg[static_cast<std::size_t>(b)]++;
  }
  std::set<int> ready;
  for (int i = 0; i < n; ++i)
    if (indeg[static_cast<std::size_t>(i)] == 0 && top(i) == i) ready.insert(i);
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
        ops.push_back(std::move(op));
      }
    } else if (is_kernel(n) || (n.kind == NodeKind::NestedSDFG && queues_gpu_work(*n.sdfg))) {
      GpuOp op;
      op.node = v;
      node_access(st, v, op.reads, op.writes);
      ops.push_back(std::move(op));
    }
  }
  return ops;
}

void assign_streams(SDFG& sdfg, const CompileOptions& options) {
  if (options.target == Target::CPU) return;
  assign(sdfg, sdfg.root, options.gpu_streams);
}

}  // namespace sdfc
