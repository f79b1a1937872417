#include "passes/LowerWcr.h"

#include <fmt/format.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/Diagnostic.h"
#include "ir/Memlets.h"
#include "ir/Walk.h"
#include "lang/PythonTasklet.h"

namespace sdfc {

std::optional<WcrLowering> classify_wcr(std::string text) {
  std::vector<std::string> lambda = split_lambda(std::move(text));
  if (lambda.empty()) return std::nullopt;
  WcrLowering w;
  w.a = lambda[0];
  w.b = lambda[1];
  try {
    w.body = parse_expr(lambda[2]);
  } catch (const ExprSyntaxError&) {
    return std::nullopt;
  }
  const ExprNode& e = *w.body;
  auto is_ab = [&](const std::vector<Expr>& args) {
    if (args.size() != 2 || args[0]->kind != ExprKind::Symbol || args[1]->kind != ExprKind::Symbol) return false;
    return (args[0]->name == w.a && args[1]->name == w.b) || (args[0]->name == w.b && args[1]->name == w.a);
  };
  if (e.kind == ExprKind::Binary && is_ab(e.args)) {
    if (e.op == static_cast<int>(BinOp::Add)) w.op = WcrLowering::Op::Sum;
    if (e.op == static_cast<int>(BinOp::Mul)) w.op = WcrLowering::Op::Product;
  }
  if (e.kind == ExprKind::Call && is_ab(e.args)) {
    if (e.name == "max" || e.name == "Max") w.op = WcrLowering::Op::Max;
    if (e.name == "min" || e.name == "Min") w.op = WcrLowering::Op::Min;
  }
  return w;
}

namespace {

/// Where a write is printed: in a parallel scope (another thread may write the same element),
/// in a GPU kernel (which one: its state and map entry, while in that state), and the data that
/// is private to one thread there (a nested SDFG's connectors bound to such data).
struct Place {
  bool parallel = false;
  bool in_kernel = false;
  const Block* kernel_state = nullptr;
  int kernel_entry = -1;
  std::set<std::string> private_data;
};

/// The place of node `v` of `st`, the state's own place being `outer`: the enclosing maps, outer
/// first, as the code generator opens them (a GPU_Device map outside a kernel is a kernel; a
/// CPU_Multicore map outside one is an OpenMP loop; other maps are sequential loops).
Place place_of(const Block& st, int v, Place outer) {
  std::vector<int> chain;
  for (int s = st.node(v).kind == NodeKind::MapExit ? -1 : st.node(v).scope_entry; s >= 0; s = st.node(s).scope_entry)
    chain.push_back(s);
  Place p = outer;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    if (p.in_kernel) break;  // everything in a kernel is parallel already
    ScheduleType sch = st.node(*it).map.schedule;
    if (sch == ScheduleType::GPU_Device) p = Place{true, true, &st, *it, {}};
    if (sch == ScheduleType::CPU_Multicore) p.parallel = true;
  }
  return p;
}

/// Whether `data` of `s`, written at place `p` of state `st`, belongs to one GPU thread: a
/// transient placed in a map scope at or inside the kernel's map (each thread declares its own,
/// unless it is in shared or global memory), or data a nested SDFG's caller made private.
bool thread_private(const SDFG& s, const Block& st, const std::string& data, const Place& p) {
  if (!p.in_kernel) return false;
  if (p.private_data.count(data)) return true;
  const DataDesc* d = s.find_data(data);
  if (!d || !d->transient || d->place != DataDesc::Place::MapScope || d->place_state != &st || p.kernel_state != &st ||
      d->storage == StorageType::GPU_Shared || d->storage == StorageType::GPU_Global)
    return false;
  for (int m = d->place_scope; m >= 0; m = st.node(m).scope_entry)
    if (m == p.kernel_entry) return true;
  return false;
}

bool is_complex(DType t) {
  return t == DType::Complex64 || t == DType::Complex128;
}

class WcrLowerer {
 public:
  std::vector<Diagnostic> diags;

  void sdfg(SDFG& s, const std::string& ptr, Place outer) {
    walk::for_each_state(s, ptr, [&](Block& st, const std::string& sp) { state(s, st, sp, outer); });
  }

 private:
  void error(const std::string& ptr, std::string message) {
    diags.push_back(Diagnostic{"", ptr, 0, 0, std::move(message)});
  }

  void state(SDFG& s, Block& st, const std::string& sp, Place outer) {
    for (std::size_t i = 0; i < st.edges.size(); ++i) {
      DataEdge& e = st.edges[i];
      if (!e.memlet.wcr) continue;
      // The node whose emitter prints the write: a tasklet its outputs; an access node the copies
      // leaving it, and those entering it from its map's entry.
      EdgeRole role = edge_role(st, e);
      int at = role == EdgeRole::TaskletOutput || role == EdgeRole::Copy || role == EdgeRole::ScopeCopyOut ? e.src
               : role == EdgeRole::ScopeCopyIn                                                             ? e.dst
                                                                                                           : -1;
      if (at < 0) continue;
      std::string ep = walk::edge_pointer(st, sp, i);
      Place p = place_of(st, at, outer);
      bool copy = role != EdgeRole::TaskletOutput;
      if (copy && e.stream >= 0 && !p.in_kernel) {
        error(ep, "write-conflict resolution on a copy that involves GPU memory is not supported yet");
        continue;
      }
      std::optional<WcrLowering> w = classify_wcr(*e.memlet.wcr);
      if (!w) {
        error(ep + "/attributes/data/attributes/wcr",
              fmt::format("unsupported write-conflict resolution \"{}\"; expected a lambda of two arguments",
                          *e.memlet.wcr));
        continue;
      }
      DType t = written_type(s, st, e);
      if (is_struct(t)) {
        if (!translate_struct_lambda(s, *w, t, ep)) continue;
      }
      if (p.in_kernel && is_complex(t) && w->op != WcrLowering::Op::Sum) {
        error(ep + "/attributes/data/attributes/wcr",
              fmt::format("write-conflict resolution \"{}\" on {} data in a GPU kernel: only sums of complex "
                          "numbers have an atomic form",
                          *e.memlet.wcr, to_string(t)));
        continue;
      }
      // A write to data of one GPU thread has no other writer: no atomic (an atomic on a thread's
      // local memory is illegal: GT4Py's reductions with skip values trapped).
      std::string target = role == EdgeRole::TaskletOutput ? e.memlet.data : edge_subsets(s, st, e).dst_data;
      w->form = thread_private(s, st, target, p) ? WcrLowering::Form::Plain : form(*w, t, p);
      const bool device_atomic = w->form == WcrLowering::Form::DeviceAdd || w->form == WcrLowering::Form::DeviceCas;
      if (device_atomic && !is_complex(t) && !is_struct(t) && dtype_size(t) != 4 && dtype_size(t) != 8) {
        error(ep + "/attributes/data/attributes/wcr",
              fmt::format("write-conflict resolution \"{}\" on {} data in a GPU kernel: GPU atomics take 4- and "
                          "8-byte types only; write into int32, int64, float32 or float64 data (numpy.any/all: "
                          "sum an int32 copy, astype(numpy.int32), and compare it with 0)",
                          *e.memlet.wcr, to_string(t)));
        continue;
      }
      if (role == EdgeRole::TaskletOutput && e.memlet.dynamic && value_bound(st, e)) {
        w->identity = identity(w->op, t);
        if (w->identity.empty()) {
          error(ep + "/attributes/data/attributes/wcr",
                fmt::format("dynamic output \"{}\" of tasklet \"{}\" with write-conflict resolution \"{}\": the "
                            "tasklet may leave it unassigned, and only a sum, product, min or max has an identity "
                            "to start it with; write it on every path (and make the memlet not dynamic), or use "
                            "one of those",
                            *e.src_conn, st.node(e.src).label, *e.memlet.wcr));
          continue;
        }
      }
      e.wcr_lowering = std::move(w);
    }
    for (std::size_t v = 0; v < st.nodes.size(); ++v) {
      Node& n = *st.nodes[v];
      if (n.kind != NodeKind::NestedSDFG || !n.sdfg) continue;
      Place here = place_of(st, static_cast<int>(v), outer);
      Place inner{here.parallel, here.in_kernel, nullptr, -1, {}};
      for (const DataEdge& e : st.edges) {
        if (e.src == static_cast<int>(v) && e.src_conn && thread_private(s, st, e.memlet.data, here))
          inner.private_data.insert(*e.src_conn);
        if (e.dst == static_cast<int>(v) && e.dst_conn && thread_private(s, st, e.memlet.data, here))
          inner.private_data.insert(*e.dst_conn);
      }
      sdfg(*n.sdfg, walk::nested_sdfg_pointer(walk::node_pointer(st, sp, v)), inner);
    }
  }

  /// A lambda over values of struct type `t`: its body translated as a Python expression with
  /// `a` and `b` of that type (fields read as `x.val`, the result built as `S(...)`).
  bool translate_struct_lambda(const SDFG& s, WcrLowering& w, DType t, const std::string& ep) {
    TaskletScope scope;
    for (auto& [n, d] : s.symbols) scope.symbols[n] = d;
    scope.symbols[w.a] = t;
    scope.symbols[w.b] = t;
    scope.structs[std::string(to_string(t))] = t;
    std::string at = ep + "/attributes/data/attributes/wcr";
    try {
      ExpressionTranslation x =
          translate_python_expression(w.body, scope, "", at, "the write-conflict resolution", false);
      if (x.type != t) {
        error(at, fmt::format("write-conflict resolution on data of struct type \"{}\" gives a {} value; it must "
                              "give a \"{}\" (built as {}(...))",
                              to_string(t), to_string(x.type), to_string(t), to_string(t)));
        return false;
      }
      w.struct_body = x.text;
      w.body = nullptr;  // (dotted field names have no form in the IR file's expressions)
      return true;
    } catch (const UserError& err) {
      for (auto& d : err.diagnostics()) error(d.pointer.empty() ? at : d.pointer, d.message);
      return false;
    }
  }

  /// Whether tasklet output edge `e` binds its connector by value (written after the tasklet).
  static bool value_bound(const Block& st, const DataEdge& e) {
    const Connector* c = e.src_conn ? st.node(e.src).find_out(*e.src_conn) : nullptr;
    return c && e.memlet.subset && output_binding(*c, e.memlet, *e.memlet.subset) == ConnectorBinding::Value;
  }

  /// The identity of `op` on `t` as C++ text ("" where it has none sdfc prints): -0.0 for floating
  /// sums (x + -0.0 is x, -0.0 included), the type's extremes for min and max.
  static std::string identity(WcrLowering::Op op, DType t) {
    using Op = WcrLowering::Op;
    std::string c(dtype_ctype(t));
    if (is_complex(t)) {
      if (op == Op::Sum) return fmt::format("{}(-0.0, -0.0)", c);
      if (op == Op::Product) return fmt::format("{}(1.0, 0.0)", c);
      return "";
    }
    if (t == DType::Bool) return "";
    bool fp = is_float(t);
    static const std::map<DType, std::pair<const char*, const char*>> limits = {
        {DType::Int8, {"INT8_MIN", "INT8_MAX"}},    {DType::Int16, {"INT16_MIN", "INT16_MAX"}},
        {DType::Int32, {"INT32_MIN", "INT32_MAX"}}, {DType::Int64, {"INT64_MIN", "INT64_MAX"}},
        {DType::UInt8, {"0", "UINT8_MAX"}},         {DType::UInt16, {"0", "UINT16_MAX"}},
        {DType::UInt32, {"0", "UINT32_MAX"}},       {DType::UInt64, {"0", "UINT64_MAX"}}};
    switch (op) {
      case Op::Sum:
        return fp ? fmt::format("static_cast<{}>(-0.0)", c) : fmt::format("static_cast<{}>(0)", c);
      case Op::Product:
        return fmt::format("static_cast<{}>(1)", c);
      case Op::Min:
      case Op::Max: {
        if (fp) return fmt::format("static_cast<{}>({}INFINITY)", c, op == Op::Min ? "" : "-");
        auto it = limits.find(t);
        if (it == limits.end()) return "";
        return fmt::format("static_cast<{}>({})", c, op == Op::Min ? it->second.second : it->second.first);
      }
      case Op::Lambda:
        return "";
    }
    return "";
  }

  /// The dtype of the element written: the output connector's for a tasklet, else the data's.
  static DType written_type(const SDFG& s, const Block& st, const DataEdge& e) {
    const Node& src = st.node(e.src);
    if (src.kind == NodeKind::Tasklet && e.src_conn)
      if (const Connector* c = src.find_out(*e.src_conn); c && c->dtype) return *c->dtype;
    std::string data = e.memlet.data;
    if (src.kind != NodeKind::Tasklet) data = edge_subsets(s, st, e).dst_data;  // a copy: its destination
    const DataDesc* d = s.find_data(data);
    return d ? d->dtype : DType::Float64;
  }

  static WcrLowering::Form form(const WcrLowering& w, DType t, Place p) {
    using F = WcrLowering::Form;
    using Op = WcrLowering::Op;
    if (p.in_kernel) return w.op == Op::Sum ? F::DeviceAdd : F::DeviceCas;
    if (!p.parallel) return F::Plain;
    if (is_struct(t)) return F::HostCritical;
    if (is_complex(t)) return w.op == Op::Sum ? F::HostAtomic : F::HostCritical;
    return w.op == Op::Sum || w.op == Op::Product ? F::HostAtomic : F::HostCas;
  }
};

}  // namespace

void lower_wcr(SDFG& sdfg, const CompileOptions&) {
  WcrLowerer l;
  l.sdfg(sdfg, "", Place{});
  if (!l.diags.empty()) throw UserError(std::move(l.diags));
}

}  // namespace sdfc
