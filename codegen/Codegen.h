/// \file
/// Code generation: prints an SDFG, after the pass pipeline, as C++ (CPU) source with DaCe's C
/// ABI and sdfc's `__sdfc_` hooks. The generator prints what the IR says (schedules, lifetimes,
/// storage decided by passes); it makes no synchronization or allocation decisions of its own.
#pragma once

#include <string>
#include <vector>

#include "ir/Options.h"
#include "ir/SDFG.h"

namespace sdfc {

struct GeneratedFile {
  std::string name;  ///< e.g. "heat.cpp"
  std::string text;
};

struct GeneratedProgram {
  std::string name;                    ///< the SDFG name (a C identifier)
  std::vector<GeneratedFile> files;    ///< sources to compile
  std::string header;                  ///< a C header declaring the exported entry points
  std::string info_json;               ///< what `__sdfc_program_info()` returns
  std::vector<std::string> libraries;  ///< vendor libraries to link (SDFG::libraries: "cblas", "cublas")
  /// The standard headers the host source reads first (prelude_std_includes of the program's
  /// environment, SDFG::dace_environment), for the build's precompiled prelude.
  std::vector<std::string> prelude_headers;
};

/// Generates the program from an SDFG the whole pipeline has run on (every decision is in the
/// IR). `file` (the input file name) is used in error messages. Raises no user error: what the
/// passes should have refused or decided is an internal error (SDFC_ASSERT).
GeneratedProgram generate(const SDFG& sdfg, const CompileOptions& options, const std::string& file = "<input>");

}  // namespace sdfc
