/// \file
/// Formatting generated code (`sdfc compile --format`): runs a generated source through
/// clang-format (the library inside libclang-cpp, clang::format::reformat) with sdfc's style. The
/// style changes whitespace only: includes are not sorted, comments not reflowed, string literals
/// not split, no namespace comments added. Without Clang (SDFC_WITH_CLANG=OFF) formatting is
/// unavailable. The code generator's own output (the default) does not depend on Clang.
#pragma once

#include <string>

#include "codegen/Codegen.h"

namespace sdfc {

/// True when this build can format generated code (it has Clang).
bool formatting_available();

/// sdfc's clang-format style (YAML), as clang-format reads it.
const char* generated_code_style();

/// `text` formatted with sdfc's style; `file_name` decides the language (.cpp, .cu, .h). Throws
/// UserError naming `file_name` when formatting is unavailable or clang-format fails.
std::string format_source(const std::string& text, const std::string& file_name);

/// Formats every source and the header of `program` in place (see format_source).
void format_program(GeneratedProgram& program);

}  // namespace sdfc
