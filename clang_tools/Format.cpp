// Formatting generated code with clang-format (see Format.h).
#include "clang_tools/Format.h"

#ifdef SDFC_CLANG_PLUGIN
// The plugin (libsdfc_clang.so) holds the clang-format half of this file (see TaskletCheck.cpp).
#define generated_code_style plugin_generated_code_style
#define formatting_available plugin_formatting_available
#define format_source plugin_format_source
#define format_program plugin_format_program
#endif
#include "clang_tools/ClangPlugin.h"
#include "ir/Diagnostic.h"

#ifdef SDFC_WITH_CLANG
#include <clang/Basic/SourceManager.h>
#include <clang/Format/Format.h>
#include <clang/Tooling/Core/Replacement.h>
#endif

namespace sdfc {

const char* generated_code_style() {
  // The project's own style (.clang-format), minus every option that edits more than whitespace:
  // sorting includes or using-declarations, reflowing comments, splitting string literals, adding
  // namespace-end comments or trailing commas would change the tokens, and --format must not.
  return R"(BasedOnStyle: Google
Language: Cpp
ColumnLimit: 120
IndentWidth: 2
AllowShortFunctionsOnASingleLine: Inline
AllowShortIfStatementsOnASingleLine: WithoutElse
DerivePointerAlignment: false
PointerAlignment: Left
SortIncludes: Never
SortUsingDeclarations: false
ReflowComments: false
BreakStringLiterals: false
FixNamespaceComments: false
InsertTrailingCommas: None
)";
}

#ifndef SDFC_WITH_CLANG

// libsdfc: clang-format is in the plugin (ClangPlugin.h), loaded when --format is asked for.
bool formatting_available() {
  return clang_plugin() != nullptr;
}

std::string format_source(const std::string& text, const std::string& file_name) {
  std::string why;
  if (const ClangPlugin* plugin = clang_plugin(&why)) return plugin->format(text, file_name);
  throw UserError(Diagnostic{file_name, "", 0, 0,
                             "--format needs Clang, and this sdfc has none (" + why +
                                 "); rebuild with libclang-cpp14-dev and libclang-14-dev installed, or drop --format"});
}

#else

bool formatting_available() {
  return true;
}

std::string format_source(const std::string& text, const std::string& file_name) {
  clang::format::FormatStyle style = clang::format::getGoogleStyle(clang::format::FormatStyle::LK_Cpp);
  if (std::error_code ec = clang::format::parseConfiguration(generated_code_style(), &style))
    SDFC_ASSERT(false, "sdfc's clang-format style does not parse: " + ec.message());
  std::vector<clang::tooling::Range> whole{clang::tooling::Range(0, static_cast<unsigned>(text.size()))};
  clang::tooling::Replacements edits = clang::format::reformat(style, text, whole, file_name);
  llvm::Expected<std::string> formatted = clang::tooling::applyAllReplacements(text, edits);
  if (!formatted) {
    std::string why = llvm::toString(formatted.takeError());
    throw UserError(Diagnostic{file_name, "", 0, 0, "clang-format could not format the generated source: " + why});
  }
  return *formatted;
}

#endif

void format_program(GeneratedProgram& program) {
  for (auto& f : program.files) f.text = format_source(f.text, f.name);
  program.header = format_source(program.header, program.name + ".h");
}

}  // namespace sdfc

#ifdef SDFC_CLANG_PLUGIN
extern "C" __attribute__((visibility("default"))) std::string sdfc_clang_format_source(const std::string& text,
                                                                                       const std::string& file_name) {
  return sdfc::plugin_format_source(text, file_name);
}
#endif
