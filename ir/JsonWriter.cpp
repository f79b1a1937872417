#include "ir/JsonWriter.h"

#include <map>

#include "ir/Diagnostic.h"

namespace sdfc {
namespace {

class Writer {
 public:
  explicit Writer(Dialect d) : dialect_(d) {}

  Json sdfg(const SDFG& s, bool is_root) {
    // DaCe's cfg_list is in pre-order: an SDFG before the regions and nested SDFGs inside it (the
    // root is always 0).
    const int cfg_id = cfg_id_++;
    Json attrs = Json::object();
    attrs["name"] = s.name;
    Json arrays = Json::object();
    for (auto& [name, d] : s.arrays) {
      auto dot = name.rfind('.');
      const DataDesc* parent = dot == std::string::npos ? nullptr : s.find_data(name.substr(0, dot));
      if (parent && parent->structure) continue;  // written inside its structure
      arrays[name] = d.structure ? structure(s, name, d) : data_desc(d);
    }
    attrs["_arrays"] = arrays;
    Json syms = Json::object();
    for (auto& [name, t] : s.symbols) syms[name] = std::string(to_string(t));
    for (auto& [name, cb] : s.callbacks) syms[name] = callback(cb);
    attrs["symbols"] = syms;
    if (!s.arg_names.empty()) attrs["arg_names"] = s.arg_names;
    auto located = [&](const CodeBlock& frame, const std::vector<std::pair<std::string, CodeBlock>>& targets) {
      Json j = Json::object();
      j["frame"] = code(frame);
      for (auto& [where, c] : targets) j[where] = code(c);
      return j;
    };
    attrs["global_code"] = located(s.global_code, s.target_global_code);
    attrs["init_code"] = located(s.init_code, s.target_init_code);
    attrs["exit_code"] = located(s.exit_code, s.target_exit_code);
    merge(attrs, s.extra);

    Json j = Json::object();
    j["type"] = "SDFG";
    j["attributes"] = attrs;
    region_body(s.root, j);
    j["collapsed"] = false;
    j["label"] = "";
    j["id"] = nullptr;
    j["cfg_list_id"] = cfg_id;
    j["start_block"] = s.root.start_block < 0 ? Json(nullptr) : Json(s.root.start_block);
    merge(j, s.top_extra);
    if (is_root || !s.dace_version.empty()) j["dace_version"] = s.dace_version.empty() ? "2.0.0a6" : s.dace_version;
    return j;
  }

 private:
  Dialect dialect_;
  int cfg_id_ = 0;

  static void merge(Json& into, const Json& extra) {
    for (auto it = extra.begin(); it != extra.end(); ++it) into[it.key()] = it.value();
  }
  std::string ex(const Expr& e) const { return print_expr(e, dialect_); }
  Json ex_list(const std::vector<Expr>& v) const {
    Json a = Json::array();
    for (auto& e : v) a.push_back(ex(e));
    return a;
  }
  static Json code(const CodeBlock& c) {
    return {{"string_data", c.code}, {"language", std::string(to_string(c.language))}};
  }
  /// A dtype as DaCe writes it: its name, or for a struct the object DaCe's `struct` writes.
  static Json dtype(DType t) {
    const StructType* s = struct_of(t);
    if (!s) return std::string(to_string(t));
    Json fields = Json::array();
    for (auto& [name, type] : s->fields)
      fields.push_back({name, s->is_pointer(name) ? Json{{"type", "pointer"}, {"dtype", dtype(type)}} : dtype(type)});
    return {
        {"type", "struct"}, {"name", s->name}, {"data", fields}, {"length", Json::array()}, {"bytes", dtype_size(t)}};
  }
  static Json dtype_or_null(const std::optional<DType>& t) { return t ? dtype(*t) : Json(nullptr); }
  static Json connectors(const std::vector<Connector>& cs) {
    Json j = Json::object();
    for (auto& c : cs)
      j[c.name] = c.pointer ? Json{{"type", "pointer"}, {"dtype", dtype(*c.dtype)}} : dtype_or_null(c.dtype);
    return j;
  }
  static Json callback(const Callback& cb) {
    auto values = [](const std::vector<Callback::Value>& vs) {
      Json a = Json::array();
      for (auto& v : vs)
        a.push_back({{"type", v.array ? "Array" : "Scalar"}, {"attributes", {{"dtype", dtype(v.dtype)}}}});
      return a;
    };
    return {{"type", "callback"}, {"arguments", values(cb.arguments)}, {"returntypes", values(cb.results)}};
  }
  Json range(const Range& r) const {
    Json rs = Json::array();
    for (auto& d : r)
      rs.push_back({{"start", ex(d.start)}, {"end", ex(d.end)}, {"step", ex(d.step)}, {"tile", ex(d.tile)}});
    return {{"type", "Range"}, {"ranges", rs}};
  }

  /// A Structure as DaCe writes it: its members (the containers `name.field`) inside it.
  Json structure(const SDFG& s, const std::string& name, const DataDesc& d) const {
    const StructType* st = struct_of(d.dtype);
    SDFC_ASSERT(st, "structure without a struct type: " + name);
    Json members = Json::array();
    for (auto& [field, t] : st->fields) {
      std::string full = name + "." + field;
      const DataDesc* m = s.find_data(full);
      SDFC_ASSERT(m, "structure member without a container: " + full);
      members.push_back({field, m->structure ? structure(s, full, *m) : data_desc(*m)});
    }
    Json a = Json::object();
    a["members"] = members;
    a["name"] = st->name;
    a["shape"] = ex_list(d.shape);
    if (d.transient) a["transient"] = true;
    if (d.storage != StorageType::Default) a["storage"] = std::string(to_string(d.storage));
    merge(a, d.extra);
    return {{"type", "Structure"}, {"attributes", a}};
  }

  Json data_desc(const DataDesc& d) const {
    Json a = Json::object();
    if (d.kind == DataKind::Array) {
      a["strides"] = ex_list(d.strides);
      a["total_size"] = ex(d.total_size);
      a["offset"] = ex_list(d.offset);
    }
    if (d.optional_) a["optional"] = *d.optional_;
    if (d.pool) a["pool"] = true;
    a["dtype"] = dtype(d.dtype);
    a["shape"] = ex_list(d.shape);
    if (d.transient) a["transient"] = true;
    if (d.storage != StorageType::Default) a["storage"] = std::string(to_string(d.storage));
    if (d.lifetime != Lifetime::Scope) a["lifetime"] = std::string(to_string(d.lifetime));
    merge(a, d.extra);
    return {{"type", d.kind == DataKind::Scalar ? "Scalar" : d.view ? "ArrayView" : "Array"}, {"attributes", a}};
  }

  void region_body(const Block& r, Json& j) {
    Json nodes = Json::array();
    for (std::size_t i = 0; i < r.blocks.size(); ++i) nodes.push_back(block(*r.blocks[i], static_cast<int>(i)));
    Json edges = Json::array();
    for (auto& e : r.cf_edges) edges.push_back(interstate_edge(e));
    j["nodes"] = nodes;
    j["edges"] = edges;
  }

  Json interstate_edge(const InterstateEdge& e) const {
    Json a = Json::object();
    if (!e.assignments.empty()) {
      Json as = Json::object();
      for (auto& [k, v] : e.assignments) as[k] = v;
      a["assignments"] = as;
    }
    if (e.condition.code != "1") a["condition"] = code(e.condition);
    merge(a, e.extra);
    return {{"type", "Edge"},
            {"attributes", {{"data", {{"type", "InterstateEdge"}, {"attributes", a}}}}},
            {"src", std::to_string(e.src)},
            {"dst", std::to_string(e.dst)}};
  }

  Json block(const Block& b, int id) {
    Json j = Json::object();
    j["type"] = b.type_name;
    j["label"] = b.label;
    j["id"] = id < 0 ? Json(nullptr) : Json(id);
    j["collapsed"] = false;
    Json attrs = Json::object();
    switch (b.kind) {
      case BlockKind::State: {
        std::map<int, std::vector<int>> scopes;
        scopes[-1];
        for (std::size_t i = 0; i < b.nodes.size(); ++i) scopes[b.nodes[i]->scope_entry].push_back(static_cast<int>(i));
        Json sd = Json::object();
        for (auto& [k, v] : scopes) sd[std::to_string(k)] = v;
        j["scope_dict"] = sd;
        Json nodes = Json::array();
        for (std::size_t i = 0; i < b.nodes.size(); ++i) nodes.push_back(node(*b.nodes[i], static_cast<int>(i)));
        Json edges = Json::array();
        for (auto& e : b.edges) edges.push_back(data_edge(e));
        j["nodes"] = nodes;
        j["edges"] = edges;
        merge(attrs, b.extra);
        j["attributes"] = attrs;
        return j;
      }
      case BlockKind::Loop:
        if (b.update_statement) attrs["update_statement"] = code(*b.update_statement);
        if (b.init_statement) attrs["init_statement"] = code(*b.init_statement);
        attrs["loop_condition"] = code(b.loop_condition);
        attrs["loop_variable"] = b.loop_variable;
        if (b.inverted) attrs["inverted"] = true;
        if (!b.update_before_condition) attrs["update_before_condition"] = false;
        [[fallthrough]];
      case BlockKind::Region:
        merge(attrs, b.extra);
        j["attributes"] = attrs;
        j["cfg_list_id"] = cfg_id_++;
        j["start_block"] = b.start_block < 0 ? Json(nullptr) : Json(b.start_block);
        region_body(b, j);
        return j;
      case BlockKind::Conditional: {
        merge(attrs, b.extra);
        j["attributes"] = attrs;
        j["cfg_list_id"] = cfg_id_++;
        j["start_block"] = nullptr;
        Json branches = Json::array();
        for (auto& [cond, body] : b.branches)
          branches.push_back(Json::array({cond ? code(*cond) : Json(nullptr), block(*body, -1)}));
        j["branches"] = branches;
        return j;
      }
      default:
        merge(attrs, b.extra);
        j["attributes"] = attrs;
        j["nodes"] = Json::array();
        j["edges"] = Json::array();
        return j;
    }
  }

  Json node(const Node& n, int id) {
    static const char* names[] = {"AccessNode", "MapEntry", "MapExit", "Tasklet", "NestedSDFG", "LibraryNode"};
    Json a = Json::object();
    switch (n.kind) {
      case NodeKind::Access:
        a["data"] = n.data;
        break;
      case NodeKind::MapEntry: {
        a["label"] = n.map.label;
        a["params"] = n.map.params;
        a["range"] = range(n.map.range);
        if (n.map.schedule != ScheduleType::Default) a["schedule"] = std::string(to_string(n.map.schedule));
        if (!n.map.gpu_block_size.empty()) a["gpu_block_size"] = n.map.gpu_block_size;
        break;
      }
      case NodeKind::MapExit:
        break;
      case NodeKind::Tasklet:
        a["code"] = code(n.code);
        if (!n.code_global.code.empty()) a["code_global"] = code(n.code_global);
        a["label"] = n.label;
        break;
      case NodeKind::NestedSDFG: {
        a["sdfg"] = sdfg(*n.sdfg, false);
        Json m = Json::object();
        for (auto& [k, v] : n.symbol_mapping) m[k] = ex(v);
        a["symbol_mapping"] = m;
        a["label"] = n.label;
        break;
      }
      case NodeKind::Library:  // its properties are in extra, as read
        break;
    }
    if (n.kind != NodeKind::Access || !n.in_connectors.empty()) a["in_connectors"] = connectors(n.in_connectors);
    if (n.kind != NodeKind::Access || !n.out_connectors.empty()) a["out_connectors"] = connectors(n.out_connectors);
    merge(a, n.extra);
    Json j = Json::object();
    j["type"] = names[static_cast<int>(n.kind)];
    j["label"] = n.label;
    j["attributes"] = a;
    j["id"] = id;
    j["scope_entry"] = n.scope_entry < 0 ? Json(nullptr) : Json(std::to_string(n.scope_entry));
    j["scope_exit"] = n.scope_exit < 0 ? Json(nullptr) : Json(std::to_string(n.scope_exit));
    if (n.kind == NodeKind::Library) j["classpath"] = n.classpath;
    return j;
  }

  Json data_edge(const DataEdge& e) const {
    const Memlet& m = e.memlet;
    Json a = Json::object();
    a["volume"] = ex(m.volume);
    if (m.subset) a["subset"] = range(*m.subset);
    if (m.other_subset) a["other_subset"] = range(*m.other_subset);
    if (!m.data.empty()) a["data"] = m.data;
    if (m.dynamic) a["dynamic"] = true;
    if (m.wcr) a["wcr"] = *m.wcr;
    merge(a, m.extra);
    Json sub = m.subset ? range(*m.subset) : Json(nullptr);
    Json other = m.other_subset ? range(*m.other_subset) : Json(nullptr);
    a["src_subset"] = m.is_data_src ? sub : other;
    a["dst_subset"] = m.is_data_src ? other : sub;
    a["is_data_src"] = m.is_data_src;
    a["num_accesses"] = ex(m.volume);
    Json j = Json::object();
    j["type"] = "MultiConnectorEdge";
    j["attributes"] = {{"data", {{"type", "Memlet"}, {"attributes", a}}}};
    j["src"] = std::to_string(e.src);
    j["dst"] = std::to_string(e.dst);
    j["dst_connector"] = e.dst_conn ? Json(*e.dst_conn) : Json(nullptr);
    j["src_connector"] = e.src_conn ? Json(*e.src_conn) : Json(nullptr);
    return j;
  }
};

}  // namespace

Json to_json(const SDFG& sdfg) {
  return Writer(sdfg.dialect()).sdfg(sdfg, true);
}

std::string write_sdfg(const SDFG& sdfg, int indent) {
  // Compact output as DaCe writes it (separators=(',', ':')).
  return to_json(sdfg).dump(indent, ' ', false, Json::error_handler_t::replace);
}

}  // namespace sdfc
