#include "passes/FuseMaps.h"

#include <algorithm>
#include <deque>
#include <set>
#include <string>
#include <vector>

#include "ir/Signature.h"
#include "ir/Walk.h"

namespace sdfc {
namespace {

bool same_range(const Range& a, const Range& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t d = 0; d < a.size(); ++d)
    if (!same_value(a[d].start, b[d].start) || !same_value(a[d].end, b[d].end) || !same_value(a[d].step, b[d].step) ||
        !same_value(a[d].tile, b[d].tile))
      return false;
  return true;
}

/// Whether point subset `s` maps the map's points one to one onto elements: every dimension a
/// single index, each parameter (plus a term free of parameters) alone in one dimension, every
/// parameter used.
bool injective_point(const Range& s, const std::vector<std::string>& params) {
  std::set<std::string> ps(params.begin(), params.end()), used;
  for (auto& d : s) {
    if (!same_value(d.start, d.end)) return false;
    auto p = shifted_parameter(d.start, ps);
    if (!p || (!p->empty() && !used.insert(*p).second)) return false;
  }
  return used.size() == ps.size();
}

bool plain_memlet(const Memlet& m) {
  return !m.data.empty() && m.subset && !m.other_subset && !m.wcr && !m.dynamic;
}

/// A connector name of `prefix` + `base` not yet used by node `n` (on either side).
std::string fresh_connector(const Node& n, const std::string& base) {
  for (int k = 0;; ++k) {
    std::string b = k == 0 ? base : base + "_" + std::to_string(k);
    if (!n.find_in("IN_" + b) && !n.find_out("OUT_" + b)) return b;
  }
}

/// Adds to scope node `to` a fresh passage (IN_x and OUT_x) for passage `old` of `from`, with its
/// type; returns x.
std::string move_passage(const Node& from, Node& to, const std::string& old) {
  std::string conn = fresh_connector(to, old);
  const Connector* c = from.find_in("IN_" + old);
  if (!c) c = from.find_out("OUT_" + old);
  auto type = c ? c->dtype : std::nullopt;
  to.in_connectors.push_back({"IN_" + conn, type});
  to.out_connectors.push_back({"OUT_" + conn, type});
  return conn;
}

void erase_connector(std::vector<Connector>& cs, const std::string& name) {
  cs.erase(std::remove_if(cs.begin(), cs.end(), [&](const Connector& c) { return c.name == name; }), cs.end());
}

class Fuser {
 public:
  Fuser(SDFG& sdfg) : sdfg_(sdfg), interstate_(interstate_names(sdfg)) {
    walk::for_each_state(sdfg_, "", [&](const Block& st, const std::string&) {
      for (auto& n : st.nodes)
        if (n->kind == NodeKind::Access) ++access_nodes_[n->data];
      for (auto& e : st.edges)
        if (!e.memlet.data.empty()) ++memlets_[e.memlet.data];
    });
  }

  void run() {
    walk::for_each_state(sdfg_, "", [&](Block& st, const std::string&) {
      while (fuse_one(st)) {
      }
    });
  }

 private:
  SDFG& sdfg_;
  std::set<std::string> interstate_;
  std::map<std::string, int> access_nodes_, memlets_;

  /// One transient between the maps, with the edges fusion rewrites.
  struct Link {
    int node = -1;
    std::size_t outer_write = 0, inner_write = 0;
    std::vector<std::size_t> outer_reads, inner_reads;
  };

  bool fuse_one(Block& st) {
    std::vector<int> maps;
    for (int v = 0; v < static_cast<int>(st.nodes.size()); ++v)
      if (st.node(v).kind == NodeKind::MapEntry && st.node(v).scope_entry < 0) maps.push_back(v);
    for (int a : maps)
      for (int b : maps)
        if (a != b && try_fuse(st, a, b)) return true;
    return false;
  }

  std::vector<std::size_t> in_edges(const Block& st, int v) const {
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < st.edges.size(); ++i)
      if (st.edges[i].dst == v) out.push_back(i);
    return out;
  }
  std::vector<std::size_t> out_edges(const Block& st, int v) const {
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < st.edges.size(); ++i)
      if (st.edges[i].src == v) out.push_back(i);
    return out;
  }

  bool compatible(const Block& st, int a, int b) const {
    const MapInfo &ma = st.node(a).map, &mb = st.node(b).map;
    if (ma.schedule != mb.schedule || ma.params != mb.params || !same_range(ma.range, mb.range) ||
        ma.gpu_block_size != mb.gpu_block_size)
      return false;
    for (int e : {a, b})
      for (auto i : in_edges(st, e))
        if (st.edges[i].dst_conn && is_dynamic_range_input(*st.edges[i].dst_conn)) return false;
    return true;
  }

  /// The edge into scope node `v` through connector `conn` (inner side of an exit, outer of an entry).
  std::vector<std::size_t> edges_into(const Block& st, int v, const std::string& conn) const {
    std::vector<std::size_t> out;
    for (auto i : in_edges(st, v))
      if (st.edges[i].dst_conn == conn) out.push_back(i);
    return out;
  }
  std::vector<std::size_t> edges_out_of(const Block& st, int v, const std::string& conn) const {
    std::vector<std::size_t> out;
    for (auto i : out_edges(st, v))
      if (st.edges[i].src_conn == conn) out.push_back(i);
    return out;
  }

  /// Whether access node `t` can become a scalar of the fused scope; fills `link`.
  bool fusable_link(const Block& st, int a, int b, int t, Link& link) const {
    const Node& n = st.node(t);
    const DataDesc* d = sdfg_.find_data(n.data);
    if (!d || !d->transient || d->kind != DataKind::Array || d->pool || d->view) return false;
    if (d->lifetime != Lifetime::Scope && d->lifetime != Lifetime::State && d->lifetime != Lifetime::SDFG) return false;
    if (access_nodes_.at(n.data) != 1 || interstate_.count(n.data)) return false;
    const std::vector<std::string>& params = st.node(a).map.params;
    int xa = st.node(a).scope_exit;
    auto ins = in_edges(st, t);
    if (ins.size() != 1) return false;
    const DataEdge& ow = st.edges[ins[0]];
    if (ow.src != xa || !ow.src_conn || ow.src_conn->rfind("OUT_", 0) != 0 || ow.memlet.wcr || ow.memlet.dynamic)
      return false;
    auto inner = edges_into(st, xa, "IN_" + ow.src_conn->substr(4));
    if (inner.size() != 1) return false;
    const DataEdge& iw = st.edges[inner[0]];
    if (st.node(iw.src).kind != NodeKind::Tasklet || st.node(iw.src).scope_entry != a || !iw.src_conn) return false;
    if (!plain_memlet(iw.memlet) || iw.memlet.data != n.data || !injective_point(*iw.memlet.subset, params))
      return false;
    link.node = t;
    link.outer_write = ins[0];
    link.inner_write = inner[0];
    link.outer_reads.clear();
    link.inner_reads.clear();
    for (auto o : out_edges(st, t)) {
      const DataEdge& orr = st.edges[o];
      if (orr.dst != b || !orr.dst_conn || orr.dst_conn->rfind("IN_", 0) != 0 || orr.memlet.data != n.data)
        return false;
      auto reads = edges_out_of(st, b, "OUT_" + orr.dst_conn->substr(3));
      if (reads.empty()) return false;
      for (auto r : reads) {
        const DataEdge& ir = st.edges[r];
        if (st.node(ir.dst).kind != NodeKind::Tasklet || st.node(ir.dst).scope_entry != b || !ir.dst_conn) return false;
        if (!plain_memlet(ir.memlet) || ir.memlet.data != n.data || !same_range(*ir.memlet.subset, *iw.memlet.subset))
          return false;
        link.inner_reads.push_back(r);
      }
      link.outer_reads.push_back(o);
    }
    // every memlet naming the transient is one of these
    int expected = 2 + static_cast<int>(link.outer_reads.size() + link.inner_reads.size());
    return memlets_.at(n.data) == expected;
  }

  /// Whether `to` is reachable from `from` along edges, not through `skip`.
  bool reachable(const Block& st, int from, int to, const std::set<int>& skip) const {
    std::vector<bool> seen(st.nodes.size(), false);
    std::deque<int> work{from};
    seen[static_cast<std::size_t>(from)] = true;
    while (!work.empty()) {
      int v = work.front();
      work.pop_front();
      for (auto& e : st.edges) {
        if (e.src != v || seen[static_cast<std::size_t>(e.dst)] || skip.count(e.dst)) continue;
        if (e.dst == to) return true;
        seen[static_cast<std::size_t>(e.dst)] = true;
        work.push_back(e.dst);
      }
    }
    return false;
  }

  /// Containers map `entry` reads and writes outside its scope (its outer memlets' access
  /// nodes), and those accessed inside it.
  void accesses(const Block& st, int entry, const std::set<int>& skip, std::set<std::string>& reads,
                std::set<std::string>& writes, std::set<std::string>& inside) const {
    int exit = st.node(entry).scope_exit;
    for (auto i : in_edges(st, entry))
      if (!skip.count(st.edges[i].src) && !st.edges[i].memlet.data.empty()) reads.insert(st.edges[i].memlet.data);
    for (auto i : out_edges(st, exit))
      if (!skip.count(st.edges[i].dst) && !st.edges[i].memlet.data.empty()) writes.insert(st.edges[i].memlet.data);
    for (std::size_t v = 0; v < st.nodes.size(); ++v) {
      const Node& n = *st.nodes[v];
      if (n.kind != NodeKind::Access) continue;
      for (int e = n.scope_entry; e >= 0; e = st.node(e).scope_entry)
        if (e == entry) {
          inside.insert(n.data);
          break;
        }
    }
  }

  /// Whether the body of map `entry` runs the same in a fused scope: its inner maps are loops
  /// (no thread-block maps, whose kernels launch blocks of their shape) and no code synchronizes
  /// a thread block.
  bool movable_body(const Block& st, int entry) const {
    for (auto& n : st.nodes) {
      bool inside = false;
      for (int e = n->scope_entry; e >= 0 && !inside; e = st.node(e).scope_entry) inside = e == entry;
      if (!inside) continue;
      if (n->kind == NodeKind::MapEntry && n->map.schedule != ScheduleType::Sequential &&
          n->map.schedule != ScheduleType::Default)
        return false;
      if (n->kind == NodeKind::Tasklet && identifiers_in(n->code.code).count("__syncthreads")) return false;
    }
    return true;
  }

  bool try_fuse(Block& st, int a, int b) {
    if (!compatible(st, a, b) || !movable_body(st, a) || !movable_body(st, b)) return false;
    int xa = st.node(a).scope_exit, xb = st.node(b).scope_exit;
    std::vector<Link> links;
    std::set<int> between;
    for (auto i : out_edges(st, xa)) {
      int t = st.edges[i].dst;
      if (st.node(t).kind != NodeKind::Access || between.count(t)) continue;
      bool feeds_b = false;
      for (auto o : out_edges(st, t)) feeds_b |= st.edges[o].dst == b;
      if (!feeds_b) continue;
      Link l;
      if (!fusable_link(st, a, b, t, l)) return false;
      between.insert(t);
      links.push_back(std::move(l));
    }
    if (links.empty()) return false;
    if (reachable(st, xa, b, between) || reachable(st, xb, a, {})) return false;
    std::set<std::string> ra, wa, ia, rb, wb, ib;
    accesses(st, a, between, ra, wa, ia);
    accesses(st, b, between, rb, wb, ib);
    for (auto& x : wa)
      if (rb.count(x) || wb.count(x)) return false;
    for (auto& x : wb)
      if (ra.count(x)) return false;
    for (auto& x : ia)
      if (ib.count(x)) return false;
    fuse(st, a, b, links);
    return true;
  }

  void fuse(Block& st, int a, int b, const std::vector<Link>& links) {
    Node &ea = st.node(a), &eb = st.node(b);
    int xa = ea.scope_exit, xb = eb.scope_exit;
    Node &exa = st.node(xa), &exb = st.node(xb);
    std::set<std::size_t> dead_edges;
    for (auto& l : links) {
      Node& t = st.node(l.node);
      DataDesc& d = *sdfg_.find_data(t.data);
      d.kind = DataKind::Scalar;
      d.shape = {make_int(1)};
      d.strides = {make_int(1)};
      d.total_size = make_int(1);
      d.offset = {make_int(0)};
      d.storage = StorageType::Register;
      d.lifetime = Lifetime::Scope;
      t.scope_entry = a;
      t.scope_exit = xa;
      Range point{{make_int(0), make_int(0), make_int(1), make_int(1)}};
      DataEdge& w = st.edges[l.inner_write];
      std::string conn = st.edges[l.outer_write].src_conn->substr(4);
      erase_connector(exa.in_connectors, "IN_" + conn);
      erase_connector(exa.out_connectors, "OUT_" + conn);
      w.dst = l.node;
      w.dst_conn.reset();
      w.memlet.subset = point;
      w.memlet.volume = make_int(1);
      dead_edges.insert(l.outer_write);
      for (auto r : l.inner_reads) {
        DataEdge& e = st.edges[r];
        e.src = l.node;
        e.src_conn.reset();
        e.memlet.subset = point;
        e.memlet.volume = make_int(1);
      }
      for (auto o : l.outer_reads) dead_edges.insert(o);
      memlets_[t.data] -= static_cast<int>(1 + l.outer_reads.size());
    }
    // B's other inputs and outputs pass through new connectors of A's entry and exit.
    for (std::size_t i = 0; i < st.edges.size(); ++i) {
      if (dead_edges.count(i)) continue;
      DataEdge& e = st.edges[i];
      if (e.dst == b) {
        e.dst = a;
        if (e.dst_conn) {
          std::string old = e.dst_conn->substr(3), conn = move_passage(eb, ea, old);
          e.dst_conn = "IN_" + conn;
          for (auto r : edges_out_of(st, b, "OUT_" + old)) {
            st.edges[r].src = a;
            st.edges[r].src_conn = "OUT_" + conn;
          }
        }
      }
      if (e.src == xb) {
        e.src = xa;
        if (e.src_conn) {
          std::string old = e.src_conn->substr(4), conn = move_passage(exb, exa, old);
          e.src_conn = "OUT_" + conn;
          for (auto w : edges_into(st, xb, "IN_" + old)) {
            st.edges[w].dst = xa;
            st.edges[w].dst_conn = "IN_" + conn;
          }
        }
      }
    }
    for (auto& e : st.edges) {
      if (e.src == b) e.src = a;
      if (e.dst == xb) e.dst = xa;
    }
    for (auto& n : st.nodes)
      if (n->scope_entry == b && n->kind != NodeKind::MapExit) {
        n->scope_entry = a;
        n->scope_exit = xa;
      }
    remove_edges(st, dead_edges);
    remove_nodes(st, {b, xb});
  }
};

}  // namespace

void fuse_maps(SDFG& sdfg, const CompileOptions& options) {
  if (!options.fuse_maps) return;
  walk::for_each_sdfg(sdfg, "", [&](SDFG& s, const std::string&) { Fuser(s).run(); });
}

}  // namespace sdfc
