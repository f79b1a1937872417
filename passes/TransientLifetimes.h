/// \file
/// `transient-lifetimes`: the memory mode (`--transients`) decides the lifetime of each transient
/// that the file leaves at DaCe's default lifetimes (Scope, State, SDFG), as GT4Py's
/// TransientMemoryMode does:
///  - scoped: Scope (allocated and freed around each call's use);
///  - persistent: Persistent (allocated at init for the symbol values given there, freed at exit);
///  - external: External (the caller's workspace, one per storage type; no allocation per call);
///  - pool: stream-ordered pool allocation for GPU storage; on the CPU, pool means scoped.
/// Left as they are: transients the file declares Persistent, External, Global or `pool`;
/// transients used only inside map scopes (a nested SDFG inside a map counts as inside); Register
/// storage; scalars; transients of nested SDFGs (not yet); and, for persistent and external,
/// transients whose size depends on symbols that are not arguments of the program.
/// Without --transients (TransientMode::AsDeclared) no lifetime changes.
/// In every mode it then decides where each remaining default-lifetime transient is allocated
/// (DataDesc::place): inside the one map scope that uses it, around the one state that uses it
/// when its size depends on a symbol assigned during the program (an error when several states
/// use it), otherwise once per call; nested SDFGs included. The code generator prints this.
/// Runs after normalize (storage resolved), before stream assignment.
#pragma once

#include "ir/SDFG.h"
#include "passes/Options.h"

namespace sdfc {

void assign_transient_lifetimes(SDFG& sdfg, const CompileOptions& options);

}  // namespace sdfc
