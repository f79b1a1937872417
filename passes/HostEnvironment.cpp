#include "passes/HostEnvironment.h"

#include <regex>
#include <set>

#include "ir/Walk.h"
#include "lang/CppEnvironment.h"

namespace sdfc {
namespace {

bool is_complex(DType t) {
  return t == DType::Complex64 || t == DType::Complex128;
}

/// A Python tasklet that may compute with complex numbers whatever its connectors' types are.
bool mentions_complex(const CodeBlock& c) {
  static const std::regex imaginary(R"((^|[^A-Za-z0-9_.])([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?[jJ]\b)");
  return c.language == Language::Python &&
         (c.code.find("complex") != std::string::npos || std::regex_search(c.code, imaginary));
}

/// What the program needs beyond the core headers.
struct Needs {
  std::set<std::string> headers;
  bool whole = false;  ///< C++ code that names what sdfc cannot place

  void cpp(const CodeBlock& c) {
    if (whole || c.language != Language::CPP || c.code.find_first_not_of(" \t\r\n") == std::string::npos) return;
    if (auto h = cpp_code_std_includes(c.code))
      headers.insert(h->begin(), h->end());
    else
      whole = true;
  }
  void cpp(const std::optional<CodeBlock>& c) {
    if (c) cpp(*c);
  }
  void type(DType t) {
    if (is_complex(t)) headers.insert("<complex>");
  }

  void sdfg(const SDFG& s) {
    cpp(s.global_code);
    cpp(s.init_code);
    cpp(s.exit_code);
    for (const auto* codes : {&s.target_global_code, &s.target_init_code, &s.target_exit_code})
      for (const auto& [target, code] : *codes) cpp(code);
    for (const auto& [name, desc] : s.arrays) type(desc.dtype);
    for (const auto& [name, t] : s.symbols) type(t);
    walk::for_each_block(s.root, "", [&](const Block& b, const std::string&) {
      cpp(b.init_statement);
      cpp(b.update_statement);
      cpp(b.loop_condition);
      for (const auto& branch : b.branches) cpp(branch.first);
      for (const InterstateEdge& e : b.cf_edges) cpp(e.condition);
      for (const auto& n : b.nodes) {
        cpp(n->code);
        cpp(n->code_global);
        if (mentions_complex(n->code)) headers.insert("<complex>");
        for (const auto* conns : {&n->in_connectors, &n->out_connectors})
          for (const Connector& c : *conns)
            if (c.dtype) type(*c.dtype);
      }
    });
  }
};

}  // namespace

void choose_host_environment(SDFG& root, const CompileOptions&) {
  Needs needs;
  walk::for_each_sdfg(static_cast<const SDFG&>(root), "", [&](const SDFG& s, const std::string&) { needs.sdfg(s); });
  if (needs.whole) {
    root.std_includes = generated_std_includes();
    return;
  }
  std::vector<std::string> headers = core_std_includes();
  headers.insert(headers.end(), needs.headers.begin(), needs.headers.end());
  root.std_includes = in_include_order(headers);
}

}  // namespace sdfc
