/// \file
/// The C++ environments generated host code includes before sdfc's runtime header. sdfc's own
/// code needs a few standard headers (core_std_includes); DaCe's C++ code (CPP tasklets, global
/// code) may use anything DaCe's runtime header gives it (generated_std_includes, with complex
/// numbers). The host-environment pass chooses per program (SDFG::dace_environment); the tasklet
/// check (clang_tools/TaskletCheck.h) parses CPP tasklets against the whole environment, which
/// every program with a CPP tasklet includes; the build precompiles the chosen set with the
/// standard headers sdfc's runtime headers include (prelude_std_includes).
#pragma once

#include <string>
#include <vector>

#include "ir/Options.h"

namespace sdfc {

/// DaCe's environment: `<cstddef>`, `<cstdint>`, `<cmath>`, ... `<complex>`, `<chrono>`, in the
/// order generated sources include them.
const std::vector<std::string>& generated_std_includes();

/// What sdfc's own generated code uses: a subset of generated_std_includes, in the same order.
const std::vector<std::string>& core_std_includes();

/// The standard headers a generated host source of `target` reads before its own code: the chosen
/// environment's and those sdfc's runtime headers include (runtime/include/sdfc: program.h and
/// rt.h; complex.h with DaCe's environment; the GPU runtime's for GPU targets). The build
/// precompiles them once (compiler/Build.h, BuildRequest::prelude_headers).
std::vector<std::string> prelude_std_includes(bool dace_environment, Target target);

}  // namespace sdfc
