#include "analysis/GpuOps.h"

#include <algorithm>
#include <functional>
#include <map>
#include <queue>

#include "ir/Memlets.h"
#include "ir/Signature.h"

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

bool is_stream_tasklet(const Node& n) {
  return n.kind == NodeKind::Tasklet && n.scope_entry < 0 && n.code.language == Language::CPP &&
         n.library_call.empty() && n.code.code.find("__dace_current_stream") != std::string::npos &&
         identifiers_in(n.code.code).count("__dace_current_stream") > 0;
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

ScopeIndex::ScopeIndex(const Block& st) : children(st.nodes.size() + 1), in(st.nodes.size()), out(st.nodes.size()) {
  for (int v = 0; v < static_cast<int>(st.nodes.size()); ++v)
    if (st.node(v).kind != NodeKind::MapExit)
      children[static_cast<std::size_t>(st.node(v).scope_entry + 1)].push_back(v);
  for (auto& e : st.edges) {
    if (e.src >= 0 && e.src < static_cast<int>(st.nodes.size())) out[static_cast<std::size_t>(e.src)].push_back(&e);
    if (e.dst >= 0 && e.dst < static_cast<int>(st.nodes.size())) in[static_cast<std::size_t>(e.dst)].push_back(&e);
  }
}

std::vector<int> ScopeIndex::scope_nodes(const Block& st, int entry) const {
  if (entry < 0) {
    std::vector<int> all(st.nodes.size());
    for (std::size_t v = 0; v < all.size(); ++v) all[v] = static_cast<int>(v);
    return all;
  }
  std::vector<int> nodes{entry};
  for (std::size_t k = 0; k < nodes.size(); ++k) {
    int v = nodes[k];
    if (st.node(v).kind != NodeKind::MapEntry) continue;
    auto& c = children[static_cast<std::size_t>(v + 1)];
    nodes.insert(nodes.end(), c.begin(), c.end());
    if (st.node(v).scope_exit >= 0) nodes.push_back(st.node(v).scope_exit);
  }
  return nodes;
}

std::vector<std::string> enclosing_params(const Block& st, int id) {
  std::vector<std::string> ps;
  for (int s = st.node(id).scope_entry; s >= 0; s = st.node(s).scope_entry)
    for (auto& p : st.node(s).map.params) ps.push_back(p);
  return ps;
}

std::vector<int> scope_order(const Block& st, int scope) {
  return scope_order(st, scope, ScopeIndex(st));
}

std::vector<int> scope_order(const Block& st, int scope, const ScopeIndex& ix) {
  // The node that stands for `v` among the direct children of `scope` (-1 = none): a map exit is
  // its entry; a node deeper inside is the child scope that holds it.
  auto representative = [&](int v) {
    if (st.node(v).kind == NodeKind::MapExit) v = st.node(v).scope_entry;
    while (v >= 0 && st.node(v).scope_entry != scope) v = st.node(v).scope_entry;
    return v;
  };
  // The direct children (in id order), numbered locally, and the arcs between them, each once:
  // the edges leaving nodes inside the scope for other nodes inside it.
  const std::vector<int>& members = ix.children[static_cast<std::size_t>(scope + 1)];
  std::map<int, int> local;
  for (std::size_t k = 0; k < members.size(); ++k) local[members[k]] = static_cast<int>(k);
  std::vector<std::pair<int, int>> arcs;
  for (int u : ix.scope_nodes(st, scope)) {
    if (u == scope) continue;  // the scope's entry is outside it
    int a = representative(u);
    if (a < 0) continue;  // the scope's own exit
    for (const DataEdge* e : ix.out[static_cast<std::size_t>(u)]) {
      int b = representative(e->dst);
      if (b < 0 || a == b) continue;
      arcs.emplace_back(local.at(a), local.at(b));
    }
  }
  std::sort(arcs.begin(), arcs.end());
  arcs.erase(std::unique(arcs.begin(), arcs.end()), arcs.end());
  std::size_t m = members.size();
  std::vector<int> indeg(m, 0);
  std::vector<std::size_t> first(m + 1, 0);  // arcs of child k: [first[k], first[k + 1])
  for (auto& [a, b] : arcs) {
    ++indeg[static_cast<std::size_t>(b)];
    ++first[static_cast<std::size_t>(a) + 1];
  }
  for (std::size_t k = 0; k < m; ++k) first[k + 1] += first[k];
  // Kahn's algorithm, the smallest ready node id first (children are numbered in id order).
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (std::size_t k = 0; k < m; ++k)
    if (indeg[k] == 0) ready.push(static_cast<int>(k));
  std::vector<int> order;
  order.reserve(m);
  while (!ready.empty()) {
    int k = ready.top();
    ready.pop();
    order.push_back(members[static_cast<std::size_t>(k)]);
    for (std::size_t i = first[static_cast<std::size_t>(k)]; i < first[static_cast<std::size_t>(k) + 1]; ++i) {
      int to = arcs[i].second;
      if (--indeg[static_cast<std::size_t>(to)] == 0) ready.push(to);
    }
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
