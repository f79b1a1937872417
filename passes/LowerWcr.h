/// \file
/// `lower-wcr`: decides how every write with a write-conflict resolution is printed. DaCe writes
/// the resolution as lambda text (`lambda a, b: a + b`); the pass classifies it (sum, product,
/// min, max, or a general lambda) and chooses the atomicity the write's place needs:
///  - in a GPU kernel (under a GPU_Device map, or in a nested SDFG called from one): a device
///    atomic add for sums, a device compare-and-swap loop otherwise;
///  - in a parallel host scope (under a CPU_Multicore map, or in a nested SDFG called from one):
///    `#pragma omp atomic` for sums and products, a compare-and-swap loop for min, max and other
///    lambdas; complex data: atomic adds of both parts for sums, an OpenMP critical section for
///    other lambdas;
///  - elsewhere, and on data one GPU thread owns (a transient placed in a map scope at or inside
///    the kernel's map, not in shared or global memory, and a nested SDFG's connector bound to
///    such data): a plain read-modify-write.
/// The decision is `DataEdge::wcr_lowering` (shown by `sdfc print` as `wcr-lowered=OP:FORM`) on
/// every edge the code generator prints as a write: tasklet outputs and copies.
///
/// Refused, with the edge's pointer: a resolution that is not a lambda of two arguments; on complex
/// data in a GPU kernel, anything but a sum (no atomic form); on a copy that involves GPU memory
/// (a cudaMemcpy has no conflict resolution).
///
/// Runs after stream-assignment (which decides which copies involve GPU memory) and legalize.
#pragma once

#include "ir/Options.h"
#include "ir/SDFG.h"

namespace sdfc {

void lower_wcr(SDFG& sdfg, const CompileOptions& options);

/// DaCe's lambda text classified with the plain form; nullopt when it is not a lambda of two
/// arguments.
std::optional<WcrLowering> classify_wcr(std::string text);

}  // namespace sdfc
