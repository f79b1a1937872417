/// \file
/// The tasklet check: parses every CPP tasklet with Clang (libTooling) and reports, with the
/// tasklet's JSON pointer and a line:column inside its code, identifiers that are neither
/// connectors, symbols nor known functions, writes to input connectors, and output connectors
/// that are never written.
///
/// Where it runs: in the compile path (`generate_program`), after the pass pipeline and before
/// code generation. It reads the IR and writes nothing into it, so it is not a pass: dependencies
/// always come from memlets (DaCe's semantics), and a build without Clang (SDFC_WITH_CLANG=OFF)
/// generates the same code and only skips these checks.
///
/// How: ONE parse of one translation unit for the whole program. The unit includes the headers
/// every generated source includes (`generated_includes`: <cmath>, <cstdint>, <algorithm>, ...,
/// and sdfc's runtime, `sdfc/program.h`), the SDFG's `global_code` and each tasklet's
/// `code_global`, then one function per tasklet that declares the tasklet's symbols and
/// connectors as typed locals, as the generated code does, followed by the tasklet's code under a
/// `#line 1 "sdfc-segment-<k>"` directive, so that Clang's locations map back to the tasklet and
/// a line:column inside its code. "Known functions" are therefore exactly what generated code
/// can call: what those headers declare, sdfc's runtime helpers (`sdfc::rt::...`) and whatever
/// `global_code` / `code_global` declare.
///
/// Tasklets that run inside GPU kernels (and GPU targets' global code) are device code, which
/// may use CUDA/HIP built-ins a host parse does not know: for them only the connector checks
/// (writes to inputs, outputs never written) are reported, not Clang's own errors.
#pragma once

#include <string>
#include <vector>

#include "ir/Diagnostic.h"
#include "ir/Options.h"
#include "ir/SDFG.h"

namespace sdfc {

/// What check_cpp_tasklets found.
struct TaskletCheckResult {
  std::vector<Diagnostic> errors;  ///< one per problem, in document order; empty = the tasklets pass
  int cpp_tasklets = 0;            ///< CPP tasklets in the program, nested SDFGs included
  bool skipped = false;            ///< this build has no Clang and the program has CPP tasklets or global code
};

/// True when sdfc was built with Clang (SDFC_WITH_CLANG=ON), so check_cpp_tasklets parses tasklets.
bool tasklet_check_available();

/// Checks every CPP tasklet of `sdfg` (after the pass pipeline). `file` names the input in
/// diagnostics; `runtime_include_dir` holds `sdfc/program.h`. Without Clang, counts the CPP
/// tasklets and reports `skipped`. Throws UserError when Clang itself cannot run (e.g. its
/// resource directory is missing), naming what to fix. With a `pch_dir` (the build cache's
/// checks folder), the unit's headers come from a precompiled header kept there (made by the
/// first check that needs it: ~0.4 s once; a parse then costs milliseconds instead of ~0.25 s); a
/// header that fails to load (changed headers, another Clang) is dropped and the parse repeated
/// without it.
TaskletCheckResult check_cpp_tasklets(const SDFG& sdfg, const CompileOptions& options, const std::string& file,
                                      const std::string& runtime_include_dir, const std::string& pch_dir = "");

/// The combined translation unit check_cpp_tasklets parses (for tests and for reading).
std::string tasklet_check_source(const SDFG& sdfg, const CompileOptions& options);

/// The unit and its number of CPP tasklets, built without parsing anything.
struct TaskletCheckUnit {
  std::string text;
  int cpp_tasklets = 0;
  bool has_code = false;  ///< CPP tasklets, global_code or code_global: something to parse
};
TaskletCheckUnit tasklet_check_unit(const SDFG& sdfg, const CompileOptions& options);

/// What decides the check's verdict besides the unit and the runtime headers: the Clang plugin's
/// file (path, size, modification time: Clang and the check's own code) and Clang's resource
/// directory. Empty when this sdfc cannot check (no Clang); does not load the plugin. The compile
/// driver keys its memory of passed checks on it (compiler/Compile.h).
std::string tasklet_check_identity();

}  // namespace sdfc
