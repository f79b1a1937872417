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
/// Dependencies across states need no stream choice: the synchronization pass joins every
/// stream of a state into stream 0 at its end. Negative N is rejected by the option parser.
/// Runs after transient-lifetimes, before synchronization.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/SDFG.h"
#include "passes/Options.h"

namespace sdfc {

void assign_streams(SDFG& sdfg, const CompileOptions& options);

/// True when the edge is a copy between access nodes and one side lives in GPU memory.
bool is_gpu_copy(const SDFG& sdfg, const Block& state, const DataEdge& e);

/// The top-level nodes of a state (outside every map scope) in the order the code generator
/// prints them: a topological order of the dataflow, smallest id first among ready nodes.
std::vector<int> issue_order(const Block& state);

/// True when the SDFG (or one nested in it) launches GPU work from host code.
bool queues_gpu_work(const SDFG& sdfg);

/// One access of an operation: a container, the part of it (the memlet's subset; nullopt = all of
/// it, or not known), and whether it is written.
struct Touch {
  std::string data;
  std::optional<Range> subset;
  bool write = false;
};

/// False only when the two parts provably share no element: in some dimension one ends (inclusive)
/// before the other starts by a constant distance. Different ranks, or unknown parts, overlap.
bool may_overlap(const std::optional<Range>& a, const std::optional<Range>& b);

/// True when two accesses conflict: the same container, one of them a write, parts that may overlap.
bool conflict(const Touch& a, const Touch& b);

/// One GPU operation of a state, in issue order: a kernel or nested SDFG (node) or a copy (edge).
struct GpuOp {
  int node = -1;  ///< MapEntry or NestedSDFG id; -1 for a copy
  int edge = -1;  ///< index into the state's edges for a copy; -1 otherwise
  std::set<std::string> reads, writes;
  std::vector<Touch> touches;  ///< the same accesses with their parts (a kernel: its outer memlets)
};

/// The accesses of a top-level kernel or nested SDFG node through its outer memlets.
std::vector<Touch> node_touches(const Block& state, int id);

/// The two accesses of a copy between access nodes: the source read and the destination written,
/// with the subsets ir/Memlets.h derives (nullopt = the whole container: a copy inside one
/// container, or subsets that cannot be derived).
std::vector<Touch> copy_touches(const SDFG& sdfg, const Block& state, const DataEdge& e);
/// The GPU operations of a state in issue order, with the containers each reads and writes.
std::vector<GpuOp> gpu_ops(const SDFG& sdfg, const Block& state);

}  // namespace sdfc
