// The GPU emitter: kernels, their launches and GPU copies (CUDA and HIP). See Emitter.h.
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

namespace {

/// Maps of more than 3 parameters: z covers the first dims - 2 of them, flattened (the
/// fastest-varying last); each thread decodes its point with divisions, as DaCe does.
Expr z_extent(const MapInfo& m) {
  Expr e = make_int(1);
  for (std::size_t d = 0; d + 2 < m.params.size(); ++d) e = make_binary(BinOp::Mul, e, extent(m.range[d]));
  return simplify(e);
}

/// The extent of map `m` along axis k in kernel layout `l`.
Expr axis_extent(const MapInfo& m, const KernelPlan::Layout& l, std::size_t k) {
  int dims = static_cast<int>(m.params.size());
  return k == 2 && dims > 3 ? z_extent(m)
                            : extent(m.range[static_cast<std::size_t>(dim_on_axis(l, static_cast<int>(k), dims))]);
}

}  // namespace

/// A kernel whose thread-block maps run as the block's threads: one block per point of the
/// kernel map (its parameters from blockIdx), the block shape from the thread-block maps.
void GpuEmitter::emit_block_kernel(Ctx& kc, const Block& st, const std::string& ptr, int id,
                                   const std::vector<std::string>& params, const std::vector<std::string>& args,
                                   CodeWriter& w) {
  const int* block = st.node(id).kernel->block;
  const Node& n = st.node(id);
  const MapInfo& m = n.map;
  std::string np = walk::node_pointer(st, ptr, static_cast<std::size_t>(id));
  std::size_t dims = m.params.size();
  const char* axis[] = {"x", "y", "z"};
  int threads = block[0] * block[1] * block[2];
  std::string kname = fmt::format("{}_{}_kernel{}", ident(m.label), id, out_.kernels.size());
  CodeWriter kw;
  kw.line(fmt::format(
      "// GPU kernel of map {}[{}] ({}): one block per point, its GPU_ThreadBlock maps on the block's threads", m.label,
      range_str(m.range), np));
  kw.open(fmt::format("__global__ void __launch_bounds__({}) {}({})", threads, kname, fmt::join(params, ", ")));
  kernel_prologue(*n.kernel, kc, kw);
  for (std::size_t k = 0; k < dims; ++k) {
    const RangeDim& r = m.range[dims - 1 - k];
    kw.line(fmt::format("const int64_t {} = {} + static_cast<int64_t>(blockIdx.{}) * {};",
                        ident(m.params[dims - 1 - k]), sym(r.start), axis[k], sym(r.step)));
  }
  kc.block_kernel = id;
  emit_scope(kc, st, ptr, id, kw, true);
  kw.close();
  out_.kernels.push_back(kw.str());

  w.line(fmt::format("// map {}[{}] (GPU_Device, {}): kernel {} on stream {}, blocks of {} x {} x {} threads", m.label,
                     range_str(m.range), np, kname, n.stream, block[0], block[1], block[2]));
  stream_waits(n.stream, n.wait_events, w);
  w.open("");
  std::vector<std::string> counts, grid;
  for (std::size_t k = 0; k < 3; ++k) {
    if (k < dims) {
      w.line(fmt::format("const int64_t __n{} = {};", axis[k], sym(extent(m.range[dims - 1 - k]))));
      counts.push_back(fmt::format("__n{} > 0", axis[k]));
      grid.push_back(fmt::format("static_cast<unsigned>(__n{})", axis[k]));
    } else {
      grid.push_back("1u");
    }
  }
  emit_launch(n, kname, counts, grid, block, params, args, w);
  w.close();
  stream_record(n.stream, n.record_event, w);
}

/// A GPU_Device map: a __global__ kernel (one thread per point, the last parameter on x) and
/// its launch on the stream the stream-assignment pass chose. Its dynamic range inputs are read
/// on the host before the launch (the grid depends on them) and passed by value.
void GpuEmitter::emit_kernel(Ctx& c, const Block& st, const std::string& ptr, int id, CodeWriter& w) {
  auto dyn = dynamic_range_inputs(*c.sdfg, st, id);
  if (dyn.empty()) return emit_kernel_launch(c, st, ptr, id, w);
  w.open("");
  declare_dynamic_inputs(c, st, dyn, walk::node_pointer(st, ptr, static_cast<std::size_t>(id)), w);
  emit_kernel_launch(c, st, ptr, id, w);
  w.close();
}

/// The kernel's parameters and the launch's arguments, as outline-kernels decided them; host
/// scalars become values in the kernel's context.
void GpuEmitter::kernel_signature(const KernelPlan& k, const Ctx& c, Ctx& kc, std::vector<std::string>& params,
                                  std::vector<std::string>& args) {
  using K = KernelPlan::Param::Kind;
  for (auto& p : k.params) {
    std::string name = ident(p.name);
    switch (p.kind) {
      case K::Pointer:
      case K::ConstPointer:
        params.push_back(
            fmt::format("{}{}* __restrict__ {}", p.kind == K::ConstPointer ? "const " : "", ctype(p.type), name));
        args.push_back(name);
        break;
      case K::HostScalar: {
        params.push_back(fmt::format("const {} {}", ctype(p.type), name));
        bool value = c.access.count(p.name) && c.access.at(p.name) == Access::Value;
        args.push_back(value ? name : name + "[0]");
        kc.access[p.name] = Access::Value;
        break;
      }
      case K::DynamicInput:
      case K::Symbol:
        params.push_back(fmt::format("const {} {}", ctype(p.type), name));
        args.push_back(name);
        break;
    }
  }
}

void GpuEmitter::emit_kernel_launch(Ctx& c, const Block& st, const std::string& ptr, int id, CodeWriter& w) {
  const Node& n = st.node(id);
  const MapInfo& m = n.map;
  std::string np = walk::node_pointer(st, ptr, static_cast<std::size_t>(id));
  SDFC_ASSERT(n.kernel, "GPU map not outlined (outline-kernels): " + np);
  const KernelPlan& plan = *n.kernel;
  std::size_t dims = m.params.size();
  std::vector<std::string> params, args;
  Ctx kc = c;
  kc.in_kernel = true;
  kc.split_index = plan.split_index;
  kc.parallel = true;
  kernel_signature(plan, c, kc, params, args);
  for (auto& b : plan.hoisted_bases) kc.bases[b.data] = {"__sdfc_base_" + ident(b.data), b.value};
  if (plan.thread_block) {
    emit_block_kernel(kc, st, ptr, id, params, args, w);
    return;
  }
  // Each thread computes `rows` points along axis `march` (outline-kernels): consecutive ones along
  // y or z, or along x (1D maps) a block apart, with a copy of the body without bound checks for
  // blocks whose points are all inside the map.
  const int rows = plan.rows;
  const std::size_t march = static_cast<std::size_t>(plan.march);
  const bool strided_x = rows > 1 && march == 0;
  SDFC_ASSERT(!strided_x || (dims == 1 && plan.layouts.size() == 1 && plan.layouts[0].lead == 0),
              "points a block apart along x are planned for 1D kernels without lead threads only");
  const char* axis[] = {"x", "y", "z"};
  // Write-conflicted sums the thread adds up over its rows (KernelPlan::accumulations): a register
  // each, declared before the rows and written with one atomic after them, so the loop over the
  // rows ends with `break` where it would return.
  struct Sum {
    std::string reg, target, ptr;
    DType t;
    const DataEdge* edge;
    bool combined;
  };
  std::vector<Sum> sums;
  for (const KernelPlan::Accumulation& a : plan.accumulations) {
    SDFC_ASSERT(a.edge >= 0 && static_cast<std::size_t>(a.edge) < st.edges.size() && (rows > 1 || a.per_point),
                "accumulation of an edge the state does not have, or without rows: " + np);
    const DataEdge& e = st.edges[static_cast<std::size_t>(a.edge)];
    if (a.per_point) {  // at the tasklet, combined with the warp's threads naming the same element
      kc.grouped_sums.insert(&e);
      continue;
    }
    std::string eptr = walk::edge_pointer(st, ptr, static_cast<std::size_t>(a.edge));
    Sum sum{fmt::format("__sdfc_sum{}", sums.size()),
            element(kc, e.memlet.data, starts(*e.memlet.subset), eptr),
            eptr,
            c.data(e.memlet.data)->dtype,
            &e,
            a.combined};
    kc.accumulators[&e] = sum.reg;
    sums.push_back(std::move(sum));
  }
  const char* past_last_row = sums.empty() ? "return" : "break";
  auto declare_sums = [&](CodeWriter& kw) {
    for (const Sum& sum : sums)  // -0.0 is the identity of floating-point addition (+0.0 + -0.0 is +0.0)
      kw.line(fmt::format("{} {} = {};  // {} over the thread's rows ({})", ctype(sum.t), sum.reg,
                          is_float(sum.t) ? "-0.0" : "0", sum.target, sum.ptr));
  };
  auto add_sums = [&](CodeWriter& kw) {
    for (const Sum& sum : sums) {
      if (sum.combined)
        kw.line(fmt::format("sdfc::gpu::atomic_add_combined(&{}, {});  // with the warp's other threads", sum.target,
                            sum.reg));
      else
        emit_write(sum.target, sum.reg, sum.t, *sum.edge, sum.ptr, kw);
    }
  };
  // The body is the same in every layout (it reads the map's parameters): printed once, at the
  // depth it has in each kernel (inside the marching loop when rows > 1).
  CodeWriter bw(strided_x ? 3 : rows > 1 ? 2 : 1);
  emit_scope(kc, st, ptr, id, bw, true);
  std::vector<std::string> knames;
  for (std::size_t li = 0; li < plan.layouts.size(); ++li) {
    const KernelPlan::Layout& layout = plan.layouts[li];
    const int lrows = layout.rows > 0 ? layout.rows : rows;
    const int* block = KernelPlan::layout_block(plan, layout);
    const int threads = block[0] * block[1] * block[2];
    std::string kname = fmt::format("{}_{}_kernel{}", ident(m.label), id, out_.kernels.size());
    CodeWriter kw;
    kw.line(fmt::format("// GPU kernel of map {}[{}] ({}){}", m.label, range_str(m.range), np,
                        plan.layouts.size() > 1
                            ? fmt::format(", layout {}: {} along x", li, m.params[static_cast<std::size_t>(layout.x)])
                            : ""));
    kw.open(fmt::format("__global__ void __launch_bounds__({}) {}({})", threads, kname, fmt::join(params, ", ")));
    kernel_prologue(plan, kc, kw);
    declare_sums(kw);
    auto index = [&](std::size_t k) {
      if (k == 2 && dims > 3) {
        kw.line("const int64_t __tz = static_cast<int64_t>(blockIdx.z) * blockDim.z + threadIdx.z;");
        kw.line(fmt::format("if (__tz >= {}) return;", sym(z_extent(m))));
        kw.line("int64_t __rz = __tz;");
        for (std::size_t d = dims - 2; d-- > 0;) {
          const RangeDim& r = m.range[d];
          if (d > 0) {
            kw.line(fmt::format("const int64_t {} = {} + (__rz % ({})) * {};", ident(m.params[d]), sym(r.start),
                                sym(extent(r)), sym(r.step)));
            kw.line(fmt::format("__rz /= {};", sym(extent(r))));
          } else {
            kw.line(fmt::format("const int64_t {} = {} + __rz * {};", ident(m.params[d]), sym(r.start), sym(r.step)));
          }
        }
        return;
      }
      auto dim = static_cast<std::size_t>(dim_on_axis(layout, static_cast<int>(k), static_cast<int>(dims)));
      const RangeDim& r = m.range[dim];
      if (k == march && rows > 1) {
        kw.line(fmt::format(
            "const int64_t __t{0}0 = (static_cast<int64_t>(blockIdx.{0}) * blockDim.{0} + threadIdx.{0}) * {1};",
            axis[k], lrows));
        kw.line("#pragma unroll");
        kw.open(fmt::format("for (int __row = 0; __row < {}; ++__row)", lrows));
        kw.line(fmt::format("const int64_t __t{0} = __t{0}0 + __row;", axis[k]));
      } else if (k == 0 && layout.lead > 0) {  // warps start `lead` points before the first
        kw.line(fmt::format("const int64_t __tx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x - {};",
                            layout.lead));
        kw.line("if (__tx < 0) return;");
      } else {
        kw.line(fmt::format("const int64_t __t{0} = static_cast<int64_t>(blockIdx.{0}) * blockDim.{0} + threadIdx.{0};",
                            axis[k]));
      }
      kw.line(fmt::format("if (__t{} >= {}) {};", axis[k], sym(extent(r)),
                          k == march && rows > 1 ? past_last_row : "return"));
      kw.line(
          fmt::format("const int64_t {} = {} + __t{} * {};", ident(m.params[dim]), sym(r.start), axis[k], sym(r.step)));
    };
    if (strided_x) {
      const RangeDim& r = m.range[0];
      std::string n_x = sym(extent(r));
      kw.line(
          fmt::format("const int64_t __tx0 = static_cast<int64_t>(blockIdx.x) * blockDim.x * {} + threadIdx.x;", rows));
      for (bool whole : {true, false}) {
        if (whole)
          kw.open(fmt::format("if ((static_cast<int64_t>(blockIdx.x) + 1) * blockDim.x * {} <= {})", rows, n_x));
        else
          kw.open("else");
        kw.line("#pragma unroll");
        kw.open(fmt::format("for (int __row = 0; __row < {}; ++__row)", rows));
        kw.line("const int64_t __tx = __tx0 + static_cast<int64_t>(__row) * blockDim.x;");
        if (!whole) kw.line(fmt::format("if (__tx >= {}) {};", n_x, past_last_row));
        kw.line(fmt::format("const int64_t {} = {} + __tx * {};", ident(m.params[0]), sym(r.start), sym(r.step)));
        kw.raw(bw.str());
        kw.close();
        kw.close();
      }
      add_sums(kw);
      kw.close();
      out_.kernels.push_back(kw.str());
      knames.push_back(kname);
      continue;
    }
    // With rows > 1 the marching loop is innermost: the other axes first. A folded layout's x and
    // y are one index over the plane.
    if (layout.pitch_dim >= 0) fold_index(c, m, plan, layout, kw);
    for (std::size_t k : rows > 1 && march == 1 ? std::vector<std::size_t>{0, 2, 1} : std::vector<std::size_t>{0, 1, 2})
      if (k < dims && (layout.pitch_dim < 0 || k == 2)) index(k);
    kw.raw(bw.str());
    if (rows > 1) kw.close();
    add_sums(kw);
    kw.close();
    out_.kernels.push_back(kw.str());
    knames.push_back(kname);
  }
  emit_kernel_launch_site(c, n, np, knames, params, args, w);
}

void GpuEmitter::emit_kernel_launch_site(const Ctx& c, const Node& n, const std::string& np,
                                         const std::vector<std::string>& knames, const std::vector<std::string>& params,
                                         const std::vector<std::string>& args, CodeWriter& w) {
  const MapInfo& m = n.map;
  const KernelPlan& plan = *n.kernel;
  const int rows = plan.rows;
  const std::size_t march = static_cast<std::size_t>(plan.march);
  const bool strided_x = rows > 1 && march == 0;
  const std::size_t dims = m.params.size();
  const char* axis[] = {"x", "y", "z"};
  // The launch: of the layout whose x indexes the dimension of `layout_data` with the smallest
  // |stride| (the first on ties), when there are several.
  std::string leads;
  for (auto& l : plan.layouts)
    if (l.lead > 0) leads = fmt::format(", lead {} along x (aligned warps)", l.lead);
  w.line(fmt::format("// map {}[{}] (GPU_Device, {}): kernel {} on stream {}{}{}", m.label, range_str(m.range), np,
                     fmt::join(knames, " or "), n.stream,
                     strided_x  ? fmt::format(", {} points per thread a block apart", rows)
                     : rows > 1 ? fmt::format(", {} rows per thread", rows)
                                : "",
                     plan.layouts.size() > 1 ? fmt::format(", the layout by the strides of {}", plan.layout_data)
                     : !plan.layout_data.empty()
                         ? fmt::format(", {} along x (unit stride of {}){}",
                                       m.params[static_cast<std::size_t>(plan.layouts[0].x)], plan.layout_data, leads)
                         : leads));
  stream_waits(n.stream, n.wait_events, w);
  w.open("");
  if (plan.layouts.size() > 1) {
    const DataDesc* d = c.sdfg->find_data(plan.layout_data);
    SDFC_ASSERT(d, "kernel layout container not found: " + plan.layout_data);
    std::vector<std::string> strides;
    for (auto& l : plan.layouts) strides.push_back(sym(d->strides.at(static_cast<std::size_t>(l.data_dim))));
    w.line(fmt::format("const int64_t __stride[{}] = {{{}}};  // of {}, the dimension each layout's x indexes",
                       strides.size(), fmt::join(strides, ", "), plan.layout_data));
    w.line("int __layout = 0;  // the smallest |stride|, the first on ties");
    w.line(fmt::format("for (int __l = 1; __l < {}; ++__l)", strides.size()));
    w.line(
        "  if ((__stride[__l] < 0 ? -__stride[__l] : __stride[__l]) < (__stride[__layout] < 0 ? -__stride[__layout] : "
        "__stride[__layout])) __layout = __l;");
  }
  for (std::size_t li = 0; li < plan.layouts.size(); ++li) {
    const KernelPlan::Layout& layout = plan.layouts[li];
    if (plan.layouts.size() > 1) w.open(fmt::format("{}if (__layout == {})", li ? "else " : "", li));
    std::vector<std::string> counts;
    for (std::size_t k = 0; k < std::min<std::size_t>(dims, 3); ++k) {
      w.line(fmt::format("const int64_t __n{} = {};", axis[k], sym(axis_extent(m, layout, k))));
      counts.push_back(fmt::format("__n{} > 0", axis[k]));
    }
    std::vector<std::string> grid;
    const int lrows = layout.rows > 0 ? layout.rows : rows;
    const int* block = KernelPlan::layout_block(plan, layout);
    for (std::size_t k = 0; k < 3; ++k) {
      int per_block = block[k] * (k == march ? lrows : 1);
      int lead = k == 0 ? layout.lead : 0;
      grid.push_back(
          k < dims ? fmt::format("static_cast<unsigned>((__n{} + {} - 1) / {})", axis[k], per_block + lead, per_block)
                   : "1u");
    }
    if (layout.pitch_dim >= 0) {  // one index over the plane: blocks of one row of threads
      Fold f = fold_of(c, m, plan, layout);
      w.line(fmt::format("const int64_t __pitch = {};  // y folded into x", f.pitch));
      w.line(fmt::format("const int64_t __nf = __ny * __pitch + {};", f.lead));
      grid[0] = fmt::format("static_cast<unsigned>((__nf + {} - 1) / {})", block[0], block[0]);
      grid[1] = "1u";
    }
    emit_launch(n, knames[li], counts, grid, block, params, args, w);
    if (plan.layouts.size() > 1) w.close();
  }
  w.close();
  stream_record(n.stream, n.record_event, w);
}

/// The pitch and the lead of a folded layout (KernelPlan::Layout::pitch_dim), as the kernel and its
/// launch compute them: `sdfc::gpu::fold_pitch` of the strides of the deciding container, and the
/// idle threads before the plane's first point.
GpuEmitter::Fold GpuEmitter::fold_of(const Ctx& c, const MapInfo& m, const KernelPlan& plan,
                                     const KernelPlan::Layout& layout) {
  const DataDesc* d = c.sdfg->find_data(plan.layout_data);
  SDFC_ASSERT(d && layout.data_dim >= 0, "folded kernel layout without its container: " + plan.layout_data);
  const RangeDim& rx = m.range[static_cast<std::size_t>(layout.x)];
  const RangeDim& ry = m.range[static_cast<std::size_t>(dim_on_axis(layout, 1, 3))];
  Fold f;
  f.pitch =
      fmt::format("sdfc::gpu::fold_pitch({}, {}, {})", sym(d->strides.at(static_cast<std::size_t>(layout.data_dim))),
                  sym(d->strides.at(static_cast<std::size_t>(layout.pitch_dim))), sym(extent(rx)));
  f.lead = fmt::format("sdfc::gpu::fold_lead(({}) * __pitch + ({}))", sym(ry.start), sym(rx.start));
  return f;
}

/// A folded layout's x and y parameters from one index over the plane, row after row at the pitch.
void GpuEmitter::fold_index(const Ctx& c, const MapInfo& m, const KernelPlan& plan, const KernelPlan::Layout& layout,
                            CodeWriter& kw) {
  Fold f = fold_of(c, m, plan, layout);
  const RangeDim& rx = m.range[static_cast<std::size_t>(layout.x)];
  std::size_t y = static_cast<std::size_t>(dim_on_axis(layout, 1, 3));
  const RangeDim& ry = m.range[y];
  kw.line(fmt::format("const int64_t __pitch = {};  // y folded into x", f.pitch));
  kw.line(fmt::format("const int64_t __t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x - {};", f.lead));
  kw.line("if (__t < 0) return;");
  kw.line("const int64_t __ty = __t / __pitch;");
  kw.line("const int64_t __tx = __t - __ty * __pitch;");
  kw.line(fmt::format("if (__tx >= {}) return;", sym(extent(rx))));
  kw.line(fmt::format("if (__ty >= {}) return;", sym(extent(ry))));
  kw.line(fmt::format("const int64_t {} = {} + __tx * {};", ident(m.params[static_cast<std::size_t>(layout.x)]),
                      sym(rx.start), sym(rx.step)));
  kw.line(fmt::format("const int64_t {} = {} + __ty * {};", ident(m.params[y]), sym(ry.start), sym(ry.step)));
}

/// The first statement of a kernel that outline-kernels marked for programmatic dependent launch:
/// let the next kernel on the stream start where the plan says so, then wait for the kernels
/// before this one.
void GpuEmitter::dependent_launch_prologue(const KernelPlan& plan, CodeWriter& kw) {
  if (!plan.dependent_launch) return;
  kw.line(
      fmt::format("sdfc::gpu::dependent_launch_prologue({});  // dependent launch: waits for the kernels before "
                  "it; the next may start now in grids of at most {} block(s) per SM, else at block exit",
                  plan.early_trigger_blocks_per_sm, plan.early_trigger_blocks_per_sm));
  out_.dependent_launch = true;
}

/// A kernel's first statements: the dependent-launch wait, then the hoisted bases of its containers
/// (KernelPlan::hoisted_bases).
void GpuEmitter::kernel_prologue(const KernelPlan& plan, const Ctx& kc, CodeWriter& kw) {
  dependent_launch_prologue(plan, kw);
  for (auto& b : plan.hoisted_bases)
    kw.line(fmt::format("const int64_t {} = {};  // terms every index of {} adds", kc.bases.at(b.data).first,
                        sym(b.value), b.data));
}

/// The launch of kernel `kname` for map entry `n` (inside the block the caller opened with the
/// extents `__nx`...): nothing when a count is zero, the race-exposure delay and the checked
/// launch on the map's stream. The caller records the event the synchronization pass wants after
/// it. The launch itself is the kernel's launcher, `__sdfc_launch_<kname>`, printed with the
/// kernels (EmittedBody::launchers), so that the host code holds no device syntax.
void GpuEmitter::emit_launch(const Node& n, const std::string& kname, const std::vector<std::string>& counts,
                             const std::vector<std::string>& grid, const int* block,
                             const std::vector<std::string>& params, const std::vector<std::string>& args,
                             CodeWriter& w) {
  std::vector<std::string> names;
  for (auto& p : n.kernel->params) names.push_back(ident(p.name));
  std::string launcher = "__sdfc_launch_" + kname;
  std::string signature = fmt::format("void {}(dim3 __grid, dim3 __block, sdfc::gpu::Stream __stream{}{})", launcher,
                                      params.empty() ? "" : ", ", fmt::join(params, ", "));
  CodeWriter lw;
  lw.open(fmt::format("SDFC_LAUNCHER {}", signature));
  if (n.kernel->dependent_launch)  // a failed launch sets the runtime's last error, as <<<>>> does
    lw.line(fmt::format("(void)sdfc::gpu::launch_dependent({}, __grid, __block, __stream{}{});", kname,
                        names.empty() ? "" : ", ", fmt::join(names, ", ")));
  else
    lw.line(fmt::format("{}<<<__grid, __block, 0, __stream>>>({});", kname, fmt::join(names, ", ")));
  lw.close();
  out_.launchers.push_back({fmt::format("SDFC_LAUNCHER {};", signature), lw.str()});

  w.open(fmt::format("if ({})", fmt::join(counts, " && ")));  // empty grids launch nothing
  w.line(
      fmt::format("const dim3 __grid({}), __block({}, {}, {});", fmt::join(grid, ", "), block[0], block[1], block[2]));
  w.line(fmt::format("sdfc::gpu::maybe_delay({}, {}, __sdfc_gpu_spin);", kCtx, gpu_stream(n.stream)));
  w.line(fmt::format("{}(__grid, __block, {}{}{});", launcher, gpu_stream(n.stream), args.empty() ? "" : ", ",
                     fmt::join(args, ", ")));
  w.line(fmt::format("SDFC_KERNEL_LAUNCH_CHECK({}, \"{}\");", kCtx, kname));
  w.close();
}

/// A copy that touches GPU memory, on the stream the pass chose: one cudaMemcpyAsync for
/// contiguous data, otherwise cudaMemcpy2DAsync for each 2D block of rows (host loops over
/// the outer dimensions of an N-D block; strided single elements are rows of one element).
void GpuEmitter::emit_gpu_copy(const Ctx& c, const std::string& src, const std::string& dst, const Range& rs,
                               const Range& rd, const std::vector<std::size_t>& ds, const std::vector<std::size_t>& dd,
                               const DataEdge& e, const std::string& ep, CodeWriter& w) {
  const DataDesc& sd = *c.data(src);
  const DataDesc& dd_desc = *c.data(dst);
  SDFC_ASSERT(!e.memlet.wcr, "write-conflict resolution on a GPU copy not refused (lower-wcr): " + ep);
  std::string elem = ctype(dd_desc.dtype);
  w.line(fmt::format("// copy {}[{}] -> {}[{}] ({}, stream {})", src, range_str(rs), dst, range_str(rd), ep, e.stream));
  stream_waits(e.stream, e.wait_events, w);
  // Contiguous: every moved dimension but the first covers the whole extent with C-order strides.
  auto contiguous = [&](const DataDesc& d, const Range& r, const std::vector<std::size_t>& moved) {
    if (moved.empty()) return true;
    for (std::size_t k = moved.front() + 1; k < r.size(); ++k) {
      if (as_constant(simplify(r[k].start)) != 0 || !equal(simplify(extent(r[k])), simplify(d.shape[k]))) return false;
    }
    auto cs = c_order_strides(d.shape);
    for (std::size_t k = moved.front(); k < r.size(); ++k)
      if (!equal(simplify(cs[k]), simplify(d.strides[k]))) return false;
    for (auto& x : r)
      if (as_constant(x.step) != 1) return false;
    return true;
  };
  Expr count = make_int(1);
  for (auto k : ds) count = make_binary(BinOp::Mul, count, extent(rs[k]));
  std::string from = address(c, src, starts(rs), ep), to = address(c, dst, starts(rd), ep);
  SDFC_ASSERT(sd.dtype == dd_desc.dtype, "dtype-changing GPU copy not legalized: " + ep);
  if (contiguous(sd, rs, ds) && contiguous(dd_desc, rd, dd)) {
    w.line(gpu_check(fmt::format("sdfc::gpu::gpuMemcpyAsync({}, {}, {} * sizeof({}), sdfc::gpu::kMemcpyDefault, {})",
                                 to, from, wide_size(count), elem, gpu_stream(e.stream))));
    return;
  }
  // Otherwise: rows of a 2D block per cudaMemcpy2DAsync, in host loops over the outer moved
  // dimensions. A row is the innermost moved dimension when it has unit strides and steps on
  // both sides (a run of elements), else one element; the row pitch is stride * step of the
  // next moved dimension outwards.
  auto unit = [](const DataDesc& d, const Range& r, std::size_t k) {
    return as_constant(simplify(d.strides[k])) == 1 && as_constant(r[k].step) == 1;
  };
  std::size_t n = ds.size();
  bool runs = unit(sd, rs, ds[n - 1]) && unit(dd_desc, rd, dd[n - 1]);
  std::size_t pitch_dim = runs ? n - 2 : n - 1;  // index into ds/dd of the row dimension; n - 2 wraps when n == 1
  std::size_t outer = runs ? (n >= 2 ? n - 2 : 0) : n - 1;
  auto pitch = [&](const DataDesc& d, const Range& r, std::size_t k) {
    return simplify(make_binary(BinOp::Mul, d.strides[k], r[k].step));
  };
  // (legalize refused copies that run backwards)
  std::vector<Expr> is = starts(rs), id = starts(rd);
  w.open("");
  for (std::size_t k = 0; k < outer; ++k) {
    std::string v = fmt::format("__c{}", k);
    w.open(fmt::format("for (int64_t {0} = 0; {0} < {1}; ++{0})", v, sym(extent(rs[ds[k]]))));
    Expr var = make_symbol(v);
    is[ds[k]] = make_binary(BinOp::Add, rs[ds[k]].start, make_binary(BinOp::Mul, var, rs[ds[k]].step));
    id[dd[k]] = make_binary(BinOp::Add, rd[dd[k]].start, make_binary(BinOp::Mul, var, rd[dd[k]].step));
  }
  std::string width =
      runs ? fmt::format("{} * sizeof({})", wide_size(extent(rs[ds[n - 1]])), elem) : fmt::format("sizeof({})", elem);
  bool has_rows = runs ? n >= 2 : true;
  std::string height = has_rows ? wide_size(extent(rs[ds[pitch_dim]])) : "1";
  std::string spitch = has_rows ? fmt::format("{} * sizeof({})", wide_size(pitch(sd, rs, ds[pitch_dim])), elem) : width;
  std::string dpitch =
      has_rows ? fmt::format("{} * sizeof({})", wide_size(pitch(dd_desc, rd, dd[pitch_dim])), elem) : width;
  w.line(gpu_check(fmt::format("sdfc::gpu::gpuMemcpy2DAsync({}, {}, {}, {}, {}, {}, sdfc::gpu::kMemcpyDefault, {})",
                               address(c, dst, id, ep), dpitch, address(c, src, is, ep), spitch, width, height,
                               gpu_stream(e.stream))));
  for (std::size_t k = 0; k < outer; ++k) w.close();
  w.close();
}

}  // namespace sdfc::codegen
