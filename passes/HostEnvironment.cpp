#include "passes/HostEnvironment.h"

#include <regex>

#include "ir/Walk.h"

namespace sdfc {
namespace {

bool is_complex(DType t) {
  return t == DType::Complex64 || t == DType::Complex128;
}

bool cpp_code(const CodeBlock& c) {
  return c.language == Language::CPP && c.code.find_first_not_of(" \t\r\n") != std::string::npos;
}

bool cpp_code(const std::optional<CodeBlock>& c) {
  return c && cpp_code(*c);
}

/// A Python tasklet that may compute with complex numbers whatever its connectors' types are.
bool mentions_complex(const CodeBlock& c) {
  static const std::regex imaginary(R"((^|[^A-Za-z0-9_.])([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?[jJ]\b)");
  return c.language == Language::Python &&
         (c.code.find("complex") != std::string::npos || std::regex_search(c.code, imaginary));
}

/// Whether this SDFG (not its nested SDFGs) needs DaCe's whole C++ environment.
bool needs_dace_environment(const SDFG& sdfg) {
  if (cpp_code(sdfg.global_code) || cpp_code(sdfg.init_code) || cpp_code(sdfg.exit_code)) return true;
  for (const auto* codes : {&sdfg.target_global_code, &sdfg.target_init_code, &sdfg.target_exit_code})
    for (const auto& [target, code] : *codes)
      if (cpp_code(code)) return true;
  for (const auto& [name, desc] : sdfg.arrays)
    if (is_complex(desc.dtype)) return true;
  for (const auto& [name, type] : sdfg.symbols)
    if (is_complex(type)) return true;
  bool found = false;
  walk::for_each_block(sdfg.root, "", [&](const Block& b, const std::string&) {
    if (cpp_code(b.init_statement) || cpp_code(b.update_statement) || cpp_code(b.loop_condition)) found = true;
    for (const auto& branch : b.branches)
      if (cpp_code(branch.first)) found = true;
    for (const InterstateEdge& e : b.cf_edges)
      if (cpp_code(e.condition)) found = true;
    for (const auto& n : b.nodes) {
      if (cpp_code(n->code) || cpp_code(n->code_global) || mentions_complex(n->code)) found = true;
      for (const auto* conns : {&n->in_connectors, &n->out_connectors})
        for (const Connector& c : *conns)
          if (c.dtype && is_complex(*c.dtype)) found = true;
    }
  });
  return found;
}

}  // namespace

void choose_host_environment(SDFG& root, const CompileOptions&) {
  bool full = false;
  walk::for_each_sdfg(static_cast<const SDFG&>(root), "", [&](const SDFG& s, const std::string&) {
    if (!full && needs_dace_environment(s)) full = true;
  });
  root.dace_environment = full;
}

}  // namespace sdfc
