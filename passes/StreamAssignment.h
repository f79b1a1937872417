/// \file
/// `stream-assignment`: gives every GPU operation a stream, written into the IR (Node::stream for
/// kernels — GPU_Device maps launched from host code — and nested SDFGs that queue GPU work;
/// DataEdge::stream for copies that touch GPU memory). No-op on the CPU.
///  - `--gpu-streams 0` (the default): everything on stream 0, which the runtime maps to the
///    caller's external stream or the default stream.
///  - `--gpu-streams N` (N >= 1): streams 0..N-1 are the program's internal streams. In each state
///    the operations are taken in the order the code generator issues them; an operation that
///    depends (read after write, write after read, write after write on parts of a container
///    that may overlap: a kernel's parts are its outer memlets' subsets, a copy's its memlet's
///    subset and other_subset, a nested SDFG's the whole containers) on the last operation of
///    a stream continues that stream (the lowest such), so chains stay on one stream; any other
///    operation opens the next stream round robin, so independent work (the branches of a
///    fork-join, independent copies) runs concurrently. Nested SDFGs that
///    queue GPU work run on stream 0, and so does their content. Deterministic.
/// The order of operations and their accesses come from analysis/GpuOps.h.
/// Dependencies across states need no stream choice: the synchronization pass joins every
/// stream of a state into stream 0 at its end. Negative N is rejected by the option parser.
/// Runs after transient-lifetimes, before synchronization.
#pragma once

#include "ir/Options.h"
#include "ir/SDFG.h"

namespace sdfc {

void assign_streams(SDFG& sdfg, const CompileOptions& options);

}  // namespace sdfc
