/// \file
/// `synchronization`: decides every host-side wait for GPU work and writes it into the IR
/// (Node::host_waits, InterstateEdge::host_waits, Block::host_waits, SDFG::gpu_exit_sync); the
/// code generator only prints these decisions.
///
/// Between streams (`--gpu-streams N`, N >= 1): within a state, every conflicting pair of GPU
/// operations on different streams (read after write, write after read, write after write on parts
/// of a container that may overlap — see stream-assignment) is ordered by an event the earlier one records and the
/// later one's stream waits for (Node/DataEdge::record_event, wait_events) — only when the waiting stream does not
/// already know the earlier operation through an earlier wait (vector clocks). The same holds across a chain of
/// states: states that follow each other unconditionally (a state's one edge, without condition, leads to a state
/// with no other predecessor), neither placing a transient (their allocation and free are stream 0 work), at most
/// 16 (under --gpu-graph too: events between streams become graph edges; a graph segment that begins or ends inside
/// a chain joins every stream into the anchor before it and forks them after it, and the runtime skips a wait whose
/// event was recorded on the other side of that boundary, which the join and fork already order). Within a chain,
/// streams carry their work from one state into the next, and a later state's operation waits only for the earlier
/// states' operations it conflicts with. A stream other than 0 forks from stream 0 at the start of the chain's first
/// state that uses it; at the chain's end every stream joins into stream 0 (Block::fork_event, fork_streams,
/// join_events), so work after branches and loops, in later chains, and the program's exit (which joins stream 0 into
/// the caller's stream) are ordered after it. A loop whose body is one such chain carries its streams across
/// iterations: they fork before the loop and join after it (the loop block's fork and join), and two iterations planned
/// with one planner give each operation the events of the previous iteration's operations it conflicts with
/// (docs/design.md). A conditional whose branches are such chains (of states and such conditionals) is part of the
/// chain before it and after it: each branch is planned from the chain so far; after the conditional the chain goes on
/// knowing only what every branch knows, and a wait for an operation of a branch (which may not have run: then the
/// event's latest record is older work, and waiting for it costs nothing) tells nothing more. A loop body may be such
/// a chain, conditionals included. An inner loop whose body is such a chain is part of the chain as well: planned for
/// two iterations from the chain so far, then merged as a branch that may not have run (no iteration). With one stream
/// (`--gpu-streams 0`, the default) GPU operations are queued on stream 0 in program order, so they are ordered among
/// themselves and no event is needed. Host ordering (every mode): the host waits for the streams of the pending work. A
/// forward dataflow analysis over the control flow (states, interstate edges, loops, conditionals) tracks, at each
/// point, the host containers that queued GPU work may still write (device-to-host copy destinations, kernel writes
/// into pinned memory) or read (host-to-device copy sources, kernel reads of pinned memory). The host waits for the
/// stream
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

#include "ir/Options.h"
#include "ir/SDFG.h"

namespace sdfc {

void synchronize(SDFG& sdfg, const CompileOptions& options);

}  // namespace sdfc
