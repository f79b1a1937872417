// The DOT writer (see Dot.h).
#include "ir/Dot.h"

#include <fmt/format.h>

#include <map>
#include <set>

#include "ir/Dump.h"

namespace sdfc {
namespace {

// One colour per stream (stream k: index k mod 8): an edge colour and a lighter fill.
constexpr const char* kStreamColors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                         "#9467bd", "#8c564b", "#e377c2", "#17becf"};
constexpr const char* kStreamFills[] = {"#c6dbef", "#fdd0a2", "#c7e9c0", "#fcbba1",
                                        "#dadaeb", "#e7d4cf", "#f7d0e8", "#c5eef3"};
constexpr const char* kHostSyncFill = "#ffe08a";

const char* stream_color(int s) {
  return kStreamColors[s % 8];
}
const char* stream_fill(int s) {
  return kStreamFills[s % 8];
}

/// Long code in a label is cut: a picture is for an overview.
std::string clip_code(const std::string& code) {
  constexpr std::size_t kMaxLines = 16, kMaxColumns = 100;
  std::string out, line;
  std::size_t lines = 0;
  auto flush = [&] {
    if (line.size() > kMaxColumns) line = line.substr(0, kMaxColumns - 3) + "...";
    out += line + "\n";
    line.clear();
    ++lines;
  };
  for (char c : code) {
    if (lines == kMaxLines) break;
    if (c == '\n')
      flush();
    else
      line += c;
  }
  if (lines < kMaxLines && !line.empty()) flush();
  if (lines == kMaxLines) out += "...\n";
  return out;
}

class DotWriter {
 public:
  std::string write(const SDFG& sdfg) {
    out_ += fmt::format("digraph \"{}\" {{\n", dot_escape(sdfg.name));
    out_ += "  compound=true;\n  newrank=true;\n  fontname=\"Helvetica\";\n  fontsize=11;\n";
    out_ += fmt::format("  label=\"SDFG {}\";\n  labelloc=t;\n", dot_escape(sdfg.name));
    out_ += "  node [fontname=\"Helvetica\", fontsize=10];\n  edge [fontname=\"Helvetica\", fontsize=9];\n";
    auto [starts, sinks] = region(sdfg.root, 1);
    if (sdfg.gpu_exit_sync) {
      std::string ret = fresh("ret");
      line(1, fmt::format("{} [shape=box, style=\"filled,bold\", fillcolor=\"{}\", label=\"return: host waits for all "
                          "GPU work\"];",
                          ret, kHostSyncFill));
      for (auto& s : sinks) line(1, fmt::format("{} -> {} [{}style=bold];", s.out, ret, ltail(s)));
    }
    if (sdfg.external_sync && !sdfg.sync_streams.empty()) {  // the external-sync pass's entry and exit
      std::vector<std::string> ss;
      for (int x : sdfg.sync_streams) ss.push_back(std::to_string(x));
      line(1, fmt::format("entry [shape=house, style=filled, fillcolor=\"#dddddd\", label=\"entry: streams {} wait for "
                          "the caller's "
                          "stream\\n(and the previous call)\"];",
                          fmt::join(ss, ", ")));
      line(1,
           fmt::format(
               "exit [shape=invhouse, style=filled, fillcolor=\"#dddddd\", label=\"exit: the caller's stream waits for "
               "streams {}\\nand records the cross-call event\"];",
               fmt::join(ss, ", ")));
      for (auto& s : starts) line(1, fmt::format("entry -> {} [{}style=bold];", s.in, lhead(s)));
      for (auto& s : sinks) line(1, fmt::format("{} -> exit [{}style=bold];", s.out, ltail(s)));
    }
    legend();
    out_ += "}\n";
    return out_;
  }

 private:
  std::string out_;
  int next_ = 0;
  std::set<int> streams_;
  bool host_syncs_ = false;
  bool events_drawn_ = false;

  /// Where control flow enters and leaves a block: invisible nodes at the top and the bottom of
  /// its cluster (invisible edges keep the block's content between them, so control flow reads
  /// top-down), or the block's single node.
  struct Anchor {
    std::string in, out;
    std::string cluster;  ///< "" when the block is a single node
  };

  std::string fresh(const char* prefix) { return fmt::format("{}{}", prefix, next_++); }
  void line(int indent, const std::string& text) {
    out_ += std::string(static_cast<std::size_t>(indent) * 2, ' ') + text + "\n";
  }
  static std::string ltail(const Anchor& a) { return a.cluster.empty() ? "" : "ltail=" + a.cluster + ", "; }
  static std::string lhead(const Anchor& a) { return a.cluster.empty() ? "" : "lhead=" + a.cluster + ", "; }

  std::string host_sync_node(int indent, const std::vector<int>& streams, const std::string& what) {
    host_syncs_ = true;
    std::vector<std::string> names;
    for (int s : streams) names.push_back(fmt::format("stream {}", s));
    std::string id = fresh("sync");
    line(indent,
         fmt::format("{} [shape=box, style=\"filled,bold\", fillcolor=\"{}\", label=\"host sync{}\\nwaits for {}\"];",
                     id, kHostSyncFill, what.empty() ? "" : " " + dot_escape(what), fmt::join(names, ", ")));
    return id;
  }

  /// Draws the blocks of a region and its edges; returns its start block and the blocks without
  /// outgoing edges.
  std::pair<std::vector<Anchor>, std::vector<Anchor>> region(const Block& r, int indent) {
    std::vector<Anchor> anchors;
    int start = start_of(r);
    for (std::size_t b = 0; b < r.blocks.size(); ++b)
      anchors.push_back(block(*r.blocks[b], indent, static_cast<int>(b) == start));
    std::vector<bool> has_out(r.blocks.size(), false);
    for (auto& e : r.cf_edges) {
      if (e.src < 0 || e.dst < 0 || e.src >= static_cast<int>(anchors.size()) ||
          e.dst >= static_cast<int>(anchors.size()))
        continue;
      has_out[static_cast<std::size_t>(e.src)] = true;
      const Anchor& from = anchors[static_cast<std::size_t>(e.src)];
      const Anchor& to = anchors[static_cast<std::size_t>(e.dst)];
      std::string label;
      if (!e.unconditional()) label += "if " + e.condition.code;
      for (auto& [k, v] : e.assignments) label += (label.empty() ? "" : "\n") + k + " = " + v;
      std::string attrs = label.empty() ? "" : fmt::format("label=\"{}\", ", dot_escape(label));
      if (!e.host_waits.empty()) {
        // The host waits before it evaluates the edge's condition and assignments.
        std::string sync = host_sync_node(indent, e.host_waits, "");
        line(indent, fmt::format("{} -> {} [{}style=bold];", from.out, sync, ltail(from)));
        line(indent, fmt::format("{} -> {} [{}{}style=bold];", sync, to.in, lhead(to), attrs));
      } else {
        line(indent, fmt::format("{} -> {} [{}{}style=bold];", from.out, to.in, ltail(from) + lhead(to), attrs));
      }
    }
    std::vector<Anchor> starts, sinks;
    if (start >= 0 && start < static_cast<int>(anchors.size()))
      starts.push_back(anchors[static_cast<std::size_t>(start)]);
    for (std::size_t b = 0; b < anchors.size(); ++b)
      if (!has_out[b]) sinks.push_back(anchors[b]);
    return {starts, sinks};
  }

  Anchor open_cluster(int indent, const std::string& label, const std::string& style) {
    Anchor a{fresh("b"), fresh("b"), fresh("cluster_")};
    line(indent, fmt::format("subgraph {} {{", a.cluster));
    line(indent + 1, fmt::format("label=\"{}\";", label));
    line(indent + 1, style);
    for (auto* id : {&a.in, &a.out})
      line(indent + 1, fmt::format("{} [shape=point, style=invis, width=0, height=0, label=\"\"];", *id));
    return a;
  }

  /// Keeps a region's blocks between the anchors of the cluster that holds it.
  void enclose(const Anchor& a, const std::pair<std::vector<Anchor>, std::vector<Anchor>>& inner,
               const std::string& from, int indent) {
    for (auto& s : inner.first) line(indent, fmt::format("{} -> {} [style=invis];", from, s.in));
    for (auto& s : inner.second) line(indent, fmt::format("{} -> {} [style=invis];", s.out, a.out));
    if (inner.first.empty() && inner.second.empty()) line(indent, fmt::format("{} -> {} [style=invis];", from, a.out));
  }

  /// synchronization: a state's (or a carried loop's) fork from stream 0 and join into it, for
  /// its cluster's title.
  static std::string fork_join(const Block& b) {
    auto streams = [](const std::vector<int>& ids, const char* one, const char* many) {
      return ids.size() == 1 ? fmt::format("stream {} {}", ids[0], one)
                             : fmt::format("streams {} {}", fmt::join(ids, ", "), many);
    };
    std::string out;
    if (b.fork_event >= 0)
      out += fmt::format("\\n{} from stream 0 (event {})", streams(b.fork_streams, "forks", "fork"), b.fork_event);
    std::vector<int> joined;
    for (auto& [s, e] : b.join_events) joined.push_back(s);
    if (!joined.empty()) out += fmt::format("\\n{} into stream 0 at the end", streams(joined, "joins", "join"));
    return out;
  }

  Anchor block(const Block& b, int indent, bool is_start) {
    std::string start_style = is_start ? ", penwidth=2" : "";
    switch (b.kind) {
      case BlockKind::State: {
        std::string title = "state " + dot_escape(b.label) + fork_join(b);
        Anchor a = open_cluster(indent, title,
                                "style=rounded; color=\"#555555\"" + std::string(is_start ? "; penwidth=2" : "") + ";");
        dataflow(b, a, indent + 1);
        line(indent, "}");
        return a;
      }
      case BlockKind::Region: {
        Anchor a =
            open_cluster(indent, "region " + dot_escape(b.label),
                         std::string("style=dashed; color=\"#777777\"") + (is_start ? "; penwidth=2" : "") + ";");
        enclose(a, region(b, indent + 1), a.in, indent + 1);
        line(indent, "}");
        return a;
      }
      case BlockKind::Loop: {
        std::string head = fmt::format(
            "loop {}: {}", b.label,
            b.inverted ? "do ... while (" + b.loop_condition.code + ")"
                       : fmt::format("for ({}; {}; {})", b.init_statement ? b.init_statement->code : "",
                                     b.loop_condition.code, b.update_statement ? b.update_statement->code : ""));
        Anchor a = open_cluster(
            indent, dot_escape(head) + fork_join(b),
            std::string("style=\"rounded,bold\"; color=\"#3366aa\"") + (is_start ? "; penwidth=3" : "") + ";");
        std::string from = a.in;
        if (!b.host_waits.empty()) {
          std::string sync = host_sync_node(indent + 1, b.host_waits, "before each loop test");
          line(indent + 1, fmt::format("{} -> {} [style=invis];", a.in, sync));
          from = sync;
        }
        enclose(a, region(b, indent + 1), from, indent + 1);
        line(indent, "}");
        return a;
      }
      case BlockKind::Conditional: {
        Anchor a = open_cluster(
            indent, "conditional " + dot_escape(b.label) + fork_join(b),
            std::string("style=\"rounded,bold\"; color=\"#aa6633\"") + (is_start ? "; penwidth=3" : "") + ";");
        std::string from = a.in;
        if (!b.host_waits.empty()) {
          std::string sync = host_sync_node(indent + 1, b.host_waits, "before the conditions");
          line(indent + 1, fmt::format("{} -> {} [style=bold];", a.in, sync));
          from = sync;
        }
        for (std::size_t i = 0; i < b.branches.size(); ++i) {
          auto& [cond, body] = b.branches[i];
          std::string head = cond ? (i == 0 ? "if " : "else if ") + cond->code : std::string("else");
          Anchor br = open_cluster(indent + 1, dot_escape(head), "style=dashed; color=\"#aa6633\";");
          enclose(br, region(*body, indent + 2), br.in, indent + 2);
          line(indent + 1, "}");
          line(indent + 1, fmt::format("{} -> {} [{}style=bold];", from, br.in, lhead(br)));
          line(indent + 1, fmt::format("{} -> {} [{}style=invis];", br.out, a.out, ltail(br)));
        }
        line(indent, "}");
        return a;
      }
      case BlockKind::Break:
      case BlockKind::Continue:
      case BlockKind::Return: {
        const char* what = b.kind == BlockKind::Break ? "break" : b.kind == BlockKind::Continue ? "continue" : "return";
        std::string id = fresh("b");
        Anchor a{id, id, ""};
        line(indent, fmt::format("{} [shape=cds, label=\"{} {}\"{}];", id, what, dot_escape(b.label), start_style));
        return a;
      }
    }
    return {};
  }

  /// One state's nodes (map scopes as nested clusters) and edges, between the state's anchors.
  void dataflow(const Block& st, const Anchor& a, int indent) {
    std::vector<std::string> ids(st.nodes.size());
    for (auto& id : ids) id = fresh("n");
    std::map<int, std::vector<int>> children;  // scope entry (-1: the state) -> nodes directly inside
    for (std::size_t i = 0; i < st.nodes.size(); ++i) children[st.nodes[i]->scope_entry].push_back(static_cast<int>(i));
    std::map<int, std::string> nested_anchor;  // NestedSDFG node -> the node edges attach to
    scope(st, -1, children, ids, indent, nested_anchor);
    std::vector<bool> has_in(st.nodes.size(), false), has_out(st.nodes.size(), false);
    for (auto& e : st.edges) {
      if (e.src < 0 || e.dst < 0 || e.src >= static_cast<int>(ids.size()) || e.dst >= static_cast<int>(ids.size()))
        continue;
      std::string label;
      const Memlet& m = e.memlet;
      if (!m.data.empty()) {
        label = m.data + (m.subset ? "[" + range_str(*m.subset) + "]" : "");
        if (m.other_subset) label += " -> [" + range_str(*m.other_subset) + "]";
        if (m.dynamic) label += " (dynamic)";
        if (m.wcr) label += "\nwcr " + *m.wcr;
      }
      std::vector<std::string> attrs;
      if (!label.empty()) attrs.push_back(fmt::format("label=\"{}\"", dot_escape(label)));
      if (m.data.empty()) attrs.push_back("style=dotted");
      if (e.stream >= 0) {
        // A GPU copy: drawn in its stream's colour.
        streams_.insert(e.stream);
        attrs.push_back(fmt::format("color=\"{}\", fontcolor=\"{}\", penwidth=2.5", stream_color(e.stream),
                                    stream_color(e.stream)));
        attrs.back() += fmt::format(", xlabel=\"copy, stream {}\"", e.stream);
      }
      auto end = [&](int n) {
        auto it = nested_anchor.find(n);
        return it == nested_anchor.end() ? ids[static_cast<std::size_t>(n)] : it->second;
      };
      line(indent, fmt::format("{} -> {} [{}];", end(e.src), end(e.dst), fmt::join(attrs, ", ")));
      has_out[static_cast<std::size_t>(e.src)] = has_in[static_cast<std::size_t>(e.dst)] = true;
    }
    events(st, ids, nested_anchor, indent);
    for (std::size_t i = 0; i < st.nodes.size(); ++i) {
      if (!has_in[i]) line(indent, fmt::format("{} -> {} [style=invis];", a.in, ids[i]));
      if (!has_out[i]) line(indent, fmt::format("{} -> {} [style=invis];", ids[i], a.out));
    }
    if (st.nodes.empty()) line(indent, fmt::format("{} -> {} [style=invis];", a.in, a.out));
  }

  /// Events between streams (synchronization pass): a dashed edge, in the recording stream's
  /// colour, from the operation that records the event to each operation whose stream waits for it.
  void events(const Block& st, const std::vector<std::string>& ids, const std::map<int, std::string>& nested_anchor,
              int indent) {
    auto at = [&](int n) {
      auto it = nested_anchor.find(n);
      return it == nested_anchor.end() ? ids[static_cast<std::size_t>(n)] : it->second;
    };
    std::map<int, std::pair<std::string, int>> recorded;  // event -> (DOT node after the operation, stream)
    std::vector<std::pair<int, std::string>> waits;       // (event, DOT node before the operation)
    for (std::size_t i = 0; i < st.nodes.size(); ++i) {
      const Node& n = *st.nodes[i];
      if (n.stream < 0) continue;
      int after = n.kind == NodeKind::MapEntry ? n.scope_exit : static_cast<int>(i);
      if (n.record_event >= 0) recorded[n.record_event] = {at(after), n.stream};
      for (int e : n.wait_events) waits.emplace_back(e, at(static_cast<int>(i)));
    }
    for (auto& e : st.edges) {
      if (e.stream < 0) continue;
      if (e.record_event >= 0) recorded[e.record_event] = {at(e.dst), e.stream};
      for (int ev : e.wait_events) waits.emplace_back(ev, at(e.src));
    }
    for (auto& [ev, to] : waits) {
      auto it = recorded.find(ev);
      if (it == recorded.end()) continue;
      line(indent,
           fmt::format("{} -> {} [style=dashed, constraint=false, color=\"{}\", fontcolor=\"{}\", label=\"event {}\"];",
                       it->second.first, to, stream_color(it->second.second), stream_color(it->second.second), ev));
      events_drawn_ = true;
    }
  }

  void scope(const Block& st, int entry, std::map<int, std::vector<int>>& children, const std::vector<std::string>& ids,
             int indent, std::map<int, std::string>& nested_anchor) {
    for (int i : children[entry]) {
      const Node& n = st.node(i);
      if (n.kind != NodeKind::MapEntry) {  // includes the scope's own MapExit
        node(st, i, ids, indent, nested_anchor);
        continue;
      }
      const MapInfo& m = n.map;
      bool kernel = is_gpu_schedule(m.schedule) && n.stream >= 0;
      std::string title =
          fmt::format("{} {}[{}] ({})", kernel ? "kernel" : "map", m.label, range_str(m.range), to_string(m.schedule));
      if (kernel) title += fmt::format(", stream {}", n.stream);
      line(indent, fmt::format("subgraph {} {{", fresh("cluster_")));
      line(indent + 1, fmt::format("label=\"{}\";", dot_escape(title)));
      if (kernel) {
        streams_.insert(n.stream);
        line(indent + 1, fmt::format("style=\"filled,rounded\"; fillcolor=\"{}\"; color=\"{}\"; penwidth=2;",
                                     stream_fill(n.stream), stream_color(n.stream)));
      } else {
        line(indent + 1, "style=\"rounded\"; color=\"#888888\";");
      }
      node(st, i, ids, indent + 1, nested_anchor);
      scope(st, i, children, ids, indent + 1, nested_anchor);
      line(indent, "}");
    }
  }

  void node(const Block& st, int i, const std::vector<std::string>& ids, int indent,
            std::map<int, std::string>& nested_anchor) {
    const Node& n = st.node(i);
    const std::string& id = ids[static_cast<std::size_t>(i)];
    switch (n.kind) {
      case NodeKind::Access:
        line(indent, fmt::format("{} [shape=ellipse, label=\"{}\"];", id, dot_escape(n.data)));
        break;
      case NodeKind::MapEntry:
      case NodeKind::MapExit: {
        const Node& entry = n.kind == NodeKind::MapEntry ? n : st.node(n.scope_entry);
        std::string label = n.kind == NodeKind::MapEntry
                                ? fmt::format("{}[{}]", entry.map.label, fmt::join(entry.map.params, ", "))
                                : "exit " + entry.map.label;
        bool kernel = is_gpu_schedule(entry.map.schedule) && entry.stream >= 0;
        std::string fill = kernel ? fmt::format(", style=filled, fillcolor=\"{}\"", stream_fill(entry.stream)) : "";
        line(indent, fmt::format("{} [shape={}, label=\"{}\"{}];", id,
                                 n.kind == NodeKind::MapEntry ? "invtrapezium" : "trapezium", dot_escape(label), fill));
        break;
      }
      case NodeKind::Tasklet: {
        std::string label = dot_escape(n.label + (n.code.language == Language::CPP ? " (C++)" : "")) + "\\n" +
                            dot_escape(clip_code(n.code.code), "\\l");
        line(indent, fmt::format("{} [shape=octagon, label=\"{}\"];", id, label));
        break;
      }
      case NodeKind::NestedSDFG: {
        std::string cluster = fresh("cluster_");
        line(indent, fmt::format("subgraph {} {{", cluster));
        line(indent + 1, fmt::format("label=\"nested SDFG {}\";", dot_escape(n.sdfg ? n.sdfg->name : n.label)));
        line(indent + 1, "style=\"rounded\"; color=\"#444444\"; penwidth=1.5;");
        line(indent + 1, fmt::format("{} [shape=box, style=\"rounded,bold\", label=\"{}\"];", id, dot_escape(n.label)));
        nested_anchor[i] = id;
        if (n.sdfg) {
          auto [starts, sinks] = region(n.sdfg->root, indent + 1);
          for (auto& s : starts) line(indent + 1, fmt::format("{} -> {} [style=invis];", id, s.in));
        }
        line(indent, "}");
        break;
      }
      case NodeKind::Library: {
        std::string cls = n.classpath.substr(n.classpath.rfind('.') + 1);
        line(indent, fmt::format("{} [shape=box, style=\"bold\", label=\"{}\\n({})\"];", id, dot_escape(n.label),
                                 dot_escape(cls)));
        break;
      }
    }
    if (!n.host_waits.empty()) {
      std::string sync = host_sync_node(indent, n.host_waits, "");
      line(indent, fmt::format("{} -> {} [style=bold, color=\"#b8860b\"];", sync, id));
    }
  }

  void legend() {
    if (streams_.empty() && !host_syncs_ && !events_drawn_) return;
    line(1, "subgraph cluster_legend {");
    line(2, "label=\"legend\"; style=dashed; color=\"#999999\";");
    std::string prev;
    for (int s : streams_) {
      std::string id = fmt::format("legend_stream{}", s);
      line(2, fmt::format(
                  "{} [shape=box, style=\"filled,rounded\", fillcolor=\"{}\", color=\"{}\", label=\"GPU stream {}\"];",
                  id, stream_fill(s), stream_color(s), s));
      if (!prev.empty()) line(2, fmt::format("{} -> {} [style=invis];", prev, id));
      prev = id;
    }
    if (host_syncs_) {
      line(2, fmt::format("legend_sync [shape=box, style=\"filled,bold\", fillcolor=\"{}\", label=\"host sync\"];",
                          kHostSyncFill));
      if (!prev.empty()) line(2, fmt::format("{} -> legend_sync [style=invis];", prev));
      prev = "legend_sync";
    }
    if (events_drawn_) {
      line(2, "legend_ev_a [shape=point]; legend_ev_b [shape=plaintext, label=\"stream waits for the event\"];");
      line(2, "legend_ev_a -> legend_ev_b [style=dashed, label=\"event\"];");
      if (!prev.empty()) line(2, fmt::format("{} -> legend_ev_a [style=invis];", prev));
    }
    line(1, "}");
  }
};

}  // namespace

std::string dot_escape(const std::string& text, const char* line_end) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += line_end;
    } else if (c == '\t') {
      out += "    ";
    } else if (static_cast<unsigned char>(c) >= 0x20 || c < 0) {
      out += c;  // printable ASCII and UTF-8 bytes
    }
  }
  return out;
}

std::string write_dot(const SDFG& sdfg) {
  return DotWriter().write(sdfg);
}

}  // namespace sdfc
