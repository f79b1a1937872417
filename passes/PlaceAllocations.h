/// \file
/// `place-allocations`: decides how the generated code allocates every transient, where
/// transient-lifetimes placed it (per call, around a state, in a map scope), and records it as
/// `DataDesc::alloc` (the dump's `alloc=`):
///  - Persistent and External transients are members of the program's state (`state-struct`);
///  - per-call GPU_Global transients that workspace-layout put in the call's arena: `arena`;
///  - other GPU memory: `device-pool` (marked pool: MallocAsync/FreeAsync on stream 0), else
///    `device-malloc`; CPU_Pinned memory on GPU targets: `pinned-host` (gpuHostAlloc);
///  - host scalars: `host-value` (a local of the SDFG's function); other host data: `host-heap`;
///  - transients of one map scope: `scope-value` (one element), `shared-memory` (GPU_Shared in a
///    kernel whose thread-block maps run as the block's threads), else `scope-array` (a local array
///    of constant size).
///
/// Refused, with the transient's pointer: a transient inside a map scope whose size is not a
/// constant (it would be a stack array of run-time size).
///
/// Runs after workspace-layout (arena offsets) and outline-kernels (thread-block kernels).
#pragma once

#include "ir/Options.h"
#include "ir/SDFG.h"

namespace sdfc {

void place_allocations(SDFG& sdfg, const CompileOptions& options);

}  // namespace sdfc
