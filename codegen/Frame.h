/// \file
/// The library frame (internal to codegen/): wraps the body the emitters printed into the
/// program's source file — the state struct, DaCe's entry points (`__dace_init_`, `__program_`,
/// `__dace_exit_`, the external-memory pair), sdfc's hooks — and its C header. One method per
/// exported function group; the fixed texts are templates.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "codegen/Codegen.h"
#include "codegen/Emitter.h"
#include "ir/Signature.h"

#ifndef SDFC_VERSION  // the build defines it; builds of a few sources alone (the fuzzer) do not
#define SDFC_VERSION "0.0.0"
#endif

namespace sdfc::codegen {

class FramePrinter {
 public:
  FramePrinter(const SDFG& root, const CompileOptions& options, std::string file, EmittedBody body);
  GeneratedProgram run();

 private:
  const SDFG& root_;
  const CompileOptions& options_;
  std::string file_;
  std::string name_;
  bool gpu_;
  /// CUDA programs without global code print two sources: the kernels and their launchers in
  /// <name>.cu (nvcc), everything else in <name>.cpp (the host compiler, with the precompiled
  /// prelude, while nvcc runs). Global code may hold device code for either side: one .cu then.
  bool split_;
  EmittedBody body_;
  std::vector<const SDFG*> all_sdfgs;  ///< the root, then the nested SDFGs emitted
  /// The host source's standard headers: SDFG::std_includes (DaCe's whole environment for IR that
  /// did not run the host-environment pass).
  const std::vector<std::string>& std_includes() const;

  // What every part of the frame prints from (computed once by the constructor).
  Signature sig;
  std::string st;                                                             ///< the state struct's name
  std::vector<std::pair<std::string, const DataDesc*>> persistent, external;  ///< transients in the state struct
  std::vector<std::string> params, call_args, init_params, init_args;         ///< C parameters and call arguments
  std::string param_list, init_list;
  std::string internal_param_list;  ///< the body's parameters: symbols as symbol_value_type (int64_t)
  /// The workspace functions take the init symbols as __arg_<name> and compute in 64 bits.
  std::vector<std::string> wide_params, widen, wide_args;
  std::string wide_list;
  /// External transients by workspace, as workspace-layout placed them.
  std::map<std::string, std::vector<std::pair<std::string, const DataDesc*>>> by_storage;
  std::map<std::string, const Workspace*> workspace_of;
  std::vector<std::string> storages;
  std::string info;  ///< what __sdfc_program_info returns

  /// Whether a kernel or device function prints `what` (which runtime headers the device code needs).
  bool device_code_uses(std::string_view what) const;
  /// Whether the device code combines a warp's atomics (sdfc/gpu_atomics_combined.h).
  bool combines_atomics() const;
  void prologue(CodeWriter& w);
  void struct_definitions(CodeWriter& w) const;
  void device_prologue(CodeWriter& w);
  void state_struct(CodeWriter& w);
  void device_functions(CodeWriter& w);
  void functions(CodeWriter& w);
  void program_entry(CodeWriter& w);
  void init_function(CodeWriter& w);
  void exit_function(CodeWriter& w);
  void external_memory(CodeWriter& w);
  void workspace_hooks(CodeWriter& w);
  void error_and_stream_hooks(CodeWriter& w);
  void array_entry_points(CodeWriter& w);
  std::string c_header() const;
  std::string info_json() const;
  std::string persistent_free(const std::string& name, const DataDesc& d) const;
  void constant_fill(const std::string& name, const DataDesc& d, CodeWriter& w) const;
  std::string state_type() const { return name_ + "_state_t"; }
  /// An init symbol (or callback) `s` declared as `name`; its type alone with `name` "*" (a
  /// pointer to it: "**"), as for a plain symbol the C type followed by that many stars.
  std::string init_symbol_decl(const std::string& s, const std::string& name) const;
};

}  // namespace sdfc::codegen
