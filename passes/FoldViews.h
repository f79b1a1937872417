/// \file
/// `fold-views`: removes DaCe's views (`ArrayView`, `View`) by rewriting every access through a
/// view into an access of the container it views, so that no later pass, analysis or emitter
/// meets a view: dependencies, synchronization, streams, lifetimes, workspaces and the verifier see
/// the viewed container, and the generated code addresses it directly (no copy, no pointer).
///
/// Which edge of a view node points to the viewed data is DaCe's rule (`get_view_edge`,
/// shared/reference/dace-views.md): the only non-empty in-edge or out-edge; with one of each, the
/// side whose memlet path leads to an access node, then the `views` connector, then the memlet
/// that does not name the view, then the in-edge. The viewed subset is that edge's subset on the
/// viewed side. A view's element k lies at `&viewed[subset start] + sum((k_j + offset_j) *
/// stride_j)` (its own strides and offset). An access through the view becomes:
///  - dimension-wise, when each view dimension of extent other than 1 has the stride (times the
///    subset's step) of a distinct dimension of the viewed container (row, column and keepdims
///    views, transposes): view index k_j becomes `start_d + step_d * (k_j + offset_j)` in that
///    dimension, the others stay at the subset's start — ranges stay ranges;
///  - by delinearization otherwise (reshapes) when the viewed container is contiguous in C order:
///    the element's linear position, split with `//` and `%` into the container's indices. Only
///    single elements and whole-view ranges that start at the view's first element (arguments of
///    nested SDFGs and scope memlets, which carry only a start and a bound) can be rewritten so;
///    anything else is refused, naming the view.
/// The view node becomes an access node of the viewed container and the viewed edge an empty
/// (ordering) edge, so the order the view imposed stays. A view inside a map scope, fed by the
/// map entry (or feeding the map exit), views the container outside the scope through the edge's
/// memlet path; the scope's own memlets stay as they are. Views of views fold innermost-viewed
/// first. Refused with a diagnostic naming the view: no or ambiguous viewed edge, a viewed edge
/// from a code node (a tasklet or nested SDFG: the view is then not joined to its data),
/// a different dtype (reinterpreting views), views that view each other. Several nodes of one view
/// in a state fold each with its own viewed subset (a memlet belongs to the node its path ends at).
/// Runs after expand-library-nodes (whose expansions read the operands' view shapes) and before
/// normalize.
#pragma once

#include "ir/Options.h"
#include "ir/SDFG.h"

namespace sdfc {

void fold_views(SDFG& sdfg, const CompileOptions& options);

}  // namespace sdfc
