#include "passes/ExpandLibraryNodes.h"

#include <fmt/format.h>

#include <set>

#include "ir/Builder.h"
#include "ir/Diagnostic.h"
#include "ir/Memlets.h"

namespace sdfc {
namespace {

constexpr const char* kReduce = "dace.libraries.standard.nodes.reduce.Reduce";

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

class Expander {
 public:
  explicit Expander(const CompileOptions& o) : options_(o) {}

  void sdfg(SDFG& s, const std::string& ptr, bool in_map) { region(s, s.root, ptr, in_map); }

 private:
  const CompileOptions& options_;
  int counter_ = 0;

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
          if (n.kind == NodeKind::Library) expand(s, b, id, np, scoped);
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

  void expand(SDFG& s, Block& st, int id, const std::string& np, bool in_map) {
    Node& n = st.node(id);
    if (n.classpath == kReduce) return reduce(s, st, id, np, in_map);
    refuse(np + "/classpath",
           fmt::format("unsupported library node \"{}\" of class {}; sdfc expands Reduce (other classes: expand them "
                       "in DaCe first, sdfg.expand_library_nodes())",
                       n.label, n.classpath));
  }

  /// The one edge into (`in`) or out of the library node on connector `conn`.
  DataEdge& connector_edge(Block& st, int id, const std::string& conn, bool in, const std::string& np) {
    DataEdge* found = nullptr;
    // DaCe writes some library nodes without connectors; their one edge in and one edge out
    // (with no connector) are then `_in` and `_out`.
    for (auto& e : st.edges)
      if (in ? (e.dst == id && (e.dst_conn == conn || (!e.dst_conn && !e.memlet.data.empty())))
             : (e.src == id && (e.src_conn == conn || (!e.src_conn && !e.memlet.data.empty())))) {
        if (found || e.memlet.data.empty())
          refuse(np, fmt::format("library node \"{}\" needs exactly one memlet with data on connector {}",
                                 st.node(id).label, conn));
        found = &e;
      }
    if (!found) refuse(np, fmt::format("library node \"{}\" has no memlet on connector {}", st.node(id).label, conn));
    if (found->memlet.other_subset)
      refuse(np, fmt::format("library node \"{}\": a memlet with other_subset on connector {} is not supported",
                             st.node(id).label, conn));
    return *found;
  }

  void reduce(SDFG& s, Block& st, int id, const std::string& np, bool in_map) {
    Node& n = st.node(id);
    const Json& props = n.extra;
    if (!in_map && options_.target != Target::CPU)
      refuse(np, fmt::format("Reduce \"{}\" outside any map on a GPU target is not supported yet (sdfc expands it "
                             "into sequential loops); put it in a map or expand it in DaCe first",
                             n.label));
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
    DataEdge& in = connector_edge(st, id, "_in", true, np);
    DataEdge& out = connector_edge(st, id, "_out", false, np);
    const DataDesc* in_desc = s.find_data(in.memlet.data);
    const DataDesc* out_desc = s.find_data(out.memlet.data);
    if (!in_desc || !out_desc) refuse(np, fmt::format("Reduce \"{}\" reads or writes unknown data", n.label));
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
    auto join = [](const std::vector<std::string>& v) {
      std::string t;
      for (std::size_t k = 0; k < v.size(); ++k) t += (k ? ", " : "") + v[k];
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
  Expander(options).sdfg(sdfg, "", false);
}

}  // namespace sdfc
