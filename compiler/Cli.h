/// \file
/// The `sdfc` command line: validate, print, convert (later: compile, run).
/// Exit codes: 0 success, 1 invalid or unsupported input, 2 usage error.
#pragma once

#include <ostream>

namespace sdfc {

/// Runs the command line with the given arguments, writing to `out` and `err`.
int run_cli(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace sdfc
