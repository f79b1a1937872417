/// \file
/// `gpu-graph` (--gpu-graph, GPU targets): decides whether a call's GPU work can be recorded once
/// as a CUDA/HIP graph and replayed, and records it (SDFG::gpu_graph, root). The code generator
/// then prints the call as: replay the cached graph when the argument bytes (every pointer,
/// scalar and symbol, and the External workspaces' pointers) equal the last capture's; otherwise
/// run the host code once with the streams in capture mode and replace the cached graph (updated
/// in place where the runtime can, re-instantiated otherwise). sdfc/gpu.h says how.
///
/// A replay runs none of the program's host code, so the pass accepts only programs whose host
/// code does nothing but queue GPU work, and whose queued work is a function of the arguments:
///  - no host wait anywhere (before a node, an interstate edge, a loop or branch condition, or at
///    the end of a nested SDFG);
///  - at the host level of every state (nested SDFGs outside kernels included) only access nodes,
///    GPU kernels, GPU library calls, nested SDFGs and copies on a stream between GPU containers
///    or between a GPU container and host memory whose address the key fixes (the root's array
///    arguments, its Persistent/External transients): no host tasklet or map, no host-only copy,
///    no copy from or to a host scalar or a per-call host transient (their addresses change);
///    except host tasklets that compute a kernel's scalar argument from the key: Python tasklets
///    that read only symbols, scalar arguments the program never writes and scalars computed so,
///    and write host scalars of their state that only kernels (by value) and such tasklets read.
///    They run when the graph is captured and are skipped by a replay, which would compute the
///    same values (Node::graph_capture_only, `capture-only` in the dump; GT4Py's `dt / nsub`);
///  - control flow (interstate conditions and assignments, loop conditions and statements, branch
///    conditions) reads symbols only, never a data container, so that the trace captured for one
///    set of arguments is the trace of every call with those arguments.
/// Except inside a conditional branch whose conditions read symbols only: a branch body that breaks
/// these rules is marked (Block::graph_host_work) instead, and a capturing call that enters it
/// abandons its capture, remembers its arguments and runs without a graph (the code generator
/// prints the check at the branch's start). GT4Py's metrics timers, host tasklets behind the
/// symbol gt_metrics_level, are such branches: with metrics off calls replay, with metrics on
/// they run as without --gpu-graph.
///
/// Graph segments: when the whole call cannot be one graph (the rules above fail outside such a
/// branch), the pass looks for the largest blocks of the root's control-flow tree (states, loops,
/// regions, branch bodies) that queue GPU work, pass the rules strictly (no branch exception) and
/// leave only at their end (no break, continue or return out of them). Each is a segment
/// (Block::graph_segment, numbered, with Block::graph_key: the call's arguments, the symbols the
/// program assigns, the root's host scalars and per-call pointers, which fix its GPU work); the
/// code generator wraps each in a capture-or-replay of its own and the rest of the call runs as
/// without --gpu-graph (SDFG::graph_segments). Without any segment the program is refused with the
/// first construct, its JSON pointer and the fix (compile without --gpu-graph). In both forms
/// device mallocs inside the captured code are host work (a replay would reuse a freed buffer),
/// and the call's arena of GPU transients (if any) is held by the instance between calls
/// (Workspace::held): captured kernels keep their pointers, and the graph has no memory nodes, so
/// a capture with new pointers updates it in place. A program that passes has its GPU work unchanged: the same
/// operations on the same streams with the same events, which become the graph's nodes and edges. Without
/// --gpu-graph, or on the CPU, nothing happens. Runs last (it reads the host waits and streams).
#pragma once

#include "ir/Options.h"
#include "ir/SDFG.h"

namespace sdfc {

void decide_gpu_graph(SDFG& sdfg, const CompileOptions& options);

}  // namespace sdfc
