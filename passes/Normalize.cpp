#include "passes/Normalize.h"

#include <fmt/format.h>

#include <cctype>
#include <map>
#include <set>
#include <unordered_map>

#include "ir/Diagnostic.h"
#include "ir/Memlets.h"
#include "ir/Signature.h"
#include "ir/Walk.h"

namespace sdfc {
namespace {

struct Normalizer {
  const CompileOptions& options;

  std::unordered_map<std::string, const DataDesc*> index;  // of the SDFG being normalized

  void sdfg(SDFG& s, bool in_map) {
    auto saved = std::move(index);
    index.clear();
    for (auto& [name, d] : s.arrays) index.emplace(name, &d);
    body(s, in_map);
    index = std::move(saved);
  }

  void body(SDFG& s, bool in_map) {
    for (auto& [name, d] : s.arrays)
      if (d.storage == StorageType::Default && d.kind == DataKind::Array) d.storage = StorageType::CPU_Heap;
    walk::for_each_state(s, "", [&](Block& st, const std::string&) { state(s, st, in_map); });
  }

  /// A nested SDFG's own symbols in a memlet on its path, which the SDFG around it does not
  /// define (DaCe's propagation leaves them: ir/Memlets.h), replaced by what its mapping says.
  static void nested_symbols(const SDFG& s, const Block& st, DataEdge& e) {
    const auto* mapping = path_nested_symbol_mapping(st, e);
    if (!mapping) return;
    std::set<std::string> defined;
    for (auto& [name, t] : s.symbols) defined.insert(name);
    for (auto& name : assigned_symbols(s)) defined.insert(name);
    for (auto& n : st.nodes) {  // any parameter or dynamic input of the state's maps: left alone
      defined.insert(n->map.params.begin(), n->map.params.end());
      for (auto& c : n->in_connectors) defined.insert(c.name);
    }
    std::map<std::string, Expr> repl;
    for (auto& [inner, outer] : *mapping)
      if (!defined.count(inner) && !s.find_data(inner)) repl[inner] = outer;
    if (repl.empty()) return;
    auto map_range = [&](std::optional<Range>& r) {
      if (!r) return;
      for (auto& d : *r) {
        d.start = simplify(substitute(d.start, repl));
        d.end = simplify(substitute(d.end, repl));
        d.step = simplify(substitute(d.step, repl));
      }
    };
    map_range(e.memlet.subset);
    map_range(e.memlet.other_subset);
  }

  /// DaCe's rule for a nested SDFG's arguments: an array it leaves at Default storage has the
  /// storage of the container its node's connector is joined to (the parent's, resolved before).
  /// Otherwise a device array handed to a nested SDFG would be taken for host memory inside it.
  void inherit_storage(const Block& st, int x) {
    SDFG& inner = *st.node(x).sdfg;
    for (auto& e : st.edges) {
      const std::optional<std::string>& conn = e.dst == x ? e.dst_conn : e.src == x ? e.src_conn : std::nullopt;
      if (!conn || e.memlet.data.empty()) continue;
      DataDesc* d = inner.find_data(*conn);
      auto outer = index.find(e.memlet.data);
      if (d && !d->transient && d->kind == DataKind::Array && d->storage == StorageType::Default &&
          outer != index.end() && outer->second->storage != StorageType::Default)
        d->storage = outer->second->storage;
    }
  }

  void state(SDFG& s, Block& st, bool in_map) {
    for (std::size_t i = 0; i < st.nodes.size(); ++i) {
      auto& n = st.nodes[i];
      bool nested =
          in_map || (n->kind == NodeKind::MapExit ? st.node(n->scope_entry).scope_entry >= 0 : n->scope_entry >= 0);
      if (n->kind == NodeKind::MapEntry && n->map.schedule == ScheduleType::Default)
        n->map.schedule = nested ? ScheduleType::Sequential : ScheduleType::CPU_Multicore;
      // Maps inside GPU kernels run as loops in each thread, except GPU_ThreadBlock maps directly
      // inside the kernel map: the code generator runs those on the block's threads when it can.
      bool thread_block = n->kind == NodeKind::MapEntry && n->map.schedule == ScheduleType::GPU_ThreadBlock &&
                          !in_map && n->scope_entry >= 0 &&
                          st.node(n->scope_entry).map.schedule == ScheduleType::GPU_Device &&
                          st.node(n->scope_entry).scope_entry < 0;
      if (n->kind == NodeKind::MapEntry && n->scope_entry >= 0 && is_gpu_schedule(n->map.schedule) && !thread_block &&
          options.target != Target::CPU)
        n->map.schedule = ScheduleType::Sequential;
      if (n->kind == NodeKind::NestedSDFG) {
        inherit_storage(st, static_cast<int>(i));
        sdfg(*n->sdfg, nested || n->scope_entry >= 0);
      }
    }
    // Connector types from the data their memlets carry.
    for (auto& e : st.edges) {
      if (e.memlet.data.empty()) continue;
      auto found = index.find(e.memlet.data);
      if (found == index.end()) continue;
      const DataDesc* d = found->second;
      // A memlet without a subset moves its whole container (DaCe's meaning); later passes and
      // the code generator read an explicit one (the fuzzer found a tasklet binding that did not).
      if (!e.memlet.subset) e.memlet.subset = full_range(*d);
      nested_symbols(s, st, e);
      auto fill = [&](std::vector<Connector>& cs, const std::optional<std::string>& name) {
        if (!name) return;
        for (auto& c : cs)
          if (c.name == *name && !c.dtype) c.dtype = d->dtype;
      };
      Node& src = st.node(e.src);
      Node& dst = st.node(e.dst);
      if (src.kind == NodeKind::Tasklet) fill(src.out_connectors, e.src_conn);
      if (dst.kind == NodeKind::Tasklet) fill(dst.in_connectors, e.dst_conn);
    }
  }
};

}  // namespace

/// Replaces whole-word occurrences of `from` in Python code by `to`.
std::string rename_in_code(const std::string& code, const std::string& from, const std::string& to) {
  std::string out;
  std::size_t i = 0;
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  while (i < code.size()) {
    if (code.compare(i, from.size(), from) == 0 && (i == 0 || (!word(code[i - 1]) && code[i - 1] != '.')) &&
        (i + from.size() == code.size() || !word(code[i + from.size()]))) {
      out += to;
      i += from.size();
    } else {
      out += code[i++];
    }
  }
  return out;
}

/// Host code (conditions) that reads GPU memory gets a device-to-host copy first: DaCe's own GPU
/// transformation leaves such reads (corpus `cond_datadep_s`), and a host dereference of a device
/// pointer is never right. Returns the containers copied.
struct HostReads {
  SDFG& sdfg;
  int counter = 0;

  std::vector<std::string> gpu_reads(const std::string& code) {
    std::vector<std::string> out;
    for (auto& id : identifiers_in(code)) {
      const DataDesc* d = sdfg.find_data(id);
      if (d && is_gpu_storage(d->storage)) out.push_back(id);
    }
    return out;
  }

  std::string host_copy_of(const std::string& g) {
    std::string h = "__sdfc_host_" + g;
    if (!sdfg.find_data(h)) {
      DataDesc d = *sdfg.find_data(g);
      d.storage = d.kind == DataKind::Array ? StorageType::CPU_Heap : StorageType::Default;
      d.transient = true;
      d.lifetime = Lifetime::Scope;
      d.pool = false;
      d.extra = Json::object();
      sdfg.arrays.emplace_back(h, std::move(d));
    }
    return h;
  }

  /// A new state copying each of `names` to its host copy.
  std::unique_ptr<Block> copy_state(const std::vector<std::string>& names, const std::string& label) {
    auto st = std::make_unique<Block>(BlockKind::State);
    st->type_name = "SDFGState";
    st->label = label;
    for (auto& g : names) {
      const DataDesc& d = *sdfg.find_data(g);
      auto a = std::make_unique<Node>(NodeKind::Access);
      a->label = a->data = g;
      auto h = std::make_unique<Node>(NodeKind::Access);
      h->label = h->data = host_copy_of(g);
      int ia = static_cast<int>(st->nodes.size());
      st->nodes.push_back(std::move(a));
      st->nodes.push_back(std::move(h));
      DataEdge e;
      e.src = ia;
      e.dst = ia + 1;
      e.memlet.data = g;
      Range r = full_range(d);
      e.memlet.subset = r;
      e.memlet.other_subset = r;
      e.memlet.volume = product(d.shape);
      st->edges.push_back(std::move(e));
    }
    return st;
  }

  /// A copy state for `names` that runs just before block `k` of region `r`.
  void insert_before(Block& r, std::size_t k, const std::vector<std::string>& names, const std::string& label) {
    int fresh = static_cast<int>(r.blocks.size());
    for (auto& e : r.cf_edges)
      if (e.dst == static_cast<int>(k)) e.dst = fresh;
    InterstateEdge into;
    into.src = fresh;
    into.dst = static_cast<int>(k);
    r.cf_edges.push_back(into);
    if (r.start_block == static_cast<int>(k) || (r.start_block < 0 && k == 0)) r.start_block = fresh;
    r.blocks.push_back(copy_state(names, label));
  }

  /// A copy state for `names` after every block of the loop body that ends an iteration (a block
  /// with no successor that is not a break or return).
  void append_to_body(Block& loop, const std::vector<std::string>& names) {
    int fresh = static_cast<int>(loop.blocks.size());
    std::vector<bool> has_succ(loop.blocks.size(), false);
    for (auto& e : loop.cf_edges) has_succ[static_cast<std::size_t>(e.src)] = true;
    for (std::size_t j = 0; j < loop.blocks.size(); ++j) {
      BlockKind kind = loop.blocks[j]->kind;
      if (has_succ[j] || kind == BlockKind::Break || kind == BlockKind::Return) continue;
      InterstateEdge out;
      out.src = static_cast<int>(j);
      out.dst = fresh;
      loop.cf_edges.push_back(out);
    }
    if (loop.blocks.empty()) loop.start_block = fresh;
    loop.blocks.push_back(copy_state(names, fmt::format("sdfc_copy_after_{}", loop.label)));
  }

  /// Whether `b`'s body continues `b` (a continue block not inside a nested loop).
  static bool has_continue(const Block& b) {
    for (auto& c : b.blocks) {
      if (c->kind == BlockKind::Continue) return true;
      if (c->kind == BlockKind::Region && has_continue(*c)) return true;
      for (auto& [cond, body] : c->branches)
        if (has_continue(*body)) return true;
    }
    return false;
  }

  void region(Block& r, const std::string& ptr) {
    for (std::size_t k = 0; k < r.blocks.size(); ++k) {
      Block& b = *r.blocks[k];
      std::string bp = ptr + "/nodes/" + std::to_string(k);
      if (b.kind == BlockKind::Conditional) {
        std::vector<std::string> names;
        for (auto& [c, body] : b.branches)
          if (c)
            for (auto& g : gpu_reads(c->code))
              if (std::find(names.begin(), names.end(), g) == names.end()) names.push_back(g);
        if (!names.empty()) {
          for (auto& [c, body] : b.branches)
            if (c)
              for (auto& g : names) c->code = rename_in_code(c->code, g, host_copy_of(g));
          insert_before(r, k, names, fmt::format("sdfc_copy_for_{}", b.label));
        }
      }
      if (b.kind == BlockKind::Loop) {
        for (auto* st : {&b.init_statement, &b.update_statement})
          if (*st && !gpu_reads((*st)->code).empty())
            throw UserError(Diagnostic{
                "", bp, 0, 0,
                fmt::format("loop \"{}\" reads GPU memory in its statements; copy the data to the host first",
                            b.label)});
        std::vector<std::string> names = gpu_reads(b.loop_condition.code);
        names.erase(std::unique(names.begin(), names.end()), names.end());
        if (!names.empty()) {
          // The condition is tested before the first iteration and after each: copies before the
          // loop and at the end of its body. A `continue` would skip the latter.
          if (has_continue(b))
            throw UserError(Diagnostic{"", bp + "/attributes/loop_condition", 0, 0,
                                       fmt::format("loop \"{}\" reads GPU memory in its condition and its body has a "
                                                   "continue; copy the data to the host at the end of the body first",
                                                   b.label)});
          for (auto& g : names) b.loop_condition.code = rename_in_code(b.loop_condition.code, g, host_copy_of(g));
          append_to_body(b, names);
          insert_before(r, k, names, fmt::format("sdfc_copy_for_{}", b.label));
        }
      }
    }
    // Interstate edges leaving a state: the copy goes at the end of that state.
    for (auto& e : r.cf_edges) {
      std::vector<std::string> names;
      std::string all = e.unconditional() ? "" : e.condition.code;
      for (auto& [k, v] : e.assignments) all += " " + v;
      for (auto& g : gpu_reads(all))
        if (std::find(names.begin(), names.end(), g) == names.end()) names.push_back(g);
      if (names.empty()) continue;
      Block& src = *r.blocks[static_cast<std::size_t>(e.src)];
      if (src.kind != BlockKind::State)
        throw UserError(Diagnostic{
            "", ptr + "/nodes/" + std::to_string(e.src), 0, 0,
            fmt::format("an interstate edge after \"{}\" reads GPU memory; copy the data to the host in a state first",
                        src.label)});
      auto copies = copy_state(names, "");
      int base = static_cast<int>(src.nodes.size());
      for (auto& node : copies->nodes) src.nodes.push_back(std::move(node));
      for (auto& edge : copies->edges) {
        edge.src += base;
        edge.dst += base;
        src.edges.push_back(std::move(edge));
      }
      if (!e.unconditional())
        for (auto& g : names) e.condition.code = rename_in_code(e.condition.code, g, host_copy_of(g));
      for (auto& [k, v] : e.assignments)
        for (auto& g : names) v = rename_in_code(v, g, host_copy_of(g));
    }
    for (std::size_t k = 0; k < r.blocks.size(); ++k) {
      Block& b = *r.blocks[k];
      std::string bp = ptr + "/nodes/" + std::to_string(k);
      if (b.is_region()) region(b, bp);
      for (std::size_t i = 0; i < b.branches.size(); ++i)
        region(*b.branches[i].second, bp + "/branches/" + std::to_string(i) + "/1");
    }
  }
};

void normalize(SDFG& sdfg, const CompileOptions& options) {
  Normalizer{options, {}}.sdfg(sdfg, false);
  if (options.target != Target::CPU) HostReads{sdfg}.region(sdfg.root, "");
}

}  // namespace sdfc
