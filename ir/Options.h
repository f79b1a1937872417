/// \file
/// Options a user sets (DESIGN.md §1.3); the command line and the library API mirror them.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

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
  /// GPU targets: a GPU transient's layout follows, at each call, the argument its kernels access
  /// beside it (transient-layouts decides); false keeps every layout the file declares.
  bool transient_layouts = true;
  /// The generated library prints each refused call's message on stderr once (set by
  /// `--dace-layout`: DaCe's loader never reads `__sdfc_last_error`).
  bool report_refusals = false;
};

/// One compile option, written down once. The command line (parsing and help), the library API
/// (its options as text), the build cache key and `sdfc options --json` (read by the Python
/// package and the DaCe and GT4Py integration) all read `option_table()`. Adding an option is a
/// field of CompileOptions, a row of the table and its use (ir/Options.cpp fails to compile when a
/// field has no row).
struct OptionSpec {
  /// What the option's value is: one of `values`, any text, a whole number, or nothing (a switch).
  enum class Kind { Choice, Text, Number, Switch };
  const char* name;  ///< the field's name ("transients"): the API's, Python's, the cache key's
  const char* flag;  ///< the command line's flag ("--transients", "--no-dependent-launch")
  Kind kind;
  const char* metavar;  ///< the value's name in help ("MODE"); "" for a switch (a flag alone)
  /// The values the option takes, in help order; empty for any text (or any number in range).
  std::vector<std::string> values;
  /// A switch: the value its flag sets ("true", or "false" for a --no- flag); "" otherwise.
  const char* switch_value;
  const char* help;  ///< one paragraph; the help printer wraps it
  /// Sets the field from text (`values`, a number, "true"/"false"); throws OptionError with a
  /// message that the caller prefixes with the flag or the name ("must be pure or vendor, not 'x'").
  void (*set)(CompileOptions&, const std::string& value);
  /// The field as text, in the form `set` takes back.
  std::string (*get)(const CompileOptions&);
};

/// "choice", "text", "number", "switch" (`sdfc options --json`).
const char* to_string(OptionSpec::Kind k);

/// A value an option does not take; what() reads after the option's name.
struct OptionError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Every compile option, in help order.
const std::vector<OptionSpec>& option_table();
/// The option with command-line flag `flag` (nullptr: none).
const OptionSpec* find_option_flag(const std::string& flag);
/// The option named `name` (nullptr: none).
const OptionSpec* find_option(const std::string& name);
/// Every option's value as "name value" lines in table order: the options' part of the build
/// cache key (derived from the table, so a new option cannot be left out of it).
std::string options_key(const CompileOptions& o);

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
