#include "lang/CodeWriter.h"

#include <fmt/format.h>

#include <cctype>
#include <set>

namespace sdfc {

namespace {

/// A comment line that stays one comment whatever the names from the input file in it hold:
/// control characters (a newline would end the comment and make the rest code) are written as
/// C escapes, and a final backslash (which would continue the comment onto the next line) gets a
/// '.' after it.
std::string safe_comment(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    auto u = static_cast<unsigned char>(ch);
    if (ch == '\n')
      out += "\\n";
    else if (ch == '\r')
      out += "\\r";
    else if (ch == '\t')
      out += "\\t";
    else if (u < 0x20 || u == 0x7f)
      out += fmt::format("\\x{:02x}", u);
    else
      out += ch;
  }
  if (!out.empty() && out.back() == '\\') out += '.';
  return out;
}

}  // namespace

void CodeWriter::line(const std::string& text) {
  if (!text.empty()) out_.append(static_cast<std::size_t>(2 * indent_), ' ');
  out_ += text.rfind("//", 0) == 0 ? safe_comment(text) : text;
  out_ += '\n';
}

void CodeWriter::open(const std::string& text) {
  line(text.empty() ? "{" : text + " {");
  ++indent_;
}

void CodeWriter::close(const std::string& suffix) {
  --indent_;
  line("}" + suffix);
}

void CodeWriter::lines(const std::string& text) {
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string l = text.substr(start, end - start);
    if (!l.empty() || end < text.size()) line(l);
    start = end + 1;
  }
}

void CodeWriter::raw(const std::string& text) {
  out_ += text;
  if (!text.empty() && text.back() != '\n') out_ += '\n';
}

namespace {
const std::set<std::string>& keywords() {
  static const std::set<std::string> k = {
      "alignas",   "alignof",  "and",      "and_eq",    "asm",          "auto",          "bitand",
      "bitor",     "bool",     "break",    "case",      "catch",        "char",          "char16_t",
      "char32_t",  "class",    "compl",    "const",     "constexpr",    "const_cast",    "continue",
      "decltype",  "default",  "delete",   "do",        "double",       "dynamic_cast",  "else",
      "enum",      "explicit", "export",   "extern",    "false",        "float",         "for",
      "friend",    "goto",     "if",       "inline",    "int",          "long",          "mutable",
      "namespace", "new",      "noexcept", "not",       "not_eq",       "nullptr",       "operator",
      "or",        "or_eq",    "private",  "protected", "public",       "register",      "reinterpret_cast",
      "return",    "short",    "signed",   "sizeof",    "static",       "static_assert", "static_cast",
      "struct",    "switch",   "template", "this",      "thread_local", "throw",         "true",
      "try",       "typedef",  "typeid",   "typename",  "union",        "unsigned",      "using",
      "virtual",   "void",     "volatile", "wchar_t",   "while",        "xor",           "xor_eq",
      "main",      "std",      "sdfc",     "dace",      "__state",      "NULL",          "errno"};
  return k;
}
}  // namespace

std::string ident(const std::string& name) {
  std::string s;
  for (char c : name) s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) s = "_" + s;
  if (keywords().count(s)) s += "_";
  return s;
}

bool is_identifier(const std::string& name) {
  return !name.empty() && ident(name) == name;
}

std::string c_string(const std::string& text) {
  std::string s = "\"";
  for (unsigned char c : text) {
    switch (c) {
      case '"':
        s += "\\\"";
        break;
      case '\\':
        s += "\\\\";
        break;
      case '\n':
        s += "\\n";
        break;
      case '\t':
        s += "\\t";
        break;
      default:
        if (c < 0x20 || c >= 0x7f)
          s += fmt::format("\\{:03o}", c);
        else
          s += static_cast<char>(c);
    }
  }
  return s + "\"";
}

}  // namespace sdfc
