// The C++ (CPU) code generator: the frame (state struct, DaCe's entry points, sdfc's hooks), control
// flow, maps, tasklets, copies and nested SDFGs. See Codegen.h.
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <unordered_map>

#include "analysis/GpuOps.h"
#include "codegen/CheckedSize.h"
#include "codegen/Codegen.h"
#include "ir/Diagnostic.h"
#include "ir/Dump.h"
#include "ir/Memlets.h"
#include "ir/Signature.h"
#include "lang/CodeWriter.h"
#include "lang/CppEnvironment.h"
#include "lang/PythonTasklet.h"
#include "passes/Legalize.h"

#ifndef SDFC_VERSION
#define SDFC_VERSION "0.0.0"
#endif

namespace sdfc {
namespace {

std::string ctype(DType t) {
  return std::string(dtype_ctype(t));
}

/// Points per thread along y in kernels of 2D and 3D maps (bench/GpuBench.cu measures 1, 2, 4, 8).
constexpr int kRowsPerThread = 4;

/// Write-conflict resolution, classified from DaCe's lambda text `(lambda a, b: (a + b))`.
struct Wcr {
  enum Kind { Sum, Product, Min, Max, General } kind = General;
  std::string a, b;
  Expr body;
};

std::optional<Wcr> parse_wcr(std::string text) {
  auto trim = [](std::string s) {
    s.erase(0, s.find_first_not_of(" \t"));
    s.erase(s.find_last_not_of(" \t") + 1);
    return s;
  };
  text = trim(text);
  while (text.size() > 2 && text.front() == '(' && text.back() == ')') text = trim(text.substr(1, text.size() - 2));
  if (text.rfind("lambda", 0) != 0) return std::nullopt;
  auto colon = text.find(':');
  if (colon == std::string::npos) return std::nullopt;
  std::string params = text.substr(6, colon - 6);
  auto comma = params.find(',');
  if (comma == std::string::npos) return std::nullopt;
  Wcr w;
  w.a = trim(params.substr(0, comma));
  w.b = trim(params.substr(comma + 1));
  try {
    w.body = parse_expr(text.substr(colon + 1));
  } catch (const ExprSyntaxError&) {
    return std::nullopt;
  }
  const ExprNode& e = *w.body;
  auto is_ab = [&](const std::vector<Expr>& args) {
    if (args.size() != 2 || args[0]->kind != ExprKind::Symbol || args[1]->kind != ExprKind::Symbol) return false;
    return (args[0]->name == w.a && args[1]->name == w.b) || (args[0]->name == w.b && args[1]->name == w.a);
  };
  if (e.kind == ExprKind::Binary && is_ab(e.args)) {
    if (e.op == static_cast<int>(BinOp::Add)) w.kind = Wcr::Sum;
    if (e.op == static_cast<int>(BinOp::Mul)) w.kind = Wcr::Product;
  }
  if (e.kind == ExprKind::Call && is_ab(e.args)) {
    if (e.name == "max" || e.name == "Max") w.kind = Wcr::Max;
    if (e.name == "min" || e.name == "Min") w.kind = Wcr::Min;
  }
  return w;
}

/// How generated code reaches a container: through a pointer variable, or as a local value.
enum class Access { Pointer, Value };

/// Emission context of one SDFG function body (the program itself, or a nested SDFG).
struct Ctx {
  const SDFG* sdfg = nullptr;
  std::string ptr;  ///< JSON pointer of this SDFG in the input file
  bool root = false;
  bool parallel = false;   ///< the body runs inside a parallel (OpenMP) map: WCR must be atomic
  int loop_depth = 0;      ///< enclosing LoopRegions (break/continue need one)
  bool in_kernel = false;  ///< emitting device code (a GPU kernel body)
  int block_kernel = -1;   ///< the kernel's map entry when its GPU_ThreadBlock maps run as the block's threads
  std::map<std::string, Access> access;
  std::set<std::string> declared_symbols;
  std::map<std::string, std::pair<const Block*, int>> scope_local;  ///< transient -> (state, map entry)
  std::map<std::string, const Block*> state_local;                  ///< deferred allocation: transient -> state
  std::set<std::string> counted;  ///< transients whose element count the body computed first (__sdfc_count_<name>)
  int labels = 0;
  bool exit_used = false;
  std::unordered_map<std::string, const DataDesc*> data_index;  ///< name lookups stay O(1) in big files

  const DataDesc* data(const std::string& name) const {
    auto it = data_index.find(name);
    return it == data_index.end() ? nullptr : it->second;
  }
  void index_data() {
    for (auto& [n, d] : sdfg->arrays) data_index.emplace(n, &d);
  }
};

/// Edges of one state by endpoint, so that lookups per node do not scan every edge.
struct Adjacency {
  std::vector<std::vector<const DataEdge*>> in, out;
  std::map<int, std::vector<int>> children;  ///< scope entry (-1: the state) -> nodes directly in it, exits excluded
  explicit Adjacency(const Block& st) : in(st.nodes.size()), out(st.nodes.size()) {
    for (int i = 0; i < static_cast<int>(st.nodes.size()); ++i)
      if (st.node(i).kind != NodeKind::MapExit) children[st.node(i).scope_entry].push_back(i);
    for (auto& e : st.edges) {
      if (e.src >= 0 && e.src < static_cast<int>(st.nodes.size())) out[static_cast<std::size_t>(e.src)].push_back(&e);
      if (e.dst >= 0 && e.dst < static_cast<int>(st.nodes.size())) in[static_cast<std::size_t>(e.dst)].push_back(&e);
    }
  }
};

class Generator {
 public:
  Generator(const SDFG& sdfg, const CompileOptions& options, std::string file)
      : root_(sdfg), options_(options), file_(std::move(file)), name_(sdfg.name), gpu_(options.target != Target::CPU) {}

  GeneratedProgram run();

 private:
  const SDFG& root_;
  const CompileOptions& options_;
  std::string file_;
  std::string name_;
  bool gpu_;                          // CUDA or HIP: kernels, GPU memory, the GPU context
  std::vector<std::string> kernels_;  // __global__ functions
  bool uses_pool_ = false;
  bool in_kernel_ = false;            // emitting a kernel body (device atomics)
  std::vector<std::string> globals_;  // code_global blocks, deduplicated, in order
  // Nested SDFG functions: device functions (called from kernels) precede the kernels, host
  // functions (which may launch kernels) follow them. Inner functions come before outer ones.
  std::vector<std::string> device_functions_, functions_;
  std::vector<std::string> init_codes_, exit_codes_;  // init_code / exit_code of nested SDFGs
  int nested_counter_ = 0;
  std::vector<const SDFG*> nested_sdfgs_;  // nested SDFGs emitted, for their target-located code
  std::vector<const SDFG*> all_sdfgs() const {
    std::vector<const SDFG*> out{&root_};
    out.insert(out.end(), nested_sdfgs_.begin(), nested_sdfgs_.end());
    return out;
  }
  std::map<const Block*, Adjacency> adjacency_;
  /// The completeness ledger of each state being emitted: how often each node and edge was
  /// lowered (see `begin_state` / `end_state`).
  struct Ledger {
    std::string ptr;
    std::vector<int> nodes, edges;
  };
  std::map<const Block*, Ledger> ledger_;

  // ---- completeness ---------------------------------------------------------------------------
  // Every node and edge of every emitted state is lowered exactly once, by the emitter of its kind
  // (edges: their EdgeRole, ir/Memlets.h). An edge is recorded with the role its emitter lowered
  // it as, which must be the role the IR gives it. What is left over, or lowered twice, is an
  // internal error naming the element: never a program with a part silently missing.

  void begin_state(const Block& st, const std::string& ptr) {
    for (std::size_t i = 0; i < st.edges.size(); ++i)
      SDFC_ASSERT(edge_role(st, st.edges[i]) != EdgeRole::Unsupported,
                  "edge role not legalized: " + ptr + "/edges/" + std::to_string(i));
    ledger_[&st] = Ledger{ptr, std::vector<int>(st.nodes.size(), 0), std::vector<int>(st.edges.size(), 0)};
  }
  void lowered(const Block& st, int node) { ++ledger_.at(&st).nodes.at(static_cast<std::size_t>(node)); }
  void lowered(const Block& st, const DataEdge& e, EdgeRole as) {
    std::size_t i = static_cast<std::size_t>(&e - st.edges.data());
    SDFC_ASSERT(edge_role(st, e) == as, fmt::format("{}: edge {} ({}) lowered as a {}", file_,
                                                    ledger_.at(&st).ptr + "/edges/" + std::to_string(i),
                                                    to_string(edge_role(st, e)), to_string(as)));
    ++ledger_.at(&st).edges.at(i);
  }
  void end_state(const Block& st) {
    const Ledger& l = ledger_.at(&st);
    for (std::size_t i = 0; i < l.nodes.size(); ++i)
      if (l.nodes[i] != 1)
        SDFC_ASSERT(
            false, fmt::format("{}: {}/nodes/{} ({} \"{}\") was lowered {} times instead of once by the code generator",
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
  void lowered_ordering_into(const Block& st, int id) {
    for (const DataEdge* e : adj(st).in[static_cast<std::size_t>(id)])
      if (edge_role(st, *e) == EdgeRole::Ordering) lowered(st, *e, EdgeRole::Ordering);
  }

  const Adjacency& adj(const Block& st) {
    auto it = adjacency_.find(&st);
    if (it == adjacency_.end()) it = adjacency_.emplace(&st, Adjacency(st)).first;
    return it->second;
  }

  /// Whether SDFG-level code for DaCe's location `where` belongs in this build: "frame" and "cpu"
  /// always, "cuda" in CUDA and HIP builds (DaCe's GPU target serves both), "hip" in HIP builds.
  bool code_location_applies(const std::string& where) const {
    if (where == "cuda") return gpu_;
    if (where == "hip") return options_.target == Target::HIP;
    return true;
  }
  /// Emits each applicable target block of `targets` whose location is in `locations`.
  void emit_located(const SDFG& sdfg, const std::vector<std::pair<std::string, CodeBlock>>& targets,
                    const std::vector<std::string>& locations, const char* kind, CodeWriter& w, bool block) {
    for (auto& where : locations)
      for (auto& [loc, c] : targets) {
        if (loc != where || !code_location_applies(loc)) continue;
        if (block) w.open("");
        w.line(fmt::format("// {}[{}] of SDFG \"{}\"", kind, loc, sdfg.name));
        w.raw(c.code);
        if (block) w.close();
      }
  }

  [[noreturn]] void unsupported(const std::string& ptr, const std::string& what) const {
    throw UserError(Diagnostic{file_, ptr, 0, 0, what});
  }
  std::string state_type() const { return name_ + "_state_t"; }

  // ---- expressions ----------------------------------------------------------------------------

  std::string sym(const Expr& e) const { return print_cpp(simplify(e)); }

  /// `D[linear index]` (or the value name for a local scalar) for element `idx` of container `d`.
  std::string element(const Ctx& c, const std::string& d, const std::vector<Expr>& idx, const std::string& ptr) const {
    auto it = c.access.find(d);
    if (it != c.access.end() && it->second == Access::Value) return ident(d);
    const DataDesc* desc = c.data(d);
    if (!desc) unsupported(ptr, fmt::format("unknown data \"{}\"", d));
    if (desc->kind == DataKind::Scalar) return ident(d) + "[0]";
    if (idx.size() != desc->shape.size())
      unsupported(
          ptr, fmt::format("subset of \"{}\" has {} dimensions, the data has {}", d, idx.size(), desc->shape.size()));
    Expr lin = make_int(0);
    for (std::size_t k = 0; k < idx.size(); ++k)
      lin = make_binary(BinOp::Add, lin,
                        make_binary(BinOp::Mul, make_binary(BinOp::Add, idx[k], desc->offset[k]), desc->strides[k]));
    return fmt::format("{}[{}]", ident(d), sym(lin));
  }
  /// How a pointer connector bound to subset `r` of `d` indexes: element strides per dimension.
  std::string address(const Ctx& c, const std::string& d, const std::vector<Expr>& idx, const std::string& ptr) const {
    return "&" + element(c, d, idx, ptr);
  }
  static std::vector<Expr> starts(const Range& r) {
    std::vector<Expr> s;
    for (auto& d : r) s.push_back(d.start);
    return s;
  }
  static bool single_element(const Range& r) {
    for (auto& d : r)
      if (!equal(simplify(d.start), simplify(d.end))) return false;
    return true;
  }

  /// Python code of control flow (interstate conditions and assignments, loop conditions and
  /// statements) as C++, through the tasklets' typed translator (lang/PythonTasklet.h): data
  /// containers read become element accesses of their dtype, symbols keep theirs, and DaCe's
  /// sympy spellings (Max, Min, Abs, int_floor, int_ceil, Mod, ceiling) become Python's. With
  /// `condition`, the result is a C++ bool.
  std::string code_expr(const Ctx& c, const std::string& text, const std::string& ptr, bool condition = false,
                        const std::string& what = "") const {
    Expr e;
    try {
      e = parse_expr(text);
    } catch (const ExprSyntaxError& err) {
      unsupported(ptr, fmt::format("malformed expression \"{}\": {}", text, err.what()));
    }
    TaskletScope scope;
    for (auto& [s, t] : c.sdfg->symbols) scope.symbols[ident(s)] = t;
    for (auto& s : assigned_symbols(*c.sdfg))
      if (!scope.symbols.count(ident(s))) scope.symbols[ident(s)] = DType::Int64;  // loop variables
    std::function<Expr(const Expr&)> rewrite = [&](const Expr& x) -> Expr {
      auto read = [&](const std::string& name, const std::vector<Expr>& idx) {
        std::string access = element(c, name, idx, ptr);
        scope.symbols[access] = c.data(name)->dtype;
        return make_symbol(access);
      };
      if (x->kind == ExprKind::Subscript && c.data(x->name)) {
        std::vector<Expr> idx;
        for (auto& a : x->args) idx.push_back(rewrite(a));
        return read(x->name, idx);
      }
      if (x->kind == ExprKind::Symbol && c.data(x->name))
        return read(x->name, std::vector<Expr>(c.data(x->name)->shape.size(), make_int(0)));
      if (x->kind == ExprKind::Symbol) {
        std::string id = ident(x->name);
        // a symbol the SDFG does not declare (validation checked it is defined): an integer
        if (!scope.symbols.count(id) && x->name.find('.') == std::string::npos) scope.symbols[id] = DType::Int64;
        return make_symbol(id);
      }
      if (x->args.empty()) return x;
      ExprNode n = *x;
      for (auto& a : n.args) a = rewrite(a);
      if (n.kind == ExprKind::Call && n.args.size() == 2 && n.kwnames.empty()) {
        if (n.name == "int_floor") return make_binary(BinOp::FloorDiv, n.args[0], n.args[1]);
        if (n.name == "Mod") return make_binary(BinOp::Mod, n.args[0], n.args[1]);
        if (n.name == "int_ceil")
          return make_unary(UnaryOp::Neg, make_binary(BinOp::FloorDiv, make_unary(UnaryOp::Neg, n.args[0]), n.args[1]));
      }
      static const std::map<std::string, std::string> sympy = {
          {"Max", "max"}, {"Min", "min"}, {"Abs", "abs"}, {"ceiling", "ceil"}};
      if (auto it = sympy.find(n.name); n.kind == ExprKind::Call && it != sympy.end()) n.name = it->second;
      return make_node(std::move(n));
    };
    Expr rewritten = rewrite(e);
    return translate_python_expression(rewritten, scope, file_, ptr, what.empty() ? fmt::format("\"{}\"", text) : what,
                                       condition)
        .text;
  }

  std::string assignment(const Ctx& c, const std::string& code, const std::string& ptr) const {
    std::string lhs, rhs;
    if (!split_assignment(code, lhs, rhs))
      unsupported(ptr, fmt::format("expected an assignment 'name = expression' but found \"{}\"", code));
    if (!is_identifier(lhs) && !c.data(lhs)) unsupported(ptr, fmt::format("cannot assign to \"{}\"", lhs));
    return fmt::format("{} = {};", ident(lhs), code_expr(c, rhs, ptr));
  }

  // ---- GPU helpers ---------------------------------------------------------------------------

  static constexpr const char* kCtx = "__state->__sdfc_gpu";
  static std::string gpu_stream(int s) { return fmt::format("sdfc::gpu::stream({}, {})", kCtx, s); }
  static std::string gpu_check(const std::string& call) { return fmt::format("SDFC_GPU_CHECK({}, {});", kCtx, call); }

  /// Prints the host waits a pass decided (one stream synchronization per stream).
  void host_waits(const std::vector<int>& streams, CodeWriter& w) const {
    for (int s : streams)
      w.line(gpu_check(fmt::format("sdfc::gpu::gpuStreamSynchronize({})", gpu_stream(s))) +
             "  // synchronization pass: host waits");
  }

  /// Prints the events the synchronization pass decided: `stream` waits for `events` first.
  void stream_waits(int stream, const std::vector<int>& events, CodeWriter& w) const {
    for (int e : events)
      w.line(gpu_check(fmt::format("sdfc::gpu::gpuStreamWaitEvent({}, sdfc::gpu::event({}, {}))", gpu_stream(stream),
                                   kCtx, e)) +
             "  // synchronization pass: event");
  }
  /// ... and `stream` records `event` after the operation (nothing when -1).
  void stream_record(int stream, int event, CodeWriter& w) const {
    if (event < 0) return;
    w.line(gpu_check(fmt::format("sdfc::gpu::gpuEventRecord(sdfc::gpu::event({}, {}), {})", kCtx, event,
                                 gpu_stream(stream))) +
           "  // synchronization pass: event");
  }

  // ---- SDFG bodies ----------------------------------------------------------------------------

  /// Finds where each transient lives: in one map scope, in one state, or the whole SDFG.
  /// Where transients live, as the transient-lifetimes pass placed them.
  static void read_placement(Ctx& c) {
    for (auto& [name, d] : c.sdfg->arrays) {
      if (d.place == DataDesc::Place::MapScope) c.scope_local[name] = {d.place_state, d.place_scope};
      if (d.place == DataDesc::Place::State) c.state_local[name] = d.place_state;
    }
  }

  /// The element count of transient `name` as C++ text: checked (codegen/CheckedSize.h), or the
  /// local that emit_sdfg_body computed for it before any allocation.
  std::string count_of(const Ctx& c, const std::string& name, const DataDesc& d) const {
    if (c.counted.count(name)) return "__sdfc_count_" + ident(name);
    return checked_count("transient " + name, d.total_size, fmt::format("sizeof({})", ctype(d.dtype)));
  }
  std::string alloc_line(const Ctx& c, const std::string& name, const DataDesc& d) const {
    return fmt::format("{}* {} = new {}[{}];", ctype(d.dtype), ident(name), ctype(d.dtype), count_of(c, name, d));
  }

  void emit_sdfg_body(Ctx& c, CodeWriter& w) {
    read_placement(c);
    for (auto& s : assigned_symbols(*c.sdfg)) {
      if (c.declared_symbols.count(s)) continue;
      auto t = c.sdfg->symbol_type(s);
      w.line(fmt::format("{} {} = 0;  // symbol assigned by the program", t ? ctype(*t) : "int64_t", ident(s)));
      c.declared_symbols.insert(s);
    }
    std::vector<std::string> frees;
    const Workspace& arena = c.sdfg->arena;
    bool use_arena = gpu_ && c.root && !arena.members.empty();
    // The sizes of what this body allocates, all computed and checked before the first allocation
    // (a refused size leaves nothing allocated).
    for (auto& [name, d] : c.sdfg->arrays) {
      if (!d.transient || c.scope_local.count(name) || c.state_local.count(name)) continue;
      if ((use_arena && d.arena_offset) || d.lifetime == Lifetime::Persistent || d.lifetime == Lifetime::External)
        continue;
      bool device = gpu_ && (is_gpu_storage(d.storage) || d.storage == StorageType::CPU_Pinned);
      if ((!device && d.kind == DataKind::Scalar) || as_constant(d.total_size)) continue;
      w.line(fmt::format("const std::size_t __sdfc_count_{} = {};", ident(name), count_of(c, name, d)));
      c.counted.insert(name);
    }
    if (use_arena) {
      w.line(fmt::format(
          "// workspace-layout: one allocation per call holds {} GPU transient(s): {} bytes ({} without sharing)",
          arena.members.size(), print_expr(arena.bytes), print_expr(arena.unshared_bytes)));
      std::string bytes = checked_count("the call's arena of GPU transients", arena.bytes, "1");
      if (arena.stream_ordered) {
        uses_pool_ = true;
        w.line("char* __arena = nullptr; " +
               gpu_check(fmt::format("sdfc::gpu::gpuMallocAsync(&__arena, {}, {})", bytes, gpu_stream(0))) +
               "  // from the stream-ordered pool");
      } else {
        w.line("char* __arena = nullptr; " +
               gpu_check(fmt::format("sdfc::gpu::gpuMalloc(&__arena, std::max<std::size_t>(1, {}))", bytes)));
      }
      w.line("auto __sdfc_unwind_arena = sdfc::rt::on_unwind([&] { " + arena_free() + " });");
    }
    for (auto& [name, d] : c.sdfg->arrays) {
      if (!d.transient || c.scope_local.count(name) || c.state_local.count(name)) continue;
      std::string dp = c.ptr + "/attributes/_arrays/" + pointer_token(name);
      if (use_arena && d.arena_offset) {
        w.line(fmt::format("{0}* {1} = reinterpret_cast<{0}*>(__arena + {2});  // transient in the call's arena",
                           ctype(d.dtype), ident(name), wide_size(d.arena_offset)));
        continue;
      }
      if (d.lifetime == Lifetime::Persistent || d.lifetime == Lifetime::External) {
        SDFC_ASSERT(c.root, "nested Persistent/External transient not legalized: " + dp);
        w.line(fmt::format("{}* {} = __state->__0_{};  // {}", ctype(d.dtype), ident(name), ident(name),
                           to_string(d.lifetime)));
        continue;
      }
      if (gpu_ && (is_gpu_storage(d.storage) || d.storage == StorageType::CPU_Pinned)) {
        w.line(gpu_alloc_line(c, name, d));
        w.line(unwind_line(name, d));
        frees.push_back(name);
        continue;
      }
      if (d.kind == DataKind::Scalar) {
        w.line(fmt::format("{} {} = {}();  // transient scalar", ctype(d.dtype), ident(name), ctype(d.dtype)));
        c.access[name] = Access::Value;
        continue;
      }
      w.line(alloc_line(c, name, d) + fmt::format("  // transient, lifetime {}", to_string(d.lifetime)));
      w.line(unwind_line(name, d));
      frees.push_back(name);
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
    if (use_arena) w.line(arena_free());
  }

  /// The call of `__program_<name>_internal` with the exceptions it may end in recorded as the
  /// call's error; `capture` (graph mode, capturing): also CaptureAbandoned, and __failed is set.
  void emit_call_internal(const std::vector<std::string>& call_args, bool capture, CodeWriter& w) const {
    w.open("try");
    w.line(fmt::format("__program_{}_internal(__state{});", name_,
                       call_args.empty() ? "" : ", " + fmt::format("{}", fmt::join(call_args, ", "))));
    w.close();
    if (capture) {
      w.open("catch (const sdfc::gpu::CaptureAbandoned&)");
      w.line("__abandoned = true;");
      w.close();
    }
    std::string failed = capture ? "__failed = true; " : "";
    w.open("catch (const sdfc::rt::SizeError& e)");
    w.line(fmt::format("{}sdfc::rt::record_error(__state->__sdfc_error, \"{}: %s\", e.what());", failed, name_));
    w.close();
    w.open("catch (const std::bad_alloc&)");
    w.line(fmt::format(
        "{}sdfc::rt::record_error(__state->__sdfc_error, \"{}: out of memory while allocating transients\");", failed,
        name_));
    w.close();
    w.open("catch (...)");
    w.line(fmt::format(
        "{}sdfc::rt::record_error(__state->__sdfc_error, \"{}: a C++ exception escaped from tasklet code\");", failed,
        name_));
    w.close();
  }

  std::string arena_free() const {
    return gpu_check(root_.arena.stream_ordered ? fmt::format("sdfc::gpu::gpuFreeAsync(__arena, {})", gpu_stream(0))
                                                : std::string("sdfc::gpu::gpuFree(__arena)"));
  }

  /// Whether `e` multiplies (or raises to a power): where symbols of a 32-bit C type overflow
  /// long before the sizes they describe do (`8 * N` bytes at N = 2^28).
  static bool has_product(const Expr& e) {
    if (e->kind == ExprKind::Binary) {
      auto op = static_cast<BinOp>(e->op);
      if (op == BinOp::Pow || op == BinOp::LShift || op == BinOp::Mul) return true;
    }
    for (auto& a : e->args)
      if (has_product(a)) return true;
    return false;
  }

  /// `e` (a size or offset in bytes) evaluated in 64 bits whatever the symbols' C types: a
  /// lambda whose int64 parameters shadow the symbols, called with them (plain when `e` has no
  /// product of symbols).
  std::string wide_size(const Expr& e) const {
    std::set<std::string> names;
    free_symbols(e, names);
    if (names.empty() || !has_product(simplify(e))) return fmt::format("static_cast<std::size_t>({})", sym(e));
    std::vector<std::string> params, args;
    for (auto& n : names) {
      params.push_back("std::int64_t " + ident(n));
      args.push_back(ident(n));
    }
    return fmt::format("[]({}) {{ return static_cast<std::size_t>({}); }}({})", fmt::join(params, ", "), sym(e),
                       fmt::join(args, ", "));
  }

  std::string gpu_alloc_line(const Ctx& c, const std::string& name, const DataDesc& d) {
    std::string bytes = fmt::format("{} * sizeof({})", count_of(c, name, d), ctype(d.dtype));
    std::string decl = fmt::format("{}* {} = nullptr;", ctype(d.dtype), ident(name));
    if (d.storage == StorageType::CPU_Pinned)
      return decl + " " + gpu_check(fmt::format("sdfc::gpu::gpuHostAlloc(&{}, {})", ident(name), bytes)) +
             "  // pinned host memory";
    if (d.pool) {
      uses_pool_ = true;
      return decl + " " +
             gpu_check(fmt::format("sdfc::gpu::gpuMallocAsync(&{}, {}, {})", ident(name), bytes, gpu_stream(0))) +
             "  // pool";
    }
    return decl + " " + gpu_check(fmt::format("sdfc::gpu::gpuMalloc(&{}, {})", ident(name), bytes));
  }
  /// After an allocation: the release if an exception leaves the scope before its free line.
  std::string unwind_line(const std::string& name, const DataDesc& d) const {
    return fmt::format("auto __sdfc_unwind_{} = sdfc::rt::on_unwind([&] {{ {} }});", ident(name), free_line(name, d));
  }
  std::string free_line(const std::string& name, const DataDesc& d) const {
    if (!gpu_ || !(is_gpu_storage(d.storage) || d.storage == StorageType::CPU_Pinned))
      return fmt::format("delete[] {};", ident(name));
    if (d.storage == StorageType::CPU_Pinned) return gpu_check(fmt::format("sdfc::gpu::gpuFreeHost({})", ident(name)));
    if (d.pool) return gpu_check(fmt::format("sdfc::gpu::gpuFreeAsync({}, {})", ident(name), gpu_stream(0)));
    return gpu_check(fmt::format("sdfc::gpu::gpuFree({})", ident(name)));
  }

  // ---- control flow ---------------------------------------------------------------------------

  void emit_region(Ctx& c, const Block& r, const std::string& ptr, CodeWriter& w) {
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
      emit_block(c, blk, ptr + "/nodes/" + std::to_string(b), w);
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
        w.open(fmt::format("if ({})",
                           code_expr(c, e->condition.code, ep + "/attributes/data/attributes/condition", true)));
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

  void emit_assignments(Ctx& c, const InterstateEdge& e, const std::string& region_ptr, CodeWriter& w) {
    for (auto& [k, v] : e.assignments)
      w.line(fmt::format("{} = {};", ident(k), code_expr(c, v, region_ptr + "/edges")));
  }

  void emit_block(Ctx& c, const Block& b, const std::string& ptr, CodeWriter& w) {
    switch (b.kind) {
      case BlockKind::State: {
        w.open("");
        w.line(fmt::format("// state \"{}\" ({})", b.label, ptr));
        std::vector<std::string> frees;
        for (auto& [name, st] : c.state_local)
          if (st == &b) {
            w.line((gpu_ && is_gpu_storage(c.data(name)->storage) ? gpu_alloc_line(c, name, *c.data(name))
                                                                  : alloc_line(c, name, *c.data(name))) +
                   "  // transient, allocated where its size is known");
            w.line(unwind_line(name, *c.data(name)));
            frees.push_back(name);
          }
        if (b.fork_event >= 0) {  // synchronization pass: the state's streams start after stream 0's work
          stream_record(0, b.fork_event, w);
          for (int s : b.fork_streams) stream_waits(s, {b.fork_event}, w);
        }
        begin_state(b, ptr);
        emit_scope(c, b, ptr, -1, w, c.parallel);
        end_state(b);
        for (auto& [s, e] : b.join_events) {  // ... and stream 0 continues after theirs
          stream_record(s, e, w);
          stream_waits(0, {e}, w);
        }
        for (auto& f : frees) w.line(free_line(f, *c.data(f)));
        w.close();
        break;
      }
      case BlockKind::Region:
        w.line(fmt::format("// region \"{}\" ({})", b.label, ptr));
        emit_region(c, b, ptr, w);
        break;
      case BlockKind::Loop: {
        std::string ap = ptr + "/attributes";
        std::string init = b.init_statement ? assignment(c, b.init_statement->code, ap + "/init_statement") : "";
        std::string cond = code_expr(c, b.loop_condition.code, ap + "/loop_condition", true);
        for (int st : b.host_waits)  // the synchronization pass: wait before every evaluation
          cond =
              fmt::format("(SDFC_GPU_CHECK({}, sdfc::gpu::gpuStreamSynchronize({})), {})", kCtx, gpu_stream(st), cond);
        std::string update =
            b.update_statement ? assignment(c, b.update_statement->code, ap + "/update_statement") : "";
        if (!update.empty()) update.pop_back();  // no ';' in a for header
        w.line(fmt::format("// loop \"{}\" ({})", b.label, ptr));
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
        break;
      }
      case BlockKind::Conditional: {
        w.line(fmt::format("// conditional \"{}\" ({})", b.label, ptr));
        host_waits(b.host_waits, w);
        for (std::size_t i = 0; i < b.branches.size(); ++i) {
          auto& [cond, body] = b.branches[i];
          std::string bp = ptr + "/branches/" + std::to_string(i);
          if (cond) {
            std::string head = fmt::format("if ({})", code_expr(c, cond->code, bp + "/0", true));
            w.open(i == 0 ? head : "else " + head);
          } else {
            w.open("else");
          }
          if (body->graph_host_work)  // gpu-graph: host work a replay would skip
            w.line(fmt::format("sdfc::gpu::abandon_capture_here({});  // gpu-graph: this branch does host work", kCtx));
          emit_region(c, *body, bp + "/1", w);
          w.close();
        }
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

  // ---- dataflow -------------------------------------------------------------------------------

  void emit_scope(Ctx& c, const Block& st, const std::string& ptr, int scope, CodeWriter& w, bool parallel) {
    // Transients that live only in this scope are declared here.
    for (auto& [name, where] : c.scope_local) {
      if (where.first != &st || where.second != scope) continue;
      const DataDesc& d = *c.data(name);
      if (d.kind == DataKind::Scalar || as_constant(d.total_size) == 1) {
        w.line(fmt::format("{} {};  // transient local to the scope", ctype(d.dtype), ident(name)));
        c.access[name] = Access::Value;
      } else {
        auto size = as_constant(d.total_size);
        if (!size)
          unsupported(c.ptr + "/attributes/_arrays/" + pointer_token(name),
                      fmt::format("transient \"{}\" inside a map scope needs a constant size", name));
        bool shared = c.block_kernel >= 0 && scope == c.block_kernel && d.storage == StorageType::GPU_Shared;
        w.line(fmt::format("{}{} {}[{}];  // transient local to the {}", shared ? "__shared__ " : "", ctype(d.dtype),
                           ident(name), *size, shared ? "block (GPU_Shared)" : "scope"));
      }
    }
    // The issue order the passes reasoned about (analysis/GpuOps.h: one definition for both).
    for (int v : scope_order(st, scope)) emit_node(c, st, ptr, v, w, parallel);
  }

  void emit_node(Ctx& c, const Block& st, const std::string& ptr, int id, CodeWriter& w, bool parallel) {
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
            emit_copy(c, st, *e, ptr + "/edges/" + std::to_string(e - st.edges.data()), w, parallel);
            lowered(st, *e, EdgeRole::ScopeCopyIn);
          }
        for (const DataEdge* e : adj(st).out[static_cast<std::size_t>(id)]) {
          EdgeRole role = edge_role(st, *e);
          if (role != EdgeRole::Copy && role != EdgeRole::ScopeCopyOut) continue;
          emit_copy(c, st, *e, ptr + "/edges/" + std::to_string(e - st.edges.data()), w, parallel);
          lowered(st, *e, role);
        }
        break;
      case NodeKind::MapEntry:
        emit_map(c, st, ptr, id, w, parallel);
        break;
      case NodeKind::Tasklet:
        if (n.stream >= 0 && !c.in_kernel) {  // a GPU library call: on its stream, ordered as a kernel
          stream_waits(n.stream, n.wait_events, w);
          w.line(fmt::format("sdfc::gpu::maybe_delay({}, {});", kCtx, gpu_stream(n.stream)));
        }
        emit_tasklet(c, st, ptr, id, w, parallel);
        if (n.stream >= 0 && !c.in_kernel) stream_record(n.stream, n.record_event, w);
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
  void lowered_scope(const Block& st, int entry) {
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

  void emit_map(Ctx& c, const Block& st, const std::string& ptr, int id, CodeWriter& w, bool parallel) {
    const Node& n = st.node(id);
    const MapInfo& m = n.map;
    std::string np = ptr + "/nodes/" + std::to_string(id);
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
        w.line(fmt::format("const int64_t {} = {} + static_cast<int64_t>(threadIdx.{}) * {};",
                           ident(m.params[d - 1 - k]), sym(r.start), axis[k], sym(r.step)));
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
    if (multicore && !parallel) w.line("#pragma omp parallel for");
    for (std::size_t k = 0; k < m.params.size(); ++k) {
      const RangeDim& r = m.range[k];
      auto step = as_constant(r.step);
      std::string p = ident(m.params[k]);
      std::string cmp = step && *step < 0 ? ">=" : "<=";
      std::string inc = step == 1 ? "++" + p : fmt::format("{} += {}", p, sym(r.step));
      w.open(fmt::format("for (int64_t {} = {}; {} {} {}; {})", p, sym(r.start), p, cmp, sym(r.end), inc));
    }
    emit_scope(c, st, ptr, id, w, parallel || multicore);
    for (std::size_t k = 0; k < m.params.size(); ++k) w.close();
    if (!dyn.empty()) w.close();
  }

  /// Node ids in the scope of map entry `entry` (its exit included), recursively.
  std::vector<int> scope_nodes(const Block& st, int entry) {
    std::vector<int> out{entry};
    for (std::size_t k = 0; k < out.size(); ++k) {
      int v = out[k];
      if (st.node(v).kind != NodeKind::MapEntry) continue;
      auto it = adj(st).children.find(v);
      if (it != adj(st).children.end()) out.insert(out.end(), it->second.begin(), it->second.end());
      if (st.node(v).scope_exit >= 0) out.push_back(st.node(v).scope_exit);
    }
    return out;
  }

  /// A kernel whose thread-block maps run as the block's threads: one block per point of the
  /// kernel map (its parameters from blockIdx), the block shape from the thread-block maps.
  void emit_block_kernel(Ctx& kc, const Block& st, const std::string& ptr, int id,
                         const std::vector<std::string>& params, const std::vector<std::string>& args,
                         const std::vector<int>& block, CodeWriter& w) {
    const Node& n = st.node(id);
    const MapInfo& m = n.map;
    std::string np = ptr + "/nodes/" + std::to_string(id);
    std::size_t dims = m.params.size();
    const char* axis[] = {"x", "y", "z"};
    int threads = block[0] * block[1] * block[2];
    std::string kname = fmt::format("{}_{}_kernel{}", ident(m.label), id, kernels_.size());
    CodeWriter kw;
    kw.line(fmt::format(
        "// GPU kernel of map {}[{}] ({}): one block per point, its GPU_ThreadBlock maps on the block's threads",
        m.label, range_str(m.range), np));
    kw.open(fmt::format("__global__ void __launch_bounds__({}) {}({})", threads, kname, fmt::join(params, ", ")));
    for (std::size_t k = 0; k < dims; ++k) {
      const RangeDim& r = m.range[dims - 1 - k];
      kw.line(fmt::format("const int64_t {} = {} + static_cast<int64_t>(blockIdx.{}) * {};",
                          ident(m.params[dims - 1 - k]), sym(r.start), axis[k], sym(r.step)));
    }
    kc.block_kernel = id;
    in_kernel_ = true;
    emit_scope(kc, st, ptr, id, kw, true);
    in_kernel_ = false;
    kw.close();
    kernels_.push_back(kw.str());

    w.line(fmt::format("// map {}[{}] (GPU_Device, {}): kernel {} on stream {}, blocks of {} x {} x {} threads",
                       m.label, range_str(m.range), np, kname, n.stream, block[0], block[1], block[2]));
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
    emit_launch(n, kname, counts, grid, block, args, w);
  }

  /// Whether the thread-block maps of kernel map `entry` can run as the threads of one block
  /// (DaCe's GPU_ThreadBlock semantics: one block per point of the kernel map, one thread per
  /// point of each thread-block map, a __syncthreads() after each): every one of them a direct
  /// child of the kernel map with a constant extent, 3 dimensions at most, nothing else but access
  /// nodes directly in the kernel map, at most 1,024 threads, the kernel map of 3 dimensions at
  /// most. Otherwise the thread-block maps run as loops in each thread (correct, not parallel).
  /// `block` receives the block shape (x first).
  bool thread_block_mode(const Block& st, int entry, std::vector<int>& block) {
    block = {1, 1, 1};
    if (st.node(entry).map.params.size() > 3) return false;
    bool any = false;
    for (int v : scope_nodes(st, entry)) {
      const Node& x = st.node(v);
      if (v == entry || v == st.node(entry).scope_exit) continue;
      if (x.kind == NodeKind::MapEntry && x.map.schedule == ScheduleType::GPU_ThreadBlock) {
        std::size_t d = x.map.params.size();
        if (x.scope_entry != entry || d > 3) return false;
        for (std::size_t k = 0; k < d; ++k) {
          auto e = as_constant(extent(x.map.range[d - 1 - k]));
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

  /// Whether the kernel of map `entry` may compute several rows per thread: its body must not
  /// leave the thread early or synchronize the block (no nested SDFG, no GPU_ThreadBlock map, no
  /// C++ tasklet that returns or calls __syncthreads).
  bool coarsen_rows(const Block& st, int entry) {
    for (int v : scope_nodes(st, entry)) {
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

  /// A GPU_Device map: a __global__ kernel (one thread per point, the last parameter on x) and
  /// its launch on the stream the stream-assignment pass chose. Its dynamic range inputs are read
  /// on the host before the launch (the grid depends on them) and passed by value.
  void emit_kernel(Ctx& c, const Block& st, const std::string& ptr, int id, CodeWriter& w) {
    auto dyn = dynamic_range_inputs(*c.sdfg, st, id);
    if (dyn.empty()) return emit_kernel_launch(c, st, ptr, id, {}, w);
    std::string np = ptr + "/nodes/" + std::to_string(id);
    for (auto& d : dyn) {
      const DataDesc* desc = c.data(d.edge->memlet.data);
      if (desc && is_gpu_storage(desc->storage))
        unsupported(
            np + "/attributes/in_connectors/" + pointer_token(d.name),
            fmt::format(
                "dynamic range input \"{}\" of GPU map \"{}\" reads \"{}\" in {} memory, but the launch needs it "
                "on the host; copy it to a host container first",
                d.name, st.node(id).map.label, d.edge->memlet.data, to_string(desc->storage)));
    }
    w.open("");
    declare_dynamic_inputs(c, st, dyn, np, w);
    emit_kernel_launch(c, st, ptr, id, dyn, w);
    w.close();
  }

  void emit_kernel_launch(Ctx& c, const Block& st, const std::string& ptr, int id,
                          const std::vector<DynamicRangeInput>& dyn, CodeWriter& w) {
    const Node& n = st.node(id);
    const MapInfo& m = n.map;
    std::string np = ptr + "/nodes/" + std::to_string(id);
    std::size_t dims = m.params.size();
    if (dims == 0) unsupported(np + "/attributes/params", fmt::format("GPU map \"{}\" has no parameters", m.label));
    // What the kernel touches: containers on the scope's edges; symbols in its expressions and code.
    std::vector<int> nodes = scope_nodes(st, id);
    std::set<int> in_scope(nodes.begin(), nodes.end());
    std::set<std::string> data, ids;
    std::set<std::string> inner_params;
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
          for (auto& d : dynamic_range_inputs(*c.sdfg, st, v)) inner_params.insert(d.name);
      }
      if (x.kind == NodeKind::Tasklet) {
        auto t = identifiers_in(x.code.code);
        ids.insert(t.begin(), t.end());
      }
      if (x.kind == NodeKind::Access) data.insert(x.data);
      if (x.kind == NodeKind::NestedSDFG) {  // the mappings the call passes (those of symbols it uses)
        std::set<std::string> used = free_symbols(*x.sdfg);
        for (auto& [k, v2] : x.symbol_mapping)
          if (used.count(k)) free_symbols(v2, ids);
      }
    }
    for (auto& e : st.edges) {
      if (!in_scope.count(e.src) && !in_scope.count(e.dst)) continue;
      if (e.memlet.data.empty()) continue;
      if (std::any_of(dyn.begin(), dyn.end(), [&](const DynamicRangeInput& d) { return d.edge == &e; }))
        continue;  // read on the host
      data.insert(e.memlet.data);
      // Memlets of code nodes are pointers to their subset's start (ir/Signature: DaCe's rule).
      bool view = is_code_node(st.node(e.src)) || is_code_node(st.node(e.dst));
      bool passage = is_scope_passage(st, e);
      if (e.memlet.subset && !passage)
        for (auto& r : *e.memlet.subset) {
          free_symbols(r.start, ids);
          if (!view) free_symbols(r.end, ids);
        }
    }
    for (auto& name : data)
      if (const DataDesc* d = c.data(name)) {
        for (auto& x : d->strides) free_symbols(x, ids);
        for (auto& x : d->offset) free_symbols(x, ids);
        if (c.scope_local.count(name)) free_symbols(d->total_size, ids);
      }
    std::set<std::string> known(c.declared_symbols.begin(), c.declared_symbols.end());
    for (auto& [s2, t] : c.sdfg->symbols) known.insert(s2);
    for (auto& s2 : enclosing_params(st, id)) known.insert(s2);
    std::vector<std::string> params, args;
    Ctx kc = c;
    kc.in_kernel = true;
    kc.parallel = true;
    // Containers the kernel only reads are `const __restrict__`, so loads may use the read-only
    // data cache (not when a nested SDFG takes them: its parameters are not const).
    std::set<std::string> written;
    bool has_nested = false;
    for (int v : nodes) has_nested |= st.node(v).kind == NodeKind::NestedSDFG;
    for (auto& e : st.edges) {
      if (!in_scope.count(e.src) || e.memlet.data.empty()) continue;
      NodeKind k = st.node(e.src).kind;
      if (k == NodeKind::Tasklet || k == NodeKind::MapExit || k == NodeKind::NestedSDFG) written.insert(e.memlet.data);
      if (k == NodeKind::Access && st.node(e.dst).kind == NodeKind::Access) written.insert(st.node(e.dst).data);
    }
    for (auto& name : data) {
      const DataDesc* d = c.data(name);
      if (!d || c.scope_local.count(name)) continue;
      bool value = c.access.count(name) && c.access.at(name) == Access::Value;
      if (is_gpu_storage(d->storage) || d->storage == StorageType::CPU_Pinned) {
        bool read_only = !written.count(name) && !has_nested;
        params.push_back(fmt::format("{}{}* __restrict__ {}", read_only ? "const " : "", ctype(d->dtype), ident(name)));
        args.push_back(ident(name));
      } else if (d->kind == DataKind::Scalar) {
        // Host scalars travel by value (the synchronization pass made the host wait when needed).
        params.push_back(fmt::format("const {} {}", ctype(d->dtype), ident(name)));
        args.push_back(value ? ident(name) : ident(name) + "[0]");
        kc.access[name] = Access::Value;
      } else {
        unsupported(np,
                    fmt::format("GPU map \"{}\" accesses \"{}\", which is in host memory ({}); copy it to GPU_Global "
                                "memory first, or make it CPU_Pinned",
                                m.label, name, to_string(d->storage)));
      }
    }
    for (auto& d : dyn) {
      params.push_back(fmt::format("const {} {}", ctype(d.type), ident(d.name)));
      args.push_back(ident(d.name));
      inner_params.insert(d.name);
    }
    for (auto& s2 : ids) {
      if (inner_params.count(s2) || !known.count(s2) || c.data(s2)) continue;
      auto t = c.sdfg->symbol_type(s2);
      params.push_back(fmt::format("const {} {}", t ? ctype(*t) : "int64_t", ident(s2)));
      args.push_back(ident(s2));
    }
    std::vector<int> tb_block;
    if (thread_block_mode(st, id, tb_block)) {
      emit_block_kernel(kc, st, ptr, id, params, args, tb_block, w);
      return;
    }
    // Block shape: gpu_block_size when given, otherwise 256 threads shaped by dimensionality.
    std::vector<int> block = m.gpu_block_size;
    // 2D: 64 x 4 measured best for a 5-point stencil on the H200 (docs/benchmarks.md).
    if (block.empty())
      block = dims == 1   ? std::vector<int>{256, 1, 1}
              : dims == 2 ? std::vector<int>{64, 4, 1}
                          : std::vector<int>{32, 4, 2};
    while (block.size() < 3) block.push_back(1);
    int threads = block[0] * block[1] * block[2];
    std::string kname = fmt::format("{}_{}_kernel{}", ident(m.label), id, kernels_.size());

    CodeWriter kw;
    kw.line(fmt::format("// GPU kernel of map {}[{}] ({})", m.label, range_str(m.range), np));
    kw.open(fmt::format("__global__ void __launch_bounds__({}) {}({})", threads, kname, fmt::join(params, ", ")));
    // Maps of two or more dimensions: each thread computes `rows` consecutive points along the
    // slowest axis it has (y in 2D, z in 3D), so that neighbouring rows (planes) a stencil reads come
    // from the thread's own loads (5-point stencil on the H200: 0.79 -> 0.9 of the copy bandwidth;
    // GT4Py's 7-point Laplacian: docs/benchmarks.md). Maps of more than three dimensions flatten
    // their first ones into z, so they march along y.
    const int rows = dims >= 2 && coarsen_rows(st, id) ? kRowsPerThread : 1;
    const std::size_t march = dims == 3 ? 2 : 1;  // the axis a thread marches along when rows > 1
    const char* axis[] = {"x", "y", "z"};
    // Maps of more than 3 parameters: z covers the first dims - 2 of them, flattened (the
    // fastest-varying last); each thread decodes its point with divisions, as DaCe does.
    auto z_extent = [&] {
      Expr e = make_int(1);
      for (std::size_t d = 0; d + 2 < dims; ++d) e = make_binary(BinOp::Mul, e, extent(m.range[d]));
      return simplify(e);
    };
    auto index = [&](std::size_t k) {
      if (k == 2 && dims > 3) {
        kw.line("const int64_t __tz = static_cast<int64_t>(blockIdx.z) * blockDim.z + threadIdx.z;");
        kw.line(fmt::format("if (__tz >= {}) return;", sym(z_extent())));
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
      std::size_t dim = dims - 1 - k;  // the last parameter runs along x
      const RangeDim& r = m.range[dim];
      if (k == march && rows > 1) {
        kw.line(fmt::format(
            "const int64_t __t{0}0 = (static_cast<int64_t>(blockIdx.{0}) * blockDim.{0} + threadIdx.{0}) * {1};",
            axis[k], rows));
        kw.line("#pragma unroll");
        kw.open(fmt::format("for (int __row = 0; __row < {}; ++__row)", rows));
        kw.line(fmt::format("const int64_t __t{0} = __t{0}0 + __row;", axis[k]));
      } else {
        kw.line(fmt::format("const int64_t __t{0} = static_cast<int64_t>(blockIdx.{0}) * blockDim.{0} + threadIdx.{0};",
                            axis[k]));
      }
      kw.line(fmt::format("if (__t{} >= {}) return;", axis[k], sym(extent(r))));
      kw.line(
          fmt::format("const int64_t {} = {} + __t{} * {};", ident(m.params[dim]), sym(r.start), axis[k], sym(r.step)));
    };
    // With rows > 1 the marching loop is innermost: the other axes first.
    for (std::size_t k : rows > 1 && march == 1 ? std::vector<std::size_t>{0, 2, 1} : std::vector<std::size_t>{0, 1, 2})
      if (k < dims) index(k);
    in_kernel_ = true;
    emit_scope(kc, st, ptr, id, kw, true);
    in_kernel_ = false;
    if (rows > 1) kw.close();
    kw.close();
    kernels_.push_back(kw.str());

    // The launch.
    w.line(fmt::format("// map {}[{}] (GPU_Device, {}): kernel {} on stream {}{}", m.label, range_str(m.range), np,
                       kname, n.stream, rows > 1 ? fmt::format(", {} rows per thread", rows) : ""));
    stream_waits(n.stream, n.wait_events, w);
    w.open("");
    std::vector<std::string> counts;
    for (std::size_t k = 0; k < std::min<std::size_t>(dims, 3); ++k) {
      std::size_t dim = dims - 1 - k;
      w.line(fmt::format("const int64_t __n{} = {};", axis[k],
                         sym(k == 2 && dims > 3 ? z_extent() : extent(m.range[dim]))));
      counts.push_back(fmt::format("__n{} > 0", axis[k]));
    }
    std::vector<std::string> grid;
    for (std::size_t k = 0; k < 3; ++k) {
      int per_block = block[k] * (k == march ? rows : 1);
      grid.push_back(
          k < dims ? fmt::format("static_cast<unsigned>((__n{} + {} - 1) / {})", axis[k], per_block, per_block) : "1u");
    }
    emit_launch(n, kname, counts, grid, block, args, w);
  }

  /// The launch of kernel `kname` for map entry `n` (inside the block the caller opened with the
  /// extents `__nx`...): nothing when a count is zero, the race-exposure delay, the checked launch
  /// on the map's stream, and the event the synchronization pass wants recorded after it.
  void emit_launch(const Node& n, const std::string& kname, const std::vector<std::string>& counts,
                   const std::vector<std::string>& grid, const std::vector<int>& block,
                   const std::vector<std::string>& args, CodeWriter& w) {
    w.open(fmt::format("if ({})", fmt::join(counts, " && ")));  // empty grids launch nothing
    w.line(fmt::format("const dim3 __grid({}), __block({}, {}, {});", fmt::join(grid, ", "), block[0], block[1],
                       block[2]));
    w.line(fmt::format("sdfc::gpu::maybe_delay({}, {});", kCtx, gpu_stream(n.stream)));
    w.line(fmt::format("{}<<<__grid, __block, 0, {}>>>({});", kname, gpu_stream(n.stream), fmt::join(args, ", ")));
    w.line(fmt::format("SDFC_KERNEL_LAUNCH_CHECK({}, \"{}\");", kCtx, kname));
    w.close();
    w.close();
    stream_record(n.stream, n.record_event, w);
  }

  const DataEdge* in_edge(const Block& st, int id, const std::string& conn) {
    for (auto* e : adj(st).in[static_cast<std::size_t>(id)])
      if (e->dst_conn && *e->dst_conn == conn) return e;
    return nullptr;
  }
  std::vector<const DataEdge*> out_edges(const Block& st, int id, const std::string& conn) {
    std::vector<const DataEdge*> r;
    for (auto* e : adj(st).out[static_cast<std::size_t>(id)])
      if (e->src_conn && *e->src_conn == conn) r.push_back(e);
    return r;
  }

  /// Writes `value` into `target` (an element access) with the memlet's conflict resolution.
  void emit_write(const std::string& target, const std::string& value, DType t, const Memlet& m, bool parallel,
                  const std::string& ptr, CodeWriter& w) {
    if (!m.wcr) {
      w.line(fmt::format("{} = {};", target, value));
      return;
    }
    auto wcr = parse_wcr(*m.wcr);
    if (!wcr)
      unsupported(
          ptr + "/attributes/data/attributes/wcr",
          fmt::format("unsupported write-conflict resolution \"{}\"; expected a lambda of two arguments", *m.wcr));
    if (t == DType::Complex64 || t == DType::Complex128) {
      // Complex sums add the two parts, each atomically where the writes race; other lambdas
      // have no atomic form: a critical section on the CPU, refused in kernels.
      bool atomic = in_kernel_ || parallel;
      if (wcr->kind == Wcr::Sum && atomic) {
        w.open("");
        w.line(fmt::format("const {} __wcr_value = {};", ctype(t), value));
        for (const char* part : {"re", "im"}) {
          if (in_kernel_) {
            w.line(fmt::format("sdfc::gpu::atomic_add(&({}).{}, __wcr_value.{});", target, part, part));
          } else {
            w.line("#pragma omp atomic");
            w.line(fmt::format("({}).{} += __wcr_value.{};", target, part, part));
          }
        }
        w.close();
        return;
      }
      if (in_kernel_)
        unsupported(ptr + "/attributes/data/attributes/wcr",
                    fmt::format("write-conflict resolution \"{}\" on {} data in a GPU kernel: only sums of complex "
                                "numbers have an atomic form",
                                *m.wcr, to_string(t)));
      std::string body = wcr->kind == Wcr::Sum       ? fmt::format("{} + {}", ident(wcr->a), ident(wcr->b))
                         : wcr->kind == Wcr::Product ? fmt::format("{} * {}", ident(wcr->a), ident(wcr->b))
                                                     : print_cpp(wcr->body);
      std::string lambda = fmt::format("[]({0} {1}, {0} {2}) -> {0} {{ return static_cast<{0}>({3}); }}", ctype(t),
                                       ident(wcr->a), ident(wcr->b), body);
      if (atomic) w.line("#pragma omp critical(sdfc_complex_wcr)");
      w.line(fmt::format("{0} = ({1})({0}, {2});", target, lambda, value));
      return;
    }
    if (in_kernel_) {
      if (wcr->kind == Wcr::Sum) {
        w.line(fmt::format("sdfc::gpu::atomic_add(&{}, static_cast<{}>({}));", target, ctype(t), value));
        return;
      }
      std::string body = wcr->kind == Wcr::Min   ? fmt::format("sdfc::rt::min({}, {})", wcr->a, wcr->b)
                         : wcr->kind == Wcr::Max ? fmt::format("sdfc::rt::max({}, {})", wcr->a, wcr->b)
                                                 : print_cpp(wcr->body);
      w.line(fmt::format(
          "sdfc::gpu::atomic_update(&{}, static_cast<{}>({}), []__device__({} {}, {} {}) -> {} {{ return "
          "static_cast<{}>({}); }});",
          target, ctype(t), value, ctype(t), ident(wcr->a), ctype(t), ident(wcr->b), ctype(t), ctype(t), body));
      return;
    }
    switch (wcr->kind) {
      case Wcr::Sum:
      case Wcr::Product:
        if (parallel) w.line("#pragma omp atomic");
        w.line(fmt::format("{} {}= {};", target, wcr->kind == Wcr::Sum ? "+" : "*", value));
        return;
      default: {
        std::string body = print_cpp(wcr->body);
        if (wcr->kind == Wcr::Min) body = fmt::format("sdfc::rt::min({}, {})", wcr->a, wcr->b);
        if (wcr->kind == Wcr::Max) body = fmt::format("sdfc::rt::max({}, {})", wcr->a, wcr->b);
        std::string lambda = fmt::format("[]({0} {1}, {0} {2}) -> {0} {{ return static_cast<{0}>({3}); }}", ctype(t),
                                         ident(wcr->a), ident(wcr->b), body);
        if (parallel)
          w.line(
              fmt::format("sdfc::rt::atomic_update(&{}, static_cast<{}>({}), {});", target, ctype(t), value, lambda));
        else
          w.line(fmt::format("{0} = ({1})({0}, {2});", target, lambda, value));
      }
    }
  }

  void emit_tasklet(Ctx& c, const Block& st, const std::string& ptr, int id, CodeWriter& w, bool parallel) {
    const Node& n = st.node(id);
    std::string np = ptr + "/nodes/" + std::to_string(id);
    const Adjacency& ad = adj(st);
    TaskletScope scope = python_tasklet_scope(*c.sdfg, st, id, ad.in[static_cast<std::size_t>(id)],
                                              ad.out[static_cast<std::size_t>(id)]);
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
      const Memlet* memlet;
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
      if (input_bound_by_value(e->memlet, r))
        ins.push_back({"const " + ctype(t), in.name, element(c, e->memlet.data, starts(r), np)});
      else
        ins.push_back({"const " + ctype(t) + "*", in.name, address(c, e->memlet.data, starts(r), np)});
    }
    for (auto& out : n.out_connectors) {
      auto es = out_edges(st, id, out.name);
      if (es.empty() || es[0]->memlet.data.empty()) continue;
      for (const DataEdge* ek : es) lowered(st, *ek, EdgeRole::TaskletOutput);
      const DataEdge* e = es[0];
      DType t = out.dtype.value_or(c.data(e->memlet.data)->dtype);
      const Range& r = *e->memlet.subset;
      SDFC_ASSERT(output_bound_by_value(e->memlet, r) || es.size() == 1,
                  "output fan-out of a pointer or reference not legalized: " + np + " " + out.name);
      if (!single_element(r)) {
        outs.push_back({ctype(t) + "*", out.name, address(c, e->memlet.data, starts(r), np)});
        continue;
      }
      if (output_bound_by_reference(e->memlet, r)) {
        outs.push_back({ctype(t) + "&", out.name, element(c, e->memlet.data, starts(r), np)});
        continue;
      }
      outs.push_back({ctype(t), out.name, ""});
      for (const DataEdge* ek : es) {
        std::size_t ei = static_cast<std::size_t>(ek - st.edges.data());
        writes.push_back({element(c, ek->memlet.data, starts(*ek->memlet.subset), np), out.name, t, &ek->memlet,
                          ptr + "/edges/" + std::to_string(ei)});
      }
    }
    // A connector named like a container or symbol would shadow it in its own binding
    // (`const double A = A[i];`): then the accesses are taken first, outside the connectors' block.
    bool shadows = false;
    for (auto* list : {&ins, &outs})
      for (auto& b : *list) shadows |= c.data(b.name) != nullptr || scope.symbols.count(b.name) > 0;

    w.open("");
    w.line(fmt::format("// tasklet {} ({})", n.label, np));
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
      w.lines(translate_python_tasklet(n.code.code, scope, file_, np));
    } else {
      w.lines(n.code.code);
    }
    if (!n.code_global.code.empty() &&
        std::find(globals_.begin(), globals_.end(), n.code_global.code) == globals_.end())
      globals_.push_back(n.code_global.code);
    for (auto& wr : writes) emit_write(wr.target, wr.value, wr.t, *wr.memlet, parallel, wr.ptr, w);
    if (shadows) w.close();
    w.close();
  }

  /// Parameters of the maps enclosing node `id`, innermost last.
  static std::vector<std::string> enclosing_params(const Block& st, int id) {
    std::vector<std::string> ps;
    for (int s = st.node(id).scope_entry; s >= 0; s = st.node(s).scope_entry)
      for (auto& p : st.node(s).map.params) ps.push_back(p);
    return ps;
  }

  /// `const T name = value;` for each dynamic range input of map `entry`, read where the code runs.
  void declare_dynamic_inputs(const Ctx& c, const Block& st, const std::vector<DynamicRangeInput>& dyn,
                              const std::string& np, CodeWriter& w) {
    for (auto& d : dyn) {
      lowered(st, *d.edge, EdgeRole::DynamicRangeInput);
      SDFC_ASSERT(is_identifier(d.name), "connector name not legalized: " + np + " " + d.name);
      w.line(fmt::format("const {} {} = {};  // dynamic map range input", ctype(d.type), ident(d.name),
                         element(c, d.edge->memlet.data, starts(*d.edge->memlet.subset), np)));
    }
  }

  static Expr extent(const RangeDim& d) { return range_extent(d); }

  /// A copy between the containers at the two ends of an edge's memlet path (an access-to-access
  /// copy, or a copy into or out of a map scope), with the subsets ir/Memlets.h derives.
  void emit_copy(Ctx& c, const Block& st, const DataEdge& e, const std::string& ep, CodeWriter& w, bool parallel) {
    const Memlet& m = e.memlet;
    EdgeSubsets ends = edge_subsets(*c.sdfg, st, e);
    if (!ends.error.empty()) unsupported(ep + "/attributes/data", ends.error);
    const std::string& src = ends.src_data;
    const std::string& dst = ends.dst_data;
    SDFC_ASSERT(!src.empty() && !dst.empty(),
                fmt::format("{}: copy at {} without a container at both ends", file_, ep));
    const DataDesc* dd = c.data(dst);
    const Range& rs = ends.src;
    const Range& rd = ends.dst;
    // Pair the dimensions that move more than one element.
    auto squeeze = [](const Range& r) {
      std::vector<std::size_t> dims;
      for (std::size_t k = 0; k < r.size(); ++k)
        if (as_constant(extent(r[k])) != 1) dims.push_back(k);
      return dims;
    };
    auto ds = squeeze(rs), dd_dims = squeeze(rd);
    if (ds.size() != dd_dims.size())
      unsupported(
          ep,
          fmt::format("copy from \"{}\" to \"{}\" reshapes the data ({} to {} dimensions), which is not supported yet",
                      src, dst, ds.size(), dd_dims.size()));
    if (e.stream >= 0 && !c.in_kernel) {
      emit_gpu_copy(c, src, dst, rs, rd, ds, dd_dims, e, ep, w);
      stream_record(e.stream, e.record_event, w);
      return;
    }
    w.line(fmt::format("// copy {}[{}] -> {}[{}] ({})", src, range_str(rs), dst, range_str(rd), ep));
    std::vector<Expr> is = starts(rs), id = starts(rd);
    for (std::size_t k = 0; k < ds.size(); ++k) {
      std::string v = fmt::format("__c{}", k);
      w.open(fmt::format("for (int64_t {0} = 0; {0} < {1}; ++{0})", v, sym(extent(rs[ds[k]]))));
      Expr var = make_symbol(v);
      is[ds[k]] = make_binary(BinOp::Add, rs[ds[k]].start, make_binary(BinOp::Mul, var, rs[ds[k]].step));
      id[dd_dims[k]] = make_binary(BinOp::Add, rd[dd_dims[k]].start, make_binary(BinOp::Mul, var, rd[dd_dims[k]].step));
    }
    emit_write(element(c, dst, id, ep), element(c, src, is, ep), dd->dtype, m, parallel, ep, w);
    for (std::size_t k = 0; k < ds.size(); ++k) w.close();
  }

  /// A copy that touches GPU memory, on the stream the pass chose: one cudaMemcpyAsync for
  /// contiguous data, otherwise cudaMemcpy2DAsync for each 2D block of rows (host loops over
  /// the outer dimensions of an N-D block; strided single elements are rows of one element).
  void emit_gpu_copy(const Ctx& c, const std::string& src, const std::string& dst, const Range& rs, const Range& rd,
                     const std::vector<std::size_t>& ds, const std::vector<std::size_t>& dd, const DataEdge& e,
                     const std::string& ep, CodeWriter& w) {
    const DataDesc& sd = *c.data(src);
    const DataDesc& dd_desc = *c.data(dst);
    if (e.memlet.wcr)
      unsupported(ep, "write-conflict resolution on a copy that involves GPU memory is not supported yet");
    std::string elem = ctype(dd_desc.dtype);
    w.line(
        fmt::format("// copy {}[{}] -> {}[{}] ({}, stream {})", src, range_str(rs), dst, range_str(rd), ep, e.stream));
    stream_waits(e.stream, e.wait_events, w);
    // Contiguous: every moved dimension but the first covers the whole extent with C-order strides.
    auto contiguous = [&](const DataDesc& d, const Range& r, const std::vector<std::size_t>& moved) {
      if (moved.empty()) return true;
      for (std::size_t k = moved.front() + 1; k < r.size(); ++k) {
        if (as_constant(simplify(r[k].start)) != 0 || !equal(simplify(extent(r[k])), simplify(d.shape[k])))
          return false;
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
    if (sd.dtype != dd_desc.dtype)
      unsupported(ep, fmt::format("copy from \"{}\" to \"{}\" changes the dtype", src, dst));
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
    for (std::size_t i = 0; i < n; ++i)
      for (const Expr* x : {&rs[ds[i]].step, &rd[dd[i]].step, &sd.strides[ds[i]], &dd_desc.strides[dd[i]]})
        if (auto v = as_constant(simplify(*x)); v && *v <= 0)
          unsupported(
              ep, fmt::format("copy from \"{}\" to \"{}\" runs backwards (a negative step or stride) and involves GPU "
                              "memory; not supported yet",
                              src, dst));
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
    std::string spitch =
        has_rows ? fmt::format("{} * sizeof({})", wide_size(pitch(sd, rs, ds[pitch_dim])), elem) : width;
    std::string dpitch =
        has_rows ? fmt::format("{} * sizeof({})", wide_size(pitch(dd_desc, rd, dd[pitch_dim])), elem) : width;
    w.line(gpu_check(fmt::format("sdfc::gpu::gpuMemcpy2DAsync({}, {}, {}, {}, {}, {}, sdfc::gpu::kMemcpyDefault, {})",
                                 address(c, dst, id, ep), dpitch, address(c, src, is, ep), spitch, width, height,
                                 gpu_stream(e.stream))));
    for (std::size_t k = 0; k < outer; ++k) w.close();
    w.close();
  }

  void emit_nested(Ctx& c, const Block& st, const std::string& ptr, int id, CodeWriter& w, bool parallel) {
    const Node& n = st.node(id);
    std::string np = ptr + "/nodes/" + std::to_string(id);
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
      if (!e || !idesc || e->memlet.data.empty())
        unsupported(np, fmt::format("connector \"{}\" of nested SDFG \"{}\" is not connected to data", cn, inner.name));
      params.push_back(fmt::format("{}* __restrict__ {}", ctype(idesc->dtype), ident(cn)));
      const Range& r = *e->memlet.subset;
      args.push_back(address(c, e->memlet.data, starts(r), np));
    }
    std::map<std::string, Expr> mapping(n.symbol_mapping.begin(), n.symbol_mapping.end());
    for (auto& s : free_symbols(inner)) {
      auto t = inner.symbol_type(s).value_or(DType::Int32);
      params.push_back(fmt::format("{} {}", ctype(t), ident(s)));
      auto it = mapping.find(s);
      if (it == mapping.end()) {
        if (!c.sdfg->symbol_type(s))
          unsupported(np + "/attributes/symbol_mapping",
                      fmt::format("nested SDFG \"{}\" uses symbol \"{}\", which its symbol mapping does not define",
                                  inner.name, s));
        args.push_back(ident(s));
      } else {
        args.push_back(sym(it->second));
      }
    }
    std::string fname = fmt::format("nested_{}_{}", ident(inner.name), nested_counter_++);
    Ctx ic;
    ic.in_kernel = c.in_kernel;
    ic.sdfg = &inner;
    ic.ptr = np + "/attributes/sdfg";
    ic.parallel = parallel;
    ic.index_data();
    if (!inner.global_code.code.empty()) globals_.push_back(inner.global_code.code);
    if (!inner.init_code.code.empty()) init_codes_.push_back(inner.init_code.code);
    if (std::find(nested_sdfgs_.begin(), nested_sdfgs_.end(), &inner) == nested_sdfgs_.end())
      nested_sdfgs_.push_back(&inner);
    if (!inner.exit_code.code.empty()) exit_codes_.push_back(inner.exit_code.code);
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
    (c.in_kernel ? device_functions_ : functions_).push_back(fw.str());
    w.line(fmt::format("// nested SDFG {} ({})", inner.name, np));
    if (c.in_kernel)
      w.line(fmt::format("{}({});", fname, fmt::join(args, ", ")));
    else
      w.line(fmt::format("{}(__state{}{});", fname, args.empty() ? "" : ", ", fmt::join(args, ", ")));
  }

  // ---- the frame ------------------------------------------------------------------------------

  std::string info_json(const Signature& sig, const std::vector<std::string>& external_storages) const {
    Json j = Json::object();
    j["name"] = name_;
    j["target"] = to_string(options_.target);
    j["sdfc_version"] = SDFC_VERSION;
    Json args = Json::array();
    for (auto& a : sig.args) {
      Json x = Json::object();
      x["name"] = a.name;
      x["kind"] = a.kind == Argument::Kind::Array ? "array" : a.kind == Argument::Kind::Scalar ? "scalar" : "symbol";
      x["dtype"] = std::string(to_string(a.dtype));
      x["by_pointer"] = a.by_pointer;
      if (a.desc) {
        Json shape = Json::array();
        for (auto& s : a.desc->shape) shape.push_back(print_expr(simplify(s)));
        x["shape"] = shape;
        if (a.desc->kind == DataKind::Array) {
          Json strides = Json::array();
          for (auto& s : a.desc->strides) strides.push_back(print_expr(simplify(s)));
          x["strides"] = strides;  // in elements
          x["total_size"] = print_expr(simplify(a.desc->total_size));
        }
        x["storage"] = std::string(to_string(a.desc->storage));
      }
      args.push_back(x);
    }
    j["args"] = args;
    j["init_symbols"] = sig.init_symbols;
    j["external_storages"] = external_storages;
    return j.dump();
  }
};

GeneratedProgram Generator::run() {
  // legalize refused what follows from here on as user errors (passes/Legalize.h).
  SDFC_ASSERT(is_identifier(name_) && name_.rfind("__", 0) != 0, "SDFG name not legalized: " + name_);
  Signature sig = signature(root_);
  std::string st = state_type();

  // Persistent and External transients of the top-level SDFG live in the state struct.
  std::vector<std::pair<std::string, const DataDesc*>> persistent, external;
  for (auto& [n, d] : root_.arrays) {
    if (!d.transient) continue;
    if (d.lifetime == Lifetime::Persistent) persistent.emplace_back(n, &d);
    if (d.lifetime == Lifetime::External) external.emplace_back(n, &d);
    SDFC_ASSERT(d.lifetime != Lifetime::Global, "Global lifetime not legalized: " + n);
  }

  // The program body.
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

  std::vector<std::string> params, call_args, init_params, init_args;
  for (auto& a : sig.args) {
    std::string t = ctype(a.dtype);
    if (a.kind == Argument::Kind::Array)
      params.push_back(fmt::format("{} * __restrict__ {}", t, ident(a.name)));
    else if (a.by_pointer)
      params.push_back(fmt::format("{} * __restrict__ {}", t, ident(a.name)));
    else
      params.push_back(fmt::format("{} {}", t, ident(a.name)));
    call_args.push_back(ident(a.name));
  }
  for (auto& s : sig.init_symbols) {
    init_params.push_back(fmt::format("{} {}", ctype(root_.symbol_type(s).value_or(DType::Int32)), ident(s)));
    init_args.push_back(ident(s));
  }
  std::string param_list = params.empty() ? "" : ", " + fmt::format("{}", fmt::join(params, ", "));
  std::string init_list = fmt::format("{}", fmt::join(init_params, ", "));
  // The workspace functions take the init symbols as __arg_<name> and compute in 64 bits.
  std::vector<std::string> wide_params, widen, wide_args;
  for (auto& s : sig.init_symbols) {
    wide_params.push_back(fmt::format("{} __arg_{}", ctype(root_.symbol_type(s).value_or(DType::Int32)), ident(s)));
    widen.push_back(fmt::format("const std::int64_t {0} = __arg_{0}; (void){0};", ident(s)));
    wide_args.push_back("__arg_" + ident(s));
  }
  std::string wide_list = wide_params.empty() ? "" : ", " + fmt::format("{}", fmt::join(wide_params, ", "));

  // External transients by workspace, as workspace-layout placed them.
  std::map<std::string, std::vector<std::pair<std::string, const DataDesc*>>> by_storage;
  std::map<std::string, const Workspace*> workspace_of;
  for (auto& ws : root_.workspaces) {
    std::string s(to_string(ws.storage));
    workspace_of[s] = &ws;
    for (auto& n : ws.members) by_storage[s].emplace_back(n, root_.find_data(n));
  }
  std::vector<std::string> storages;
  for (auto& [s, v] : by_storage) storages.push_back(s);

  CodeWriter w;
  w.line(fmt::format("// Generated by sdfc {} from SDFG \"{}\" ({}). Do not edit: regenerate with sdfc compile.",
                     SDFC_VERSION, name_, file_));
  w.line(fmt::format("// Target: {}. Passes decided schedules, storage and lifetimes; this file prints them.",
                     to_string(options_.target)));
  for (auto& h : generated_std_includes()) w.line("#include " + h);
  if (options_.report_refusals) w.line("#define SDFC_REPORT_REFUSALS 1  // --dace-layout: refusals also go to stderr");
  w.line(gpu_ ? "#include \"sdfc/gpu.h\"" : "#include \"sdfc/program.h\"");
  if (gpu_) w.line("#include \"sdfc/gpu_atomics.h\"");
  if (root_.libraries.count("cblas")) w.line("#include \"sdfc/blas.h\"  // --blas vendor: CBLAS on host data");
  if (root_.libraries.count("cublas")) w.line("#include \"sdfc/gpu_blas.h\"  // --blas vendor: cuBLAS on GPU data");
  if (options_.target == Target::HIP) w.line("#include \"sdfc/gpu_runtime_names.h\"  // CUDA names in DaCe code");
  w.line("");
  if (!root_.global_code.code.empty()) {
    w.line("// global_code of the SDFG");
    w.raw(root_.global_code.code);
  }
  emit_located(root_, root_.target_global_code, {"cpu", "cuda", "hip"}, "global_code", w, false);
  for (const SDFG* n : nested_sdfgs_)
    emit_located(*n, n->target_global_code, {"cpu", "cuda", "hip"}, "global_code", w, false);
  // (tasklet code_global is collected while the body is generated)
  for (auto& g : globals_) {
    w.line("// code_global of a tasklet");
    w.raw(g);
  }
  w.line("");
  w.open(fmt::format("struct {}", st));
  for (auto& [n, d] : persistent)
    w.line(fmt::format("{} * __restrict__ __0_{} = nullptr;  // Persistent", ctype(d->dtype), ident(n)));
  for (auto& [n, d] : external)
    w.line(fmt::format("{} * __restrict__ __0_{} = nullptr;  // External, set by __dace_set_external_memory_*",
                       ctype(d->dtype), ident(n)));
  for (auto& [n, d] : persistent)
    w.line(fmt::format("std::size_t __sdfc_bytes_{} = 0;  // allocated at init", ident(n)));
  for (auto& [s, v] : by_storage)
    w.line(fmt::format(
        "std::size_t __sdfc_workspace_bytes_{} = 0;  // the {} workspace's size for the symbols it was set with", s,
        s));
  w.line("sdfc::rt::ErrorSlot __sdfc_error;");
  if (gpu_) w.line("sdfc::gpu::Context __sdfc_gpu;  // device, streams, events, the GPU's first error");
  if (root_.libraries.count("cublas"))
    w.line("sdfc::gpu::BlasHandle __sdfc_blas;  // the cuBLAS handle of --blas vendor calls, made at first use");
  w.close(";");
  w.line("");
  w.line("// Why the last __dace_init_ on this thread failed (it returns null, as DaCe's does), or why the last");
  w.line("// use of a null or finished handle was refused: __sdfc_last_error(NULL) reads it.");
  w.line("static thread_local char __sdfc_init_failure[1024];");
  w.line(
      "static sdfc::rt::HandleRegistry __sdfc_handles;  // the instances __dace_init_ made and __dace_exit_ did not "
      "end");
  w.open("static bool __sdfc_live(const void* __handle, const char* __function)");
  w.line("if (__sdfc_handles.live(__handle)) return true;");
  w.line(fmt::format(
      "std::snprintf(__sdfc_init_failure, sizeof __sdfc_init_failure, \"%s: %s\", __function, __handle ? \"the "
      "handle was not made by __dace_init_{0} or was already finished by __dace_exit_{0}\" : \"the handle is null "
      "(__dace_init_{0} failed or was not called)\");",
      name_));
  w.line("return false;");
  w.close();
  if (gpu_) {
    // DaCe's stream hooks, which init_code and CPP tasklets may call (GT4Py's init_code for
    // "cuda": __dace_gpu_set_all_streams(__state, cudaStreamDefault)); defined below.
    w.line(fmt::format("SDFC_EXPORT bool __dace_gpu_set_stream({}* __state, int id, sdfc::gpu::Stream stream);", st));
    w.line(fmt::format("SDFC_EXPORT void __dace_gpu_set_all_streams({}* __state, sdfc::gpu::Stream stream);", st));
  }
  w.line("");
  for (auto& f : device_functions_) {
    w.raw(f);
    w.line("");
  }
  for (auto& k : kernels_) {
    w.raw(k);
    w.line("");
  }
  for (auto& f : functions_) {
    w.raw(f);
    w.line("");
  }
  for (auto& [s, v] : by_storage)
    w.line(fmt::format("SDFC_EXPORT std::size_t __dace_get_external_memory_size_{}({}* __state{});", s, st, wide_list));
  w.open(fmt::format("static void __program_{}_internal({}* __state{})", name_, st, param_list));
  w.raw(body.str());
  w.close();
  w.line("");

  // __program_<name>: checks, then the body.
  w.open(fmt::format("SDFC_EXPORT void __program_{}({}* __state{})", name_, st, param_list));
  w.line(fmt::format("if (!__sdfc_live(__state, \"__program_{}\")) return;", name_));
  if (gpu_ && root_.gpu_graph) {
    w.line(fmt::format("sdfc::gpu::DeviceGuard __guard({});", kCtx));
    w.line("if (!__guard.ok()) return;");
  } else if (gpu_) {
    w.line(fmt::format("sdfc::gpu::DeviceGuard __guard({});", kCtx));
    w.line(fmt::format("// external-sync pass: the caller's stream waits for the previous call if it changed{}",
                       root_.sync_streams.empty()
                           ? ""
                           : fmt::format("; streams {} wait for it", fmt::join(root_.sync_streams, ", "))));
    w.line(fmt::format("if (!__guard.ok() || !sdfc::gpu::enter_call({}, {{{}}})) return;", kCtx,
                       fmt::join(root_.sync_streams, ", ")));
  }
  for (auto& [s, v] : by_storage) {
    w.open(fmt::format("if (!__state->__0_{})", ident(v.front().first)));
    w.line(fmt::format(
        "sdfc::rt::record_error(__state->__sdfc_error, \"{}: the external workspace for {} is not set; call "
        "__dace_set_external_memory_{} after init and before the first call\");",
        name_, s, s));
    w.line("return;");
    w.close();
    w.open(fmt::format("if (__dace_get_external_memory_size_{}(__state{}{}) > __state->__sdfc_workspace_bytes_{})", s,
                       init_args.empty() ? "" : ", ", fmt::join(init_args, ", "), s));
    w.line(fmt::format(
        "sdfc::rt::record_error(__state->__sdfc_error, \"{}: these symbol values need a larger {} workspace than "
        "the one set; set a workspace sized for them first\");",
        name_, s));
    w.line("return;");
    w.close();
  }
  for (auto& [n, d] : persistent) {
    w.open(fmt::format("if (!sdfc::rt::size_fits({}, sizeof({}), __state->__sdfc_bytes_{}))",
                       checked_size(d->total_size), ctype(d->dtype), ident(n)));
    w.line(fmt::format(
        "sdfc::rt::record_error(__state->__sdfc_error, \"{}: persistent transient {} needs more memory for these "
        "symbol values than was allocated at init; initialize a new instance with the larger sizes\");",
        name_, n));
    w.line("return;");
    w.close();
  }
  if (root_.gpu_graph) {
    // The key: every argument's bytes and the External workspaces' pointers (sdfc/gpu.h, graphs).
    std::vector<std::string> key;
    for (auto& a : call_args) key.push_back(fmt::format("{{(const void*)&{0}, sizeof({0})}}", a));
    for (auto& [s, v] : by_storage)
      for (auto& [n, d] : v)
        key.push_back(fmt::format("{{(const void*)&__state->__0_{0}, sizeof(__state->__0_{0})}}", ident(n)));
    if (key.empty()) key.push_back("{nullptr, 0}");
    w.line(fmt::format("// gpu-graph pass: the call's GPU work replays as one graph while these bytes stay the same"));
    w.line(fmt::format("const sdfc::gpu::GraphArg __graph_args[] = {{{}}};", fmt::join(key, ", ")));
    w.line("constexpr std::size_t __graph_count = sizeof(__graph_args) / sizeof(__graph_args[0]);");
    w.line(fmt::format("if (sdfc::gpu::graph_replay({}, __graph_args, __graph_count)) return;", kCtx));
    w.open(fmt::format("if (!sdfc::gpu::graph_plain({}, __graph_args, __graph_count))", kCtx));
    w.line("// the host code runs once with the streams capturing (nothing executes), then the graph is");
    w.line("// updated or instantiated and launched as the call's work");
    w.line(fmt::format("if (!sdfc::gpu::graph_begin({})) return;", kCtx));
    w.line(
        fmt::format("bool __failed = !sdfc::gpu::enter_call({}, {{{}}});", kCtx, fmt::join(root_.sync_streams, ", ")));
    w.line("bool __abandoned = false;");
    w.open("if (!__failed)");
    emit_call_internal(call_args, true, w);
    w.close();
    w.open("if (!__abandoned)");
    w.line(fmt::format("sdfc::gpu::graph_end({}, __graph_args, __graph_count, __failed || __state->__sdfc_error.set);",
                       kCtx));
    w.line("return;");
    w.close();
    w.line(fmt::format("sdfc::gpu::graph_abandon({}, __graph_args, __graph_count);", kCtx));
    w.close();
    w.line("// these arguments lead to host work a replay would skip: the call runs without a graph");
    w.line(fmt::format("if (!sdfc::gpu::enter_call({}, {{{}}})) return;", kCtx, fmt::join(root_.sync_streams, ", ")));
  }
  emit_call_internal(call_args, false, w);
  w.close();
  w.line("");

  // __dace_init_<name>
  w.open(fmt::format("SDFC_EXPORT {}* __dace_init_{}({})", st, name_, init_list));
  w.line("__sdfc_init_failure[0] = '\\0';");
  w.line(fmt::format("{0}* __state = new (std::nothrow) {0}();", st));
  w.open("if (!__state)");
  w.line("std::snprintf(__sdfc_init_failure, sizeof __sdfc_init_failure, \"out of memory\");");
  w.line("return nullptr;");
  w.close();
  w.line("__sdfc_handles.add(__state);  // before init_code, which may call the stream hooks with it");
  // Nothing may leave an extern "C" function: an exception from init code (or the allocations)
  // frees what was made and returns null with the reason.
  w.open("try");
  if (gpu_) {
    w.open(fmt::format("if (!sdfc::gpu::init({0}, {1}, {2}){3})", kCtx, options_.gpu_streams, root_.num_events,
                       root_.gpu_graph ? fmt::format(" || !sdfc::gpu::enable_graphs({})", kCtx) : ""));
    w.line(
        fmt::format("std::snprintf(__sdfc_init_failure, sizeof __sdfc_init_failure, \"%s\", {}.error.message);", kCtx));
    if (root_.gpu_graph) w.line(fmt::format("sdfc::gpu::destroy({});", kCtx));
    w.line("__sdfc_handles.remove(__state);");
    w.line("delete __state;");
    w.line("return nullptr;");
    w.close();
  }
  // As DaCe: the GPU target's init_code once its streams exist, then the frame's and the CPU's.
  emit_located(root_, root_.target_init_code, {"cuda", "hip"}, "init_code", w, true);
  for (const SDFG* n : nested_sdfgs_) emit_located(*n, n->target_init_code, {"cuda", "hip"}, "init_code", w, true);
  if (!root_.init_code.code.empty()) {
    w.open("");
    w.line("// init_code of the SDFG");
    w.raw(root_.init_code.code);
    w.close();
  }
  emit_located(root_, root_.target_init_code, {"cpu"}, "init_code", w, true);
  for (const SDFG* n : nested_sdfgs_) emit_located(*n, n->target_init_code, {"cpu"}, "init_code", w, true);
  if (gpu_ && uses_pool_)
    w.line(fmt::format("(void)sdfc::gpu::enable_pool({}, UINT64_MAX);  // pooled transients: keep freed blocks", kCtx));
  for (auto& code : init_codes_) {
    w.open("");
    w.line("// init_code of a nested SDFG");
    w.raw(code);
    w.close();
  }
  auto persistent_free = [&](const std::string& n2, const DataDesc& d2) {
    if (gpu_ && is_gpu_storage(d2.storage))
      return fmt::format("if (__state->__0_{0}) (void)sdfc::gpu::gpuFree(__state->__0_{0});", ident(n2));
    if (gpu_ && d2.storage == StorageType::CPU_Pinned)
      return fmt::format("if (__state->__0_{0}) (void)sdfc::gpu::gpuFreeHost(__state->__0_{0});", ident(n2));
    return fmt::format("delete[] __state->__0_{};", ident(n2));
  };
  // Every size first, with checked arithmetic (codegen/CheckedSize.h): a negative or overflowing
  // size is refused (sdfc::rt::SizeError, caught below) before anything is allocated.
  for (auto& [n, d] : persistent)
    w.line(fmt::format(
        "const std::size_t __sdfc_count_{} = {};", ident(n),
        checked_count("persistent transient " + n, d->total_size, fmt::format("sizeof({})", ctype(d->dtype)))));
  for (auto& [n, d] : persistent) {
    w.line(fmt::format("__state->__sdfc_bytes_{0} = __sdfc_count_{0} * sizeof({1});", ident(n), ctype(d->dtype)));
    if (gpu_ && is_gpu_storage(d->storage))
      w.line(fmt::format("(void)sdfc::gpu::gpuMalloc((void**)&__state->__0_{}, __state->__sdfc_bytes_{});", ident(n),
                         ident(n)));
    else if (gpu_ && d->storage == StorageType::CPU_Pinned)
      w.line(fmt::format("(void)sdfc::gpu::gpuHostAlloc((void**)&__state->__0_{}, __state->__sdfc_bytes_{});", ident(n),
                         ident(n)));
    else
      w.line(fmt::format("__state->__0_{0} = new (std::nothrow) {1}[__sdfc_count_{0}];", ident(n), ctype(d->dtype)));
    w.open(fmt::format("if (!__state->__0_{})", ident(n)));
    for (auto& [n2, d2] : persistent) w.line(persistent_free(n2, *d2));
    w.line(
        fmt::format("std::snprintf(__sdfc_init_failure, sizeof __sdfc_init_failure, \"cannot allocate persistent "
                    "transient {} (out of memory)\");",
                    n));
    if (gpu_) w.line(fmt::format("sdfc::gpu::destroy({});", kCtx));
    w.line("__sdfc_handles.remove(__state);");
    w.line("delete __state;");
    w.line("return nullptr;");
    w.close();
  }
  w.close();
  w.open("catch (const sdfc::rt::SizeError& e)");
  for (auto& [n, d] : persistent) w.line(persistent_free(n, *d));
  w.line("std::snprintf(__sdfc_init_failure, sizeof __sdfc_init_failure, \"%s\", e.what());");
  if (gpu_) w.line(fmt::format("sdfc::gpu::destroy({});", kCtx));
  w.line("__sdfc_handles.remove(__state);");
  w.line("delete __state;");
  w.line("return nullptr;");
  w.close();
  w.open("catch (...)");
  for (auto& [n, d] : persistent) w.line(persistent_free(n, *d));
  w.line(
      "std::snprintf(__sdfc_init_failure, sizeof __sdfc_init_failure, \"an exception escaped from init code or an "
      "allocation\");");
  if (gpu_) w.line(fmt::format("sdfc::gpu::destroy({});", kCtx));
  w.line("__sdfc_handles.remove(__state);");
  w.line("delete __state;");
  w.line("return nullptr;");
  w.close();
  w.line("return __state;");
  w.close();
  w.line("");

  // __dace_exit_<name>
  w.open(fmt::format("SDFC_EXPORT int __dace_exit_{}({}* __state)", name_, st));
  w.line(fmt::format("if (!__sdfc_live(__state, \"__dace_exit_{}\")) return 1;", name_));
  w.line("__sdfc_handles.remove(__state);  // from here on, every use of the handle is refused");
  if (!root_.exit_code.code.empty()) {
    w.open("");
    w.line("// exit_code of the SDFG");
    w.raw(root_.exit_code.code);
    w.close();
  }
  for (auto& code : exit_codes_) {
    w.open("");
    w.line("// exit_code of a nested SDFG");
    w.raw(code);
    w.close();
  }
  // As DaCe: the frame's and the CPU's exit_code, then the GPU target's while its streams exist.
  for (const SDFG* n : all_sdfgs()) emit_located(*n, n->target_exit_code, {"cpu", "cuda", "hip"}, "exit_code", w, true);
  if (gpu_) {
    w.line(fmt::format("sdfc::gpu::DeviceGuard __guard({});", kCtx));
    w.line(fmt::format("sdfc::gpu::wait_idle({});  // never the caller's stream: it may be gone by now", kCtx));
  }
  for (auto& [n, d] : persistent) w.line(persistent_free(n, *d));
  w.line(gpu_ ? fmt::format("int __err = __state->__sdfc_error.set || {}.error.set;", kCtx)
              : "int __err = __state->__sdfc_error.set;");
  if (root_.libraries.count("cublas")) w.line("sdfc::gpu::blas_destroy(__state->__sdfc_blas);  // before the streams");
  if (gpu_) w.line(fmt::format("sdfc::gpu::destroy({});", kCtx));
  w.line("delete __state;");
  w.line("return __err;");
  w.close();
  w.line("");

  // DaCe's external-memory pair, one per storage, with the offsets workspace-layout chose. Sizes
  // and offsets are computed in 64 bits, whatever the symbols' types.
  for (auto& [s, v] : by_storage) {
    w.open(fmt::format("SDFC_EXPORT std::size_t __dace_get_external_memory_size_{}({}* __state{})", s, st, wide_list));
    w.line("(void)__state;");
    for (auto& l : widen) w.line(l);
    // A size that overflows or is negative for these symbol values reads as SIZE_MAX: no
    // workspace is that large, so installing one and every call are refused.
    w.open("try");
    w.line(fmt::format("return {};", checked_count("the " + s + " workspace", workspace_of[s]->bytes, "1")));
    w.close();
    w.open("catch (const sdfc::rt::SizeError&)");
    w.line("return SIZE_MAX;");
    w.close();
    w.close();
    w.open(fmt::format("SDFC_EXPORT void __dace_set_external_memory_{}({}* __state, char* ptr{})", s, st, wide_list));
    w.line(fmt::format("if (!__sdfc_live(__state, \"__dace_set_external_memory_{}\")) return;", s));
    // DaCe's setter has no size to check (__sdfc_set_workspace has); the alignment it can check.
    w.open(fmt::format("if (reinterpret_cast<std::uintptr_t>(ptr) % {} != 0)", workspace_of[s]->alignment));
    w.line(fmt::format(
        "sdfc::rt::record_error(__state->__sdfc_error, \"{}: the {} workspace at %p is not aligned to {} bytes; "
        "nothing was installed\", static_cast<void*>(ptr));",
        name_, s, workspace_of[s]->alignment));
    w.line("return;");
    w.close();
    w.line(
        fmt::format("__state->__sdfc_workspace_bytes_{} = ptr ? __dace_get_external_memory_size_{}(__state{}{}) : 0;",
                    s, s, wide_args.empty() ? "" : ", ", fmt::join(wide_args, ", ")));
    for (auto& l : widen) w.line(l);
    for (auto& [n, d] : v)
      w.line(
          fmt::format("__state->__0_{} = reinterpret_cast<{}*>(ptr ? ptr + static_cast<std::size_t>({}) : nullptr);  "
                      "// offset chosen by workspace-layout",
                      ident(n), ctype(d->dtype), sym(d->workspace_offset)));
    w.close();
    w.line("");
  }

  // sdfc's checked workspace hooks: symbols come as an array of pointers (init order).
  std::vector<std::string> unpack_syms;
  for (std::size_t i = 0; i < sig.init_symbols.size(); ++i)
    unpack_syms.push_back(fmt::format("*static_cast<{}*>(syms[{}])",
                                      ctype(root_.symbol_type(sig.init_symbols[i]).value_or(DType::Int32)), i));
  std::string sym_call = unpack_syms.empty() ? "" : ", " + fmt::format("{}", fmt::join(unpack_syms, ", "));
  w.line("/// Bytes of the workspace for `storage` (0 when the program has none), with the symbol values at `syms`.");
  w.open(
      fmt::format("SDFC_EXPORT std::size_t __sdfc_workspace_size({}* __state, const char* storage, void** syms)", st));
  w.line("(void)__state; (void)storage; (void)syms;");
  if (!by_storage.empty()) {
    w.line("if (!storage) return 0;");
    if (!sig.init_symbols.empty()) w.line("if (!syms) return 0;");
  }
  for (auto& [s, v] : by_storage)
    w.line(
        fmt::format("if (std::strcmp(storage, \"{0}\") == 0) return __dace_get_external_memory_size_{0}(__state{1});",
                    s, sym_call));
  w.line("return 0;");
  w.close();
  w.line("/// Installs a workspace after checking it; returns nullptr, or why it was rejected (nothing installed).");
  w.open(
      fmt::format("SDFC_EXPORT const char* __sdfc_set_workspace({}* __state, const char* storage, void* ptr, "
                  "std::size_t bytes, void** syms)",
                  st));
  w.line("static thread_local char why[512];");
  w.line("if (!__sdfc_live(__state, \"__sdfc_set_workspace\")) return __sdfc_init_failure;");
  w.line("if (!storage) return \"the storage name is null\";");
  if (!sig.init_symbols.empty()) w.line("if (!syms) return \"the symbol values (syms) are null\";");
  for (auto& [s, v] : by_storage) {
    std::size_t align = workspace_of[s]->alignment;
    w.open(fmt::format("if (std::strcmp(storage, \"{}\") == 0)", s));
    w.line(fmt::format("std::size_t need = __dace_get_external_memory_size_{}(__state{});", s, sym_call));
    w.line("if (!ptr) return \"the workspace pointer is null\";");
    w.open("if (need == SIZE_MAX)");
    w.line("return " +
           c_string(fmt::format("the size of the {} workspace ({}) overflows or is negative for these symbol values", s,
                                print_expr(workspace_of[s]->bytes))) +
           ";");
    w.close();
    w.open("if (bytes < need)");
    w.line(
        fmt::format("std::snprintf(why, sizeof why, \"the {} workspace has %zu bytes but the program needs %zu for "
                    "these symbol values\", bytes, need);",
                    s));
    w.line("return why;");
    w.close();
    w.open(fmt::format("if (reinterpret_cast<std::uintptr_t>(ptr) % {} != 0)", align));
    w.line(
        fmt::format("std::snprintf(why, sizeof why, \"the {} workspace at %p is not aligned to {} bytes (the largest "
                    "element size)\", ptr);",
                    s, align));
    w.line("return why;");
    w.close();
    if (gpu_)
      w.line(fmt::format(
          "if (const char* bad = sdfc::gpu::check_workspace_memory({}, \"{}\", ptr, why, sizeof why)) return bad;",
          kCtx, s));
    w.line(fmt::format("__dace_set_external_memory_{}(__state, static_cast<char*>(ptr){});", s, sym_call));
    w.line("return nullptr;");
    w.close();
  }
  w.line(
      "std::snprintf(why, sizeof why, \"the program has no external workspace of storage %s\", storage ? storage : "
      "\"(null)\");");
  w.line("(void)ptr; (void)bytes; (void)syms;");
  w.line("return why;");
  w.close();

  // sdfc's hooks.
  w.line("/// Why the last __dace_init_ on this thread failed (\"\" after a successful one).");
  w.open("SDFC_EXPORT const char* __sdfc_init_error()");
  w.line("return __sdfc_init_failure;");
  w.close();
  w.line("/// The program's error; with a null handle, why the last init on this thread failed (or null).");
  w.open(fmt::format("SDFC_EXPORT const char* __sdfc_last_error({}* __state)", st));
  w.line("if (!__sdfc_handles.live(__state)) return __sdfc_init_failure[0] ? __sdfc_init_failure : nullptr;");
  if (gpu_) w.line(fmt::format("if ({0}.error.set) return {0}.error.message;", kCtx));
  w.line("return __state->__sdfc_error.set ? __state->__sdfc_error.message : nullptr;");
  w.close();
  w.open(fmt::format("SDFC_EXPORT void __sdfc_clear_error({}* __state)", st));
  w.line("if (!__sdfc_live(__state, \"__sdfc_clear_error\")) return;");
  w.line("__state->__sdfc_error = sdfc::rt::ErrorSlot();");
  if (gpu_) w.line(fmt::format("{}.error = sdfc::rt::ErrorSlot();", kCtx));
  w.close();
  if (gpu_) {
    w.line("// DaCe's GPU hooks.");
    w.open(fmt::format("SDFC_EXPORT int __dace_gpu_last_error({}* __state)", st));
    w.line(fmt::format(
        "return __sdfc_live(__state, \"__dace_gpu_last_error\") ? sdfc::gpu::dace_gpu_last_error({}) : 1;", kCtx));
    w.close();
    w.open(fmt::format("SDFC_EXPORT bool __dace_gpu_set_stream({}* __state, int id, sdfc::gpu::Stream stream)", st));
    w.line(fmt::format(
        "return __sdfc_live(__state, \"__dace_gpu_set_stream\") && sdfc::gpu::dace_gpu_set_stream({}, id, stream);",
        kCtx));
    w.close();
    w.open(fmt::format("SDFC_EXPORT void __dace_gpu_set_all_streams({}* __state, sdfc::gpu::Stream stream)", st));
    w.line(fmt::format(
        "if (__sdfc_live(__state, \"__dace_gpu_set_all_streams\")) sdfc::gpu::dace_gpu_set_all_streams({}, stream);",
        kCtx));
    w.close();
    w.line("/// Sets the caller's stream (validated; nothing changes when it is rejected): nullptr or why not.");
    w.open(
        fmt::format("SDFC_EXPORT const char* __sdfc_set_external_stream({}* __state, sdfc::gpu::Stream stream)", st));
    w.line("if (!__sdfc_live(__state, \"__sdfc_set_external_stream\")) return __sdfc_init_failure;");
    w.line(fmt::format("return sdfc::gpu::set_external_stream({}, stream);", kCtx));
    w.close();
    w.line("/// Device memory for callers that hold host data (sdfc run): allocate, free, copy (synchronous).");
    w.open("SDFC_EXPORT void* __sdfc_device_alloc(std::size_t bytes)");
    w.line("void* p = nullptr;");
    w.line("return sdfc::gpu::gpuMalloc(&p, bytes) == sdfc::gpu::kSuccess ? p : nullptr;");
    w.close();
    w.open("SDFC_EXPORT void __sdfc_device_free(void* p)");
    w.line("(void)sdfc::gpu::gpuFree(p);");
    w.close();
    w.open("SDFC_EXPORT int __sdfc_pointer_is_device(const void* p)");
    w.line("sdfc::gpu::PointerInfo info{};");
    w.line("if (sdfc::gpu::pointer_info(p, &info) != sdfc::gpu::kSuccess) return 0;");
    w.line("return info.kind == sdfc::gpu::MemoryKind::kDevice || info.kind == sdfc::gpu::MemoryKind::kManaged;");
    w.close();
    w.open("SDFC_EXPORT int __sdfc_device_copy(void* dst, const void* src, std::size_t bytes)");
    w.line("return sdfc::gpu::gpuMemcpy(dst, src, bytes, sdfc::gpu::kMemcpyDefault) == sdfc::gpu::kSuccess ? 0 : 1;");
    w.close();
  } else {
    w.line("/// A CPU program has no GPU work to order against a caller's stream: always rejected.");
    w.open(fmt::format("SDFC_EXPORT const char* __sdfc_set_external_stream({}* __state, void* stream)", st));
    w.line("(void)__state; (void)stream;");
    w.line(fmt::format(
        "return \"program {} was compiled for the CPU (--target cpu): it has no GPU work to order against a "
        "caller's stream; compile with --target cuda or hip\";",
        name_));
    w.close();
  }
  std::string info = info_json(sig, storages);
  w.line("/// The program's arguments as JSON (names, kinds, dtypes, shapes), for binding by name.");
  w.open("SDFC_EXPORT const char* __sdfc_program_info()");
  w.line(fmt::format("return {};", c_string(info)));
  w.close();
  w.line("/// Calls with arguments passed as an array of pointers to each value (DaCe's arglist order).");
  w.open("SDFC_EXPORT void* __sdfc_init(void** args)");
  std::vector<std::string> unpack_init;
  for (std::size_t i = 0; i < sig.init_symbols.size(); ++i)
    unpack_init.push_back(fmt::format("*static_cast<{}*>(args[{}])",
                                      ctype(root_.symbol_type(sig.init_symbols[i]).value_or(DType::Int32)), i));
  w.line(fmt::format("(void)args;"));
  if (!unpack_init.empty()) {
    w.open("if (!args)");
    w.line(
        "std::snprintf(__sdfc_init_failure, sizeof __sdfc_init_failure, \"__sdfc_init: the argument array is null\");");
    w.line("return nullptr;");
    w.close();
  }
  w.line(fmt::format("return __dace_init_{}({});", name_, fmt::join(unpack_init, ", ")));
  w.close();
  w.open("SDFC_EXPORT void __sdfc_call(void* state, void** args)");
  std::vector<std::string> unpack;
  for (std::size_t i = 0; i < sig.args.size(); ++i) {
    const Argument& a = sig.args[i];
    std::string t = ctype(a.dtype) + (a.by_pointer ? "*" : "");
    unpack.push_back(fmt::format("*static_cast<{}*>(args[{}])", t, i));
  }
  w.line("(void)args;");
  if (!unpack.empty()) {
    // The handle first: the arguments of a finished or foreign handle are never read.
    w.line("if (!__sdfc_live(state, \"__sdfc_call\")) return;");
    w.open("if (!args)");
    w.line("sdfc::rt::record_error(static_cast<" + st +
           "*>(state)->__sdfc_error, \"__sdfc_call: the argument array is null\");");
    w.line("return;");
    w.close();
  }
  w.line(fmt::format("__program_{}(static_cast<{}*>(state){}{});", name_, st, unpack.empty() ? "" : ", ",
                     fmt::join(unpack, ", ")));
  w.close();

  // The C header for callers.
  CodeWriter h;
  h.line(fmt::format("// C interface of the sdfc-built program \"{}\" (DaCe's ABI plus sdfc's hooks).", name_));
  h.line("#pragma once");
  h.line("#include <stddef.h>");
  h.line("#include <stdint.h>");
  h.line("#ifdef __cplusplus");
  h.line("extern \"C\" {");
  h.line("#endif");
  h.line(fmt::format("typedef void* {}Handle_t;", name_));
  h.line(fmt::format("{0}Handle_t __dace_init_{0}({1});", name_, init_params.empty() ? "void" : init_list));
  std::string cparams;
  for (auto& p : params) cparams += ", " + p;
  h.line(fmt::format("void __program_{0}({0}Handle_t handle{1});", name_, cparams));
  h.line(fmt::format("int __dace_exit_{0}({0}Handle_t handle);", name_));
  for (auto& s : storages) {
    h.line(fmt::format("size_t __dace_get_external_memory_size_{}({}Handle_t handle{}{});", s, name_,
                       init_list.empty() ? "" : ", ", init_list));
    h.line(fmt::format("void __dace_set_external_memory_{}({}Handle_t handle, char* ptr{}{});", s, name_,
                       init_list.empty() ? "" : ", ", init_list));
  }
  h.line(fmt::format("const char* __sdfc_last_error({}Handle_t handle);", name_));
  h.line(fmt::format("void __sdfc_clear_error({}Handle_t handle);", name_));
  h.line("const char* __sdfc_program_info(void);");
  h.line(fmt::format("size_t __sdfc_workspace_size({}Handle_t handle, const char* storage, void** symbols);", name_));
  h.line(
      fmt::format("const char* __sdfc_set_workspace({}Handle_t handle, const char* storage, void* ptr, size_t bytes, "
                  "void** symbols);",
                  name_));
  h.line(fmt::format(
      "const char* __sdfc_set_external_stream({}Handle_t handle, void* stream);  /* cudaStream_t / hipStream_t */",
      name_));
  h.line("void* __sdfc_init(void** symbols);");
  h.line("void __sdfc_call(void* handle, void** args);");
  h.line("#ifdef __cplusplus");
  h.line("}");
  h.line("#endif");

  GeneratedProgram p;
  p.name = name_;
  p.files.push_back({name_ + (options_.target == Target::CUDA  ? ".cu"
                              : options_.target == Target::HIP ? ".hip.cpp"
                                                               : ".cpp"),
                     w.str()});
  p.header = h.str();
  p.info_json = info;
  p.libraries.assign(root_.libraries.begin(), root_.libraries.end());
  return p;
}

}  // namespace

GeneratedProgram generate(const SDFG& sdfg, const CompileOptions& options, const std::string& file) {
  return Generator(sdfg, options, file).run();
}

}  // namespace sdfc
