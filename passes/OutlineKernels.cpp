#include "passes/OutlineKernels.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "analysis/GpuOps.h"
#include "ir/Diagnostic.h"
#include "ir/Memlets.h"
#include "ir/Signature.h"
#include "ir/Walk.h"
#include "lang/CodeWriter.h"
#include "lang/PythonTasklet.h"

namespace sdfc {
namespace {

/// Points per thread along the slowest axis of kernels of 2 or more dimensions
/// (bench/GpuBench.cu measures 1, 2, 4, 8; docs/benchmarks.md).
constexpr int kRowsPerThread = 4;
/// Points per thread of 1D kernels, a block apart: b = 2a + 1 over 16.7 M float64 on the H200
/// (bench/experiments/elementwise_1d.cu) reached 0.80 of a same-size copy with one point per
/// thread, 0.99-1.00 with two and unchecked whole blocks (on the H100 both 0.96-1.01).
constexpr int kPointsPerThread1D = 2;
/// Planes per thread of 3D kernels, which march along z: GT4Py's 3D Laplacian on the H200 at five
/// grid sizes, 4 / 8 / 16 fully unrolled planes (bench/experiments/lap3d_variants.cu,
/// docs/benchmarks.md): 16 is the fastest or as fast at each, 8 the slowest.
constexpr int kPlanesPerThread = 16;
/// Planes per thread of a folded layout (KernelPlan::Layout::pitch_dim; docs/benchmarks.md).
constexpr int kFoldedPlanesPerThread = 8;
/// 3D kernels with more code nodes than this march kRowsPerThread planes instead: the unrolled
/// loop copies the body per plane, and big fused bodies (GT4Py's fused stencils can have hundreds
/// of tasklets) would cost nvcc's time and registers 16 times over. A bound on code size, not a
/// measured optimum (the corpus's 3D kernels have at most 12 tasklets).
constexpr int kMaxPlaneUnrolledNodes = 32;

/// Points per thread along the marching axis of a kernel that sums write-conflicted values over
/// them (KernelPlan::accumulations): each thread's atomic then stands for this many points.
/// Measured on an H100 (bench/experiments/wcr_rows.cu, DaCe's column and total sums of corpus
/// colsum_wcr_s at 5495 x 3053; read floor 24.8 us): one atomic per point 406.5 us; a thread's
/// sums over 4 rows 117.2 us, 16 rows 50.1 us, 32 rows 42.7 us (0.58 of the floor); combining
/// the total per warp changed nothing at any rows; per block (shared memory) 36.5 us at 8 rows.
constexpr int kAccumulatingRows = 32;

/// Warps start at a multiple of this many points along x (`KernelPlan::Layout::lead`).
constexpr int kWarpAlignment = 32;
/// CUDA's largest block extent along z (and HIP's).
constexpr int kMaxBlockZ = 64;

/// The first nvcc architecture with grid dependency control (griddepcontrol: a kernel can wait
/// for the kernels before it on its stream, which programmatic dependent launch needs).
constexpr int kGridDependencyArch = 90;

/// A dependent launch lets its successor start at once only in grids of at most this many blocks
/// per SM (KernelPlan::early_trigger_blocks_per_sm): one wave with room beside it. Larger grids
/// trigger at block exit. Measured on the H200 (docs/benchmarks.md, section 10).
constexpr int kEarlyTriggerBlocksPerSm = 1;

/// Whether device code compiled for `arch` (nvcc's -arch: sm_NN, sm_NNa, compute_NN) has grid
/// dependency control. Anything else (a list, "native") is taken not to: kernels then launch as
/// usual.
bool has_grid_dependency_control(const std::string& arch) {
  for (std::string prefix : {"sm_", "compute_"}) {
    if (arch.rfind(prefix, 0) != 0) continue;
    std::size_t i = prefix.size(), digits = 0;
    while (i + digits < arch.size() && std::isdigit(static_cast<unsigned char>(arch[i + digits]))) ++digits;
    bool suffix_ok = i + digits == arch.size() || arch.substr(i + digits) == "a" || arch.substr(i + digits) == "f";
    return digits > 0 && digits <= 4 && suffix_ok && std::stoi(arch.substr(i, digits)) >= kGridDependencyArch;
  }
  return false;
}

/// Whether the thread-block maps of kernel map `entry` can run as the threads of one block
/// (OutlineKernels.h); `block` receives the block shape (x first).
bool thread_block_mode(const Block& st, int entry, const std::vector<int>& nodes, int block[3]) {
  block[0] = block[1] = block[2] = 1;
  if (st.node(entry).map.params.size() > 3) return false;
  bool any = false;
  for (int v : nodes) {
    const Node& x = st.node(v);
    if (v == entry || v == st.node(entry).scope_exit) continue;
    if (x.kind == NodeKind::MapEntry && x.map.schedule == ScheduleType::GPU_ThreadBlock) {
      std::size_t d = x.map.params.size();
      if (x.scope_entry != entry || d > 3) return false;
      for (std::size_t k = 0; k < d; ++k) {
        auto e = as_constant(range_extent(x.map.range[d - 1 - k]));
        if (!e || *e <= 0) return false;
        block[k] = std::max<int>(block[k], static_cast<int>(*e));
      }
      any = true;
    } else if (x.scope_entry == entry && x.kind != NodeKind::Access) {
      return false;  // (a map exit's scope_entry is its own entry: never a direct child here)
    }
  }
  return any && static_cast<long>(block[0]) * block[1] * block[2] <= 1024;
}

/// Whether the kernel may compute several rows per thread: its body must not leave the thread
/// early or synchronize the block.
bool coarsen_rows(const Block& st, int entry, const std::vector<int>& nodes) {
  for (int v : nodes) {
    const Node& x = st.node(v);
    if (x.kind == NodeKind::NestedSDFG) return false;
    if (x.kind == NodeKind::MapEntry && v != entry && x.map.schedule == ScheduleType::GPU_ThreadBlock) return false;
    if (x.kind == NodeKind::Tasklet && x.code.language == Language::CPP) {
      auto ids = identifiers_in(x.code.code);
      if (ids.count("return") || ids.count("__syncthreads") || ids.count("goto")) return false;
    }
  }
  return true;
}

/// Whether a sum of type `t` can add up over a thread's rows (KernelPlan::accumulations): the
/// 4- and 8-byte integers and floating point that device atomic adds and cooperative groups'
/// reduce (sdfc::gpu::atomic_add_combined) take.
bool combinable(DType t) {
  switch (t) {
    case DType::Int32:
    case DType::Int64:
    case DType::UInt32:
    case DType::UInt64:
    case DType::Float32:
    case DType::Float64:
      return true;
    default:
      return false;
  }
}

class Outliner {
 public:
  Outliner(bool dependent_launch, bool cuda) : dependent_launch_(dependent_launch), cuda_(cuda) {}

  std::vector<Diagnostic> diags;

  /// `declared`: the symbols the SDFG's function has before its body (the program's symbol
  /// arguments; a nested SDFG's free symbols, its parameters).
  void sdfg(SDFG& s, const std::string& ptr, std::set<std::string> declared) {
    for (auto& a : assigned_symbols(s)) declared.insert(a);
    for (auto& [name, t] : s.symbols) declared.insert(name);
    walk::for_each_state(s, ptr, [&](Block& st, const std::string& sp) { state(s, st, sp, declared); });
  }

 private:
  bool dependent_launch_;  ///< every kernel is launched as a programmatic dependent launch
  bool cuda_;              ///< the target is CUDA (cooperative groups combine a warp's atomics)

  void error(const std::string& ptr, std::string message) {
    diags.push_back(Diagnostic{"", ptr, 0, 0, std::move(message)});
  }

  void state(SDFG& s, Block& st, const std::string& sp, const std::set<std::string>& declared) {
    std::optional<ScopeIndex> ix;  // built at the state's first kernel
    for (std::size_t v = 0; v < st.nodes.size(); ++v) {
      Node& n = *st.nodes[v];
      int id = static_cast<int>(v);
      bool in_kernel = false;
      for (int e = n.scope_entry; e >= 0 && !in_kernel; e = st.node(e).scope_entry)
        in_kernel = st.node(e).map.schedule == ScheduleType::GPU_Device;
      if (in_kernel) continue;  // nested SDFGs in kernels are device functions: nothing to outline
      std::string np = walk::node_pointer(st, sp, v);
      if (n.kind == NodeKind::MapEntry && n.map.schedule == ScheduleType::GPU_Device) {
        if (!ix) ix.emplace(st);
        n.kernel = plan(s, st, *ix, id, np, declared);
      }
      if (n.kind == NodeKind::NestedSDFG && n.sdfg) {
        std::set<std::string> inner = free_symbols(*n.sdfg);
        sdfg(*n.sdfg, walk::nested_sdfg_pointer(np), inner);
      }
    }
  }

  /// Per pointer parameter, the symbol terms that every access of it in the scope adds (the same
  /// product of origin and stride in each of GT4Py's 7 reads of `u`), where there are at least
  /// two: the kernel adds their sum as one precomputed term. GT4Py's Laplacian on the H100: 155
  /// 64-bit additions in PTX against 131 with the sums hoisted (docs/benchmarks.md).
  static void hoist_bases(const SDFG& s, const Block& st, const ScopeIndex& ix, const std::vector<int>& nodes,
                          KernelPlan& k) {
    if (!k.split_index) return;
    std::set<std::string> symbols;
    for (auto& [n, t] : s.symbols) symbols.insert(n);
    std::set<int> in_scope(nodes.begin(), nodes.end());
    // Per container, the invariant terms (sign and text) all its accesses so far share.
    std::map<std::string, std::vector<std::pair<bool, Expr>>> shared;
    for (int v : nodes)
      for (const DataEdge* e : ix.out[static_cast<std::size_t>(v)]) {
        if (!in_scope.count(e->dst) || !e->memlet.subset || e->memlet.data.empty()) continue;
        const DataDesc* d = s.find_data(e->memlet.data);
        if (!d || d->kind == DataKind::Scalar || d->shape.size() != e->memlet.subset->size()) continue;
        std::vector<Expr> start;
        for (auto& r : *e->memlet.subset) start.push_back(r.start);
        auto terms = additive_terms(split_invariant(element_offset(*d, start), symbols).second);
        auto [it, first] = shared.emplace(e->memlet.data, terms);
        if (first) continue;
        std::vector<std::pair<bool, Expr>> both;
        for (auto& t : it->second) {
          auto same = std::find_if(terms.begin(), terms.end(), [&](const std::pair<bool, Expr>& u) {
            return u.second && u.first == t.first && print_expr(u.second) == print_expr(t.second);
          });
          if (same == terms.end()) continue;
          both.push_back(t);
          same->second = nullptr;  // a term pairs once
        }
        it->second = std::move(both);
      }
    for (auto& p : k.params) {
      if (p.kind != KernelPlan::Param::Kind::Pointer && p.kind != KernelPlan::Param::Kind::ConstPointer) continue;
      auto it = shared.find(p.name);
      if (it == shared.end()) continue;
      Expr base = make_int(0);
      std::size_t symbolic = 0;
      for (auto& [negative, t] : it->second) {
        if (as_constant(t).has_value()) continue;  // constants stay folded into each index
        base = make_binary(negative ? BinOp::Sub : BinOp::Add, base, t);
        ++symbolic;
      }
      if (symbolic >= 2) k.hoisted_bases.push_back({p.name, simplify(base)});
    }
  }

  std::optional<KernelPlan> plan(const SDFG& s, const Block& st, const ScopeIndex& ix, int id, const std::string& np,
                                 const std::set<std::string>& declared) {
    const MapInfo& m = st.node(id).map;
    std::size_t dims = m.params.size();
    if (dims == 0) {
      error(np + "/attributes/params", fmt::format("GPU map \"{}\" has no parameters", m.label));
      return std::nullopt;
    }
    auto dyn = dynamic_range_inputs(s, st, id);
    for (auto& d : dyn) {
      const DataDesc* desc = s.find_data(d.edge->memlet.data);
      if (desc && is_gpu_storage(desc->storage)) {
        error(
            np + "/attributes/in_connectors/" + pointer_token(d.name),
            fmt::format("dynamic range input \"{}\" of GPU map \"{}\" reads \"{}\" in {} memory, but the launch needs "
                        "it on the host; copy it to a host container first",
                        d.name, m.label, d.edge->memlet.data, to_string(desc->storage)));
        return std::nullopt;
      }
    }
    KernelPlan k;
    k.dependent_launch = dependent_launch_;
    k.early_trigger_blocks_per_sm = dependent_launch_ ? kEarlyTriggerBlocksPerSm : 0;
    // Every kernel: the split costs nothing where no two accesses share a varying part, and nvcc
    // did not find the shared part of one sum by itself (docs/benchmarks.md, GT4Py's Laplacian).
    k.split_index = true;
    std::vector<int> nodes = ix.scope_nodes(st, id);
    if (!closure(s, st, ix, id, nodes, dyn, np, declared, k)) return std::nullopt;
    hoist_bases(s, st, ix, nodes, k);
    if (thread_block_mode(st, id, nodes, k.block)) {
      k.thread_block = true;
      return k;
    }
    const bool file_block = !m.gpu_block_size.empty();
    std::vector<int> block = file_block ? m.gpu_block_size : default_block(dims);
    while (block.size() < 3) block.push_back(1);
    for (int a = 0; a < 3; ++a) k.block[a] = block[static_cast<std::size_t>(a)];
    // Neighbouring rows (planes) a stencil reads then come from the thread's own loads (5-point
    // stencil on the H200: 0.79 -> 0.9 of the copy bandwidth). Maps of more than three dimensions
    // flatten their first ones into z, so they march along y.
    auto code_nodes = std::count_if(nodes.begin(), nodes.end(), [&](int v) { return is_code_node(st.node(v)); });
    int planes = code_nodes <= kMaxPlaneUnrolledNodes ? kPlanesPerThread : kRowsPerThread;
    bool coarsen = coarsen_rows(st, id, nodes);
    k.rows = dims >= 2 && coarsen ? (dims == 3 ? planes : kRowsPerThread) : 1;
    k.march = dims == 3 ? 2 : 1;
    // 1D maps: two points a block apart, where the body is small (it is printed twice: for whole
    // blocks and, with bound checks, for the last) and the range needs no idle lead threads.
    if (dims == 1 && coarsen && code_nodes <= kMaxPlaneUnrolledNodes && lead(m.range[0]) == 0) {
      k.rows = kPointsPerThread1D;
      k.march = 0;
    }
    // A map over an interior (x from 1, as stencils' maps start) launches that many idle threads
    // first, so that each warp reads and writes whole aligned segments where the map's index 0 is
    // aligned (GT4Py's 3D Laplacian on the H200: 0.76 -> 0.85 of the copy bandwidth with 8 planes;
    // docs/benchmarks.md).
    k.layouts = {KernelPlan::Layout{static_cast<int>(dims) - 1, lead(m.range[dims - 1]), -1}};
    if (dims == 2 || dims == 3) plan_layouts(s, st, ix, id, nodes, k);
    plan_accumulations(s, st, ix, id, nodes, k);
    if (dims == 2 || dims == 3) fit_blocks(m, file_block, k);
    return k;
  }

  /// The write-conflicted sums the kernel adds up over each thread's rows
  /// (KernelPlan::accumulations), with rows raised to kAccumulatingRows where there are any: the
  /// output edges of tasklets directly in the map whose lower-wcr form is a device atomic add of
  /// a 4- or 8-byte integer or floating-point number (combinable) into one element of a container
  /// the kernel writes only so and never reads, at an index no layout's marching parameter
  /// appears in. Such a write happens in every layout at the same point of the body, so the
  /// thread's sum is the sum of its points' values, and the atomic after the rows adds what each
  /// point's would have added. Where the index holds no map parameter at all, the warp's threads
  /// combine (CUDA). Where the marching parameter changes the index (or the kernel has no rows) but
  /// no layout's x parameter does, the sum stays per point and the warp's threads naming the same
  /// element combine (CUDA: `per_point`).
  void plan_accumulations(const SDFG& s, const Block& st, const ScopeIndex& ix, int id, const std::vector<int>& nodes,
                          KernelPlan& k) {
    const MapInfo& m = st.node(id).map;
    const int dims = static_cast<int>(m.params.size());
    if (k.thread_block) return;
    // The parameter each layout marches along (none: no rows to add up over) and each runs on x.
    std::set<std::string> marching, on_x;
    bool over_rows = k.rows > 1;
    for (const KernelPlan::Layout& layout : k.layouts) {
      int x = dims == 1 ? 0 : dim_on_axis(layout, 0, dims);
      int dim = dims == 1 ? 0 : dim_on_axis(layout, k.march, dims);
      if (x < 0) return;
      on_x.insert(m.params[static_cast<std::size_t>(x)]);
      if (dim < 0)
        over_rows = false;
      else
        marching.insert(m.params[static_cast<std::size_t>(dim)]);
    }
    const std::set<std::string> params(m.params.begin(), m.params.end());
    const int exit = st.node(id).scope_exit;
    // Containers read in the kernel (what an edge not from code carries to a node other than the
    // map's exit), and written by anything but a sum.
    auto device_sum = [](const DataEdge& e) {
      return e.wcr_lowering && e.wcr_lowering->form == WcrLowering::Form::DeviceAdd &&
             e.wcr_lowering->op == WcrLowering::Op::Sum;
    };
    std::set<std::string> read, other_writes;
    for (int v : nodes) {
      for (const DataEdge* e : ix.in[static_cast<std::size_t>(v)])
        if (!e->memlet.data.empty() && v != exit && !is_code_node(st.node(e->src))) read.insert(e->memlet.data);
      for (const DataEdge* e : ix.out[static_cast<std::size_t>(v)])
        if (!e->memlet.data.empty() && is_code_node(st.node(v)) && !device_sum(*e)) other_writes.insert(e->memlet.data);
    }
    for (int v : nodes) {
      const Node& t = st.node(v);
      if (t.kind != NodeKind::Tasklet || t.scope_entry != id) continue;
      for (const DataEdge* e : ix.out[static_cast<std::size_t>(v)]) {
        if (e->dst != exit || !e->src_conn || !e->memlet.subset || !device_sum(*e)) continue;
        const DataDesc* d = s.find_data(e->memlet.data);
        if (!d || !combinable(d->dtype) || read.count(e->memlet.data) || other_writes.count(e->memlet.data)) continue;
        // bound by value (one element, written after the tasklet, not through a pointer)
        const Connector* conn = t.find_out(*e->src_conn);
        if (!conn || (conn->dtype && *conn->dtype != d->dtype) ||
            output_binding(*conn, e->memlet, *e->memlet.subset) != ConnectorBinding::Value)
          continue;
        std::set<std::string> names;
        for (const RangeDim& r : *e->memlet.subset) free_symbols(r.start, names);
        bool varies = !over_rows, lanes_differ = false, any_param = false;
        for (const std::string& n : names) {
          varies |= marching.count(n) > 0;
          lanes_differ |= on_x.count(n) > 0;
          any_param |= params.count(n) > 0;
        }
        int edge = static_cast<int>(e - st.edges.data());
        if (!varies)
          k.accumulations.push_back({edge, cuda_ && !any_param, false});
        else if (cuda_ && !lanes_differ)
          k.accumulations.push_back({edge, true, true});
      }
    }
    if (std::none_of(k.accumulations.begin(), k.accumulations.end(),
                     [](const KernelPlan::Accumulation& a) { return !a.per_point; }))
      return;
    k.rows = std::max(k.rows, kAccumulatingRows);
    for (KernelPlan::Layout& layout : k.layouts)
      if (layout.rows > 0) layout.rows = std::max(layout.rows, kAccumulatingRows);
  }

  /// sdfc's threads per block for a map of `dims` dimensions. 2D: 64 x 4 measured best for a
  /// 5-point stencil on the H200; 3D: 32 x 8, each thread marching along z, as measured for GT4Py's
  /// 3D Laplacian (docs/benchmarks.md).
  static std::vector<int> default_block(std::size_t dims) {
    return dims == 1   ? std::vector<int>{256, 1, 1}
           : dims == 2 ? std::vector<int>{64, 4, 1}
           : dims == 3 ? std::vector<int>{32, 8, 1}
                       : std::vector<int>{32, 4, 2};
  }

  /// The block of each unfolded layout whose block is sdfc's to choose (KernelPlan::Layout::block):
  /// every layout where the file gives no block, else those whose x is not the map's last
  /// parameter (the file's block is sized for the last on x: GT4Py gives [3, 8, 1] to a map whose
  /// last parameter has 3 points, and with another on x 5 of its 8 rows of threads had none).
  /// From sdfc's block for the map's dimensions: y takes no more threads than its parameter's
  /// constant extent needs; x widens by whole warps to keep the block's threads, up to its own
  /// constant extent; a block left with fewer than half its threads gives them to y where y's
  /// extent is not a constant, and to z in 3D kernels.
  static void fit_blocks(const MapInfo& m, bool file_block, KernelPlan& k) {
    const int dims = static_cast<int>(m.params.size());
    const std::vector<int> start = default_block(m.params.size());
    const int threads = start[0] * start[1] * start[2];
    for (KernelPlan::Layout& layout : k.layouts) {
      if (layout.pitch_dim >= 0 || (file_block && layout.x == dims - 1)) continue;
      const int rows = layout.rows > 0 ? layout.rows : k.rows;
      std::optional<long> need[2];  // threads x and y need for their parameters' constant extents
      for (int a = 0; a < 2; ++a) {
        auto e = as_constant(range_extent(m.range[static_cast<std::size_t>(dim_on_axis(layout, a, dims))]));
        int per_thread = a == k.march ? rows : 1;
        if (e) need[a] = std::max<long>(1, (*e + per_thread - 1) / per_thread);
      }
      int b[3] = {start[0], start[1], start[2]};
      if (need[1] && *need[1] < b[1]) b[1] = static_cast<int>(*need[1]);
      b[0] = std::max(start[0], threads / (b[1] * b[2]) / kWarpAlignment * kWarpAlignment);
      if (need[0] && *need[0] < b[0]) b[0] = static_cast<int>(*need[0]);
      if (b[0] * b[1] * b[2] < threads / 2) {
        if (!need[1]) b[1] = std::max(b[1], threads / (b[0] * b[2]));
        if (dims == 3) b[2] = std::clamp(threads / (b[0] * b[1]), 1, kMaxBlockZ);
      }
      if (b[0] != k.block[0] || b[1] != k.block[1] || b[2] != k.block[2]) std::copy(b, b + 3, layout.block);
    }
  }

  /// The idle threads a layout launches before the first point of its x range `x`.
  static int lead(const RangeDim& x) {
    auto start = as_constant(x.start), step = as_constant(x.step);
    return start && step && *step == 1 && *start > 0 ? static_cast<int>(*start % kWarpAlignment) : 0;
  }

  /// How a kernel's code nodes access a container (plan_layouts).
  struct Use {
    int count = 0;
    int unit_dim = -1;          // the dimension whose stride is the constant 1, if any
    std::map<int, int> dim_of;  // map parameter -> the container's dimension it indexes
  };

  /// The layout of a kernel of 2 or 3 dimensions, from the container its code nodes access most
  /// often (GPU data of two or more dimensions; on ties, one whose unit stride is known):
  /// - its unit stride is known (a stride that is the constant 1, as in GT4Py's transients, whose
  ///   first dimension is contiguous): the map parameter that indexes that dimension runs on x, so
  ///   that neighbouring threads touch neighbouring elements (GT4Py's shift3d on the H100 was 1.36 x
  ///   DaCe's time with the last parameter on x and the transients' first dimension contiguous);
  /// - its strides are all unknown (symbols, as GT4Py passes its arguments): one more layout
  ///   (KernelPlan::layouts) for each of its dimensions indexed by a map parameter other than the
  ///   default's x (its last dimension first: C order, then down to Fortran order's first), and
  ///   the launch picks by the container's strides: the layout whose x indexes the dimension of
  ///   smallest |stride|. GT4Py's Laplacian in Fortran order (I fastest) ran at 1.14 x DaCe's time
  ///   with J on x (docs/benchmarks.md).
  void plan_layouts(const SDFG& s, const Block& st, const ScopeIndex& ix, int id, const std::vector<int>& nodes,
                    KernelPlan& k) {
    const MapInfo& m = st.node(id).map;
    std::map<std::string, Use> uses;
    auto candidate = [](const DataDesc& d) {
      return d.kind == DataKind::Array && d.strides.size() >= 2 && is_gpu_storage(d.storage) &&
             d.place != DataDesc::Place::MapScope;
    };
    auto unit_dim = [](const DataDesc& d) {
      for (std::size_t j = 0; j < d.strides.size(); ++j) {
        auto c = as_constant(d.strides[j]);
        if (c && *c == 1) return static_cast<int>(j);
      }
      return -1;
    };
    for (int v : nodes) {  // the accesses of code nodes, and of copies through access nodes in the scope
      if (!is_code_node(st.node(v)) && st.node(v).kind != NodeKind::Access) continue;
      std::vector<const DataEdge*> edges = ix.in[static_cast<std::size_t>(v)];
      edges.insert(edges.end(), ix.out[static_cast<std::size_t>(v)].begin(), ix.out[static_cast<std::size_t>(v)].end());
      for (const DataEdge* e : edges) {
        const DataDesc* d = e->memlet.data.empty() ? nullptr : s.find_data(e->memlet.data);
        if (!d || !e->memlet.subset || !candidate(*d)) continue;
        Use& u = uses[e->memlet.data];
        ++u.count;
        u.unit_dim = unit_dim(*d);
        const auto& subset = *e->memlet.subset;
        for (std::size_t j = 0; j < subset.size(); ++j) {
          std::set<std::string> syms;
          free_symbols(subset[j].start, syms);
          std::vector<int> params;
          for (std::size_t p = 0; p < m.params.size(); ++p)
            if (syms.count(m.params[p])) params.push_back(static_cast<int>(p));
          if (params.size() == 1) u.dim_of.emplace(params[0], static_cast<int>(j));
        }
      }
    }
    // The containers by accesses (on ties, known unit strides first); the first that can decide
    // does: a known unit stride indexed by one parameter, or unknown strides whose default x and
    // last dimension are both indexed by parameters (a gathered field, read through an index
    // table, cannot; the output it is gathered into, as in GT4Py's neighbour reductions, can).
    std::vector<std::pair<std::string, const Use*>> order;
    for (auto& [name, use] : uses) order.push_back({name, &use});
    std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
      return std::pair(a.second->count, a.second->unit_dim >= 0) > std::pair(b.second->count, b.second->unit_dim >= 0);
    });
    int default_x = k.layouts[0].x;
    // The map parameter that indexes dimension `dim` of a container (end() when none does).
    auto indexing_of = [](const Use& use, int dim) {
      return std::find_if(use.dim_of.begin(), use.dim_of.end(), [&](auto& pd) { return pd.second == dim; });
    };
    auto decides = [&](const std::string& name, const Use& use) {
      int dim = use.unit_dim >= 0 ? use.unit_dim : static_cast<int>(s.find_data(name)->shape.size()) - 1;
      return indexing_of(use, dim) != use.dim_of.end() && (use.unit_dim >= 0 || use.dim_of.count(default_x) > 0);
    };
    auto most = std::find_if(order.begin(), order.end(), [&](const auto& u) { return decides(u.first, *u.second); });
    if (most == order.end()) return;
    const std::string& name = most->first;
    const Use& use = *most->second;
    auto indexing = [&](int dim) { return indexing_of(use, dim); };
    if (use.unit_dim >= 0) {
      auto unit = indexing(use.unit_dim);
      if (unit == use.dim_of.end() || unit->first == default_x) return;
      k.layout_data = name;
      k.layouts[0] =
          KernelPlan::Layout{unit->first, lead(m.range[static_cast<std::size_t>(unit->first)]), use.unit_dim};
      return;
    }
    // One more layout per dimension of the container that another parameter indexes, the last
    // dimension first (C order, then the others down to Fortran order's first).
    std::set<int> on_x = {default_x};
    for (int dim = static_cast<int>(s.find_data(name)->shape.size()) - 1; dim >= 0; --dim) {
      auto p = indexing(dim);
      if (p == use.dim_of.end() || !on_x.insert(p->first).second) continue;
      k.layouts.push_back(KernelPlan::Layout{p->first, lead(m.range[static_cast<std::size_t>(p->first)]), dim});
      fold(m, use, k.layouts.back(), k);
    }
    if (k.layouts.size() == 1) return;
    k.layout_data = name;
    k.layouts[0].data_dim = use.dim_of.at(default_x);
  }

  /// Folds y into x in `layout` (KernelPlan::Layout::pitch_dim) where the plane can be one index:
  /// a 3D kernel marching along z whose x and y ranges have step 1 and whose y parameter indexes
  /// a dimension of the deciding container. For the layout the launch picks in C order: its x
  /// (the last dimension) is GT4Py's vertical, often short (80 levels: 78 interior points in
  /// 32-wide blocks leave 0.18 of the threads idle), and one index over the contiguous plane lets
  /// warps run on across rows (GT4Py's Laplacian at 512 x 512 x 80 on the H100: docs/benchmarks.md).
  static void fold(const MapInfo& m, const Use& use, KernelPlan::Layout& layout, const KernelPlan& k) {
    if (m.params.size() != 3 || k.rows <= 1 || k.march != 2) return;
    int y = dim_on_axis(layout, 1, 3);
    auto unit_step = [&](int p) {
      auto step = as_constant(m.range[static_cast<std::size_t>(p)].step);
      return step && *step == 1;
    };
    auto y_dim = use.dim_of.find(y);
    if (!unit_step(layout.x) || !unit_step(y) || y_dim == use.dim_of.end()) return;
    layout.pitch_dim = y_dim->second;
    layout.lead = 0;  // the folded kernel's warps align from the plane's first point, at run time
    layout.rows = std::min(k.rows, kFoldedPlanesPerThread);
    // One row of the plan's threads over the plane.
    layout.block[0] = k.block[0] * k.block[1];
    layout.block[1] = 1;
    layout.block[2] = k.block[2];
  }

  /// What the kernel of map `id` touches: containers on the scope's edges; symbols in its
  /// expressions and code that are defined outside it.
  bool closure(const SDFG& s, const Block& st, const ScopeIndex& ix, int id, const std::vector<int>& nodes,
               const std::vector<DynamicRangeInput>& dyn, const std::string& np, const std::set<std::string>& declared,
               KernelPlan& k) {
    std::set<int> in_scope(nodes.begin(), nodes.end());
    std::set<std::string> data, ids, inner_params;
    for (int v : nodes) {
      const Node& x = st.node(v);
      if (x.kind == NodeKind::MapEntry) {
        for (auto& r : x.map.range) {
          free_symbols(r.start, ids);
          free_symbols(r.end, ids);
          free_symbols(r.step, ids);
        }
        for (auto& p : x.map.params) inner_params.insert(p);
        if (v != id)  // inner maps read their dynamic inputs in the kernel
          for (auto& d : dynamic_range_inputs(s, st, v)) inner_params.insert(d.name);
      }
      if (x.kind == NodeKind::Tasklet) {
        auto t = identifiers_in(x.code.code);
        ids.insert(t.begin(), t.end());
      }
      if (x.kind == NodeKind::Access) data.insert(x.data);
      if (x.kind == NodeKind::NestedSDFG) {  // the mappings the call passes (those of symbols it uses)
        std::set<std::string> used = free_symbols(*x.sdfg);
        for (auto& [name, e] : x.symbol_mapping)
          if (used.count(name)) free_symbols(e, ids);
      }
    }
    // Written containers, and those a nested SDFG's call receives (its function takes them as
    // writable pointers): neither is passed as `const __restrict__`. The rest are read-only in the
    // kernel (DaCe's nodes write only through their out connectors), which lets loads take the
    // read-only data path: GT4Py's neighbour gathers sit beside an expanded Reduce's nested SDFG.
    std::set<std::string> written, nested_args;
    // The edges with an end in the scope: those leaving its nodes, and those entering from outside.
    std::vector<const DataEdge*> edges;
    for (int v : nodes) {
      auto& o = ix.out[static_cast<std::size_t>(v)];
      edges.insert(edges.end(), o.begin(), o.end());
      for (const DataEdge* e : ix.in[static_cast<std::size_t>(v)])
        if (!in_scope.count(e->src)) edges.push_back(e);
    }
    for (const DataEdge* ep : edges) {
      const DataEdge& e = *ep;
      if (e.memlet.data.empty()) continue;
      if (st.node(e.src).kind == NodeKind::NestedSDFG || st.node(e.dst).kind == NodeKind::NestedSDFG)
        nested_args.insert(e.memlet.data);
      if (in_scope.count(e.src)) {
        NodeKind kind = st.node(e.src).kind;
        if (kind == NodeKind::Tasklet || kind == NodeKind::MapExit || kind == NodeKind::NestedSDFG)
          written.insert(e.memlet.data);
        if (kind == NodeKind::Access && st.node(e.dst).kind == NodeKind::Access) written.insert(st.node(e.dst).data);
      }
      if (std::any_of(dyn.begin(), dyn.end(), [&](const DynamicRangeInput& d) { return d.edge == &e; }))
        continue;  // read on the host
      data.insert(e.memlet.data);
      // Memlets of code nodes are pointers to their subset's start (ir/Signature: DaCe's rule).
      bool view = is_code_node(st.node(e.src)) || is_code_node(st.node(e.dst));
      if (e.memlet.subset && !is_scope_passage(st, e))
        for (auto& r : *e.memlet.subset) {
          free_symbols(r.start, ids);
          if (!view) free_symbols(r.end, ids);
        }
    }
    auto scope_local = [&](const DataDesc& d) { return d.place == DataDesc::Place::MapScope; };
    for (auto& name : data)
      if (const DataDesc* d = s.find_data(name)) {
        for (auto& x : d->strides) free_symbols(x, ids);
        for (auto& x : d->offset) free_symbols(x, ids);
        if (scope_local(*d)) free_symbols(d->total_size, ids);
      }
    using K = KernelPlan::Param::Kind;
    bool ok = true;
    for (auto& name : data) {
      const DataDesc* d = s.find_data(name);
      if (!d || scope_local(*d)) continue;  // scope-local transients are declared in the kernel
      if (is_gpu_storage(d->storage) || d->storage == StorageType::CPU_Pinned) {
        bool read_only = !written.count(name) && !nested_args.count(name);
        k.params.push_back({read_only ? K::ConstPointer : K::Pointer, name, d->dtype});
      } else if (d->kind == DataKind::Scalar) {
        // Host scalars travel by value (the synchronization pass makes the host wait when needed).
        k.params.push_back({K::HostScalar, name, d->dtype});
      } else {
        error(np, fmt::format("GPU map \"{}\" accesses \"{}\", which is in host memory ({}); copy it to GPU_Global "
                              "memory first, or make it CPU_Pinned",
                              st.node(id).map.label, name, to_string(d->storage)));
        ok = false;
      }
    }
    for (auto& d : dyn) {
      k.params.push_back({K::DynamicInput, d.name, d.type});
      inner_params.insert(d.name);
    }
    std::set<std::string> known = declared;
    for (auto& p : enclosing_params(st, id)) known.insert(p);
    for (auto& name : ids) {
      if (inner_params.count(name) || !known.count(name) || s.find_data(name)) continue;
      k.params.push_back({K::Symbol, name, symbol_value_type(s.symbol_type(name).value_or(DType::Int64))});
    }
    return ok;
  }
};

}  // namespace

void outline_kernels(SDFG& sdfg, const CompileOptions& options) {
  if (options.target == Target::CPU) return;  // legalize refused GPU schedules
  Outliner o(options.dependent_launch && options.target == Target::CUDA &&
                 has_grid_dependency_control(gpu_arch_or_default(options)),
             options.target == Target::CUDA);
  std::set<std::string> declared;
  for (auto& a : signature(sdfg).args)
    if (a.kind == Argument::Kind::Symbol) declared.insert(a.name);
  o.sdfg(sdfg, "", declared);
  if (!o.diags.empty()) throw UserError(std::move(o.diags));
}

}  // namespace sdfc
