#include "clang_tools/ClangPlugin.h"

#include <dlfcn.h>

#include <filesystem>
#include <mutex>

namespace sdfc {

std::string clang_plugin_path() {
#ifndef SDFC_HAVE_CLANG_PLUGIN
  return "";
#else
  Dl_info info{};
  std::string dir;
  if (dladdr(reinterpret_cast<void*>(&clang_plugin_path), &info) && info.dli_fname)
    dir = std::filesystem::path(info.dli_fname).parent_path().string();
  return (dir.empty() ? std::string() : dir + "/") + "libsdfc_clang.so";
#endif
}

const ClangPlugin* clang_plugin(std::string* why) {
#ifndef SDFC_HAVE_CLANG_PLUGIN
  if (why) *why = "this sdfc was built without Clang (SDFC_WITH_CLANG=OFF)";
  return nullptr;
#else
  static std::once_flag once;
  static ClangPlugin plugin;
  static std::string failure;
  std::call_once(once, [] {
    std::string path = clang_plugin_path();
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      failure = std::string("cannot load the Clang plugin: ") + dlerror();
      return;
    }
    plugin.check = reinterpret_cast<decltype(plugin.check)>(dlsym(handle, "sdfc_clang_check_cpp_tasklets"));
    plugin.format = reinterpret_cast<decltype(plugin.format)>(dlsym(handle, "sdfc_clang_format_source"));
    if (!plugin.check || !plugin.format) failure = path + " does not export the sdfc_clang_ entry points";
  });
  if (!failure.empty()) {
    if (why) *why = failure;
    return nullptr;
  }
  return &plugin;
#endif
}

}  // namespace sdfc
