/// \file
/// `pool-legality`: rejects at compile time what stream-ordered pool allocation cannot make safe.
///
/// A pooled GPU transient (the file's `pool`, or `--transients pool`) is allocated with MallocAsync
/// on stream 0 where transient-lifetimes placed it (the call's start, or the start of the one state
/// that uses it) and freed with FreeAsync on stream 0 after its last use (the call's end, or the
/// state's end). The synchronization pass orders every other stream's use after the allocation (the
/// state's fork from stream 0) and before the free (the state's join into stream 0), so sdfc
/// accepts pools with any number of streams — seed 000 rejected pool with internal streams at all.
/// This pass proves that ordering for each program it accepts, and rejects, with an error that
/// names the transient, the streams and the fix:
///  - a pooled transient with External lifetime (the caller owns that memory);
///  - a pooled transient inside a GPU kernel (a map scope of a GPU_Device map, or a nested SDFG
///    inside one): stream-ordered allocation is a host call;
/// and proves, as an internal check, that no pooled block is used on a stream with nothing
/// ordering that use after its allocation and before its free (the verifier's replay, restricted
/// to pooled blocks; only with --gpu-streams >= 1, since one stream orders everything by itself):
/// such a race is a schedule sdfc made wrong, an internal error that names it and a way round.
/// Left alone: `pool` on host storage (on the CPU pool means scoped), and pool with a Persistent or
/// Global lifetime (allocated once at init, not per call). Runs after synchronization.
#pragma once

#include "ir/Options.h"
#include "ir/SDFG.h"

namespace sdfc {

void check_pool_legality(SDFG& sdfg, const CompileOptions& options);

}  // namespace sdfc
