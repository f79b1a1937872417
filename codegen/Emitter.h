/// \file
/// The emitters of the code generator (internal to codegen/). `Emitter` prints host code: SDFG
/// bodies, control flow, maps, tasklets, host copies and nested SDFGs, with the synchronization
/// the passes recorded. `GpuEmitter` is built on it and adds kernels, launches and GPU copies for
/// CUDA and HIP (one text, through the portability header sdfc/gpu_portability.h). What they
/// print is collected in an `EmittedBody`, which the library frame (Frame.h) wraps into the
/// program's source and C header. Every decision was made by a pass and is read from the IR.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analysis/GpuOps.h"
#include "codegen/Printing.h"
#include "ir/Memlets.h"
#include "ir/Options.h"
#include "ir/SDFG.h"
#include "lang/CodeWriter.h"

namespace sdfc::codegen {

/// How generated code reaches a container: through a pointer variable, or as a local value.
enum class Access { Pointer, Value };

/// Emission context of one SDFG function body (the program itself, or a nested SDFG).
struct Ctx {
  const SDFG* sdfg = nullptr;
  std::string ptr;  ///< JSON pointer of this SDFG in the input file
  bool root = false;
  bool parallel = false;     ///< the body runs inside a parallel (OpenMP) map: WCR must be atomic
  int loop_depth = 0;        ///< enclosing LoopRegions (break/continue need one)
  bool in_kernel = false;    ///< emitting device code (a GPU kernel body)
  bool split_index = false;  ///< the kernel's KernelPlan::split_index (element indices printed split)
  /// Containers whose shared index terms the kernel computed at its top (KernelPlan::hoisted_bases):
  /// the name of that local and its value, added to their indices as one term.
  std::map<std::string, std::pair<std::string, Expr>> bases;
  int block_kernel = -1;  ///< the kernel's map entry when its GPU_ThreadBlock maps run as the block's threads
  /// The kernel's KernelPlan::accumulations: each write edge and the register its values add into.
  std::map<const DataEdge*, std::string> accumulators;
  /// Its per-point KernelPlan::accumulations: written with sdfc::gpu::atomic_add_grouped.
  std::set<const DataEdge*> grouped_sums;
  std::map<std::string, Access> access;
  std::set<std::string> declared_symbols;
  std::map<std::string, std::pair<const Block*, int>> scope_local;  ///< transient -> (state, map entry)
  std::map<std::string, const Block*> state_local;                  ///< deferred allocation: transient -> state
  std::set<std::string> counted;  ///< transients whose element count the body computed first (__sdfc_count_<name>)
  int labels = 0;
  bool exit_used = false;
  /// Name lookups stay O(1) in big files; shared, so that copying a context (a kernel's) is cheap.
  std::shared_ptr<const std::unordered_map<std::string, const DataDesc*>> data_index;

  const DataDesc* data(const std::string& name) const {
    auto it = data_index->find(name);
    return it == data_index->end() ? nullptr : it->second;
  }
  void index_data() {
    auto index = std::make_shared<std::unordered_map<std::string, const DataDesc*>>();
    for (auto& [n, d] : sdfg->arrays) index->emplace(n, &d);
    data_index = std::move(index);
  }
};

/// What emitting the program's body produced, for the library frame.
struct EmittedBody {
  std::string text;                  ///< the body of __program_<name>_internal
  std::vector<std::string> kernels;  ///< __global__ functions
  /// Each kernel's launcher (its declaration, its definition): a host function in the device
  /// source that launches it; the host code calls it.
  std::vector<std::pair<std::string, std::string>> launchers;
  std::vector<std::string> device_functions;        ///< nested SDFGs called from kernels
  std::vector<std::string> functions;               ///< nested SDFGs called on the host
  std::vector<std::string> globals;                 ///< tasklets' code_global, deduplicated, in order
  std::vector<std::string> init_codes, exit_codes;  ///< init_code / exit_code of nested SDFGs
  std::vector<const SDFG*> nested_sdfgs;            ///< nested SDFGs emitted, for their located code
  bool uses_pool = false;                           ///< some allocation comes from the stream-ordered pool
  bool dependent_launch = false;                    ///< some kernel is a programmatic dependent launch
};

/// Whether SDFG-level code for DaCe's location `where` belongs in a build for `target`: "frame"
/// and "cpu" always, "cuda" in CUDA and HIP builds (DaCe's GPU target serves both), "hip" in HIP
/// builds.
bool code_location_applies(Target target, const std::string& where);
/// Prints each applicable target block of `targets` whose location is in `locations`.
void emit_located(Target target, const SDFG& sdfg, const std::vector<std::pair<std::string, CodeBlock>>& targets,
                  const std::vector<std::string>& locations, const char* kind, CodeWriter& w, bool block);

class Emitter {
 public:
  Emitter(const SDFG& sdfg, const CompileOptions& options, std::string file)
      : root_(sdfg), options_(options), file_(std::move(file)), name_(sdfg.name), gpu_(options.target != Target::CPU) {}
  virtual ~Emitter() = default;

  /// Prints the body of the top-level SDFG (and, on the way, its kernels and nested SDFGs).
  EmittedBody emit_program();

 protected:
  const SDFG& root_;
  const CompileOptions& options_;
  std::string file_;
  std::string name_;
  bool gpu_;  // CUDA or HIP: GPU memory, the GPU context
  EmittedBody out_;
  int nested_counter_ = 0;
  std::map<const Block*, ScopeIndex> adjacency_;
  /// The completeness ledger of each state being emitted: how often each node and edge was
  /// lowered (see `begin_state` / `end_state`).
  struct Ledger {
    std::string ptr;
    std::vector<int> nodes, edges;
  };
  std::map<const Block*, Ledger> ledger_;

  // ---- completeness (Emitter.cpp) -------------------------------------------------------------
  // Every node and edge of every emitted state is lowered exactly once, by the emitter of its kind
  // (edges: their EdgeRole, ir/Memlets.h). An edge is recorded with the role its emitter lowered
  // it as, which must be the role the IR gives it. What is left over, or lowered twice, is an
  // internal error naming the element: never a program with a part silently missing.
  void begin_state(const Block& st, const std::string& ptr);
  void lowered(const Block& st, int node);
  void lowered(const Block& st, const DataEdge& e, EdgeRole as);
  void end_state(const Block& st);
  /// Marks the empty-memlet (ordering) edges into `id`: the emission order honours them.
  void lowered_ordering_into(const Block& st, int id);
  const ScopeIndex& adj(const Block& st);
  /// `D[linear index]` (or the value name for a local scalar) for element `idx` of container `d`.
  std::string element(const Ctx& c, const std::string& d, const std::vector<Expr>& idx, const std::string& ptr) const;
  /// How a pointer connector bound to subset `r` of `d` indexes: element strides per dimension.
  std::string address(const Ctx& c, const std::string& d, const std::vector<Expr>& idx, const std::string& ptr) const;
  /// Control code as the translate-python pass translated it (ControlCode, ir/SDFG.h), each
  /// read of a container printed with `element` as the container is reached in `c`.
  std::string control(const Ctx& c, const ControlCode& code, const std::string& ptr) const;
  /// Finds where each transient lives: in one map scope, in one state, or the whole SDFG.
  /// Where transients live, as the transient-lifetimes pass placed them.
  static void read_placement(Ctx& c);
  /// The element count of transient `name` as C++ text: checked (codegen/CheckedSize.h), or the
  /// local that emit_sdfg_body computed for it before any allocation.
  std::string count_of(const Ctx& c, const std::string& name, const DataDesc& d) const;
  std::string alloc_line(const Ctx& c, const std::string& name, const DataDesc& d);
  void emit_sdfg_body(Ctx& c, CodeWriter& w);
  void bind_members(Ctx& c, CodeWriter& w) const;
  std::string arena_free() const;
  /// Graph mode (gpu-graph: the whole call or its segments are captured): events go through the
  /// runtime's capture-aware helpers, which skip a wait whose event was last recorded on the other
  /// side of a capture's boundary (a segment's, or the whole call's in a carried loop's first
  /// iteration, whose waits refer to the previous iteration's records).
  bool capture_aware_events() const { return root_.gpu_graph || root_.graph_segments > 0; }
  /// The synchronization pass's events around an operation on `stream`, printed for this program
  /// (capture-aware in graph mode).
  void stream_waits(int stream, const std::vector<int>& events, CodeWriter& w) const {
    codegen::stream_waits(stream, events, w, capture_aware_events());
  }
  void stream_record(int stream, int event, CodeWriter& w) const {
    codegen::stream_record(stream, event, w, capture_aware_events());
  }
  /// After an allocation: the release if an exception leaves the scope before its free line.
  std::string unwind_line(const std::string& name, const DataDesc& d) const;
  std::string free_line(const std::string& name, const DataDesc& d) const;
  void emit_region(Ctx& c, const Block& r, const std::string& ptr, CodeWriter& w);
  void emit_assignments(Ctx& c, const InterstateEdge& e, const std::string& region_ptr, CodeWriter& w);
  void emit_block(Ctx& c, const Block& b, const std::string& ptr, CodeWriter& w);
  /// A state's or a carried loop's fork from stream 0 before it and join into stream 0 after it
  /// (Block::fork_event, fork_streams, join_events).
  void emit_fork(const Block& b, CodeWriter& w);
  void emit_join(const Block& b, CodeWriter& w);
  /// `body` (the code of block `b`), inside a graph segment when the gpu-graph pass made `b` one.
  void emit_segment(const Block& b, const std::string& ptr, CodeWriter& w, const std::function<void()>& body);

  std::string state_type() const { return name_ + "_state_t"; }

  // ---- dataflow (Dataflow.cpp) ----------------------------------------------------------------
  void emit_scope(Ctx& c, const Block& st, const std::string& ptr, int scope, CodeWriter& w, bool parallel);
  void emit_node(Ctx& c, const Block& st, const std::string& ptr, int id, CodeWriter& w, bool parallel);
  /// Marks a map scope's entry and exit nodes and the edges its construct consumes: the data
  /// entering (read by the memlets inside), the data leaving (written by the memlets inside), and
  /// ordering edges into the exit. Dynamic range inputs are marked where they are read.
  void lowered_scope(const Block& st, int entry);
  void emit_map(Ctx& c, const Block& st, const std::string& ptr, int id, CodeWriter& w, bool parallel);
  const DataEdge* in_edge(const Block& st, int id, const std::string& conn);
  std::vector<const DataEdge*> out_edges(const Block& st, int id, const std::string& conn);
  /// Writes `value` into `target` (an element access) with the memlet's conflict resolution.
  void emit_write(const std::string& target, const std::string& value, DType t, const DataEdge& e,
                  const std::string& ptr, CodeWriter& w);
  void emit_tasklet(Ctx& c, const Block& st, const std::string& ptr, int id, CodeWriter& w, bool parallel);
  /// `const T name = value;` for each dynamic range input of map `entry`, read where the code runs.
  void declare_dynamic_inputs(const Ctx& c, const Block& st, const std::vector<DynamicRangeInput>& dyn,
                              const std::string& np, CodeWriter& w);
  /// A copy between the containers at the two ends of an edge's memlet path (an access-to-access
  /// copy, or a copy into or out of a map scope), with the subsets ir/Memlets.h derives.
  void emit_copy(Ctx& c, const Block& st, const DataEdge& e, const std::string& ep, CodeWriter& w, bool parallel);
  void emit_nested(Ctx& c, const Block& st, const std::string& ptr, int id, CodeWriter& w, bool parallel);

  // ---- GPU (GpuEmitter.cpp; a CPU program has none: legalize refused GPU schedules) -------------
  virtual void emit_kernel(Ctx& c, const Block& st, const std::string& ptr, int id, CodeWriter& w);
  virtual void emit_gpu_copy(const Ctx& c, const std::string& src, const std::string& dst, const Range& rs,
                             const Range& rd, const std::vector<std::size_t>& ds, const std::vector<std::size_t>& dd,
                             const DataEdge& e, const std::string& ep, CodeWriter& w);
};

/// Kernels, their launches and GPU copies, for CUDA and HIP.
class GpuEmitter : public Emitter {
 public:
  using Emitter::Emitter;

 protected:
  /// A kernel whose thread-block maps run as the block's threads: one block per point of the
  /// kernel map (its parameters from blockIdx), the block shape from the thread-block maps.
  void emit_block_kernel(Ctx& kc, const Block& st, const std::string& ptr, int id,
                         const std::vector<std::string>& params, const std::vector<std::string>& args, CodeWriter& w);
  /// A GPU_Device map: a __global__ kernel (one thread per point, the last parameter on x, or one
  /// block per point in thread-block mode) and its launch on the stream the stream-assignment
  /// pass chose, as outline-kernels planned it. Its dynamic range inputs are read on the host
  /// before the launch (the grid depends on them) and passed by value.
  void emit_kernel(Ctx& c, const Block& st, const std::string& ptr, int id, CodeWriter& w) override;
  void emit_kernel_launch(Ctx& c, const Block& st, const std::string& ptr, int id, CodeWriter& w);
  /// The host side of emit_kernel_launch: the comment naming the plan, the stream's waits, the
  /// choice among the layouts' kernels `knames` by the strides, the grid and the launch.
  void emit_kernel_launch_site(const Ctx& c, const Node& n, const std::string& np,
                               const std::vector<std::string>& knames, const std::vector<std::string>& params,
                               const std::vector<std::string>& args, CodeWriter& w);
  static void kernel_signature(const KernelPlan& k, const Ctx& c, Ctx& kc, std::vector<std::string>& params,
                               std::vector<std::string>& args);
  /// A folded layout's pitch and idle lead threads (KernelPlan::Layout::pitch_dim), as C++
  /// expressions that the kernel and its launch both print (the lead reads `__pitch`).
  struct Fold {
    std::string pitch, lead;
  };
  static Fold fold_of(const Ctx& c, const MapInfo& m, const KernelPlan& plan, const KernelPlan::Layout& layout);
  /// A folded layout's x and y parameters, from one index over the plane.
  static void fold_index(const Ctx& c, const MapInfo& m, const KernelPlan& plan, const KernelPlan::Layout& layout,
                         CodeWriter& kw);
  void dependent_launch_prologue(const KernelPlan& plan, CodeWriter& kw);
  void kernel_prologue(const KernelPlan& plan, const Ctx& kc, CodeWriter& kw);
  /// The launch of kernel `kname` for map entry `n` (inside the block the caller opened with the
  /// extents `__nx`...): nothing when a count is zero, the race-exposure delay, the checked launch
  /// on the map's stream through the kernel's launcher (EmittedBody::launchers).
  void emit_launch(const Node& n, const std::string& kname, const std::vector<std::string>& counts,
                   const std::vector<std::string>& grid, const int* block, const std::vector<std::string>& params,
                   const std::vector<std::string>& args, CodeWriter& w);
  /// A copy that touches GPU memory, on the stream the pass chose: one cudaMemcpyAsync for
  /// contiguous data, otherwise cudaMemcpy2DAsync for each 2D block of rows (host loops over
  /// the outer dimensions of an N-D block; strided single elements are rows of one element).
  void emit_gpu_copy(const Ctx& c, const std::string& src, const std::string& dst, const Range& rs, const Range& rd,
                     const std::vector<std::size_t>& ds, const std::vector<std::size_t>& dd, const DataEdge& e,
                     const std::string& ep, CodeWriter& w) override;
};

}  // namespace sdfc::codegen
