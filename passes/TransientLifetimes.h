/// \file
/// `transient-lifetimes`: the memory mode (`--transients`) decides the lifetime of each transient
/// that the file leaves at DaCe's default lifetimes (Scope, State, SDFG), as GT4Py's
/// TransientMemoryMode does:
///  - scoped: Scope (allocated and freed around each call's use);
///  - persistent: Persistent (allocated at init for the symbol values given there, freed at exit);
///  - external: External (the caller's workspace, one per storage type; no allocation per call);
///  - pool: stream-ordered pool allocation for GPU storage; on the CPU, pool means scoped.
/// Converted: arrays at a default lifetime, not `pool`, not in Register storage, with an access
/// node outside every map scope; for persistent and external, only those whose size depends on
/// arguments of the program alone. Left as they are: transients the file declares Persistent,
/// External, Global or `pool`; transients used only inside map scopes; Register storage; scalars.
///
/// Nested SDFGs: the mode applies to the transients of every nested SDFG that is not inside a map
/// scope (nor inside a nested SDFG that is: a nested SDFG inside a map counts as inside, at any
/// depth), with the same selection:
///  - persistent and external lift them, innermost first, into the SDFG that holds the nested SDFG
///    node X: transient T of X's SDFG becomes a new transient `<X's label>_<T>` (made unique) of
///    the parent, with T's dtype and storage and its shape, strides, offset and total size written
///    through X's symbol mapping; in X's SDFG, T becomes a non-transient argument; in X's state, an
///    access node of the new container and an edge into X's in-connector T when X's SDFG reads T
///    (or neither reads nor writes it), and an edge from X's out-connector T to an access node when
///    it writes T, both with full-range memlets. The parent then treats it as one of its own
///    transients, so it rises to the top-level SDFG, where it is converted; every later pass and
///    the code generator see an ordinary top-level transient. Lifted only when every extent,
///    stride, offset and the total size, through the symbol mappings up to the top level, depends
///    on arguments of the program alone (so the signature does not change); none may use a symbol
///    a nested SDFG on the way assigns itself, or one its mapping leaves undefined. The rest stay in
///    their nested SDFG, at their lifetime.
///  - scoped and pool apply in place: the nested SDFG's function allocates the transient around
///    its own call, which is what scoped means there (Scope), and for pool a stream-ordered pool
///    allocation for GPU storage (Scope on the CPU). Lifting would only stretch the allocation
///    over the whole program call.
/// Without --transients (TransientMode::AsDeclared) no lifetime changes, and what is lifted is the
/// constants and the GPU_Global transients of nested SDFGs that the selection above takes (at a
/// default lifetime, used outside map scopes, sized by the program's arguments alone): where the
/// nested SDFG would allocate one at each of its calls (a device malloc, and a free that waits for
/// the device: per iteration in a loop), the top level allocates it once per program call, in the
/// call's arena, with its declared lifetime.
///
/// Constants (the `constants_prop` of DaCe's SDFGs, DataDesc::constant), in every mode: lifted
/// like persistent transients from nested SDFGs outside map scopes (whatever the mode), then made
/// Persistent at the top level, so that the library's init fills them once; a constant of a nested
/// SDFG inside a map scope is an error.
///
/// In every mode it then decides where each remaining default-lifetime transient is allocated
/// (DataDesc::place): inside the one map scope that uses it, around the one state that uses it
/// when its size depends on a symbol assigned during the program (an error when several states
/// use it), otherwise once per call; nested SDFGs included. A GPU_Global transient placed around
/// its state (outside any kernel) is also marked `pool`: it is allocated at every execution of the
/// state, per iteration in a loop, with the stream-ordered pool instead of a device-wide malloc and
/// free, and pool-legality proves that allocation's ordering. The code generator prints this.
/// Runs after normalize (storage resolved), before stream assignment.
#pragma once

#include "ir/Options.h"
#include "ir/SDFG.h"

namespace sdfc {

void assign_transient_lifetimes(SDFG& sdfg, const CompileOptions& options);

}  // namespace sdfc
