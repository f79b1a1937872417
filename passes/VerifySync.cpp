#include "passes/VerifySync.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "analysis/GpuOps.h"
#include "ir/Signature.h"
#include "ir/Walk.h"

namespace sdfc {
namespace {

constexpr std::size_t kMaxPaths = 256;

/// One step of a control-flow path.
struct Step {
  enum Kind { State, Edge, LoopEnter, LoopTest, LoopExit, CondTest, CondExit } kind;
  const Block* block = nullptr;          ///< all but Edge
  const InterstateEdge* edge = nullptr;  ///< Edge
};
using Path = std::vector<Step>;

/// Enumerates control-flow paths, at most kMaxPaths per region (then `bounded` is set).
class Paths {
 public:
  bool bounded = false;

  std::vector<Path> block(const Block& b) {
    switch (b.kind) {
      case BlockKind::State:
        return {{Step{Step::State, &b, nullptr}}};
      case BlockKind::Region:
        return region(b);
      case BlockKind::Loop: {
        std::vector<Path> body = region(b), out;
        Step enter{Step::LoopEnter, &b, nullptr}, test{Step::LoopTest, &b, nullptr}, exit{Step::LoopExit, &b, nullptr};
        // 0, 1 and 2 iterations (do-while: 1 and 2); two iterations expose loop-carried conflicts
        // (a conflict with an iteration further back is ordered through the one in between).
        if (!b.inverted) out.push_back({enter, test, exit});
        for (auto& p : body) {
          Path once = b.inverted ? Path{enter} : Path{enter, test};
          once.insert(once.end(), p.begin(), p.end());
          once.push_back(test);
          out.push_back(once);
          out.back().push_back(exit);
          for (auto& q : body) {
            if (out.size() >= kMaxPaths) return cap(out);
            Path twice = once;
            twice.insert(twice.end(), q.begin(), q.end());
            twice.push_back(test);
            twice.push_back(exit);
            out.push_back(twice);
          }
        }
        return cap(out);
      }
      case BlockKind::Conditional: {
        std::vector<Path> out;
        Step test{Step::CondTest, &b, nullptr}, exit{Step::CondExit, &b, nullptr};
        bool has_else = false;
        for (auto& [cond, body] : b.branches) {
          has_else |= !cond.has_value();
          for (auto& p : region(*body)) {
            Path q{test};
            q.insert(q.end(), p.begin(), p.end());
            q.push_back(exit);
            out.push_back(q);
          }
        }
        if (!has_else) out.push_back({test, exit});
        return cap(out);
      }
      default:
        return {{}};  // break / continue / return: nothing to replay
    }
  }

  std::vector<Path> region(const Block& r) {
    std::vector<Path> out;
    int n = static_cast<int>(r.blocks.size());
    if (n == 0) return {{}};
    std::vector<int> visits(static_cast<std::size_t>(n), 0);
    Path prefix;
    walk(r, std::max(0, start_of(r)), visits, prefix, out);
    return cap(out);
  }

 private:
  std::vector<Path> cap(std::vector<Path> v) {
    if (v.size() > kMaxPaths) {
      v.resize(kMaxPaths);
      bounded = true;
    }
    return v;
  }

  void walk(const Block& r, int b, std::vector<int>& visits, Path& prefix, std::vector<Path>& out) {
    if (out.size() >= kMaxPaths) {
      bounded = true;
      return;
    }
    auto B = static_cast<std::size_t>(b);
    ++visits[B];
    std::vector<const InterstateEdge*> succ;
    for (auto& e : r.cf_edges)
      if (e.src == b && visits[static_cast<std::size_t>(e.dst)] < 2) succ.push_back(&e);
    for (auto& p : block(*r.blocks[B])) {
      std::size_t mark = prefix.size();
      prefix.insert(prefix.end(), p.begin(), p.end());
      if (succ.empty()) out.push_back(prefix);
      for (const InterstateEdge* e : succ) {
        prefix.push_back(Step{Step::Edge, nullptr, e});
        walk(r, e->dst, visits, prefix, out);
        prefix.pop_back();
      }
      prefix.resize(mark);
    }
    --visits[B];
  }
};

/// One access in the replay: who, when (the agent's own clock entry), what, where.
struct Access {
  int agent = 0;
  int seq = 0;
  std::string what;
  std::string container;
  std::optional<Range> subset;  ///< nullopt: all of it
  bool write = false;
  std::string pool_op;  ///< "allocation" or "free" of a pooled block; "" otherwise
};

/// What the replays found, across paths and nested SDFGs (deduplicated by line).
struct Found {
  std::set<std::string> races;
  std::map<std::string, SyncReport::PoolRace> pool_races;
};

/// Replays one path with vector clocks and reports every unordered conflicting pair.
class Replay {
 public:
  Replay(const SDFG& sdfg, int streams, Found& found)
      : sdfg_(sdfg),
        streams_(streams),
        host_(streams),
        clock_(static_cast<std::size_t>(streams + 1), std::vector<int>(static_cast<std::size_t>(streams + 1), 0)),
        found_(found) {}

  /// Pooled transients at the call's level, and the members of an arena from the pool (each its
  /// bytes of the arena): allocated on stream 0 at the call's start, freed there at its end.
  bool pooled_per_call(const DataDesc& d) const {
    return d.transient && is_gpu_storage(d.storage) &&
           ((d.pool && d.place == DataDesc::Place::Call) || (d.arena_offset && sdfg_.arena.stream_ordered));
  }

  void run(const Path& path) {
    for (auto& [name, d] : sdfg_.arrays)
      if (pooled_per_call(d)) pool_op(name, "allocation");
    for (const Step& s : path) {
      switch (s.kind) {
        case Step::State:
          state(*s.block);
          break;
        case Step::Edge:
          host_wait(s.edge->host_waits);
          host_reads(s.edge->unconditional() ? "" : s.edge->condition.code, "an interstate condition");
          for (auto& [k, v] : s.edge->assignments)
            host_reads(v, fmt::format("the interstate assignment {} = {}", k, v));
          break;
        case Step::LoopEnter:
          fork(*s.block);
          break;
        case Step::LoopExit:
        case Step::CondExit:
          join(*s.block);
          break;
        case Step::LoopTest:
          host_wait(s.block->host_waits);
          host_reads(s.block->loop_condition.code, fmt::format("the condition of loop \"{}\"", s.block->label));
          for (auto* st : {&s.block->init_statement, &s.block->update_statement})
            if (*st) host_reads((*st)->code, fmt::format("the loop statement of \"{}\"", s.block->label));
          break;
        case Step::CondTest:
          host_wait(s.block->host_waits);
          for (auto& [c, body] : s.block->branches)
            if (c) host_reads(c->code, fmt::format("the condition of \"{}\"", s.block->label));
          break;
      }
    }
    // The exit with an external stream: no host wait; pooled blocks are freed on stream 0.
    for (auto& [name, d] : sdfg_.arrays)
      if (pooled_per_call(d)) pool_op(name, "free");
  }

 private:
  const SDFG& sdfg_;
  int streams_, host_;
  std::vector<std::vector<int>> clock_;
  std::map<int, std::vector<int>> events_;
  std::map<std::string, std::vector<Access>> history_;  ///< by memory (a container, or shared workspace bytes)
  Found& found_;

  std::string agent_name(int a) const { return a == host_ ? "the host" : fmt::format("stream {}", a); }

  void merge(int into, const std::vector<int>& from) {
    auto& c = clock_[static_cast<std::size_t>(into)];
    for (std::size_t i = 0; i < c.size(); ++i) c[i] = std::max(c[i], from[i]);
  }
  int tick(int agent) { return ++clock_[static_cast<std::size_t>(agent)][static_cast<std::size_t>(agent)]; }
  bool knows(int agent, const Access& a) const {
    return clock_[static_cast<std::size_t>(agent)][static_cast<std::size_t>(a.agent)] >= a.seq;
  }

  /// The key of the memory a container occupies: shared workspace bytes have one key.
  std::string memory(const std::string& name) const {
    const DataDesc* d = sdfg_.find_data(name);
    if (d && d->workspace_offset)
      return fmt::format("the {} workspace at offset {}",
                         to_string(d->storage == StorageType::Default ? StorageType::CPU_Heap : d->storage),
                         print_expr(d->workspace_offset));
    if (d && d->arena_offset) return fmt::format("the call's arena at offset {}", print_expr(d->arena_offset));
    return name;
  }

  /// A pooled block's allocation or free: a write of the whole transient, queued on stream 0.
  void pool_op(const std::string& name, const char* op) {
    enqueue(0);
    access(0, name, true, fmt::format("the pool {} of {} (stream 0)", op, name), std::nullopt, op);
  }

  void access(int agent, const std::string& name, bool write, const std::string& what,
              const std::optional<Range>& subset = std::nullopt, const std::string& pool = "") {
    std::string key = memory(name);
    Access now{
        agent, clock_[static_cast<std::size_t>(agent)][static_cast<std::size_t>(agent)], what, name, subset, write,
        pool};
    std::vector<Access>& h = history_[key];
    for (const Access& before : h) {
      if (!before.write && !write) continue;
      if (before.container == name && !may_overlap(before.subset, subset)) continue;
      if (before.agent == agent || knows(agent, before)) continue;
      std::string line = fmt::format(
          "{} {} on {} and {} {} on {} are not ordered ({})", before.what, before.write ? "writes" : "reads",
          agent_name(before.agent), now.what, write ? "writes" : "reads", agent_name(agent),
          key == name || before.container == name ? "container " + name
                                                  : key + ", shared by " + before.container + " and " + name);
      found_.races.insert(line);
      if (!before.pool_op.empty())
        found_.pool_races.emplace(line, SyncReport::PoolRace{before.container, before.pool_op, line});
      else if (!pool.empty())
        found_.pool_races.emplace(line, SyncReport::PoolRace{name, pool, line});
    }
    // A write of the whole container is ordered after every earlier conflicting access (checked
    // above), so later accesses need only be checked against it.
    if (write && !subset)
      h.erase(std::remove_if(h.begin(), h.end(), [&](const Access& a) { return a.container == name; }), h.end());
    h.push_back(std::move(now));
  }

  void host_wait(const std::vector<int>& streams) {
    for (int s : streams) merge(host_, clock_[static_cast<std::size_t>(s)]);
  }
  /// The host enqueues work on `stream`: it comes after everything the host knows.
  void enqueue(int stream) {
    merge(stream, clock_[static_cast<std::size_t>(host_)]);
    tick(stream);
  }
  void wait_events(int stream, const std::vector<int>& events) {
    for (int e : events) {
      merge(stream, clock_[static_cast<std::size_t>(host_)]);
      auto it = events_.find(e);
      if (it != events_.end()) merge(stream, it->second);  // never recorded on this path: orders nothing
    }
  }
  void record(int stream, int event) {
    if (event < 0) return;
    merge(stream, clock_[static_cast<std::size_t>(host_)]);
    events_[event] = clock_[static_cast<std::size_t>(stream)];
  }

  void host_reads(const std::string& code, const std::string& what) {
    if (code.empty()) return;
    tick(host_);
    for (auto& id : identifiers_in(code))
      if (sdfg_.find_data(id)) access(host_, id, false, what);
  }

  bool host_data(const std::string& n) const {
    const DataDesc* d = sdfg_.find_data(n);
    return d && !is_gpu_storage(d->storage);
  }

  /// A state's or a carried loop's fork from stream 0 before it, and join into stream 0 after it.
  void fork(const Block& b) {
    if (b.fork_event < 0) return;
    record(0, b.fork_event);
    for (int s : b.fork_streams) wait_events(s, {b.fork_event});
  }
  void join(const Block& b) {
    for (auto& [s, e] : b.join_events) {
      record(s, e);
      wait_events(0, {e});
    }
  }

  void state(const Block& st) {
    std::string where = fmt::format("in state \"{}\"", st.label);
    // Pooled transients placed around this state: allocated on stream 0 before its fork, freed on
    // stream 0 after its join (the code generator's order).
    std::vector<std::string> state_pools;
    for (auto& [name, d] : sdfg_.arrays)
      if (d.transient && d.pool && is_gpu_storage(d.storage) && d.place == DataDesc::Place::State &&
          d.place_state == &st) {
        state_pools.push_back(name);
        pool_op(name, "allocation");
      }
    fork(st);
    std::vector<GpuOp> ops = gpu_ops(sdfg_, st);
    std::map<int, const GpuOp*> op_of_node;
    std::map<int, const GpuOp*> op_of_edge;
    for (auto& op : ops) (op.node >= 0 ? op_of_node[op.node] : op_of_edge[op.edge]) = &op;
    for (int v : issue_order(st)) {
      const Node& n = st.node(v);
      host_wait(n.host_waits);
      if (n.kind == NodeKind::Access) {
        for (std::size_t i = 0; i < st.edges.size(); ++i) {
          const DataEdge& e = st.edges[i];
          if (e.src != v || st.node(e.dst).kind != NodeKind::Access || e.memlet.data.empty()) continue;
          std::string what = fmt::format("the copy {} -> {} {}", n.data, st.node(e.dst).data, where);
          if (e.stream >= 0) {
            wait_events(e.stream, e.wait_events);
            enqueue(e.stream);
            for (const Touch& t : copy_touches(sdfg_, st, e)) access(e.stream, t.data, t.write, what, t.subset);
            record(e.stream, e.record_event);
          } else {
            tick(host_);
            access(host_, n.data, false, what);
            access(host_, st.node(e.dst).data, true, what);
          }
        }
        continue;
      }
      if (n.kind == NodeKind::MapExit) continue;
      std::set<std::string> reads, writes;
      for (const Touch& t : node_touches(st, v)) (t.write ? writes : reads).insert(t.data);
      std::string label = n.kind == NodeKind::MapEntry ? n.map.label : n.label;
      if ((n.kind == NodeKind::MapEntry || n.kind == NodeKind::Tasklet) && n.stream >= 0) {
        bool own_code = is_stream_tasklet(n);
        std::string what = fmt::format("{} {} {}",
                                       n.kind == NodeKind::MapEntry ? "kernel"
                                       : own_code                   ? "stream tasklet"
                                                                    : "GPU library call",
                                       label, where);
        tick(host_);
        for (auto& r : reads)  // host scalars are read by the host, when the launch passes them by value
          if (host_data(r) && (own_code || sdfg_.find_data(r)->kind == DataKind::Scalar))
            access(host_, r, false, what + (own_code ? " (its host code)" : " (argument by value)"));
        if (own_code)  // its host code may write the host data it names, too
          for (auto& w : writes)
            if (host_data(w)) access(host_, w, true, what + " (its host code)");
        wait_events(n.stream, n.wait_events);
        enqueue(n.stream);
        for (const Touch& t : node_touches(st, v))  // the parts its outer memlets name
          if (t.write || !(host_data(t.data) && sdfg_.find_data(t.data)->kind == DataKind::Scalar))
            access(n.stream, t.data, t.write, what, t.subset);
        record(n.stream, n.record_event);
      } else if (n.kind == NodeKind::NestedSDFG && n.stream >= 0) {
        std::string what = fmt::format("nested SDFG {} {}", label, where);
        tick(host_);
        for (auto& r : reads)
          if (host_data(r)) access(host_, r, false, what);
        for (auto& w : writes)
          if (host_data(w)) access(host_, w, true, what);
        wait_events(0, n.wait_events);
        enqueue(0);
        for (auto& r : reads)
          if (!host_data(r)) access(0, r, false, what);
        for (auto& w : writes)
          if (!host_data(w)) access(0, w, true, what);
        record(0, n.record_event);
        if (n.sdfg->gpu_exit_sync) host_wait({0});
      } else {
        std::string what = fmt::format("{} {} {}",
                                       n.kind == NodeKind::NestedSDFG ? "nested SDFG"
                                       : n.kind == NodeKind::MapEntry ? "host map"
                                                                      : "host tasklet",
                                       label, where);
        tick(host_);
        for (auto& r : reads) access(host_, r, false, what);
        for (auto& w : writes) access(host_, w, true, what);
      }
    }
    join(st);
    for (auto& name : state_pools) {
      pool_op(name, "free");
    }
  }
};

void verify(const SDFG& sdfg, const CompileOptions& options, SyncReport& report, Found& found) {
  Paths paths;
  std::vector<Path> all = paths.region(sdfg.root);
  report.bounded |= paths.bounded;
  report.paths += static_cast<int>(all.size());
  int streams = std::max(1, options.gpu_streams);
  for (const Path& p : all) Replay(sdfg, streams, found).run(p);
  // Nested SDFGs on their own.
  walk::for_each_block(sdfg.root, "", [&](const Block& b, const std::string&) {
    for (auto& n : b.nodes)
      if (n->kind == NodeKind::NestedSDFG && n->scope_entry < 0) verify(*n->sdfg, options, report, found);
  });
}

}  // namespace

SyncReport verify_sync(const SDFG& sdfg, const CompileOptions& options) {
  SyncReport report;
  if (options.target == Target::CPU) return report;
  Found found;
  verify(sdfg, options, report, found);
  report.races.assign(found.races.begin(), found.races.end());
  for (auto& [line, race] : found.pool_races) report.pool_races.push_back(race);
  return report;
}

}  // namespace sdfc
