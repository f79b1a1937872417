/// \file
/// `host-environment`: decides which standard headers the generated host source includes
/// (SDFG::std_includes, root; `host includes:` in the dump). sdfc's own code (translated Python
/// tasklets, interstate code, the frame) needs a few; DaCe's C++ code (CPP tasklets, global, init
/// and exit code, C++ conditions) may use anything DaCe's runtime header gives it, and complex
/// numbers need `<complex>`. Parsing and instantiating headers a program does not use was most of
/// a small program's compile (`<complex>` alone about a quarter), so a program gets the headers its
/// C++ code names (GT4Py's metrics timers name std::chrono: `<chrono>`) and `<complex>` where it
/// computes with complex numbers; DaCe's whole environment where its C++ code names what sdfc
/// cannot place (lang/CppEnvironment.h, cpp_code_std_includes). The build precompiles the set.
#pragma once

#include "ir/Options.h"
#include "ir/SDFG.h"

namespace sdfc {

/// Sets `root.std_includes`: lang/CppEnvironment.h's core headers; those the C++ code of the
/// program and its nested SDFGs names (a CPP tasklet or its code_global, SDFG global/init/exit code
/// for any target, a C++ interstate condition, loop statement or branch condition), or the whole
/// environment when one cannot tell; and `<complex>` for data, symbols or connectors of a complex
/// type, C++ code that mentions `complex` (`dace::complex128`) and Python tasklets that mention
/// complex numbers (`complex`, an imaginary literal such as `1j`).
void choose_host_environment(SDFG& root, const CompileOptions& options);

}  // namespace sdfc
