/// \file
/// `external-sync`: decides the program's entry and exit steps against the caller's stream and
/// writes them into the IR (SDFG::external_sync, SDFG::sync_streams); the code generator prints
/// them as the runtime's enter_call/exit_call with the list of streams.
///  - Entry: when the caller's stream changed since the previous call, it first waits for the
///    previous call's cross-call event; then every internal stream the program uses waits for the
///    work already queued on the caller's stream — before anything touches a workspace.
///  - Exit: the caller's stream waits for every internal stream the program used; with an external
///    stream it then records the cross-call event and the return is stream-ordered; without one the
///    host waits for the default stream, so the results are visible on return (DESIGN.md §1.3) and
///    the call is finished (no event to record).
/// With `--gpu-streams 0` all work runs on the caller's stream: only the cross-call ordering
/// remains. Only the streams the program uses (stream-assignment's decisions, nested SDFGs
/// included) are forked and joined. No-op on the CPU. Runs last.
#pragma once

#include "ir/Options.h"
#include "ir/SDFG.h"

namespace sdfc {

void inject_external_sync(SDFG& sdfg, const CompileOptions& options);

}  // namespace sdfc
