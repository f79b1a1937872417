/// \file
/// The SDFG intermediate representation: data descriptors, control-flow blocks (states, regions,
/// loops, conditionals, break/continue/return), dataflow nodes and memlet edges.
///
/// Ownership: an SDFG owns its control-flow tree; a region owns its blocks; a state owns its nodes
/// and edges. Nodes and blocks are referred to by index (the position in their parent's list,
/// which is also the `id` DaCe writes), so copies of the tree stay consistent. Fields the IR does
/// not model but DaCe needs back (guid, debuginfo, ...) live in `extra` and round-trip unchanged.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/Expr.h"
#include "ir/Types.h"

namespace sdfc {

using Json = nlohmann::ordered_json;

struct SDFG;

/// One dimension of a DaCe Range; `end` is inclusive, as in DaCe.
struct RangeDim {
  Expr start, end, step, tile;
};
using Range = std::vector<RangeDim>;

/// Source code with its language (tasklets, interstate conditions, SDFG-level code).
struct CodeBlock {
  std::string code;
  Language language = Language::Python;
};

enum class DataKind { Array, Scalar };

/// A data container (DaCe `Array` or `Scalar`, or a view: `ArrayView`/`View`, read as an Array
/// with `view` set).
struct DataDesc {
  DataKind kind = DataKind::Array;
  /// DaCe's views (`ArrayView`, `View`): an alias of part of the container at the other end of
  /// the view's adjacent edge, with its own shape, strides and offset; never allocated. The
  /// fold-views pass rewrites every access through a view into one of the viewed container and
  /// removes the view, so no later pass sees one.
  bool view = false;
  /// DaCe's `Structure`: one C struct (`dtype` its struct type, shape [1]) whose fields are its
  /// members, each a container of this SDFG named `<name>.<field>` (an Array or a nested
  /// Structure by pointer, a Scalar by value). A transient structure is its members alone: legalize
  /// refuses any use of the structure itself.
  bool structure = false;
  /// A member of a non-transient Structure: its memory is the caller's, reached through the
  /// structure's field. Never allocated and never an argument of its own: every function holding
  /// the structure binds its members from the fields at entry (codegen's `bind_members`).
  bool member = false;
  DType dtype = DType::Int32;
  std::vector<Expr> shape;
  std::vector<Expr> strides;  ///< Array only; C order when the file omits it
  Expr total_size;            ///< Array only; product of the shape when omitted
  std::vector<Expr> offset;   ///< Array only; zeros when omitted
  bool transient = false;
  StorageType storage = StorageType::Default;
  Lifetime lifetime = Lifetime::Scope;
  bool pool = false;
  std::optional<bool> optional_;  ///< DaCe's `optional` (null = unknown)
  /// The SDFG's `constants_prop` entry of this transient: its elements in C order (JSON numbers or
  /// booleans), null when it is not a constant. transient-lifetimes makes a constant Persistent;
  /// the library's init fills it once; validation refuses writes into it.
  Json constant = nullptr;
  Json extra = Json::object();  ///< unmodelled attributes, kept for the writer

  /// transient-lifetimes: where a transient of lifetime Scope/State/SDFG is allocated: once per
  /// call of its SDFG (the default), around the one state that uses it (when its size depends on
  /// a symbol assigned during the program), or inside the one map scope that uses it.
  enum class Place { Call, State, MapScope };
  Place place = Place::Call;
  const struct Block* place_state = nullptr;  ///< State and MapScope: the state
  int place_scope = -1;                       ///< MapScope: the map entry's id
  /// transient-lifetimes: the lifetime comes from the memory mode, not from the file (so the
  /// transient holds nothing across calls, and workspace-layout may share its bytes).
  bool lifetime_from_mode = false;
  /// workspace-layout: an External transient's byte offset from its storage's workspace base (a
  /// multiple of 256; symbolic in the init symbols). Null for everything else.
  Expr workspace_offset;
  /// workspace-layout: a per-call GPU transient's byte offset in the call's arena (one allocation
  /// per call for all of them; a multiple of 256; symbolic in the program's symbols). Null for
  /// everything else.
  Expr arena_offset;
  /// place-allocations: how the generated code allocates a transient, where `place` says.
  /// StateStruct: Persistent and External ones, members of the program's state (allocated at
  /// init, or in the caller's workspace). Arena: at `arena_offset` in the call's arena.
  /// DeviceMalloc / DevicePool / PinnedHost: gpuMalloc, MallocAsync on stream 0 from the
  /// stream-ordered pool, gpuHostAlloc. HostHeap: new[] (where it is placed: the call, the state,
  /// or, on the CPU, a map scope whose transient is sized at run time). HostValue: a local variable of its SDFG's
  /// function (host scalars). ScopeValue / ScopeArray: a local of its map scope (one element; an
  /// array of constant size). SharedMemory: a __shared__ array of a thread-block kernel.
  enum class Alloc {
    None,
    StateStruct,
    Arena,
    DeviceMalloc,
    DevicePool,
    PinnedHost,
    HostHeap,
    HostValue,
    ScopeValue,
    ScopeArray,
    SharedMemory
  };
  Alloc alloc = Alloc::None;
  /// transient-layouts: the argument whose strides this GPU transient's layout follows at each
  /// call ("": the layout the file declares), and for each of its dimensions the argument's
  /// dimension that the same map parameter indexes (-1: none). `strides` then hold the choice.
  std::string layout_follows;
  std::vector<int> layout_dims;
};
const char* to_string(DataDesc::Alloc a);
/// Whether `a` allocates from a heap where the transient is placed (and frees it after).
inline bool is_heap_alloc(DataDesc::Alloc a) {
  return a == DataDesc::Alloc::DeviceMalloc || a == DataDesc::Alloc::DevicePool || a == DataDesc::Alloc::PinnedHost ||
         a == DataDesc::Alloc::HostHeap;
}

/// workspace-layout: one External workspace (per storage type, DaCe's names).
struct Workspace {
  StorageType storage = StorageType::CPU_Heap;
  std::vector<std::string> members;  ///< the External transients in it, in file order
  std::size_t alignment = 1;         ///< the largest element size of its members: the base must be aligned to it
  Expr bytes;                        ///< what the program needs: the peak, with shared bytes
  Expr unshared_bytes;               ///< what it would need if no two transients shared bytes (DaCe's layout)
  /// The call's arena only: allocated from the stream-ordered pool (MallocAsync on stream 0 at the
  /// call's start, FreeAsync on stream 0 at its end; the pool keeps the memory between calls).
  bool stream_ordered = false;
  /// The call's arena only, gpu-graph: held by the instance between calls (allocated at the first
  /// call, grown when the symbols need more, freed at exit), so that a graph's kernels keep their
  /// pointers from call to call and the graph holds no memory nodes.
  bool held = false;
};

/// Library: a DaCe library node (`classpath` names its class); the expand-library-nodes pass
/// replaces each by what it computes before any other pass runs.
enum class NodeKind { Access, MapEntry, MapExit, Tasklet, NestedSDFG, Library };

/// A connector name with its declared type (nullopt: inferred from the memlet's data).
struct Connector {
  std::string name;
  std::optional<DType> dtype;
  /// Declared as a pointer to `dtype` (DaCe's `pointer` dtype, as its frontend gives the outputs a
  /// callback writes): bound as a pointer to the memlet's first element even when it moves one.
  bool pointer = false;
};

/// A function of the caller's that the program calls (DaCe's `callback` dtype: a symbol whose value
/// is a C function pointer; DaCe's loader makes one from a Python function). An array is passed as
/// a pointer to its first element (`T const *`, as DaCe declares it), a scalar by value.
struct Callback {
  struct Value {
    bool array = false;
    DType dtype = DType::Float64;
  };
  std::vector<Value> arguments;
  std::vector<Value> results;
  /// DaCe's "scalar function": no result, or one scalar result that is the C return value. Any
  /// other results are written through pointer parameters after the arguments (`T const *` for an
  /// array, `T *` for a scalar).
  bool returns_scalar() const { return results.empty() || (results.size() == 1 && !results[0].array); }
};

/// Map properties; they live on the MapEntry, as in DaCe.
struct MapInfo {
  std::string label;
  std::vector<std::string> params;
  Range range;
  ScheduleType schedule = ScheduleType::Default;
  std::vector<int> gpu_block_size;  ///< empty = not given
};

/// outline-kernels: a GPU_Device map outside any kernel is a kernel; what it takes and its launch
/// shape.
struct KernelPlan {
  struct Param {
    /// Pointer / ConstPointer: a container in GPU (or pinned) memory, `const` when the kernel only
    /// reads it; HostScalar: a host scalar passed by value; DynamicInput: a dynamic map range input,
    /// read on the host before the launch; Symbol: a symbol (or enclosing map parameter) by value.
    enum class Kind { Pointer, ConstPointer, HostScalar, DynamicInput, Symbol };
    Kind kind = Kind::Symbol;
    std::string name;
    DType type = DType::Int64;
  };
  std::vector<Param> params;  ///< containers (by name), then dynamic inputs, then symbols (by name)
  /// GPU_ThreadBlock maps run as the threads of one block per point of the kernel map (DaCe's
  /// semantics); otherwise one thread per point and the thread-block maps are loops in each.
  bool thread_block = false;
  int block[3] = {1, 1, 1};  ///< threads per block, x first
  /// Points per thread along `march`: consecutive points along y or z (maps of 2 or more
  /// dimensions), or along x (1D maps) points a block apart, so that each row of a block stays
  /// coalesced; a block whose points are all inside the map runs its rows without bound checks.
  int rows = 1;
  int march = 1;  ///< the axis (0: x, 1: y, 2: z) a thread marches along when rows > 1
  /// Which map dimension runs along x, and the warps' alignment there. The other dimensions keep
  /// their order on the remaining axes (the last of them on y, then z; maps of more than three
  /// dimensions: the last on x, the one before on y, the rest flattened into z, one layout).
  struct Layout {
    int x = 0;  ///< index of the map parameter on x (the default layout: the last one)
    /// Idle threads launched along x before the map's first point, so that warps start where the
    /// map's index is a multiple of 32 (aligned loads and stores when index 0 is aligned).
    int lead = 0;
    int data_dim = -1;  ///< with `layout_data`: the dimension of `layout_data` that x indexes
    /// Folded (3D kernels marching along z; -1: not folded): x and y run as one index over the
    /// (y, x) plane, row after row, with the pitch chosen at the launch: the stride of this
    /// dimension of `layout_data` (the one y indexes) when x's dimension has unit stride and the
    /// pitch leaves at most 32 idle points per row, so that thread t touches element t of the
    /// plane and warps run on across rows (C order's short K rows, 78 points at 80 levels, fill
    /// 32-wide blocks to 0.82); otherwise x's extent. Correct for any strides: every point of the
    /// plane is one thread's. Its warps start where the plane's first point is a multiple of 32.
    int pitch_dim = -1;
    /// Points per thread along `march` in this layout where they differ from KernelPlan::rows
    /// (0: the plan's). Folded layouts march 8 planes: on the H100 0.84 of a copy for GT4Py's
    /// Laplacian in C order at 512 x 512 x 80 against 0.80 with 16 (docs/benchmarks.md).
    int rows = 0;
    /// Threads per block in this layout, x first, where they differ from KernelPlan::block (all 0:
    /// the plan's). A layout whose x is not the map's last parameter fits its block to the extents
    /// its axes have (GT4Py's [3, 8, 1] is sized for 3 points of the last parameter on x: with
    /// another parameter on x, 5 of its 8 rows of threads had no point), and a folded one runs
    /// one row of threads over the plane.
    int block[3] = {0, 0, 0};
  };
  /// The threads per block of `layout` of `plan` (its own, else the plan's).
  static const int* layout_block(const KernelPlan& plan, const Layout& layout) {
    return layout.block[0] > 0 ? layout.block : plan.block;
  }
  /// The default layout first. A kernel over data whose unit stride is known only at the call
  /// (strides that are symbols, as GT4Py passes them) has one layout per candidate x dimension:
  /// each is a kernel of its own, and the launch runs the one whose x indexes the dimension of
  /// `layout_data` with the smallest |stride| (the first on ties), so that threads next to each
  /// other along x touch neighbouring elements in C order and in GT4Py's order alike.
  std::vector<Layout> layouts{Layout{}};
  /// The container whose strides chose the layout: at the call (several layouts), or here, where
  /// one of its strides is the constant 1 (one layout, x on the parameter indexing that dimension).
  std::string layout_data;
  /// Programmatic dependent launch (CUDA, sm_90+): launched with programmatic stream
  /// serialization, so it may start while the kernel before it on its stream is finishing; its
  /// first statement waits until the kernels before it have completed and their writes are
  /// visible (griddepcontrol). Stream order is kept.
  bool dependent_launch = false;
  /// When the kernel lets the next one on its stream start (dependent launch only): as its first
  /// statement when its grid has at most this many blocks per SM (the next kernel's blocks then
  /// find free SM slots and wait beside it, so only the launch latency overlaps); otherwise when
  /// each block exits, so that a kernel of many waves never shares its SMs with a successor that
  /// can only wait (an early trigger made a DaCe-made chain of 10 maps at 16.7 M points 1.9 x
  /// slower). 0: always at exit. Decided at run time from the grid, since grids depend on symbols.
  int early_trigger_blocks_per_sm = 0;
  /// How the kernel prints the index of each element it reads or writes: the terms that vary
  /// with the map's parameters first, then the terms made of the SDFG's symbols added one by one
  /// (an identity), so that every access to one container at a point shares its first part
  /// textually and nvcc computes it once (GT4Py's stencils read 7 neighbours: docs/benchmarks.md);
  /// false: one sum, as host code prints it. Nested SDFGs called from the kernel follow it.
  bool split_index = false;
  /// Per container, the symbol terms its element indices share (split indices only): GT4Py's
  /// fields index `u[(i - __u_I_range_0) * __u_I_stride + ...]`, so every read of `u` adds the same
  /// products of origins and strides. The kernel computes each sum once at its top, as
  /// `__sdfc_base_<data>`, and each index adds that local and what is left of its own terms.
  struct HoistedBase {
    std::string data;
    Expr value;
  };
  std::vector<HoistedBase> hoisted_bases;
  /// Write-conflicted sums the kernel adds up in a register over the thread's rows (points along
  /// `march`) and writes with one atomic after them, instead of one atomic per point: a tasklet
  /// directly in the kernel's map adding (`DeviceAdd`) into one element whose index no layout's
  /// marching parameter changes, of a container nothing in the kernel reads. DaCe's column and
  /// total sums (corpus colsum_wcr_s) otherwise queue every warp's atomic on one address.
  /// `per_point`: a sum whose index the marching parameter changes, but no layout's x parameter
  /// (DaCe's matrix-vector products written as maps, `t[i] += A[i, j] * x[j]` with j on x): one
  /// atomic per point still, but the threads of a warp naming the same element add their values
  /// first (CUDA; sdfc::gpu::atomic_add_grouped), where all 32 otherwise queue on one address.
  struct Accumulation {
    int edge = -1;  ///< the tasklet's output edge (index in the state's edges)
    /// CUDA, where the element is the same for every thread of the kernel (no map parameter in its
    /// index): the threads of a warp that reach the atomic together add their sums first, and one
    /// of them adds theirs (sdfc::gpu::atomic_add_combined). Always true with `per_point`.
    bool combined = false;
    bool per_point = false;  ///< no register over the rows: each point's value, combined by element
  };
  std::vector<Accumulation> accumulations;
};
const char* to_string(KernelPlan::Param::Kind k);

/// The map dimension that kernel layout `layout` runs along `axis` (0: x, 1: y, 2: z) for a map of
/// `dims` parameters; -1 where none does (axes beyond the map's, and z of maps of more than three
/// dimensions, which flattens their first ones).
int dim_on_axis(const KernelPlan::Layout& layout, int axis, int dims);

/// A dataflow node. The kind decides which members are meaningful.
struct Node {
  NodeKind kind;
  std::string label;
  std::vector<Connector> in_connectors, out_connectors;
  int scope_entry = -1;  ///< id of the enclosing MapEntry (for a MapExit: its own entry)
  int scope_exit = -1;   ///< id of the matching MapExit (MapEntry/MapExit only)

  std::string data;                                          ///< Access: container name
  MapInfo map;                                               ///< MapEntry
  CodeBlock code;                                            ///< Tasklet
  CodeBlock code_global;                                     ///< Tasklet: C++ emitted at file scope
  std::unique_ptr<SDFG> sdfg;                                ///< NestedSDFG
  std::vector<std::pair<std::string, Expr>> symbol_mapping;  ///< NestedSDFG: inner -> outer
  std::string classpath;  ///< Library: DaCe's class, e.g. dace.libraries.standard.nodes.reduce.Reduce (its
                          ///< properties stay in `extra`)
  Json extra = Json::object();

  // Decisions of passes (not part of DaCe's format; shown by the IR dump).
  int stream = -1;               ///< stream-assignment: the stream a GPU kernel (MapEntry) runs on
  std::vector<int> host_waits;   ///< synchronization: streams the host waits for before this node
  std::vector<int> wait_events;  ///< synchronization: events its stream waits for before the kernel
  int record_event = -1;         ///< synchronization: event recorded on its stream after the kernel
  /// synchronization: a host tasklet that hands device memory to a callback; the callback may queue
  /// work on a stream sdfc does not know (CuPy's current stream), so the host waits for the whole
  /// device after it.
  bool device_sync_after = false;
  /// expand-library-nodes: this tasklet is sdfc's own call into a library, "cblas" (--blas vendor,
  /// host data), "cublas" (--blas vendor, GPU data, outside kernels: a GPU operation on `stream`,
  /// ordered like a kernel launch) or "linalg" (sdfc/linalg.h: DaCe's Inv, Solve and Cholesky on
  /// host data); "" for every other node. The tasklet check skips such tasklets.
  std::string library_call;
  /// outline-kernels: set on every GPU_Device map entry outside a kernel.
  std::optional<KernelPlan> kernel;
  /// gpu-graph: a host tasklet inside a recorded graph that runs only when the graph is captured:
  /// a function of the graph's key (symbols, scalar arguments) whose outputs are scalars of its
  /// state that only kernels (by value) and other such tasklets read, so a replay needs no value.
  bool graph_capture_only = false;
  /// translate-python: a Python tasklet's code as C++ statements (lang/PythonTasklet.h)
  std::optional<std::string> cpp_code;

  /// The node's id in the file once a pass renumbered its state (fuse-maps removes nodes); -1:
  /// its position is its id. Diagnostics point at `/nodes/<file id>` (walk::node_pointer).
  int file_id = -1;

  explicit Node(NodeKind k) : kind(k) {}
  const Connector* find_in(const std::string& name) const;
  const Connector* find_out(const std::string& name) const;
};

/// "access node", "map entry", "tasklet", ... (for diagnostics).
const char* to_string(NodeKind k);

/// Tasklets, nested SDFGs and library nodes: nodes whose connectors carry values (DaCe's CodeNode).
inline bool is_code_node(const Node& n) {
  return n.kind == NodeKind::Tasklet || n.kind == NodeKind::NestedSDFG || n.kind == NodeKind::Library;
}

/// Data movement along an edge (a DaCe Memlet). `data` empty = an empty (ordering) memlet.
struct Memlet {
  std::string data;
  std::optional<Range> subset;
  std::optional<Range> other_subset;
  Expr volume = make_int(0);
  bool dynamic = false;
  std::optional<std::string> wcr;  ///< write-conflict resolution lambda text
  bool is_data_src = true;
  Json extra = Json::object();
};

/// lower-wcr: how a write with write-conflict resolution is printed — DaCe's lambda classified,
/// and the form of atomicity the place of the write needs.
struct WcrLowering {
  enum class Op { Sum, Product, Min, Max, Lambda };
  /// Plain: nothing else writes concurrently (a sequential scope). HostAtomic: `#pragma omp
  /// atomic` on a compound assignment. HostCas: a compare-and-swap loop (sdfc::rt::atomic_update).
  /// HostCritical: an OpenMP critical section (complex lambdas, which have no atomic form).
  /// DeviceAdd: sdfc::gpu::atomic_add. DeviceCas: a device compare-and-swap loop
  /// (sdfc::gpu::atomic_update). Complex sums add their two parts, each atomically.
  enum class Form { Plain, HostAtomic, HostCas, HostCritical, DeviceAdd, DeviceCas };
  Op op = Op::Lambda;
  Form form = Form::Plain;
  std::string a, b;  ///< the lambda's parameters
  Expr body;         ///< the lambda's body (null for a struct lambda: `struct_body`)
  /// A lambda over struct values (DaCe's argmin/argmax: `S(val=min(x.val, y.val), idx=...)`): its
  /// body as C++, translated by the Python translator with `a` and `b` of the struct type; "" for
  /// scalars (printed from `body`). Its forms are Plain and HostCritical.
  std::string struct_body;
  /// A dynamic tasklet output bound by value, which the tasklet may leave unassigned (DaCe's GPU
  /// reductions assign under a condition): the value it starts with, the identity of `op` as C++
  /// text, so that an unassigned output resolves to what is already there; "" otherwise.
  std::string identity;
};
const char* to_string(WcrLowering::Op op);
const char* to_string(WcrLowering::Form form);

/// A dataflow edge between two nodes of a state.
struct DataEdge {
  int src = -1, dst = -1;
  std::optional<std::string> src_conn, dst_conn;
  Memlet memlet;
  int stream = -1;               ///< stream-assignment: the stream of a copy that involves GPU memory
  std::vector<int> wait_events;  ///< synchronization: events its stream waits for before the copy
  int record_event = -1;         ///< synchronization: event recorded on its stream after the copy
  /// lower-wcr: set on every edge with a write-conflict resolution that the code generator prints
  /// as a write (tasklet outputs and copies).
  std::optional<WcrLowering> wcr_lowering;
  /// The edge's index in the file once a pass renumbered its state's edges; -1: its position.
  int file_id = -1;
};

/// Whether `conn`, an in-connector of a map entry, is a dynamic range input (DaCe's rule: every
/// connector not named IN_*): a symbol inside the map whose value its memlet reads at the map.
inline bool is_dynamic_range_input(const std::string& conn) {
  return conn.rfind("IN_", 0) != 0;
}

/// A dynamic range input of a map: its connector (a symbol inside the map), its type (the
/// connector's, else its data's) and the memlet that reads its value.
struct DynamicRangeInput {
  std::string name;
  DType type;
  const DataEdge* edge;
};

/// Code of control flow (an interstate edge's condition or one of its assignments, a loop's init,
/// condition or update, a branch's condition) as C++, translated once by the
/// translate-python pass. In `cpp`, `control_read_name(N)` stands for element
/// `reads[N].index` of container `reads[N].data`: the code generator prints it as that container
/// is reached where the code runs (a local value, a scalar's pointer, an array). An index may hold
/// reads of lower numbers. Empty `cpp`: not translated (an unconditional edge's condition, an
/// `else`, a loop without that statement).
struct ControlCode {
  struct Read {
    std::string data;
    std::vector<Expr> index;  ///< one per dimension of `data` (zeros for a scalar)
  };
  std::string cpp;
  std::vector<Read> reads;
  bool translated() const { return !cpp.empty(); }
};

/// The name that stands for read `n` in ControlCode::cpp: `__sdfc_read<n>__`.
std::string control_read_name(std::size_t n);
/// `code.cpp` with every read replaced by `print(read)`, the last first (so that the reads inside
/// an index are replaced too).
std::string with_reads(const ControlCode& code, const std::function<std::string(const ControlCode::Read&)>& print);

/// A control-flow edge with its condition (Python) and symbol assignments (in file order).
struct InterstateEdge {
  int src = -1, dst = -1;
  CodeBlock condition{"1", Language::Python};
  std::vector<std::pair<std::string, std::string>> assignments;
  Json extra = Json::object();
  std::vector<int> host_waits;  ///< synchronization: streams the host waits for before the condition
  /// translate-python: the condition as a C++ bool (unless unconditional), and each
  /// assignment as the C++ expression `name = value`, in the order of `assignments`
  ControlCode cpp_condition;
  std::vector<ControlCode> cpp_assignments;
  bool unconditional() const;
};

enum class BlockKind { State, Region, Loop, Conditional, Break, Continue, Return };

struct Region;

/// A control-flow block. States hold dataflow; regions hold blocks; conditionals hold branches.
struct Block {
  BlockKind kind;
  std::string label;
  std::string type_name;  ///< DaCe's type: "SDFGState", "LoopRegion", "ControlFlowRegion", ...
  Json extra = Json::object();

  // State
  std::vector<std::unique_ptr<Node>> nodes;
  std::vector<DataEdge> edges;

  // Region and Loop (and the SDFG's root region)
  std::vector<std::unique_ptr<Block>> blocks;
  std::vector<InterstateEdge> cf_edges;
  int start_block = 0;

  // Loop
  std::string loop_variable;
  std::optional<CodeBlock> init_statement, update_statement;
  CodeBlock loop_condition;
  bool inverted = false;
  bool update_before_condition = true;

  /// gpu-graph (a conditional branch's body): the body does host work a replay would skip; a call
  /// that enters it while capturing abandons the capture and runs without a graph
  bool graph_host_work = false;
  /// gpu-graph (blocks of the root's control-flow tree, graph segments): this block's GPU work is
  /// captured once as a graph and replayed while the values named in graph_key (arguments,
  /// symbols, the root's host scalars and per-call pointers) stay the same; -1: not a segment
  int graph_segment = -1;
  std::vector<std::string> graph_key;
  /// synchronization: streams the host waits for before evaluating this block's conditions (a
  /// conditional's branch conditions; a loop's condition, before every evaluation)
  std::vector<int> host_waits;
  /// synchronization (several streams): a state forks the streams other than 0 that its chain of
  /// states first uses in it from stream 0 at its start (fork_event recorded on 0, each of
  /// fork_streams waits for it); the chain's last state joins the chain's streams into stream 0 at
  /// its end (each (stream, event): recorded there, waited for by 0). A state in the middle of a
  /// chain has no join: its streams' work carries into the next state.
  int fork_event = -1;
  std::vector<int> fork_streams;
  std::vector<std::pair<int, int>> join_events;

  // Conditional: (condition or nullopt for `else`, body region)
  std::vector<std::pair<std::optional<CodeBlock>, std::unique_ptr<Block>>> branches;

  /// translate-python: a loop's init and update as C++ assignments (`i = 0`), its condition
  /// as a C++ bool; a conditional's branch conditions as C++ bools, one per branch (an `else`'s
  /// is empty)
  ControlCode cpp_init, cpp_condition, cpp_update;
  std::vector<ControlCode> cpp_branch_conditions;

  explicit Block(BlockKind k) : kind(k) {}
  bool is_region() const { return kind == BlockKind::Region || kind == BlockKind::Loop; }
  Node& node(int id) { return *nodes.at(static_cast<std::size_t>(id)); }
  const Node& node(int id) const { return *nodes.at(static_cast<std::size_t>(id)); }
};

/// A whole SDFG (the root, or one nested in a NestedSDFG node).
struct SDFG {
  std::string name;
  std::vector<std::pair<std::string, DataDesc>> arrays;  ///< in file order
  std::vector<std::pair<std::string, DType>> symbols;    ///< in file order
  /// Symbols of DaCe's `callback` dtype, in file order (not in `symbols`: they hold functions).
  std::vector<std::pair<std::string, Callback>> callbacks;
  std::vector<std::string> arg_names;
  /// SDFG-level code for DaCe's location "frame" (the program's own code)...
  CodeBlock global_code{"", Language::CPP}, init_code{"", Language::CPP}, exit_code{"", Language::CPP};
  /// ... and for the target locations "cpu", "cuda" (the GPU target: CUDA and HIP builds, as DaCe's
  /// GPU target serves both) and "hip" (HIP builds), in file order; empty code is not kept.
  std::vector<std::pair<std::string, CodeBlock>> target_global_code, target_init_code, target_exit_code;
  Block root{BlockKind::Region};      ///< the SDFG's own control-flow region
  std::string dace_version;           ///< root only ("" in nested SDFGs)
  Json extra = Json::object();        ///< unmodelled SDFG attributes
  Json top_extra = Json::object();    ///< unmodelled top-level keys (source_files, ...)
  bool gpu_exit_sync = false;         ///< synchronization: the return orders after all GPU work (root only)
  std::vector<Workspace> workspaces;  ///< workspace-layout (root only), ordered by storage
  /// workspace-layout (root, GPU targets): the per-call arena of GPU_Global transients allocated
  /// once per call (members empty: none); allocated at the call's start, freed at its end.
  Workspace arena;
  int num_events = 0;  ///< synchronization: events the program uses (root only)
  /// expand-library-nodes (root): the vendor libraries the program's library calls need ("cblas",
  /// "cublas"); the code generator includes their headers and the build links them.
  std::set<std::string> libraries;
  /// host-environment (root): the standard headers the generated host source includes, in
  /// lang/CppEnvironment.h's order: the few sdfc's own code needs, and those the program's C++ code
  /// and complex numbers need (DaCe's whole environment where that cannot be told). Empty: not
  /// decided (IR that did not run the pipeline), printed as the whole environment.
  std::vector<std::string> std_includes;
  /// external-sync (root, GPU targets): the program's entry and exit steps. At entry the caller's
  /// stream (or the default stream) waits for the previous call when the caller's stream changed,
  /// and each of `sync_streams` waits for the caller's stream; at exit the caller's stream waits
  /// for each of `sync_streams`, records the cross-call event with an external stream, or the host
  /// waits for it without one. `sync_streams`: the internal streams the program uses (empty with
  /// --gpu-streams 0, where all work runs on the caller's stream itself).
  bool external_sync = false;
  /// gpu-graph (root, --gpu-graph): the call's GPU work is captured once as a graph and replayed
  /// while the arguments stay the same (the pass checked that the host code only queues GPU work).
  bool gpu_graph = false;
  /// gpu-graph (root, --gpu-graph, when the whole call cannot be one graph): the number of graph
  /// segments (Block::graph_segment); the rest of the call runs as without --gpu-graph, and event
  /// records and waits go through the runtime's capture-aware helpers
  int graph_segments = 0;
  std::vector<int> sync_streams;
  /// The pipeline (root): the passes that have run on this IR, in order (an IR file records them;
  /// `sdfc opt` and run_pipeline go on from the last).
  std::vector<std::string> passes_run;

  SDFG() { root.type_name = "SDFG"; }
  const DataDesc* find_data(const std::string& n) const;
  DataDesc* find_data(const std::string& n);
  std::optional<DType> symbol_type(const std::string& n) const;
  const Callback* find_callback(const std::string& n) const;
  /// The dialect of symbolic properties in this file (from dace_version).
  Dialect dialect() const;
};

/// An edge into a map entry's IN_ connector or out of a map exit's OUT_ connector: an inner node of
/// a memlet tree, whose leaves say what is accessed.
bool is_scope_passage(const Block& state, const DataEdge& e);

/// Removes edges `edges` of `state`; the others keep their file ids (DataEdge::file_id).
void remove_edges(Block& state, const std::set<std::size_t>& edges);
/// Removes nodes `nodes` of `state`, which no edge may touch; the others are renumbered (edges,
/// scope_entry, scope_exit) and keep their file ids (Node::file_id).
void remove_nodes(Block& state, const std::set<int>& nodes);

/// The block a region starts at, as DaCe decides it: the only block without incoming edges when
/// there is exactly one (whatever `start_block` says: DaCe's GPU transformation leaves stale
/// values), otherwise `start_block` (-1 when neither decides).
int start_of(const Block& region);

/// C-order strides and total size for a shape.
std::vector<Expr> c_order_strides(const std::vector<Expr>& shape);
Expr product(const std::vector<Expr>& shape);

/// The dynamic range inputs of map entry `entry` of `state` in `sdfg` (connectors with a memlet).
std::vector<DynamicRangeInput> dynamic_range_inputs(const SDFG& sdfg, const Block& state, int entry);

/// True when `version` (e.g. "2.0.0a6", "0.14.1") is 2.0.0a4 or newer.
bool version_uses_typed_symbols(const std::string& version);

}  // namespace sdfc
