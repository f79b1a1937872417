#include "ir/SDFG.h"

#include <cstdio>

#include "ir/Diagnostic.h"

namespace sdfc {

const Connector* Node::find_in(const std::string& n) const {
  for (auto& c : in_connectors)
    if (c.name == n) return &c;
  return nullptr;
}
const Connector* Node::find_out(const std::string& n) const {
  for (auto& c : out_connectors)
    if (c.name == n) return &c;
  return nullptr;
}

std::string control_read_name(std::size_t n) {
  return "__sdfc_read" + std::to_string(n) + "__";
}

std::string with_reads(const ControlCode& code, const std::function<std::string(const ControlCode::Read&)>& print) {
  std::string text = code.cpp;
  for (std::size_t n = code.reads.size(); n-- > 0;) {
    std::string name = control_read_name(n), value = print(code.reads[n]);
    for (std::size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + value.size()))
      text.replace(at, name.size(), value);
  }
  return text;
}

bool InterstateEdge::unconditional() const {
  auto s = condition.code;
  return s == "1" || s == "True" || s == "(1)" || s.empty();
}

const DataDesc* SDFG::find_data(const std::string& n) const {
  for (auto& [k, d] : arrays)
    if (k == n) return &d;
  return nullptr;
}
DataDesc* SDFG::find_data(const std::string& n) {
  for (auto& [k, d] : arrays)
    if (k == n) return &d;
  return nullptr;
}
std::optional<DType> SDFG::symbol_type(const std::string& n) const {
  for (auto& [k, t] : symbols)
    if (k == n) return t;
  return std::nullopt;
}
const Callback* SDFG::find_callback(const std::string& n) const {
  for (auto& [k, c] : callbacks)
    if (k == n) return &c;
  return nullptr;
}
Dialect SDFG::dialect() const {
  return version_uses_typed_symbols(dace_version) ? Dialect::Typed : Dialect::Plain;
}

const char* to_string(DataDesc::Alloc a) {
  switch (a) {
    case DataDesc::Alloc::None:
      return "none";
    case DataDesc::Alloc::StateStruct:
      return "state-struct";
    case DataDesc::Alloc::Arena:
      return "arena";
    case DataDesc::Alloc::DeviceMalloc:
      return "device-malloc";
    case DataDesc::Alloc::DevicePool:
      return "device-pool";
    case DataDesc::Alloc::PinnedHost:
      return "pinned-host";
    case DataDesc::Alloc::HostHeap:
      return "host-heap";
    case DataDesc::Alloc::HostValue:
      return "host-value";
    case DataDesc::Alloc::ScopeValue:
      return "scope-value";
    case DataDesc::Alloc::ScopeArray:
      return "scope-array";
    case DataDesc::Alloc::SharedMemory:
      return "shared-memory";
  }
  return "?";
}

int dim_on_axis(const KernelPlan::Layout& layout, int axis, int dims) {
  if (axis >= dims || axis > 2 || (axis == 2 && dims > 3)) return -1;
  if (axis == 0) return layout.x;
  // The others in their order, from the last: y, then z.
  int seen = 0;
  for (int d = dims - 1; d >= 0; --d) {
    if (d == layout.x) continue;
    if (++seen == axis) return d;
  }
  return -1;
}

const char* to_string(KernelPlan::Param::Kind k) {
  switch (k) {
    case KernelPlan::Param::Kind::Pointer:
      return "pointer";
    case KernelPlan::Param::Kind::ConstPointer:
      return "const-pointer";
    case KernelPlan::Param::Kind::HostScalar:
      return "host-scalar";
    case KernelPlan::Param::Kind::DynamicInput:
      return "dynamic-input";
    case KernelPlan::Param::Kind::Symbol:
      return "symbol";
  }
  return "?";
}

const char* to_string(WcrLowering::Op op) {
  switch (op) {
    case WcrLowering::Op::Sum:
      return "sum";
    case WcrLowering::Op::Product:
      return "product";
    case WcrLowering::Op::Min:
      return "min";
    case WcrLowering::Op::Max:
      return "max";
    case WcrLowering::Op::Lambda:
      return "lambda";
  }
  return "?";
}

const char* to_string(WcrLowering::Form form) {
  switch (form) {
    case WcrLowering::Form::Plain:
      return "plain";
    case WcrLowering::Form::HostAtomic:
      return "omp-atomic";
    case WcrLowering::Form::HostCas:
      return "host-cas";
    case WcrLowering::Form::HostCritical:
      return "omp-critical";
    case WcrLowering::Form::DeviceAdd:
      return "device-atomic-add";
    case WcrLowering::Form::DeviceCas:
      return "device-cas";
  }
  return "?";
}

const char* to_string(NodeKind k) {
  switch (k) {
    case NodeKind::Access:
      return "access node";
    case NodeKind::MapEntry:
      return "map entry";
    case NodeKind::MapExit:
      return "map exit";
    case NodeKind::Tasklet:
      return "tasklet";
    case NodeKind::NestedSDFG:
      return "nested SDFG";
    case NodeKind::Library:
      return "library node";
  }
  return "node";
}

bool is_scope_passage(const Block& st, const DataEdge& e) {
  return (st.node(e.dst).kind == NodeKind::MapEntry && e.dst_conn && e.dst_conn->rfind("IN_", 0) == 0) ||
         (st.node(e.src).kind == NodeKind::MapExit && e.src_conn && e.src_conn->rfind("OUT_", 0) == 0);
}

void remove_edges(Block& state, const std::set<std::size_t>& edges) {
  std::vector<DataEdge> kept;
  for (std::size_t i = 0; i < state.edges.size(); ++i) {
    if (edges.count(i)) continue;
    DataEdge& e = state.edges[i];
    if (e.file_id < 0) e.file_id = static_cast<int>(i);
    kept.push_back(std::move(e));
  }
  state.edges = std::move(kept);
}

void remove_nodes(Block& state, const std::set<int>& nodes) {
  std::vector<int> new_id(state.nodes.size(), -1);
  std::vector<std::unique_ptr<Node>> kept;
  for (std::size_t v = 0; v < state.nodes.size(); ++v) {
    if (nodes.count(static_cast<int>(v))) continue;
    new_id[v] = static_cast<int>(kept.size());
    if (state.nodes[v]->file_id < 0) state.nodes[v]->file_id = static_cast<int>(v);
    kept.push_back(std::move(state.nodes[v]));
  }
  auto renumber = [&](int& id, const char* what) {
    if (id < 0) return;
    SDFC_ASSERT(new_id[static_cast<std::size_t>(id)] >= 0, std::string("removed node still referenced by ") + what);
    id = new_id[static_cast<std::size_t>(id)];
  };
  for (auto& e : state.edges) {
    renumber(e.src, "an edge");
    renumber(e.dst, "an edge");
  }
  for (auto& n : kept) {
    renumber(n->scope_entry, "a scope");
    renumber(n->scope_exit, "a scope");
  }
  state.nodes = std::move(kept);
}

int start_of(const Block& region) {
  int n = static_cast<int>(region.blocks.size());
  std::vector<bool> has_in(static_cast<std::size_t>(n), false);
  for (auto& e : region.cf_edges)
    if (e.dst >= 0 && e.dst < n) has_in[static_cast<std::size_t>(e.dst)] = true;
  int source = -1, sources = 0;
  for (int i = 0; i < n; ++i)
    if (!has_in[static_cast<std::size_t>(i)]) {
      source = i;
      ++sources;
    }
  if (sources == 1) return source;
  if (region.start_block >= 0 && region.start_block < n) return region.start_block;
  return n > 0 && sources == 0 ? 0 : source;
}

std::vector<Expr> c_order_strides(const std::vector<Expr>& shape) {
  std::vector<Expr> strides(shape.size());
  Expr acc = make_int(1);
  for (std::size_t i = shape.size(); i-- > 0;) {
    strides[i] = acc;
    acc = simplify(make_binary(BinOp::Mul, acc, shape[i]));
  }
  return strides;
}

Expr product(const std::vector<Expr>& shape) {
  Expr acc = make_int(1);
  for (auto& s : shape) acc = make_binary(BinOp::Mul, acc, s);
  return simplify(acc);
}

bool version_uses_typed_symbols(const std::string& version) {
  int major = 0, minor = 0, patch = 0;
  char pre = 0;
  int pre_n = 0;
  int got = std::sscanf(version.c_str(), "%d.%d.%d%c%d", &major, &minor, &patch, &pre, &pre_n);
  if (got < 1) return true;  // no or unreadable version: assume a current file
  if (major != 2) return major > 2;
  if (minor != 0 || patch != 0) return true;
  if (got < 4) return true;  // 2.0.0 final
  if (pre == 'a') return pre_n >= 4;
  return true;  // 2.0.0b*, 2.0.0rc*
}

std::vector<DynamicRangeInput> dynamic_range_inputs(const SDFG& sdfg, const Block& state, int entry) {
  std::vector<DynamicRangeInput> out;
  for (auto& conn : state.node(entry).in_connectors) {
    if (!is_dynamic_range_input(conn.name)) continue;  // most maps have none: no edge scan
    for (auto& e : state.edges) {
      if (e.dst != entry || !e.dst_conn || *e.dst_conn != conn.name) continue;
      if (e.memlet.data.empty() || !e.memlet.subset) break;
      const DataDesc* d = sdfg.find_data(e.memlet.data);
      out.push_back({conn.name, conn.dtype.value_or(d ? d->dtype : DType::Int64), &e});
      break;
    }
  }
  return out;
}

}  // namespace sdfc
