/// \file
/// Options a user sets (DESIGN.md §1.3); the command line and the library API mirror them.
#pragma once

#include <optional>
#include <string>

namespace sdfc {

enum class Target { CPU, CUDA, HIP };

/// The transient memory mode (GT4Py's TransientMemoryMode). `AsDeclared` keeps every lifetime as
/// the file states it.
enum class TransientMode { AsDeclared, Scoped, Persistent, Pool, External };

/// How expand-library-nodes expands BLAS nodes (Gemm, Gemv and the MatMul forms that are one):
/// `Pure` as maps (needs nothing), `Vendor` as calls into CBLAS on host data and cuBLAS on GPU
/// data where the operands have a BLAS layout (the rest stay pure).
enum class BlasMode { Pure, Vendor };

struct CompileOptions {
  Target target = Target::CPU;
  std::string gpu_arch;  ///< "" = the target's default (sm_90, gfx90a)
  TransientMode transients = TransientMode::AsDeclared;
  int gpu_streams = 0;
  BlasMode blas = BlasMode::Pure;
  /// GPU targets: record the call's GPU work once as a graph and replay it (the gpu-graph pass
  /// checks that the program allows it).
  bool gpu_graph = false;
  /// fuse-maps: merge chains of maps that continue each other point by point (through transients
  /// nothing else uses) into one map, one kernel on the GPU.
  bool fuse_maps = false;
  /// CUDA on sm_90 or newer: kernels are launched with programmatic stream serialization (a kernel
  /// may start while the one before it on its stream finishes; it waits for that one's completion
  /// before it touches memory), saving part of each launch's latency (outline-kernels decides).
  bool dependent_launch = true;
  /// The generated library prints each refused call's message on stderr once (set by
  /// `--dace-layout`: DaCe's loader never reads `__sdfc_last_error`).
  bool report_refusals = false;
};

/// The targets in one table: name (CLI, API, cache key, DaCe's folder), the generated source's
/// file extension (which also picks the build's compiler), the runtime header it includes.
struct TargetInfo {
  Target target;
  const char* name;
  const char* source_extension;
  const char* runtime_header;
};
const TargetInfo& target_info(Target t);
/// The architecture the device code is compiled for: `gpu_arch`, or the target's default (sm_90
/// for CUDA, gfx90a for HIP; "" on the CPU).
std::string gpu_arch_or_default(const CompileOptions& o);
/// The target named `name` ("cpu", "cuda", "hip"); nullopt for anything else.
std::optional<Target> parse_target(const std::string& name);
/// "cpu, cuda or hip", for messages.
std::string target_names();

const char* to_string(Target t);
const char* to_string(TransientMode m);
const char* to_string(BlasMode m);

}  // namespace sdfc
