/// \file
/// `outline-kernels`: decides, for every GPU_Device map outside a kernel (in the SDFG and every
/// nested SDFG called on the host), what its kernel takes and how it is launched, and records it
/// as `Node::kernel` (shown by `sdfc print` under the map):
///  - the closure: every container on the scope's edges (GPU or pinned memory by pointer, `const`
///    when nothing in the kernel writes it and no nested SDFG takes it, so loads may use the
///    read-only data cache; host scalars by value), the dynamic range inputs (read on the host:
///    the grid depends on them), and every symbol its ranges, memlets, strides, code and nested
///    symbol mappings use that is defined outside the kernel;
///  - thread-block mode: when the GPU_ThreadBlock maps in it can run as the threads of one block
///    per point of the kernel map (DaCe's semantics: each a direct child of the kernel map with a
///    constant extent, 3 dimensions at most, nothing else but access nodes directly in the kernel
///    map, at most 1,024 threads), with the block shape they give; otherwise they run as loops in
///    each thread (correct, not parallel);
///  - otherwise the block shape (`gpu_block_size` when the file gives one, else 256 threads shaped
///    by dimensionality: 256, 64 x 4, 32 x 8 x 1, 32 x 4 x 2 beyond 3) and rows per thread: maps
///    of 2 or more dimensions compute consecutive points along their slowest axis per thread (4
///    along y in 2D and beyond 3 dimensions, 16 planes along z in 3D, 4 when the kernel has more
///    than 32 code nodes) unless the body may leave the thread early or synchronize the block (a
///    nested SDFG, a thread-block map, a C++ tasklet with return, goto or __syncthreads);
///  - the lead along x: a map whose x range starts at a constant b > 0 launches b mod 32 idle
///    threads first, so that warps start where the map's index is a multiple of 32;
///  - the layouts (KernelPlan::layouts): where the data's unit stride is known only at the call,
///    a second layout with the parameter indexing its last dimension on x, the launch choosing by
///    the strides; in 3D kernels marching along z that layout folds y into x (one index over the
///    plane, its pitch the data's row stride when rows leave at most 32 idle points, else x's
///    extent, chosen at the launch; 8 planes per thread), so that short rows (C order's K) fill
///    whole warps;
///  - programmatic dependent launch: on CUDA, when the device code is compiled for sm_90 or newer
///    (`--gpu-arch`, default sm_90; sm_NN, sm_NNa, sm_NNf, compute_NN) and the option is on, every
///    kernel is one (`KernelPlan::dependent_launch`; docs/design.md says why stream order holds).
///
/// Refused, with the map's pointer: a GPU map without parameters; a kernel that accesses a
/// container in host memory other than a scalar; a dynamic range input that reads GPU memory.
///
/// Runs after legalize (GPU schedules exist only on GPU targets) and transient-lifetimes (which
/// decides which transients live inside a map scope: those are declared in the kernel).
#pragma once

#include "ir/Options.h"
#include "ir/SDFG.h"

namespace sdfc {

void outline_kernels(SDFG& sdfg, const CompileOptions& options);

}  // namespace sdfc
