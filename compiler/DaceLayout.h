/// \file
/// `compile --dace-layout DIR`: lays out a program folder that DaCe's own loader
/// (`dace.codegen.compiler.load_precompiled_sdfg(DIR)`) runs unmodified, so that DaCe users swap
/// the compiler and keep their calling code:
///
///     DIR/FOLDER_MODE                   "development" (DaCe reads it to find the library)
///     DIR/program.sdfg                  the input file (program.sdfgz for a .sdfgz input), byte for byte
///                                       unless the program has external workspaces: then every
///                                       workspace member is marked lifetime External with the
///                                       storage the library exports its functions for, so that
///                                       DaCe's get_workspace_sizes/set_workspace find them
///     DIR/build/lib<name>.so            the program
///     DIR/build/libdacestub_<name>.so   the loader stub DaCe loads first (sdfc's own:
///                                       load_library, is_library_loaded, get_symbol, unload_library;
///                                       get_symbol answers __dace_gpu_last_error with a check that
///                                       is also 1 after a call the program refused, so that DaCe's
///                                       CompiledSDFG.__call__ raises)
///     DIR/include/<name>.h, DIR/src/<target>/...   the generated sources, for reference
///
/// Everything is built before anything in DIR is written; each file is then written as an
/// output (compiler/Output.h).
#pragma once

#include <string>

#include "codegen/Codegen.h"
#include "ir/Options.h"

namespace sdfc {

/// Builds the loader stub (through the build cache unless `use_cache` is false) and writes the
/// layout above. `built_library` is the program's library (build_program), `input_file` the SDFG
/// file it was compiled from, `processed` the SDFG after the passes (its workspaces). Throws
/// UserError naming the path that could not be written.
void write_dace_layout(const std::string& dir, const GeneratedProgram& program, const std::string& built_library,
                       const std::string& input_file, const SDFG& processed, const CompileOptions& options,
                       bool use_cache);

/// The C++ source of sdfc's loader stub (the four functions DaCe's `ReloadableDLL` calls).
const char* dace_stub_source();

}  // namespace sdfc
