/// \file
/// Running programs without a shell: the compilers sdfc runs (in the C locale, under limits that
/// stop a runaway compiler and everything it started) and other tools.
#pragma once

#include <string>
#include <vector>

namespace sdfc {

/// What a finished process did.
struct ProcessResult {
  int status;              ///< exit status; 128 + signal number when killed; -1 when it could not be started
  std::string output;      ///< stdout and stderr interleaved; when status is -1, why it could not start
  bool timed_out = false;  ///< killed (with its process group) after the time limit
};

/// Limits on the compilers sdfc runs (host, nvcc, hipcc), from the environment:
/// SDFC_COMPILER_TIMEOUT_S (wall-clock seconds, default 1800) and SDFC_COMPILER_MEMORY_MB (the data
/// segment of the compiler and the processes it starts, RLIMIT_DATA, default 16384); 0 = no limit.
/// A bad value is a UserError naming the variable.
struct CompilerLimits {
  long timeout_s = 1800;
  long memory_mb = 16384;
};
CompilerLimits compiler_limits();

/// Runs a program without a shell (posix_spawn with `argv`; a bare argv[0] is looked up in PATH),
/// in `cwd` when not empty, with stdin from /dev/null, and waits for it. Thread-safe.
ProcessResult run_process(const std::vector<std::string>& argv, const std::string& cwd = "");

/// run_process for a compiler: in the C locale (English diagnostics a parser can read, a
/// `--version` text that does not depend on the user's language) and under compiler_limits().
ProcessResult run_compiler(const std::vector<std::string>& argv, const std::string& cwd = "");

/// The absolute path of `name`: a path is taken as it is (made absolute), a bare name is looked
/// up in PATH the way execvp does. "" when there is no such executable.
std::string resolve_program(const std::string& name);

/// The text of an errno value ("No such file or directory").
std::string errno_text(int err);
/// The environment variable `name`, or "" when it is not set.
std::string getenv_or_empty(const char* name);

}  // namespace sdfc
