#include "compiler/DaceLayout.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "compiler/Build.h"
#include "compiler/Compile.h"
#include "compiler/Output.h"
#include "ir/Diagnostic.h"

namespace fs = std::filesystem;

namespace sdfc {
namespace {

/// DaCe's `ReloadableDLL` loads this stub with ctypes, then the program through it (a private
/// RTLD_LOCAL handle, so that a rebuilt library can be loaded again in the same process).
constexpr const char* kStubSource = R"(// sdfc's loader stub for DaCe's ReloadableDLL (sdfc compile --dace-layout).
#include <dlfcn.h>
#include <omp.h>

#define SDFC_STUB_EXPORT extern "C" __attribute__((visibility("default")))

/// Loads a library; null on error (dlerror() says why).
SDFC_STUB_EXPORT void* load_library(const char* filename) {
  if (!filename) return nullptr;
  return dlopen(filename, RTLD_LOCAL | RTLD_NOW);
}

/// 1 when the library is loaded, 0 when not, -1 for a null name.
SDFC_STUB_EXPORT int is_library_loaded(const char* filename) {
  if (!filename) return -1;
  void* handle = dlopen(filename, RTLD_LOCAL | RTLD_NOW | RTLD_NOLOAD);
  if (!handle) return 0;
  dlclose(handle);  // RTLD_NOLOAD still counts a reference
  return 1;
}

/// A symbol of a loaded library; null when absent.
SDFC_STUB_EXPORT void* get_symbol(void* library, const char* symbol) {
  if (!library || !symbol) return nullptr;
  return dlsym(library, symbol);
}

/// Unloads a library. OpenMP's runtime is touched first so that it is initialized in this
/// process before a library using it goes away (the programs run OpenMP loops).
SDFC_STUB_EXPORT void unload_library(void* library) {
  if (!library) return;
  (void)omp_get_max_threads();
  dlclose(library);
}
)";

std::string read_file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError(Diagnostic{path, "", 0, 0, "cannot read the input file to copy it into the DaCe layout"});
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string target_folder(Target t) {
  return to_string(t);
}

}  // namespace

const char* dace_stub_source() {
  return kStubSource;
}

void write_dace_layout(const std::string& dir, const GeneratedProgram& program, const std::string& built_library,
                       const std::string& input_file, const CompileOptions& options, bool use_cache) {
  // Build and read everything first: a failure leaves DIR as it was.
  BuildRequest stub;
  stub.program_name = "dacestub";  // one cache entry serves every program
  stub.sources.push_back({"dacestub.cpp", kStubSource});
  stub.extra_flags = {"-fvisibility=hidden"};
  stub.key_material = "sdfc dace loader stub\n";
  stub.use_cache = use_cache;
  BuildResult built_stub = build_library(stub);
  std::string sdfg_bytes = read_file_bytes(input_file);
  bool gz = input_file.size() >= 6 && input_file.compare(input_file.size() - 6, 6, ".sdfgz") == 0;

  fs::path root(dir);
  for (const fs::path& d : {root, root / "build", root / "include", root / "src" / target_folder(options.target)}) {
    std::error_code ec;
    fs::create_directories(d, ec);
    if (ec || !fs::is_directory(d))
      throw UserError(Diagnostic{d.string(), "", 0, 0,
                                 "cannot create the directory of the DaCe layout: " +
                                     (ec ? ec.message() : std::string("it exists and is not a directory"))});
  }
  write_output((root / "FOLDER_MODE").string(), "development\n");
  // DaCe's loader prefers program.sdfgz over program.sdfg: the other form, left from an earlier
  // layout or DaCe build, would be read instead of this program.
  fs::path stale = root / (gz ? "program.sdfg" : "program.sdfgz");
  std::error_code ec;
  if (fs::is_regular_file(fs::symlink_status(stale, ec)) && !fs::remove(stale, ec))
    throw UserError(Diagnostic{stale.string(), "", 0, 0, "cannot remove the stale SDFG file: " + ec.message()});
  write_output((root / (gz ? "program.sdfgz" : "program.sdfg")).string(), sdfg_bytes);
  for (auto& f : program.files) write_output((root / "src" / target_folder(options.target) / f.name).string(), f.text);
  write_output((root / "include" / (program.name + ".h")).string(), program.header);
  install_library(built_stub.library_path, (root / "build" / ("libdacestub_" + program.name + ".so")).string());
  install_library(built_library, (root / "build" / ("lib" + program.name + ".so")).string());
}

}  // namespace sdfc
