#include "ir/Dump.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace sdfc {
namespace {

std::string ex(const Expr& e) {
  return print_expr(e, Dialect::Plain);
}

std::string join(const std::vector<Expr>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + ex(v[i]);
  return s;
}

std::string connectors(const std::vector<Connector>& cs) {
  std::string s;
  for (std::size_t i = 0; i < cs.size(); ++i) {
    s += (i ? ", " : "") + cs[i].name;
    if (cs[i].dtype) s += ": " + std::string(to_string(*cs[i].dtype));
  }
  return s;
}

std::string quote_lines(const std::string& code) {
  std::string s;
  for (char c : code) s += c == '\n' ? std::string("; ") : std::string(1, c);
  return s;
}

class Dumper {
 public:
  std::string out;
  const Block* st_ = nullptr;  ///< the state whose nodes are being printed

  void line(int indent, const std::string& text) { out += std::string(2 * indent, ' ') + text + "\n"; }

  void sdfg(const SDFG& s, int ind) {
    line(ind, fmt::format("sdfg {}{}", s.name, s.dace_version.empty() ? "" : " (dace " + s.dace_version + ")"));
    if (!s.symbols.empty()) {
      std::string syms;
      for (auto& [n, t] : s.symbols) syms += fmt::format("{}{}: {}", syms.empty() ? "" : ", ", n, to_string(t));
      line(ind + 1, "symbols " + syms);
    }
    for (auto& [n, cb] : s.callbacks) {
      auto values = [](const std::vector<Callback::Value>& vs) {
        std::vector<std::string> out;
        for (auto& v : vs) out.push_back(fmt::format("{}{}", to_string(v.dtype), v.array ? "[]" : ""));
        return fmt::format("{}", fmt::join(out, ", "));
      };
      line(ind + 1, fmt::format("callback {}({}) -> ({}){}", n, values(cb.arguments), values(cb.results),
                                cb.returns_scalar() ? "" : ", results through pointers"));
    }
    for (auto& [n, d] : s.arrays) line(ind + 1, data(n, d));
    if (!s.global_code.code.empty()) line(ind + 1, "global_code: " + quote_lines(s.global_code.code));
    if (!s.init_code.code.empty()) line(ind + 1, "init_code: " + quote_lines(s.init_code.code));
    if (!s.exit_code.code.empty()) line(ind + 1, "exit_code: " + quote_lines(s.exit_code.code));
    for (auto* list : {&s.target_global_code, &s.target_init_code, &s.target_exit_code})
      for (auto& [where, c] : *list)
        line(ind + 1, std::string(list == &s.target_global_code ? "global_code"
                                  : list == &s.target_init_code ? "init_code"
                                                                : "exit_code") +
                          "[" + where + "]: " + quote_lines(c.code));
    region_body(s.root, ind + 1);
    if (s.external_sync)
      line(ind + 1, fmt::format("entry: the caller's stream waits for the previous call if it changed; {}",
                                s.sync_streams.empty()
                                    ? "all work runs on the caller's stream"
                                    : "internal" + ints("streams", s.sync_streams) + " wait for the caller's stream"));
    if (s.gpu_exit_sync) line(ind + 1, "return: ordered after all GPU work (exit_call)");
    if (s.external_sync)
      line(ind + 1,
           fmt::format(
               "exit: {}with an external stream it records the cross-call event; without one the host waits for it "
               "(the call is then finished)",
               s.sync_streams.empty() ? "" : "the caller's stream waits for" + ints("streams", s.sync_streams) + "; "));
    if (s.gpu_graph)
      line(ind + 1,
           "graph: the call's GPU work is captured once and replayed while the arguments stay the same (gpu-graph)");
    if (s.graph_segments > 0)
      line(ind + 1, fmt::format("graph: {} segment(s) between the host work, each captured once and replayed "
                                "(gpu-graph); the rest runs as without --gpu-graph",
                                s.graph_segments));
    for (auto& ws : s.workspaces)
      line(ind + 1, fmt::format("workspace {}: {} bytes ({} without sharing), base aligned to {}, holds {}",
                                to_string(ws.storage), ex(ws.bytes), ex(ws.unshared_bytes), ws.alignment,
                                join_names(ws.members)));
    if (!s.libraries.empty())
      line(ind + 1, fmt::format("libraries: {} (vendor library calls)", fmt::join(s.libraries, ", ")));
    if (!s.arena.members.empty())
      line(ind + 1,
           fmt::format("arena {} ({}): {} bytes ({} without sharing), holds {}", to_string(s.arena.storage),
                       s.arena.held             ? "held by the instance between calls: gpu-graph"
                       : s.arena.stream_ordered ? "one allocation per call from the stream-ordered pool on stream 0"
                                                : "one allocation per call",
                       ex(s.arena.bytes), ex(s.arena.unshared_bytes), join_names(s.arena.members)));
    if (!s.std_includes.empty())  // last: the host source's standard headers (host-environment)
      line(ind + 1, "host includes: " + fmt::format("{}", fmt::join(s.std_includes, " ")));
  }

  static std::string join_names(const std::vector<std::string>& names) {
    std::string out;
    for (auto& n : names) out += (out.empty() ? "" : ", ") + n;
    return out;
  }

  static std::string data(const std::string& n, const DataDesc& d) {
    std::string s = fmt::format("{} {}: {}[{}]",
                                d.view        ? "view"
                                : d.transient ? "transient"
                                              : "data",
                                n, to_string(d.dtype), join(d.shape));
    if (d.kind == DataKind::Scalar)
      s = fmt::format("{} {}: {} scalar", d.transient ? "transient" : "data", n, to_string(d.dtype));
    if (d.kind == DataKind::Array) {
      auto c = c_order_strides(d.shape);
      bool c_order = c.size() == d.strides.size();
      for (std::size_t i = 0; c_order && i < c.size(); ++i) c_order = equal(simplify(c[i]), simplify(d.strides[i]));
      if (!c_order) s += " strides [" + join(d.strides) + "]";
      if (!equal(simplify(d.total_size), product(d.shape))) s += " total_size " + ex(d.total_size);
      bool zero = true;
      for (auto& o : d.offset) zero &= as_constant(o) == 0;
      if (!zero) s += " offset [" + join(d.offset) + "]";
    }
    s += fmt::format(" storage={} lifetime={}", to_string(d.storage), to_string(d.lifetime));
    if (!d.constant.is_null()) s += fmt::format(" constant({} elements)", d.constant.size());
    if (d.pool) s += " pool";
    if (d.place == DataDesc::Place::State && d.place_state)
      s += fmt::format(" allocated-in-state \"{}\"", d.place_state->label);
    if (d.place == DataDesc::Place::MapScope) s += fmt::format(" allocated-in-scope {}", d.place_scope);
    if (d.workspace_offset) s += " workspace-offset " + ex(d.workspace_offset);
    if (d.arena_offset) s += " arena-offset " + ex(d.arena_offset);
    if (d.alloc != DataDesc::Alloc::None) s += fmt::format(" alloc={}", to_string(d.alloc));
    if (!d.layout_follows.empty()) {
      std::string pairs;
      for (std::size_t j = 0; j < d.layout_dims.size(); ++j)
        if (d.layout_dims[j] >= 0) pairs += fmt::format("{}{}->{}", pairs.empty() ? "" : ", ", j, d.layout_dims[j]);
      s += fmt::format(" layout-follows {} (dimensions {})", d.layout_follows, pairs);
    }
    return s;
  }

  void region_body(const Block& r, int ind) {
    if (r.start_block > 0) line(ind, fmt::format("start block {}", r.start_block));
    for (std::size_t i = 0; i < r.blocks.size(); ++i) block(*r.blocks[i], static_cast<int>(i), ind);
    for (auto& e : r.cf_edges) {
      std::string s = fmt::format("edge {} -> {}", e.src, e.dst);
      s += waits(e.host_waits);
      if (!e.unconditional()) s += " if " + e.condition.code;
      if (!e.assignments.empty()) {
        s += " {";
        for (std::size_t i = 0; i < e.assignments.size(); ++i)
          s += fmt::format("{}{} = {}", i ? ", " : "", e.assignments[i].first, e.assignments[i].second);
        s += "}";
      }
      std::string cpp = e.cpp_condition.translated() ? "if (" + control(e.cpp_condition) + ")" : "";
      for (auto& a : e.cpp_assignments) cpp += (cpp.empty() ? "" : " ") + control(a) + ";";
      if (!cpp.empty()) s += " c++: " + cpp;
      line(ind, s);
    }
  }

  /// gpu-graph: the segment a block is, with its key.
  void segment(const Block& b, int ind) {
    if (b.graph_segment < 0) return;
    line(ind, fmt::format("graph segment {}: captured once, replayed while these stay the same: {}", b.graph_segment,
                          join_names(b.graph_key)));
  }

  /// synchronization: a state's (or a carried loop's) fork from stream 0 and join into it.
  void forks(const Block& b, int ind) {
    if (b.fork_event >= 0)
      line(ind, fmt::format("fork: event {} on stream 0, waited by{}", b.fork_event, ints("streams", b.fork_streams)));
  }
  void joins(const Block& b, int ind) {
    for (auto& [st, ev] : b.join_events)
      line(ind, fmt::format("join: event {} on stream {}, waited by stream 0", ev, st));
  }

  void block(const Block& b, int id, int ind) {
    switch (b.kind) {
      case BlockKind::State:
        line(ind, fmt::format("state {} \"{}\"", id, b.label));
        segment(b, ind + 1);
        forks(b, ind + 1);
        for (std::size_t i = 0; i < b.nodes.size(); ++i) {
          st_ = &b;  // (a nested SDFG's states set it in turn)
          node(*b.nodes[i], static_cast<int>(i), ind + 1);
        }
        for (auto& e : b.edges) edge(b, e, ind + 1);
        joins(b, ind + 1);
        break;
      case BlockKind::Region:
        line(ind, fmt::format("region {} \"{}\"", id, b.label));
        segment(b, ind + 1);
        region_body(b, ind + 1);
        break;
      case BlockKind::Loop: {
        std::string s =
            fmt::format("loop {} \"{}\" {}{}", id, b.label, b.inverted ? "do-while" : "while", waits(b.host_waits));
        s += fmt::format(" ({}{}; {}; {})", b.loop_variable.empty() ? "" : b.loop_variable + ": ",
                         b.init_statement ? b.init_statement->code : "", b.loop_condition.code,
                         b.update_statement ? b.update_statement->code : "");
        if (b.cpp_condition.translated())
          s += fmt::format(" c++: for ({}; {}; {})", control(b.cpp_init), control(b.cpp_condition),
                           control(b.cpp_update));
        line(ind, s);
        segment(b, ind + 1);
        forks(b, ind + 1);
        region_body(b, ind + 1);
        joins(b, ind + 1);
        break;
      }
      case BlockKind::Conditional:
        line(ind, fmt::format("conditional {} \"{}\"{}", id, b.label, waits(b.host_waits)));
        for (std::size_t i = 0; i < b.branches.size(); ++i) {
          auto& [cond, body] = b.branches[i];
          std::string cpp = i < b.cpp_branch_conditions.size() && b.cpp_branch_conditions[i].translated()
                                ? " c++: if (" + control(b.cpp_branch_conditions[i]) + ")"
                                : "";
          line(ind + 1, cond ? "if " + cond->code + ":" + cpp : std::string("else:"));
          segment(*body, ind + 2);
          region_body(*body, ind + 2);
        }
        joins(b, ind + 1);
        break;
      case BlockKind::Break:
        line(ind, fmt::format("break {}", id));
        break;
      case BlockKind::Continue:
        line(ind, fmt::format("continue {}", id));
        break;
      case BlockKind::Return:
        line(ind, fmt::format("return {}", id));
        break;
    }
  }

  /// translate-python's C++, each read printed as `container[index, ...]`.
  static std::string control(const ControlCode& c) {
    return with_reads(c, [](const ControlCode::Read& r) {
      std::vector<std::string> index;
      for (auto& x : r.index) index.push_back(print_expr(x));
      return fmt::format("{}[{}]", r.data, fmt::join(index, ", "));
    });
  }

  static std::string ints(const char* what, const std::vector<int>& w) {
    if (w.empty()) return "";
    std::string s = fmt::format(" {}(", what);
    for (std::size_t i = 0; i < w.size(); ++i) s += (i ? "," : "") + std::to_string(w[i]);
    return s + ")";
  }
  static std::string waits(const std::vector<int>& w) { return ints("host-waits", w); }
  static std::string events(const std::vector<int>& wait, int record) {
    return ints("wait-events", wait) + (record >= 0 ? fmt::format(" record-event({})", record) : "");
  }

  void node(const Node& n, int id, int ind) {
    std::string decided = (n.stream >= 0 ? fmt::format(" stream={}", n.stream) : "") + waits(n.host_waits) +
                          events(n.wait_events, n.record_event) + (n.graph_capture_only ? " capture-only" : "") +
                          (n.device_sync_after ? " device-sync-after" : "");
    std::string scope = n.scope_entry >= 0 && n.kind != NodeKind::MapExit ? fmt::format(" in {}", n.scope_entry) : "";
    switch (n.kind) {
      case NodeKind::Access:
        line(ind, fmt::format("[{}] access {}{}{}", id, n.data, scope, decided));
        break;
      case NodeKind::MapEntry: {
        std::string ps;
        for (std::size_t i = 0; i < n.map.params.size(); ++i)
          ps += fmt::format("{}{}={}", i ? ", " : "", n.map.params[i], range_str({n.map.range[i]}));
        std::string s = fmt::format("[{}] map {}[{}] schedule={}{}{}", id, n.map.label, ps, to_string(n.map.schedule),
                                    scope, decided);
        if (!n.map.gpu_block_size.empty()) s += fmt::format(" block={}", fmt::join(n.map.gpu_block_size, "x"));
        line(ind, s);
        if (n.kernel) kernel(*n.kernel, n.map.params, st_, ind + 1);
        break;
      }
      case NodeKind::MapExit:
        line(ind, fmt::format("[{}] map_exit of {}", id, n.scope_entry));
        break;
      case NodeKind::Tasklet:
        line(ind, fmt::format("[{}] tasklet {} ({}) ({}) -> ({}){}{}{}: {}", id, n.label, to_string(n.code.language),
                              connectors(n.in_connectors), connectors(n.out_connectors), scope,
                              n.library_call.empty() ? "" : " library-call=" + n.library_call, decided,
                              quote_lines(n.code.code)));
        if (n.cpp_code) {
          std::string cpp = *n.cpp_code;  // statements, one per line
          std::replace(cpp.begin(), cpp.end(), '\n', ' ');
          while (!cpp.empty() && cpp.back() == ' ') cpp.pop_back();
          line(ind + 1, "c++: " + cpp);
        }
        break;
      case NodeKind::NestedSDFG: {
        std::string m;
        for (auto& [k, v] : n.symbol_mapping) m += fmt::format("{}{} = {}", m.empty() ? "" : ", ", k, ex(v));
        line(ind, fmt::format("[{}] nested ({}) -> ({}){} symbols {{{}}}", id, connectors(n.in_connectors),
                              connectors(n.out_connectors), scope, m));
        sdfg(*n.sdfg, ind + 1);
        break;
      }
      case NodeKind::Library:
        line(ind, fmt::format("[{}] library {} {} ({}) -> ({}){}", id, n.classpath, n.label,
                              connectors(n.in_connectors), connectors(n.out_connectors), scope));
        break;
    }
  }

  /// " bases(u = -(__u_I_range_0 * __u_I_stride) - ...)": KernelPlan::hoisted_bases, or nothing.
  static std::string hoisted(const KernelPlan& k) {
    if (k.hoisted_bases.empty()) return "";
    std::vector<std::string> bases;
    for (auto& b : k.hoisted_bases) bases.push_back(b.data + " = " + print_expr(b.value));
    return fmt::format(" bases({})", fmt::join(bases, "; "));
  }

  /// ", lead 1 along x (aligned warps)" for the default layout alone; with several, each one's x
  /// parameter, the dimension of the deciding container it indexes, its fold, rows and lead.
  std::string layouts(const KernelPlan& k, const std::vector<std::string>& params) {
    auto lead = [&](const KernelPlan::Layout& l) {
      std::string fold =
          l.pitch_dim >= 0
              ? fmt::format(", y folded into x (pitch at the launch: the stride of {} dimension {} or x's extent)",
                            k.layout_data, l.pitch_dim)
              : std::string();
      if (l.rows > 0) fold += fmt::format(", {} rows per thread", l.rows);
      const int* b = KernelPlan::layout_block(k, l);
      const int* first = KernelPlan::layout_block(k, k.layouts[0]);
      if (!std::equal(b, b + 3, first)) fold += fmt::format(", blocks of {}x{}x{}", b[0], b[1], b[2]);
      return fold + (l.lead > 0 ? fmt::format(", lead {} along x (aligned warps)", l.lead) : std::string());
    };
    if (k.layouts.size() == 1 && !k.layout_data.empty())
      return fmt::format(", x = {} (the unit stride of {} dimension {}){}",
                         params.at(static_cast<std::size_t>(k.layouts[0].x)), k.layout_data, k.layouts[0].data_dim,
                         lead(k.layouts[0]));
    if (k.layouts.size() == 1) return lead(k.layouts[0]);
    std::string out = fmt::format(", layouts by the strides of {} (smallest |stride| on x):", k.layout_data);
    for (std::size_t i = 0; i < k.layouts.size(); ++i)
      out += fmt::format("{} [{}] x = {} ({} dimension {}){}", i ? ";" : "", i,
                         params.at(static_cast<std::size_t>(k.layouts[i].x)), k.layout_data, k.layouts[i].data_dim,
                         lead(k.layouts[i]));
    return out;
  }

  /// " sums over its rows (one atomic after them): e4 colsum[j] per thread; e5 total[0] combined
  /// in each warp", " sums per point combined in each warp by element: e7 t[i]":
  /// KernelPlan::accumulations, or nothing.
  static std::string accumulations(const KernelPlan& k, const Block* st) {
    std::vector<std::string> each, per_point;
    for (auto& a : k.accumulations) {
      std::string what = fmt::format("e{}", a.edge);
      if (st && a.edge >= 0 && static_cast<std::size_t>(a.edge) < st->edges.size()) {
        const Memlet& m = st->edges[static_cast<std::size_t>(a.edge)].memlet;
        what += " " + m.data + (m.subset ? "[" + range_str(*m.subset) + "]" : "");
      }
      if (a.per_point)
        per_point.push_back(what);
      else
        each.push_back(what + (a.combined ? " combined in each warp" : " per thread"));
    }
    std::string out;
    if (!each.empty()) out += fmt::format(" sums over its rows (one atomic after them): {}", fmt::join(each, "; "));
    if (!per_point.empty())
      out += fmt::format(" sums per point combined in each warp by element: {}", fmt::join(per_point, "; "));
    return out;
  }

  void kernel(const KernelPlan& k, const std::vector<std::string>& params, const Block* st, int ind) {
    std::string ps;
    for (auto& p : k.params)
      ps += fmt::format("{}{} {}:{}", ps.empty() ? "" : ", ", to_string(p.kind), p.name, to_string(p.type));
    // The first layout's block (the plan's, or its own); other layouts name theirs where it differs.
    const int* block = k.thread_block || k.layouts.empty() ? k.block : KernelPlan::layout_block(k, k.layouts[0]);
    std::string shape = fmt::format("{}x{}x{}", block[0], block[1], block[2]);
    std::string how =
        k.thread_block
            ? "one block per point, thread-block maps on " + shape + " threads"
            : "one thread per point, blocks of " + shape +
                  (k.rows > 1 ? k.march == 0
                                    ? fmt::format(", {} points per thread a block apart along x", k.rows)
                                    : fmt::format(", {} rows per thread along {}", k.rows, k.march == 2 ? "z" : "y")
                              : "") +
                  layouts(k, params);
    if (k.dependent_launch)
      how += k.early_trigger_blocks_per_sm > 0
                 ? fmt::format(
                       ", dependent launch (next kernel triggered first in grids of at most {} block(s) per "
                       "SM, else at block exit)",
                       k.early_trigger_blocks_per_sm)
                 : ", dependent launch (next kernel triggered at block exit)";
    line(ind, fmt::format("kernel: {} params({}){}{}{}", how, ps, k.split_index ? " index=split" : "", hoisted(k),
                          accumulations(k, st)));
  }

  void edge(const Block&, const DataEdge& e, int ind) {
    std::string s = fmt::format("{}{} -> {}{}", e.src, e.src_conn ? ":" + *e.src_conn : "", e.dst,
                                e.dst_conn ? ":" + *e.dst_conn : "");
    const Memlet& m = e.memlet;
    if (m.data.empty())
      s += "  (empty)";
    else {
      s += "  " + m.data + (m.subset ? "[" + range_str(*m.subset) + "]" : "");
      if (m.other_subset) s += " -> [" + range_str(*m.other_subset) + "]";
      if (m.dynamic) s += " dynamic";
      if (m.wcr) s += " wcr " + *m.wcr;
      if (!m.is_data_src) s += " (dst)";
    }
    if (e.stream >= 0) s += fmt::format(" stream={}", e.stream) + events(e.wait_events, e.record_event);
    if (e.wcr_lowering)
      s += fmt::format(" wcr-lowered={}:{}", to_string(e.wcr_lowering->op), to_string(e.wcr_lowering->form));
    if (e.wcr_lowering && !e.wcr_lowering->identity.empty()) s += " unassigned-starts-at=" + e.wcr_lowering->identity;
    line(ind, s);
  }
};

}  // namespace

std::string range_str(const Range& r) {
  std::string s;
  for (std::size_t i = 0; i < r.size(); ++i) {
    if (i) s += ", ";
    const RangeDim& d = r[i];
    if (equal(simplify(d.start), simplify(d.end))) {
      s += ex(simplify(d.start));
      continue;
    }
    auto step = as_constant(d.step);
    int dir = step && *step < 0 ? -1 : 1;  // the exclusive end lies one step past the inclusive one
    s += ex(simplify(d.start)) + ":" + ex(simplify(make_binary(BinOp::Add, d.end, make_int(dir))));
    if (as_constant(d.step) != 1) s += ":" + ex(d.step);
  }
  return s;
}

std::string dump(const SDFG& sdfg) {
  Dumper d;
  d.sdfg(sdfg, 0);
  return d.out;
}

std::string dump_block(const Block& block) {
  Dumper d;
  d.block(block, 0, 0);
  return d.out;
}

}  // namespace sdfc
