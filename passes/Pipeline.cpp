#include "passes/Pipeline.h"

#include <fmt/format.h>

#include <chrono>

#include "ir/Dump.h"
#include "passes/ExpandLibraryNodes.h"
#include "passes/ExternalSync.h"
#include "passes/FoldViews.h"
#include "passes/FuseMaps.h"
#include "passes/GpuGraph.h"
#include "passes/HostEnvironment.h"
#include "passes/Legalize.h"
#include "passes/LowerWcr.h"
#include "passes/Normalize.h"
#include "passes/OutlineKernels.h"
#include "passes/PlaceAllocations.h"
#include "passes/PoolLegality.h"
#include "passes/StreamAssignment.h"
#include "passes/Synchronization.h"
#include "passes/TransientLifetimes.h"
#include "passes/WorkspaceLayout.h"

namespace sdfc {
namespace {

struct Pass {
  const char* name;
  std::function<void(SDFG&, const CompileOptions&)> run;
};

/// The pipeline, in order (DESIGN.md §2).
const std::vector<Pass>& passes() {
  static const std::vector<Pass> list = {
      // first: no later pass knows library nodes; normalize then treats their expansions as any
      // nested SDFG (connector types, schedules).
      {"expand-library-nodes", expand_library_nodes},
      // after the expansions (they read their operands' view shapes) and before everything else:
      // no later pass, analysis or emitter knows views.
      {"fold-views", fold_views},
      // normalize next: every later pass reads explicit schedules, storage and connector types.
      {"normalize", normalize},
      // after normalize (explicit schedules and storage) and before transient-lifetimes, which
      // places the scalars fusion leaves in the fused scope.
      {"fuse-maps", fuse_maps},
      // after normalize: storage is explicit, so the mode can tell GPU from host transients.
      {"transient-lifetimes", assign_transient_lifetimes},
      // streams before synchronization: the waits depend on which work runs where.
      {"stream-assignment", assign_streams},
      // after transient-lifetimes (which lifts what it can out of nested SDFGs) and before any
      // pass that plans synchronization or memory for constructs the code generator cannot print.
      {"legalize", legalize},
      // after stream-assignment (a copy with a stream involves GPU memory, where a write-conflict
      // resolution has no form) and legalize (the schedules it reads are ones sdfc prints).
      {"lower-wcr", lower_wcr},
      // after legalize (GPU schedules only on GPU targets) and transient-lifetimes (transients
      // placed in a map scope are declared in the kernel, not passed to it).
      {"outline-kernels", outline_kernels},
      {"synchronization", synchronize},
      // after synchronization (DESIGN.md puts it before): sdfc orders pooled blocks with the same
      // events as everything else, so only the finished schedule tells what is unsafe.
      {"pool-legality", check_pool_legality},
      // after synchronization: bytes are shared only between uses that stream order or host
      // waits already order, and the layout reads the stream of every operation.
      {"workspace-layout", lay_out_workspaces},
      // after workspace-layout (arena members) and outline-kernels (thread-block kernels, whose
      // GPU_Shared transients are __shared__).
      {"place-allocations", place_allocations},
      // last: the entry and exit order the streams every earlier pass decided.
      {"external-sync", inject_external_sync},
      // after everything that decides host waits, streams and copies: it checks that the call's
      // host code only queues GPU work, so that replaying the captured work is the call.
      {"gpu-graph", decide_gpu_graph},
      // last: it reads the code and types every earlier pass left (no pass adds C++ code or complex
      // data; the library expansions, which do, run first).
      {"host-environment", choose_host_environment},
  };
  return list;
}

}  // namespace

const std::vector<std::string>& pass_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (auto& p : passes()) n.push_back(p.name);
    return n;
  }();
  return names;
}

void run_pipeline(SDFG& sdfg, const CompileOptions& options, const PipelineHooks& hooks) {
  for (auto& p : passes()) {
    auto t0 = std::chrono::steady_clock::now();
    p.run(sdfg, options);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (hooks.time_passes && hooks.time_to) *hooks.time_to << fmt::format("pass {:<22} {:9.3f} ms\n", p.name, ms);
    if (hooks.print_to && (hooks.print_after == p.name || hooks.print_after == "all"))
      *hooks.print_to << fmt::format("// IR after {}\n", p.name) << dump(sdfg);
    if (hooks.stop_after == p.name) break;
  }
}

}  // namespace sdfc
