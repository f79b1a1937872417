/// \file
/// `expand-library-nodes`: the first pass. Replaces every DaCe library node by what it computes,
/// so that no later pass or the code generator sees one:
///  - `Reduce` (dace.libraries.standard.nodes.reduce.Reduce, with `axes`, `wcr` and `identity`)
///    becomes a nested SDFG in the node's place (same connectors `_in`/`_out`, same edges): a state
///    setting every output element to the identity, then a sequential loop nest over the input
///    that combines each element into its output element with the write-conflict lambda
///    (`out = lambda(out, in)`: no atomics, and the order DaCe's sequential expansion has).
///    Inside a map scope (GT4Py's neighbour reductions) on every target; outside any map on the
///    CPU only.
/// Any other library node class, a Reduce without an identity, and a Reduce outside a map on a
/// GPU target are errors naming the node. Runs before normalize, which then types the new
/// connectors and schedules as for any nested SDFG. A new class gets its own expansion function
/// here.
#pragma once

#include "ir/Options.h"
#include "ir/SDFG.h"

namespace sdfc {

void expand_library_nodes(SDFG& sdfg, const CompileOptions& options);

}  // namespace sdfc
