#include "passes/TransientLifetimes.h"

#include <map>

#include <fmt/format.h>

#include <functional>

#include "ir/Diagnostic.h"
#include "ir/Signature.h"

namespace sdfc {
namespace {

void change_lifetimes(SDFG& sdfg, const CompileOptions& options);

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

/// Where each default-lifetime transient of `sdfg` (and of its nested SDFGs) is allocated.
void place_transients(SDFG& sdfg, const std::string& ptr) {
  std::map<std::string, std::set<std::pair<const Block*, int>>> scopes;
  std::map<std::string, std::set<const Block*>> states;
  std::vector<std::pair<SDFG*, std::string>> nested;
  std::function<void(Block&, const std::string&)> walk = [&](Block& b, const std::string& bp) {
    if (b.kind == BlockKind::State)
      for (std::size_t i = 0; i < b.nodes.size(); ++i) {
        Node& n = *b.nodes[i];
        if (n.kind == NodeKind::Access) {
          scopes[n.data].insert({&b, n.scope_entry});
          states[n.data].insert(&b);
        }
        if (n.kind == NodeKind::NestedSDFG) nested.emplace_back(n.sdfg.get(), bp + "/nodes/" + std::to_string(i) + "/attributes/sdfg");
      }
    for (std::size_t i = 0; i < b.blocks.size(); ++i) walk(*b.blocks[i], bp + "/nodes/" + std::to_string(i));
    for (std::size_t i = 0; i < b.branches.size(); ++i) walk(*b.branches[i].second, bp + "/branches/" + std::to_string(i) + "/1");
  };
  walk(sdfg.root, ptr);
  auto assigned = assigned_symbols(sdfg);
  for (auto& [name, d] : sdfg.arrays) {
    d.place = DataDesc::Place::Call;
    d.place_state = nullptr;
    d.place_scope = -1;
    if (!d.transient || d.lifetime == Lifetime::Persistent || d.lifetime == Lifetime::External ||
        d.lifetime == Lifetime::Global)
      continue;
    auto& sc = scopes[name];
    if (sc.size() == 1 && sc.begin()->second >= 0) {
      d.place = DataDesc::Place::MapScope;
      d.place_state = sc.begin()->first;
      d.place_scope = sc.begin()->second;
      continue;
    }
    std::set<std::string> used;
    for (auto& s : d.shape) free_symbols(s, used);
    bool late = false;
    for (auto& a : assigned) late |= used.count(a) > 0;
    if (!late) continue;
    if (states[name].size() != 1)
      throw UserError(Diagnostic{"", ptr + "/attributes/_arrays/" + pointer_token(name), 0, 0,
                                 fmt::format("transient \"{}\" has a size that depends on a symbol assigned during the "
                                             "program and is used in several states; sdfc cannot place its allocation",
                                             name)});
    d.place = DataDesc::Place::State;
    d.place_state = *states[name].begin();
  }
  for (auto& [inner, p] : nested) place_transients(*inner, p);
}

void change_lifetimes(SDFG& sdfg, const CompileOptions& options) {
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
    d.lifetime_from_mode = true;
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

}  // namespace

void assign_transient_lifetimes(SDFG& sdfg, const CompileOptions& options) {
  change_lifetimes(sdfg, options);
  place_transients(sdfg, "");
}

}  // namespace sdfc
