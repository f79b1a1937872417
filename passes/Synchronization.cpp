#include "passes/Synchronization.h"

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <set>

#include "analysis/GpuOps.h"
#include "ir/Diagnostic.h"
#include "ir/Signature.h"
#include "ir/Walk.h"
#include "passes/EventPlanner.h"

namespace sdfc {
namespace {

/// Containers that queued GPU work may still touch, with the streams of that work: host
/// containers (what host code, interstate edges and loop tests read), and device containers,
/// which only host code that touches device memory itself needs (a CPP tasklet calling
/// cudaMemcpy on a GPU array: it runs on the host, outside every stream).
struct Pending {
  std::map<std::string, std::set<int>> written;         ///< GPU work may still write these host containers
  std::map<std::string, std::set<int>> read;            ///< GPU work may still read these host containers
  std::map<std::string, std::set<int>> device_written;  ///< ... these device containers
  std::map<std::string, std::set<int>> device_read;
  bool operator==(const Pending& o) const {
    return written == o.written && read == o.read && device_written == o.device_written && device_read == o.device_read;
  }
  void merge(const Pending& o) {
    auto to = maps();
    auto from = o.maps();
    for (std::size_t i = 0; i < to.size(); ++i)
      for (auto& [k, v] : *from[i]) (*to[i])[k].insert(v.begin(), v.end());
  }
  /// No host container has pending GPU work.
  bool empty() const { return written.empty() && read.empty(); }
  /// Every stream some pending work on host containers runs on, in order: what the host waits
  /// for before it touches them.
  std::vector<int> streams() const {
    std::set<int> all;
    for (auto* m : {&written, &read})
      for (auto& [k, v] : *m) all.insert(v.begin(), v.end());
    return {all.begin(), all.end()};
  }
  /// The host waited for `streams`: their work so far is done.
  void done(const std::vector<int>& streams) {
    for (Map* m : maps())
      for (auto it = m->begin(); it != m->end();) {
        for (int s : streams) it->second.erase(s);
        it = it->second.empty() ? m->erase(it) : std::next(it);
      }
  }
  /// After a join into stream 0: all pending work is behind stream 0.
  void joined() {
    for (Map* m : maps())
      for (auto& [k, v] : *m) v = {0};
  }

 private:
  using Map = std::map<std::string, std::set<int>>;
  std::array<Map*, 4> maps() { return {&written, &read, &device_written, &device_read}; }
  std::array<const Map*, 4> maps() const { return {&written, &read, &device_written, &device_read}; }
};

bool intersects(const std::set<std::string>& a, const std::map<std::string, std::set<int>>& b) {
  for (auto& x : a)
    if (b.count(x)) return true;
  return false;
}

/// The longest chain of states: bounds the planner's search over pairs of the chain's operations.
constexpr int kMaxChain = 16;

/// Whether a transient is allocated and freed around state `st` (stream 0 work that the fork and
/// join around the state order).
bool places_transient(const SDFG& sdfg, const Block* st) {
  for (auto& [name, d] : sdfg.arrays)
    if (d.transient && d.place == DataDesc::Place::State && d.place_state == st) return true;
  return false;
}

int chain_states(const SDFG& sdfg, const Block& b);

/// The blocks of `region` (a loop body, or a conditional's branch) in order when it is one chain,
/// empty otherwise: it starts at its start block, each block's one edge (unconditional) leads to
/// the next, which has no other predecessor, and the last has none; each block is a state that
/// places no transient, or a conditional whose branches are such chains (or empty); at most
/// kMaxChain states along the longest path through the branches. Streams carry their work across
/// the iterations of a loop whose body is one, and from the chain before a conditional into its
/// branches when each is one. (A break, continue, inner loop or branching edge makes it none.)
std::vector<int> block_chain(const SDFG& sdfg, const Block& region) {
  auto n = region.blocks.size();
  if (n == 0 || n > static_cast<std::size_t>(kMaxChain)) return {};
  std::vector<const InterstateEdge*> out(n, nullptr);
  std::vector<int> in_edges(n, 0);
  for (auto& e : region.cf_edges) {
    auto S = static_cast<std::size_t>(e.src);
    if (out[S] || !e.unconditional()) return {};
    out[S] = &e;
    ++in_edges[static_cast<std::size_t>(e.dst)];
  }
  std::vector<int> chain;
  int states = 0;
  for (int b = std::max(0, start_of(region)); b >= 0 && chain.size() < n;) {
    int length = chain_states(sdfg, *region.blocks[static_cast<std::size_t>(b)]);
    if (length < 0 || (states += length) > kMaxChain) return {};
    if (!chain.empty() && in_edges[static_cast<std::size_t>(b)] != 1) return {};
    chain.push_back(b);
    const InterstateEdge* e = out[static_cast<std::size_t>(b)];
    b = e ? e->dst : -1;
    if (!e) break;
  }
  // Every block once, the start without predecessors, the last without a successor.
  if (chain.size() != n || in_edges[static_cast<std::size_t>(chain[0])] != 0 ||
      out[static_cast<std::size_t>(chain.back())])
    return {};
  return chain;
}

/// The states along the longest path of `region` when it is a block_chain; 0 otherwise.
int chain_length(const SDFG& sdfg, const Block& region) {
  int states = 0;
  for (int c : block_chain(sdfg, region)) states += chain_states(sdfg, *region.blocks[static_cast<std::size_t>(c)]);
  return states;
}

/// How many states block `b` adds to a chain along its longest path (a state 1, a conditional its
/// longest branch's block_chain, a loop its body's twice), or -1 when it cannot be part of one.
int chain_states(const SDFG& sdfg, const Block& b) {
  if (b.kind == BlockKind::State) return places_transient(sdfg, &b) ? -1 : 1;
  if (b.kind == BlockKind::Loop) {  // its body, planned for two iterations
    int states = chain_length(sdfg, b);
    return states == 0 ? -1 : 2 * states;
  }
  if (b.kind != BlockKind::Conditional) return -1;
  int longest = 0;
  for (auto& [cond, body] : b.branches) {
    if (body->blocks.empty()) continue;
    int states = chain_length(sdfg, *body);
    if (states == 0) return -1;
    longest = std::max(longest, states);
  }
  return longest;
}

/// Blocks that follow each other in a chain: links[c] = b when block c runs right after block b
/// and only then (b's one edge, unconditional, leads to c; c has no other predecessor and is not
/// the region's start), b is a state or a conditional that continues a chain itself, c a state or
/// a conditional (chain_states), neither places a transient (allocations and frees around a state
/// are stream 0 work the fork and join order), and the chain has at most kMaxChain states along
/// its longest path. Streams then carry their work from b into c with events only where
/// operations conflict, instead of joining into stream 0 at b's end. -1: c starts a chain (a
/// conditional that starts one is planned branch by branch, each branch its own chains).
std::vector<int> chain_links(const SDFG& sdfg, const Block& r, const std::vector<int>& order) {
  auto n = r.blocks.size();
  std::vector<int> out_edges(n, 0), in_edges(n, 0), links(n, -1), length(n, 0);
  for (auto& e : r.cf_edges) {
    ++out_edges[static_cast<std::size_t>(e.src)];
    ++in_edges[static_cast<std::size_t>(e.dst)];
  }
  for (std::size_t b = 0; b < n; ++b) length[b] = std::max(0, chain_states(sdfg, *r.blocks[b]));
  int start = std::max(0, start_of(r));
  for (int c : order)  // in flow order, so that a chain's length is known at its predecessor
    for (auto& e : r.cf_edges) {
      auto B = static_cast<std::size_t>(e.src), C = static_cast<std::size_t>(c);
      if (e.dst != c || c == start || in_edges[C] != 1 || out_edges[B] != 1 || !e.unconditional()) continue;
      const Block& b = *r.blocks[B];
      bool b_chains = b.kind == BlockKind::State ? !places_transient(sdfg, &b) : links[B] >= 0;
      int states = chain_states(sdfg, *r.blocks[C]);
      if (!b_chains || states < 0 || length[B] + states > kMaxChain) continue;
      links[C] = e.src;
      length[C] = length[B] + states;
    }
  return links;
}

/// The region's blocks in reverse postorder from its start (each before its successors, but for
/// back edges), then the unreachable ones.
std::vector<int> flow_order(const Block& r) {
  auto n = r.blocks.size();
  std::vector<std::vector<int>> succ(n);
  for (auto& e : r.cf_edges) succ[static_cast<std::size_t>(e.src)].push_back(e.dst);
  std::vector<bool> seen(n, false);
  std::vector<int> post;
  std::vector<std::pair<int, std::size_t>> stack;  // (block, next successor)
  int start = std::max(0, start_of(r));
  seen[static_cast<std::size_t>(start)] = true;
  stack.emplace_back(start, 0);
  while (!stack.empty()) {
    auto& [b, i] = stack.back();
    auto& s = succ[static_cast<std::size_t>(b)];
    if (i < s.size()) {
      int next = s[i++];
      if (!seen[static_cast<std::size_t>(next)]) {
        seen[static_cast<std::size_t>(next)] = true;
        stack.emplace_back(next, 0);
      }
    } else {
      post.push_back(b);
      stack.pop_back();
    }
  }
  std::vector<int> order(post.rbegin(), post.rend());
  for (std::size_t b = 0; b < n; ++b)
    if (!seen[b]) order.push_back(static_cast<int>(b));
  return order;
}

/// Whether host code of `sdfg` (a tasklet or a nested SDFG outside kernels, with no stream of its
/// own) names a container in GPU memory.
bool host_code_touches_device(const SDFG& sdfg) {
  bool found = false;
  walk::for_each_block(sdfg.root, "", [&](const Block& b, const std::string&) {
    if (found || b.kind != BlockKind::State) return;
    for (auto& n : b.nodes)
      if (n->kind == NodeKind::NestedSDFG && n->scope_entry < 0 && n->stream < 0 && n->sdfg &&
          host_code_touches_device(*n->sdfg))
        found = true;
    for (auto& e : b.edges)
      for (int v : {e.src, e.dst}) {
        const Node& x = b.node(v);
        const DataDesc* d = sdfg.find_data(e.memlet.data);
        if (x.kind == NodeKind::Tasklet && x.scope_entry < 0 && x.stream < 0 && d && is_gpu_storage(d->storage))
          found = true;
      }
  });
  return found;
}

class Synchronizer {
 public:
  Synchronizer(SDFG& sdfg, int streams, bool chains, int& next_event)
      : sdfg_(sdfg), streams_(streams), chains_(chains && streams > 0), next_event_(next_event) {}
  bool gpu_work = false;  ///< the SDFG queues GPU work somewhere

  Pending region(Block& r, Pending in) {
    int n = static_cast<int>(r.blocks.size());
    if (n == 0) return in;
    std::vector<std::vector<InterstateEdge*>> preds(static_cast<std::size_t>(n));
    for (auto& e : r.cf_edges) preds[static_cast<std::size_t>(e.dst)].push_back(&e);
    int start = std::max(0, start_of(r));
    std::vector<int> order = flow_order(r);
    std::vector<int> links = chains_ ? chain_links(sdfg_, r, order) : std::vector<int>(static_cast<std::size_t>(n), -1);
    std::vector<bool> continued(static_cast<std::size_t>(n), false);
    for (int l : links)
      if (l >= 0) continued[static_cast<std::size_t>(l)] = true;
    std::vector<std::optional<EventPlanner>> planners(static_cast<std::size_t>(n));  // after each state
    std::vector<Pending> out(static_cast<std::size_t>(n));
    // Iterate to a fixpoint: the sets only grow, and are bounded by the containers. In flow order,
    // a chain's states are planned one after the other in every round.
    for (int round = 0; round < 2 * n + 4; ++round) {
      bool changed = false;
      for (int b : order) {
        Pending bin = b == start ? in : Pending{};
        for (InterstateEdge* e : preds[static_cast<std::size_t>(b)])
          bin.merge(cross(*e, out[static_cast<std::size_t>(e->src)]));
        Block& blk = *r.blocks[static_cast<std::size_t>(b)];
        Pending bout;
        if (blk.kind == BlockKind::State) {
          int from = links[static_cast<std::size_t>(b)];
          auto& planner = planners[static_cast<std::size_t>(b)];
          if (from >= 0)
            planner.emplace(*planners[static_cast<std::size_t>(from)]);
          else
            planner.emplace(std::max(1, streams_), next_event_);
          bout = state(blk, bin, *planner, !continued[static_cast<std::size_t>(b)]);
        } else if (int from = links[static_cast<std::size_t>(b)]; from >= 0) {
          auto& planner = planners[static_cast<std::size_t>(b)];
          planner.emplace(*planners[static_cast<std::size_t>(from)]);
          bout = chained_block(blk, bin, *planner, !continued[static_cast<std::size_t>(b)]);
        } else {
          bout = block(blk, bin);
        }
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
  int streams_;      ///< --gpu-streams
  bool chains_;      ///< streams carry their work across chains of states
  int& next_event_;  ///< the program's event counter

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
  /// What is pending after interstate edge `e`, `along` before it: the host waits before the edge
  /// when its condition or assignments read what GPU work may still write.
  Pending cross(InterstateEdge& e, Pending along) const {
    if (!along.empty() && reads_pending(edge_reads(e), along)) {
      e.host_waits = along.streams();
      along.done(e.host_waits);
    }
    return along;
  }

  /// Plans the blocks `chain` of region `r` (block_chain) one after the other with `planner`, none
  /// joining; `p` is pending before the first. Returns what is pending after the last.
  Pending plan_chain(Block& r, const std::vector<int>& chain, Pending p, EventPlanner& planner) {
    for (std::size_t i = 0; i < chain.size(); ++i) {
      if (i > 0)
        for (auto& e : r.cf_edges)
          if (e.dst == chain[i]) p = cross(e, p);
      Block& b = *r.blocks[static_cast<std::size_t>(chain[i])];
      p = b.kind == BlockKind::State ? state(b, p, planner, false) : chained_block(b, p, planner, false);
    }
    return p;
  }

  /// Plans the body of a loop whose streams carry their work across iterations (its blocks `chain`,
  /// see block_chain), `in` pending at the loop test; returns what is pending after one iteration.
  /// Two iterations are planned with one planner: the second orders each operation after the
  /// first's it conflicts with, through the same events (a wait takes an event's latest record:
  /// the previous iteration's for an operation later in the body, none yet in the first
  /// iteration). An operation waits for the union of both iterations' events. The streams fork
  /// from stream 0 before the loop and join into it after (the loop block's fork and join).
  Pending carried(Block& loop, const std::vector<int>& chain, const Pending& in) {
    EventPlanner planner(std::max(1, streams_), next_event_);
    planner.begin_loop();
    Pending first = plan_iterations(loop, chain, in, planner);
    planner.end_loop(loop);
    return first;
  }

  /// Plans two iterations of the loop body `chain` with `planner` (see carried); returns what is
  /// pending after one. Inside the second iteration of an enclosing loop, every wait adds to the
  /// ones planned before.
  Pending plan_iterations(Block& loop, const std::vector<int>& chain, const Pending& in, EventPlanner& planner) {
    bool enclosing = accumulate_waits_;
    Pending first;
    for (int iteration = 0; iteration < 2; ++iteration) {
      accumulate_waits_ = enclosing || iteration == 1;
      // Host waits: the loop's own fixpoint adds what the previous iteration left pending.
      Pending p = plan_chain(loop, chain, in, planner);
      if (iteration == 0) first = p;
    }
    accumulate_waits_ = enclosing;
    return first;
  }
  bool accumulate_waits_ = false;  ///< a loop's second planned iteration: waits add to the first's

  /// The host waits before evaluating conditional `c`'s conditions, when they read what GPU work
  /// may still write.
  void condition_waits(Block& c, Pending& in) const {
    std::set<std::string> reads;
    for (auto& [cond, body] : c.branches)
      if (cond) {
        auto x = code_reads(cond->code);
        reads.insert(x.begin(), x.end());
      }
    if (reads_pending(reads, in)) {
      c.host_waits = in.streams();
      in.done(c.host_waits);
    }
  }

  /// Plans conditional `c` of a chain (its branches are block_chains), `planner` the chain's after
  /// the block before it: each branch is planned from a copy of it (EventPlanner::branch), so the
  /// branch's operations wait only for the chain's operations they conflict with; then `planner`
  /// merges the branches, so that the chain goes on after the conditional whichever branch ran.
  /// With `chain_ends`, every stream whose work stream 0 may not know joins into it after the
  /// conditional (its join_events).
  Pending chained_conditional(Block& c, Pending in, EventPlanner& planner, bool chain_ends) {
    condition_waits(c, in);
    Pending out;
    bool has_else = false;
    std::vector<EventPlanner> branches;
    for (auto& [cond, body] : c.branches) {
      has_else |= !cond.has_value();
      EventPlanner branch = planner.branch(branches);
      out.merge(plan_chain(*body, block_chain(sdfg_, *body), in, branch));
      branches.push_back(std::move(branch));
    }
    if (!has_else) out.merge(in);
    planner.merge(branches, has_else);
    planner.end_conditional(c, chain_ends);
    if (!c.join_events.empty()) out.joined();
    return out;
  }

  /// A conditional or a loop of a chain (chain_states), planned with the chain's `planner`.
  Pending chained_block(Block& b, Pending in, EventPlanner& planner, bool chain_ends) {
    return b.kind == BlockKind::Loop ? chained_loop(b, in, planner, chain_ends)
                                     : chained_conditional(b, in, planner, chain_ends);
  }

  /// Plans loop `loop` of a chain (its body a block_chain), `planner` the chain's after the block
  /// before it: the streams the chain has not forked yet fork before the loop (enter_loop), two
  /// iterations are planned from a copy of the chain's planner as for a loop that carries its
  /// streams (carried), and `planner` then merges that copy as the one branch of a conditional
  /// without else (the loop may run no iteration): after the loop a stream knows only what it knew
  /// before it, and a wait for an operation of the body (the last iteration's, by the event's
  /// latest record) grants nothing more. No join at the loop's end unless `chain_ends`.
  Pending chained_loop(Block& loop, Pending in, EventPlanner& planner, bool chain_ends) {
    std::vector<int> chain = block_chain(sdfg_, loop);
    std::optional<EventPlanner> body;
    std::set<int> forks;
    Pending out = loop_fixpoint(loop, in, [&](const Pending& at_test) {
      body.emplace(planner.branch({}));
      forks = body->enter_loop();
      return plan_iterations(loop, chain, at_test, *body);
    });
    planner.merge({*body}, /*has_else=*/false);
    planner.end_loop_in_chain(loop, forks, body->used(), chain_ends);
    if (!loop.join_events.empty()) out.joined();
    return out;
  }

  /// The host side of loop `b`: the host waits before the test for what the body's GPU work may
  /// still write that the test reads; the body's pending work reaches the test again, so the body
  /// (`body`: what is pending after one iteration, from what is pending at the test) is planned to
  /// a fixpoint. Returns what is pending after the loop.
  template <typename Body>
  Pending loop_fixpoint(Block& b, const Pending& in, Body body) {
    std::set<std::string> reads = code_reads(b.loop_condition.code);
    for (auto* st : {&b.init_statement, &b.update_statement})
      if (*st) {
        auto x = code_reads((*st)->code);
        reads.insert(x.begin(), x.end());
      }
    Pending head = in;
    for (int round = 0; round < 8; ++round) {
      Pending at_test = head;
      if (reads_pending(reads, at_test)) {
        std::vector<int> w = at_test.streams();
        std::set<int> all(b.host_waits.begin(), b.host_waits.end());
        all.insert(w.begin(), w.end());
        b.host_waits.assign(all.begin(), all.end());
        at_test.done(w);
      }
      Pending next = in;
      next.merge(body(at_test));
      if (next == head) break;
      head = next;
    }
    head.done(b.host_waits);  // the last test (the exit) waited for these
    return head;
  }

  static bool reads_pending(const std::set<std::string>& reads, const Pending& p) {
    for (auto& r : reads)
      if (p.written.count(r)) return true;
    return false;
  }

  bool host_data(const std::string& name) const {
    const DataDesc* d = sdfg_.find_data(name);
    return d && !is_gpu_storage(d->storage);
  }

  Pending block(Block& b, Pending in) {
    switch (b.kind) {
      case BlockKind::State:
        SDFC_ASSERT(false, "states are planned by their region (region())");
        return in;
      case BlockKind::Region:
        return region(b, in);
      case BlockKind::Conditional: {
        condition_waits(b, in);
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
        std::vector<int> chain = chains_ ? block_chain(sdfg_, b) : std::vector<int>{};
        Pending head = loop_fixpoint(b, in, [&](const Pending& at_test) {
          return chain.empty() ? region(b, at_test) : carried(b, chain, at_test);
        });
        if (!chain.empty()) head.joined();  // the join after a carried loop
        return head;
      }
      default:
        return in;
    }
  }

  /// Reads and writes of host code at a top-level node (its scope's data for maps).
  void host_access(const Block& st, int id, std::set<std::string>& reads, std::set<std::string>& writes) const {
    const Node& n = st.node(id);
    for (const DataEdge* e : in_[static_cast<std::size_t>(id)])
      if (!e->memlet.data.empty()) reads.insert(e->memlet.data);
    // A map writes what leaves its exit (what leaves its entry goes into the scope: reads).
    int from = n.kind == NodeKind::MapEntry ? n.scope_exit : id;
    for (const DataEdge* e : out_[static_cast<std::size_t>(from)])
      if (!e->memlet.data.empty()) writes.insert(e->memlet.data);
  }

  // Edges of the state being analysed, by endpoint (lookups per node stay linear in big states).
  std::vector<std::vector<const DataEdge*>> in_, out_;

  /// Plans a state with the planner of its chain so far; joins the streams at the chain's end.
  Pending state(Block& st, Pending p, EventPlanner& events, bool chain_ends) {
    int n = static_cast<int>(st.nodes.size());
    in_.assign(static_cast<std::size_t>(n), {});
    out_.assign(static_cast<std::size_t>(n), {});
    for (auto& e : st.edges) {
      out_[static_cast<std::size_t>(e.src)].push_back(&e);
      in_[static_cast<std::size_t>(e.dst)].push_back(&e);
    }
    events.begin_state();
    planner_ = &events;
    for (int v : issue_order(st)) node(st, v, p);
    planner_ = nullptr;
    events.end_state(st, chain_ends);
    if (!st.join_events.empty()) p.joined();
    return p;
  }

  EventPlanner* planner_ = nullptr;  ///< the state being analysed

  /// Orders a GPU operation against the other streams' work in its state.
  void order_gpu(int stream, const std::vector<Touch>& touches, std::vector<int>& waits, int& record) {
    // A state is planned again on every round of the region's fixpoint, with the same result:
    // events keep the ids they got on the first round.
    std::vector<int> now = streams_ > 0 ? planner_->order(stream, touches, &record) : std::vector<int>{};
    if (accumulate_waits_) {
      std::set<int> all(waits.begin(), waits.end());
      all.insert(now.begin(), now.end());
      waits.assign(all.begin(), all.end());
    } else {
      waits = std::move(now);
    }
  }
  static std::vector<Touch> whole(const std::set<std::string>& reads, const std::set<std::string>& writes) {
    std::vector<Touch> out;
    for (auto& r : reads) out.push_back(Touch{r, std::nullopt, false});
    for (auto& w : writes) out.push_back(Touch{w, std::nullopt, true});
    return out;
  }

  void wait(Node& n, Pending& p) { wait_for(n, p, p.streams()); }

  /// Whether host code reading `reads` and writing `writes` conflicts with GPU work pending on
  /// host containers (Pending's host maps hold host containers only).
  static bool host_conflict(const Pending& p, const std::set<std::string>& reads, const std::set<std::string>& writes) {
    return intersects(reads, p.written) || intersects(writes, p.written) || intersects(writes, p.read);
  }

  /// Node `n` (host code) waits for `streams` before it runs.
  static void wait_for(Node& n, Pending& p, const std::vector<int>& streams) {
    if (streams.empty()) return;
    std::set<int> all(n.host_waits.begin(), n.host_waits.end());
    all.insert(streams.begin(), streams.end());
    n.host_waits.assign(all.begin(), all.end());
    p.done(streams);
  }

  bool touches_device(const std::set<std::string>& reads, const std::set<std::string>& writes) const {
    for (const auto* names : {&reads, &writes})
      for (auto& name : *names)
        if (const DataDesc* d = sdfg_.find_data(name); d && is_gpu_storage(d->storage)) return true;
    return false;
  }

  /// Host code that reads `reads` and writes `writes` itself (a CPP tasklet calling the GPU
  /// runtime on device memory): the streams whose pending work on those device containers it must
  /// wait for (it runs outside every stream).
  std::vector<int> device_conflicts(const Pending& p, const std::set<std::string>& reads,
                                    const std::set<std::string>& writes) const {
    std::set<int> out;
    auto add = [&](const std::map<std::string, std::set<int>>& m, const std::string& name) {
      if (auto it = m.find(name); it != m.end()) out.insert(it->second.begin(), it->second.end());
    };
    for (auto& r : reads)
      if (!host_data(r)) add(p.device_written, r);
    for (auto& w : writes)
      if (!host_data(w)) {
        add(p.device_written, w);
        add(p.device_read, w);
      }
    return {out.begin(), out.end()};
  }

  /// GPU work on `stream` reads `reads` and writes `writes`: pending on those containers (on the
  /// device containers only, with `device_only`).
  void pending_gpu(Pending& p, int stream, const std::set<std::string>& reads, const std::set<std::string>& writes,
                   bool device_only = false) const {
    for (auto& r : reads)
      if (!device_only || !host_data(r)) (host_data(r) ? p.read : p.device_read)[r].insert(stream);
    for (auto& w : writes)
      if (!device_only || !host_data(w)) (host_data(w) ? p.written : p.device_written)[w].insert(stream);
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
            DataEdge& copy = const_cast<DataEdge&>(*e);
            order_gpu(e->stream, copy_touches(sdfg_, st, *e), copy.wait_events, copy.record_event);
            pending_gpu(p, e->stream, {src}, {dst});
          } else {  // a host copy
            if (p.written.count(src) || p.written.count(dst) || p.read.count(dst)) wait(n, p);
          }
        }
        break;
      case NodeKind::MapEntry:
      case NodeKind::Tasklet:
        if (n.stream >= 0) {  // a kernel launch, or a GPU library call (ordered the same way)
          gpu_work = true;
          std::set<std::string> reads, writes;
          host_access(st, id, reads, writes);
          std::set<std::string> by_value;
          for (auto& r : reads)
            if (host_data(r) && sdfg_.find_data(r)->kind == DataKind::Scalar) by_value.insert(r);
          for (const DataEdge* e : in_[static_cast<std::size_t>(id)])  // dynamic range inputs: read at the launch
            if (e->dst_conn && is_dynamic_range_input(*e->dst_conn) && host_data(e->memlet.data))
              by_value.insert(e->memlet.data);
          if (intersects(by_value, p.written)) wait(n, p);
          // A stream tasklet's host code may also touch host data before it queues its work.
          if (is_stream_tasklet(n) && host_conflict(p, reads, writes)) wait(n, p);
          std::vector<Touch> touches;  // the kernel's outer memlets, without the scalars it takes by value
          for (Touch& t : node_touches(st, id))
            if (!by_value.count(t.data)) touches.push_back(std::move(t));
          order_gpu(n.stream, touches, n.wait_events, n.record_event);
          for (auto& v : by_value) reads.erase(v);  // read by the host at the launch
          pending_gpu(p, n.stream, reads, writes);
          break;
        }
        {  // a host map or tasklet
          std::set<std::string> reads, writes;
          host_access(st, id, reads, writes);
          if (host_conflict(p, reads, writes)) wait(n, p);
          wait_for(n, p, device_conflicts(p, reads, writes));
          n.device_sync_after =
              n.kind == NodeKind::Tasklet && !callbacks_called(sdfg_, n).empty() && touches_device(reads, writes);
          break;
        }
      case NodeKind::NestedSDFG: {
        std::set<std::string> reads, writes;
        host_access(st, id, reads, writes);
        if (!p.empty()) wait(n, p);
        // Host code in it may touch device memory itself, and its own planning starts from nothing
        // pending: then it waits here for the work on the device containers it names.
        if (host_code_touches_device(*n.sdfg)) wait_for(n, p, device_conflicts(p, reads, writes));
        if (n.stream >= 0) {  // it queues GPU work on stream 0: ordered against this state's streams
          order_gpu(n.stream, whole(reads, writes), n.wait_events, n.record_event);
          // Its host containers are its own body's business (gpu_exit_sync below), as before.
          pending_gpu(p, 0, reads, writes, true);
        }
        Synchronizer inner(*n.sdfg, streams_, chains_, next_event_);
        Pending left = inner.region(n.sdfg->root, {});
        if (inner.gpu_work) {
          gpu_work = true;
          if (!left.empty()) n.sdfg->gpu_exit_sync = true;  // the nested body waits at its end
        }
        break;
      }
      case NodeKind::MapExit:
        break;
      case NodeKind::Library:
        SDFC_ASSERT(false, "library nodes are expanded before synchronization (expand-library-nodes)");
    }
  }
};

}  // namespace

void synchronize(SDFG& sdfg, const CompileOptions& options) {
  if (options.target == Target::CPU) return;
  sdfg.num_events = 0;
  Synchronizer s(sdfg, options.gpu_streams, true, sdfg.num_events);
  s.region(sdfg.root, {});
  sdfg.gpu_exit_sync = s.gpu_work;
}

}  // namespace sdfc
