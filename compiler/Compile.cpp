#include "compiler/Compile.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>

#include "clang_tools/TaskletCheck.h"
#include "compiler/Output.h"
#include "ir/IrFile.h"
#include "ir/JsonReader.h"
#include "ir/Validate.h"

#ifndef SDFC_VERSION
#define SDFC_VERSION "0.0.0"
#endif
#ifndef SDFC_SOURCE_RUNTIME_DIR
#define SDFC_SOURCE_RUNTIME_DIR ""
#endif

namespace fs = std::filesystem;

namespace sdfc {
namespace {

std::string join_messages(const std::vector<Diagnostic>& ds) {
  std::string s;
  for (auto& d : ds) s += (s.empty() ? "" : "\n") + d.str();
  return s;
}

std::unique_ptr<SDFG> checked(std::unique_ptr<SDFG> sdfg, const std::string& name) {
  // An IR file (sdfc opt) read as a DaCe file would lose its decisions and run its passes again.
  if (sdfg->top_extra.contains("sdfc"))
    throw InvalidInput({Diagnostic{name, "/sdfc", 0, 0, ir_file_refusal("the library (and sdfc run)")}});
  auto ds = validate(*sdfg, name);
  if (!ds.empty()) throw InvalidInput(std::move(ds));
  return sdfg;
}

/// The directory of the binary or shared library this code is linked into.
fs::path own_location() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&runtime_include_dir), &info) && info.dli_fname) {
    std::error_code ec;
    fs::path p = fs::canonical(info.dli_fname, ec);
    if (!ec) return p.parent_path();
  }
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : exe.parent_path();
}

/// The tasklet check with a memory of passed units: a unit that passed once passes again as long as
/// its text, the runtime headers and the Clang plugin are the same (Compile.h). Memory is an empty
/// file `<cache>/checks/<key>`; failing units are never remembered, so their errors always come
/// from Clang. Failing to read or write the memory only costs the parse. A unit not remembered is
/// parsed with the precompiled header of its headers kept in `<cache>/pch/` (TaskletCheck.h).
TaskletCheckResult check_tasklets(const SDFG& sdfg, const CompileOptions& options, const std::string& file,
                                  bool remember) {
  std::string identity = remember ? tasklet_check_identity() : "";
  if (identity.empty()) return check_cpp_tasklets(sdfg, options, file, runtime_include_dir());
  TaskletCheckUnit unit = tasklet_check_unit(sdfg, options);
  TaskletCheckResult passed;
  passed.cpp_tasklets = unit.cpp_tasklets;
  if (!unit.has_code) return passed;
  std::string key = sha256_hex(fmt::format("sdfc {} tasklet check\n{}runtime {} {}\n{}", SDFC_VERSION, identity,
                                           runtime_include_dir(), runtime_hash(), unit.text));
  fs::path marker = fs::path(cache_dir()) / "checks" / key;
  std::error_code ec;
  if (fs::exists(marker, ec)) {
    fs::last_write_time(marker, fs::file_time_type::clock::now(), ec);  // used: kept by the cache bound
    return passed;
  }
  TaskletCheckResult result =
      check_cpp_tasklets(sdfg, options, file, runtime_include_dir(), (fs::path(cache_dir()) / "pch").string());
  if (result.errors.empty() && !result.skipped) {
    fs::create_directories(marker.parent_path(), ec);
    std::ofstream(marker, std::ios::binary);  // an empty file; two processes writing it agree
  }
  return result;
}

}  // namespace

InvalidInput::InvalidInput(std::vector<Diagnostic> diags)
    : std::runtime_error(join_messages(diags)), diags_(std::move(diags)) {}

std::unique_ptr<SDFG> load_sdfg_file(const std::string& path) {
  try {
    return checked(read_sdfg_file(path), path);
  } catch (const UserError& e) {
    throw InvalidInput(e.diagnostics());
  }
}

std::unique_ptr<SDFG> load_sdfg_text(const std::string& text, const std::string& display_name) {
  try {
    return checked(read_sdfg(text, display_name), display_name);
  } catch (const UserError& e) {
    throw InvalidInput(e.diagnostics());
  }
}

GeneratedProgram generate_program(SDFG& sdfg, const CompileOptions& options, const std::string& file,
                                  const PipelineHooks& hooks, bool remember_checks) {
  try {
    run_pipeline(sdfg, options, hooks);
    // The tasklet check reads the program after the passes (explicit connector types, schedules)
    // and writes nothing into it; it is not a pass (clang_tools/TaskletCheck.h).
    auto t0 = std::chrono::steady_clock::now();
    TaskletCheckResult check = check_tasklets(sdfg, options, file, remember_checks);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (hooks.time_passes && hooks.time_to) *hooks.time_to << fmt::format("{:<27} {:9.3f} ms\n", "tasklet-check", ms);
    if (!check.errors.empty()) throw InvalidInput(std::move(check.errors));
    if (check.skipped && hooks.notes_to)
      *hooks.notes_to << fmt::format(
          "{}: note: {} CPP tasklet(s) (and global code) not checked: this sdfc was built without Clang "
          "(SDFC_WITH_CLANG=OFF)\n",
          file, check.cpp_tasklets);
    return generate(sdfg, options, file);
  } catch (const UserError& e) {
    std::vector<Diagnostic> ds = e.diagnostics();
    for (auto& d : ds)
      if (d.file.empty()) d.file = file;  // passes know the JSON pointer, not the file
    throw InvalidInput(std::move(ds));
  }
}

void emit_sources(const GeneratedProgram& program, const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw UserError(Diagnostic{dir, "", 0, 0, "cannot create the source directory: " + ec.message()});
  auto write = [&](const std::string& name, const std::string& text) {
    write_output((fs::path(dir) / name).string(), text);
  };
  for (auto& f : program.files) write(f.name, f.text);
  write(program.name + ".h", program.header);
}

std::string runtime_include_dir() {
  if (const char* env = std::getenv("SDFC_RUNTIME_DIR"); env && *env) return env;
  fs::path here = own_location();
  for (fs::path candidate : {here / ".." / "share" / "sdfc" / "include", here / "share" / "sdfc" / "include"}) {
    std::error_code ec;
    if (fs::exists(candidate / "sdfc" / "program.h", ec)) return fs::canonical(candidate, ec).string();
  }
  return SDFC_SOURCE_RUNTIME_DIR;
}

const std::string& runtime_hash() {
  static std::once_flag once;
  static std::string hash;
  std::call_once(once, [] {
    std::string all;
    fs::path dir = fs::path(runtime_include_dir()) / "sdfc";
    std::error_code ec;
    std::vector<fs::path> files;
    for (auto& e : fs::directory_iterator(dir, ec)) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (auto& f : files) {
      std::ifstream in(f, std::ios::binary);
      all += f.filename().string() + "\n" + std::string(std::istreambuf_iterator<char>(in), {});
    }
    hash = sha256_hex(all);
  });
  return hash;
}

BuildResult build_program(const GeneratedProgram& program, const CompileOptions& options, bool use_cache) {
  BuildRequest req;
  req.program_name = program.name;
  for (auto& f : program.files) req.sources.push_back({f.name, f.text});
  req.sources.push_back({program.name + ".h", program.header});
  req.include_dirs.push_back(runtime_include_dir());
  req.libraries = program.libraries;
  req.prelude_headers = program.prelude_headers;
  req.extra_flags = {"-fvisibility=hidden", "-fvisibility-inlines-hidden"};
  if (options.target == Target::CUDA)
    req.device_flags = {"-arch=" + gpu_arch_or_default(options), "--extended-lambda", "-Xcompiler",
                        "-fopenmp,-fvisibility=hidden,-fvisibility-inlines-hidden,-fno-math-errno"};
  if (options.target == Target::HIP)
    req.device_flags = {"--offload-arch=" + gpu_arch_or_default(options), "-fvisibility=hidden",
                        "-fvisibility-inlines-hidden", "-Wno-unknown-pragmas"};
  // The generated sources are a function of the normalized IR and the options; the key adds the
  // options, sdfc's version and the runtime headers (the build driver adds the compiler identity).
  req.key_material = fmt::format("sdfc {}\nruntime {}\n{}", SDFC_VERSION, runtime_hash(), options_key(options));
  req.use_cache = use_cache;
  return build_library(req);
}

}  // namespace sdfc
