/// \file
/// `fuse-maps` (`--fuse-maps`; off by default): merges a map into the map before it when the
/// second only continues, point by point, what the first computed — a chain of elementwise maps
/// through transients becomes one map (one kernel on the GPU), and each transient between them a
/// scalar of the fused map's scope (a register).
///
/// Maps A and B of one state, both outside every map scope, fuse when:
///  - they have the same schedule, parameters (names and order), ranges and GPU block size, and no
///    dynamic range inputs;
///  - some access node lies between them (A's exit -> T -> B's entry), and every such T is a
///    transient array (lifetime Scope, State or SDFG, not pooled) that nothing else in the SDFG
///    names: one access node, no other memlet, no interstate code. A writes it from one tasklet,
///    not dynamically and without write-conflict resolution, at a point subset S that is
///    injective in the map's parameters (each parameter, plus a term free of parameters, in its
///    own dimension); B reads it only from tasklets, each at exactly S. So B at point p reads what
///    A wrote at p, and nothing else reads it.
///  - B is reachable from A through those T only (no other path of data or order), and neither
///    map touches what the other writes (no write of A read or written by B, no write of B read
///    by A), so no point of one reads what another point of the other writes.
///  - no container is accessed inside both maps' scopes (their bodies' locals stay apart), and
///    neither body has a map other than a sequential loop (no thread-block maps) or code that
///    synchronizes a thread block.
/// B's body then moves into A's scope: its other inputs and outputs pass through new connectors
/// of A's entry and exit, each T becomes a Register scalar inside the scope (written by A's
/// tasklet, read by B's), and B's entry and exit are removed. Fusion repeats until no pair fuses,
/// so a chain of k maps becomes one. Nodes and edges keep their file ids (Node::file_id), so later
/// diagnostics still point into the file.
/// Runs after normalize (explicit schedules and storage), before transient-lifetimes (which then
/// places the scalars in the fused scope).
#pragma once

#include "ir/Options.h"
#include "ir/SDFG.h"

namespace sdfc {

void fuse_maps(SDFG& sdfg, const CompileOptions& options);

}  // namespace sdfc
