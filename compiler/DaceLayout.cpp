#include "compiler/DaceLayout.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "compiler/Build.h"
#include "compiler/Compile.h"
#include "compiler/Output.h"
#include "ir/Diagnostic.h"
#include "ir/JsonReader.h"
#include "ir/SDFG.h"

namespace fs = std::filesystem;

namespace sdfc {
namespace {

/// DaCe's `ReloadableDLL` loads this stub with ctypes, then the program through it (a private
/// RTLD_LOCAL handle, so that a rebuilt library can be loaded again in the same process).
constexpr const char* kStubSource = R"(// sdfc's loader stub for DaCe's ReloadableDLL (sdfc compile --dace-layout).
#include <dlfcn.h>
#include <omp.h>

#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#define SDFC_STUB_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

/// DaCe's CompiledSDFG checks `__dace_gpu_last_error(handle)` after each call it makes through
/// `__call__` (GT4Py's when debugging) and raises when it is not 0. sdfc's libraries record a
/// refused call in `__sdfc_last_error(handle)` instead, so `get_symbol` answers that name with one
/// of these checks, bound to the library asked: the library's own GPU error code when it has one,
/// else 1 when the program refused the call. One slot per library: DaCe loads a program again
/// under another name when it is loaded already, so one stub serves several libraries.
///
/// DaCe looks the check up once, and after a failed call unloads the library and loads it again
/// (the same file) before the next call: a slot keeps its file's name when its library is
/// unloaded, and load_library binds it to the library loaded again from that file.
using ErrorCode = int (*)(void*);
using LastError = const char* (*)(void*);
struct Check {
  void* library = nullptr;  // null: unused, or its library unloaded (then `file` is kept)
  std::string file;
  ErrorCode gpu_error = nullptr;   // the library's __dace_gpu_last_error, if any
  LastError last_error = nullptr;  // the library's __sdfc_last_error
};
constexpr int kSlots = 64;
Check checks[kSlots];
std::map<void*, std::string> files;  // the file each loaded library came from
std::mutex checks_mutex;

template <int K>
int check(void* handle) {
  const Check& c = checks[K];
  int code = c.gpu_error ? c.gpu_error(handle) : 0;
  if (code != 0) return code;
  return c.last_error && c.last_error(handle) ? 1 : 0;
}
template <int... K>
const ErrorCode* make_table(std::integer_sequence<int, K...>) {
  static const ErrorCode table[] = {&check<K>...};
  return table;
}
const ErrorCode* const table = make_table(std::make_integer_sequence<int, kSlots>{});

void bind(Check& c, void* library) {
  c.library = library;
  c.gpu_error = reinterpret_cast<ErrorCode>(dlsym(library, "__dace_gpu_last_error"));
  c.last_error = reinterpret_cast<LastError>(dlsym(library, "__sdfc_last_error"));
}

void* error_check(void* library) {
  void* gpu_error = dlsym(library, "__dace_gpu_last_error");
  if (!dlsym(library, "__sdfc_last_error")) return gpu_error;  // not an sdfc library: its own symbol
  std::lock_guard<std::mutex> lock(checks_mutex);
  int unused = -1, dormant = -1;
  for (int k = 0; k < kSlots; ++k) {
    if (checks[k].library == library) return reinterpret_cast<void*>(table[k]);
    if (!checks[k].library && checks[k].file.empty() && unused < 0) unused = k;
    if (!checks[k].library && !checks[k].file.empty() && dormant < 0) dormant = k;
  }
  int k = unused >= 0 ? unused : dormant;
  if (k < 0) return gpu_error;  // 64 libraries loaded through one stub: no check for more
  auto file = files.find(library);
  checks[k].file = file != files.end() ? file->second : std::string();
  bind(checks[k], library);
  return reinterpret_cast<void*>(table[k]);
}

}  // namespace

/// Loads a library; null on error (dlerror() says why).
SDFC_STUB_EXPORT void* load_library(const char* filename) {
  if (!filename) return nullptr;
  void* library = dlopen(filename, RTLD_LOCAL | RTLD_NOW);
  if (!library) return nullptr;
  std::lock_guard<std::mutex> lock(checks_mutex);
  files[library] = filename;
  for (Check& c : checks)
    if (!c.library && c.file == filename) bind(c, library);
  return library;
}

/// 1 when the library is loaded, 0 when not, -1 for a null name.
SDFC_STUB_EXPORT int is_library_loaded(const char* filename) {
  if (!filename) return -1;
  void* handle = dlopen(filename, RTLD_LOCAL | RTLD_NOW | RTLD_NOLOAD);
  if (!handle) return 0;
  dlclose(handle);  // RTLD_NOLOAD still counts a reference
  return 1;
}

/// A symbol of a loaded library; null when absent. `__dace_gpu_last_error` is answered with the
/// check above, so that DaCe raises in the call that a program refused.
SDFC_STUB_EXPORT void* get_symbol(void* library, const char* symbol) {
  if (!library || !symbol) return nullptr;
  if (std::strcmp(symbol, "__dace_gpu_last_error") == 0) return error_check(library);
  return dlsym(library, symbol);
}

/// Unloads a library. OpenMP's runtime is touched first so that it is initialized in this
/// process before a library using it goes away (the programs run OpenMP loops).
SDFC_STUB_EXPORT void unload_library(void* library) {
  if (!library) return;
  {
    std::lock_guard<std::mutex> lock(checks_mutex);
    files.erase(library);
    for (Check& c : checks)
      if (c.library == library) {
        c.library = nullptr;  // dormant until its file is loaded again
        c.gpu_error = nullptr;
        c.last_error = nullptr;
      }
  }
  (void)omp_get_max_threads();
  dlclose(library);
}
)";

std::string read_raw_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError(Diagnostic{path, "", 0, 0, "cannot read the input file to copy it into the DaCe layout"});
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// ---- program.sdfg as DaCe's CompiledSDFG must see it ---------------------------------------------
//
// DaCe's CompiledSDFG asks the library for `__dace_get_external_memory_size_<storage>` and
// `__dace_set_external_memory_<storage>` for the storage of every container of lifetime External
// in the SDFG it is given. The input file says `Default` where sdfc decided the storage, and says
// nothing of the transients that `--transients external` makes External, so program.sdfg names
// the storage and lifetime of every member of the program's workspaces as the library has them.

/// Marks container `name` of the SDFG `sdfg` (its JSON) External in `storage`; false when the SDFG
/// has no such container.
bool mark_external(Json& sdfg, const std::string& name, StorageType storage) {
  Json* arrays = nullptr;
  if (sdfg.is_object() && sdfg.contains("attributes") && sdfg["attributes"].is_object() &&
      sdfg["attributes"].contains("_arrays") && sdfg["attributes"]["_arrays"].is_object())
    arrays = &sdfg["attributes"]["_arrays"];
  if (!arrays || !arrays->contains(name) || !(*arrays)[name].is_object()) return false;
  Json& attributes = (*arrays)[name]["attributes"];
  if (!attributes.is_object()) attributes = Json::object();
  attributes["lifetime"] = "External";
  attributes["storage"] = std::string(to_string(storage));
  return true;
}

/// Calls `fn(node)` on every NestedSDFG node of the SDFG `sdfg` (its JSON), not of nested ones.
template <typename Fn>
void for_each_nested_node(Json& value, Fn&& fn) {
  if (value.is_object() && value.contains("type") && value["type"] == "NestedSDFG") {
    fn(value);
    return;
  }
  if (value.is_structured())
    for (auto& child : value) for_each_nested_node(child, fn);
}

/// A transient that transient-lifetimes lifted out of nested SDFGs is named `<node label>_<name>`
/// one level at a time: marks the nested container it came from; false when none is found.
bool mark_lifted(Json& sdfg, const std::string& name, StorageType storage, int depth = 0) {
  if (depth > 64 || !sdfg.is_object() || !sdfg.contains("nodes")) return false;
  bool found = false;
  for_each_nested_node(sdfg["nodes"], [&](Json& node) {
    if (found || !node.contains("attributes") || !node["attributes"].is_object()) return;
    Json& attributes = node["attributes"];
    const Json* label = node.contains("label") && node["label"].is_string()               ? &node["label"]
                        : attributes.contains("label") && attributes["label"].is_string() ? &attributes["label"]
                                                                                          : nullptr;
    if (!label || !attributes.contains("sdfg")) return;
    std::string prefix = label->get<std::string>() + "_";
    if (name.compare(0, prefix.size(), prefix) != 0) return;
    std::string inner = name.substr(prefix.size());
    found =
        mark_external(attributes["sdfg"], inner, storage) || mark_lifted(attributes["sdfg"], inner, storage, depth + 1);
  });
  return found;
}

/// The input's bytes with the workspaces' members marked (see above); the bytes unchanged when
/// the program has no workspace.
std::string sdfg_for_dace(const std::string& input_file, const std::string& raw, const SDFG& processed) {
  if (processed.workspaces.empty()) return raw;
  Json document = Json::parse(read_file_bytes(input_file), nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded()) return raw;  // read_sdfg parsed it: not reached
  bool changed = false;
  for (const Workspace& ws : processed.workspaces)
    for (const std::string& member : ws.members)
      changed |= mark_external(document, member, ws.storage) || mark_lifted(document, member, ws.storage);
  return changed ? document.dump(1) + "\n" : raw;
}

std::string target_folder(Target t) {
  return to_string(t);
}

}  // namespace

const char* dace_stub_source() {
  return kStubSource;
}

void write_dace_layout(const std::string& dir, const GeneratedProgram& program, const std::string& built_library,
                       const std::string& input_file, const SDFG& processed, const CompileOptions& options,
                       bool use_cache) {
  // Build and read everything first: a failure leaves DIR as it was.
  BuildRequest stub;
  stub.program_name = "dacestub";  // one cache entry serves every program
  stub.sources.push_back({"dacestub.cpp", kStubSource});
  stub.extra_flags = {"-fvisibility=hidden"};
  stub.key_material = "sdfc dace loader stub\n";
  stub.use_cache = use_cache;
  BuildResult built_stub = build_library(stub);
  std::string raw = read_raw_bytes(input_file);
  std::string sdfg_bytes = sdfg_for_dace(input_file, raw, processed);
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
  OutputOptions compressed;
  compressed.gzip = gz && sdfg_bytes != raw;  // a marked copy of a .sdfgz input is compressed again
  write_output((root / (gz ? "program.sdfgz" : "program.sdfg")).string(), sdfg_bytes, compressed);
  for (auto& f : program.files) write_output((root / "src" / target_folder(options.target) / f.name).string(), f.text);
  write_output((root / "include" / (program.name + ".h")).string(), program.header);
  install_library(built_stub.library_path, (root / "build" / ("libdacestub_" + program.name + ".so")).string());
  install_library(built_library, (root / "build" / ("lib" + program.name + ".so")).string());
}

}  // namespace sdfc
