/// \file
/// The Clang-based parts (the CPP tasklet check, --format) live in a plugin, `libsdfc_clang.so`,
/// next to `libsdfc.so`, loaded the first time a program has CPP tasklets or --format is asked
/// for: libclang-cpp and libLLVM cost about 80 ms to load, which every sdfc process (and every
/// cached compile) would otherwise pay. Builds without Clang have no plugin.
#pragma once

#include <string>

#include "clang_tools/TaskletCheck.h"

namespace sdfc {

struct ClangPlugin {
  TaskletCheckResult (*check)(const SDFG&, const CompileOptions&, const std::string&, const std::string&,
                              const std::string&) = nullptr;
  std::string (*format)(const std::string&, const std::string&) = nullptr;
};

/// Where the plugin is (next to the library holding this code), without loading it; "" in a build
/// without Clang.
std::string clang_plugin_path();

/// The loaded plugin, or nullptr (a build without Clang, or the plugin cannot be loaded: then
/// `why` says why, for the note the driver prints).
const ClangPlugin* clang_plugin(std::string* why = nullptr);

}  // namespace sdfc
