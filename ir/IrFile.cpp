#include "ir/IrFile.h"

#include <fmt/format.h>

#include <map>

#include "ir/Diagnostic.h"
#include "ir/JsonReader.h"
#include "ir/JsonWriter.h"

namespace sdfc {
namespace {

/// The IR file format; a file of another is refused with a hint. 3 (2026-12-07): a kernel layout
/// is [x, lead, data_dim, pitch_dim, rows, block x, block y, block z] (2: without its block).
constexpr int kIrFormat = 3;

// Every field of the structs that carry pass decisions, named once. A field added to one of them
// stops the build here: add its name, and write and read it below when a pass decides it (or say
// that JsonWriter and JsonReader carry it, as they carry DaCe's format).
[[maybe_unused]] void every_field_is_named(DataDesc& d, Node& n, DataEdge& e, InterstateEdge& ie, Block& b, SDFG& s,
                                           KernelPlan& k, KernelPlan::Layout& l, WcrLowering& w, Workspace& ws) {
  // DaCe's format (JsonWriter) | decisions (here)
  [[maybe_unused]] auto& [d_kind, d_view, d_structure, d_member, d_dtype, d_shape, d_strides, d_total_size, d_offset,
                          d_transient, d_storage, d_lifetime, d_pool, d_optional, d_constant, d_extra,  // DaCe's
                          d_place, d_place_state, d_place_scope, d_lifetime_from_mode, d_workspace_offset,
                          d_arena_offset, d_alloc, d_layout_follows, d_layout_dims] = d;
  [[maybe_unused]] auto& [n_kind, n_label, n_in, n_out, n_scope_entry, n_scope_exit, n_data, n_map, n_code,
                          n_code_global, n_sdfg, n_symbol_mapping, n_classpath, n_extra,  // DaCe's
                          n_stream, n_host_waits, n_wait_events, n_record_event, n_device_sync_after, n_library_call,
                          n_kernel, n_graph_capture_only, n_cpp_code, n_file_id] = n;
  [[maybe_unused]] auto& [e_src, e_dst, e_src_conn, e_dst_conn, e_memlet,  // DaCe's
                          e_stream, e_wait_events, e_record_event, e_wcr_lowering, e_file_id] = e;
  [[maybe_unused]] auto& [ie_src, ie_dst, ie_condition, ie_assignments, ie_extra,  // DaCe's
                          ie_host_waits, ie_cpp_condition, ie_cpp_assignments] = ie;
  [[maybe_unused]] auto& [b_kind, b_label, b_type_name, b_extra, b_nodes, b_edges, b_blocks, b_cf_edges, b_start_block,
                          b_loop_variable, b_init, b_update, b_condition, b_inverted, b_update_before_condition,
                          b_branches,  // DaCe's
                          b_graph_host_work, b_graph_segment, b_graph_key, b_host_waits, b_fork_event, b_fork_streams,
                          b_join_events, b_cpp_init, b_cpp_condition, b_cpp_update, b_cpp_branch_conditions] = b;
  [[maybe_unused]] auto& [s_name, s_arrays, s_symbols, s_callbacks, s_arg_names, s_global_code, s_init_code,
                          s_exit_code, s_target_global, s_target_init, s_target_exit, s_root, s_dace_version, s_extra,
                          s_top_extra,  // DaCe's
                          s_gpu_exit_sync, s_workspaces, s_arena, s_num_events, s_libraries, s_std_includes,
                          s_external_sync, s_gpu_graph, s_graph_segments, s_sync_streams, s_passes_run] = s;
  [[maybe_unused]] auto& [k_params, k_thread_block, k_block, k_rows, k_march, k_layouts, k_layout_data,
                          k_dependent_launch, k_early_trigger, k_split_index, k_hoisted_bases, k_accumulations] = k;
  [[maybe_unused]] auto& [l_x, l_lead, l_data_dim, l_pitch_dim, l_rows, l_block] = l;
  [[maybe_unused]] auto& [w_op, w_form, w_a, w_b, w_body, w_struct_body, w_identity] = w;
  [[maybe_unused]] auto& [ws_storage, ws_members, ws_alignment, ws_bytes, ws_unshared, ws_stream_ordered, ws_held] = ws;
}

const char* place_name(DataDesc::Place p) {
  switch (p) {
    case DataDesc::Place::Call:
      return "call";
    case DataDesc::Place::State:
      return "state";
    case DataDesc::Place::MapScope:
      return "map-scope";
  }
  return "?";
}

/// Members of `full` whose value differs from `defaults`' (a decision left at the IR's default is
/// not written).
Json changed(Json full, const Json& defaults) {
  for (auto it = defaults.begin(); it != defaults.end(); ++it)
    if (auto f = full.find(it.key()); f != full.end() && *f == it.value()) full.erase(f);
  return full;
}

/// The path of every block of an SDFG (not of its nested SDFGs) from its root region: an index
/// into a region's blocks, or into a conditional's branches (whose body is the next block).
void block_paths(const Block& region, Json path, std::map<const Block*, Json>& out) {
  out[&region] = path;
  auto step = [&](const Block& b, std::size_t i) {
    Json p = path;
    p.push_back(i);
    block_paths(b, p, out);
  };
  for (std::size_t i = 0; i < region.blocks.size(); ++i) step(*region.blocks[i], i);
  for (std::size_t i = 0; i < region.branches.size(); ++i) step(*region.branches[i].second, i);
}

// ------------------------------------------------------------------------------------- writing

class DecisionWriter {
 public:
  explicit DecisionWriter(Dialect d) : dialect_(d) {}

  /// Adds the decisions of `s` (and of everything in it) to its JSON `j`, as JsonWriter wrote it.
  void sdfg(Json& j, const SDFG& s) {
    std::map<const Block*, Json> paths;
    block_paths(s.root, Json::array(), paths);
    put(j, sdfg_decisions(s), sdfg_decisions(SDFG{}));
    Json& arrays = j["attributes"]["_arrays"];
    for (auto& [name, d] : s.arrays) put(arrays[name], desc(d, paths), desc(DataDesc{}, paths));
    region(j, s.root);
  }

 private:
  Dialect dialect_;

  /// The decisions in `full` that differ from `defaults`, into `into`'s member "sdfc" (merged: the
  /// root SDFG's share it with the file's header).
  static void put(Json& into, const Json& full, const Json& defaults) {
    Json c = changed(full, defaults);
    for (auto it = c.begin(); it != c.end(); ++it) into["sdfc"][it.key()] = it.value();
  }
  Json ex(const Expr& e) const { return e ? Json(print_expr(e, dialect_)) : Json(nullptr); }
  /// translate-python's C++: {"cpp": text, "reads": [[container, [index, ...]], ...]}; null when
  /// not translated.
  Json control(const ControlCode& c) const {
    if (!c.translated()) return nullptr;
    Json reads = Json::array();
    for (auto& r : c.reads) {
      Json index = Json::array();
      for (auto& x : r.index) index.push_back(ex(x));
      reads.push_back({r.data, index});
    }
    return {{"cpp", c.cpp}, {"reads", reads}};
  }
  Json controls(const std::vector<ControlCode>& cs) const {
    Json out = Json::array();
    for (auto& c : cs) out.push_back(control(c));
    return out;
  }

  Json workspace(const Workspace& w) const {
    return {{"storage", std::string(to_string(w.storage))},
            {"members", w.members},
            {"alignment", w.alignment},
            {"bytes", ex(w.bytes)},
            {"unshared_bytes", ex(w.unshared_bytes)},
            {"stream_ordered", w.stream_ordered},
            {"held", w.held}};
  }
  Json sdfg_decisions(const SDFG& s) const {
    Json workspaces = Json::array();
    for (auto& w : s.workspaces) workspaces.push_back(workspace(w));
    return {{"gpu_exit_sync", s.gpu_exit_sync}, {"workspaces", workspaces}, {"arena", workspace(s.arena)},
            {"num_events", s.num_events},       {"libraries", s.libraries}, {"std_includes", s.std_includes},
            {"external_sync", s.external_sync}, {"gpu_graph", s.gpu_graph}, {"graph_segments", s.graph_segments},
            {"sync_streams", s.sync_streams}};
  }
  Json desc(const DataDesc& d, const std::map<const Block*, Json>& paths) const {
    auto state = d.place_state ? paths.find(d.place_state) : paths.end();
    return {{"place", place_name(d.place)},
            {"place_state", state == paths.end() ? Json(nullptr) : state->second},
            {"place_scope", d.place_scope},
            {"lifetime_from_mode", d.lifetime_from_mode},
            {"workspace_offset", ex(d.workspace_offset)},
            {"arena_offset", ex(d.arena_offset)},
            {"alloc", to_string(d.alloc)},
            {"layout_follows", d.layout_follows},
            {"layout_dims", d.layout_dims}};
  }
  Json block_decisions(const Block& b) const {
    Json joins = Json::array();
    for (auto& [stream, event] : b.join_events) joins.push_back({stream, event});
    return {{"graph_host_work", b.graph_host_work},
            {"graph_segment", b.graph_segment},
            {"graph_key", b.graph_key},
            {"host_waits", b.host_waits},
            {"fork_event", b.fork_event},
            {"fork_streams", b.fork_streams},
            {"join_events", joins},
            {"cpp_init", control(b.cpp_init)},
            {"cpp_condition", control(b.cpp_condition)},
            {"cpp_update", control(b.cpp_update)},
            {"cpp_branch_conditions", controls(b.cpp_branch_conditions)}};
  }
  Json interstate_decisions(const InterstateEdge& e) const {
    return {{"host_waits", e.host_waits},
            {"cpp_condition", control(e.cpp_condition)},
            {"cpp_assignments", controls(e.cpp_assignments)}};
  }
  Json kernel(const KernelPlan& k) const {
    Json params = Json::array(), layouts = Json::array(), bases = Json::array();
    for (auto& b : k.hoisted_bases) bases.push_back({b.data, ex(b.value)});
    Json accumulations = Json::array();
    for (auto& a : k.accumulations) accumulations.push_back({a.edge, a.combined, a.per_point});
    for (auto& p : k.params) params.push_back({to_string(p.kind), p.name, std::string(to_string(p.type))});
    for (auto& l : k.layouts)
      layouts.push_back({l.x, l.lead, l.data_dim, l.pitch_dim, l.rows, l.block[0], l.block[1], l.block[2]});
    return {{"params", params},
            {"thread_block", k.thread_block},
            {"block", {k.block[0], k.block[1], k.block[2]}},
            {"rows", k.rows},
            {"march", k.march},
            {"layouts", layouts},
            {"layout_data", k.layout_data},
            {"dependent_launch", k.dependent_launch},
            {"early_trigger_blocks_per_sm", k.early_trigger_blocks_per_sm},
            {"split_index", k.split_index},
            {"hoisted_bases", bases},
            {"accumulations", accumulations}};
  }
  /// A node's or an edge's stream and the events its stream waits for and records.
  template <typename T>
  static Json stream_decisions(const T& x) {
    return {{"stream", x.stream}, {"wait_events", x.wait_events}, {"record_event", x.record_event}};
  }
  Json node_decisions(const Node& n) const {
    Json j = stream_decisions(n);
    j.update(Json{{"host_waits", n.host_waits},
                  {"device_sync_after", n.device_sync_after},
                  {"library_call", n.library_call},
                  {"kernel", n.kernel ? kernel(*n.kernel) : Json(nullptr)},
                  {"graph_capture_only", n.graph_capture_only},
                  {"cpp_code", n.cpp_code ? Json(*n.cpp_code) : Json(nullptr)},
                  {"file_id", n.file_id}});
    return j;
  }
  Json edge_decisions(const DataEdge& e) const {
    Json wcr = nullptr;
    if (auto& w = e.wcr_lowering)
      wcr = {{"op", to_string(w->op)},
             {"form", to_string(w->form)},
             {"a", w->a},
             {"b", w->b},
             {"body", ex(w->body)},
             {"struct_body", w->struct_body},
             {"identity", w->identity}};
    Json j = stream_decisions(e);
    j.update(Json{{"wcr_lowering", wcr}, {"file_id", e.file_id}});
    return j;
  }

  void region(Json& j, const Block& r) {
    for (std::size_t i = 0; i < r.blocks.size(); ++i) block(j["nodes"][i], *r.blocks[i]);
    for (std::size_t i = 0; i < r.cf_edges.size(); ++i)
      put(j["edges"][i], interstate_decisions(r.cf_edges[i]), interstate_decisions(InterstateEdge{}));
  }
  void block(Json& j, const Block& b) {
    put(j, block_decisions(b), block_decisions(Block(b.kind)));
    switch (b.kind) {
      case BlockKind::State:
        for (std::size_t i = 0; i < b.nodes.size(); ++i) {
          const Node& n = *b.nodes[i];
          Json& jn = j["nodes"][i];
          put(jn, node_decisions(n), node_decisions(Node(n.kind)));
          if (n.kind == NodeKind::NestedSDFG) sdfg(jn["attributes"]["sdfg"], *n.sdfg);
        }
        for (std::size_t i = 0; i < b.edges.size(); ++i)
          put(j["edges"][i], edge_decisions(b.edges[i]), edge_decisions(DataEdge{}));
        break;
      case BlockKind::Region:
      case BlockKind::Loop:
        region(j, b);
        break;
      case BlockKind::Conditional:
        for (std::size_t i = 0; i < b.branches.size(); ++i) block(j["branches"][i][1], *b.branches[i].second);
        break;
      default:
        break;
    }
  }
};

// ------------------------------------------------------------------------------------- reading

class DecisionReader {
 public:
  DecisionReader(std::string file, Dialect d) : file_(std::move(file)), dialect_(d) {}

  void sdfg(const Json& j, const std::string& ptr, SDFG& s) {
    s.top_extra.erase("sdfc");
    std::map<const Block*, Json> paths;
    block_paths(s.root, Json::array(), paths);
    if (const Json* o = member(j, ptr)) sdfg_decisions(*o, ptr + "/sdfc", s);
    const Json& arrays = j.at("attributes").at("_arrays");
    for (auto& [name, d] : s.arrays)
      if (const Json* o = member(arrays.at(name), ptr + "/attributes/_arrays/" + pointer_token(name)))
        desc(*o, ptr + "/attributes/_arrays/" + pointer_token(name) + "/sdfc", paths, d);
    region(j, ptr, s.root);
  }

 private:
  std::string file_;
  Dialect dialect_;

  [[noreturn]] void fail(const std::string& ptr, const std::string& msg) const {
    throw UserError(Diagnostic{file_, ptr, 0, 0, msg + " (an sdfc IR file's decision; write it again with sdfc opt)"});
  }
  const Json* member(const Json& obj, const std::string& ptr) const {
    auto it = obj.find("sdfc");
    if (it == obj.end()) return nullptr;
    if (!it->is_object()) fail(ptr + "/sdfc", "expected an object of pass decisions");
    return &*it;
  }
  /// Member `key` of decisions `o` at `ptr` into `value` (left alone when absent), converted as T.
  template <typename T>
  void get(const Json& o, const std::string& ptr, const char* key, T& value) const {
    auto it = o.find(key);
    if (it == o.end()) return;
    try {
      value = it->get<T>();
    } catch (const Json::exception&) {
      fail(ptr + "/" + key, fmt::format("unexpected {}", it->type_name()));
    }
  }
  Expr expr(const Json& o, const std::string& ptr, const char* key, Expr value) const {
    auto it = o.find(key);
    if (it == o.end() || it->is_null()) return value;
    if (!it->is_string()) fail(ptr + "/" + key, "expected an expression (a string)");
    try {
      return parse_expr(it->get<std::string>(), dialect_);
    } catch (const ExprSyntaxError& e) {
      fail(ptr + "/" + key, e.what());
    }
  }
  /// The enum value whose name (`name_of`) is member `key`; `value` when absent.
  template <typename E, int N, typename F>
  E named(const Json& o, const std::string& ptr, const char* key, F name_of, E value) const {
    std::string text;
    get(o, ptr, key, text);
    if (o.find(key) == o.end()) return value;
    for (int i = 0; i < N; ++i)
      if (text == name_of(static_cast<E>(i))) return static_cast<E>(i);
    fail(ptr + "/" + key, fmt::format("unknown value \"{}\"", text));
  }
  DType dtype(const std::string& text, const std::string& ptr) const {
    auto t = parse_dtype(text);
    if (!t) fail(ptr, fmt::format("unknown data type \"{}\"", text));
    return *t;
  }

  Workspace workspace(const Json& o, const std::string& ptr) const {
    Workspace w;
    std::string storage = std::string(to_string(w.storage));
    get(o, ptr, "storage", storage);
    auto st = parse_storage(storage);
    if (!st) fail(ptr + "/storage", fmt::format("unknown storage \"{}\"", storage));
    w.storage = *st;
    get(o, ptr, "members", w.members);
    get(o, ptr, "alignment", w.alignment);
    w.bytes = expr(o, ptr, "bytes", nullptr);
    w.unshared_bytes = expr(o, ptr, "unshared_bytes", nullptr);
    get(o, ptr, "stream_ordered", w.stream_ordered);
    get(o, ptr, "held", w.held);
    return w;
  }
  void sdfg_decisions(const Json& o, const std::string& ptr, SDFG& s) const {
    get(o, ptr, "gpu_exit_sync", s.gpu_exit_sync);
    if (auto it = o.find("workspaces"); it != o.end()) {
      if (!it->is_array()) fail(ptr + "/workspaces", "expected an array");
      for (std::size_t i = 0; i < it->size(); ++i)
        s.workspaces.push_back(workspace((*it)[i], ptr + "/workspaces/" + std::to_string(i)));
    }
    if (auto it = o.find("arena"); it != o.end()) s.arena = workspace(*it, ptr + "/arena");
    get(o, ptr, "num_events", s.num_events);
    get(o, ptr, "libraries", s.libraries);
    get(o, ptr, "std_includes", s.std_includes);
    get(o, ptr, "external_sync", s.external_sync);
    get(o, ptr, "gpu_graph", s.gpu_graph);
    get(o, ptr, "graph_segments", s.graph_segments);
    get(o, ptr, "sync_streams", s.sync_streams);
  }
  void desc(const Json& o, const std::string& ptr, const std::map<const Block*, Json>& paths, DataDesc& d) const {
    d.place = named<DataDesc::Place, 3>(o, ptr, "place", place_name, d.place);
    if (auto it = o.find("place_state"); it != o.end() && !it->is_null()) {
      for (auto& [block, path] : paths)
        if (path == *it) d.place_state = block;
      if (!d.place_state) fail(ptr + "/place_state", fmt::format("no block at path {}", it->dump()));
    }
    get(o, ptr, "place_scope", d.place_scope);
    get(o, ptr, "lifetime_from_mode", d.lifetime_from_mode);
    d.workspace_offset = expr(o, ptr, "workspace_offset", d.workspace_offset);
    d.arena_offset = expr(o, ptr, "arena_offset", d.arena_offset);
    d.alloc = named<DataDesc::Alloc, 11>(
        o, ptr, "alloc", [](DataDesc::Alloc a) { return to_string(a); }, d.alloc);
    get(o, ptr, "layout_follows", d.layout_follows);
    get(o, ptr, "layout_dims", d.layout_dims);
  }
  KernelPlan kernel(const Json& o, const std::string& ptr) const {
    KernelPlan k;
    k.layouts.clear();
    auto tuples = [&](const char* key, std::size_t arity, auto each) {
      auto it = o.find(key);
      if (it == o.end()) return;
      if (!it->is_array()) fail(ptr + "/" + key, "expected an array");
      for (std::size_t i = 0; i < it->size(); ++i) {
        const Json& t = (*it)[i];
        std::string at = ptr + "/" + key + "/" + std::to_string(i);
        if (!t.is_array() || t.size() != arity) fail(at, fmt::format("expected an array of {} values", arity));
        try {
          each(t, at);
        } catch (const Json::exception&) {
          fail(at, "unexpected value");
        }
      }
    };
    tuples("params", 3, [&](const Json& t, const std::string& at) {
      KernelPlan::Param p;
      Json kind = {{"kind", t[0]}};
      p.kind = named<KernelPlan::Param::Kind, 5>(
          kind, at, "kind", [](KernelPlan::Param::Kind x) { return to_string(x); }, p.kind);
      p.name = t[1].get<std::string>();
      p.type = dtype(t[2].get<std::string>(), at + "/2");
      k.params.push_back(p);
    });
    tuples("layouts", 8, [&](const Json& t, const std::string&) {
      k.layouts.push_back(KernelPlan::Layout{t[0].get<int>(),
                                             t[1].get<int>(),
                                             t[2].get<int>(),
                                             t[3].get<int>(),
                                             t[4].get<int>(),
                                             {t[5].get<int>(), t[6].get<int>(), t[7].get<int>()}});
    });
    get(o, ptr, "thread_block", k.thread_block);
    std::vector<int> block = {k.block[0], k.block[1], k.block[2]};
    get(o, ptr, "block", block);
    if (block.size() != 3) fail(ptr + "/block", "expected 3 values");
    for (int a = 0; a < 3; ++a) k.block[a] = block[static_cast<std::size_t>(a)];
    get(o, ptr, "rows", k.rows);
    get(o, ptr, "march", k.march);
    get(o, ptr, "layout_data", k.layout_data);
    get(o, ptr, "dependent_launch", k.dependent_launch);
    get(o, ptr, "early_trigger_blocks_per_sm", k.early_trigger_blocks_per_sm);
    get(o, ptr, "split_index", k.split_index);
    tuples("hoisted_bases", 2, [&](const Json& t, const std::string& at) {
      Json value = {{"value", t[1]}};
      k.hoisted_bases.push_back({t[0].get<std::string>(), expr(value, at, "value", nullptr)});
      if (!k.hoisted_bases.back().value) fail(at + "/1", "expected an expression (a string)");
    });
    tuples("accumulations", 3, [&](const Json& t, const std::string&) {
      k.accumulations.push_back({t[0].get<int>(), t[1].get<bool>(), t[2].get<bool>()});
    });
    return k;
  }
  template <typename T>
  void stream_decisions(const Json& o, const std::string& ptr, T& x) const {
    get(o, ptr, "stream", x.stream);
    get(o, ptr, "wait_events", x.wait_events);
    get(o, ptr, "record_event", x.record_event);
  }
  void node(const Json& o, const std::string& ptr, Node& n) const {
    stream_decisions(o, ptr, n);
    get(o, ptr, "host_waits", n.host_waits);
    get(o, ptr, "device_sync_after", n.device_sync_after);
    get(o, ptr, "library_call", n.library_call);
    if (auto it = o.find("kernel"); it != o.end() && !it->is_null()) n.kernel = kernel(*it, ptr + "/kernel");
    get(o, ptr, "graph_capture_only", n.graph_capture_only);
    if (auto it = o.find("cpp_code"); it != o.end() && !it->is_null()) {
      std::string text;
      get(o, ptr, "cpp_code", text);
      n.cpp_code = text;
    }
    get(o, ptr, "file_id", n.file_id);
  }
  void edge(const Json& o, const std::string& ptr, DataEdge& e) const {
    stream_decisions(o, ptr, e);
    if (auto it = o.find("wcr_lowering"); it != o.end() && !it->is_null()) {
      std::string at = ptr + "/wcr_lowering";
      WcrLowering w;
      w.op = named<WcrLowering::Op, 5>(
          *it, at, "op", [](WcrLowering::Op x) { return to_string(x); }, w.op);
      w.form = named<WcrLowering::Form, 6>(
          *it, at, "form", [](WcrLowering::Form x) { return to_string(x); }, w.form);
      get(*it, at, "a", w.a);
      get(*it, at, "b", w.b);
      w.body = expr(*it, at, "body", nullptr);
      get(*it, at, "struct_body", w.struct_body);
      get(*it, at, "identity", w.identity);
      e.wcr_lowering = w;
    }
    get(o, ptr, "file_id", e.file_id);
  }
  ControlCode control(const Json& o, const std::string& ptr, const char* key) const {
    ControlCode c;
    auto it = o.find(key);
    if (it == o.end() || it->is_null()) return c;
    return control(*it, ptr + "/" + key);
  }
  ControlCode control(const Json& j, const std::string& at) const {
    ControlCode c;
    if (j.is_null()) return c;
    if (!j.is_object()) fail(at, "expected C++ code (an object with cpp and reads)");
    get(j, at, "cpp", c.cpp);
    if (!c.translated()) fail(at + "/cpp", "expected the C++ text");
    auto reads = j.find("reads");
    if (reads == j.end()) return c;
    if (!reads->is_array()) fail(at + "/reads", "expected an array");
    for (std::size_t i = 0; i < reads->size(); ++i) {
      const Json& r = (*reads)[i];
      std::string rp = at + "/reads/" + std::to_string(i);
      if (!r.is_array() || r.size() != 2 || !r[0].is_string() || !r[1].is_array())
        fail(rp, "expected [container, [index, ...]]");
      ControlCode::Read read{r[0].get<std::string>(), {}};
      for (std::size_t k = 0; k < r[1].size(); ++k)
        read.index.push_back(expr(Json{{"i", r[1][k]}}, rp + "/1/" + std::to_string(k), "i", nullptr));
      c.reads.push_back(std::move(read));
    }
    return c;
  }
  std::vector<ControlCode> controls(const Json& o, const std::string& ptr, const char* key) const {
    std::vector<ControlCode> out;
    auto it = o.find(key);
    if (it == o.end()) return out;
    if (!it->is_array()) fail(ptr + "/" + key, "expected an array");
    for (std::size_t i = 0; i < it->size(); ++i)
      out.push_back(control((*it)[i], ptr + "/" + key + "/" + std::to_string(i)));
    return out;
  }
  void block_decisions(const Json& o, const std::string& ptr, Block& b) const {
    b.cpp_init = control(o, ptr, "cpp_init");
    b.cpp_condition = control(o, ptr, "cpp_condition");
    b.cpp_update = control(o, ptr, "cpp_update");
    b.cpp_branch_conditions = controls(o, ptr, "cpp_branch_conditions");
    get(o, ptr, "graph_host_work", b.graph_host_work);
    get(o, ptr, "graph_segment", b.graph_segment);
    get(o, ptr, "graph_key", b.graph_key);
    get(o, ptr, "host_waits", b.host_waits);
    get(o, ptr, "fork_event", b.fork_event);
    get(o, ptr, "fork_streams", b.fork_streams);
    std::vector<std::pair<int, int>> joins;
    get(o, ptr, "join_events", joins);
    if (o.count("join_events")) b.join_events = joins;
  }

  void region(const Json& j, const std::string& ptr, Block& r) {
    for (std::size_t i = 0; i < r.blocks.size(); ++i)
      block(j.at("nodes").at(i), ptr + "/nodes/" + std::to_string(i), *r.blocks[i]);
    for (std::size_t i = 0; i < r.cf_edges.size(); ++i) {
      std::string at = ptr + "/edges/" + std::to_string(i);
      if (const Json* o = member(j.at("edges").at(i), at)) {
        InterstateEdge& e = r.cf_edges[i];
        get(*o, at + "/sdfc", "host_waits", e.host_waits);
        e.cpp_condition = control(*o, at + "/sdfc", "cpp_condition");
        e.cpp_assignments = controls(*o, at + "/sdfc", "cpp_assignments");
      }
    }
  }
  void block(const Json& j, const std::string& ptr, Block& b) {
    if (const Json* o = member(j, ptr)) block_decisions(*o, ptr + "/sdfc", b);
    switch (b.kind) {
      case BlockKind::State:
        for (std::size_t i = 0; i < b.nodes.size(); ++i) {
          std::string at = ptr + "/nodes/" + std::to_string(i);
          const Json& jn = j.at("nodes").at(i);
          Node& n = *b.nodes[i];
          if (const Json* o = member(jn, at)) node(*o, at + "/sdfc", n);
          if (n.kind == NodeKind::NestedSDFG) sdfg(jn.at("attributes").at("sdfg"), at + "/attributes/sdfg", *n.sdfg);
        }
        for (std::size_t i = 0; i < b.edges.size(); ++i) {
          std::string at = ptr + "/edges/" + std::to_string(i);
          if (const Json* o = member(j.at("edges").at(i), at)) edge(*o, at + "/sdfc", b.edges[i]);
        }
        break;
      case BlockKind::Region:
      case BlockKind::Loop:
        region(j, ptr, b);
        break;
      case BlockKind::Conditional:
        for (std::size_t i = 0; i < b.branches.size(); ++i)
          block(j.at("branches").at(i).at(1), ptr + "/branches/" + std::to_string(i) + "/1", *b.branches[i].second);
        break;
      default:
        break;
    }
  }
};

}  // namespace

Json ir_to_json(const SDFG& sdfg, const CompileOptions& options) {
  Json j = to_json(sdfg);
  Json opts = Json::object();
  for (auto& row : option_table()) opts[row.name] = row.get(options);
  // The header, then the root SDFG's own decisions in the same member.
  j["sdfc"] = {{"format", kIrFormat}, {"passes", sdfg.passes_run}, {"options", opts}};
  DecisionWriter(sdfg.dialect()).sdfg(j, sdfg);
  return j;
}

std::string write_ir(const SDFG& sdfg, const CompileOptions& options) {
  return ir_to_json(sdfg, options).dump(1, ' ', false, Json::error_handler_t::replace) + "\n";
}

IrFile read_ir(std::string_view bytes, const std::string& file_name) {
  Json doc = parse_sdfg_document(bytes, file_name);
  IrFile ir;
  ir.sdfg = read_sdfg_document(doc, file_name);
  auto header = doc.find("sdfc");
  if (header == doc.end()) return ir;
  auto fail = [&](const std::string& ptr, const std::string& msg) {
    throw UserError(Diagnostic{file_name, ptr, 0, 0, msg});
  };
  if (!header->is_object()) fail("/sdfc", "expected sdfc's IR header (an object)");
  if (header->value("format", 0) != kIrFormat)
    fail("/sdfc/format", fmt::format("this sdfc reads IR files of format {}; write the file again with this sdfc's "
                                     "opt, from the DaCe file",
                                     kIrFormat));
  ir.from_sdfc = true;
  if (auto passes = header->find("passes"); passes != header->end()) {
    if (!passes->is_array()) fail("/sdfc/passes", "expected an array of pass names");
    for (auto& p : *passes) {
      if (!p.is_string()) fail("/sdfc/passes", "expected an array of pass names");
      ir.sdfg->passes_run.push_back(p.get<std::string>());
    }
  }
  if (auto opts = header->find("options"); opts != header->end() && opts->is_object())
    for (auto it = opts->begin(); it != opts->end(); ++it) {
      const OptionSpec* row = find_option(it.key());
      std::string ptr = "/sdfc/options/" + pointer_token(it.key());
      if (!row) fail(ptr, fmt::format("unknown compile option \"{}\"", it.key()));
      if (!it->is_string()) fail(ptr, "expected the option's value as text");
      try {
        row->set(ir.options, it->get<std::string>());
      } catch (const OptionError& e) {
        fail(ptr, fmt::format("{} {}", row->name, e.what()));
      }
    }
  DecisionReader(file_name, ir.sdfg->dialect()).sdfg(doc, "", *ir.sdfg);
  return ir;
}

std::string ir_file_refusal(const std::string& who) {
  return fmt::format(
      "this is an sdfc IR file (written by sdfc opt), not a DaCe file: sdfc print shows it with its decisions and "
      "sdfc compile goes on from its passes; give {} the DaCe file",
      who);
}

IrFile read_ir_file(const std::string& path) {
  return read_ir(read_file_bytes(path), path);
}

}  // namespace sdfc
