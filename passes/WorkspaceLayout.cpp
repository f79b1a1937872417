#include "passes/WorkspaceLayout.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <limits>
#include <map>
#include <set>

#include "analysis/GpuOps.h"
#include "ir/Diagnostic.h"

namespace sdfc {
namespace {

constexpr std::int64_t kOffsetAlignment = 256;

/// The stream of the GPU operation an edge belongs to (a copy, the kernel whose scope holds it, or
/// a nested SDFG called from host code that queues GPU work: on its node's stream); -1 for host
/// work. A nested SDFG's GPU work is not waited for at its end when it leaves nothing of the host
/// pending (its arguments in device memory), so its containers are on its stream like a kernel's.
int edge_stream(const Block& st, const DataEdge& e) {
  if (e.stream >= 0) return e.stream;
  for (int id : {e.src, e.dst}) {
    const Node* n = &st.node(id);
    if (n->kind == NodeKind::NestedSDFG && n->scope_entry < 0 && n->stream >= 0) return n->stream;
    if (n->kind == NodeKind::MapExit) n = &st.node(n->scope_entry);
    while (n->kind != NodeKind::MapEntry || n->stream < 0) {
      if (n->scope_entry < 0) break;
      n = &st.node(n->scope_entry);
    }
    if (n->kind == NodeKind::MapEntry && n->stream >= 0) return n->stream;
  }
  return -1;
}

/// True when `code` mentions `name` as a whole identifier.
bool mentions(const std::string& code, const std::string& name) {
  auto is_ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (std::size_t pos = code.find(name); pos != std::string::npos; pos = code.find(name, pos + 1)) {
    bool left = pos == 0 || !is_ident(code[pos - 1]);
    bool right = pos + name.size() == code.size() || !is_ident(code[pos + name.size()]);
    if (left && right) return true;
  }
  return false;
}

/// Positions of uses: top-level block `p` covers [p * kSub, p * kSub + kSub - 1]; inside a state
/// that runs once per call, an operation's position is p * kSub + its index in the issue order.
using Pos = std::int64_t;
constexpr Pos kSub = Pos{1} << 24;

/// What the layout needs to know about the uses of the program's External transients.
struct Uses {
  std::map<std::string, std::set<Pos>> positions;  ///< positions of each use (first and last matter)
  std::map<std::string, std::set<int>> streams;    ///< streams of the GPU operations on it
};

/// The outermost map entry around node `v` (v itself outside every scope).
int outermost(const Block& st, int v) {
  if (st.node(v).kind == NodeKind::MapExit) v = st.node(v).scope_entry;
  while (v >= 0 && st.node(v).scope_entry >= 0) v = st.node(v).scope_entry;
  return v;
}

/// Records the uses of `names` inside block `b` (and everything nested in it) between `lo` and
/// `hi`. With `fine` (a top-level state that runs at most once between two other positions) each
/// use is at its operation's place in the issue order: every container a node or its edges name
/// is used at that node's (outermost scope's) position, so a kernel that reads one transient and
/// writes another keeps both live at once. Uses inside a nested SDFG node span the state.
void collect(const Block& b, Pos lo, Pos hi, bool fine, const std::set<std::string>& names, Uses& uses) {
  auto code = [&](const std::string& text) {
    for (auto& n : names)
      if (mentions(text, n)) uses.positions[n].insert({lo, hi});
  };
  if (b.kind == BlockKind::State) {
    std::map<int, Pos> at;
    if (fine) {
      std::vector<int> order = issue_order(b);
      for (std::size_t i = 0; i < order.size(); ++i) at[order[i]] = lo + static_cast<Pos>(i);
    }
    // A nested SDFG's uses span the whole state: its GPU work runs on streams of its own
    // choosing, which the issue order of this state does not order.
    auto use = [&](const std::string& n, int node) {
      int top = outermost(b, node);
      auto it = at.find(top);
      if (it != at.end() && b.node(top).kind != NodeKind::NestedSDFG)
        uses.positions[n].insert(it->second);
      else
        uses.positions[n].insert({lo, hi});
    };
    for (std::size_t i = 0; i < b.nodes.size(); ++i)
      if (b.nodes[i]->kind == NodeKind::Access && names.count(b.nodes[i]->data))
        use(b.nodes[i]->data, static_cast<int>(i));
    for (auto& e : b.edges) {
      for (int end : {e.src, e.dst}) {
        const Node& x = b.node(end);
        std::string n = x.kind == NodeKind::Access && names.count(x.data) ? x.data : "";
        if (!n.empty()) use(n, e.src), use(n, e.dst);
      }
      if (!names.count(e.memlet.data)) continue;
      use(e.memlet.data, e.src);
      use(e.memlet.data, e.dst);
      int s = edge_stream(b, e);
      if (s >= 0) uses.streams[e.memlet.data].insert(s);
    }
  }
  for (auto& e : b.cf_edges) {
    code(e.condition.code);
    for (auto& [sym, value] : e.assignments) code(value);
  }
  if (b.kind == BlockKind::Loop) {
    code(b.loop_condition.code);
    if (b.init_statement) code(b.init_statement->code);
    if (b.update_statement) code(b.update_statement->code);
  }
  for (auto& [cond, body] : b.branches) {
    if (cond) code(cond->code);
    collect(*body, lo, hi, false, names, uses);
  }
  for (auto& c : b.blocks) collect(*c, lo, hi, false, names, uses);
}

/// Positions of the blocks of `region`: a topological order of its strongly connected components
/// (Tarjan), ties broken by block index so that the layout is deterministic.
std::vector<int> block_positions(const Block& region) {
  int n = static_cast<int>(region.blocks.size());
  std::vector<std::vector<int>> succ(static_cast<std::size_t>(n));
  for (auto& e : region.cf_edges) succ[static_cast<std::size_t>(e.src)].push_back(e.dst);
  std::vector<int> index(static_cast<std::size_t>(n), -1), low(static_cast<std::size_t>(n), 0),
      comp(static_cast<std::size_t>(n), -1);
  std::vector<int> stack;
  std::vector<bool> on_stack(static_cast<std::size_t>(n), false);
  int next = 0, comps = 0;
  std::function<void(int)> visit = [&](int v) {
    auto V = static_cast<std::size_t>(v);
    index[V] = low[V] = next++;
    stack.push_back(v);
    on_stack[V] = true;
    for (int w : succ[V]) {
      auto W = static_cast<std::size_t>(w);
      if (index[W] < 0) {
        visit(w);
        low[V] = std::min(low[V], low[W]);
      } else if (on_stack[W]) {
        low[V] = std::min(low[V], index[W]);
      }
    }
    if (low[V] == index[V]) {
      int w;
      do {
        w = stack.back();
        stack.pop_back();
        on_stack[static_cast<std::size_t>(w)] = false;
        comp[static_cast<std::size_t>(w)] = comps;
      } while (w != v);
      ++comps;
    }
  };
  for (int v = 0; v < n; ++v)
    if (index[static_cast<std::size_t>(v)] < 0) visit(v);
  // Kahn's algorithm on the condensation, smallest block index first.
  std::vector<std::set<int>> csucc(static_cast<std::size_t>(comps));
  std::vector<int> indeg(static_cast<std::size_t>(comps), 0), first_block(static_cast<std::size_t>(comps), n);
  for (int v = 0; v < n; ++v) {
    int c = comp[static_cast<std::size_t>(v)];
    first_block[static_cast<std::size_t>(c)] = std::min(first_block[static_cast<std::size_t>(c)], v);
    for (int w : succ[static_cast<std::size_t>(v)]) {
      int d = comp[static_cast<std::size_t>(w)];
      if (c != d && csucc[static_cast<std::size_t>(c)].insert(d).second) ++indeg[static_cast<std::size_t>(d)];
    }
  }
  std::set<std::pair<int, int>> ready;  // (first block, component)
  for (int c = 0; c < comps; ++c)
    if (indeg[static_cast<std::size_t>(c)] == 0) ready.insert({first_block[static_cast<std::size_t>(c)], c});
  std::vector<int> comp_pos(static_cast<std::size_t>(comps), 0);
  int pos = 0;
  while (!ready.empty()) {
    int c = ready.begin()->second;
    ready.erase(ready.begin());
    comp_pos[static_cast<std::size_t>(c)] = pos++;
    for (int d : csucc[static_cast<std::size_t>(c)])
      if (--indeg[static_cast<std::size_t>(d)] == 0) ready.insert({first_block[static_cast<std::size_t>(d)], d});
  }
  std::vector<int> out(static_cast<std::size_t>(n));
  for (int v = 0; v < n; ++v)
    out[static_cast<std::size_t>(v)] = comp_pos[static_cast<std::size_t>(comp[static_cast<std::size_t>(v)])];
  return out;
}

Expr bytes_of(const DataDesc& d) {
  return simplify(make_binary(BinOp::Mul, d.total_size, make_int(static_cast<std::int64_t>(dtype_size(d.dtype)))));
}

Expr sum(const std::vector<Expr>& terms) {
  Expr acc = make_int(0);
  for (auto& t : terms) acc = make_binary(BinOp::Add, acc, t);
  return simplify(acc);
}

/// A per-call GPU transient the arena holds: GPU_Global, not pooled, at a per-call lifetime, placed
/// once per call (what is allocated around one state or inside a map scope keeps its own
/// allocation), on a GPU target.
bool in_arena(const DataDesc& d, const CompileOptions& options) {
  return options.target != Target::CPU && d.transient && d.storage == StorageType::GPU_Global && !d.pool &&
         (d.lifetime == Lifetime::Scope || d.lifetime == Lifetime::State || d.lifetime == Lifetime::SDFG) &&
         d.place == DataDesc::Place::Call;
}

/// A run of workspace bytes that transients with disjoint live ranges take turns using.
struct Slot {
  std::vector<std::string> members;
  Pos last_position = -1;
  int stream = -1;  ///< GPU storage: the one stream of its members' operations
  Expr bytes;       ///< the largest member's size (Max of the sizes when symbolic)
};

/// Lays `members` (of one storage) out in 256-byte aligned slots; transients that may share
/// (`may_share`) take turns in a slot when their live ranges are disjoint (and, for GPU storage,
/// one stream runs all their work). Writes each member's offset through `set_offset`.
Workspace lay_out_slots(SDFG& sdfg, StorageType storage, const std::vector<std::string>& members, Uses& uses,
                        const std::function<bool(const DataDesc&)>& may_share_at_all,
                        const std::function<void(DataDesc&, Expr)>& set_offset) {
  Workspace ws;
  ws.storage = storage;
  ws.members = members;
  // Transients that may share first (by first use), then the rest, each in a slot of its own.
  std::vector<std::string> order = members;
  auto first_use = [&](const std::string& n) {
    auto& p = uses.positions[n];
    return p.empty() ? Pos{-1} : *p.begin();
  };
  std::stable_sort(order.begin(), order.end(), [&](auto& a, auto& b) { return first_use(a) < first_use(b); });
  std::vector<Slot> slots;
  std::map<std::string, std::size_t> slot_of;
  std::vector<Expr> unshared;
  for (auto& n : order) {
    DataDesc& d = *sdfg.find_data(n);
    ws.alignment = std::max(ws.alignment, dtype_size(d.dtype));
    Expr bytes = bytes_of(d);
    unshared.push_back(align_up_expr(bytes, kOffsetAlignment));
    auto& pos = uses.positions[n];
    auto& streams = uses.streams[n];
    bool gpu = is_gpu_storage(storage);
    bool may_share = may_share_at_all(d) && !pos.empty() && (gpu ? streams.size() <= 1 : streams.empty());
    int stream = streams.empty() ? -1 : *streams.begin();
    std::size_t chosen = slots.size();
    if (may_share)
      for (std::size_t i = 0; i < slots.size(); ++i) {
        Slot& s = slots[i];
        if (s.last_position < 0 || s.last_position >= *pos.begin()) continue;
        if (gpu && s.stream >= 0 && stream >= 0 && s.stream != stream) continue;
        chosen = i;
        break;
      }
    if (chosen == slots.size()) {
      slots.push_back(Slot{{}, -1, -1, bytes});
    } else {
      Expr& b = slots[chosen].bytes;
      auto cb = as_constant(b), cn = as_constant(bytes);
      if (cb && cn)
        b = make_int(std::max(*cb, *cn));
      else if (!equal(b, bytes))
        b = make_call("Max", {b, bytes});
    }
    Slot& s = slots[chosen];
    s.members.push_back(n);
    // A transient that may not share closes its slot for everyone after it.
    s.last_position = may_share ? std::max(s.last_position, *pos.rbegin()) : std::numeric_limits<Pos>::max();
    if (stream >= 0) s.stream = stream;
    slot_of[n] = chosen;
  }
  std::vector<Expr> slot_offsets;
  Expr offset = make_int(0);
  for (auto& s : slots) {
    slot_offsets.push_back(offset);
    offset = simplify(make_binary(BinOp::Add, offset, align_up_expr(s.bytes, kOffsetAlignment)));
  }
  for (auto& n : members) set_offset(*sdfg.find_data(n), slot_offsets[slot_of[n]]);
  ws.bytes = offset;
  ws.unshared_bytes = sum(unshared);
  return ws;
}

}  // namespace

Expr align_up_expr(const Expr& bytes, std::int64_t align) {
  if (auto c = as_constant(bytes)) return make_int((*c + align - 1) / align * align);
  return make_binary(BinOp::Mul, make_call("int_ceil", {bytes, make_int(align)}), make_int(align));
}

void lay_out_workspaces(SDFG& sdfg, const CompileOptions& options) {
  sdfg.workspaces.clear();
  sdfg.arena = Workspace{};
  std::set<std::string> names;
  std::vector<std::string> arena;
  for (auto& [n, d] : sdfg.arrays) {
    d.workspace_offset = nullptr;
    d.arena_offset = nullptr;
    if (d.transient && d.lifetime == Lifetime::External) names.insert(n);
    if (in_arena(d, options)) {
      names.insert(n);
      arena.push_back(n);
    }
  }
  if (names.empty()) return;

  Uses uses;
  std::vector<int> positions = block_positions(sdfg.root);
  // Blocks that share a position (a cycle) or loop to themselves run more than once in between.
  std::map<int, int> blocks_at;
  for (int p : positions) ++blocks_at[p];
  std::set<int> self_loop;
  for (auto& e : sdfg.root.cf_edges)
    if (e.src == e.dst) self_loop.insert(e.src);
  auto lo_of = [&](int block) { return positions[static_cast<std::size_t>(block)] * kSub; };
  auto hi_of = [&](int block) { return lo_of(block) + kSub - 1; };
  for (std::size_t i = 0; i < sdfg.root.blocks.size(); ++i) {
    int b = static_cast<int>(i);
    bool fine = blocks_at[positions[i]] == 1 && !self_loop.count(b);
    collect(*sdfg.root.blocks[i], lo_of(b), hi_of(b), fine, names, uses);
  }
  for (auto& e : sdfg.root.cf_edges) {
    // An interstate edge reads after its source block and before its destination.
    for (auto& n : names) {
      bool used = mentions(e.condition.code, n);
      for (auto& [sym, value] : e.assignments) used |= mentions(value, n);
      if (used) uses.positions[n].insert({hi_of(e.src), lo_of(e.dst)});
    }
  }

  std::map<StorageType, std::vector<std::string>> by_storage;
  for (auto& [n, d] : sdfg.arrays) {
    if (!names.count(n) || d.lifetime != Lifetime::External) continue;
    StorageType s = d.storage == StorageType::Default ? StorageType::CPU_Heap : d.storage;
    bool gpu_target = options.target != Target::CPU;
    if (s != StorageType::CPU_Heap && s != StorageType::CPU_Pinned && !(gpu_target && s == StorageType::GPU_Global))
      throw UserError(
          Diagnostic{"", "/attributes/_arrays/" + pointer_token(n) + "/attributes/storage", 0, 0,
                     fmt::format("external transient \"{}\" in {} storage {}", n, to_string(s),
                                 is_gpu_storage(s) && !gpu_target
                                     ? "needs a GPU target (--target cuda or hip)"
                                     : "cannot live in a workspace; use CPU_Heap, CPU_Pinned or GPU_Global")});
    by_storage[s].push_back(n);
  }

  std::vector<Workspace> out;
  for (auto& [storage, members] : by_storage)
    out.push_back(lay_out_slots(
        sdfg, storage, members, uses, [](const DataDesc& d) { return d.lifetime_from_mode; },
        [](DataDesc& d, Expr offset) { d.workspace_offset = std::move(offset); }));
  if (!arena.empty())
    sdfg.arena = lay_out_slots(
        sdfg, StorageType::GPU_Global, arena, uses, [](const DataDesc&) { return true; },
        [](DataDesc& d, Expr offset) { d.arena_offset = std::move(offset); });
  sdfg.arena.stream_ordered = !arena.empty();
  sdfg.workspaces = std::move(out);
}

}  // namespace sdfc
