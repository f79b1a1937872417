/// \file
/// `expand-library-nodes`: the first pass. Replaces every DaCe library node by what it computes,
/// so that no later pass or the code generator sees one. Each node becomes a nested SDFG in its
/// place, on the same edges (DaCe's "pure" expansions, written for sdfc); its arrays are the
/// memlets' subsets of the outer data with the outer data's strides (views included: their own
/// strides), and the classes are a table from classpath to an expansion function:
///  - `Reduce` (standard, with `axes`, `wcr`, `identity`): a state setting every output element to
///    the identity, then a sequential loop nest over the input that combines each element into its
///    output element with the write-conflict lambda (`out = lambda(out, in)`: no atomics, and the
///    order DaCe's sequential expansion has).
///  - `MatMul` (blas): dispatched on the operands' ranks without dimensions of extent 1, as DaCe's
///    SpecializeMatMul does: matrix @ matrix as Gemm, an operand of rank >= 3 as BatchedMatMul,
///    matrix @ vector as Gemv, vector @ matrix as Gemv with A transposed, vector @ vector as Dot;
///    `Gemm` (transA, transB, alpha, beta, optional `_c` input), `Gemv` (transA, alpha, beta,
///    optional `_y` input), `Dot`, `BatchedMatMul` and `Ger` (alpha) also directly: out = alpha *
///    sum + beta * c, as a state initializing the output (0, c or beta * c) and a map over the
///    output's elements around a sequential loop adding the products in order.
///  - `Transpose` (linalg, matrices): one map, out[j, i] = inp[i, j].
/// Vendor calls (`--blas vendor`, CompileOptions::blas): Gemm, Gemv and the MatMul forms that are
/// one, outside map scopes, on float32/float64 operands of one dtype each of whose matrices has a
/// dimension of stride 1, become the same nested SDFG holding one CPP tasklet that calls the vendor
/// library through sdfc's runtime (sdfc/blas.h: CBLAS on host data; sdfc/gpu_blas.h: cuBLAS on GPU
/// data, on the stream stream-assignment gives the tasklet). The tasklet is marked
/// `library_call` (the tasklet check skips it; a cuBLAS one is a GPU operation ordered like a
/// kernel), the top-level SDFG's `libraries` names what to link, and an input C of its own is
/// first copied into the output by a map (the call applies beta there). Everything else — nodes
/// inside maps, other dtypes, operands with no BLAS layout, Dot, Ger, batched products, Transpose,
/// Reduce — is expanded pure as above. GPU data on the HIP target is refused (no hipBLAS in
/// Debian). The dump shows each decision (`library-call=cblas`). CPP tasklets of library nodes
/// DaCe expanded itself into CBLAS calls (its OpenBLAS or IntelMKL environment on the tasklet, as
/// auto_optimize leaves NPBench's products) put "cblas" into `libraries` too: the program includes
/// CBLAS and links it, and the tasklet check sees <cblas.h>.
/// Schedules: inside a map scope every loop of an expansion is sequential (normalize makes its
/// Default maps so: the enclosing iteration or GPU thread runs it); outside, the maps over output
/// elements are Default (CPU_Multicore after normalize) for host data and GPU_Device kernels for
/// GPU data on a GPU target. Errors naming the node: any other class; operand ranks or sizes that
/// do not fit; a write-conflict resolution on a BLAS output; host and GPU data in one BLAS node, or
/// a Reduce on GPU data, outside any map on a GPU target; a Reduce without an identity. Runs
/// before fold-views (which then folds views the expansions' edges still name) and normalize
/// (which types the new connectors and schedules as for any nested SDFG).
#pragma once

#include "ir/Options.h"
#include "ir/SDFG.h"

namespace sdfc {

void expand_library_nodes(SDFG& sdfg, const CompileOptions& options);

}  // namespace sdfc
