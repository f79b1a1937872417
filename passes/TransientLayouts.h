/// \file
/// `transient-layouts` (GPU targets; off with `--declared-transient-layouts`): a GPU transient
/// whose layout the file fixes (GT4Py declares its temporaries with the first, horizontal
/// dimension contiguous) takes, at each call, the order of the argument its kernels access beside
/// it, whose strides are symbols known only at the call. GT4Py's neighbour reduction
/// (`gt4py_c2e_reduce_s`) with C-order fields read its arguments across rows (0.10 of the
/// bandwidth floor in DaCe's code and in sdfc's) because its transient `[Cell, 3, K]` had Cell
/// contiguous and the arguments K; following them, every access of a kernel runs along one unit
/// stride.
///
/// A transient T is laid out when:
///  - it is a GPU_Global array of two or more dimensions, its lifetime Scope, State or SDFG (it
///    holds nothing across calls), no constant, zero offsets, and its declared strides are dense
///    (some order of its dimensions gives 1, then each the product of the sizes before it);
///  - only kernels touch it: its access nodes outside map scopes connect only to GPU_Device maps'
///    entries and exits, those inside map scopes sit in kernels, no interstate code names it, and
///    each nested SDFG that receives it (inside a kernel) declares it with T's strides and passes
///    it to no nested SDFG of its own;
///  - an argument A (a GPU array none of whose strides is the constant 1: its unit stride is known
///    only at the call) is accessed in a kernel
///    beside T with one map parameter indexing a dimension of each (the parameter alone, plus a
///    term free of parameters), for two or more of T's dimensions, the same pairs in every such
///    kernel. Among several, the one pairing the most dimensions, then the most kernels, then by
///    name.
/// The decision is recorded in DataDesc::layout_follows and layout_dims, and T's strides become
/// expressions of A's: T's dimensions paired with A's are ordered by the |stride| of their
/// partners (ties in T's declared order); each other dimension stays right after the paired one
/// it follows in the declared order (or first, before every paired one). Where A's order is T's
/// declared one, the strides equal the declared ones. T's size does not change. Each nested
/// SDFG receiving T gets the new strides, and the symbols they read through its symbol mapping.
/// outline-kernels then sees strides known only at the call and plans a layout per dimension,
/// chosen at the launch (KernelPlan::layouts).
///
/// Runs after fuse-maps (whose transients become registers) and before transient-lifetimes, which
/// may make transients Persistent by the memory mode: the choice reads the file's lifetimes.
#pragma once

#include "ir/Options.h"
#include "ir/SDFG.h"

namespace sdfc {

void lay_out_transients(SDFG& sdfg, const CompileOptions& options);

}  // namespace sdfc
