/// \file
/// `external-sync`: decides the program's entry and exit steps against the caller's stream and
/// writes them into the IR (SDFG::external_sync, SDFG::sync_streams); the code generator prints
/// them as the runtime's enter_call/exit_call with the list of streams.
///  - Entry: when the caller's stream changed since the previous call, it first waits for the
///    previous call's cross-call event; then every internal stream the program uses waits for the
///    work already queued on the caller's stream — before anything touches a workspace.
///  - Exit: the caller's stream waits for every internal stream the program used, then records the
///    cross-call event; without an external stream the host waits for the caller's stream, so the
///    results are visible on return (DESIGN.md §1.3); with one, the return is stream-ordered.
/// With `--gpu-streams 0` all work runs on the caller's stream: only the cross-call ordering
/// remains. Only the streams the program uses (stream-assignment's decisions, nested SDFGs
/// included) are forked and joined. No-op on the CPU. Runs last.
#pragma once

#include "ir/Options.h"
#include "ir/SDFG.h"

namespace sdfc {

void inject_external_sync(SDFG& sdfg, const CompileOptions& options);

}  // namespace sdfc
