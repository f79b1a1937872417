#include "passes/Pipeline.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>

#include "ir/Diagnostic.h"
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
#include "passes/TransientLayouts.h"
#include "passes/TransientLifetimes.h"
#include "passes/TranslatePython.h"
#include "passes/WorkspaceLayout.h"

namespace sdfc {
namespace {

struct Pass {
  PassInfo info;
  std::function<void(SDFG&, const CompileOptions&)> run;
};

/// The pipeline, in order (DESIGN.md §2). Each entry: what must have run before it (sdfc opt
/// refuses an order without it; the pipeline's own order has it), what it decides in the IR.
const std::vector<Pass>& passes() {
  static const std::vector<Pass> list = {
      // first: no later pass knows library nodes; normalize then treats their expansions as any
      // nested SDFG (connector types, schedules).
      {{"expand-library-nodes", {}, "library nodes replaced by maps, tasklets and vendor calls (Node::library_call)"},
       expand_library_nodes},
      // after the expansions (they read their operands' view shapes) and before everything else:
      // no later pass, analysis or emitter knows views.
      {{"fold-views", {"expand-library-nodes"}, "every access through a view made one of the viewed container"},
       fold_views},
      // normalize next: every later pass reads explicit schedules, storage and connector types.
      {{"normalize", {"fold-views"}, "explicit schedules, storage and connector types"}, normalize},
      // after normalize (explicit schedules and storage) and before transient-lifetimes, which
      // places the scalars fusion leaves in the fused scope.
      {{"fuse-maps", {"normalize"}, "chains of maps merged (--fuse-maps); Node::file_id, DataEdge::file_id"},
       fuse_maps},
      // after fuse-maps (the transients it makes registers are no GPU arrays) and before
      // transient-lifetimes (the choice reads the file's lifetimes, not those of the mode).
      {{"transient-layouts",
        {"normalize"},
        "DataDesc::strides, layout_follows, layout_dims (of GPU transients only kernels touch)"},
       lay_out_transients},
      // after normalize: storage is explicit, so the mode can tell GPU from host transients.
      {{"transient-lifetimes",
        {"normalize"},
        "DataDesc::lifetime, place, place_state, place_scope, lifetime_from_mode"},
       assign_transient_lifetimes},
      // streams before synchronization: the waits depend on which work runs where.
      {{"stream-assignment", {"normalize"}, "Node::stream, DataEdge::stream"}, assign_streams},
      // after transient-lifetimes (which lifts what it can out of nested SDFGs) and before any
      // pass that plans synchronization or memory for constructs the code generator cannot print.
      {{"legalize", {"transient-lifetimes"}, "nothing: refuses what the code generator cannot print"}, legalize},
      // after legalize (its errors first), fuse-maps and transient-lifetimes (the last passes
      // that change tasklets, memlets and connectors) and normalize (the last to change control
      // code: host copies of GPU scalars read in conditions): the code generator prints the text.
      {{"translate-python",
        {"legalize"},
        "Node::cpp_code; the C++ of control code: InterstateEdge::cpp_condition, cpp_assignments, "
        "Block::cpp_init, cpp_condition, cpp_update, cpp_branch_conditions"},
       translate_python},
      // after stream-assignment (a copy with a stream involves GPU memory, where a write-conflict
      // resolution has no form) and legalize (the schedules it reads are ones sdfc prints).
      {{"lower-wcr", {"stream-assignment", "legalize"}, "DataEdge::wcr_lowering"}, lower_wcr},
      // after legalize (GPU schedules only on GPU targets) and transient-lifetimes (transients
      // placed in a map scope are declared in the kernel, not passed to it).
      {{"outline-kernels", {"transient-lifetimes", "legalize"}, "Node::kernel (KernelPlan)"}, outline_kernels},
      {{"synchronization",
        {"stream-assignment", "outline-kernels"},
        "host_waits, wait_events, record_event (nodes, edges, blocks), fork and join events, "
        "Node::device_sync_after, SDFG::gpu_exit_sync, num_events"},
       synchronize},
      // after synchronization (DESIGN.md puts it before): sdfc orders pooled blocks with the same
      // events as everything else, so only the finished schedule tells what is unsafe.
      {{"pool-legality", {"synchronization"}, "nothing: refuses pooled transients a schedule would race on"},
       check_pool_legality},
      // after synchronization: bytes are shared only between uses that stream order or host
      // waits already order, and the layout reads the stream of every operation.
      {{"workspace-layout", {"synchronization"}, "SDFG::workspaces, arena; DataDesc::workspace_offset, arena_offset"},
       lay_out_workspaces},
      // after workspace-layout (arena members) and outline-kernels (thread-block kernels, whose
      // GPU_Shared transients are __shared__).
      {{"place-allocations", {"workspace-layout", "outline-kernels"}, "DataDesc::alloc"}, place_allocations},
      // last: the entry and exit order the streams every earlier pass decided.
      {{"external-sync", {"synchronization"}, "SDFG::external_sync, sync_streams"}, inject_external_sync},
      // after everything that decides host waits, streams and copies: it checks that the call's
      // host code only queues GPU work, so that replaying the captured work is the call.
      {{"gpu-graph",
        {"external-sync", "place-allocations"},
        "SDFG::gpu_graph, graph_segments; Block::graph_segment, graph_key, graph_host_work; "
        "Node::graph_capture_only"},
       decide_gpu_graph},
      // last: it reads the code and types every earlier pass left (no pass adds C++ code or complex
      // data; the library expansions, which do, run first).
      {{"host-environment", {"gpu-graph"}, "SDFG::std_includes"}, choose_host_environment},
  };
  return list;
}

std::size_t position(const std::string& name) {
  const auto& list = passes();
  for (std::size_t i = 0; i < list.size(); ++i)
    if (name == list[i].info.name) return i;
  return list.size();
}

void run_one(const Pass& p, SDFG& sdfg, const CompileOptions& options, const PipelineHooks& hooks) {
  auto t0 = std::chrono::steady_clock::now();
  p.run(sdfg, options);
  sdfg.passes_run.push_back(p.info.name);
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (hooks.time_passes && hooks.time_to) *hooks.time_to << fmt::format("pass {:<22} {:9.3f} ms\n", p.info.name, ms);
  if (hooks.print_to && (hooks.print_after == p.info.name || hooks.print_after == "all"))
    *hooks.print_to << fmt::format("// IR after {}\n", p.info.name) << dump(sdfg);
}

}  // namespace

const std::vector<std::string>& pass_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (auto& p : passes()) n.push_back(p.info.name);
    return n;
  }();
  return names;
}

const std::vector<PassInfo>& pass_infos() {
  static const std::vector<PassInfo> infos = [] {
    std::vector<PassInfo> v;
    for (auto& p : passes()) v.push_back(p.info);
    return v;
  }();
  return infos;
}

std::string check_pass_order(const std::vector<std::string>& done, const std::vector<std::string>& names) {
  std::vector<std::string> ran = done;
  for (auto& name : names) {
    std::size_t at = position(name);
    if (at == passes().size())
      return fmt::format("unknown pass \"{}\" (the passes, in order: {})", name, fmt::join(pass_names(), ", "));
    if (std::find(ran.begin(), ran.end(), name) != ran.end())
      return fmt::format("pass \"{}\" has already run on this IR (passes run: {})", name, fmt::join(ran, ", "));
    if (!ran.empty() && position(ran.back()) > at)
      return fmt::format("pass \"{}\" cannot run after \"{}\": passes run in the pipeline's order ({})", name,
                         ran.back(), fmt::join(pass_names(), ", "));
    for (auto& need : passes()[at].info.requires_)
      if (std::find(ran.begin(), ran.end(), need) == ran.end())
        return fmt::format("pass \"{}\" needs \"{}\" to have run before it", name, need);
    ran.push_back(name);
  }
  return "";
}

void run_passes(SDFG& sdfg, const std::vector<std::string>& names, const CompileOptions& options,
                const PipelineHooks& hooks) {
  std::string problem = check_pass_order(sdfg.passes_run, names);
  if (!problem.empty()) throw UserError(Diagnostic{"", "", 0, 0, problem});
  for (auto& name : names) run_one(passes()[position(name)], sdfg, options, hooks);
}

void run_pipeline(SDFG& sdfg, const CompileOptions& options, const PipelineHooks& hooks) {
  // An IR that some passes ran on (an IR file) goes on after the last of them, with none left out.
  std::vector<std::string> rest;
  std::size_t from = sdfg.passes_run.empty() ? 0 : position(sdfg.passes_run.back()) + 1;
  for (std::size_t i = 0; i < passes().size(); ++i) {
    const std::string& name = passes()[i].info.name;
    bool ran = std::find(sdfg.passes_run.begin(), sdfg.passes_run.end(), name) != sdfg.passes_run.end();
    if (i < from && !ran)
      throw UserError(Diagnostic{"", "/sdfc/passes", 0, 0,
                                 fmt::format("pass \"{}\" did not run on this IR file ({} ran after its place); a "
                                             "program is compiled with every pass: run sdfc opt with the passes in "
                                             "the pipeline's order and none left out, or compile the DaCe file",
                                             name, sdfg.passes_run.back())});
    if (i >= from) rest.push_back(name);
  }
  for (auto& name : rest) {
    run_one(passes()[position(name)], sdfg, options, hooks);
    if (hooks.stop_after == name) break;
  }
}

}  // namespace sdfc
