#include "passes/ExternalSync.h"

#include <set>

namespace sdfc {
namespace {

void used_streams(const Block& b, std::set<int>& out) {
  for (auto& n : b.nodes) {
    if (n->stream >= 0) out.insert(n->stream);
    if (n->kind == NodeKind::NestedSDFG && n->sdfg) used_streams(n->sdfg->root, out);
  }
  for (auto& e : b.edges)
    if (e.stream >= 0) out.insert(e.stream);
  for (auto& c : b.blocks) used_streams(*c, out);
  for (auto& [cond, body] : b.branches) used_streams(*body, out);
}

}  // namespace

void inject_external_sync(SDFG& sdfg, const CompileOptions& options) {
  sdfg.external_sync = options.target != Target::CPU;
  sdfg.sync_streams.clear();
  if (!sdfg.external_sync || options.gpu_streams == 0) return;
  std::set<int> streams;
  used_streams(sdfg.root, streams);
  sdfg.sync_streams.assign(streams.begin(), streams.end());
}

}  // namespace sdfc
