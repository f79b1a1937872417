// The host emitter's dataflow: scopes, maps, tasklets, write-conflict resolution, host copies and
// nested SDFGs. See Emitter.h.
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "codegen/CheckedSize.h"
#include "codegen/Emitter.h"
#include "ir/Diagnostic.h"
#include "ir/Dump.h"
#include "ir/Signature.h"
#include "ir/Walk.h"
#include "lang/CppEnvironment.h"
#include "lang/PythonTasklet.h"

namespace sdfc::codegen {

void Emitter::emit_scope(Ctx& c, const Block& st, const std::string& ptr, int scope, CodeWriter& w, bool parallel) {
  // Transients that live only in this scope are declared here.
  std::vector<std::string> frees;
  for (auto& [name, where] : c.scope_local) {
    if (where.first != &st || where.second != scope) continue;
    const DataDesc& d = *c.data(name);
    if (d.alloc == DataDesc::Alloc::ScopeValue) {
      w.line(fmt::format("{} {};  // transient local to the scope", ctype(d.dtype), ident(name)));
      c.access[name] = Access::Value;
      continue;
    }
    if (d.alloc == DataDesc::Alloc::HostHeap) {  // sized at run time (place-allocations)
      w.line(alloc_line(c, name, d) + "  // transient local to the scope, sized at run time");
      w.line(unwind_line(name, d));
      frees.push_back(name);
      continue;
    }
    SDFC_ASSERT(d.alloc == DataDesc::Alloc::ScopeArray || d.alloc == DataDesc::Alloc::SharedMemory,
                "scope transient without a scope allocation (place-allocations): " + name);
    bool shared = d.alloc == DataDesc::Alloc::SharedMemory;
    w.line(fmt::format("{}{} {}[{}];  // transient local to the {}", shared ? "__shared__ " : "", ctype(d.dtype),
                       ident(name), *as_constant(d.total_size), shared ? "block (GPU_Shared)" : "scope"));
  }
  // The issue order the passes reasoned about (analysis/GpuOps.h: one definition for both).
  for (int v : scope_order(st, scope, adj(st))) emit_node(c, st, ptr, v, w, parallel);
  for (auto& f : frees) w.line(free_line(f, *c.data(f)));
}

void Emitter::emit_node(Ctx& c, const Block& st, const std::string& ptr, int id, CodeWriter& w, bool parallel) {
  const Node& n = st.node(id);
  if (!c.in_kernel) host_waits(n.host_waits, w);
  lowered_ordering_into(st, id);
  switch (n.kind) {
    case NodeKind::Access:
      lowered(st, id);
      // Data arriving from the enclosing map's entry first, then what leaves for other access
      // nodes and for the map's exit (each a copy between the two containers at the path's ends).
      for (const DataEdge* e : adj(st).in[static_cast<std::size_t>(id)])
        if (edge_role(st, *e) == EdgeRole::ScopeCopyIn) {
          emit_copy(c, st, *e, walk::edge_pointer(st, ptr, static_cast<std::size_t>(e - st.edges.data())), w, parallel);
          lowered(st, *e, EdgeRole::ScopeCopyIn);
        }
      for (const DataEdge* e : adj(st).out[static_cast<std::size_t>(id)]) {
        EdgeRole role = edge_role(st, *e);
        if (role != EdgeRole::Copy && role != EdgeRole::ScopeCopyOut) continue;
        emit_copy(c, st, *e, walk::edge_pointer(st, ptr, static_cast<std::size_t>(e - st.edges.data())), w, parallel);
        lowered(st, *e, role);
      }
      break;
    case NodeKind::MapEntry:
      emit_map(c, st, ptr, id, w, parallel);
      break;
    case NodeKind::Tasklet:
      if (n.stream >= 0 && !c.in_kernel) {  // a GPU library call: on its stream, ordered as a kernel
        stream_waits(n.stream, n.wait_events, w);
        w.line(fmt::format("sdfc::gpu::maybe_delay({}, {}, __sdfc_gpu_spin);", kCtx, gpu_stream(n.stream)));
      }
      emit_tasklet(c, st, ptr, id, w, parallel);
      if (n.stream >= 0 && !c.in_kernel) stream_record(n.stream, n.record_event, w);
      if (n.device_sync_after)
        w.line(gpu_check("sdfc::gpu::gpuDeviceSynchronize()") +
               "  // synchronization pass: the callback may have queued work on streams of its own");
      break;
    case NodeKind::NestedSDFG:
      if (!c.in_kernel) stream_waits(0, n.wait_events, w);
      emit_nested(c, st, ptr, id, w, parallel);
      if (!c.in_kernel) stream_record(0, n.record_event, w);
      break;
    case NodeKind::MapExit:
      SDFC_ASSERT(false, "map exits are emitted with their entries");
      break;
    case NodeKind::Library:
      SDFC_ASSERT(false, "library nodes are expanded before code generation (expand-library-nodes)");
  }
}

/// Marks a map scope's entry and exit nodes and the edges its construct consumes: the data
/// entering (read by the memlets inside), the data leaving (written by the memlets inside), and
/// ordering edges into the exit. Dynamic range inputs are marked where they are read.
void Emitter::lowered_scope(const Block& st, int entry) {
  const Node& n = st.node(entry);
  lowered(st, entry);
  for (const DataEdge* e : adj(st).in[static_cast<std::size_t>(entry)])
    if (edge_role(st, *e) == EdgeRole::ScopeInput) lowered(st, *e, EdgeRole::ScopeInput);
  if (n.scope_exit < 0) return;
  lowered(st, n.scope_exit);
  lowered_ordering_into(st, n.scope_exit);
  for (const DataEdge* e : adj(st).out[static_cast<std::size_t>(n.scope_exit)])
    if (edge_role(st, *e) == EdgeRole::ScopeOutput) lowered(st, *e, EdgeRole::ScopeOutput);
}

void Emitter::emit_map(Ctx& c, const Block& st, const std::string& ptr, int id, CodeWriter& w, bool parallel) {
  const Node& n = st.node(id);
  const MapInfo& m = n.map;
  std::string np = walk::node_pointer(st, ptr, static_cast<std::size_t>(id));
  lowered_scope(st, id);
  SDFC_ASSERT(gpu_ || !is_gpu_schedule(m.schedule), "GPU schedule on the cpu not legalized: " + np);
  if (m.schedule == ScheduleType::GPU_Device && !c.in_kernel) {
    emit_kernel(c, st, ptr, id, w);
    return;
  }
  if (m.schedule == ScheduleType::GPU_ThreadBlock && c.block_kernel >= 0 && n.scope_entry == c.block_kernel) {
    // One thread of the block per point; the block waits for all of them before going on.
    w.line(fmt::format("// map {}[{}] (GPU_ThreadBlock, {}): the block's threads", m.label, range_str(m.range), np));
    const char* axis[] = {"x", "y", "z"};
    std::size_t d = m.params.size();
    std::vector<std::string> guards;
    for (std::size_t k = 0; k < d; ++k)
      guards.push_back(fmt::format("threadIdx.{} < {}", axis[k], sym(extent(m.range[d - 1 - k]))));
    w.open(fmt::format("if ({})", fmt::join(guards, " && ")));
    for (std::size_t k = 0; k < d; ++k) {
      const RangeDim& r = m.range[d - 1 - k];
      w.line(fmt::format("const int64_t {} = {} + static_cast<int64_t>(threadIdx.{}) * {};", ident(m.params[d - 1 - k]),
                         sym(r.start), axis[k], sym(r.step)));
    }
    Ctx inner = c;
    inner.block_kernel = -1;
    emit_scope(inner, st, ptr, id, w, true);
    w.close();
    w.line("__syncthreads();");
    return;
  }
  w.line(fmt::format("// map {}[{}] ({}, {})", m.label, range_str(m.range), to_string(m.schedule), np));
  auto dyn = dynamic_range_inputs(*c.sdfg, st, id);
  if (!dyn.empty()) w.open("");
  declare_dynamic_inputs(c, st, dyn, np, w);
  bool multicore = m.schedule == ScheduleType::CPU_Multicore && !c.in_kernel;
  // A transient allocated in this scope or one inside it at run time may throw (a refused size, no
  // memory): in a parallel region the iterations catch, and the loop rethrows after it.
  bool catches = false;
  if (multicore && !parallel)
    for (auto& [name, where] : c.scope_local)
      if (where.first == &st && c.data(name)->alloc == DataDesc::Alloc::HostHeap)
        for (int s = where.second; s >= 0 && !catches; s = st.node(s).scope_entry) catches = s == id;
  std::string errors = fmt::format("__sdfc_loop_errors_{}", id);
  if (catches) w.line(fmt::format("sdfc::rt::LoopErrors {};", errors));
  if (multicore && !parallel) w.line("#pragma omp parallel for");
  for (std::size_t k = 0; k < m.params.size(); ++k) {
    const RangeDim& r = m.range[k];
    auto step = as_constant(r.step);
    std::string p = ident(m.params[k]);
    std::string cmp = step && *step < 0 ? ">=" : "<=";
    std::string inc = step == 1 ? "++" + p : fmt::format("{} += {}", p, sym(r.step));
    w.open(fmt::format("for (int64_t {} = {}; {} {} {}; {})", p, sym(r.start), p, cmp, sym(r.end), inc));
  }
  if (catches) w.open("try");
  emit_scope(c, st, ptr, id, w, parallel || multicore);
  if (catches) {
    w.close();
    w.open("catch (...)");
    w.line(errors + ".capture();");
    w.close();
  }
  for (std::size_t k = 0; k < m.params.size(); ++k) w.close();
  if (catches) w.line(errors + ".rethrow();");
  if (!dyn.empty()) w.close();
}

const DataEdge* Emitter::in_edge(const Block& st, int id, const std::string& conn) {
  for (auto* e : adj(st).in[static_cast<std::size_t>(id)])
    if (e->dst_conn && *e->dst_conn == conn) return e;
  return nullptr;
}

std::vector<const DataEdge*> Emitter::out_edges(const Block& st, int id, const std::string& conn) {
  std::vector<const DataEdge*> r;
  for (auto* e : adj(st).out[static_cast<std::size_t>(id)])
    if (e->src_conn && *e->src_conn == conn) r.push_back(e);
  return r;
}

/// Writes `value` into `target` (an element access) with the edge's conflict resolution, in the
/// form lower-wcr chose.
void Emitter::emit_write(const std::string& target, const std::string& value, DType t, const DataEdge& e,
                         const std::string& ptr, CodeWriter& w) {
  if (!e.memlet.wcr) {
    w.line(fmt::format("{} = {};", target, value));
    return;
  }
  SDFC_ASSERT(e.wcr_lowering, "write-conflict resolution not lowered (lower-wcr): " + ptr);
  using F = WcrLowering::Form;
  using Op = WcrLowering::Op;
  const WcrLowering& wcr = *e.wcr_lowering;
  auto lambda = [&](const std::string& body) {
    return fmt::format("[]({0} {1}, {0} {2}) -> {0} {{ return static_cast<{0}>({3}); }}", ctype(t), ident(wcr.a),
                       ident(wcr.b), body);
  };
  if (is_struct(t)) {  // lower-wcr translated the lambda; no atomic form
    SDFC_ASSERT(!wcr.struct_body.empty() && (wcr.form == F::Plain || wcr.form == F::HostCritical),
                "struct wcr not lowered: " + ptr);
    if (wcr.form == F::HostCritical) w.line("#pragma omp critical(sdfc_struct_wcr)");
    w.line(fmt::format("{0} = ({1})({0}, {2});", target, lambda(wcr.struct_body), value));
    return;
  }
  // Min and max through the runtime's (NaN-propagating as Python's) helpers, other lambdas as written.
  std::string body = wcr.op == Op::Min   ? fmt::format("sdfc::rt::min({}, {})", wcr.a, wcr.b)
                     : wcr.op == Op::Max ? fmt::format("sdfc::rt::max({}, {})", wcr.a, wcr.b)
                                         : print_cpp(wcr.body);
  if (t == DType::Complex64 || t == DType::Complex128) {
    if (wcr.form == F::HostAtomic || wcr.form == F::DeviceAdd) {  // a sum: the two parts, each atomically
      w.open("");
      w.line(fmt::format("const {} __wcr_value = {};", ctype(t), value));
      for (const char* part : {"re", "im"}) {
        if (wcr.form == F::DeviceAdd) {
          w.line(fmt::format("sdfc::gpu::atomic_add(&({}).{}, __wcr_value.{});", target, part, part));
        } else {
          w.line("#pragma omp atomic");
          w.line(fmt::format("({}).{} += __wcr_value.{};", target, part, part));
        }
      }
      w.close();
      return;
    }
    SDFC_ASSERT(wcr.form == F::Plain || wcr.form == F::HostCritical, "complex wcr form not legalized: " + ptr);
    std::string cbody = wcr.op == Op::Sum       ? fmt::format("{} + {}", ident(wcr.a), ident(wcr.b))
                        : wcr.op == Op::Product ? fmt::format("{} * {}", ident(wcr.a), ident(wcr.b))
                                                : print_cpp(wcr.body);
    if (wcr.form == F::HostCritical) w.line("#pragma omp critical(sdfc_complex_wcr)");
    w.line(fmt::format("{0} = ({1})({0}, {2});", target, lambda(cbody), value));
    return;
  }
  switch (wcr.form) {
    case F::DeviceAdd:
      w.line(fmt::format("sdfc::gpu::atomic_add(&{}, static_cast<{}>({}));", target, ctype(t), value));
      return;
    case F::DeviceCas:
      w.line(fmt::format(
          "sdfc::gpu::atomic_update(&{}, static_cast<{}>({}), []__device__({} {}, {} {}) -> {} {{ return "
          "static_cast<{}>({}); }});",
          target, ctype(t), value, ctype(t), ident(wcr.a), ctype(t), ident(wcr.b), ctype(t), ctype(t), body));
      return;
    case F::HostCas:
      w.line(
          fmt::format("sdfc::rt::atomic_update(&{}, static_cast<{}>({}), {});", target, ctype(t), value, lambda(body)));
      return;
    case F::HostAtomic:
    case F::Plain:
      if (wcr.op == Op::Sum || wcr.op == Op::Product) {
        if (wcr.form == F::HostAtomic) w.line("#pragma omp atomic");
        w.line(fmt::format("{} {}= {};", target, wcr.op == Op::Sum ? "+" : "*", value));
      } else {
        w.line(fmt::format("{0} = ({1})({0}, {2});", target, lambda(body), value));
      }
      return;
    case F::HostCritical:
      break;
  }
  SDFC_ASSERT(false, "omp-critical write-conflict resolution on real data: " + ptr);
}

void Emitter::emit_tasklet(Ctx& c, const Block& st, const std::string& ptr, int id, CodeWriter& w, bool parallel) {
  const Node& n = st.node(id);
  std::string np = walk::node_pointer(st, ptr, static_cast<std::size_t>(id));
  const ScopeIndex& ad = adj(st);
  TaskletScope scope =
      python_tasklet_scope(*c.sdfg, st, id, ad.in[static_cast<std::size_t>(id)], ad.out[static_cast<std::size_t>(id)]);
  for (auto* list : {&n.in_connectors, &n.out_connectors})
    for (auto& conn : *list)
      SDFC_ASSERT(is_identifier(conn.name), "connector name not legalized: " + np + " " + conn.name);

  // Connector bindings: (C++ declaration type, connector, the access it binds to).
  struct Binding {
    std::string type, name, access;
  };
  struct Write {
    std::string target, value;
    DType t;
    const DataEdge* edge;
    std::string ptr;
  };
  std::vector<Binding> ins, outs;
  std::vector<Write> writes;
  lowered(st, id);
  for (auto& in : n.in_connectors) {
    const DataEdge* e = in_edge(st, id, in.name);
    if (!e || e->memlet.data.empty()) continue;
    lowered(st, *e, EdgeRole::TaskletInput);
    DType t = in.dtype.value_or(c.data(e->memlet.data)->dtype);
    const Range& r = *e->memlet.subset;
    switch (input_binding(in, e->memlet, r)) {
      case ConnectorBinding::Value:
        ins.push_back({"const " + ctype(t), in.name, element(c, e->memlet.data, starts(r), np)});
        break;
      case ConnectorBinding::Reference:
        ins.push_back({"const " + ctype(t) + "&", in.name, element(c, e->memlet.data, starts(r), np)});
        break;
      case ConnectorBinding::Pointer:
        ins.push_back({"const " + ctype(t) + "*", in.name, address(c, e->memlet.data, starts(r), np)});
        break;
    }
  }
  for (auto& out : n.out_connectors) {
    auto es = out_edges(st, id, out.name);
    if (es.empty() || es[0]->memlet.data.empty()) continue;
    for (const DataEdge* ek : es) lowered(st, *ek, EdgeRole::TaskletOutput);
    const DataEdge* e = es[0];
    DType t = out.dtype.value_or(c.data(e->memlet.data)->dtype);
    const Range& r = *e->memlet.subset;
    ConnectorBinding b = output_binding(out, e->memlet, r);
    SDFC_ASSERT(b == ConnectorBinding::Value || es.size() == 1,
                "output fan-out of a pointer or reference not legalized: " + np + " " + out.name);
    if (b == ConnectorBinding::Pointer) {
      outs.push_back({ctype(t) + "*", out.name, address(c, e->memlet.data, starts(r), np)});
      continue;
    }
    if (b == ConnectorBinding::Reference) {
      outs.push_back({ctype(t) + "&", out.name, element(c, e->memlet.data, starts(r), np)});
      continue;
    }
    // a dynamic output with a write-conflict resolution starts at its identity (lower-wcr), so
    // that one the tasklet leaves unassigned writes nothing new
    SDFC_ASSERT(!e->memlet.dynamic || !e->memlet.wcr || (e->wcr_lowering && !e->wcr_lowering->identity.empty()),
                "dynamic output without an identity (lower-wcr): " + np + " " + out.name);
    outs.push_back({ctype(t), out.name, e->memlet.dynamic && e->wcr_lowering ? e->wcr_lowering->identity : ""});
    for (const DataEdge* ek : es) {
      std::size_t ei = static_cast<std::size_t>(ek - st.edges.data());
      writes.push_back({element(c, ek->memlet.data, starts(*ek->memlet.subset), np), out.name, t, ek,
                        walk::edge_pointer(st, ptr, ei)});
    }
  }
  // A connector named like a container or symbol would shadow it in its own binding
  // (`const double A = A[i];`): then the accesses are taken first, outside the connectors' block.
  bool shadows = false;
  for (auto* list : {&ins, &outs})
    for (auto& b : *list) shadows |= c.data(b.name) != nullptr || scope.symbols.count(b.name) > 0;

  w.open("");
  w.line(fmt::format("// tasklet {} ({}){}", n.label, np,
                     n.graph_capture_only ? ", runs when the graph is captured (a replay needs no value)" : ""));
  if (shadows) {
    int k = 0;
    for (auto* list : {&ins, &outs})
      for (auto& b : *list) {
        if (b.access.empty()) continue;
        std::string tmp = fmt::format("__sdfc_bind{}", k++);
        bool by_ref = b.type.back() == '&';
        w.line(fmt::format("{} {} = {};", by_ref ? b.type.substr(0, b.type.size() - 1) + "*" : b.type, tmp,
                           by_ref ? "&" + b.access : b.access));
        b.access = by_ref ? "*" + tmp : tmp;
      }
    for (std::size_t i = 0; i < writes.size(); ++i) {
      std::string tmp = fmt::format("__sdfc_target{}", i);
      w.line(fmt::format("{}* {} = &{};", ctype(writes[i].t), tmp, writes[i].target));
      writes[i].target = "*" + tmp;
    }
    w.open("");
  }
  if (n.stream >= 0 && !c.in_kernel)  // DaCe's name for the stream a GPU tasklet's work goes on
    w.line(fmt::format("const sdfc::gpu::Stream __dace_current_stream = {};  // stream {}", gpu_stream(n.stream),
                       n.stream));
  for (auto& b : ins) w.line(fmt::format("{} {} = {};", b.type, b.name, b.access));
  for (auto& b : outs)
    w.line(b.access.empty() ? fmt::format("{} {};", b.type, b.name)
                            : fmt::format("{} {} = {};", b.type, b.name, b.access));
  if (n.code.language == Language::Python) {
    SDFC_ASSERT(n.cpp_code.has_value(), "Python tasklet not translated (translate-python): " + np);
    w.lines(*n.cpp_code);
  } else {
    w.lines(n.code.code);
  }
  if (!n.code_global.code.empty() &&
      std::find(out_.globals.begin(), out_.globals.end(), n.code_global.code) == out_.globals.end())
    out_.globals.push_back(n.code_global.code);
  for (auto& wr : writes) {
    auto acc = c.accumulators.find(wr.edge);
    if (acc != c.accumulators.end())  // the kernel adds it after the thread's rows (KernelPlan::accumulations)
      w.line(fmt::format("{} += {};", acc->second, wr.value));
    else if (c.grouped_sums.count(wr.edge))  // per point, combined in the warp (KernelPlan::accumulations)
      w.line(
          fmt::format("sdfc::gpu::atomic_add_grouped(&{}, static_cast<{}>({}));  // with the warp's threads naming it",
                      wr.target, ctype(wr.t), wr.value));
    else
      emit_write(wr.target, wr.value, wr.t, *wr.edge, wr.ptr, w);
  }
  if (shadows) w.close();
  w.close();
}

/// `const T name = value;` for each dynamic range input of map `entry`, read where the code runs.
void Emitter::declare_dynamic_inputs(const Ctx& c, const Block& st, const std::vector<DynamicRangeInput>& dyn,
                                     const std::string& np, CodeWriter& w) {
  for (auto& d : dyn) {
    lowered(st, *d.edge, EdgeRole::DynamicRangeInput);
    SDFC_ASSERT(is_identifier(d.name), "connector name not legalized: " + np + " " + d.name);
    w.line(fmt::format("const {} {} = {};  // dynamic map range input", ctype(d.type), ident(d.name),
                       element(c, d.edge->memlet.data, starts(*d.edge->memlet.subset), np)));
  }
}

/// A copy between the containers at the two ends of an edge's memlet path (an access-to-access
/// copy, or a copy into or out of a map scope), with the subsets ir/Memlets.h derives.
void Emitter::emit_copy(Ctx& c, const Block& st, const DataEdge& e, const std::string& ep, CodeWriter& w,
                        bool parallel) {
  EdgeSubsets ends = edge_subsets(*c.sdfg, st, e);
  SDFC_ASSERT(ends.error.empty(), "copy without subsets not legalized: " + ep);
  const std::string& src = ends.src_data;
  const std::string& dst = ends.dst_data;
  SDFC_ASSERT(!src.empty() && !dst.empty(), fmt::format("{}: copy at {} without a container at both ends", file_, ep));
  const DataDesc* dd = c.data(dst);
  const Range& rs = ends.src;
  const Range& rd = ends.dst;
  // Pair the dimensions that move more than one element; a copy that reshapes (legalize allows it
  // on the host, with as many elements on both sides) pairs the elements of both sides in C order.
  auto ds = moved_dimensions(rs), dd_dims = moved_dimensions(rd);
  const bool reshape = ds.size() != dd_dims.size();
  SDFC_ASSERT(!reshape || e.stream < 0 || c.in_kernel, "reshaping GPU copy not legalized: " + ep);
  if (e.stream >= 0 && !c.in_kernel) {
    emit_gpu_copy(c, src, dst, rs, rd, ds, dd_dims, e, ep, w);
    stream_record(e.stream, e.record_event, w);
    return;
  }
  w.line(fmt::format("// copy {}[{}] -> {}[{}] ({})", src, range_str(rs), dst, range_str(rd), ep));
  std::vector<Expr> is = starts(rs), id = starts(rd);
  auto at = [](const RangeDim& r, const Expr& k) {
    return make_binary(BinOp::Add, r.start, make_binary(BinOp::Mul, k, r.step));
  };
  Expr linear = make_int(0);  // of a reshape: the element's place in the source side, in C order
  for (std::size_t k = 0; k < ds.size(); ++k) {
    std::string v = fmt::format("__c{}", k);
    w.open(fmt::format("for (int64_t {0} = 0; {0} < {1}; ++{0})", v, sym(extent(rs[ds[k]]))));
    Expr var = make_symbol(v);
    is[ds[k]] = at(rs[ds[k]], var);
    if (!reshape) id[dd_dims[k]] = at(rd[dd_dims[k]], var);
    linear = make_binary(BinOp::Add, make_binary(BinOp::Mul, linear, extent(rs[ds[k]])), var);
  }
  if (reshape) {
    Expr inner = make_int(1);  // the elements of the destination's moved dimensions after j
    for (std::size_t j = dd_dims.size(); j-- > 0;) {
      Expr k = make_binary(BinOp::FloorDiv, linear, inner);
      if (j > 0) k = make_binary(BinOp::Mod, k, extent(rd[dd_dims[j]]));
      id[dd_dims[j]] = at(rd[dd_dims[j]], simplify(k));
      inner = make_binary(BinOp::Mul, inner, extent(rd[dd_dims[j]]));
    }
  }
  emit_write(element(c, dst, id, ep), element(c, src, is, ep), dd->dtype, e, ep, w);
  for (std::size_t k = 0; k < ds.size(); ++k) w.close();
}

void Emitter::emit_nested(Ctx& c, const Block& st, const std::string& ptr, int id, CodeWriter& w, bool parallel) {
  const Node& n = st.node(id);
  std::string np = walk::node_pointer(st, ptr, static_cast<std::size_t>(id));
  const SDFG& inner = *n.sdfg;
  std::vector<std::string> conns;
  for (auto& x : n.in_connectors) conns.push_back(x.name);
  for (auto& x : n.out_connectors)
    if (std::find(conns.begin(), conns.end(), x.name) == conns.end()) conns.push_back(x.name);
  std::vector<std::string> params, args;
  lowered(st, id);
  for (auto& cn : conns) {
    if (const DataEdge* ei = in_edge(st, id, cn)) lowered(st, *ei, EdgeRole::NestedInput);
    for (const DataEdge* eo : out_edges(st, id, cn)) lowered(st, *eo, EdgeRole::NestedOutput);
    const DataEdge* e = in_edge(st, id, cn);
    if (!e) {
      auto outs = out_edges(st, id, cn);
      if (!outs.empty()) e = outs[0];
    }
    const DataDesc* idesc = inner.find_data(cn);
    SDFC_ASSERT(e && idesc && !e->memlet.data.empty(), "unconnected nested connector not legalized: " + np + " " + cn);
    params.push_back(fmt::format("{}* __restrict__ {}", ctype(idesc->dtype), ident(cn)));
    const Range& r = *e->memlet.subset;
    args.push_back(address(c, e->memlet.data, starts(r), np));
  }
  std::map<std::string, Expr> mapping(n.symbol_mapping.begin(), n.symbol_mapping.end());
  for (auto& s : free_symbols(inner)) {
    if (const Callback* cb = inner.find_callback(s))
      params.push_back(callback_type(*cb, "*" + ident(s)));
    else
      params.push_back(
          fmt::format("{} {}", ctype(symbol_value_type(inner.symbol_type(s).value_or(DType::Int32))), ident(s)));
    auto it = mapping.find(s);
    if (it == mapping.end()) {
      SDFC_ASSERT(c.sdfg->symbol_type(s) || c.sdfg->find_callback(s),
                  "unmapped nested symbol not legalized: " + np + " " + s);
      args.push_back(ident(s));
    } else {
      args.push_back(sym(it->second));
    }
  }
  std::string fname = fmt::format("nested_{}_{}", ident(inner.name), nested_counter_++);
  Ctx ic;
  ic.in_kernel = c.in_kernel;
  ic.split_index = c.split_index;
  ic.sdfg = &inner;
  ic.ptr = np + "/attributes/sdfg";
  ic.parallel = parallel;
  ic.index_data();
  if (!inner.global_code.code.empty()) out_.globals.push_back(inner.global_code.code);
  if (!inner.init_code.code.empty()) out_.init_codes.push_back(inner.init_code.code);
  if (std::find(out_.nested_sdfgs.begin(), out_.nested_sdfgs.end(), &inner) == out_.nested_sdfgs.end())
    out_.nested_sdfgs.push_back(&inner);
  if (!inner.exit_code.code.empty()) out_.exit_codes.push_back(inner.exit_code.code);
  for (auto& s : free_symbols(inner)) ic.declared_symbols.insert(s);
  CodeWriter fw;
  fw.line(fmt::format("// nested SDFG \"{}\" ({})", inner.name, np));
  if (c.in_kernel)  // called from a kernel: a device function without the program state
    fw.open(fmt::format("__device__ static void {}({})", fname, fmt::join(params, ", ")));
  else
    fw.open(fmt::format("static void {}({}* __state{}{})", fname, state_type(), params.empty() ? "" : ", ",
                        fmt::join(params, ", ")));
  emit_sdfg_body(ic, fw);
  fw.close();
  (c.in_kernel ? out_.device_functions : out_.functions).push_back(fw.str());
  w.line(fmt::format("// nested SDFG {} ({})", inner.name, np));
  if (c.in_kernel)
    w.line(fmt::format("{}({});", fname, fmt::join(args, ", ")));
  else
    w.line(fmt::format("{}(__state{}{});", fname, args.empty() ? "" : ", ", fmt::join(args, ", ")));
}

}  // namespace sdfc::codegen
