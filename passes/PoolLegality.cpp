#include "passes/PoolLegality.h"

#include <fmt/format.h>

#include <string>

#include "analysis/GpuOps.h"
#include "ir/Diagnostic.h"
#include "ir/Walk.h"
#include "passes/VerifySync.h"

namespace sdfc {
namespace {

bool pooled_gpu(const DataDesc& d) {
  return d.transient && d.pool && is_gpu_storage(d.storage);
}

std::string array_pointer(const std::string& sdfg_ptr, const std::string& name) {
  return sdfg_ptr + "/attributes/_arrays/" + pointer_token(name);
}

/// Pooled transients of `sdfg` (and of its nested SDFGs) with a lifetime or a place that
/// stream-ordered allocation cannot serve. `kernel` names the kernel map an enclosing nested SDFG
/// sits in ("" = none).
void check_places(const SDFG& sdfg, const std::string& ptr, const std::string& kernel) {
  for (auto& [name, d] : sdfg.arrays) {
    if (!pooled_gpu(d)) continue;
    if (d.lifetime == Lifetime::External)
      throw UserError(Diagnostic{
          "", array_pointer(ptr, name), 0, 0,
          fmt::format("transient \"{}\" is marked pool but has External lifetime: the caller owns its memory, so "
                      "sdfc cannot allocate it from the pool; remove pool, or make its lifetime Scope",
                      name)});
    if (!kernel.empty())
      throw UserError(Diagnostic{
          "", array_pointer(ptr, name), 0, 0,
          fmt::format("transient \"{}\" is marked pool but lives inside GPU kernel \"{}\" (a nested SDFG in its "
                      "map): stream-ordered allocation is a host call; remove pool, or move the transient out "
                      "of the map",
                      name, kernel)});
    if (d.place == DataDesc::Place::MapScope && d.place_state) {
      int k = enclosing_kernel(*d.place_state, d.place_scope);
      if (k >= 0)
        throw UserError(
            Diagnostic{"", array_pointer(ptr, name), 0, 0,
                       fmt::format("transient \"{}\" is marked pool but is used only inside GPU kernel \"{}\": "
                                   "stream-ordered allocation is a host call; remove pool (the kernel's scope "
                                   "allocates it), or use it outside the map too",
                                   name, d.place_state->node(k).map.label)});
    }
  }
  std::vector<std::pair<const Block*, std::string>> work{{&sdfg.root, ptr}};
  while (!work.empty()) {
    auto [b, bp] = work.back();
    work.pop_back();
    for (std::size_t i = 0; i < b->nodes.size(); ++i) {
      const Node& n = *b->nodes[i];
      if (n.kind != NodeKind::NestedSDFG || !n.sdfg) continue;
      int k = kernel.empty() ? enclosing_kernel(*b, n.scope_entry) : -1;
      check_places(*n.sdfg, walk::nested_sdfg_pointer(walk::node_pointer(*b, bp, i)),
                   !kernel.empty() ? kernel
                   : k >= 0        ? b->node(k).map.label
                                   : "");
    }
    for (std::size_t i = 0; i < b->blocks.size(); ++i)
      work.push_back({b->blocks[i].get(), bp + "/nodes/" + std::to_string(i)});
    for (std::size_t i = 0; i < b->branches.size(); ++i)
      work.push_back({b->branches[i].second.get(), bp + "/branches/" + std::to_string(i) + "/1"});
  }
}

bool has_pool(const SDFG& sdfg) {
  for (auto& [name, d] : sdfg.arrays)
    if (pooled_gpu(d)) return true;
  bool found = false;
  walk::for_each_block(sdfg.root, "", [&](const Block& b, const std::string&) {
    for (auto& n : b.nodes) found = found || (n->kind == NodeKind::NestedSDFG && n->sdfg && has_pool(*n->sdfg));
  });
  return found;
}

}  // namespace

void check_pool_legality(SDFG& sdfg, const CompileOptions& options) {
  if (options.target == Target::CPU || !has_pool(sdfg)) return;
  check_places(sdfg, "", "");
  if (options.gpu_streams < 1) return;
  // The ordering: the verifier's replay; only races of a pool allocation or free count here (the
  // rest is the synchronization rule as a whole, which --verify-sync reports).
  SyncReport report = verify_sync(sdfg, options);
  if (report.pool_races.empty()) return;
  const SyncReport::PoolRace& r = report.pool_races.front();
  // The synchronization pass orders pool operations like every other access: a race here is a
  // schedule sdfc made wrong, not a property of the program (an internal error, with a way round).
  SDFC_ASSERT(false, fmt::format("{}: pooled transient \"{}\" is used on a stream that nothing orders against its "
                                 "pool {} on stream 0: {}; until it is fixed, compile with --gpu-streams 0, or "
                                 "remove pool from \"{}\"",
                                 sdfg.find_data(r.transient) ? array_pointer("", r.transient) : "", r.transient, r.op,
                                 r.race, r.transient));
}

}  // namespace sdfc
