/// \file
/// The compiler driver: load and validate an SDFG, run the pass pipeline, generate code, build the
/// shared library through the cache. The CLI and the library API both go through here.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "codegen/Codegen.h"
#include "compiler/Build.h"
#include "ir/Diagnostic.h"
#include "ir/SDFG.h"
#include "passes/Pipeline.h"

namespace sdfc {

/// Invalid or unsupported input: every problem found, one diagnostic each.
class InvalidInput : public std::runtime_error {
 public:
  explicit InvalidInput(std::vector<Diagnostic> diags);
  const std::vector<Diagnostic>& diagnostics() const { return diags_; }

 private:
  std::vector<Diagnostic> diags_;
};

/// Reads and validates an SDFG (a file, or JSON text with a display name). Throws InvalidInput.
std::unique_ptr<SDFG> load_sdfg_file(const std::string& path);
std::unique_ptr<SDFG> load_sdfg_text(const std::string& text, const std::string& display_name);

/// Runs the pipeline, the CPP tasklet check (clang_tools/TaskletCheck.h) and the code generator.
/// Throws InvalidInput.
///
/// With `remember_checks`, a tasklet check that passed is remembered in the build cache
/// (`<cache_dir()>/checks/<key>`, an empty file), keyed by the SHA-256 of the check's translation
/// unit, the runtime headers' contents, the Clang plugin's path, size and modification time, and
/// sdfc's version: the same tasklets are not parsed again (Clang's parse of the standard headers
/// costs ~0.3 s; a remembered check ~0.1 ms). Failed checks are not remembered. What is not in
/// the key: the system's C++ standard headers, which the check parses as installed.
GeneratedProgram generate_program(SDFG& sdfg, const CompileOptions& options, const std::string& file,
                                  const PipelineHooks& hooks = {}, bool remember_checks = false);

/// Writes the generated sources and the C header into `dir` (created if needed; may exist).
void emit_sources(const GeneratedProgram& program, const std::string& dir);

/// Builds the library (cached unless `use_cache` is false). Throws UserError on compiler errors.
BuildResult build_program(const GeneratedProgram& program, const CompileOptions& options, bool use_cache);

struct Options;
class Program;
/// The compile options of the API's `Options`, each through its row of the option table
/// (ir/Options.h); throws sdfc::Error for a value the table refuses ("transients must be ...").
CompileOptions to_compile_options(const Options& o);
/// Program::compile_file with compile options as the command line has them (`sdfc run`).
Program compile_program_file(const std::string& path, const CompileOptions& options, bool use_cache);

/// The folder holding the runtime headers (`sdfc/program.h`): $SDFC_RUNTIME_DIR, else
/// `<prefix>/share/sdfc/include` next to the running sdfc, else the source tree's `runtime/include`.
std::string runtime_include_dir();

/// Hex SHA-256 of the runtime headers (part of every cache key).
const std::string& runtime_hash();

}  // namespace sdfc
