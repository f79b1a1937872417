/// \file
/// Internal to passes/: the pieces of expand-library-nodes (ExpandLibraryNodes.h) — where a node
/// is, its operands and coefficients, the builder of an expansion's nested SDFG — and the
/// `Expander`, whose table, walk and Reduce are in ExpandLibraryNodes.cpp and whose BLAS and
/// linear-algebra expansions are in ExpandBlas.cpp.
#pragma once

#include <fmt/format.h>

#include <cctype>
#include <set>

#include "ir/Builder.h"
#include "ir/Diagnostic.h"
#include "ir/Memlets.h"
#include "passes/ExpandLibraryNodes.h"

namespace sdfc::library {

[[noreturn]] inline void refuse(const std::string& ptr, const std::string& what) {
  throw UserError(Diagnostic{"", ptr, 0, 0, what});
}

inline std::string plain(const Expr& e) {
  return print_expr(simplify(e));
}

inline std::string join(const std::vector<std::string>& v) {
  std::string t;
  for (std::size_t k = 0; k < v.size(); ++k) t += (k ? ", " : "") + v[k];
  return t;
}

/// True when `a` and `b` provably differ: their difference simplifies to a constant other than 0
/// (symbolic sizes that may agree are accepted, as DaCe accepts them with a warning).
inline bool differ(const Expr& a, const Expr& b) {
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
inline void elementwise(StateBuilder& b, const std::string& label, const Loops& loops, const std::vector<Access>& reads,
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
inline void accumulate(StateBuilder& b, const std::string& label, const Loops& outs, const Loops& sums,
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

inline void build_product(Expansion& e, const Product& p, ScheduleType schedule) {
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

  /// Expands every library node of `s` and of the SDFGs nested in it (`in_map`: `s` runs inside a
  /// map scope).
  void sdfg(SDFG& s, const std::string& ptr, bool in_map);

 private:
  const CompileOptions& options_;
  std::set<std::string>& libraries_;  ///< the top-level SDFG's: vendor libraries the calls need
  int counter_ = 0;

  /// The classes sdfc expands, each with its expansion (a new class: one entry and one function).
  struct LibraryClass {
    const char* classpath;
    void (Expander::*expand)(const Site&);
  };
  static const std::vector<LibraryClass>& classes();

  void expand(const Site& x);

  /// The edge on connector `conn` into (`in`) or out of the node; null when there is none and the
  /// connector is optional.
  DataEdge* find_edge(const Site& x, const std::string& conn, bool in, bool optional);

  /// The operand on connector `conn`; nullopt when an optional one has no memlet.
  std::optional<Operand> operand(const Site& x, const std::string& conn, bool in, bool optional = false);

  Operand required(const Site& x, const std::string& conn, bool in) { return *operand(x, conn, in); }

  /// A coefficient property (`alpha`, `beta`): a number, or a symbolic expression as text.
  Coefficient coefficient(const Site& x, const char* key, double fallback);

  bool flag(const Site& x, const char* key);

  /// The schedule of an expansion's maps over output elements (its sums are sequential loops inside
  /// them). Inside a map: Default, which normalize makes a sequential loop of the enclosing map's
  /// iteration or GPU thread. Outside: Default (normalize: CPU_Multicore) for host data; a GPU
  /// kernel (GPU_Device) for GPU data on a GPU target; host and GPU data together are refused.
  ScheduleType schedule(const Site& x, const std::vector<const Operand*>& ops);

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
                             const std::vector<const Operand*>& matrices, bool squeezed);

  /// `e` as C++ (an extent or stride of the nested SDFG's arrays, in its symbols), evaluated in 64
  /// bits whatever the symbols' C types: a symbol or number as it is, anything else through a
  /// lambda whose int64 parameters shadow the symbols (`M * N` of int32 symbols must not overflow).
  static std::string cpp(const Expr& e);

  static std::string whole(const Expansion& e, const std::string& array);
  static std::string call_label(const Site& x);

  /// A coefficient as a value of dtype `t`.
  static std::string scalar(const Coefficient& c, DType t);

  /// Fills expansion `e` with the vendor call `fn` (gemm, gemv) of `lib`: `args` are the call's
  /// arguments after the node's name, reading the tasklet connectors `ins` (connector, array) and
  /// writing `out`. With an input C of its own (`cin` names its array), a first state copies it
  /// into the output (a map: a kernel on GPU data), and the call applies beta there; without one,
  /// the call reads the output where beta is not 0.
  void vendor_call(Expansion& e, const Site& x, const std::string& lib, const std::string& fn, DType t,
                   const std::string& args, std::vector<std::pair<std::string, std::string>> ins,
                   const std::pair<std::string, std::string>& out, const std::string& cin, const Coefficient& beta);

  // ---- BLAS and linear algebra ------------------------------------------------------------------

  /// MatMul: dispatches on the operands' ranks (dimensions of extent 1 left out) as DaCe's
  /// SpecializeMatMul does: matrix @ matrix (Gemm; also when only the unsqueezed subsets are
  /// matrices), batched (an operand of rank 3 or more), matrix @ vector (Gemv), vector @ matrix
  /// (Gemv with A transposed), vector @ vector (Dot). C = alpha * (A @ B) + beta * C, with C the
  /// `_cin` input where there is one.
  void matmul(const Site& x);

  /// Gemm (`_a`, `_b`, optional `_c` in -> `_c`; transA, transB, alpha, beta).
  void gemm_node(const Site& x);

  /// Gemv (`_A`, `_x`, optional `_y` in -> `_y`; transA, alpha, beta).
  void gemv_node(const Site& x);

  /// Dot (`_x`, `_y` -> `_result`).
  void dot_node(const Site& x);

  /// BatchedMatMul (`_a`, `_b` -> `_c`).
  void batched_matmul_node(const Site& x);

  /// C (M x N) = alpha * op(A) @ op(B) + beta * C.
  void gemm(const Site& x, Operand& a, Operand& b, Operand& c, std::optional<Operand>& cin, bool ta, bool tb,
            const Coefficient& alpha, const Coefficient& beta, bool squeeze);

  /// y = alpha * op(A) @ v + beta * y; the arrays are named as the node's connectors (`an`, `vn`,
  /// `yn`); `trans`: y[j] = sum_i v[i] * A[i, j] (MatMul's vector @ matrix).
  void gemv(const Site& x, const std::string& an, Operand& a, const std::string& vn, Operand& v, const std::string& yn,
            Operand& y, std::optional<Operand>& yin, bool trans, const Coefficient& alpha, const Coefficient& beta);

  /// result (one element) = alpha * sum_i a[i] * b[i] + beta * result.
  void dot(const Site& x, const std::string& an, Operand& a, const std::string& bn, Operand& b, const std::string& rn,
           Operand& r, std::optional<Operand>& cin, const Coefficient& alpha, const Coefficient& beta);

  /// C[batch..., M, N] = A[batch..., M, K] @ B[batch..., K, N]; an operand of rank 2 is the same
  /// matrix for every batch (broadcast). Batch dimensions of extent 1 are squeezed away as in
  /// DaCe's dispatch, so an operand has either no batch dimensions or all of C's.
  void batched_matmul(const Site& x, Operand& a, Operand& b, Operand& c);

  /// Ger (`_A`, `_x`, `_y` -> `_res`): res[i, j] = alpha * x[i] * y[j] + A[i, j].
  void ger_node(const Site& x);

  /// Transpose (`_inp` -> `_out`): out[j, i] = inp[i, j] for a matrix (dimensions of extent 1
  /// left out, as DaCe does).
  void transpose(const Site& x);

  /// TensorTranspose (`_inp_tensor` -> `_out_tensor`; axes, alpha): out[j...] = alpha * inp[i...]
  /// with j_k = i_axes[k] (numpy.transpose; DaCe's pure expansion); a beta other than 0 is refused.
  void tensor_transpose(const Site& x);

  /// TensorDot (`_left_tensor`, `_right_tensor` -> `_out_tensor`; left_axes, right_axes,
  /// permutation): numpy.tensordot. The dot's dimensions are the left tensor's free ones, then the
  /// right's; out[p...] with p_k = dot index permutation[k] (none: in order) is the sum over the
  /// contracted dimensions, in order (DaCe's pure expansion, without its write-conflict sum).
  void tensor_dot(const Site& x);
  /// Einsum (inputs: its connectors in name order, as DaCe pairs them with the operands of
  /// `einsum_str`; one output; alpha, beta): out[o...] = alpha * sum over the letters not in the
  /// output of the product of the inputs + beta * out, the sum in order. Refused: `...`, a letter
  /// twice in one operand (a diagonal), a result without letters.
  void einsum(const Site& x);
  /// Inv (`_ain` -> `_aout`; overwrite): numpy.linalg.inv. Solve (`_ain`, `_bin` -> `_bout`):
  /// numpy.linalg.solve, `_bin` a vector or a matrix of right-hand sides. Cholesky (`_a` -> `_b`;
  /// lower): numpy.linalg.cholesky. DaCe calls LAPACK for them; sdfc calls its runtime's host
  /// functions (sdfc/linalg.h: LU with partial pivoting, Cholesky by columns) from a C++ tasklet
  /// on the whole matrices. GPU data is refused.
  void inv(const Site& x);
  void solve(const Site& x);
  void cholesky(const Site& x);
  /// Fills expansion `e` with the call `sdfc::linalg::fn<T>(what, args)` of one C++ tasklet reading
  /// the arrays `ins` (connector, array) whole and writing `out` whole.
  void linalg_call(Expansion& e, const Site& x, const std::string& fn, DType t, const std::string& args,
                   const std::vector<std::pair<std::string, std::string>>& ins,
                   const std::pair<std::string, std::string>& out);
  /// The operand on `conn` as a square matrix (dimensions of extent 1 left out); its extent.
  Expr square(const Site& x, const Operand& a, const char* conn);

  /// A list of distinct dimensions below `rank` in attribute `name` (absent: empty).
  std::vector<std::size_t> axes(const Site& x, const char* name, std::size_t rank);

  // ---- Reduce -------------------------------------------------------------------------------------

  void reduce(const Site& x);
};

}  // namespace sdfc::library
