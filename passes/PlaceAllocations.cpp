#include "passes/PlaceAllocations.h"

#include <fmt/format.h>

#include <string>
#include <vector>

#include "ir/Diagnostic.h"
#include "ir/Walk.h"

namespace sdfc {
namespace {

using Alloc = DataDesc::Alloc;

/// Memory a GPU program reaches through the GPU runtime: device memory and pinned host memory.
Alloc device_alloc(const DataDesc& d) {
  if (d.storage == StorageType::CPU_Pinned) return Alloc::PinnedHost;
  return d.pool ? Alloc::DevicePool : Alloc::DeviceMalloc;
}

/// A transient of one map scope: a local of the scope, in shared memory when it is GPU_Shared in
/// a kernel whose thread-block maps are the block's threads.
std::optional<Alloc> scope_alloc(const DataDesc& d) {
  if (d.kind == DataKind::Scalar || as_constant(d.total_size) == 1) return Alloc::ScopeValue;
  if (!as_constant(d.total_size)) return std::nullopt;
  const Node& scope = d.place_state->node(d.place_scope);
  bool block_kernel = scope.kernel && scope.kernel->thread_block;
  return block_kernel && d.storage == StorageType::GPU_Shared ? Alloc::SharedMemory : Alloc::ScopeArray;
}

}  // namespace

void place_allocations(SDFG& root, const CompileOptions& options) {
  bool gpu = options.target != Target::CPU;
  std::vector<Diagnostic> diags;
  walk::for_each_sdfg(root, "", [&](SDFG& s, const std::string& ptr) {
    bool arena = gpu && &s == &root && !s.arena.members.empty();
    for (auto& [name, d] : s.arrays) {
      if (!d.transient) continue;
      bool device = gpu && (is_gpu_storage(d.storage) || d.storage == StorageType::CPU_Pinned);
      switch (d.place) {
        case DataDesc::Place::MapScope:
          if (auto a = scope_alloc(d)) {
            d.alloc = *a;
          } else if (!gpu) {  // sized at run time: new[] and delete[] around each iteration's use
            d.alloc = Alloc::HostHeap;
          } else {
            diags.push_back(Diagnostic{"", walk::data_pointer(ptr, name), 0, 0,
                                       fmt::format("transient \"{}\" inside a map scope of a GPU program needs a "
                                                   "constant size (sdfc allocates it in the scope, on the CPU only "
                                                   "from the heap)",
                                                   name)});
          }
          break;
        case DataDesc::Place::State:
          d.alloc = device ? device_alloc(d) : Alloc::HostHeap;
          break;
        case DataDesc::Place::Call:
          if (arena && d.arena_offset)
            d.alloc = Alloc::Arena;
          else if (d.lifetime == Lifetime::Persistent || d.lifetime == Lifetime::External)
            d.alloc = Alloc::StateStruct;
          else if (device)
            d.alloc = device_alloc(d);
          else
            d.alloc = d.kind == DataKind::Scalar ? Alloc::HostValue : Alloc::HostHeap;
          break;
      }
    }
  });
  if (!diags.empty()) throw UserError(std::move(diags));
}

}  // namespace sdfc
