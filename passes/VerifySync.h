/// \file
/// The synchronization verifier (`sdfc compile --verify-sync`): an analysis, not a pass — it reads
/// the scheduled IR (streams, events, fork/join, host waits, workspace offsets, pools) and writes
/// nothing. It replays the program's operations the way the generated code issues them and proves
/// the synchronization rule of DESIGN.md §2: every pair of conflicting accesses (read after write,
/// write after read, write after write) to a container — or to workspace bytes two transients
/// share, or to a pooled block between its allocation and its free — by two different agents (a
/// stream, or the host) is ordered by happens-before.
///
/// Model: one vector clock per agent (the N internal streams, or the one stream with
/// --gpu-streams 0, and the host). Enqueueing GPU work orders it after everything the host knows;
/// an event record snapshots its stream's clock and a stream wait merges the snapshot (a wait on an
/// event never recorded on this path orders nothing, as in CUDA); a host wait merges a stream's
/// clock into the host's. Host code (tasklets, CPU maps, host copies, interstate conditions and
/// assignments, loop and branch conditions, scalars passed by value to kernels) runs on the host.
/// Control flow is replayed path by path: loops 0, 1 and 2 times, each branch of a conditional,
/// regions with every block at most twice on a path, up to a bound on the number of paths (the
/// result says when the bound cut the search). Nested SDFGs are verified on their own; at the call
/// site their GPU work counts as one operation on stream 0. Across calls the runtime's
/// enter_call/exit_call join every stream into the caller's, so one call is replayed.
#pragma once

#include <string>
#include <vector>

#include "ir/Options.h"
#include "ir/SDFG.h"

namespace sdfc {

struct SyncReport {
  /// A race one side of which is a pooled block's allocation or free (what pool-legality rejects).
  struct PoolRace {
    std::string transient;  ///< the pooled transient
    std::string op;         ///< "allocation" or "free"
    std::string race;       ///< the line in `races`
  };
  std::vector<std::string> races;  ///< one line per unordered pair: the two accesses and the container
  std::vector<PoolRace> pool_races;
  int paths = 0;         ///< control-flow paths replayed
  bool bounded = false;  ///< true when the path bound stopped the search
  bool ok() const { return races.empty(); }
};

/// Verifies a program after the whole pipeline. Never throws for a race; reports it.
SyncReport verify_sync(const SDFG& sdfg, const CompileOptions& options);

}  // namespace sdfc
