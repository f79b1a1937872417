/// \file
/// The printer base every back end writes through: indentation, blocks, and identifiers made safe
/// from names in the input file.
#pragma once

#include <string>

namespace sdfc {

/// Accumulates lines of code with consistent two-space indentation.
class CodeWriter {
 public:
  explicit CodeWriter(int indent = 0) : indent_(indent) {}
  /// Writes one line at the current indentation (an empty string writes an empty line). A line
  /// starting with "//" is a comment that stays one: newlines and other control characters in it
  /// are escaped, and a final backslash cannot continue it.
  void line(const std::string& text);
  /// Writes `text {` and indents.
  void open(const std::string& text);
  /// Dedents and writes `}` followed by `suffix`.
  void close(const std::string& suffix = "");
  /// Writes several lines (split at '\n'), each indented.
  void lines(const std::string& text);
  /// Writes text verbatim (no indentation), e.g. user code blocks.
  void raw(const std::string& text);
  const std::string& str() const { return out_; }
  int indent() const { return indent_; }

 private:
  std::string out_;
  int indent_ = 0;
};

/// A C/C++ identifier for a name from the input file: characters outside [A-Za-z0-9_] become
/// '_', a leading digit gets a '_' prefix, and C++ keywords get a '_' suffix.
std::string ident(const std::string& name);

/// True when `name` is already a valid identifier that ident() leaves unchanged.
bool is_identifier(const std::string& name);

/// A C string literal (with quotes) for arbitrary text.
std::string c_string(const std::string& text);

}  // namespace sdfc
