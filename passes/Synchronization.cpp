#include "passes/Synchronization.h"

#include <algorithm>
#include <map>
#include <set>

#include "ir/Signature.h"
#include "passes/StreamAssignment.h"

namespace sdfc {
namespace {

/// Host containers that queued GPU work may still touch.
struct Pending {
  std::set<std::string> written;  ///< GPU work may still write these host containers
  std::set<std::string> read;     ///< GPU work may still read these host containers
  bool operator==(const Pending& o) const { return written == o.written && read == o.read; }
  void merge(const Pending& o) {
    written.insert(o.written.begin(), o.written.end());
    read.insert(o.read.begin(), o.read.end());
  }
  bool empty() const { return written.empty() && read.empty(); }
};

bool intersects(const std::set<std::string>& a, const std::set<std::string>& b) {
  for (auto& x : a)
    if (b.count(x)) return true;
  return false;
}

class Synchronizer {
 public:
  explicit Synchronizer(SDFG& sdfg) : sdfg_(sdfg) {}
  bool gpu_work = false;  ///< the SDFG queues GPU work somewhere

  Pending region(Block& r, Pending in) {
    int n = static_cast<int>(r.blocks.size());
    if (n == 0) return in;
    std::vector<std::vector<InterstateEdge*>> preds(static_cast<std::size_t>(n));
    for (auto& e : r.cf_edges) preds[static_cast<std::size_t>(e.dst)].push_back(&e);
    int start = std::max(0, start_of(r));
    std::vector<Pending> out(static_cast<std::size_t>(n));
    // Iterate to a fixpoint: the sets only grow, and are bounded by the containers.
    for (int round = 0; round < 2 * n + 4; ++round) {
      bool changed = false;
      for (int b = 0; b < n; ++b) {
        Pending bin = b == start ? in : Pending{};
        for (InterstateEdge* e : preds[static_cast<std::size_t>(b)]) {
          Pending along = out[static_cast<std::size_t>(e->src)];
          if (!along.empty() && reads_pending(edge_reads(*e), along)) {
            e->host_waits = {0};
            along = {};
          }
          bin.merge(along);
        }
        Pending bout = block(*r.blocks[static_cast<std::size_t>(b)], bin);
        if (!(bout == out[static_cast<std::size_t>(b)])) {
          out[static_cast<std::size_t>(b)] = bout;
          changed = true;
        }
      }
      if (!changed) break;
    }
    // What leaves the region: blocks without successors.
    Pending result;
    std::vector<bool> has_succ(static_cast<std::size_t>(n), false);
    for (auto& e : r.cf_edges) has_succ[static_cast<std::size_t>(e.src)] = true;
    for (int b = 0; b < n; ++b)
      if (!has_succ[static_cast<std::size_t>(b)]) result.merge(out[static_cast<std::size_t>(b)]);
    return result;
  }

 private:
  SDFG& sdfg_;

  std::set<std::string> code_reads(const std::string& code) const {
    std::set<std::string> out;
    for (auto& id : identifiers_in(code))
      if (sdfg_.find_data(id)) out.insert(id);
    return out;
  }
  std::set<std::string> edge_reads(const InterstateEdge& e) const {
    std::set<std::string> r = e.unconditional() ? std::set<std::string>{} : code_reads(e.condition.code);
    for (auto& [k, v] : e.assignments) {
      auto x = code_reads(v);
      r.insert(x.begin(), x.end());
    }
    return r;
  }
  static bool reads_pending(const std::set<std::string>& reads, const Pending& p) { return intersects(reads, p.written); }

  bool host_data(const std::string& name) const {
    const DataDesc* d = sdfg_.find_data(name);
    return d && !is_gpu_storage(d->storage);
  }

  Pending block(Block& b, Pending in) {
    switch (b.kind) {
      case BlockKind::State: return state(b, in);
      case BlockKind::Region: return region(b, in);
      case BlockKind::Conditional: {
        std::set<std::string> reads;
        for (auto& [c, body] : b.branches)
          if (c) {
            auto x = code_reads(c->code);
            reads.insert(x.begin(), x.end());
          }
        if (reads_pending(reads, in)) {
          b.host_waits = {0};
          in = {};
        }
        Pending out;
        bool has_else = false;
        for (auto& [c, body] : b.branches) {
          has_else |= !c.has_value();
          out.merge(region(*body, in));
        }
        if (!has_else) out.merge(in);
        return out;
      }
      case BlockKind::Loop: {
        std::set<std::string> reads = code_reads(b.loop_condition.code);
        for (auto* st : {&b.init_statement, &b.update_statement})
          if (*st) {
            auto x = code_reads((*st)->code);
            reads.insert(x.begin(), x.end());
          }
        // The body's work is pending when the condition is evaluated again: iterate.
        Pending head = in;
        for (int round = 0; round < 8; ++round) {
          Pending at_test = head;
          if (reads_pending(reads, at_test)) {
            b.host_waits = {0};
            at_test = {};
          }
          Pending body_out = region(b, at_test);
          Pending next = in;
          next.merge(body_out);
          if (next == head) break;
          head = next;
        }
        if (!b.host_waits.empty()) return {};
        return head;
      }
      default: return in;
    }
  }

  /// Reads and writes of host code at a top-level node (its scope's data for maps).
  void host_access(const Block& st, int id, std::set<std::string>& reads, std::set<std::string>& writes) const {
    const Node& n = st.node(id);
    for (const DataEdge* e : in_[static_cast<std::size_t>(id)])
      if (!e->memlet.data.empty()) reads.insert(e->memlet.data);
    for (int from : {id, n.kind == NodeKind::MapEntry ? n.scope_exit : -1}) {
      if (from < 0) continue;
      for (const DataEdge* e : out_[static_cast<std::size_t>(from)])
        if (!e->memlet.data.empty()) writes.insert(e->memlet.data);
    }
  }

  // Edges of the state being analysed, by endpoint (lookups per node stay linear in big states).
  std::vector<std::vector<const DataEdge*>> in_, out_;

  Pending state(Block& st, Pending p) {
    // Top-level nodes in a topological order (ids break ties), as the code generator prints them.
    int n = static_cast<int>(st.nodes.size());
    in_.assign(static_cast<std::size_t>(n), {});
    out_.assign(static_cast<std::size_t>(n), {});
    for (auto& e : st.edges) {
      out_[static_cast<std::size_t>(e.src)].push_back(&e);
      in_[static_cast<std::size_t>(e.dst)].push_back(&e);
    }
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
    while (!ready.empty()) {
      int v = *ready.begin();
      ready.erase(ready.begin());
      node(st, v, p);
      for (int s : succ[static_cast<std::size_t>(v)])
        if (--indeg[static_cast<std::size_t>(s)] == 0) ready.insert(s);
    }
    return p;
  }

  void wait(Node& n, Pending& p) {
    n.host_waits = {0};
    p = {};
  }

  void node(Block& st, int id, Pending& p) {
    Node& n = st.node(id);
    switch (n.kind) {
      case NodeKind::Access:
        for (const DataEdge* e : out_[static_cast<std::size_t>(id)]) {
          if (st.node(e->dst).kind != NodeKind::Access || e->memlet.data.empty()) continue;
          const std::string& src = n.data;
          const std::string& dst = st.node(e->dst).data;
          if (e->stream >= 0) {  // a copy on the stream
            gpu_work = true;
            if (host_data(src)) p.read.insert(src);
            if (host_data(dst)) p.written.insert(dst);
          } else {  // a host copy
            if (p.written.count(src) || p.written.count(dst) || p.read.count(dst)) wait(n, p);
          }
        }
        break;
      case NodeKind::MapEntry:
        if (n.stream >= 0) {  // a kernel launch
          gpu_work = true;
          std::set<std::string> reads, writes;
          host_access(st, id, reads, writes);
          std::set<std::string> by_value;
          for (auto& r : reads)
            if (host_data(r) && sdfg_.find_data(r)->kind == DataKind::Scalar) by_value.insert(r);
          if (intersects(by_value, p.written)) wait(n, p);
          for (auto& r : reads)
            if (host_data(r) && !by_value.count(r)) p.read.insert(r);
          for (auto& w : writes)
            if (host_data(w)) p.written.insert(w);
          break;
        }
        [[fallthrough]];
      case NodeKind::Tasklet: {
        std::set<std::string> reads, writes;
        host_access(st, id, reads, writes);
        if (intersects(reads, p.written) || intersects(writes, p.written) || intersects(writes, p.read)) wait(n, p);
        break;
      }
      case NodeKind::NestedSDFG: {
        if (!p.empty()) wait(n, p);
        Synchronizer inner(*n.sdfg);
        Pending left = inner.region(n.sdfg->root, {});
        if (inner.gpu_work) {
          gpu_work = true;
          if (!left.empty()) n.sdfg->gpu_exit_sync = true;  // the nested body waits at its end
        }
        break;
      }
      case NodeKind::MapExit: break;
    }
  }
};

}  // namespace

void synchronize(SDFG& sdfg, const CompileOptions& options) {
  if (options.target == Target::CPU) return;
  Synchronizer s(sdfg);
  s.region(sdfg.root, {});
  sdfg.gpu_exit_sync = s.gpu_work;
}

}  // namespace sdfc
