#include "passes/Normalize.h"

#include <unordered_map>

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
    region(s, s.root, in_map);
  }

  void region(SDFG& s, Block& r, bool in_map) {
    for (auto& b : r.blocks) block(s, *b, in_map);
  }

  void block(SDFG& s, Block& b, bool in_map) {
    switch (b.kind) {
      case BlockKind::State: state(s, b, in_map); break;
      case BlockKind::Region:
      case BlockKind::Loop: region(s, b, in_map); break;
      case BlockKind::Conditional:
        for (auto& [c, body] : b.branches) region(s, *body, in_map);
        break;
      default: break;
    }
  }

  void state(SDFG& s, Block& st, bool in_map) {
    for (auto& n : st.nodes) {
      bool nested = in_map || (n->kind == NodeKind::MapExit ? st.node(n->scope_entry).scope_entry >= 0 : n->scope_entry >= 0);
      if (n->kind == NodeKind::MapEntry && n->map.schedule == ScheduleType::Default)
        n->map.schedule = nested ? ScheduleType::Sequential : ScheduleType::CPU_Multicore;
      if (n->kind == NodeKind::NestedSDFG) sdfg(*n->sdfg, nested || n->scope_entry >= 0);
    }
    // Connector types from the data their memlets carry.
    for (auto& e : st.edges) {
      if (e.memlet.data.empty()) continue;
      auto found = index.find(e.memlet.data);
      if (found == index.end()) continue;
      const DataDesc* d = found->second;
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

const char* to_string(Target t) {
  switch (t) {
    case Target::CPU: return "cpu";
    case Target::CUDA: return "cuda";
    case Target::HIP: return "hip";
  }
  return "?";
}

const char* to_string(TransientMode m) {
  switch (m) {
    case TransientMode::AsDeclared: return "as-declared";
    case TransientMode::Scoped: return "scoped";
    case TransientMode::Persistent: return "persistent";
    case TransientMode::Pool: return "pool";
    case TransientMode::External: return "external";
  }
  return "?";
}

void normalize(SDFG& sdfg, const CompileOptions& options) { Normalizer{options}.sdfg(sdfg, false); }

}  // namespace sdfc
