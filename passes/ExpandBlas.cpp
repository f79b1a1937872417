// expand-library-nodes: the BLAS and linear-algebra classes (MatMul, Gemm, Gemv, Dot, Ger,
// BatchedMatMul, Transpose), as maps or, with --blas vendor, as calls into CBLAS / cuBLAS.
#include "passes/LibraryExpansion.h"

namespace sdfc::library {

/// The library that computes BLAS node `x` under --blas vendor: "cblas" on host data, "cublas"
/// on GPU data (CUDA target); "" (the pure expansion) for --blas pure, inside a map scope (the
/// enclosing iteration or GPU thread runs it), for dtypes other than float32 and float64 (all
/// operands one dtype), when the operands are not squeezed to their BLAS ranks, and when a
/// matrix in `matrices` has no dimension of stride 1 (no BLAS layout: strided columns of both).
std::string Expander::vendor_library(const Site& x, const std::vector<const Operand*>& ops,
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
std::string Expander::cpp(const Expr& e) {
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
std::string Expander::scalar(const Coefficient& c, DType t) {
  std::string v = c.value ? fmt::format("{:.17g}", *c.value) : "(" + print_cpp(c.expr) + ")";
  return fmt::format("static_cast<{}>({})", t == DType::Float32 ? "float" : "double", v);
}

/// Fills expansion `e` with the vendor call `fn` (gemm, gemv) of `lib`: `args` are the call's
/// arguments after the node's name, reading the tasklet connectors `ins` (connector, array) and
/// writing `out`. With an input C of its own (`cin` names its array), a first state copies it
/// into the output (a map: a kernel on GPU data), and the call applies beta there; without one,
/// the call reads the output where beta is not 0.
void Expander::vendor_call(Expansion& e, const Site& x, const std::string& lib, const std::string& fn, DType t,
                           const std::string& args, std::vector<std::pair<std::string, std::string>> ins,
                           const std::pair<std::string, std::string>& out, const std::string& cin,
                           const Coefficient& beta) {
  const DataDesc& od = e.array(out.second);
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
  std::string what = call_label(x);
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
  for (auto& [conn, array] : ins) b.edge(b.access(array), "", tk, conn, array, whole(e, array));
  b.edge(tk, out.first, b.access(out.second), "", out.second, whole(e, out.second));
  libraries_.insert(lib);
}

/// The subset of all of array `array` of expansion `e` ("0:M, 0:N").
std::string Expander::whole(const Expansion& e, const std::string& array) {
  std::vector<std::string> dims;
  for (const Expr& s : e.array(array).shape) dims.push_back(range_of(s));
  return join(dims);
}

/// The node as a C string literal's text in a library call's messages (`Gemm gemm`).
std::string Expander::call_label(const Site& x) {
  std::string what;
  for (char ch : x.who())
    if (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == ' ' || ch == '.') what += ch;
  return what;
}

/// MatMul: dispatches on the operands' ranks (dimensions of extent 1 left out) as DaCe's
/// SpecializeMatMul does: matrix @ matrix (Gemm; also when only the unsqueezed subsets are
/// matrices), batched (an operand of rank 3 or more), matrix @ vector (Gemv), vector @ matrix
/// (Gemv with A transposed), vector @ vector (Dot). C = alpha * (A @ B) + beta * C, with C the
/// `_cin` input where there is one.
void Expander::matmul(const Site& x) {
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
void Expander::gemm_node(const Site& x) {
  Operand a = required(x, "_a", true), b = required(x, "_b", true), c = required(x, "_c", false);
  std::optional<Operand> cin = operand(x, "_c", true, true);
  gemm(x, a, b, c, cin, flag(x, "transA"), flag(x, "transB"), coefficient(x, "alpha", 1), coefficient(x, "beta", 0),
       true);
}

/// Gemv (`_A`, `_x`, optional `_y` in -> `_y`; transA, alpha, beta).
void Expander::gemv_node(const Site& x) {
  Operand a = required(x, "_A", true), v = required(x, "_x", true), y = required(x, "_y", false);
  std::optional<Operand> yin = operand(x, "_y", true, true);
  gemv(x, "_A", a, "_x", v, "_y", y, yin, flag(x, "transA"), coefficient(x, "alpha", 1), coefficient(x, "beta", 0));
}

/// Dot (`_x`, `_y` -> `_result`).
void Expander::dot_node(const Site& x) {
  Operand a = required(x, "_x", true), b = required(x, "_y", true), r = required(x, "_result", false);
  std::optional<Operand> none;
  dot(x, "_x", a, "_y", b, "_result", r, none, Coefficient{"1", 1.0, nullptr}, Coefficient{"0", 0.0, nullptr});
}

/// BatchedMatMul (`_a`, `_b` -> `_c`).
void Expander::batched_matmul_node(const Site& x) {
  Operand a = required(x, "_a", true), b = required(x, "_b", true), c = required(x, "_c", false);
  batched_matmul(x, a, b, c);
}

/// C (M x N) = alpha * op(A) @ op(B) + beta * C.
void Expander::gemm(const Site& x, Operand& a, Operand& b, Operand& c, std::optional<Operand>& cin, bool ta, bool tb,
                    const Coefficient& alpha, const Coefficient& beta, bool squeeze) {
  std::vector<Expr> sa = a.shape(squeeze), sb = b.shape(squeeze), sc = c.shape(true);
  if (sa.size() != 2 || sb.size() != 2 || sc.size() != 2)
    refuse(x.ptr, fmt::format("{}: a matrix product needs matrices (ranks {}, {} -> {})", x.who(), sa.size(), sb.size(),
                              sc.size()));
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
        fmt::format("{}, {}, {}, {}, {}, {}, __a, {}, {}, __b, {}, {}, {}, __c, {}, {}", ta, tb, cpp(m), cpp(n), cpp(k),
                    scalar(alpha, c.desc->dtype), cpp(da.strides[0]), cpp(da.strides[1]), cpp(db.strides[0]),
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
void Expander::gemv(const Site& x, const std::string& an, Operand& a, const std::string& vn, Operand& v,
                    const std::string& yn, Operand& y, std::optional<Operand>& yin, bool trans,
                    const Coefficient& alpha, const Coefficient& beta) {
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
  p.factors = {{"__A", an, trans ? std::vector<std::string>{l, i} : std::vector<std::string>{i, l}}, {"__x", vn, {l}}};
  p.out = {"__out", yn, {i}};
  if (p.c_in) p.c_in->index = {i};
  p.alpha = alpha;
  p.beta = beta;
  build_product(e, p, schedule(x, ops));
  e.finish();
}

/// result (one element) = alpha * sum_i a[i] * b[i] + beta * result.
void Expander::dot(const Site& x, const std::string& an, Operand& a, const std::string& bn, Operand& b,
                   const std::string& rn, Operand& r, std::optional<Operand>& cin, const Coefficient& alpha,
                   const Coefficient& beta) {
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
void Expander::batched_matmul(const Site& x, Operand& a, Operand& b, Operand& c) {
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
void Expander::ger_node(const Site& x) {
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
void Expander::transpose(const Site& x) {
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

void Expander::tensor_transpose(const Site& x) {
  Operand in = required(x, "_inp_tensor", true), out = required(x, "_out_tensor", false);
  std::vector<Expr> si = in.shape(false), so = out.shape(false);
  std::string where = x.ptr + "/attributes/axes";
  auto it = x.node().extra.find("axes");
  if (it == x.node().extra.end() || !it->is_array())
    refuse(where, fmt::format("{}: expected the axes, a list of dimensions", x.who()));
  std::vector<std::size_t> axes;
  std::vector<bool> seen(si.size(), false);
  for (const Json& a : *it) {
    if (!a.is_number_integer() || a.get<std::int64_t>() < 0 || a.get<std::uint64_t>() >= si.size() ||
        seen[a.get<std::size_t>()])
      refuse(where, fmt::format("{}: the axes {} are not a permutation of the input's {} dimensions", x.who(),
                                it->dump(), si.size()));
    seen[a.get<std::size_t>()] = true;
    axes.push_back(a.get<std::size_t>());
  }
  if (axes.size() != si.size() || so.size() != si.size())
    refuse(where, fmt::format("{}: the axes {} do not match the input's {} and the output's {} dimensions", x.who(),
                              it->dump(), si.size(), so.size()));
  for (std::size_t k = 0; k < axes.size(); ++k)
    sizes_agree(x, so[k], si[axes[k]], fmt::format("output dimension {} and input dimension {}", k, axes[k]));
  Coefficient alpha = coefficient(x, "alpha", 1), beta = coefficient(x, "beta", 0);
  Expansion e(x, fmt::format("tensor_transpose_{}", counter_++));
  e.uses(alpha);
  if (!beta.is(0))  // the output would be read too, and the node has no input for it
    refuse(x.ptr + "/attributes/beta",
           fmt::format("{}: beta {} is not supported (only 0: the output is overwritten)", x.who(), beta.text));
  e.bind("_inp", in, true, false);
  e.bind("_out", out, false, false);
  Loops loops;
  for (std::size_t k = 0; k < si.size(); ++k) {
    loops.params.push_back(e.param(fmt::format("__i{}", k)));
    loops.ranges.push_back(range_of(si[k]));
  }
  std::vector<std::string> permuted;
  for (std::size_t k = 0; k < axes.size(); ++k) permuted.push_back(loops.params[axes[k]]);
  StateBuilder b = e.state("tensor_transpose");
  elementwise(b, "tensor_transpose", loops, {{"__inp", "_inp", loops.params}},
              alpha.is(1) ? "__out = __inp" : "__out = " + alpha.times("__inp"), {"__out", "_out", permuted},
              schedule(x, {&in, &out}));
  e.finish();
}

std::vector<std::size_t> Expander::axes(const Site& x, const char* name, std::size_t rank) {
  std::vector<std::size_t> out;
  auto it = x.node().extra.find(name);
  if (it == x.node().extra.end() || it->is_null()) return out;
  std::string where = x.ptr + "/attributes/" + name;
  if (!it->is_array()) refuse(where, fmt::format("{}: expected {} as a list of dimensions", x.who(), name));
  std::vector<bool> seen(rank, false);
  for (const Json& a : *it) {
    if (!a.is_number_integer() || a.get<std::int64_t>() < 0 || a.get<std::uint64_t>() >= rank ||
        seen[a.get<std::size_t>()])
      refuse(where,
             fmt::format("{}: {} {} are not distinct dimensions of a rank-{} tensor", x.who(), name, it->dump(), rank));
    seen[a.get<std::size_t>()] = true;
    out.push_back(a.get<std::size_t>());
  }
  return out;
}

void Expander::tensor_dot(const Site& x) {
  Operand l = required(x, "_left_tensor", true), r = required(x, "_right_tensor", true),
          o = required(x, "_out_tensor", false);
  std::vector<Expr> sl = l.shape(false), sr = r.shape(false), so = o.shape(false);
  std::vector<std::size_t> la = axes(x, "left_axes", sl.size()), ra = axes(x, "right_axes", sr.size());
  if (la.size() != ra.size())
    refuse(x.ptr + "/attributes/right_axes",
           fmt::format("{}: {} left and {} right contracted dimensions; they must pair up", x.who(), la.size(),
                       ra.size()));
  for (std::size_t k = 0; k < la.size(); ++k)
    sizes_agree(x, sl[la[k]], sr[ra[k]], fmt::format("left dimension {} and right dimension {}", la[k], ra[k]));
  Expansion e(x, fmt::format("tensor_dot_{}", counter_++));
  e.bind("_left", l, true, false);
  e.bind("_right", r, true, false);
  e.bind("_out", o, false, false);
  // The dot's dimensions: the free ones of the left tensor, then of the right, each a parameter.
  Loops dot, sums;
  std::vector<std::string> li(sl.size()), ri(sr.size());
  for (std::size_t k = 0; k < la.size(); ++k) {
    sums.params.push_back(e.param(fmt::format("__s{}", k)));
    sums.ranges.push_back(range_of(sl[la[k]]));
    li[la[k]] = ri[ra[k]] = sums.params.back();
  }
  std::vector<Expr> dot_shape;
  for (auto* side : {&li, &ri}) {
    const std::vector<Expr>& shape = side == &li ? sl : sr;
    for (std::size_t k = 0; k < side->size(); ++k) {
      if (!(*side)[k].empty()) continue;
      (*side)[k] = e.param(fmt::format("__o{}", dot.params.size()));
      dot.params.push_back((*side)[k]);
      dot.ranges.push_back(range_of(shape[k]));
      dot_shape.push_back(shape[k]);
    }
  }
  std::vector<std::size_t> perm = axes(x, "permutation", so.size());
  if (perm.empty())
    for (std::size_t k = 0; k < so.size(); ++k) perm.push_back(k);
  if (perm.size() != dot_shape.size() || so.size() != dot_shape.size())
    refuse(x.ptr, fmt::format("{}: the output has {} dimensions, the dot product {} (permutation of {})", x.who(),
                              so.size(), dot_shape.size(), perm.size()));
  std::vector<std::string> oi;
  for (std::size_t k = 0; k < perm.size(); ++k) {
    sizes_agree(x, so[k], dot_shape[perm[k]], fmt::format("output dimension {} and dot dimension {}", k, perm[k]));
    oi.push_back(dot.params[perm[k]]);
  }
  if (sums.params.empty()) {  // an outer product: nothing to sum
    StateBuilder b = e.state("tensor_dot");
    elementwise(b, "tensor_dot", dot, {{"__l", "_left", li}, {"__r", "_right", ri}}, "__out = __l * __r",
                {"__out", "_out", oi}, schedule(x, {&l, &r, &o}));
    return e.finish();
  }
  Product p;
  p.label = "tensor_dot";
  p.outs = dot;
  p.sums = sums;
  p.factors = {{"__l", "_left", li}, {"__r", "_right", ri}};
  p.out = {"__out", "_out", oi};
  p.alpha = Coefficient{"1", 1.0, nullptr};
  p.beta = Coefficient{"0", 0.0, nullptr};
  build_product(e, p, schedule(x, {&l, &r, &o}));
  e.finish();
}

void Expander::einsum(const Site& x) {
  std::string where = x.ptr + "/attributes/einsum_str";
  auto it = x.node().extra.find("einsum_str");
  if (it == x.node().extra.end() || !it->is_string()) refuse(where, fmt::format("{}: expected einsum_str", x.who()));
  std::string spec;
  for (char ch : it->get<std::string>())
    if (ch != ' ') spec += ch;
  auto arrow = spec.find("->");
  std::string lhs = spec.substr(0, arrow), out_letters;
  std::vector<std::string> terms;
  for (std::size_t b = 0;;) {
    auto c = lhs.find(',', b);
    terms.push_back(lhs.substr(b, c == std::string::npos ? std::string::npos : c - b));
    if (c == std::string::npos) break;
    b = c + 1;
  }
  std::map<char, int> count;
  for (auto& t : terms)
    for (char ch : t) {
      if (!std::isalpha(static_cast<unsigned char>(ch)))
        refuse(where, fmt::format("{}: \"{}\" is not supported (letters, ',' and '->' only; no '...')", x.who(),
                                  it->get<std::string>()));
      if (std::count(t.begin(), t.end(), ch) > 1)
        refuse(where,
               fmt::format("{}: letter '{}' twice in operand \"{}\" (a diagonal) is not supported", x.who(), ch, t));
      ++count[ch];
    }
  if (arrow == std::string::npos) {  // numpy's implicit mode: the letters used once, in order
    for (auto& [ch, n] : count)
      if (n == 1) out_letters += ch;
  } else {
    out_letters = spec.substr(arrow + 2);
  }
  if (out_letters.empty())
    refuse(where, fmt::format("{}: an einsum with a scalar result (\"{}\") is not supported; write it as a "
                              "reduction (numpy.sum of the product)",
                              x.who(), it->get<std::string>()));
  std::vector<std::string> conns;
  for (auto& c : x.node().in_connectors) conns.push_back(c.name);
  std::sort(conns.begin(), conns.end());
  if (conns.size() != terms.size() || x.node().out_connectors.size() != 1)
    refuse(x.ptr, fmt::format("{}: \"{}\" names {} operands; the node has {} inputs and {} outputs", x.who(),
                              it->get<std::string>(), terms.size(), conns.size(), x.node().out_connectors.size()));
  std::vector<Operand> ins;
  for (auto& c : conns) ins.push_back(required(x, c, true));
  const std::string out_conn = x.node().out_connectors[0].name;
  Operand out = required(x, out_conn, false);
  // Each letter's extent, from the first operand that has it; every other use must agree.
  std::map<char, Expr> extent;
  std::vector<bool> squeeze;
  auto letters_of = [&](const Operand& op, const std::string& letters, const std::string& what) {
    bool sq = op.rank() == letters.size();
    std::vector<Expr> shape = op.shape(sq);
    if (shape.size() != letters.size())
      refuse(x.ptr, fmt::format("{}: {} has {} dimensions, \"{}\" names {}", x.who(), what, shape.size(), letters,
                                letters.size()));
    for (std::size_t k = 0; k < letters.size(); ++k) {
      auto [e, fresh] = extent.emplace(letters[k], shape[k]);
      if (!fresh) sizes_agree(x, e->second, shape[k], fmt::format("the extents of letter '{}'", letters[k]));
    }
    squeeze.push_back(sq);
  };
  for (std::size_t k = 0; k < ins.size(); ++k) letters_of(ins[k], terms[k], "input " + conns[k]);
  for (char ch : out_letters)
    if (!extent.count(ch)) refuse(where, fmt::format("{}: output letter '{}' is in no input", x.who(), ch));
  letters_of(out, out_letters, "the output");
  Coefficient alpha = coefficient(x, "alpha", 1), beta = coefficient(x, "beta", 0);
  Expansion e(x, fmt::format("einsum_{}", counter_++));
  e.uses(alpha);
  e.uses(beta);
  std::vector<const Operand*> ops;
  for (std::size_t k = 0; k < ins.size(); ++k) {
    e.bind(conns[k], ins[k], true, squeeze[k]);
    ops.push_back(&ins[k]);
  }
  e.bind(out_conn, out, false, squeeze.back());
  ops.push_back(&out);
  std::map<char, std::string> param;
  Product p;
  for (auto& [ch, ext] : extent) param[ch] = e.param(std::string("__") + ch);
  auto index = [&](const std::string& letters) {
    std::vector<std::string> out_index;
    for (char ch : letters) out_index.push_back(param[ch]);
    return out_index;
  };
  for (char ch : out_letters) {
    p.outs.params.push_back(param[ch]);
    p.outs.ranges.push_back(range_of(extent[ch]));
  }
  for (auto& [ch, ext] : extent)
    if (out_letters.find(ch) == std::string::npos) {
      p.sums.params.push_back(param[ch]);
      p.sums.ranges.push_back(range_of(ext));
    }
  for (std::size_t k = 0; k < ins.size(); ++k)
    p.factors.push_back({"__in" + std::to_string(k), conns[k], index(terms[k])});
  p.out = {"__out", out_conn, index(out_letters)};
  p.label = "einsum";
  p.alpha = alpha;
  p.beta = beta;
  if (p.sums.params.empty()) {  // nothing summed: one product per output element
    std::string term;
    for (auto& f : p.factors) term += (term.empty() ? "" : " * ") + f.conn;
    if (!alpha.is(1)) term = alpha.times("(" + term + ")");
    std::vector<Access> reads = p.factors;
    if (!beta.is(0)) {
      reads.push_back({"__c", out_conn, p.out.index});
      term += " + " + (beta.is(1) ? std::string("__c") : beta.times("__c"));
    }
    StateBuilder b = e.state("einsum");
    elementwise(b, "einsum", p.outs, reads, "__out = " + term, p.out, schedule(x, ops));
    return e.finish();
  }
  build_product(e, p, schedule(x, ops));
  e.finish();
}

Expr Expander::square(const Site& x, const Operand& a, const char* conn) {
  if (a.rank() != 2)
    refuse(x.ptr, fmt::format("{}: operand {} has {} dimensions (of extent other than 1); a square matrix is expected",
                              x.who(), conn, a.rank()));
  std::vector<Expr> s = a.shape(true);
  sizes_agree(x, s[0], s[1], fmt::format("the rows and columns of {}", conn));
  return s[0];
}

void Expander::linalg_call(Expansion& e, const Site& x, const std::string& fn, DType t, const std::string& args,
                           const std::vector<std::pair<std::string, std::string>>& ins,
                           const std::pair<std::string, std::string>& out) {
  std::string code = fmt::format("sdfc::linalg::{}<{}>(\"{}\", {});", fn, dtype_ctype(t), call_label(x), args);
  StateBuilder b = e.state(fn);
  std::vector<std::string> conns;
  for (auto& [conn, array] : ins) conns.push_back(conn);
  int tk = b.tasklet("linalg_" + fn, conns, {out.first}, code, Language::CPP);
  b.state().node(tk).library_call = "linalg";
  for (auto& [conn, array] : ins) b.edge(b.access(array), "", tk, conn, array, whole(e, array));
  b.edge(tk, out.first, b.access(out.second), "", out.second, whole(e, out.second));
  libraries_.insert("linalg");
}

namespace {
/// Refuses GPU data: sdfc's linear-algebra functions run on the host.
void host_only(const Site& x, ScheduleType schedule) {
  if (schedule == ScheduleType::GPU_Device || is_gpu_schedule(schedule))
    refuse(x.ptr, fmt::format("{}: sdfc computes this on host data only (its runtime's LU and Cholesky); copy the "
                              "matrix to host memory first, or expand the node in DaCe (cuSolverDn)",
                              x.who()));
}
}  // namespace

void Expander::inv(const Site& x) {
  Operand a = required(x, "_ain", true), out = required(x, "_aout", false);
  host_only(x, schedule(x, {&a, &out}));
  Expr n = square(x, a, "_ain");
  sizes_agree(x, n, square(x, out, "_aout"), "the sizes of _ain and _aout");
  Expansion e(x, fmt::format("inv_{}", counter_++));
  e.bind("_ain", a, true, true);
  e.bind("_aout", out, false, true);
  e.uses_symbols(n);
  const DataDesc &da = e.array("_ain"), &dout = e.array("_aout");
  for (const Expr& s : {da.strides[0], da.strides[1], dout.strides[0], dout.strides[1]}) e.uses_symbols(s);
  linalg_call(e, x, "inv", out.desc->dtype,
              fmt::format("{}, __a, {}, {}, __out, {}, {}", cpp(n), cpp(da.strides[0]), cpp(da.strides[1]),
                          cpp(dout.strides[0]), cpp(dout.strides[1])),
              {{"__a", "_ain"}}, {"__out", "_aout"});
  e.finish();
}

void Expander::solve(const Site& x) {
  Operand a = required(x, "_ain", true), b = required(x, "_bin", true), out = required(x, "_bout", false);
  host_only(x, schedule(x, {&a, &b, &out}));
  Expr n = square(x, a, "_ain");
  if (b.rank() < 1 || b.rank() > 2 || out.rank() != b.rank())
    refuse(x.ptr, fmt::format("{}: the right-hand side has {} dimensions and the solution {}; a vector or a matrix "
                              "of both is expected",
                              x.who(), b.rank(), out.rank()));
  std::vector<Expr> sb = b.shape(true), so = out.shape(true);
  sizes_agree(x, n, sb[0], "the sizes of _ain and the rows of _bin");
  for (std::size_t k = 0; k < sb.size(); ++k) sizes_agree(x, sb[k], so[k], "the shapes of _bin and _bout");
  Expansion e(x, fmt::format("solve_{}", counter_++));
  e.bind("_ain", a, true, true);
  e.bind("_bin", b, true, true);
  e.bind("_bout", out, false, true);
  const DataDesc &da = e.array("_ain"), &db = e.array("_bin"), &dout = e.array("_bout");
  Expr m = sb.size() == 2 ? sb[1] : make_int(1);
  Expr b1 = sb.size() == 2 ? db.strides[1] : make_int(0), o1 = sb.size() == 2 ? dout.strides[1] : make_int(0);
  for (const Expr& s : {n, m, da.strides[0], da.strides[1], db.strides[0], b1, dout.strides[0], o1}) e.uses_symbols(s);
  linalg_call(e, x, "solve", out.desc->dtype,
              fmt::format("{}, {}, __a, {}, {}, __b, {}, {}, __out, {}, {}", cpp(n), cpp(m), cpp(da.strides[0]),
                          cpp(da.strides[1]), cpp(db.strides[0]), cpp(b1), cpp(dout.strides[0]), cpp(o1)),
              {{"__a", "_ain"}, {"__b", "_bin"}}, {"__out", "_bout"});
  e.finish();
}

void Expander::cholesky(const Site& x) {
  Operand a = required(x, "_a", true), out = required(x, "_b", false);
  host_only(x, schedule(x, {&a, &out}));
  Expr n = square(x, a, "_a");
  sizes_agree(x, n, square(x, out, "_b"), "the sizes of _a and _b");
  bool lower = !x.node().extra.contains("lower") || flag(x, "lower");  // DaCe's default: lower
  Expansion e(x, fmt::format("cholesky_{}", counter_++));
  e.bind("_a", a, true, true);
  e.bind("_b", out, false, true);
  const DataDesc &da = e.array("_a"), &dout = e.array("_b");
  for (const Expr& s : {n, da.strides[0], da.strides[1], dout.strides[0], dout.strides[1]}) e.uses_symbols(s);
  linalg_call(e, x, "cholesky", out.desc->dtype,
              fmt::format("{}, __a, {}, {}, __out, {}, {}, {}", cpp(n), cpp(da.strides[0]), cpp(da.strides[1]),
                          cpp(dout.strides[0]), cpp(dout.strides[1]), lower ? "true" : "false"),
              {{"__a", "_a"}}, {"__out", "_b"});
  e.finish();
}

}  // namespace sdfc::library
