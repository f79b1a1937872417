/// \file
/// The command line's help texts: one per command, the compile options' from the option table
/// (ir/Options.h), dot's list of passes from the pipeline.
#pragma once

#include <string>

namespace sdfc {

/// The help of `sdfc COMMAND` ("": sdfc's own): usage, what it does and its options; "" for a
/// command sdfc does not have.
std::string help(const std::string& command);

/// The compile options' help (compile, run and dot), one row of the option table each.
std::string options_help();

}  // namespace sdfc
