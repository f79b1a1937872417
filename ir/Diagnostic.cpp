#include "ir/Diagnostic.h"

#include <fmt/format.h>

namespace sdfc {

std::string Diagnostic::str() const {
  const std::string& f = file.empty() ? std::string("<input>") : file;
  if (line > 0 && !pointer.empty()) return fmt::format("{}: {}:{}:{}: error: {}", f, pointer, line, column, message);
  if (line > 0) return fmt::format("{}:{}:{}: error: {}", f, line, column, message);
  return fmt::format("{}: {}: error: {}", f, pointer.empty() ? "/" : pointer, message);
}

UserError::UserError(Diagnostic d) : std::runtime_error(d.str()), diags_{std::move(d)} {}

namespace {
std::string joined(const std::vector<Diagnostic>& ds) {
  std::string s;
  for (auto& d : ds) s += (s.empty() ? "" : "\n") + d.str();
  return s;
}
}  // namespace

UserError::UserError(std::vector<Diagnostic> ds) : std::runtime_error(joined(ds)), diags_(std::move(ds)) {
  if (diags_.empty()) diags_.push_back(Diagnostic{"", "", 0, 0, "invalid input"});
}

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

void throw_at(const std::string& file, std::string message) {
  throw UserError(Diagnostic{file, "", 0, 0, std::move(message)});
}

void internal_error(const char* file, int line, const std::string& what) {
  throw std::logic_error(fmt::format(
      "internal error at {}:{}: {} (this is an sdfc bug; please report it with the input file)", file, line, what));
}

}  // namespace sdfc
