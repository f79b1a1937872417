#include "passes/StreamAssignment.h"

#include <fmt/format.h>

#include "ir/Diagnostic.h"

namespace sdfc {
namespace {

void assign(SDFG& sdfg, Block& b) {
  if (b.kind == BlockKind::State) {
    for (auto& n : b.nodes) {
      if (n->kind == NodeKind::MapEntry && n->map.schedule == ScheduleType::GPU_Device && n->scope_entry < 0) n->stream = 0;
      if (n->kind == NodeKind::NestedSDFG && n->scope_entry < 0) assign(*n->sdfg, n->sdfg->root);
    }
    for (auto& e : b.edges)
      if (is_gpu_copy(sdfg, b, e)) e.stream = 0;
  }
  for (auto& c : b.blocks) assign(sdfg, *c);
  for (auto& [cond, body] : b.branches) assign(sdfg, *body);
}

}  // namespace

bool is_gpu_copy(const SDFG& sdfg, const Block& st, const DataEdge& e) {
  const Node& s = st.node(e.src);
  const Node& d = st.node(e.dst);
  if (s.kind != NodeKind::Access || d.kind != NodeKind::Access || e.memlet.data.empty()) return false;
  const DataDesc* a = sdfg.find_data(s.data);
  const DataDesc* b = sdfg.find_data(d.data);
  return a && b && (is_gpu_storage(a->storage) || is_gpu_storage(b->storage));
}

void assign_streams(SDFG& sdfg, const CompileOptions& options) {
  if (options.target == Target::CPU) return;
  if (options.gpu_streams > 0)
    throw UserError(Diagnostic{"", "", 0, 0,
                               fmt::format("--gpu-streams {} is not implemented yet; use --gpu-streams 0 (all GPU work on one "
                                           "stream, ordered by the synchronization pass)",
                                           options.gpu_streams)});
  assign(sdfg, sdfg.root);
}

}  // namespace sdfc
