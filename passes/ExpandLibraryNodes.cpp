#include "passes/ExpandLibraryNodes.h"

#include "ir/Walk.h"
#include "passes/LibraryExpansion.h"

namespace sdfc {
namespace library {

const std::vector<Expander::LibraryClass>& Expander::classes() {
  static const std::vector<LibraryClass> list = {
      {"dace.libraries.standard.nodes.reduce.Reduce", &Expander::reduce},
      {"dace.libraries.blas.nodes.matmul.MatMul", &Expander::matmul},
      {"dace.libraries.blas.nodes.batched_matmul.BatchedMatMul", &Expander::batched_matmul_node},
      {"dace.libraries.blas.nodes.gemm.Gemm", &Expander::gemm_node},
      {"dace.libraries.blas.nodes.gemv.Gemv", &Expander::gemv_node},
      {"dace.libraries.blas.nodes.dot.Dot", &Expander::dot_node},
      {"dace.libraries.blas.nodes.ger.Ger", &Expander::ger_node},
      {"dace.libraries.linalg.nodes.transpose.Transpose", &Expander::transpose},
      {"dace.libraries.linalg.nodes.ttranspose.TensorTranspose", &Expander::tensor_transpose},
      {"dace.libraries.linalg.nodes.tensordot.TensorDot", &Expander::tensor_dot},
      {"dace.libraries.blas.nodes.einsum.Einsum", &Expander::einsum},
      {"dace.libraries.linalg.nodes.inv.Inv", &Expander::inv},
      {"dace.libraries.linalg.nodes.solve.Solve", &Expander::solve},
      {"dace.libraries.linalg.nodes.cholesky.Cholesky", &Expander::cholesky},
  };
  return list;
}

void Expander::sdfg(SDFG& s, const std::string& ptr, bool in_map) {
  walk::for_each_state(s, ptr, [&](Block& b, const std::string& sp) {
    for (int id = 0; id < static_cast<int>(b.nodes.size()); ++id) {
      Node& n = b.node(id);
      std::string np = walk::node_pointer(sp, static_cast<std::size_t>(id));
      bool scoped = in_map || n.scope_entry >= 0;
      if (n.kind == NodeKind::NestedSDFG) sdfg(*n.sdfg, walk::nested_sdfg_pointer(np), scoped);
      if (n.kind == NodeKind::Library) expand(Site{s, b, id, np, scoped});
    }
  });
}

void Expander::expand(const Site& x) {
  const Node& n = x.node();
  std::string names;
  for (auto& c : classes()) {
    if (n.classpath == c.classpath) return (this->*c.expand)(x);
    std::string path = c.classpath;
    names += (names.empty() ? "" : ", ") + path.substr(path.rfind('.') + 1);
  }
  refuse(x.ptr + "/classpath",
         fmt::format("unsupported library node \"{}\" of class {}; sdfc expands {} (other classes: expand them in "
                     "DaCe first, sdfg.expand_library_nodes())",
                     n.label, n.classpath, names));
}

/// The edge on connector `conn` into (`in`) or out of the node; null when there is none and the
/// connector is optional.
DataEdge* Expander::find_edge(const Site& x, const std::string& conn, bool in, bool optional) {
  Block& st = x.state;
  const std::string& label = x.node().label;
  DataEdge* found = nullptr;
  // DaCe writes some library nodes without connectors; their one edge in and one edge out
  // (with no connector) are then `_in` and `_out`.
  for (auto& e : st.edges) {
    bool named = in ? e.dst == x.id && e.dst_conn == conn : e.src == x.id && e.src_conn == conn;
    bool unnamed =
        !optional && (in ? e.dst == x.id && !e.dst_conn : e.src == x.id && !e.src_conn) && !e.memlet.data.empty();
    if (named || unnamed) {
      if (found || e.memlet.data.empty())
        refuse(x.ptr,
               fmt::format("library node \"{}\" needs exactly one memlet with data on connector {}", label, conn));
      found = &e;
    }
  }
  if (!found && optional) return nullptr;
  if (!found) refuse(x.ptr, fmt::format("library node \"{}\" has no memlet on connector {}", label, conn));
  if (found->memlet.other_subset)
    refuse(x.ptr, fmt::format("library node \"{}\": a memlet with other_subset on connector {} is not supported", label,
                              conn));
  return found;
}

/// The operand on connector `conn`; nullopt when an optional one has no memlet.
std::optional<Operand> Expander::operand(const Site& x, const std::string& conn, bool in, bool optional) {
  DataEdge* e = find_edge(x, conn, in, optional);
  if (!e) return std::nullopt;
  Operand op;
  op.edge = e;
  op.desc = x.sdfg.find_data(e->memlet.data);
  if (!op.desc)
    refuse(x.ptr, fmt::format("{} reads or writes unknown data \"{}\" on connector {}", x.who(), e->memlet.data, conn));
  if (!in && e->memlet.wcr)
    refuse(x.ptr, fmt::format("{}: a write-conflict resolution on its output ({}) is not supported; write the "
                              "result to a transient and combine it in a map",
                              x.who(), conn));
  const Range& r = op.subset = e->memlet.subset ? *e->memlet.subset : full_range(*op.desc);
  if (r.size() != op.desc->strides.size())
    refuse(x.ptr, fmt::format("{}: the memlet on connector {} has {} dimensions, its data \"{}\" {}", x.who(), conn,
                              r.size(), e->memlet.data, op.desc->strides.size()));
  for (std::size_t k = 0; k < r.size(); ++k) {
    op.extent.push_back(range_extent(r[k]));
    op.stride.push_back(simplify(make_binary(BinOp::Mul, op.desc->strides[k], r[k].step)));
    if (as_constant(op.extent.back()) != 1) op.moving.push_back(k);
  }
  return op;
}

/// A coefficient property (`alpha`, `beta`): a number, or a symbolic expression as text.
Coefficient Expander::coefficient(const Site& x, const char* key, double fallback) {
  const Json& props = x.node().extra;
  auto it = props.find(key);
  if (it == props.end() || it->is_null()) return {fmt::format("{}", fallback), fallback, nullptr};
  if (it->is_number()) return {it->dump(), it->get<double>(), nullptr};
  std::string where = x.ptr + "/attributes/" + key;
  if (!it->is_string())
    refuse(where, fmt::format("{}: expected a number for {} but found {}", x.who(), key, it->dump()));
  Expr e;
  try {
    e = simplify(parse_expr(it->get<std::string>(), x.sdfg.dialect()));
  } catch (const ExprSyntaxError&) {
    refuse(where, fmt::format("{}: {} \"{}\" is not a real number or symbolic expression (complex coefficients "
                              "are not supported)",
                              x.who(), key, it->get<std::string>()));
  }
  if (e->kind == ExprKind::Int) return {print_expr(e), static_cast<double>(e->ival), nullptr};
  if (e->kind == ExprKind::Float) return {print_expr(e), e->fval, nullptr};
  return {print_expr(e), std::nullopt, e};
}

bool Expander::flag(const Site& x, const char* key) {
  auto it = x.node().extra.find(key);
  if (it == x.node().extra.end() || it->is_null()) return false;
  if (!it->is_boolean())
    refuse(x.ptr + "/attributes/" + key,
           fmt::format("{}: expected true or false for {} but found {}", x.who(), key, it->dump()));
  return it->get<bool>();
}

/// The schedule of an expansion's maps over output elements (its sums are sequential loops inside
/// them). Inside a map: Default, which normalize makes a sequential loop of the enclosing map's
/// iteration or GPU thread. Outside: Default (normalize: CPU_Multicore) for host data; a GPU
/// kernel (GPU_Device) for GPU data on a GPU target; host and GPU data together are refused.
ScheduleType Expander::schedule(const Site& x, const std::vector<const Operand*>& ops) {
  if (x.in_map || options_.target == Target::CPU) return ScheduleType::Default;
  std::string gpu, host;
  for (const Operand* o : ops) {
    std::string& list = is_gpu_storage(o->desc->storage) ? gpu : host;
    list += (list.empty() ? "" : ", ") + o->edge->memlet.data;
  }
  if (gpu.empty()) return ScheduleType::Default;
  if (!host.empty())
    refuse(x.ptr, fmt::format("{} outside any map reads or writes GPU memory ({}) and host memory ({}) on a GPU "
                              "target; copy its operands to one side first",
                              x.who(), gpu, host));
  return ScheduleType::GPU_Device;
}

namespace {

/// For each output dimension of a Reduce node, the input index it takes once its axes (all when
/// absent) are reduced (`__i<k>`, or "0" for a dimension of extent 1 that keeps no input dimension).
struct ReduceShape {
  std::vector<std::string> out_index;
};

ReduceShape reduce_shape(const Node& n, const std::string& np, const Range& rin, const Range& rout,
                         const std::vector<Expr>& ext_out) {
  const Json& props = n.extra;
  ReduceShape r;
  // Axes: all of them when absent.
  std::set<std::size_t> axes;
  auto ax = props.find("axes");
  if (ax == props.end() || ax->is_null()) {
    for (std::size_t k = 0; k < rin.size(); ++k) axes.insert(k);
  } else {
    if (!ax->is_array()) refuse(np + "/attributes/axes", "expected a list of axes");
    for (auto& a : *ax) {
      if (!a.is_number_integer() || a.get<std::int64_t>() < 0 || a.get<std::size_t>() >= rin.size())
        refuse(np + "/attributes/axes", fmt::format("axis {} of Reduce \"{}\" is outside its {}-dimensional input",
                                                    a.dump(), n.label, rin.size()));
      axes.insert(a.get<std::size_t>());
    }
  }
  std::vector<std::size_t> kept;
  for (std::size_t k = 0; k < rin.size(); ++k)
    if (!axes.count(k)) kept.push_back(k);
  // Which input index each output dimension takes ("" = 0).
  std::vector<std::string>& out_index = r.out_index;
  out_index.assign(rout.size(), "0");
  if (rout.size() == kept.size()) {
    for (std::size_t j = 0; j < kept.size(); ++j) out_index[j] = fmt::format("__i{}", kept[j]);
  } else if (rout.size() == rin.size()) {  // keepdims
    for (std::size_t k : kept) out_index[k] = fmt::format("__i{}", k);
  } else {
    std::vector<std::size_t> moving;
    for (std::size_t k = 0; k < rout.size(); ++k)
      if (as_constant(ext_out[k]) != 1) moving.push_back(k);
    if (moving.size() != kept.size())
      refuse(np, fmt::format("Reduce \"{}\": cannot pair the {} kept input dimension(s) with its {}-dimensional output",
                             n.label, kept.size(), rout.size()));
    for (std::size_t j = 0; j < kept.size(); ++j) out_index[moving[j]] = fmt::format("__i{}", kept[j]);
  }

  return r;
}

}  // namespace

void Expander::reduce(const Site& x) {
  SDFG& s = x.sdfg;
  const std::string& np = x.ptr;
  Node& n = x.node();
  const Json& props = n.extra;
  auto wcr_it = props.find("wcr");
  if (wcr_it == props.end() || !wcr_it->is_string())
    refuse(np + "/attributes/wcr", fmt::format("Reduce \"{}\" has no write-conflict lambda (wcr)", n.label));
  auto lambda = split_lambda(wcr_it->get<std::string>());
  if (lambda.empty())
    refuse(np + "/attributes/wcr", fmt::format("Reduce \"{}\": expected a lambda of two arguments, found \"{}\"",
                                               n.label, wcr_it->get<std::string>()));
  // Without an identity the reduction continues from what the output holds (DaCe's pure
  // expansion: no initialization, the lambda applied to the output's values).
  auto id_it = props.find("identity");
  std::optional<std::string> identity;
  if (id_it != props.end() && !id_it->is_null())
    identity = id_it->is_string() ? id_it->get<std::string>() : id_it->dump();
  DataEdge& in = *find_edge(x, "_in", true, false);
  DataEdge& out = *find_edge(x, "_out", false, false);
  const DataDesc* in_desc = s.find_data(in.memlet.data);
  const DataDesc* out_desc = s.find_data(out.memlet.data);
  if (!in_desc || !out_desc) refuse(np, fmt::format("Reduce \"{}\" reads or writes unknown data", n.label));
  // Inside a map its loops are sequential, in the map's thread. Outside any map on GPU data (both
  // operands: DaCe's frontend puts np.sum and np.max of GPU arrays there) it becomes two kernels:
  // the identity into every output element, then one thread per input element applying the
  // lambda to its output element as a write-conflict resolution (lower-wcr makes it an atomic,
  // outline-kernels may add it up over rows or combine it in a warp).
  const bool gpu_in = is_gpu_storage(in_desc->storage), gpu_out = is_gpu_storage(out_desc->storage);
  const bool on_gpu = !x.in_map && options_.target != Target::CPU && (gpu_in || gpu_out);
  if (on_gpu && gpu_in != gpu_out)
    refuse(np, fmt::format("Reduce \"{}\" outside any map reads {} memory and writes {} memory; copy both "
                           "operands to one side first",
                           n.label, gpu_in ? "GPU" : "host", gpu_out ? "GPU" : "host"));
  const ScheduleType schedule = on_gpu ? ScheduleType::GPU_Device : ScheduleType::Sequential;
  Range rin = in.memlet.subset ? *in.memlet.subset : full_range(*in_desc);
  Range rout = out.memlet.subset ? *out.memlet.subset : full_range(*out_desc);
  std::vector<Expr> ext_in, ext_out;
  for (auto& d : rin) ext_in.push_back(range_extent(d));
  for (auto& d : rout) ext_out.push_back(range_extent(d));
  ReduceShape shape = reduce_shape(n, np, rin, rout, ext_out);
  const std::vector<std::string>& out_index = shape.out_index;

  // The nested SDFG: _in and _out view the outer subsets (their strides, stepped).
  auto inner = std::make_unique<SDFG>();
  inner->name = fmt::format("reduce_{}", counter_++);
  inner->root.type_name = "SDFG";
  auto view = [](const DataDesc& outer, const Range& r, const std::vector<Expr>& ext) {
    DataDesc d;
    d.kind = DataKind::Array;
    d.dtype = outer.dtype;
    d.storage = outer.storage;
    d.shape = ext;
    for (std::size_t k = 0; k < r.size(); ++k)
      d.strides.push_back(simplify(make_binary(BinOp::Mul, outer.strides.at(k), r[k].step)));
    d.total_size = product(ext);
    d.offset.assign(ext.size(), make_int(0));
    return d;
  };
  inner->arrays.emplace_back("_in", view(*in_desc, rin, ext_in));
  inner->arrays.emplace_back("_out", view(*out_desc, rout, ext_out));
  std::set<std::string> syms;
  for (auto& [name, d] : inner->arrays) {
    for (auto& x : d.shape) free_symbols(x, syms);
    for (auto& x : d.strides) free_symbols(x, syms);
  }
  for (auto& sym : syms) {
    inner->symbols.emplace_back(sym, s.symbol_type(sym).value_or(DType::Int64));
    n.symbol_mapping.emplace_back(sym, make_symbol(sym));
  }
  auto range_text = [](const std::vector<Expr>& ext, std::size_t k) { return "0:" + plain(ext[k]); };
  auto all = [&](const char* prefix, std::size_t rank) {
    std::string t;
    for (std::size_t k = 0; k < rank; ++k) t += fmt::format("{}{}{}", k ? ", " : "", prefix, k);
    return t;
  };
  auto add_state = [&](const std::string& label) {
    auto b = std::make_unique<Block>(BlockKind::State);
    b->type_name = "SDFGState";
    b->label = label;
    inner->root.blocks.push_back(std::move(b));
    return StateBuilder(*inner, *inner->root.blocks.back());
  };
  // 1. every output element = identity
  if (identity) {
    StateBuilder b = add_state("init");
    std::vector<std::string> params, ranges;
    for (std::size_t k = 0; k < ext_out.size(); ++k) {
      params.push_back(fmt::format("__o{}", k));
      ranges.push_back(range_text(ext_out, k));
    }
    if (params.empty()) {
      params.push_back("__o0");
      ranges.push_back("0:1");
    }
    auto [entry, exit] = b.map("init", params, ranges, schedule);
    int t = b.tasklet("identity", {}, {"__out"}, "__out = " + *identity, Language::Python, entry);
    int o = b.access("_out");
    b.edge(entry, "", t, "", "", "");
    b.edge(t, "__out", exit, "IN__out", "_out", ext_out.empty() ? "0" : all("__o", ext_out.size()));
    b.edge(exit, "OUT__out", o, "", "_out", "");
  }
  // 2. out[kept] = lambda(out[kept], in[i]) over the input, in C order
  {
    StateBuilder b = add_state("reduce");
    std::vector<std::string> params, ranges;
    for (std::size_t k = 0; k < ext_in.size(); ++k) {
      params.push_back(fmt::format("__i{}", k));
      ranges.push_back(range_text(ext_in, k));
    }
    auto [entry, exit] = b.map("reduce", params, ranges, schedule);
    const std::string& acc = lambda[0];
    const std::string& val = lambda[1];
    std::string o = join(out_index);
    // On the GPU, threads in parallel: the lambda becomes the output's write-conflict resolution.
    int t = on_gpu ? b.tasklet("combine", {val}, {"__out"}, "__out = " + val, Language::Python, entry)
                   : b.tasklet("combine", {acc, val}, {"__out"}, "__out = " + lambda[2], Language::Python, entry);
    int src = b.access("_in"), prev = on_gpu ? -1 : b.access("_out"), dst = b.access("_out");
    b.edge(src, "", entry, "IN__in", "_in", "");
    if (!on_gpu) b.edge(prev, "", entry, "IN__acc", "_out", "");
    b.edge(entry, "OUT__in", t, val, "_in", all("__i", ext_in.size()));
    if (!on_gpu) b.edge(entry, "OUT__acc", t, acc, "_out", o);
    b.edge(t, "__out", exit, "IN__out", "_out", o, on_gpu ? wcr_it->get<std::string>() : "");
    b.edge(exit, "OUT__out", dst, "", "_out", "", on_gpu ? wcr_it->get<std::string>() : "");
  }
  if (identity) {
    InterstateEdge e;
    e.src = 0;
    e.dst = 1;
    inner->root.cf_edges.push_back(e);
  }
  inner->root.start_block = 0;

  // The nested SDFG's arguments are the connectors _in and _out.
  in.dst_conn = "_in";
  out.src_conn = "_out";
  if (!n.find_in("_in")) n.in_connectors.push_back({"_in", std::nullopt});
  if (!n.find_out("_out")) n.out_connectors.push_back({"_out", std::nullopt});
  n.kind = NodeKind::NestedSDFG;
  n.sdfg = std::move(inner);
  n.classpath.clear();
  n.extra = Json::object();
}

}  // namespace library

using library::Expander;

namespace {

/// CPP tasklets of library nodes DaCe expanded itself into CBLAS calls (auto_optimize picks its
/// OpenBLAS or MKL implementation: `cblas_dgemm(CblasColMajor, ...)`) carry DaCe's environment:
/// the program then includes <cblas.h> and links the BLAS library, as sdfc's own vendor calls do.
bool uses_dace_cblas(const Node& n) {
  auto envs = n.extra.find("environments");
  if (n.kind != NodeKind::Tasklet || envs == n.extra.end() || !envs->is_array()) return false;
  for (auto& e : *envs) {
    if (!e.is_string()) continue;
    std::string name = e.get<std::string>();
    if (name == "dace.libraries.blas.environments.openblas.OpenBLAS" ||
        name == "dace.libraries.blas.environments.intel_mkl.IntelMKL")
      return true;
  }
  return false;
}

}  // namespace

void expand_library_nodes(SDFG& sdfg, const CompileOptions& options) {
  sdfg.libraries.clear();
  Expander(options, sdfg.libraries).sdfg(sdfg, "", false);
  walk::for_each_sdfg(sdfg, "", [&](const SDFG& s, const std::string& ptr) {
    walk::for_each_block(s.root, ptr, [&](const Block& b, const std::string&) {
      for (auto& n : b.nodes)
        if (uses_dace_cblas(*n)) sdfg.libraries.insert("cblas");
    });
  });
}

}  // namespace sdfc
