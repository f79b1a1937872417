/// \file
/// User-facing diagnostics: what is wrong, where (file, JSON pointer, or line:column for syntax
/// errors), what was expected. Internal errors are assertions (SDFC_ASSERT).
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace sdfc {

/// One problem found in a user's input.
struct Diagnostic {
  std::string file;     ///< input file name, or "<input>" for in-memory sources
  std::string pointer;  ///< JSON pointer of the offending value ("" = whole document)
  int line = 0;         ///< 1-based line (of the file, or inside the code at `pointer`), 0 when unknown
  int column = 0;       ///< 1-based column, with `line`
  std::string message;  ///< lower-case, no final period

  /// `file:line:col: error: message` (a place in the file, e.g. a JSON syntax error),
  /// `file: /json/pointer: error: message`, or `file: /json/pointer:line:col: error: message` (a
  /// place inside the code string at the pointer, e.g. a tasklet's code).
  std::string str() const;
};

/// Thrown for an invalid or unsupported input; carries one diagnostic, or several when one step
/// (reading a file) found several problems.
class UserError : public std::runtime_error {
 public:
  explicit UserError(Diagnostic d);
  /// `ds` must not be empty; diagnostic() is the first.
  explicit UserError(std::vector<Diagnostic> ds);
  const Diagnostic& diagnostic() const { return diags_.front(); }
  const std::vector<Diagnostic>& diagnostics() const { return diags_; }

 private:
  std::vector<Diagnostic> diags_;
};

/// Escapes one JSON-pointer reference token (RFC 6901: `~` -> `~0`, `/` -> `~1`).
std::string pointer_token(const std::string& key);

/// Throws a UserError about `file` without a JSON pointer or position: a file, the environment or
/// a tool, not the program ("cannot create the file: Permission denied").
[[noreturn]] void throw_at(const std::string& file, std::string message);

[[noreturn]] void internal_error(const char* file, int line, const std::string& what);

}  // namespace sdfc

/// Internal invariant: a failure is an sdfc bug, reported with file and line.
#define SDFC_ASSERT(cond, msg)                                      \
  do {                                                              \
    if (!(cond)) ::sdfc::internal_error(__FILE__, __LINE__, (msg)); \
  } while (0)
