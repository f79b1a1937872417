/// \file
/// What the passes and the code generator need to know about the GPU work of a state, in one
/// place: the order in which a state's nodes are issued (the code generator prints in this order;
/// stream assignment, synchronization, workspace layout and the verifier reason about it), which
/// nodes and edges are GPU operations, and which parts of which containers each touches.
/// Analyses only: nothing here writes into the IR.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/SDFG.h"

namespace sdfc {

/// True when the edge is a copy between access nodes and one side lives in GPU memory.
bool is_gpu_copy(const SDFG& sdfg, const Block& state, const DataEdge& e);

/// The nodes directly inside `scope` (a MapEntry id, or -1 for the state's top level; map exits
/// are represented by their entries) in the order they are issued: a topological order of the
/// dataflow between them (an edge into or out of a nested map counts for the map), smallest id
/// first among ready nodes. The code generator prints every scope in this order, and the passes
/// that reason about the order of GPU work (stream assignment, synchronization, workspace layout,
/// the verifier) take the top level's from here: one definition, so they cannot disagree.
std::vector<int> scope_order(const Block& state, int scope);

/// One state's nodes by scope and its edges by endpoint, built once per state, so that work per
/// scope reads only the scope's own nodes and edges (a chain of 1,000 kernels stays linear).
struct ScopeIndex {
  explicit ScopeIndex(const Block& state);
  std::vector<std::vector<int>> children;             ///< scope entry + 1 -> nodes directly in it, map exits excluded
  std::vector<std::vector<const DataEdge*>> in, out;  ///< node -> its edges, in file order
  /// The nodes inside map scope `entry` at any depth: `entry` itself, then what is inside, map
  /// exits included (-1: every node of the state).
  std::vector<int> scope_nodes(const Block& state, int entry) const;
};

/// Parameters of the maps enclosing node `id` of `state`, innermost first.
std::vector<std::string> enclosing_params(const Block& state, int id);

/// scope_order(state, scope) through the state's index (the same order).
std::vector<int> scope_order(const Block& state, int scope, const ScopeIndex& index);

/// scope_order(state, -1): the top-level nodes (outside every map scope) in issue order.
std::vector<int> issue_order(const Block& state);

/// True for a GPU_Device map at the top level of a state: a kernel launched from host code.
bool is_host_kernel(const Node& n);

/// The GPU_Device map entry among map entry `v` of `st` and the maps enclosing it (the kernel a
/// node with scope_entry `v` runs in), or -1.
int enclosing_kernel(const Block& st, int v);

/// True for a tasklet at the top level of a state that queues GPU work on its stream: a vendor
/// library call on GPU data (`library_call` "cublas"). Ordered like a kernel launch.
bool is_gpu_library_call(const Node& n);

/// True for a CPP tasklet at the top level of a state whose code names `__dace_current_stream`
/// (DaCe's copy expansions, users' cuBLAS calls): host code that queues its GPU work on that
/// stream. It gets a stream and is ordered like a kernel launch; as in DaCe the name is its stream.
bool is_stream_tasklet(const Node& n);

/// A node host code issues as one GPU operation on one stream: a kernel, a GPU library call or a
/// stream tasklet.
inline bool is_stream_node(const Node& n) {
  return is_host_kernel(n) || is_gpu_library_call(n) || is_stream_tasklet(n);
}

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
