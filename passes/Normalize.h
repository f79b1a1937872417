/// \file
/// `normalize`: the first pass after expand-library-nodes. Resolves what DaCe leaves to defaults so that later passes
/// and the code generator read explicit decisions from the IR:
///  - map schedules: a `Default` map outside any map becomes CPU_Multicore on the CPU (as DaCe's
///    SCOPEDEFAULT_SCHEDULE does); one inside a map, or inside a nested SDFG called from a map,
///    becomes Sequential;
///  - storage: a nested SDFG's `Default` array argument takes the storage of the container its
///    node's connector is joined to (DaCe's rule; a device array handed to a nested SDFG stays
///    device memory in it); other `Default` arrays become CPU_Heap; `Default` scalars stay
///    `Default` (host locals);
///  - connector types: a connector declared with type null gets the dtype of the data its memlet
///    refers to (DaCe's type inference);
///  - memlets: one without a subset gets its container's whole range (what DaCe means by it);
///    one on the path of a nested SDFG that names the nested SDFG's own symbols, which the SDFG
///    around it does not define (DaCe's propagation leaves them), gets them through the nested
///    SDFG's symbol mapping;
///  - GPU targets: host code that reads GPU memory gets device-to-host copies into host
///    transients (`__sdfc_host_X`) and reads those: interstate edges (a copy at the end of the
///    source state), conditional blocks (a copy state before the block), loop conditions (copy
///    states before the loop and at the end of its body; an error when the body has a continue,
///    and for loop init/update statements).
/// Assumes a validated SDFG. Must run before every other pass.
#pragma once

#include "ir/Options.h"
#include "ir/SDFG.h"

namespace sdfc {

void normalize(SDFG& sdfg, const CompileOptions& options);

}  // namespace sdfc
