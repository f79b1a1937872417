#include "passes/TransientLifetimes.h"

#include <map>

#include "ir/Signature.h"

namespace sdfc {
namespace {

/// Transients with an access node outside every map scope.
std::set<std::string> used_outside_maps(const SDFG& sdfg) {
  std::set<std::string> out;
  std::vector<const Block*> work{&sdfg.root};
  while (!work.empty()) {
    const Block* b = work.back();
    work.pop_back();
    for (auto& n : b->nodes)
      if (n->kind == NodeKind::Access && n->scope_entry < 0) out.insert(n->data);
    for (auto& c : b->blocks) work.push_back(c.get());
    for (auto& [c, body] : b->branches) work.push_back(body.get());
  }
  return out;
}

}  // namespace

void assign_transient_lifetimes(SDFG& sdfg, const CompileOptions& options) {
  if (options.transients == TransientMode::AsDeclared) return;
  std::set<std::string> outside = used_outside_maps(sdfg);
  std::set<std::string> args = free_symbols(sdfg);
  for (auto& [name, d] : sdfg.arrays) {
    bool default_lifetime = d.lifetime == Lifetime::Scope || d.lifetime == Lifetime::State || d.lifetime == Lifetime::SDFG;
    if (!d.transient || !default_lifetime || d.pool || d.kind != DataKind::Array || d.storage == StorageType::Register ||
        !outside.count(name))
      continue;
    std::set<std::string> size_syms;
    free_symbols(d.total_size, size_syms);
    bool sized_by_arguments = true;
    for (auto& s : size_syms) sized_by_arguments &= args.count(s) > 0;
    switch (options.transients) {
      case TransientMode::Scoped: d.lifetime = Lifetime::Scope; break;
      case TransientMode::Persistent:
        if (sized_by_arguments) d.lifetime = Lifetime::Persistent;
        break;
      case TransientMode::External:
        if (sized_by_arguments) d.lifetime = Lifetime::External;
        break;
      case TransientMode::Pool:
        if (is_gpu_storage(d.storage)) d.pool = true;
        else d.lifetime = Lifetime::Scope;  // no pool on the CPU: scoped
        break;
      case TransientMode::AsDeclared: break;
    }
  }
}

}  // namespace sdfc
