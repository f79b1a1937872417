#include "ir/Signature.h"

#include <algorithm>
#include <cctype>

#include "ir/Walk.h"

namespace sdfc {
namespace {

void expr_syms(const Expr& e, std::set<std::string>& out) {
  free_symbols(e, out);
}

void range_syms(const Range& r, std::set<std::string>& out) {
  for (auto& d : r) {
    expr_syms(d.start, out);
    expr_syms(d.end, out);
    expr_syms(d.step, out);
  }
}

/// Names a Python statement or expression reads; falls back to identifier tokens when the text
/// is not a single expression (statements, C++).
void code_syms(const std::string& code, std::set<std::string>& out) {
  for (auto& id : identifiers_in(code)) out.insert(id);
}

struct Collector {
  std::set<std::string> used;
  std::set<std::string> bound;  // map parameters, loop variables, assigned symbols

  void desc(const DataDesc& d) {
    if (d.transient) {
      for (auto& s : d.shape) expr_syms(s, used);
      if (d.total_size) expr_syms(d.total_size, used);
    }
    for (auto& s : d.strides) expr_syms(s, used);
    for (auto& o : d.offset) expr_syms(o, used);
  }

  void region(const Block& r) {
    for (auto& e : r.cf_edges) {
      if (!e.unconditional()) code_syms(e.condition.code, used);
      for (auto& [k, v] : e.assignments) {
        bound.insert(k);
        code_syms(v, used);
      }
    }
    for (auto& b : r.blocks) block(*b);
  }

  void block(const Block& b) {
    switch (b.kind) {
      case BlockKind::State:
        for (auto& n : b.nodes) node(*n);
        for (auto& e : b.edges) {
          // As DaCe (SDFGState.used_symbols): only the leaves of memlet trees count (not the edges
          // into a map entry's IN_ or out of a map exit's OUT_: the memlets inside say what is used)...
          if (is_scope_passage(b, e)) continue;
          // ... and a memlet into or out of a code node is a pointer to its subset's start, so only
          // the starts count there (Memlet.used_symbols).
          bool view = is_code_node(b.node(e.src)) || is_code_node(b.node(e.dst));
          for (const auto* r : {&e.memlet.subset, &e.memlet.other_subset}) {
            if (!*r) continue;
            if (!view) {
              range_syms(**r, used);
              continue;
            }
            for (auto& d : **r) expr_syms(d.start, used);
          }
        }
        break;
      case BlockKind::Loop:
        if (!b.loop_variable.empty()) bound.insert(b.loop_variable);
        if (b.init_statement) code_syms(b.init_statement->code, used);
        if (b.update_statement) code_syms(b.update_statement->code, used);
        code_syms(b.loop_condition.code, used);
        region(b);
        break;
      case BlockKind::Region:
        region(b);
        break;
      case BlockKind::Conditional:
        for (auto& [c, body] : b.branches) {
          if (c) code_syms(c->code, used);
          region(*body);
        }
        break;
      default:
        break;
    }
  }

  void node(const Node& n) {
    switch (n.kind) {
      case NodeKind::MapEntry:
        range_syms(n.map.range, used);
        for (auto& p : n.map.params) bound.insert(p);
        break;
      case NodeKind::Tasklet: {
        std::set<std::string> ids;
        code_syms(n.code.code, ids);
        for (auto& c : n.in_connectors) ids.erase(c.name);
        for (auto& c : n.out_connectors) ids.erase(c.name);
        used.insert(ids.begin(), ids.end());
        break;
      }
      case NodeKind::NestedSDFG: {
        // As DaCe: only the mappings of symbols the nested SDFG itself uses (not those that only
        // size its non-transient arrays).
        std::set<std::string> inner = free_symbols(*n.sdfg);
        for (auto& [k, v] : n.symbol_mapping)
          if (inner.count(k)) expr_syms(v, used);
        break;
      }
      default:
        break;
    }
  }
};

}  // namespace

std::set<std::string> identifiers_in(const std::string& code) {
  std::set<std::string> out;
  std::size_t i = 0;
  while (i < code.size()) {
    char c = code[i];
    if (c == '"' || c == '\'') {  // skip string literals
      char q = c;
      for (++i; i < code.size() && code[i] != q; ++i)
        if (code[i] == '\\') ++i;
      ++i;
      continue;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      std::size_t s = i;
      while (i < code.size() && (std::isalnum(static_cast<unsigned char>(code[i])) || code[i] == '_')) ++i;
      // a name after '.' is an attribute (math.log), not a variable; the dotted name as a whole
      // (`A.x`, `A.x.y`) is one too: a structure's member
      bool attr = s > 0 && code[s - 1] == '.';
      if (!attr) {
        out.insert(code.substr(s, i - s));
        while (i + 1 < code.size() && code[i] == '.' &&
               (std::isalpha(static_cast<unsigned char>(code[i + 1])) || code[i + 1] == '_')) {
          for (++i; i < code.size() && (std::isalnum(static_cast<unsigned char>(code[i])) || code[i] == '_');) ++i;
          out.insert(code.substr(s, i - s));
        }
      }
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {  // numbers, including 1e5 and 7i64
      while (i < code.size() && (std::isalnum(static_cast<unsigned char>(code[i])) || code[i] == '.')) ++i;
      continue;
    }
    ++i;
  }
  return out;
}

std::vector<std::string> callbacks_called(const SDFG& sdfg, const Node& tasklet) {
  std::vector<std::string> out;
  if (sdfg.callbacks.empty()) return out;
  for (auto& id : identifiers_in(tasklet.code.code))
    if (sdfg.find_callback(id)) out.push_back(id);
  return out;
}

std::set<std::string> free_symbols(const SDFG& sdfg) {
  Collector c;
  for (auto& [n, d] : sdfg.arrays) c.desc(d);
  c.region(sdfg.root);
  std::set<std::string> out;
  for (auto& [name, t] : sdfg.symbols)
    if (c.used.count(name) && !c.bound.count(name)) out.insert(name);
  for (auto& [name, cb] : sdfg.callbacks)
    if (c.used.count(name)) out.insert(name);
  return out;
}

std::vector<std::string> assigned_symbols(const SDFG& sdfg) {
  std::vector<std::string> out;
  auto add = [&](const std::string& s) {
    if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
  };
  walk::for_each_block(sdfg.root, "", [&](const Block& b, const std::string&) {
    if (b.kind == BlockKind::Loop && !b.loop_variable.empty()) add(b.loop_variable);
    for (auto& e : b.cf_edges)
      for (auto& [k, v] : e.assignments) add(k);
  });
  return out;
}

Signature signature(const SDFG& sdfg) {
  Signature sig;
  std::vector<Argument> arrays, rest;
  for (auto& [name, d] : sdfg.arrays) {
    if (d.transient || d.member) continue;  // a structure's members come with it
    if (d.kind == DataKind::Array)
      arrays.push_back({name, Argument::Kind::Array, d.dtype, true, &d});
    else if (name.rfind("__dace", 0) != 0)
      rest.push_back({name, Argument::Kind::Scalar, d.dtype, d.storage == StorageType::GPU_Global, &d});
  }
  auto syms = free_symbols(sdfg);
  for (auto& s : syms) {
    if (sdfg.find_data(s)) continue;
    if (const Callback* cb = sdfg.find_callback(s))
      rest.push_back({s, Argument::Kind::Callback, DType::Int64, false, nullptr, cb});
    else
      rest.push_back({s, Argument::Kind::Symbol, sdfg.symbol_type(s).value_or(DType::Int32), false, nullptr});
    sig.init_symbols.push_back(s);
  }
  auto by_name = [](const Argument& a, const Argument& b) { return a.name < b.name; };
  std::sort(arrays.begin(), arrays.end(), by_name);
  std::sort(rest.begin(), rest.end(), by_name);
  sig.args = arrays;
  sig.args.insert(sig.args.end(), rest.begin(), rest.end());
  std::sort(sig.init_symbols.begin(), sig.init_symbols.end());
  return sig;
}

std::set<std::string> interstate_names(const SDFG& sdfg) {
  std::set<std::string> out;
  auto add = [&](const std::string& code) { out.merge(identifiers_in(code)); };
  walk::for_each_block(sdfg.root, "", [&](const Block& b, const std::string&) {
    for (auto& e : b.cf_edges) {
      add(e.condition.code);
      for (auto& [lhs, rhs] : e.assignments) add(rhs);
    }
    if (b.init_statement) add(b.init_statement->code);
    if (b.update_statement) add(b.update_statement->code);
    add(b.loop_condition.code);
    for (auto& br : b.branches)
      if (br.first) add(br.first->code);
  });
  return out;
}

}  // namespace sdfc
