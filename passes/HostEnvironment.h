/// \file
/// `host-environment`: decides which C++ environment the generated host source includes
/// (SDFG::dace_environment, root). sdfc's own code (translated Python tasklets, interstate code,
/// the frame) needs only a few standard headers; DaCe's C++ code (CPP tasklets, global, init and
/// exit code, C++ conditions) may use anything DaCe's runtime header gives it, and complex numbers
/// need `<complex>`. Parsing and instantiating what a program does not use was most of a small
/// program's compile (`<complex>` alone about a quarter), so the whole environment is included
/// only where the program has C++ code of its own or uses complex numbers
/// (lang/CppEnvironment.h lists both sets; the build precompiles the one the program includes).
#pragma once

#include "ir/Options.h"
#include "ir/SDFG.h"

namespace sdfc {

/// Sets `root.dace_environment`: true when the program or a nested SDFG has non-empty C++ code
/// (a CPP tasklet or its code_global, SDFG global/init/exit code for any target, a C++ interstate
/// condition, loop statement or branch condition), data, symbols or connectors of a complex type,
/// or a Python tasklet that mentions complex numbers (`complex`, an imaginary literal such as
/// `1j`).
void choose_host_environment(SDFG& root, const CompileOptions& options);

}  // namespace sdfc
