/// \file
/// Where an edge's data comes from and where it goes: the memlet path an edge lies on and the
/// source and destination subsets of its memlet, derived once, as DaCe derives them
/// (`SDFGState.memlet_path`, `Memlet.try_initialize`, `src_subset`/`dst_subset`). Every consumer
/// (validation, the passes, the verifier, the code generator) asks these functions; the
/// `src_subset`/`dst_subset`/`is_data_src` values in a file are derived values (only
/// `is_data_src` of a copy inside one container decides anything).
#pragma once

#include <set>
#include <string>
#include <utility>

#include "ir/SDFG.h"

namespace sdfc {

/// The nodes a memlet path starts and ends at. Walking back from an edge that leaves a scope node
/// through connector `OUT_x` continues with the edge into the same node's `IN_x`; walking forward
/// from an edge that enters a scope node through `IN_x` continues with the edge out of its `OUT_x`
/// while that edge is unique (a map entry may fan one input out to several edges: a tree, whose
/// leaves are then the path's end).
struct PathEnds {
  int src = -1;  ///< the node the path starts at
  int dst = -1;  ///< the node the path ends at
};
PathEnds memlet_path_ends(const Block& state, const DataEdge& e);

/// The symbol mapping of the nested SDFG at an end of the memlet path of `e` (its source end
/// first); null where neither end is a nested SDFG. DaCe's memlet propagation leaves a nested
/// SDFG's own symbols in the memlets of its path after some transformations (auto_optimize on
/// NPBench's azimint_hist: `histw[0:bins]` outside, where the mapping says bins = npt); DaCe's
/// code never prints those ends, validation accepts them and normalize maps them.
const std::vector<std::pair<std::string, Expr>>* path_nested_symbol_mapping(const Block& state, const DataEdge& e);

/// The two sides of an edge's data movement.
///  - `data_is_src`: whether `memlet.data` names the source side. DaCe's rule: true when the path
///    starts at an access node of that data; when the path both starts and ends at such nodes (a
///    copy inside one container), the file's `is_data_src` decides.
///  - `src_data` / `dst_data`: the containers of the access nodes at the path's ends ("" where the
///    end is a tasklet, a nested SDFG or a scope node without data).
///  - `src` / `dst`: absolute subsets of those containers. The side `memlet.data` names takes
///    `subset` (the whole container when absent); the other side takes `other_subset`, and
///    without one, as in DaCe's copies, it starts at index 0 in every dimension and spans the
///    extents of `subset` (dimensions of extent 1 dropped or added where the two containers'
///    ranks differ). Empty where that side is not a container.
/// `error` is non-empty when the other side's subset cannot be derived (ranks that cannot be
/// paired, or `memlet.data` names neither end); consumers report it as unsupported.
struct EdgeSubsets {
  bool data_is_src = true;
  std::string src_data, dst_data;
  Range src, dst;
  std::string error;
};
EdgeSubsets edge_subsets(const SDFG& sdfg, const Block& state, const DataEdge& e);

/// What an edge is, from the kinds of its two ends (closed switches: a new node kind does not
/// compile until it is decided here, and the code generator's completeness check holds every
/// emitter to this table).
enum class EdgeRole {
  Ordering,           ///< an empty memlet between nodes: orders them, moves nothing
  Copy,               ///< access node -> access node
  ScopeCopyIn,        ///< map entry (OUT_x) -> access node inside the map: a copy from the outer data
  ScopeCopyOut,       ///< access node inside a map -> map exit (IN_x): a copy to the outer data
  ScopeInput,         ///< -> map entry (IN_x): read by the memlets inside the scope
  DynamicRangeInput,  ///< -> map entry through a connector not named IN_*: read by the map
  ScopeOutput,        ///< map exit (OUT_x) ->: written by the memlets inside the scope
  TaskletInput,       ///< -> tasklet: bound to an input connector
  TaskletOutput,      ///< tasklet ->: written from an output connector
  NestedInput,        ///< -> nested SDFG: an argument
  NestedOutput,       ///< nested SDFG ->: an argument it writes
  LibraryInput,       ///< -> library node (expanded before code generation)
  LibraryOutput,      ///< library node -> (expanded before code generation)
  Unsupported,        ///< anything else (see `edge_role_problem`)
};
EdgeRole edge_role(const Block& state, const DataEdge& e);
/// Why an edge of role Unsupported is not supported (what to do instead).
std::string edge_role_problem(const Block& state, const DataEdge& e);
/// A short name for diagnostics ("scope copy-out", ...).
const char* to_string(EdgeRole r);

/// The whole range of a container: [0, extent - 1] in every dimension.
Range full_range(const DataDesc& d);

/// The linear index of element `idx` of `d`: the sum of (idx[k] + offset[k]) * strides[k].
Expr element_offset(const DataDesc& d, const std::vector<Expr>& idx);
/// `index` split into the part that varies with the names that are not in `symbols` (map
/// parameters, locals) and the part made of `symbols` and constants (simplified both; the second
/// is `index` with every other name 0).
std::pair<Expr, Expr> split_invariant(const Expr& index, const std::set<std::string>& symbols);
/// The additive terms of `e` with their signs (true: subtracted); products stay whole.
std::vector<std::pair<bool, Expr>> additive_terms(const Expr& e);

/// Elements in dimension `d` of a range: (end - start + 1) / step, rounded up.
Expr range_extent(const RangeDim& d);
/// Whether `r` moves one element (start equals end in every dimension, after simplification).
bool single_element(const Range& r);
/// The dimensions of `r` that move more than one element (a copy pairs them between its ends).
std::vector<std::size_t> moved_dimensions(const Range& r);

}  // namespace sdfc
