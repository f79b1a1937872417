#include "ir/Diagnostic.h"

#include <fmt/format.h>

namespace sdfc {

std::string Diagnostic::str() const {
  const std::string& f = file.empty() ? std::string("<input>") : file;
  if (line > 0 && !pointer.empty()) return fmt::format("{}: {}:{}:{}: error: {}", f, pointer, line, column, message);
  if (line > 0) return fmt::format("{}:{}:{}: error: {}", f, line, column, message);
  return fmt::format("{}: {}: error: {}", f, pointer.empty() ? "/" : pointer, message);
}

UserError::UserError(Diagnostic d) : std::runtime_error(d.str()), diag_(std::move(d)) {}

std::string pointer_token(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

void internal_error(const char* file, int line, const std::string& what) {
  throw std::logic_error(fmt::format(
      "internal error at {}:{}: {} (this is an sdfc bug; please report it with the input file)", file, line, what));
}

}  // namespace sdfc
