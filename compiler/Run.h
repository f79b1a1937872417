/// \file
/// `sdfc run`: compile (cached), load, bind arguments by name from an inputs file in the corpus
/// format, call once, and write every array argument in the format of `expected.json`.
#pragma once

#include <ostream>
#include <string>

#include "ir/Options.h"

namespace sdfc {

struct RunRequest {
  std::string sdfg_path;
  std::string inputs_path;
  std::string output_path;  ///< "" or "-": standard output
  CompileOptions options;
  bool use_cache = true;
};

/// Returns the exit code (0 success, 1 invalid input, bad binding or program error) and writes
/// diagnostics to `err`.
int run_program(const RunRequest& req, std::ostream& out, std::ostream& err);

}  // namespace sdfc
