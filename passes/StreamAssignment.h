/// \file
/// `stream-assignment`: gives every GPU kernel (a GPU_Device map launched from host code) and
/// every copy that touches GPU memory a stream, written into the IR (Node::stream,
/// DataEdge::stream). With `--gpu-streams 0` (the default) everything runs on stream 0, which the
/// runtime maps to the caller's external stream or the default stream; several internal streams
/// (N >= 1) are not implemented yet and are rejected with an error. No-op on the CPU.
/// Runs after transient-lifetimes, before synchronization.
#pragma once

#include "ir/SDFG.h"
#include "passes/Options.h"

namespace sdfc {

void assign_streams(SDFG& sdfg, const CompileOptions& options);

/// True when the edge is a copy between access nodes and one side lives in GPU memory.
bool is_gpu_copy(const SDFG& sdfg, const Block& state, const DataEdge& e);

}  // namespace sdfc
