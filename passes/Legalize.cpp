#include "passes/Legalize.h"

#include <fmt/format.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/Diagnostic.h"
#include "ir/Memlets.h"
#include "ir/Signature.h"
#include "ir/Walk.h"
#include "lang/CodeWriter.h"
#include "lang/PythonTasklet.h"

namespace sdfc {

namespace {

bool unsupported_dtype(DType t) {
  return t == DType::Float16;
}
bool unsupported_symbol_dtype(DType t) {
  return t == DType::Float16 || t == DType::Complex64 || t == DType::Complex128 || is_struct(t);
}

std::string dtype_advice(DType t) {
  if (is_struct(t)) return "pass its fields as symbols of their own";
  return t == DType::Float16 ? "use float32" : "pass a complex value as a scalar argument (data), not as a symbol";
}

class Legalizer {
 public:
  Legalizer(const CompileOptions& options) : options_(options) {}
  std::vector<Diagnostic> diags;

  void run(const SDFG& root) {
    program_name(root);
    persistent_sizes(root);
    walk::for_each_sdfg(root, "", [&](const SDFG& s, const std::string& ptr) { sdfg(s, ptr, &s == &root); });
    // with the rest, so that one compile names every problem (translate-python stores the texts)
    for (auto& d : check_python_tasklets(root, "")) diags.push_back(d);
  }

 private:
  const CompileOptions& options_;
  std::map<std::string, DType> structs_;  ///< struct types of the program by name

  void error(const std::string& ptr, std::string message) {
    diags.push_back(Diagnostic{"", ptr, 0, 0, std::move(message)});
  }

  void program_name(const SDFG& root) {
    // DaCe's entry points embed the name (`__program_NAME`, `__dace_init_NAME`), so any C identifier
    // works, a leading "__" included (GT4Py's `__field_operator_f`): every identifier sdfc makes of it
    // has a prefix or a suffix, and those containing "__" are reserved names only in the sense that
    // DaCe's ABI already uses them.
    if (!is_identifier(root.name))
      error("/attributes/name", fmt::format("the SDFG name \"{}\" is not a C identifier (letters, digits and '_', "
                                            "not starting with a digit); DaCe's entry points are named after it",
                                            root.name));
  }

  /// Persistent transients are allocated by `__dace_init`, which knows only the program's free symbols.
  void persistent_sizes(const SDFG& root) {
    Signature sig = signature(root);
    std::set<std::string> init(sig.init_symbols.begin(), sig.init_symbols.end());
    for (auto& [n, d] : root.arrays) {
      if (!d.transient || d.lifetime != Lifetime::Persistent) continue;
      std::set<std::string> used;
      free_symbols(d.total_size, used);
      for (auto& s : used)
        if (!init.count(s))
          error(walk::data_pointer("", n),
                fmt::format("persistent transient \"{}\" has a size that depends on \"{}\", which is not a free "
                            "symbol of the program",
                            n, s));
    }
  }

  /// A map whose range of one dimension uses the parameter of an earlier one (DaCe's GPU
  /// reductions make them): host maps and sequential maps run their dimensions as nested loops,
  /// outermost first, as DaCe does; a GPU map runs them side by side.
  void dependent_range(const Node& n, const std::string& np) {
    if (!is_gpu_schedule(n.map.schedule)) return;
    for (std::size_t k = 1; k < n.map.range.size(); ++k) {
      std::set<std::string> names;
      for (const Expr& x : {n.map.range[k].start, n.map.range[k].end, n.map.range[k].step}) free_symbols(x, names);
      for (std::size_t j = 0; j < k; ++j)
        if (names.count(n.map.params[j]))
          error(np + "/attributes/range/ranges/" + std::to_string(k),
                fmt::format("the range of parameter \"{}\" of {} map \"{}\" uses its parameter \"{}\": sdfc runs "
                            "the dimensions of a GPU map side by side, not as nested loops; make the map Sequential "
                            "or split it into two nested maps",
                            n.map.params[k], to_string(n.map.schedule), n.map.label, n.map.params[j]));
    }
  }

  void sdfg(const SDFG& s, const std::string& ptr, bool root) {
    for (auto& [n, d] : s.arrays) data(n, d, walk::data_pointer(ptr, n), root);
    for (auto& [n, t] : s.symbols)
      if (unsupported_symbol_dtype(t))
        error(
            ptr + "/attributes/symbols/" + pointer_token(n),
            fmt::format("symbol \"{}\" is {}, which sdfc does not support yet; {}", n, to_string(t), dtype_advice(t)));
    control_flow(s.root, ptr, 0);
    walk::for_each_state(s, ptr, [&](const Block& st, const std::string& sp) { state(s, st, sp); });
  }

  /// DaCe's struct dtypes (argmin/argmax's value and index): host data of the program's own, one
  /// definition per name.
  void struct_data(const std::string& n, const DataDesc& d, const std::string& dp, bool root) {
    const StructType* st = struct_of(d.dtype);
    auto [it, first] = structs_.emplace(st->name, d.dtype);
    if (!first && it->second != d.dtype)
      error(dp + "/attributes/dtype", fmt::format("data \"{}\" has struct type \"{}\", but another struct of that "
                                                  "name with other fields is in the program; rename one",
                                                  n, st->name));
    if (d.structure) {
      if (options_.target != Target::CPU)
        error(dp, fmt::format("structure \"{}\" (DaCe's Structure \"{}\"): sdfc runs structures on the CPU target "
                              "only (--target cpu)",
                              n, st->name));
      else if (d.storage != StorageType::Default && d.storage != StorageType::CPU_Heap)
        error(dp + "/attributes/storage", fmt::format("structure \"{}\" has storage {}; sdfc's structures are host "
                                                      "memory (Default or CPU_Heap)",
                                                      n, to_string(d.storage)));
      return;
    }
    if (options_.target != Target::CPU)
      error(dp + "/attributes/dtype",
            fmt::format("data \"{}\" has struct type \"{}\": sdfc runs struct dtypes on the CPU target only "
                        "(--target cpu)",
                        n, st->name));
    else if (root && !d.transient)
      error(dp + "/attributes/dtype",
            fmt::format("argument \"{}\" has struct type \"{}\": sdfc takes struct data as transients only (DaCe's "
                        "argmin/argmax keep theirs transient); pass its fields as arrays of their own",
                        n, st->name));
  }

  void data(const std::string& n, const DataDesc& d, const std::string& dp, bool root) {
    if (is_struct(d.dtype)) struct_data(n, d, dp, root);
    if (unsupported_dtype(d.dtype))
      error(dp + "/attributes/dtype", fmt::format("data \"{}\" is {}, which sdfc does not support yet; {}", n,
                                                  to_string(d.dtype), dtype_advice(d.dtype)));
    if (!d.transient) return;
    if (d.lifetime == Lifetime::Global)
      error(dp + "/attributes/lifetime",
            fmt::format("lifetime Global of \"{}\" is not supported yet; use SDFG or Persistent", n));
    if (!root && (d.lifetime == Lifetime::Persistent || d.lifetime == Lifetime::External))
      error(dp + "/attributes/lifetime",
            fmt::format("{} transient \"{}\" inside a nested SDFG: sdfc moves such a transient to the top-level "
                        "SDFG (allocated once, as DaCe does) only when no map scope encloses the nested SDFG and "
                        "its shape depends on the program's arguments alone; here it cannot. Make it Scope or SDFG "
                        "lifetime, or declare it in the top-level SDFG",
                        to_string(d.lifetime), n));
  }

  /// Break and continue need a LoopRegion of their own SDFG around them.
  void control_flow(const Block& b, const std::string& ptr, int loops) {
    if ((b.kind == BlockKind::Break || b.kind == BlockKind::Continue) && loops == 0)
      error(ptr, fmt::format("{} block \"{}\" is not inside a LoopRegion",
                             b.kind == BlockKind::Break ? "break" : "continue", b.label));
    int inner = loops + (b.kind == BlockKind::Loop ? 1 : 0);
    for (std::size_t i = 0; i < b.blocks.size(); ++i) control_flow(*b.blocks[i], walk::block_pointer(ptr, i), inner);
    for (std::size_t k = 0; k < b.branches.size(); ++k)
      control_flow(*b.branches[k].second, walk::branch_pointer(ptr, k), inner);
  }

  void connectors(const Node& n, const std::string& np) {
    for (auto* list : {&n.in_connectors, &n.out_connectors}) {
      const char* side = list == &n.in_connectors ? "in_connectors" : "out_connectors";
      for (auto& c : *list) {
        std::string cp = np + "/attributes/" + side + "/" + pointer_token(c.name);
        if (c.dtype && unsupported_dtype(*c.dtype))
          error(cp, fmt::format("connector \"{}\" of {} \"{}\" is {}, which sdfc does not support yet; {}", c.name,
                                to_string(n.kind), n.label, to_string(*c.dtype), dtype_advice(*c.dtype)));
        bool named_in_code = n.kind == NodeKind::Tasklet ||
                             (n.kind == NodeKind::MapEntry && side[0] == 'i' && is_dynamic_range_input(c.name));
        if (named_in_code && !is_identifier(c.name))
          error(cp, fmt::format("connector name \"{}\" is not a C identifier", c.name));
      }
    }
  }

  void state(const SDFG& s, const Block& st, const std::string& sp) {
    for (std::size_t i = 0; i < st.edges.size(); ++i) {
      EdgeRole role = edge_role(st, st.edges[i]);
      if (role == EdgeRole::Unsupported) error(walk::edge_pointer(st, sp, i), edge_role_problem(st, st.edges[i]));
      if (role == EdgeRole::Copy || role == EdgeRole::ScopeCopyIn || role == EdgeRole::ScopeCopyOut)
        copy(s, st, st.edges[i], walk::edge_pointer(st, sp, i));
    }
    for (std::size_t i = 0; i < st.nodes.size(); ++i) {
      const Node& n = *st.nodes[i];
      std::string np = walk::node_pointer(st, sp, i);
      connectors(n, np);
      if (n.kind == NodeKind::MapEntry && is_gpu_schedule(n.map.schedule) && options_.target == Target::CPU)
        error(np + "/attributes/schedule", fmt::format("map \"{}\" has schedule {}, which needs --target cuda or hip",
                                                       n.map.label, to_string(n.map.schedule)));
      if (n.kind == NodeKind::MapEntry) dependent_range(n, np);
      if (n.kind == NodeKind::Tasklet) output_fan_out(st, static_cast<int>(i), n, np);
      if (n.kind == NodeKind::Tasklet) callback_in_kernel(s, st, n, np);
      if (n.kind == NodeKind::NestedSDFG && n.sdfg) nested(s, st, static_cast<int>(i), n, np);
      if (n.kind == NodeKind::Access) transient_structure(s, n.data, np);
    }
    for (std::size_t i = 0; i < st.edges.size(); ++i)
      transient_structure(s, st.edges[i].memlet.data, walk::edge_pointer(st, sp, i) + "/attributes/data");
  }

  /// A transient structure is its members (SDFG.h): nothing may use the structure itself.
  void transient_structure(const SDFG& s, const std::string& name, const std::string& ptr) {
    const DataDesc* d = name.empty() ? nullptr : s.find_data(name);
    if (d && d->structure && d->transient)
      error(ptr, fmt::format("transient structure \"{}\" is used as a whole; sdfc allocates a transient structure's "
                             "members as containers of their own and supports using them by name (\"{}.{}\"), not "
                             "the structure itself (pass its members instead)",
                             name, name, struct_of(d->dtype)->fields.front().first));
  }

  /// A copy between the containers at the ends of an edge's memlet path: both subsets known; one
  /// that reshapes (moves a different number of dimensions on each side) only on the host, with the
  /// same number of elements on both sides (paired in C order); through the GPU runtime (a copy
  /// with a stream), one dtype and no negative step or stride.
  void copy(const SDFG& s, const Block& st, const DataEdge& e, const std::string& ep) {
    EdgeSubsets ends = edge_subsets(s, st, e);
    if (!ends.error.empty()) return error(ep + "/attributes/data", ends.error);
    auto ds = moved_dimensions(ends.src), dd = moved_dimensions(ends.dst);
    if (ds.size() != dd.size()) {
      auto on_gpu = [&](const std::string& name) {
        const DataDesc* d = s.find_data(name);
        return d && is_gpu_storage(d->storage);
      };
      if (e.stream >= 0 || on_gpu(ends.src_data) || on_gpu(ends.dst_data))
        return error(ep, fmt::format("copy from \"{}\" to \"{}\" reshapes the data ({} to {} dimensions) and involves "
                                     "GPU memory; not supported yet (reshape on the host, or give both sides the same "
                                     "moved dimensions)",
                                     ends.src_data, ends.dst_data, ds.size(), dd.size()));
      Expr n_src = make_int(1), n_dst = make_int(1);
      for (auto k : ds) n_src = make_binary(BinOp::Mul, n_src, range_extent(ends.src[k]));
      for (auto k : dd) n_dst = make_binary(BinOp::Mul, n_dst, range_extent(ends.dst[k]));
      if (!same_value(n_src, n_dst))
        return error(
            ep, fmt::format("copy from \"{}\" to \"{}\" reshapes {} element(s) into {}: sdfc copies a "
                            "reshape only where both sides have the same number of elements",
                            ends.src_data, ends.dst_data, print_expr(simplify(n_src)), print_expr(simplify(n_dst))));
      return;
    }
    const DataDesc* sd = s.find_data(ends.src_data);
    const DataDesc* dd_desc = s.find_data(ends.dst_data);
    if (e.stream < 0 || !sd || !dd_desc) return;
    if (sd->dtype != dd_desc->dtype)
      return error(ep, fmt::format("copy from \"{}\" to \"{}\" changes the dtype", ends.src_data, ends.dst_data));
    for (std::size_t i = 0; i < ds.size(); ++i)
      for (const Expr& x : {ends.src[ds[i]].step, ends.dst[dd[i]].step, sd->strides[ds[i]], dd_desc->strides[dd[i]]})
        if (auto v = as_constant(simplify(x)); v && *v <= 0)
          return error(ep, fmt::format("copy from \"{}\" to \"{}\" runs backwards (a negative step or stride) and "
                                       "involves GPU memory; not supported yet",
                                       ends.src_data, ends.dst_data));
  }

  /// A nested SDFG's connectors are all connected to data it declares, and every symbol it uses
  /// is mapped or a symbol of the SDFG around it.
  void nested(const SDFG& s, const Block& st, int id, const Node& n, const std::string& np) {
    const SDFG& inner = *n.sdfg;
    for (auto* list : {&n.in_connectors, &n.out_connectors})
      for (auto& c : *list) {
        const DataEdge* e = nullptr;
        for (auto& x : st.edges) {
          bool in = list == &n.in_connectors && x.dst == id && x.dst_conn == c.name;
          bool out = list == &n.out_connectors && x.src == id && x.src_conn == c.name;
          if ((in || out) && !e) e = &x;
        }
        if (!e || !inner.find_data(c.name) || e->memlet.data.empty())
          error(np, fmt::format("connector \"{}\" of nested SDFG \"{}\" is not connected to data", c.name, inner.name));
      }
    std::set<std::string> mapped;
    for (auto& [k, v] : n.symbol_mapping) mapped.insert(k);
    for (auto& name : free_symbols(inner))
      if (!mapped.count(name) && !s.symbol_type(name) && !s.find_callback(name))
        error(np + "/attributes/symbol_mapping",
              fmt::format("nested SDFG \"{}\" uses symbol \"{}\", which its symbol mapping does not define", inner.name,
                          name));
  }

  /// A callback is a host function: a kernel cannot call it.
  void callback_in_kernel(const SDFG& s, const Block& st, const Node& n, const std::string& np) {
    int gpu = n.scope_entry;
    while (gpu >= 0 && !is_gpu_schedule(st.node(gpu).map.schedule)) gpu = st.node(gpu).scope_entry;
    if (gpu < 0) return;
    for (auto& id : callbacks_called(s, n))
      error(np + "/attributes/code",
            fmt::format("tasklet \"{}\" calls callback \"{}\" inside GPU map \"{}\"; a callback runs on the host: "
                        "call it outside the GPU map, or give the map a CPU schedule",
                        n.label, id, st.node(gpu).map.label));
  }

  /// Only an output written by value after the tasklet can be written to several edges.
  void output_fan_out(const Block& st, int id, const Node& n, const std::string& np) {
    for (auto& out : n.out_connectors) {
      std::vector<const DataEdge*> es;
      for (auto& e : st.edges)
        if (e.src == id && e.src_conn && *e.src_conn == out.name) es.push_back(&e);
      if (es.size() < 2 || es[0]->memlet.data.empty() || !es[0]->memlet.subset) continue;
      const Range& r = *es[0]->memlet.subset;
      if (output_binding(out, es[0]->memlet, r) == ConnectorBinding::Value) continue;
      bool single = true;
      for (auto& d : r) single &= equal(simplify(d.start), simplify(d.end));
      error(np + "/attributes/out_connectors/" + pointer_token(out.name),
            fmt::format("output connector \"{}\" of tasklet \"{}\" has {} edges but binds a {}; only a "
                        "single-element output may fan out to several edges",
                        out.name, n.label, es.size(), single ? "dynamic reference" : "pointer"));
    }
  }
};

}  // namespace

void legalize(SDFG& sdfg, const CompileOptions& options) {
  Legalizer l(options);
  l.run(sdfg);
  if (!l.diags.empty()) throw UserError(std::move(l.diags));
}

}  // namespace sdfc
