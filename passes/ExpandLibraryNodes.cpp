#include "passes/ExpandLibraryNodes.h"

#include <fmt/format.h>

#include <cctype>
#include <set>

#include "ir/Builder.h"
#include "ir/Diagnostic.h"
#include "ir/Memlets.h"

namespace sdfc {
namespace {

[[noreturn]] void refuse(const std::string& ptr, const std::string& what) {
  throw UserError(Diagnostic{"", ptr, 0, 0, what});
}

/// `(lambda x, y: body)` -> {x, y, body}; empty on anything else.
std::vector<std::string> split_lambda(std::string text) {
  auto trim = [](std::string s) {
    std::size_t a = s.find_first_not_of(" \t\n"), b = s.find_last_not_of(" \t\n");
    return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
  };
  text = trim(text);
  while (text.size() > 2 && text.front() == '(' && text.back() == ')') text = trim(text.substr(1, text.size() - 2));
  if (text.rfind("lambda", 0) != 0) return {};
  std::size_t colon = text.find(':');
  if (colon == std::string::npos) return {};
  std::string params = text.substr(6, colon - 6);
  std::size_t comma = params.find(',');
  if (comma == std::string::npos) return {};
  std::string a = trim(params.substr(0, comma)), b = trim(params.substr(comma + 1));
  if (a.empty() || b.empty()) return {};
  return {a, b, trim(text.substr(colon + 1))};
}

std::string plain(const Expr& e) {
  return print_expr(simplify(e));
}

std::string join(const std::vector<std::string>& v) {
  std::string t;
  for (std::size_t k = 0; k < v.size(); ++k) t += (k ? ", " : "") + v[k];
  return t;
}

/// True when `a` and `b` provably differ: their difference simplifies to a constant other than 0
/// (symbolic sizes that may agree are accepted, as DaCe accepts them with a warning).
bool differ(const Expr& a, const Expr& b) {
  auto d = as_constant(simplify(make_binary(BinOp::Sub, a, b)));
  return d && *d != 0;
}

/// A library node and where it is: its state, id, JSON pointer, and whether it runs inside a map
/// scope (a GPU kernel's thread or one iteration of a CPU map).
struct Site {
  SDFG& sdfg;
  Block& state;
  int id;
  std::string ptr;
  bool in_map;

  Node& node() const { return state.node(id); }
  /// `MatMul "_MatMult_"`: the class's last name and the node's label, for messages.
  std::string who() const {
    const std::string& c = node().classpath;
    return fmt::format("{} \"{}\"", c.substr(c.rfind('.') + 1), node().label);
  }
};

/// One operand of a library node: the memlet on its connector, the data it moves, and the
/// dimensions of the memlet's subset.
struct Operand {
  DataEdge* edge = nullptr;
  const DataDesc* desc = nullptr;
  Range subset;                      ///< the memlet's (the whole data when it has none)
  std::vector<Expr> extent, stride;  ///< per dimension of the subset; strides in elements, step included
  std::vector<std::size_t> moving;   ///< the dimensions whose extent is not the constant 1 (DaCe's squeeze)

  /// The rank DaCe dispatches on: the number of moving dimensions.
  std::size_t rank() const { return moving.size(); }
  /// The dimensions an array of the nested SDFG keeps: the moving ones (squeeze) or all.
  std::vector<std::size_t> dims(bool squeeze) const {
    if (squeeze) return moving;
    std::vector<std::size_t> all(extent.size());
    for (std::size_t k = 0; k < all.size(); ++k) all[k] = k;
    return all;
  }
  std::vector<Expr> shape(bool squeeze) const {
    std::vector<Expr> s;
    for (std::size_t k : dims(squeeze)) s.push_back(extent[k]);
    return s;
  }
};

/// A scalar property (alpha, beta): its Python text for a tasklet and its value when constant.
struct Coefficient {
  std::string text;
  std::optional<double> value;
  Expr expr;  ///< null for numbers

  bool is(double v) const { return value && *value == v; }
  /// `text * rest`, parenthesized where the text is an expression.
  std::string times(const std::string& rest) const { return (value ? text : "(" + text + ")") + " * " + rest; }
};

/// Map parameters with their ranges ("0:N").
struct Loops {
  std::vector<std::string> params, ranges;
};

/// A tasklet's access to one element: its connector, the nested SDFG's array, and one index per
/// dimension (a map parameter or a constant).
struct Access {
  std::string conn, array;
  std::vector<std::string> index;

  std::string element() const { return array + "[" + join(index) + "]"; }
  /// The subset the access covers while the parameters of `loops` run over their ranges.
  std::string cover(const std::vector<const Loops*>& loops) const {
    std::vector<std::string> out;
    for (const std::string& i : index) {
      std::string r = i;
      for (const Loops* l : loops)
        for (std::size_t p = 0; p < l->params.size(); ++p)
          if (l->params[p] == i) r = l->ranges[p];
      out.push_back(r);
    }
    return join(out);
  }
};

/// The nested SDFG that replaces one library node (DaCe's "pure" expansion): its arrays are the
/// node's operands (each the memlet's subset of the outer data, with the outer strides), its
/// states run one after the other. finish() puts it in the node's place on the same edges.
class Expansion {
 public:
  Expansion(const Site& site, const std::string& name) : site_(site), inner_(std::make_unique<SDFG>()) {
    inner_->name = name;
  }

  /// The array `name` for operand `op`: all dimensions of the subset or (squeeze) the moving ones.
  void bind(const std::string& name, Operand& op, bool input, bool squeeze) {
    DataDesc d;
    d.kind = DataKind::Array;
    d.dtype = op.desc->dtype;
    d.storage = op.desc->storage;
    for (std::size_t k : op.dims(squeeze)) {
      d.shape.push_back(op.extent[k]);
      d.strides.push_back(op.stride[k]);
    }
    if (d.shape.empty()) {  // one element (a dot product's result)
      d.shape = {make_int(1)};
      d.strides = {make_int(1)};
    }
    // the elements it spans (a strided column: 1 + (N - 1) * M), as DaCe sizes views
    d.total_size = make_int(1);
    for (std::size_t k = 0; k < d.shape.size(); ++k)
      d.total_size =
          make_binary(BinOp::Add, d.total_size,
                      make_binary(BinOp::Mul, make_binary(BinOp::Sub, d.shape[k], make_int(1)), d.strides[k]));
    d.total_size = simplify(d.total_size);
    std::vector<Expr> c_order = c_order_strides(d.shape);
    bool dense = true;
    for (std::size_t k = 0; k < d.shape.size(); ++k) dense = dense && equal(simplify(c_order[k]), d.strides[k]);
    if (dense) d.total_size = product(d.shape);
    d.offset.assign(d.shape.size(), make_int(0));
    for (auto& x : d.shape) free_symbols(x, symbols_);
    for (auto& x : d.strides) free_symbols(x, symbols_);
    inner_->arrays.emplace_back(name, std::move(d));
    (input ? inputs_ : outputs_).emplace_back(name, op.edge);
  }

  /// An input C of a product (Gemm's `_c`, Gemv's `_y`): its own array `name`; or none when it is
  /// the output's own subset (DaCe's frontend reads C where it writes it): the output's array is
  /// then an in-out connector, so that no two arguments point to the same elements. Returns whether
  /// C has its own array.
  bool bind_c_in(const std::string& name, Operand& cin, const std::string& out_name, const Operand& out) {
    const Range &a = cin.subset, &b = out.subset;
    bool same = cin.edge->memlet.data == out.edge->memlet.data && a.size() == b.size();
    for (std::size_t k = 0; same && k < a.size(); ++k)
      same = equal(a[k].start, b[k].start) && equal(a[k].end, b[k].end) && equal(a[k].step, b[k].step);
    if (!same) {
      bind(name, cin, true, true);
      return true;
    }
    inputs_.emplace_back(out_name, cin.edge);
    return false;
  }

  /// Symbols `e` reads become symbols of the nested SDFG too.
  void uses_symbols(const Expr& e) { free_symbols(e, symbols_); }

  /// The nested SDFG's array `name` (bound before).
  const DataDesc& array(const std::string& name) const { return *inner_->find_data(name); }

  /// Symbols a coefficient reads become symbols of the nested SDFG too.
  void uses(const Coefficient& c) {
    if (c.expr) free_symbols(c.expr, symbols_);
  }

  /// `base`, or `base_`, ... : a map parameter no symbol of the nested SDFG is named.
  std::string param(std::string base) const {
    while (symbols_.count(base)) base += "_";
    return base;
  }

  /// A new state, after the previous one.
  StateBuilder state(const std::string& label) {
    auto b = std::make_unique<Block>(BlockKind::State);
    b->type_name = "SDFGState";
    b->label = label;
    inner_->root.blocks.push_back(std::move(b));
    int n = static_cast<int>(inner_->root.blocks.size());
    if (n > 1) {
      InterstateEdge e;
      e.src = n - 2;
      e.dst = n - 1;
      inner_->root.cf_edges.push_back(e);
    }
    return StateBuilder(*inner_, *inner_->root.blocks.back());
  }

  /// The library node becomes a nested SDFG node: its connectors are the arrays bound, on the
  /// same edges; the symbols the arrays' sizes use are passed through.
  void finish() {
    Node& n = site_.node();
    inner_->root.start_block = 0;
    for (auto& sym : symbols_) {
      inner_->symbols.emplace_back(sym, site_.sdfg.symbol_type(sym).value_or(DType::Int64));
      n.symbol_mapping.emplace_back(sym, make_symbol(sym));
    }
    n.in_connectors.clear();
    n.out_connectors.clear();
    for (auto& [name, e] : inputs_) {
      e->dst_conn = name;
      n.in_connectors.push_back({name, std::nullopt});
    }
    for (auto& [name, e] : outputs_) {
      e->src_conn = name;
      n.out_connectors.push_back({name, std::nullopt});
    }
    n.kind = NodeKind::NestedSDFG;
    n.sdfg = std::move(inner_);
    n.classpath.clear();
    n.extra = Json::object();
  }

 private:
  const Site& site_;
  std::unique_ptr<SDFG> inner_;
  std::set<std::string> symbols_;
  std::vector<std::pair<std::string, DataEdge*>> inputs_, outputs_;
};

/// A map over `loops` with one tasklet: `code` from `reads` into `write`.
void elementwise(StateBuilder& b, const std::string& label, const Loops& loops, const std::vector<Access>& reads,
                 const std::string& code, const Access& write, ScheduleType schedule) {
  std::vector<std::pair<std::string, std::string>> ranges, ins;
  for (std::size_t p = 0; p < loops.params.size(); ++p) ranges.emplace_back(loops.params[p], loops.ranges[p]);
  for (auto& r : reads) ins.emplace_back(r.conn, r.element());
  b.mapped_tasklet(label, ranges, ins, code, {{write.conn, write.element()}}, schedule);
}

/// For every element of `target` (a map over `outs`, `schedule`), a sequential loop over `sums`
/// that adds `term` (an expression of the tasklet's inputs `reads`) to it, in order:
/// `__out = __acc + term`. No write-conflict resolution: each element has one writer, so the
/// outer map may run in parallel (OpenMP threads, GPU threads) and the order is fixed.
void accumulate(StateBuilder& b, const std::string& label, const Loops& outs, const Loops& sums,
                const std::vector<Access>& reads, const std::string& term, const Access& target,
                ScheduleType schedule) {
  auto [oe, ox] = b.map(label, outs.params, outs.ranges, schedule);
  auto [ie, ix] = b.map(label + "_sum", sums.params, sums.ranges, ScheduleType::Sequential, oe);
  std::vector<Access> all = reads;
  all.push_back({"__acc", target.array, target.index});
  std::vector<std::string> conns;
  for (auto& r : all) conns.push_back(r.conn);
  int t = b.tasklet(label, conns, {target.conn}, target.conn + " = __acc + " + term, Language::Python, ie);
  for (auto& r : all) {
    std::string in = "IN_" + r.array, out = "OUT_" + r.array;
    b.edge(b.access(r.array), "", oe, in, r.array, r.cover({&outs, &sums}));
    b.edge(oe, out, ie, in, r.array, r.cover({&sums}));
    b.edge(ie, out, t, r.conn, r.array, join(r.index));
  }
  const std::string& c = target.array;
  b.edge(t, target.conn, ix, "IN_" + c, c, join(target.index));
  b.edge(ix, "OUT_" + c, ox, "IN_" + c, c, target.cover({&sums}));
  b.edge(ox, "OUT_" + c, b.access(c), "", c, target.cover({&outs}));
}

/// What a BLAS product computes, after its arrays are bound: out = alpha * sum(factors) + beta *
/// c, with c the input `c_in` or (without one) the output's own value. One state sets every output
/// element to its start (0, c or beta * c; nothing when beta is 1 and there is no input c), the
/// next adds the products in order of the summed index, as DaCe's pure expansions do.
struct Product {
  std::string label;
  Loops outs, sums;
  std::vector<Access> factors;
  Access out;
  std::optional<Access> c_in;
  Coefficient alpha, beta;
};

void build_product(Expansion& e, const Product& p, ScheduleType schedule) {
  Access c = p.c_in ? *p.c_in : Access{"__c", p.out.array, p.out.index};
  if (!p.beta.is(1) || p.c_in) {
    StateBuilder b = e.state(p.label + "_init");
    if (p.beta.is(0))
      elementwise(b, p.label + "_init", p.outs, {}, p.out.conn + " = 0", p.out, schedule);
    else
      elementwise(b, p.label + "_init", p.outs, {c},
                  p.out.conn + " = " + (p.beta.is(1) ? c.conn : p.beta.times(c.conn)), p.out, schedule);
  }
  std::vector<std::string> names;
  for (auto& f : p.factors) names.push_back(f.conn);
  std::string term;
  for (std::size_t k = 0; k < names.size(); ++k) term += (k ? " * " : "") + names[k];
  if (!p.alpha.is(1)) term = p.alpha.times(term);
  StateBuilder b = e.state(p.label);
  accumulate(b, p.label, p.outs, p.sums, p.factors, term, p.out, schedule);
}

class Expander {
 public:
  Expander(const CompileOptions& o, std::set<std::string>& libraries) : options_(o), libraries_(libraries) {}

  void sdfg(SDFG& s, const std::string& ptr, bool in_map) { region(s, s.root, ptr, in_map); }

 private:
  const CompileOptions& options_;
  std::set<std::string>& libraries_;  ///< the top-level SDFG's: vendor libraries the calls need
  int counter_ = 0;

  /// The classes sdfc expands, each with its expansion (a new class: one entry and one function).
  struct LibraryClass {
    const char* classpath;
    void (Expander::*expand)(const Site&);
  };
  static const std::vector<LibraryClass>& classes() {
    static const std::vector<LibraryClass> list = {
        {"dace.libraries.standard.nodes.reduce.Reduce", &Expander::reduce},
        {"dace.libraries.blas.nodes.matmul.MatMul", &Expander::matmul},
        {"dace.libraries.blas.nodes.batched_matmul.BatchedMatMul", &Expander::batched_matmul_node},
        {"dace.libraries.blas.nodes.gemm.Gemm", &Expander::gemm_node},
        {"dace.libraries.blas.nodes.gemv.Gemv", &Expander::gemv_node},
        {"dace.libraries.blas.nodes.dot.Dot", &Expander::dot_node},
        {"dace.libraries.blas.nodes.ger.Ger", &Expander::ger_node},
        {"dace.libraries.linalg.nodes.transpose.Transpose", &Expander::transpose},
    };
    return list;
  }

  void region(SDFG& s, Block& r, const std::string& ptr, bool in_map) {
    for (std::size_t i = 0; i < r.blocks.size(); ++i)
      block(s, *r.blocks[i], ptr + "/nodes/" + std::to_string(i), in_map);
  }

  void block(SDFG& s, Block& b, const std::string& ptr, bool in_map) {
    switch (b.kind) {
      case BlockKind::State:
        for (int id = 0; id < static_cast<int>(b.nodes.size()); ++id) {
          Node& n = b.node(id);
          std::string np = ptr + "/nodes/" + std::to_string(id);
          bool scoped = in_map || n.scope_entry >= 0;
          if (n.kind == NodeKind::NestedSDFG) sdfg(*n.sdfg, np + "/attributes/sdfg", scoped);
          if (n.kind == NodeKind::Library) expand(Site{s, b, id, np, scoped});
        }
        break;
      case BlockKind::Region:
      case BlockKind::Loop:
        region(s, b, ptr, in_map);
        break;
      case BlockKind::Conditional:
        for (std::size_t k = 0; k < b.branches.size(); ++k)
          region(s, *b.branches[k].second, ptr + "/branches/" + std::to_string(k) + "/1", in_map);
        break;
      case BlockKind::Break:
      case BlockKind::Continue:
      case BlockKind::Return:
        break;
    }
  }

  void expand(const Site& x) {
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
  DataEdge* find_edge(const Site& x, const std::string& conn, bool in, bool optional) {
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
      refuse(x.ptr, fmt::format("library node \"{}\": a memlet with other_subset on connector {} is not supported",
                                label, conn));
    return found;
  }

  /// The operand on connector `conn`; nullopt when an optional one has no memlet.
  std::optional<Operand> operand(const Site& x, const std::string& conn, bool in, bool optional = false) {
    DataEdge* e = find_edge(x, conn, in, optional);
    if (!e) return std::nullopt;
    Operand op;
    op.edge = e;
    op.desc = x.sdfg.find_data(e->memlet.data);
    if (!op.desc)
      refuse(x.ptr,
             fmt::format("{} reads or writes unknown data \"{}\" on connector {}", x.who(), e->memlet.data, conn));
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

  Operand required(const Site& x, const std::string& conn, bool in) { return *operand(x, conn, in); }

  /// A coefficient property (`alpha`, `beta`): a number, or a symbolic expression as text.
  Coefficient coefficient(const Site& x, const char* key, double fallback) {
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

  bool flag(const Site& x, const char* key) {
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
  ScheduleType schedule(const Site& x, const std::vector<const Operand*>& ops) {
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

  void sizes_agree(const Site& x, const Expr& a, const Expr& b, const std::string& what) {
    if (differ(a, b)) refuse(x.ptr, fmt::format("{}: {} do not agree ({} and {})", x.who(), what, plain(a), plain(b)));
  }

  static std::string range_of(const Expr& extent) { return "0:" + plain(extent); }

  // ---- vendor library calls (--blas vendor) -----------------------------------------------------

  /// The library that computes BLAS node `x` under --blas vendor: "cblas" on host data, "cublas"
  /// on GPU data (CUDA target); "" (the pure expansion) for --blas pure, inside a map scope (the
  /// enclosing iteration or GPU thread runs it), for dtypes other than float32 and float64 (all
  /// operands one dtype), when the operands are not squeezed to their BLAS ranks, and when a
  /// matrix in `matrices` has no dimension of stride 1 (no BLAS layout: strided columns of both).
  std::string vendor_library(const Site& x, const std::vector<const Operand*>& ops,
                             const std::vector<const Operand*>& matrices, bool squeezed) {
    if (options_.blas != BlasMode::Vendor || x.in_map || !squeezed) return "";
    DType t = ops.front()->desc->dtype;
    if (t != DType::Float32 && t != DType::Float64) return "";
    for (const Operand* o : ops)
      if (o->desc->dtype != t) return "";
    for (const Operand* o : matrices) {
      if (o->rank() != 2) return "";
      bool unit = false;
      for (std::size_t k : o->moving) unit = unit || as_constant(simplify(o->stride[k])) == 1;
      if (!unit) return "";
    }
    if (schedule(x, ops) != ScheduleType::GPU_Device) return "cblas";
    if (options_.target == Target::HIP)
      refuse(x.ptr, fmt::format("{}: --blas vendor on GPU data needs hipBLAS on the hip target, which Debian does "
                                "not package; compile with --blas pure",
                                x.who()));
    return "cublas";
  }

  /// `e` as C++ (an extent or stride of the nested SDFG's arrays, in its symbols), evaluated in 64
  /// bits whatever the symbols' C types: a symbol or number as it is, anything else through a
  /// lambda whose int64 parameters shadow the symbols (`M * N` of int32 symbols must not overflow).
  static std::string cpp(const Expr& e) {
    Expr s = simplify(e);
    if (s->kind == ExprKind::Int || s->kind == ExprKind::Symbol) return print_cpp(s);
    std::set<std::string> names;
    free_symbols(s, names);
    std::vector<std::string> params(names.begin(), names.end());
    for (auto& p : params) p = "std::int64_t " + p;
    return fmt::format("[]({}) {{ return static_cast<std::int64_t>({}); }}({})", join(params), print_cpp(s),
                       join(std::vector<std::string>(names.begin(), names.end())));
  }

  /// A coefficient as a value of dtype `t`.
  static std::string scalar(const Coefficient& c, DType t) {
    std::string v = c.value ? fmt::format("{:.17g}", *c.value) : "(" + print_cpp(c.expr) + ")";
    return fmt::format("static_cast<{}>({})", t == DType::Float32 ? "float" : "double", v);
  }

  /// Fills expansion `e` with the vendor call `fn` (gemm, gemv) of `lib`: `args` are the call's
  /// arguments after the node's name, reading the tasklet connectors `ins` (connector, array) and
  /// writing `out`. With an input C of its own (`cin` names its array), a first state copies it
  /// into the output (a map: a kernel on GPU data), and the call applies beta there; without one,
  /// the call reads the output where beta is not 0.
  void vendor_call(Expansion& e, const Site& x, const std::string& lib, const std::string& fn, DType t,
                   const std::string& args, std::vector<std::pair<std::string, std::string>> ins,
                   const std::pair<std::string, std::string>& out, const std::string& cin, const Coefficient& beta) {
    const DataDesc& od = e.array(out.second);
    auto whole = [&](const std::string& array) {
      std::vector<std::string> dims;
      for (const Expr& s : e.array(array).shape) dims.push_back(range_of(s));
      return join(dims);
    };
    if (!cin.empty()) {
      Loops loops;
      Access to{"__out", out.second, {}}, from{"__in", cin, {}};
      for (std::size_t k = 0; k < od.shape.size(); ++k) {
        std::string p = e.param(fmt::format("__i{}", k));
        loops.params.push_back(p);
        loops.ranges.push_back(range_of(od.shape[k]));
        to.index.push_back(p);
        from.index.push_back(p);
      }
      StateBuilder init = e.state(fn + "_c_in");
      elementwise(init, fn + "_c_in", loops, {from}, "__out = __in", to,
                  lib == "cublas" ? ScheduleType::GPU_Device : ScheduleType::Default);
    }
    if (!beta.is(0) || !cin.empty()) ins.push_back({"__cin", out.second});
    std::string what;
    for (char ch : x.who())
      if (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == ' ' || ch == '.') what += ch;
    std::string type = t == DType::Float32 ? "float" : "double";
    std::string code = lib == "cublas" ? fmt::format(
                                             "sdfc::gpu::blas_{}<{}>(__state->__sdfc_gpu, __state->__sdfc_blas, "
                                             "__dace_current_stream, \"{}\", {});",
                                             fn, type, what, args)
                                       : fmt::format("sdfc::blas::{}<{}>(\"{}\", {});", fn, type, what, args);
    StateBuilder b = e.state(fn);
    std::vector<std::string> conns;
    for (auto& [conn, array] : ins) conns.push_back(conn);
    int tk = b.tasklet(lib + "_" + fn, conns, {out.first}, code, Language::CPP);
    b.state().node(tk).library_call = lib;
    for (auto& [conn, array] : ins) b.edge(b.access(array), "", tk, conn, array, whole(array));
    b.edge(tk, out.first, b.access(out.second), "", out.second, whole(out.second));
    libraries_.insert(lib);
  }

  // ---- BLAS and linear algebra ------------------------------------------------------------------

  /// MatMul: dispatches on the operands' ranks (dimensions of extent 1 left out) as DaCe's
  /// SpecializeMatMul does: matrix @ matrix (Gemm; also when only the unsqueezed subsets are
  /// matrices), batched (an operand of rank 3 or more), matrix @ vector (Gemv), vector @ matrix
  /// (Gemv with A transposed), vector @ vector (Dot). C = alpha * (A @ B) + beta * C, with C the
  /// `_cin` input where there is one.
  void matmul(const Site& x) {
    Operand a = required(x, "_a", true), b = required(x, "_b", true), c = required(x, "_c", false);
    std::optional<Operand> cin = operand(x, "_cin", true, true);
    Coefficient alpha = coefficient(x, "alpha", 1), beta = coefficient(x, "beta", 0);
    std::size_t ra = a.rank(), rb = b.rank();
    if (c.rank() == 2 && ((ra == 2 && rb == 2) || (a.extent.size() == 2 && b.extent.size() == 2)))
      return gemm(x, a, b, c, cin, false, false, alpha, beta, ra == 2 && rb == 2);
    if ((ra >= 3 || rb >= 3) && ra >= 2 && rb >= 2) {
      if (cin || !beta.is(0) || !alpha.is(1))
        refuse(x.ptr, fmt::format("{}: a batched product with alpha, beta or an input C is not supported", x.who()));
      return batched_matmul(x, a, b, c);
    }
    if (ra == 2 && rb == 1) return gemv(x, "_a", a, "_b", b, "_c", c, cin, false, alpha, beta);
    if (ra == 1 && rb == 2) return gemv(x, "_b", b, "_a", a, "_c", c, cin, true, alpha, beta);
    if (ra == 1 && rb == 1) return dot(x, "_a", a, "_b", b, "_c", c, cin, alpha, beta);
    refuse(x.ptr, fmt::format("{}: a product of operands of rank {} and {} is not supported", x.who(), ra, rb));
  }

  /// Gemm (`_a`, `_b`, optional `_c` in -> `_c`; transA, transB, alpha, beta).
  void gemm_node(const Site& x) {
    Operand a = required(x, "_a", true), b = required(x, "_b", true), c = required(x, "_c", false);
    std::optional<Operand> cin = operand(x, "_c", true, true);
    gemm(x, a, b, c, cin, flag(x, "transA"), flag(x, "transB"), coefficient(x, "alpha", 1), coefficient(x, "beta", 0),
         true);
  }

  /// Gemv (`_A`, `_x`, optional `_y` in -> `_y`; transA, alpha, beta).
  void gemv_node(const Site& x) {
    Operand a = required(x, "_A", true), v = required(x, "_x", true), y = required(x, "_y", false);
    std::optional<Operand> yin = operand(x, "_y", true, true);
    gemv(x, "_A", a, "_x", v, "_y", y, yin, flag(x, "transA"), coefficient(x, "alpha", 1), coefficient(x, "beta", 0));
  }

  /// Dot (`_x`, `_y` -> `_result`).
  void dot_node(const Site& x) {
    Operand a = required(x, "_x", true), b = required(x, "_y", true), r = required(x, "_result", false);
    std::optional<Operand> none;
    dot(x, "_x", a, "_y", b, "_result", r, none, Coefficient{"1", 1.0, nullptr}, Coefficient{"0", 0.0, nullptr});
  }

  /// BatchedMatMul (`_a`, `_b` -> `_c`).
  void batched_matmul_node(const Site& x) {
    Operand a = required(x, "_a", true), b = required(x, "_b", true), c = required(x, "_c", false);
    batched_matmul(x, a, b, c);
  }

  /// C (M x N) = alpha * op(A) @ op(B) + beta * C.
  void gemm(const Site& x, Operand& a, Operand& b, Operand& c, std::optional<Operand>& cin, bool ta, bool tb,
            const Coefficient& alpha, const Coefficient& beta, bool squeeze) {
    std::vector<Expr> sa = a.shape(squeeze), sb = b.shape(squeeze), sc = c.shape(true);
    if (sa.size() != 2 || sb.size() != 2 || sc.size() != 2)
      refuse(x.ptr, fmt::format("{}: a matrix product needs matrices (ranks {}, {} -> {})", x.who(), sa.size(),
                                sb.size(), sc.size()));
    Expr m = sa[ta ? 1 : 0], k = sa[ta ? 0 : 1], k2 = sb[tb ? 1 : 0], n = sb[tb ? 0 : 1];
    sizes_agree(x, k, k2, "the columns of A and the rows of B");
    sizes_agree(x, m, sc[0], "the rows of A and of C");
    sizes_agree(x, n, sc[1], "the columns of B and of C");
    Expansion e(x, fmt::format("gemm_{}", counter_++));
    e.bind("_a", a, true, squeeze);
    e.bind("_b", b, true, squeeze);
    e.bind("_c", c, false, true);
    std::vector<const Operand*> ops{&a, &b, &c};
    Product p;
    if (cin) {
      if (cin->rank() != 2)
        refuse(x.ptr, fmt::format("{}: an input C of rank {} (broadcast) is not supported", x.who(), cin->rank()));
      sizes_agree(x, cin->shape(true)[0], m, "the rows of the input C and of C");
      sizes_agree(x, cin->shape(true)[1], n, "the columns of the input C and of C");
      if (e.bind_c_in("_cin", *cin, "_c", c)) p.c_in = Access{"__cin", "_cin", {"", ""}};
      ops.push_back(&*cin);
    }
    e.uses(alpha);
    e.uses(beta);
    if (std::string lib = vendor_library(x, ops, {&a, &b, &c}, squeeze); !lib.empty()) {
      for (const Expr& s : {m, n, k}) e.uses_symbols(s);
      const DataDesc &da = e.array("_a"), &db = e.array("_b"), &dc = e.array("_c");
      std::string call =
          fmt::format("{}, {}, {}, {}, {}, {}, __a, {}, {}, __b, {}, {}, {}, __c, {}, {}", ta, tb, cpp(m), cpp(n),
                      cpp(k), scalar(alpha, c.desc->dtype), cpp(da.strides[0]), cpp(da.strides[1]), cpp(db.strides[0]),
                      cpp(db.strides[1]), scalar(beta, c.desc->dtype), cpp(dc.strides[0]), cpp(dc.strides[1]));
      vendor_call(e, x, lib, "gemm", c.desc->dtype, call, {{"__a", "_a"}, {"__b", "_b"}}, {"__c", "_c"},
                  p.c_in ? "_cin" : "", beta);
      return e.finish();
    }
    std::string i = e.param("__i"), j = e.param("__j"), l = e.param("__k");
    p.label = "gemm";
    p.outs = {{i, j}, {range_of(m), range_of(n)}};
    p.sums = {{l}, {range_of(k)}};
    p.factors = {{"__a", "_a", ta ? std::vector<std::string>{l, i} : std::vector<std::string>{i, l}},
                 {"__b", "_b", tb ? std::vector<std::string>{j, l} : std::vector<std::string>{l, j}}};
    p.out = {"__out", "_c", {i, j}};
    if (p.c_in) p.c_in->index = {i, j};
    p.alpha = alpha;
    p.beta = beta;
    build_product(e, p, schedule(x, ops));
    e.finish();
  }

  /// y = alpha * op(A) @ v + beta * y; the arrays are named as the node's connectors (`an`, `vn`,
  /// `yn`); `trans`: y[j] = sum_i v[i] * A[i, j] (MatMul's vector @ matrix).
  void gemv(const Site& x, const std::string& an, Operand& a, const std::string& vn, Operand& v, const std::string& yn,
            Operand& y, std::optional<Operand>& yin, bool trans, const Coefficient& alpha, const Coefficient& beta) {
    if (a.rank() != 2 || v.rank() != 1 || y.rank() != 1)
      refuse(x.ptr, fmt::format("{}: a matrix-vector product needs a matrix and vectors (ranks {}, {} -> {})", x.who(),
                                a.rank(), v.rank(), y.rank()));
    std::vector<Expr> sa = a.shape(true);
    Expr rows = sa[trans ? 1 : 0], cols = sa[trans ? 0 : 1];
    sizes_agree(x, cols, v.shape(true)[0], "the matrix and the vector it multiplies");
    sizes_agree(x, rows, y.shape(true)[0], "the matrix and the result");
    Expansion e(x, fmt::format("gemv_{}", counter_++));
    // in the connectors' order (`_A`, `_x`; `_a`, `_b`)
    if (an < vn) e.bind(an, a, true, true);
    e.bind(vn, v, true, true);
    if (an > vn) e.bind(an, a, true, true);
    e.bind(yn, y, false, true);
    std::vector<const Operand*> ops{&a, &v, &y};
    Product p;
    if (yin) {
      if (yin->rank() != 1) refuse(x.ptr, fmt::format("{}: an input y of rank {}", x.who(), yin->rank()));
      sizes_agree(x, yin->shape(true)[0], rows, "the input y and the result");
      if (e.bind_c_in(yn + "in", *yin, yn, y)) p.c_in = Access{"__yin", yn + "in", {""}};
      ops.push_back(&*yin);
    }
    e.uses(alpha);
    e.uses(beta);
    if (std::string lib = vendor_library(x, ops, {&a}, true); !lib.empty()) {
      const DataDesc &da = e.array(an), &dv = e.array(vn), &dy = e.array(yn);
      for (const Expr& s : da.shape) e.uses_symbols(s);
      std::string call =
          fmt::format("{}, {}, {}, {}, __A, {}, {}, __x, {}, {}, __y, {}", trans, cpp(da.shape[0]), cpp(da.shape[1]),
                      scalar(alpha, y.desc->dtype), cpp(da.strides[0]), cpp(da.strides[1]), cpp(dv.strides[0]),
                      scalar(beta, y.desc->dtype), cpp(dy.strides[0]));
      vendor_call(e, x, lib, "gemv", y.desc->dtype, call, {{"__A", an}, {"__x", vn}}, {"__y", yn},
                  p.c_in ? yn + "in" : "", beta);
      return e.finish();
    }
    std::string i = e.param("__i"), l = e.param("__k");
    p.label = "gemv";
    p.outs = {{i}, {range_of(rows)}};
    p.sums = {{l}, {range_of(cols)}};
    p.factors = {{"__A", an, trans ? std::vector<std::string>{l, i} : std::vector<std::string>{i, l}},
                 {"__x", vn, {l}}};
    p.out = {"__out", yn, {i}};
    if (p.c_in) p.c_in->index = {i};
    p.alpha = alpha;
    p.beta = beta;
    build_product(e, p, schedule(x, ops));
    e.finish();
  }

  /// result (one element) = alpha * sum_i a[i] * b[i] + beta * result.
  void dot(const Site& x, const std::string& an, Operand& a, const std::string& bn, Operand& b, const std::string& rn,
           Operand& r, std::optional<Operand>& cin, const Coefficient& alpha, const Coefficient& beta) {
    if (a.rank() != 1 || b.rank() != 1 || r.rank() != 0)
      refuse(x.ptr, fmt::format("{}: a dot product needs two vectors and one result element (ranks {}, {} -> {})",
                                x.who(), a.rank(), b.rank(), r.rank()));
    Expr len = a.shape(true)[0];
    sizes_agree(x, len, b.shape(true)[0], "the lengths of the two vectors");
    Expansion e(x, fmt::format("dot_{}", counter_++));
    e.bind(an, a, true, true);
    e.bind(bn, b, true, true);
    e.bind(rn, r, false, true);
    std::vector<const Operand*> ops{&a, &b, &r};
    Product p;
    if (cin) {
      if (cin->rank() != 0) refuse(x.ptr, fmt::format("{}: an input C of rank {}", x.who(), cin->rank()));
      if (e.bind_c_in(rn + "in", *cin, rn, r)) p.c_in = Access{"__cin", rn + "in", {"0"}};
      ops.push_back(&*cin);
    }
    e.uses(alpha);
    e.uses(beta);
    std::string o = e.param("__o"), l = e.param("__i");
    p.label = "dot";
    p.outs = {{o}, {"0:1"}};
    p.sums = {{l}, {range_of(len)}};
    p.factors = {{"__x", an, {l}}, {"__y", bn, {l}}};
    p.out = {"__out", rn, {"0"}};
    p.alpha = alpha;
    p.beta = beta;
    build_product(e, p, schedule(x, ops));
    e.finish();
  }

  /// C[batch..., M, N] = A[batch..., M, K] @ B[batch..., K, N]; an operand of rank 2 is the same
  /// matrix for every batch (broadcast). Batch dimensions of extent 1 are squeezed away as in
  /// DaCe's dispatch, so an operand has either no batch dimensions or all of C's.
  void batched_matmul(const Site& x, Operand& a, Operand& b, Operand& c) {
    std::vector<Expr> sa = a.shape(true), sb = b.shape(true), sc = c.shape(true);
    if (sa.size() < 2 || sb.size() < 2 || sc.size() < 3)
      refuse(x.ptr, fmt::format("{}: a batched product needs matrices (ranks {}, {} -> {})", x.who(), sa.size(),
                                sb.size(), sc.size()));
    std::size_t nb = sc.size() - 2;
    for (auto* s : {&sa, &sb})
      if (s->size() != 2 && s->size() != nb + 2)
        refuse(x.ptr, fmt::format("{}: an operand of rank {} for a result with {} batch dimension(s) is not "
                                  "supported (only equal batch dimensions or none)",
                                  x.who(), s->size(), nb));
    Expr m = sa[sa.size() - 2], k = sa.back(), n = sb.back();
    sizes_agree(x, k, sb[sb.size() - 2], "the columns of A and the rows of B");
    sizes_agree(x, m, sc[nb], "the rows of A and of C");
    sizes_agree(x, n, sc[nb + 1], "the columns of B and of C");
    for (std::size_t d = 0; d < nb; ++d) {
      if (sa.size() > 2) sizes_agree(x, sa[d], sc[d], "the batch sizes of A and C");
      if (sb.size() > 2) sizes_agree(x, sb[d], sc[d], "the batch sizes of B and C");
    }
    Expansion e(x, fmt::format("batched_matmul_{}", counter_++));
    e.bind("_a", a, true, true);
    e.bind("_b", b, true, true);
    e.bind("_c", c, false, true);
    Product p;
    p.label = "batched_matmul";
    std::vector<std::string> batch;
    for (std::size_t d = 0; d < nb; ++d) {
      batch.push_back(e.param(fmt::format("__b{}", d)));
      p.outs.params.push_back(batch.back());
      p.outs.ranges.push_back(range_of(sc[d]));
    }
    std::string i = e.param("__i"), j = e.param("__j"), l = e.param("__k");
    p.outs.params.insert(p.outs.params.end(), {i, j});
    p.outs.ranges.insert(p.outs.ranges.end(), {range_of(m), range_of(n)});
    p.sums = {{l}, {range_of(k)}};
    auto with_batch = [&](std::size_t rank, std::vector<std::string> last) {
      if (rank == 2) return last;
      std::vector<std::string> idx = batch;
      idx.insert(idx.end(), last.begin(), last.end());
      return idx;
    };
    p.factors = {{"__a", "_a", with_batch(sa.size(), {i, l})}, {"__b", "_b", with_batch(sb.size(), {l, j})}};
    p.out = {"__out", "_c", with_batch(sc.size(), {i, j})};
    p.alpha = {"1", 1.0, nullptr};
    p.beta = {"0", 0.0, nullptr};
    build_product(e, p, schedule(x, {&a, &b, &c}));
    e.finish();
  }

  /// Ger (`_A`, `_x`, `_y` -> `_res`): res[i, j] = alpha * x[i] * y[j] + A[i, j].
  void ger_node(const Site& x) {
    Operand a = required(x, "_A", true), u = required(x, "_x", true), v = required(x, "_y", true),
            r = required(x, "_res", false);
    Coefficient alpha = coefficient(x, "alpha", 1);
    if (a.rank() != 2 || u.rank() != 1 || v.rank() != 1 || r.rank() != 2)
      refuse(x.ptr, fmt::format("{}: an outer product needs a matrix and two vectors (ranks {}, {}, {} -> {})", x.who(),
                                a.rank(), u.rank(), v.rank(), r.rank()));
    std::vector<Expr> sa = a.shape(true);
    sizes_agree(x, sa[0], u.shape(true)[0], "the rows of A and the length of x");
    sizes_agree(x, sa[1], v.shape(true)[0], "the columns of A and the length of y");
    sizes_agree(x, sa[0], r.shape(true)[0], "the rows of A and of the result");
    sizes_agree(x, sa[1], r.shape(true)[1], "the columns of A and of the result");
    Expansion e(x, fmt::format("ger_{}", counter_++));
    e.bind("_A", a, true, true);
    e.bind("_x", u, true, true);
    e.bind("_y", v, true, true);
    e.bind("_res", r, false, true);
    e.uses(alpha);
    std::string i = e.param("__i"), j = e.param("__j");
    StateBuilder b = e.state("ger");
    std::string term = "__x * __y";
    if (!alpha.is(1)) term = alpha.times(term);
    elementwise(b, "ger", {{i, j}, {range_of(sa[0]), range_of(sa[1])}},
                {{"__A", "_A", {i, j}}, {"__x", "_x", {i}}, {"__y", "_y", {j}}}, "__out = " + term + " + __A",
                {"__out", "_res", {i, j}}, schedule(x, {&a, &u, &v, &r}));
    e.finish();
  }

  /// Transpose (`_inp` -> `_out`): out[j, i] = inp[i, j] for a matrix (dimensions of extent 1
  /// left out, as DaCe does).
  void transpose(const Site& x) {
    Operand in = required(x, "_inp", true), out = required(x, "_out", false);
    if (in.rank() != 2 || out.rank() != 2)
      refuse(x.ptr, fmt::format("{}: a transpose of rank {} -> {} is not supported (matrices only)", x.who(), in.rank(),
                                out.rank()));
    std::vector<Expr> si = in.shape(true), so = out.shape(true);
    sizes_agree(x, si[0], so[1], "the rows of the input and the columns of the output");
    sizes_agree(x, si[1], so[0], "the columns of the input and the rows of the output");
    Expansion e(x, fmt::format("transpose_{}", counter_++));
    e.bind("_inp", in, true, true);
    e.bind("_out", out, false, true);
    std::string i = e.param("__i"), j = e.param("__j");
    StateBuilder b = e.state("transpose");
    elementwise(b, "transpose", {{i, j}, {range_of(si[0]), range_of(si[1])}}, {{"__inp", "_inp", {i, j}}},
                "__out = __inp", {"__out", "_out", {j, i}}, schedule(x, {&in, &out}));
    e.finish();
  }

  // ---- Reduce -------------------------------------------------------------------------------------

  void reduce(const Site& x) {
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
    auto id_it = props.find("identity");
    if (id_it == props.end() || id_it->is_null())
      refuse(np + "/attributes/identity",
             fmt::format("Reduce \"{}\" without an identity is not supported yet; give it an identity", n.label));
    std::string identity = id_it->is_string() ? id_it->get<std::string>() : id_it->dump();
    DataEdge& in = *find_edge(x, "_in", true, false);
    DataEdge& out = *find_edge(x, "_out", false, false);
    const DataDesc* in_desc = s.find_data(in.memlet.data);
    const DataDesc* out_desc = s.find_data(out.memlet.data);
    if (!in_desc || !out_desc) refuse(np, fmt::format("Reduce \"{}\" reads or writes unknown data", n.label));
    // Its loops are sequential: outside any map they run on the host, which must own the data.
    if (!x.in_map && options_.target != Target::CPU &&
        (is_gpu_storage(in_desc->storage) || is_gpu_storage(out_desc->storage)))
      refuse(np, fmt::format("Reduce \"{}\" outside any map on GPU data is not supported yet (sdfc expands it into "
                             "sequential loops); put it in a map or expand it in DaCe first",
                             n.label));
    Range rin = in.memlet.subset ? *in.memlet.subset : full_range(*in_desc);
    Range rout = out.memlet.subset ? *out.memlet.subset : full_range(*out_desc);
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
    std::vector<Expr> ext_in, ext_out;
    for (auto& d : rin) ext_in.push_back(range_extent(d));
    for (auto& d : rout) ext_out.push_back(range_extent(d));
    // Which input index each output dimension takes ("" = 0).
    std::vector<std::string> out_index(rout.size(), "0");
    if (rout.size() == kept.size()) {
      for (std::size_t j = 0; j < kept.size(); ++j) out_index[j] = fmt::format("__i{}", kept[j]);
    } else if (rout.size() == rin.size()) {  // keepdims
      for (std::size_t k : kept) out_index[k] = fmt::format("__i{}", k);
    } else {
      std::vector<std::size_t> moving;
      for (std::size_t k = 0; k < rout.size(); ++k)
        if (as_constant(ext_out[k]) != 1) moving.push_back(k);
      if (moving.size() != kept.size())
        refuse(np,
               fmt::format("Reduce \"{}\": cannot pair the {} kept input dimension(s) with its {}-dimensional output",
                           n.label, kept.size(), rout.size()));
      for (std::size_t j = 0; j < kept.size(); ++j) out_index[moving[j]] = fmt::format("__i{}", kept[j]);
    }

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
    {
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
      auto [entry, exit] = b.map("init", params, ranges, ScheduleType::Sequential);
      int t = b.tasklet("identity", {}, {"__out"}, "__out = " + identity, Language::Python, entry);
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
      auto [entry, exit] = b.map("reduce", params, ranges, ScheduleType::Sequential);
      const std::string& acc = lambda[0];
      const std::string& val = lambda[1];
      int t = b.tasklet("combine", {acc, val}, {"__out"}, "__out = " + lambda[2], Language::Python, entry);
      int src = b.access("_in"), prev = b.access("_out"), dst = b.access("_out");
      std::string o = join(out_index);
      b.edge(src, "", entry, "IN__in", "_in", "");
      b.edge(prev, "", entry, "IN__acc", "_out", "");
      b.edge(entry, "OUT__in", t, val, "_in", all("__i", ext_in.size()));
      b.edge(entry, "OUT__acc", t, acc, "_out", o);
      b.edge(t, "__out", exit, "IN__out", "_out", o);
      b.edge(exit, "OUT__out", dst, "", "_out", "");
    }
    InterstateEdge e;
    e.src = 0;
    e.dst = 1;
    inner->root.cf_edges.push_back(e);
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
};

}  // namespace

void expand_library_nodes(SDFG& sdfg, const CompileOptions& options) {
  sdfg.libraries.clear();
  Expander(options, sdfg.libraries).sdfg(sdfg, "", false);
}

}  // namespace sdfc
