// The host emitter: completeness ledger, expressions, allocations, SDFG bodies and control flow.
// See Emitter.h.
#include "codegen/Emitter.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "codegen/CheckedSize.h"
#include "ir/Diagnostic.h"
#include "ir/Dump.h"
#include "ir/Signature.h"
#include "ir/Walk.h"
#include "lang/CppEnvironment.h"

namespace sdfc::codegen {

void Emitter::begin_state(const Block& st, const std::string& ptr) {
  for (std::size_t i = 0; i < st.edges.size(); ++i)
    SDFC_ASSERT(edge_role(st, st.edges[i]) != EdgeRole::Unsupported,
                "edge role not legalized: " + walk::edge_pointer(st, ptr, i));
  ledger_[&st] = Ledger{ptr, std::vector<int>(st.nodes.size(), 0), std::vector<int>(st.edges.size(), 0)};
}

void Emitter::lowered(const Block& st, int node) {
  ++ledger_.at(&st).nodes.at(static_cast<std::size_t>(node));
}

void Emitter::lowered(const Block& st, const DataEdge& e, EdgeRole as) {
  std::size_t i = static_cast<std::size_t>(&e - st.edges.data());
  SDFC_ASSERT(edge_role(st, e) == as,
              fmt::format("{}: edge {} ({}) lowered as a {}", file_, walk::edge_pointer(st, ledger_.at(&st).ptr, i),
                          to_string(edge_role(st, e)), to_string(as)));
  ++ledger_.at(&st).edges.at(i);
}

void Emitter::end_state(const Block& st) {
  const Ledger& l = ledger_.at(&st);
  for (std::size_t i = 0; i < l.nodes.size(); ++i)
    if (l.nodes[i] != 1)
      SDFC_ASSERT(false,
                  fmt::format("{}: {}/nodes/{} ({} \"{}\") was lowered {} times instead of once by the code generator",
                              file_, l.ptr, i, to_string(st.node(static_cast<int>(i)).kind),
                              st.node(static_cast<int>(i)).label, l.nodes[i]));
  for (std::size_t i = 0; i < l.edges.size(); ++i)
    if (l.edges[i] != 1)
      SDFC_ASSERT(false, fmt::format("{}: {}/edges/{} (a {} from node {} to node {}) was lowered {} times instead of "
                                     "once by the code generator",
                                     file_, l.ptr, i, to_string(edge_role(st, st.edges[i])), st.edges[i].src,
                                     st.edges[i].dst, l.edges[i]));
  ledger_.erase(&st);
}

/// Marks the empty-memlet (ordering) edges into `id`: the emission order honours them.
void Emitter::lowered_ordering_into(const Block& st, int id) {
  for (const DataEdge* e : adj(st).in[static_cast<std::size_t>(id)])
    if (edge_role(st, *e) == EdgeRole::Ordering) lowered(st, *e, EdgeRole::Ordering);
}

const ScopeIndex& Emitter::adj(const Block& st) {
  auto it = adjacency_.find(&st);
  if (it == adjacency_.end()) it = adjacency_.emplace(&st, ScopeIndex(st)).first;
  return it->second;
}

bool code_location_applies(Target target, const std::string& where) {
  if (where == "cuda") return target != Target::CPU;
  if (where == "hip") return target == Target::HIP;
  return true;
}

void emit_located(Target target, const SDFG& sdfg, const std::vector<std::pair<std::string, CodeBlock>>& targets,
                  const std::vector<std::string>& locations, const char* kind, CodeWriter& w, bool block) {
  for (auto& where : locations)
    for (auto& [loc, c] : targets) {
      if (loc != where || !code_location_applies(target, loc)) continue;
      if (block) w.open("");
      w.line(fmt::format("// {}[{}] of SDFG \"{}\"", kind, loc, sdfg.name));
      w.raw(c.code);
      if (block) w.close();
    }
}

/// `D[linear index]` (or the value name for a local scalar) for element `idx` of container `d`.
std::string Emitter::element(const Ctx& c, const std::string& d, const std::vector<Expr>& idx,
                             const std::string& ptr) const {
  auto it = c.access.find(d);
  if (it != c.access.end() && it->second == Access::Value) return ident(d);
  const DataDesc* desc = c.data(d);
  SDFC_ASSERT(desc, fmt::format("unknown data \"{}\" not refused by validation: {}", d, ptr));
  if (desc->kind == DataKind::Scalar) return ident(d) + "[0]";
  SDFC_ASSERT(idx.size() == desc->shape.size(),
              fmt::format("subset of \"{}\" with {} dimensions for {} not refused: {}", d, idx.size(),
                          desc->shape.size(), ptr));
  Expr lin = element_offset(*desc, idx);
  if (c.split_index) {
    // As outline-kernels planned (KernelPlan::split_index): the part that varies with the map's
    // parameters, then the container's hoisted base (KernelPlan::hoisted_bases), then the other
    // terms made of the SDFG's symbols, added one by one.
    std::set<std::string> symbols;
    for (auto& [n, t] : c.sdfg->symbols) symbols.insert(n);
    auto [varying, invariant] = split_invariant(lin, symbols);
    // (constant offsets stay folded in: nvcc shares those itself)
    if (!as_constant(invariant).has_value() && !as_constant(varying).has_value()) {
      std::string text = sym(varying);
      auto base = c.bases.find(d);
      if (base != c.bases.end()) {
        text += " + " + base->second.first;
        invariant = simplify(make_binary(BinOp::Sub, invariant, base->second.second));
      }
      // The invariant terms are added one by one after the varying part, so every partial sum has
      // at least its type (the parameters' int64_t): no narrower than a single sum.
      if (!as_constant(invariant) || *as_constant(invariant) != 0)
        for (auto& [negative, t] : additive_terms(invariant)) {
          bool atom = t->kind == ExprKind::Symbol || t->kind == ExprKind::Int;
          text += fmt::format(atom ? " {} {}" : " {} ({})", negative ? '-' : '+', print_cpp(t));
        }
      return fmt::format("{}[{}]", ident(d), text);
    }
  }
  return fmt::format("{}[{}]", ident(d), sym(lin));
}

/// The members of the structures this SDFG takes (DataDesc::member), each a pointer named as the
/// member's container: an array's and a nested structure's from the field, a scalar's to the field.
/// The reader put every member after its structure, so a nested structure is bound before its own.
void Emitter::bind_members(Ctx& c, CodeWriter& w) const {
  for (auto& [name, d] : c.sdfg->arrays) {
    if (!d.member) continue;
    auto dot = name.rfind('.');
    std::string field = name.substr(dot + 1);
    const DataDesc* parent = c.data(name.substr(0, dot));
    SDFC_ASSERT(parent && parent->structure, "structure member without its structure: " + name);
    bool pointer = struct_of(parent->dtype)->is_pointer(field);
    w.line(fmt::format("{}* {} = {}{}->{};  // member \"{}\" of structure \"{}\"", ctype(d.dtype), ident(name),
                       pointer ? "" : "&", ident(name.substr(0, dot)), field, field, name.substr(0, dot)));
  }
}

/// How a pointer connector bound to subset `r` of `d` indexes: element strides per dimension.
std::string Emitter::address(const Ctx& c, const std::string& d, const std::vector<Expr>& idx,
                             const std::string& ptr) const {
  return "&" + element(c, d, idx, ptr);
}

/// Control code as the translate-python pass wrote it, each read of a container printed
/// as the container is reached here.
std::string Emitter::control(const Ctx& c, const ControlCode& code, const std::string& ptr) const {
  SDFC_ASSERT(code.translated(), "control code not translated (translate-python): " + ptr);
  return with_reads(code, [&](const ControlCode::Read& r) { return element(c, r.data, r.index, ptr); });
}

/// Finds where each transient lives: in one map scope, in one state, or the whole SDFG.
/// Where transients live, as the transient-lifetimes pass placed them.
void Emitter::read_placement(Ctx& c) {
  for (auto& [name, d] : c.sdfg->arrays) {
    if (d.place == DataDesc::Place::MapScope) c.scope_local[name] = {d.place_state, d.place_scope};
    if (d.place == DataDesc::Place::State) c.state_local[name] = d.place_state;
  }
}

/// The element count of transient `name` as C++ text: checked (codegen/CheckedSize.h), or the
/// local that emit_sdfg_body computed for it before any allocation.
std::string Emitter::count_of(const Ctx& c, const std::string& name, const DataDesc& d) const {
  if (c.counted.count(name)) return "__sdfc_count_" + ident(name);
  return checked_count("transient " + name, d.total_size, fmt::format("sizeof({})", ctype(d.dtype)));
}

/// The allocation statement of a transient allocated from a heap where it is placed.
std::string Emitter::alloc_line(const Ctx& c, const std::string& name, const DataDesc& d) {
  std::string count = count_of(c, name, d);
  std::string bytes = fmt::format("{} * sizeof({})", count, ctype(d.dtype));
  std::string decl = fmt::format("{}* {} = nullptr;", ctype(d.dtype), ident(name));
  switch (d.alloc) {
    case DataDesc::Alloc::HostHeap:
      return fmt::format("{}* {} = new {}[{}];", ctype(d.dtype), ident(name), ctype(d.dtype), count);
    case DataDesc::Alloc::PinnedHost:
      return decl + " " + gpu_check(fmt::format("sdfc::gpu::gpuHostAlloc(&{}, {})", ident(name), bytes)) +
             "  // pinned host memory";
    case DataDesc::Alloc::DevicePool:
      out_.uses_pool = true;
      return decl + " " +
             gpu_check(fmt::format("sdfc::gpu::gpuMallocAsync(&{}, {}, {})", ident(name), bytes, gpu_stream(0))) +
             "  // pool";
    case DataDesc::Alloc::DeviceMalloc:
      return decl + " " + gpu_check(fmt::format("sdfc::gpu::gpuMalloc(&{}, {})", ident(name), bytes));
    default:
      break;
  }
  SDFC_ASSERT(false, "not a heap allocation: " + name);
  return "";
}

void Emitter::emit_sdfg_body(Ctx& c, CodeWriter& w) {
  read_placement(c);
  bind_members(c, w);
  for (auto& s : assigned_symbols(*c.sdfg)) {
    if (c.declared_symbols.count(s)) continue;
    auto t = symbol_value_type(c.sdfg->symbol_type(s).value_or(DType::Int64));
    w.line(fmt::format("{} {} = 0;  // symbol assigned by the program", ctype(t), ident(s)));
    c.declared_symbols.insert(s);
  }
  std::vector<std::string> frees;
  const Workspace& arena = c.sdfg->arena;
  bool use_arena = gpu_ && c.root && !arena.members.empty();
  // The sizes of what this body allocates, all computed and checked before the first allocation
  // (a refused size leaves nothing allocated).
  for (auto& [name, d] : c.sdfg->arrays) {
    if (!d.transient || d.place != DataDesc::Place::Call || !is_heap_alloc(d.alloc) || as_constant(d.total_size))
      continue;
    w.line(fmt::format("const std::size_t __sdfc_count_{} = {};", ident(name), count_of(c, name, d)));
    c.counted.insert(name);
  }
  if (use_arena) {
    w.line(fmt::format(
        "// workspace-layout: one allocation per call holds {} GPU transient(s): {} bytes ({} without sharing)",
        arena.members.size(), print_expr(arena.bytes), print_expr(arena.unshared_bytes)));
    std::string bytes = checked_count("the call's arena of GPU transients", arena.bytes, "1");
    if (arena.held) {
      w.line(fmt::format(
          "char* __arena = sdfc::gpu::held_arena({}, {});  // gpu-graph: held by the instance between calls", kCtx,
          bytes));
    } else if (arena.stream_ordered) {
      out_.uses_pool = true;
      w.line("char* __arena = nullptr; " +
             gpu_check(fmt::format("sdfc::gpu::gpuMallocAsync(&__arena, {}, {})", bytes, gpu_stream(0))) +
             "  // from the stream-ordered pool");
    } else {
      w.line("char* __arena = nullptr; " +
             gpu_check(fmt::format("sdfc::gpu::gpuMalloc(&__arena, std::max<std::size_t>(1, {}))", bytes)));
    }
    if (!arena.held) w.line("auto __sdfc_unwind_arena = sdfc::rt::on_unwind([&] { " + arena_free() + " });");
  }
  for (auto& [name, d] : c.sdfg->arrays) {
    if (!d.transient || d.place != DataDesc::Place::Call) continue;
    switch (d.alloc) {  // as place-allocations decided
      case DataDesc::Alloc::Arena:
        SDFC_ASSERT(use_arena, "arena member outside the root's arena: " + name);
        w.line(fmt::format("{0}* {1} = reinterpret_cast<{0}*>(__arena + {2});  // transient in the call's arena",
                           ctype(d.dtype), ident(name), wide_size(d.arena_offset)));
        break;
      case DataDesc::Alloc::StateStruct:
        SDFC_ASSERT(c.root, "nested Persistent/External transient not legalized: " + c.ptr + " " + name);
        w.line(fmt::format("{}* {} = __state->__0_{};  // {}", ctype(d.dtype), ident(name), ident(name),
                           to_string(d.lifetime)));
        break;
      case DataDesc::Alloc::HostValue:
        w.line(fmt::format("{} {} = {}();  // transient scalar", ctype(d.dtype), ident(name), ctype(d.dtype)));
        c.access[name] = Access::Value;
        break;
      case DataDesc::Alloc::HostHeap:
      case DataDesc::Alloc::DeviceMalloc:
      case DataDesc::Alloc::DevicePool:
      case DataDesc::Alloc::PinnedHost:
        w.line(alloc_line(c, name, d) + (d.alloc == DataDesc::Alloc::HostHeap
                                             ? fmt::format("  // transient, lifetime {}", to_string(d.lifetime))
                                             : ""));
        w.line(unwind_line(name, d));
        frees.push_back(name);
        break;
      case DataDesc::Alloc::None:
      case DataDesc::Alloc::ScopeValue:
      case DataDesc::Alloc::ScopeArray:
      case DataDesc::Alloc::SharedMemory:
        SDFC_ASSERT(false, "per-call transient without a per-call allocation (place-allocations): " + name);
    }
  }
  emit_region(c, c.sdfg->root, c.ptr, w);
  if (c.exit_used) w.line("__exit:;");
  if (gpu_ && c.sdfg->gpu_exit_sync) {
    if (c.root)
      w.line(fmt::format(
          "sdfc::gpu::exit_call({}, {{{}}});  // external-sync pass: the caller's stream waits for the streams; "
          "synchronization pass: the return orders after all GPU work",
          kCtx, fmt::join(root_.sync_streams, ", ")));
    else
      host_waits({0}, w);
  }
  for (auto& f : frees) w.line(free_line(f, *c.data(f)));
  if (use_arena && !arena.held) w.line(arena_free());
}

std::string Emitter::arena_free() const {
  return gpu_check(root_.arena.stream_ordered ? fmt::format("sdfc::gpu::gpuFreeAsync(__arena, {})", gpu_stream(0))
                                              : std::string("sdfc::gpu::gpuFree(__arena)"));
}

/// After an allocation: the release if an exception leaves the scope before its free line.
std::string Emitter::unwind_line(const std::string& name, const DataDesc& d) const {
  return fmt::format("auto __sdfc_unwind_{} = sdfc::rt::on_unwind([&] {{ {} }});", ident(name), free_line(name, d));
}

std::string Emitter::free_line(const std::string& name, const DataDesc& d) const {
  switch (d.alloc) {
    case DataDesc::Alloc::PinnedHost:
      return gpu_check(fmt::format("sdfc::gpu::gpuFreeHost({})", ident(name)));
    case DataDesc::Alloc::DevicePool:
      return gpu_check(fmt::format("sdfc::gpu::gpuFreeAsync({}, {})", ident(name), gpu_stream(0)));
    case DataDesc::Alloc::DeviceMalloc:
      return gpu_check(fmt::format("sdfc::gpu::gpuFree({})", ident(name)));
    default:
      SDFC_ASSERT(d.alloc == DataDesc::Alloc::HostHeap, "not a heap allocation: " + name);
      return fmt::format("delete[] {};", ident(name));
  }
}

void Emitter::emit_region(Ctx& c, const Block& r, const std::string& ptr, CodeWriter& w) {
  int n = static_cast<int>(r.blocks.size());
  if (n == 0) return;
  std::vector<std::vector<const InterstateEdge*>> out(static_cast<std::size_t>(n));
  std::vector<int> indeg(static_cast<std::size_t>(n), 0);
  for (auto& e : r.cf_edges) {
    out[static_cast<std::size_t>(e.src)].push_back(&e);
    indeg[static_cast<std::size_t>(e.dst)]++;
  }
  int start = std::max(0, start_of(r));
  // Emission order: depth-first from the start block, following the first successor, so that
  // chains print in order without labels.
  std::vector<int> order;
  std::vector<bool> seen(static_cast<std::size_t>(n), false);
  std::vector<int> stack{start};
  while (!stack.empty()) {
    int b = stack.back();
    stack.pop_back();
    if (seen[static_cast<std::size_t>(b)]) continue;
    seen[static_cast<std::size_t>(b)] = true;
    order.push_back(b);
    auto& os = out[static_cast<std::size_t>(b)];
    for (auto it = os.rbegin(); it != os.rend(); ++it)
      if (!seen[static_cast<std::size_t>((*it)->dst)]) stack.push_back((*it)->dst);
  }
  int region_id = c.labels++;
  auto label = [&](int b) { return fmt::format("__r{}_b{}", region_id, b); };
  std::vector<int> position(static_cast<std::size_t>(n), -1);
  for (std::size_t i = 0; i < order.size(); ++i) position[static_cast<std::size_t>(order[i])] = static_cast<int>(i);
  // A block falls through from its predecessor in the order when that predecessor's only edge
  // is an unconditional one to it.
  auto falls_through = [&](int from, int to) {
    auto& os = out[static_cast<std::size_t>(from)];
    return os.size() == 1 && os[0]->unconditional() && os[0]->dst == to &&
           position[static_cast<std::size_t>(to)] == position[static_cast<std::size_t>(from)] + 1;
  };
  std::set<int> needs_label;
  for (auto& e : r.cf_edges)
    if (!falls_through(e.src, e.dst)) needs_label.insert(e.dst);
  bool end_used = false;
  for (std::size_t i = 0; i < order.size(); ++i) {
    int b = order[i];
    const Block& blk = *r.blocks[static_cast<std::size_t>(b)];
    if (needs_label.count(b)) w.line(label(b) + ":;");
    std::string bp = ptr + "/nodes/" + std::to_string(b);
    emit_segment(blk, bp, w, [&] { emit_block(c, blk, bp, w); });
    auto& os = out[static_cast<std::size_t>(b)];
    bool last = i + 1 == order.size();
    if (os.size() == 1 && falls_through(b, os[0]->dst)) {
      host_waits(os[0]->host_waits, w);
      emit_assignments(c, *os[0], ptr, w);
      continue;
    }
    for (auto* e : os) host_waits(e->host_waits, w);
    bool unconditional_seen = false;
    for (auto* e : os) {
      std::size_t ei = static_cast<std::size_t>(e - r.cf_edges.data());
      std::string ep = ptr + "/edges/" + std::to_string(ei);
      if (e->unconditional()) {
        w.open("");
        emit_assignments(c, *e, ptr, w);
        w.line(fmt::format("goto {};", label(e->dst)));
        w.close();
        unconditional_seen = true;
        break;
      }
      w.open(fmt::format("if ({})", control(c, e->cpp_condition, ep)));
      emit_assignments(c, *e, ptr, w);
      w.line(fmt::format("goto {};", label(e->dst)));
      w.close();
    }
    if (!unconditional_seen && !last) {
      w.line(fmt::format("goto __r{}_end;", region_id));
      end_used = true;
    }
  }
  if (end_used) w.line(fmt::format("__r{}_end:;", region_id));
}

void Emitter::emit_segment(const Block& b, const std::string& ptr, CodeWriter& w, const std::function<void()>& body) {
  if (b.graph_segment < 0) {
    body();
    return;
  }
  std::vector<std::string> key;
  for (auto& n : b.graph_key) key.push_back(fmt::format("{{(const void*)&{0}, sizeof({0})}}", ident(n)));
  if (key.empty()) key.push_back("{nullptr, 0}");
  w.open("");
  w.line(fmt::format("// gpu-graph segment {} ({}): captured once, replayed while these bytes stay the same",
                     b.graph_segment, ptr));
  w.line(fmt::format("const sdfc::gpu::GraphArg __seg_args[] = {{{}}};", fmt::join(key, ", ")));
  const auto& ids = root_.sync_streams;
  if (ids.empty())
    w.line("const int* __seg_streams = nullptr;");
  else
    w.line(fmt::format("static constexpr int __seg_streams[] = {{{}}};", fmt::join(ids, ", ")));
  w.line(
      fmt::format("sdfc::gpu::Segment __seg({}, {}, __seg_args, sizeof(__seg_args) / sizeof(__seg_args[0]), "
                  "__seg_streams, {});",
                  kCtx, b.graph_segment, ids.size()));
  w.open("if (__seg.run())");
  body();
  w.line("__seg.finish(__state->__sdfc_error.set);");
  w.close();
  w.close();
}

void Emitter::emit_assignments(Ctx& c, const InterstateEdge& e, const std::string& region_ptr, CodeWriter& w) {
  SDFC_ASSERT(e.cpp_assignments.size() == e.assignments.size(),
              "interstate assignments not translated (translate-python): " + region_ptr);
  for (auto& a : e.cpp_assignments) w.line(control(c, a, region_ptr) + ";");
}

void Emitter::emit_fork(const Block& b, CodeWriter& w) {
  if (b.fork_event < 0) return;  // synchronization pass: the block's streams start after stream 0's work
  stream_record(0, b.fork_event, w);
  for (int s : b.fork_streams) stream_waits(s, {b.fork_event}, w);
}

void Emitter::emit_join(const Block& b, CodeWriter& w) {
  for (auto& [s, e] : b.join_events) {  // ... and stream 0 continues after theirs
    stream_record(s, e, w);
    stream_waits(0, {e}, w);
  }
}

void Emitter::emit_block(Ctx& c, const Block& b, const std::string& ptr, CodeWriter& w) {
  switch (b.kind) {
    case BlockKind::State: {
      w.open("");
      w.line(fmt::format("// state \"{}\" ({})", b.label, ptr));
      std::vector<std::string> frees;
      for (auto& [name, st] : c.state_local)
        if (st == &b) {
          w.line(alloc_line(c, name, *c.data(name)) + "  // transient, allocated where its size is known");
          w.line(unwind_line(name, *c.data(name)));
          frees.push_back(name);
        }
      emit_fork(b, w);
      begin_state(b, ptr);
      emit_scope(c, b, ptr, -1, w, c.parallel);
      end_state(b);
      emit_join(b, w);
      for (auto& f : frees) w.line(free_line(f, *c.data(f)));
      w.close();
      break;
    }
    case BlockKind::Region:
      w.line(fmt::format("// region \"{}\" ({})", b.label, ptr));
      emit_region(c, b, ptr, w);
      break;
    case BlockKind::Loop: {
      std::string init = b.init_statement ? control(c, b.cpp_init, ptr) + ";" : "";
      std::string cond = control(c, b.cpp_condition, ptr);
      for (int st : b.host_waits)  // the synchronization pass: wait before every evaluation
        cond = fmt::format("(SDFC_GPU_CHECK({}, sdfc::gpu::gpuStreamSynchronize({})), {})", kCtx, gpu_stream(st), cond);
      std::string update = b.update_statement ? control(c, b.cpp_update, ptr) : "";
      w.line(fmt::format("// loop \"{}\" ({})", b.label, ptr));
      emit_fork(b, w);  // streams that carry their work across iterations
      ++c.loop_depth;
      if (!b.inverted) {
        w.open(fmt::format("for ({} {}; {})", init.empty() ? ";" : init, cond, update));
        emit_region(c, b, ptr, w);
        w.close();
      } else {
        // do-while: the update sits in the loop test so that `continue` runs it too.
        if (!init.empty()) w.line(init);
        w.open("do");
        emit_region(c, b, ptr, w);
        std::string test = update.empty()              ? cond
                           : b.update_before_condition ? fmt::format("({}, {})", update, cond)
                                                       : fmt::format("({}) && ({}, true)", cond, update);
        w.close(fmt::format(" while ({});", test));
      }
      --c.loop_depth;
      emit_join(b, w);
      break;
    }
    case BlockKind::Conditional: {
      w.line(fmt::format("// conditional \"{}\" ({})", b.label, ptr));
      host_waits(b.host_waits, w);
      for (std::size_t i = 0; i < b.branches.size(); ++i) {
        auto& [cond, body] = b.branches[i];
        std::string bp = ptr + "/branches/" + std::to_string(i);
        if (cond) {
          SDFC_ASSERT(b.cpp_branch_conditions.size() == b.branches.size(),
                      "branch conditions not translated (translate-python): " + ptr);
          std::string head = fmt::format("if ({})", control(c, b.cpp_branch_conditions[i], bp + "/0"));
          w.open(i == 0 ? head : "else " + head);
        } else {
          w.open("else");
        }
        if (body->graph_host_work)  // gpu-graph: host work a replay would skip
          w.line(fmt::format("sdfc::gpu::abandon_capture_here({});  // gpu-graph: this branch does host work", kCtx));
        const Block& region = *body;  // (a lambda cannot capture a structured binding in C++17)
        emit_segment(region, bp + "/1", w, [&] { emit_region(c, region, bp + "/1", w); });
        w.close();
      }
      emit_join(b, w);  // streams that carried the chain before it into its branches
      break;
    }
    case BlockKind::Break:
    case BlockKind::Continue:
      SDFC_ASSERT(c.loop_depth > 0, "break/continue outside a loop not legalized: " + ptr);
      w.line(b.kind == BlockKind::Break ? "break;" : "continue;");
      break;
    case BlockKind::Return:
      w.line("goto __exit;  // return block");
      c.exit_used = true;
      break;
  }
}

EmittedBody Emitter::emit_program() {
  Signature sig = signature(root_);
  Ctx c;
  c.sdfg = &root_;
  c.ptr = "";
  c.root = true;
  c.index_data();
  for (auto& a : sig.args) {
    if (a.kind == Argument::Kind::Symbol) c.declared_symbols.insert(a.name);
    if (a.kind == Argument::Kind::Scalar && !a.by_pointer) c.access[a.name] = Access::Value;
  }
  CodeWriter body(1);
  emit_sdfg_body(c, body);
  out_.text = body.str();
  return std::move(out_);
}

void Emitter::emit_kernel(Ctx&, const Block&, const std::string& ptr, int, CodeWriter&) {
  SDFC_ASSERT(false, "GPU schedule on the cpu not legalized: " + ptr);
}

void Emitter::emit_gpu_copy(const Ctx&, const std::string&, const std::string&, const Range&, const Range&,
                            const std::vector<std::size_t>&, const std::vector<std::size_t>&, const DataEdge&,
                            const std::string& ep, CodeWriter&) {
  SDFC_ASSERT(false, "a GPU copy in a CPU program: " + ep);
}

}  // namespace sdfc::codegen
