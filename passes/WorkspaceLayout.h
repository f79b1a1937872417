/// \file
/// `workspace-layout`: places every External transient of the program in the caller's workspace
/// of its storage type (DaCe's names: CPU_Heap — host Default resolves to it —, CPU_Pinned,
/// GPU_Global) and writes the layout into the IR: DataDesc::workspace_offset for each transient,
/// SDFG::workspaces for each storage (members, base alignment, bytes). The code generator prints
/// the offsets and sizes; it decides none.
///
/// Layout: each transient starts at a multiple of 256 bytes from the base; sizes are symbolic in
/// the program's init symbols and include the padding. Transients share bytes when the schedule
/// orders all uses of one before all uses of the other, so the workspace is the peak footprint
/// rather than the sum (`Workspace::unshared_bytes` keeps the sum for `--stats`):
///  - positions: the top-level control-flow blocks in a topological order of their strongly
///    connected components (blocks on one cycle share a position; everything inside a block —
///    a loop, a conditional — counts as that block's position). Inside a top-level state that is
///    on no cycle, each operation has a position of its own: its place in the issue order (what a
///    nested SDFG node uses spans the whole state). A transient is live from its first to its last
///    position (operations and access nodes that name it, conditions and assignments); every
///    execution path visits positions in increasing order, so two transients whose live ranges are
///    disjoint are never live at once;
///  - only transients whose lifetime came from the memory mode share (their contents do not
///    outlive a call); what the file declares External keeps bytes of its own;
///  - host-storage transients share only when no GPU operation touches them (a queued copy may
///    still read or write them when the host moves on); GPU_Global transients share only when all
///    their GPU operations run on one stream, the same for both (stream order then orders the uses).
/// Greedy by first position: a transient joins the first slot whose members are all dead before
/// it starts (and, for GPU storage, on its stream); a slot is as large as its largest member.
/// External transients that a file declares inside nested SDFGs are not supported (an error from
/// the code generator); those the memory mode makes External were lifted to the top level by
/// transient-lifetimes, so they are laid out here like any other.
///
/// The call's arena (GPU targets): the GPU_Global transients allocated once per call (DaCe's
/// default lifetimes, not pooled, placed per call by transient-lifetimes) get offsets in one
/// allocation per call (DataDesc::arena_offset, SDFG::arena) with the same slots and sharing rules
/// — all of them may share, since none holds data across calls. One allocation per call instead
/// of one per transient, and the arena is the peak footprint. The arena comes from the
/// stream-ordered pool (Workspace::stream_ordered): MallocAsync on stream 0 at the call's start,
/// FreeAsync on stream 0 at its end, the pool keeping the memory reserved between calls, so a call
/// neither waits for the device nor pays a device malloc (each state's fork orders the other
/// streams after the allocation, its join before the free; the verifier replays both). What is allocated
/// around one state, inside a map scope, pooled, or in a nested SDFG keeps its own allocation.
/// Runs after synchronization (it reads the stream of every operation).
#pragma once

#include "ir/Options.h"
#include "ir/SDFG.h"

namespace sdfc {

void lay_out_workspaces(SDFG& sdfg, const CompileOptions& options);

/// `align` (a power of two) rounded up: the expression int_ceil(bytes, align) * align, folded
/// when constant.
Expr align_up_expr(const Expr& bytes, std::int64_t align);

}  // namespace sdfc
