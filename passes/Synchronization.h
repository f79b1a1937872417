/// \file
/// `synchronization`: decides every host-side wait for GPU work and writes it into the IR
/// (Node::host_waits, InterstateEdge::host_waits, Block::host_waits, SDFG::gpu_exit_sync); the
/// code generator only prints these decisions.
///
/// Model (one stream, `--gpu-streams 0`): GPU operations (kernels, copies touching GPU memory)
/// are queued on stream 0 in program order, so they are ordered among themselves; what needs
/// ordering is the host. A forward dataflow analysis over the control flow (states, interstate
/// edges, loops, conditionals) tracks, at each point, the host containers that queued GPU work
/// may still write (device-to-host copy destinations, kernel writes into pinned memory) or read
/// (host-to-device copy sources, kernel reads of pinned memory). The host waits for the stream
///  - before a host reader of a container GPU work may still write: host tasklets and maps, host
///    copies, interstate conditions and assignments, conditional and loop conditions, and kernel
///    launches that pass a host scalar by value;
///  - before a host writer of a container GPU work may still read or write (a host write into a
///    buffer a copy is still reading);
///  - at the return, through the runtime's exit_call (DESIGN.md §1.3).
/// It never relies on a copy into pageable memory happening to block. Two kernels in a row need
/// nothing. Nested SDFGs called from host code are analysed on their own; the host waits before
/// the call when anything is pending, and at the end of the nested body when its work is.
/// Runs after stream-assignment.
#pragma once

#include "ir/SDFG.h"
#include "passes/Options.h"

namespace sdfc {

void synchronize(SDFG& sdfg, const CompileOptions& options);

}  // namespace sdfc
