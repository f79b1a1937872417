#include "compiler/Build.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <regex>
#include <system_error>

#include "compiler/Output.h"
#include "ir/Diagnostic.h"

namespace sdfc {

namespace fs = std::filesystem;
using namespace cache;

namespace {

// Bump whenever the compile lines or the cache layout change: old entries then simply stop matching.
constexpr const char* kCacheFormat = "sdfc-build-cache-v1";
constexpr size_t kErrorOutputLines = 20;

// ---- small file-system and process helpers ------------------------------------------------------

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// A file name sdfc generated: no directory part, nothing a shell or the compiler could misread.
bool is_plain_name(const std::string& s) {
  if (s.empty() || s == "." || s == ".." || s[0] == '-') return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
           c == '-';
  });
}

// ---- the cache directory ------------------------------------------------------------------------

// ---- compiling ----------------------------------------------------------------------------------

enum class SourceKind { Host, Cuda, Hip, Other };

SourceKind kind_of(const std::string& name) {
  if (ends_with(name, ".hip.cpp")) return SourceKind::Hip;
  if (ends_with(name, ".cpp")) return SourceKind::Host;
  if (ends_with(name, ".cu")) return SourceKind::Cuda;
  return SourceKind::Other;
}

// A device compiler: $`env_var`, else `default_name` in PATH.
std::string device_compiler(const char* env_var, const char* default_name, const char* what) {
  std::string name = getenv_or_empty(env_var);
  bool from_env = !name.empty();
  if (!from_env) name = default_name;
  std::string path = resolve_program(name);
  // The toolkits' usual homes, for machines whose PATH does not name them.
  if (path.empty() && !from_env) {
    for (const char* dir : {"/usr/local/cuda/bin/", "/opt/rocm/bin/", "/usr/bin/"}) {
      std::string candidate = std::string(dir) + default_name;
      if (::access(candidate.c_str(), X_OK) == 0) {
        path = candidate;
        break;
      }
    }
  }
  if (path.empty())
    throw_at(name, fmt::format("cannot find the {} compiler{}; set {} to its path", what,
                               from_env ? fmt::format(" named by {}", env_var) : " in PATH", env_var));
  return path;
}

[[noreturn]] void throw_cannot_start(const std::string& compiler, const std::string& why) {
  throw_at(compiler, fmt::format("cannot run the compiler ({}); set SDFC_CXX (host), SDFC_NVCC or SDFC_HIPCC to the "
                                 "path of a working compiler",
                                 why));
}

// Path and `--version` output: what makes a compiler produce different code. Memoized, because the
// cache key needs it on every build, and running the compiler costs milliseconds.
std::string compiler_identity(const std::string& compiler) {
  static std::mutex mutex;
  static std::map<std::string, std::string> memo;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = memo.find(compiler);
  if (it != memo.end()) return it->second;
  ProcessResult r = run_compiler({compiler, "--version"});
  if (r.status == -1) throw_cannot_start(compiler, r.output);
  return memo[compiler] = compiler + "\n" + r.output;
}

// Everything needed to run the compiles, decided before the cache key (which depends on it).
struct Plan {
  std::string cxx, nvcc, hipcc;               // absolute paths; device ones only when needed
  std::vector<std::string> include_flags;     // -I<absolute dir>
  std::vector<std::string> host, cuda, hip;   // source file names by compiler
  std::vector<std::string> compilers_in_use;  // for the cache key
};

Plan make_plan(const BuildRequest& req) {
  SDFC_ASSERT(is_plain_name(req.program_name), "unsanitized program name '" + req.program_name + "'");
  Plan plan;
  std::vector<std::string> seen;
  for (const SourceFile& s : req.sources) {
    SDFC_ASSERT(is_plain_name(s.name), "unsanitized generated file name '" + s.name + "'");
    SDFC_ASSERT(std::find(seen.begin(), seen.end(), s.name) == seen.end(), "two generated files named " + s.name);
    seen.push_back(s.name);
    switch (kind_of(s.name)) {
      case SourceKind::Host:
        plan.host.push_back(s.name);
        break;
      case SourceKind::Cuda:
        plan.cuda.push_back(s.name);
        break;
      case SourceKind::Hip:
        plan.hip.push_back(s.name);
        break;
      case SourceKind::Other:
        break;
    }
  }
  SDFC_ASSERT(!plan.host.empty() || !plan.cuda.empty() || !plan.hip.empty(),
              "build request for '" + req.program_name + "' has no source to compile");
  plan.cxx = host_compiler();
  plan.compilers_in_use.push_back(plan.cxx);
  if (!plan.cuda.empty()) {
    plan.nvcc = device_compiler("SDFC_NVCC", "nvcc", "CUDA");
    plan.compilers_in_use.push_back(plan.nvcc);
  }
  if (!plan.hip.empty()) {
    plan.hipcc = device_compiler("SDFC_HIPCC", "hipcc", "HIP");
    plan.compilers_in_use.push_back(plan.hipcc);
  }
  for (const std::string& dir : req.include_dirs) plan.include_flags.push_back("-I" + fs::absolute(dir).string());
  return plan;
}

std::string cache_key(const BuildRequest& req, const Plan& plan) {
  Sha256 h;
  // Each field is length-prefixed, so that no two different requests serialize alike.
  auto field = [&h](std::string_view tag, std::string_view value) {
    h.update(fmt::format("{} {}\n", tag, value.size()));
    h.update(value);
    h.update("\n");
  };
  field("format", kCacheFormat);
  field("program", req.program_name);
  field("key-material", req.key_material);
  for (const SourceFile& s : req.sources) {
    field("source-name", s.name);
    field("source-text", s.text);
  }
  for (const std::string& f : plan.include_flags) field("include", f);
  for (const std::string& f : req.extra_flags) field("flag", f);
  for (const std::string& f : req.device_flags) field("device-flag", f);
  for (const std::string& c : plan.compilers_in_use) field("compiler", compiler_identity(c));
  return h.hex_digest();
}

// Where a device compiler's toolkit may be: where the compiler lives (<toolkit>/bin/<compiler>,
// also after resolving links), then the toolkit's usual homes: the compiler found in PATH may be a
// wrapper script elsewhere (`/usr/local/bin/nvcc`).
std::vector<std::string> toolkit_roots(const std::string& compiler, const std::vector<std::string>& homes) {
  std::vector<std::string> roots = {fs::path(compiler).parent_path().parent_path().string()};
  std::error_code ec;
  fs::path real = fs::canonical(compiler, ec);
  if (!ec) roots.push_back(real.parent_path().parent_path().string());
  roots.insert(roots.end(), homes.begin(), homes.end());
  return roots;
}

// The runtime library of a device compiler's toolkit (toolkit_roots). With no toolkit directory
// holding the library, it is left to the linker's default search (Debian's packages install it
// there).
std::vector<std::string> runtime_link_flags(const std::string& compiler, std::vector<std::string> homes,
                                            const char* lib) {
  std::error_code ec;
  std::string file = std::string("lib") + lib + ".so";
  for (const std::string& root : toolkit_roots(compiler, homes)) {
    if (root.empty()) continue;
    for (const char* libdir : {"lib64", "lib", "targets/x86_64-linux/lib"}) {
      fs::path dir = fs::path(root) / libdir;
      if (!fs::exists(dir / file, ec)) continue;
      return {"-L" + dir.string(), "-Wl,-rpath," + dir.string(), std::string("-l") + lib};
    }
  }
  return {std::string("-l") + lib};
}

// The include folder of a device compiler's toolkit (found as runtime_link_flags finds its
// library), for host sources that include the toolkit's runtime header: `-I<dir>`, or nothing.
std::vector<std::string> toolkit_include_flags(const std::string& compiler, std::vector<std::string> homes,
                                               const char* header) {
  std::error_code ec;
  for (const std::string& root : toolkit_roots(compiler, homes)) {
    if (root.empty()) continue;
    for (const char* dir : {"include", "targets/x86_64-linux/include"}) {
      fs::path folder = fs::path(root) / dir;
      if (!fs::exists(folder / header, ec)) continue;
      // a toolkit installed into the system's folders (Debian's nvcc in /usr/bin): the compiler
      // searches /usr/include itself, and -I of a system folder breaks the standard library's
      // #include_next
      if (folder == "/usr/include" || folder == "/usr/local/include") return {};
      return {"-I" + folder.string()};
    }
  }
  return {};
}

std::vector<std::string> toolkit_homes(std::initializer_list<const char*> env_vars, const char* fallback) {
  std::vector<std::string> homes;
  for (const char* var : env_vars)
    if (std::string v = getenv_or_empty(var); !v.empty()) homes.push_back(v);
  homes.push_back(fallback);
  return homes;
}

// One compiler run that failed.
struct StepFailure {
  std::vector<std::string> argv;
  ProcessResult result;
};

std::string command_line(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& a : argv) out += (out.empty() ? "" : " ") + a;
  return out;
}

// ---- the precompiled prelude of host sources ------------------------------------------------------
// Every generated host source starts with the same standard headers (BuildRequest::prelude_headers:
// the program's C++ environment and what sdfc's runtime headers include, lang/CppEnvironment.h);
// parsing them is about half of a small program's compile. They are precompiled once per header
// set, compiler, flags and runtime headers into <cache>/pch/<key>/ (made in a private directory
// and published with one rename, so parallel compiles share it and never see a half-written one),
// and each host compile starts with `-include <that>/sdfc_prelude.h`: the compiler uses
// sdfc_prelude.h.gch beside it, or reads the header itself where it cannot (a changed flag). Only
// standard headers: sdfc's own headers react to macros the generated file defines before including
// them (SDFC_REPORT_REFUSALS, SDFC_NO_COMPLEX), so they are read where the file includes them, and
// the prelude never changes what the program means. $SDFC_NO_PCH=1 turns it off.
constexpr const char* kPreludeName = "sdfc_prelude.h";

std::string prelude_text(const std::vector<std::string>& headers) {
  std::string text = "// sdfc: the standard headers generated host sources include, precompiled once.\n";
  for (const std::string& h : headers) text += "#include " + h + "\n";
  return text;
}

// The prelude header to -include (its .gch beside it), or nullopt: turned off, no cache, or the
// compiler cannot precompile it (remembered in the entry, so that it is not tried again).
std::optional<std::string> precompiled_prelude(const Plan& plan, const BuildRequest& req,
                                               const std::vector<std::string>& flags) {
  if (getenv_or_empty("SDFC_NO_PCH") == "1" || req.prelude_headers.empty()) return std::nullopt;
  Sha256 h;
  auto field = [&h](std::string_view tag, std::string_view value) {
    h.update(fmt::format("{} {}\n", tag, value.size()));
    h.update(value);
  };
  field("format", "sdfc-prelude-v2");
  field("compiler", compiler_identity(plan.cxx));
  for (const std::string& f : flags) field("flag", f);
  std::string text = prelude_text(req.prelude_headers);
  field("text", text);
  // The runtime headers the prelude reads (their contents: a rebuilt sdfc may change them in place).
  for (const std::string& flag : plan.include_flags) {
    std::error_code ec;
    std::vector<fs::path> headers;
    for (const auto& e : fs::directory_iterator(fs::path(flag.substr(2)) / "sdfc", ec))
      if (e.path().extension() == ".h") headers.push_back(e.path());
    std::sort(headers.begin(), headers.end());
    for (const fs::path& p : headers) {
      std::ifstream in(p, std::ios::binary);
      field("header", p.string());
      field("content", std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()));
    }
  }
  fs::path root;
  try {
    root = fs::path(ensure_cache_dir()) / "pch";
  } catch (const UserError&) {
    return std::nullopt;  // no cache: compile without (the build itself reports an unusable cache)
  }
  std::error_code ec;
  fs::create_directories(root, ec);
  fs::path entry = root / h.hex_digest();
  EntryLock lock(root.parent_path(), "pch-" + entry.filename().string());  // made once, however many compile
  auto usable = [&]() -> std::optional<std::string> {
    if (fs::exists(entry / (std::string(kPreludeName) + ".gch"))) return (entry / kPreludeName).string();
    return std::nullopt;
  };
  if (fs::exists(entry)) return usable();
  std::string tmp = make_temp_dir((root / ("tmp-" + entry.filename().string() + "-")).string());
  if (tmp.empty()) return std::nullopt;
  write_file(fs::path(tmp) / kPreludeName, text);
  std::vector<std::string> argv = {plan.cxx};
  argv.insert(argv.end(), flags.begin(), flags.end());
  for (const char* a : {"-x", "c++-header", kPreludeName, "-o"}) argv.push_back(a);
  argv.push_back(std::string(kPreludeName) + ".gch");
  ProcessResult r = run_compiler(argv, tmp);
  if (r.status != 0) {  // an entry without the .gch: remembered as not possible
    fs::remove(fs::path(tmp) / (std::string(kPreludeName) + ".gch"), ec);
    write_file(fs::path(tmp) / "failed", r.output);
  }
  if (::rename(tmp.c_str(), entry.c_str()) != 0) fs::remove_all(tmp, ec);  // another process was first
  return usable();
}

// ---- the host link's linker ---------------------------------------------------------------------
// A generated program's link took 0.16 s with GNU ld and 0.06 s with gold (GT4Py's programs, 2
// cores; a third of what remained of a small program's build). Host links use gold where the
// compiler driver can (-fuse-ld=gold links a shared library), probed once per compiler and
// remembered in <cache>/linkers/<hash of its identity> ("gold" or "default"); without a cache, or
// with $SDFC_LINKER=default, the driver's own linker. The linker does not change what the program
// means, so it is not part of the cache key.
std::vector<std::string> linker_flags(const Plan& plan) {
  std::string choice = getenv_or_empty("SDFC_LINKER");
  if (choice == "default") return {};
  fs::path memo;
  try {
    memo = fs::path(ensure_cache_dir()) / "linkers" / sha256_hex(compiler_identity(plan.cxx));
  } catch (const UserError&) {
    return {};
  }
  const std::vector<std::string> gold = {"-fuse-ld=gold"};
  std::error_code ec;
  if (fs::exists(memo, ec)) {
    std::ifstream in(memo);
    std::string remembered;
    std::getline(in, remembered);
    return remembered == "gold" ? gold : std::vector<std::string>{};
  }
  fs::create_directories(memo.parent_path(), ec);
  std::string tmp = make_temp_dir((memo.parent_path() / "tmp-probe-").string());
  if (tmp.empty()) return {};
  write_file(fs::path(tmp) / "probe.cpp", "extern \"C\" int sdfc_probe() { return 1; }\n");
  ProcessResult r =
      run_compiler({plan.cxx, "-shared", "-fPIC", "-fuse-ld=gold", "probe.cpp", "-o", "libprobe.so"}, tmp);
  bool links = r.status == 0 && fs::exists(fs::path(tmp) / "libprobe.so", ec);
  write_file(fs::path(tmp) / "choice", links ? "gold\n" : "default\n");
  ::rename((fs::path(tmp) / "choice").c_str(), memo.c_str());  // replaces another process's (same) answer
  fs::remove_all(tmp, ec);
  return links ? gold : std::vector<std::string>{};
}

// Runs the compiles in `dir`, where the sources already are. Returns the first failing step.
// Device sources compile to objects with their own compiler; the host link takes them. A program
// with host sources as well (a split CUDA program: Frame.h) compiles its host sources to objects
// while the device compiler runs, then links.
std::optional<StepFailure> compile(const Plan& plan, const BuildRequest& req, const std::string& dir,
                                   const std::string& lib_name) {
  auto append = [](std::vector<std::string>& to, const std::vector<std::string>& from) {
    to.insert(to.end(), from.begin(), from.end());
  };
  auto cuda_homes = [] { return toolkit_homes({"CUDA_HOME", "CUDA_PATH"}, "/usr/local/cuda"); };
  auto device_compile = [&](const std::vector<std::string>& sources, const std::vector<std::string>& prefix,
                            std::vector<std::string>& objects) -> std::optional<StepFailure> {
    for (const std::string& src : sources) {
      std::vector<std::string> argv = prefix;
      append(argv, plan.include_flags);
      append(argv, req.device_flags);
      append(argv, {"-c", src, "-o", src + ".o"});
      ProcessResult r = run_compiler(argv, dir);
      if (r.status != 0) return StepFailure{argv, r};
      objects.push_back(src + ".o");
    }
    return std::nullopt;
  };
  std::vector<std::string> device_objects, link_flags;
  std::future<std::optional<StepFailure>> cuda;  // runs beside the host compile
  if (!plan.cuda.empty()) {
    cuda = std::async(std::launch::async, [&] {
      return device_compile(plan.cuda, {plan.nvcc, "-std=c++17", "-O3", "-Xcompiler", "-fPIC"}, device_objects);
    });
    append(link_flags, runtime_link_flags(plan.nvcc, cuda_homes(), "cudart"));
  }
  for (const std::string& lib : req.libraries)
    if (lib == "cublas") append(link_flags, runtime_link_flags(plan.nvcc, cuda_homes(), "cublas"));

  std::vector<std::string> flags = {"-std=c++17", "-O3", "-fPIC", "-fopenmp", "-fno-math-errno"};
  append(flags, plan.include_flags);
  if (!plan.cuda.empty()) append(flags, toolkit_include_flags(plan.nvcc, cuda_homes(), "cuda_runtime.h"));
  append(flags, req.extra_flags);
  std::optional<std::string> prelude;
  if (!plan.host.empty()) prelude = precompiled_prelude(plan, req, flags);
  std::vector<std::string> host_objects;
  std::optional<StepFailure> host_failure;
  if (!plan.host.empty() && !plan.cuda.empty()) {
    for (const std::string& src : plan.host) {
      std::vector<std::string> argv = {plan.cxx};
      append(argv, flags);
      if (prelude) append(argv, {"-include", *prelude});
      append(argv, {"-c", src, "-o", src + ".o"});
      ProcessResult r = run_compiler(argv, dir);
      if (r.status != 0) {
        host_failure = StepFailure{argv, r};
        break;
      }
      host_objects.push_back(src + ".o");
    }
  }
  if (cuda.valid())
    if (auto f = cuda.get()) return f;
  if (host_failure) return host_failure;
  std::vector<std::string> objects = device_objects;
  if (auto f = device_compile(plan.hip, {plan.hipcc, "-std=c++17", "-O3", "-fPIC"}, objects)) return f;
  if (!plan.hip.empty())
    append(link_flags,
           runtime_link_flags(plan.hipcc, toolkit_homes({"ROCM_PATH", "HIP_PATH"}, "/opt/rocm"), "amdhip64"));

  std::vector<std::string> argv = {plan.cxx, "-shared"};
  append(argv, flags);
  if (host_objects.empty() && !plan.host.empty()) {  // compiled and linked in one step
    if (prelude) append(argv, {"-include", *prelude});
    append(argv, plan.host);
  }
  append(argv, host_objects);
  append(argv, objects);
  append(argv, link_flags);
  append(argv, linker_flags(plan));
  for (const std::string& lib : req.libraries)
    if (lib == "cblas") argv.push_back("-lblas");  // Debian's libblas-dev carries CBLAS
  append(argv, {"-o", lib_name});
  ProcessResult r = run_compiler(argv, dir);
  if (r.status != 0) return StepFailure{argv, r};
  return std::nullopt;
}

struct CompilerError {
  std::string file;
  int line = 0, column = 0;
  std::string text;
};

// The first error the compiler reports: `file:line:col: error: text` (gcc, clang, hipcc) or
// `file(line): error: text` (nvcc); else the first line that mentions an error (a linker error).
std::optional<CompilerError> first_error(const std::string& output) {
  static const std::regex gnu(R"(^(.+?):(\d+):(\d+): (?:fatal )?error: (.*)$)");
  static const std::regex nvcc(R"(^(.+?)\((\d+)\): (?:catastrophic )?error: (.*)$)");
  std::optional<CompilerError> fallback;
  size_t start = 0;
  while (start < output.size()) {
    size_t end = output.find('\n', start);
    if (end == std::string::npos) end = output.size();
    std::string line = output.substr(start, end - start);
    start = end + 1;
    std::smatch m;
    if (std::regex_match(line, m, gnu)) return CompilerError{m[1], std::stoi(m[2]), std::stoi(m[3]), m[4]};
    if (std::regex_match(line, m, nvcc)) return CompilerError{m[1], std::stoi(m[2]), 0, m[3]};
    if (!fallback && line.find("error") != std::string::npos) fallback = CompilerError{"", 0, 0, line};
  }
  return fallback;
}

std::string first_lines(const std::string& text, size_t count) {
  size_t pos = 0;
  for (size_t i = 0; i < count && pos != std::string::npos; ++i) {
    pos = text.find('\n', pos);
    if (pos != std::string::npos) ++pos;
  }
  std::string head = pos == std::string::npos ? text : text.substr(0, pos);
  while (!head.empty() && head.back() == '\n') head.pop_back();
  if (pos != std::string::npos && pos < text.size()) head += "\n...";
  return head;
}

/// Why a compiler failed when the reason is not the generated code: a limit, the machine, a signal.
/// Empty when the compiler reported errors in the code (then it is an sdfc bug).
std::string environmental_failure(const ProcessResult& r, const std::string& compiler) {
  CompilerLimits limits = compiler_limits();
  if (r.timed_out)
    return fmt::format("{} ran longer than the time limit ({} s, SDFC_COMPILER_TIMEOUT_S) and was stopped", compiler,
                       limits.timeout_s);
  auto says = [&](const char* text) { return r.output.find(text) != std::string::npos; };
  if (says("No space left on device") || says("Disk quota exceeded"))
    return fmt::format(
        "{} could not write its output: the disk is full (free space, or set SDFC_CACHE_DIR and TMPDIR "
        "to another file system)",
        compiler);
  if (says("out of memory") || says("Cannot allocate memory") || says("virtual memory exhausted") ||
      says("std::bad_alloc"))
    return fmt::format("{} ran out of memory (its limit: {} MB, SDFC_COMPILER_MEMORY_MB{})", compiler, limits.memory_mb,
                       limits.memory_mb ? "" : " = 0: none, so the machine's");
  if (says("signal terminated program"))  // gcc's driver: cc1plus (or as, ld) was killed
    return fmt::format(
        "a process {} started was killed by a signal (the kernel's out-of-memory killer sends SIGKILL; "
        "the memory limit is {} MB, SDFC_COMPILER_MEMORY_MB)",
        compiler, limits.memory_mb);
  if (r.status > 128)
    return fmt::format("{} was killed by signal {} ({}; the kernel's out-of-memory killer sends SIGKILL)", compiler,
                       r.status - 128, strsignal(r.status - 128));
  return "";
}

/// A failed build leaves the cache at once: it moves to the system's temporary directory (or is
/// deleted when it cannot), where the user can look at it. Returns where it is, or "".
std::string move_out_of_cache(const std::string& dir, const std::string& program) {
  std::string tmp = getenv_or_empty("TMPDIR");
  if (tmp.empty()) tmp = "/tmp";
  std::string target = make_temp_dir(tmp + "/sdfc-failed-" + program + "-");
  std::error_code ec;
  if (!target.empty()) {
    fs::remove(target, ec);
    if (::rename(dir.c_str(), target.c_str()) == 0) return target;
    fs::create_directories(target, ec);
    fs::copy(dir, target, fs::copy_options::recursive, ec);
    if (!ec) {
      fs::remove_all(dir, ec);
      return target;
    }
  }
  fs::remove_all(dir, ec);
  return "";
}

[[noreturn]] void throw_compile_failure(const StepFailure& failure, const Plan& plan, std::string dir,
                                        const std::string& program, bool in_cache) {
  const ProcessResult& r = failure.result;
  if (r.status == -1) throw_cannot_start(failure.argv[0], r.output);
  // Keep the whole story next to the sources: the command to rerun and the full output.
  write_file(fs::path(dir) / "build.log",
             fmt::format("$ (cd {} && {})\n{}", dir, command_line(failure.argv), r.output));
  if (in_cache) {
    std::string moved = move_out_of_cache(dir, program);
    dir = moved.empty() ? "(deleted: it could not be moved out of the build cache)" : moved;
  }

  std::string compiler = fs::path(failure.argv[0]).filename().string();
  std::optional<CompilerError> err = first_error(r.output);
  Diagnostic d;
  // Without a file:line to go by (a link error), point at the first compiled source.
  const std::string& first = !plan.host.empty() ? plan.host[0] : !plan.cuda.empty() ? plan.cuda[0] : plan.hip[0];
  d.file = (fs::path(dir) / first).string();
  if (std::string why = environmental_failure(r, compiler); !why.empty()) {
    d.message = fmt::format(
        "cannot build the library: {} (the build is kept in {}, with the command and the whole "
        "output in build.log)\n{}",
        why, dir, first_lines(r.output, kErrorOutputLines));
    throw UserError(std::move(d));
  }
  std::string summary = fmt::format("{} exited with status {}", compiler, r.status);
  if (err) {
    if (!err->file.empty()) {
      fs::path f(err->file);
      d.file = f.is_absolute() ? err->file : (fs::path(dir) / err->file).string();
    }
    d.line = err->line;
    d.column = err->column;
    summary = err->text;
  }
  d.message = fmt::format(
      "the generated code does not compile: {} (the failed build is kept in {}, with the command and the whole output "
      "in build.log; compiler output follows; this is an sdfc bug; please report it with the input file)\n{}",
      summary, dir, first_lines(r.output, kErrorOutputLines));
  throw UserError(std::move(d));
}

// Writes the sources into `dir` and compiles them there; throws UserError on failure (keeping `dir`).
void build_in(const std::string& dir, const Plan& plan, const BuildRequest& req, const std::string& lib_name,
              bool in_cache) {
  for (const SourceFile& s : req.sources) write_file(fs::path(dir) / s.name, s.text);
  if (auto failure = compile(plan, req, dir, lib_name))
    throw_compile_failure(*failure, plan, dir, req.program_name, in_cache);
}

}  // namespace

std::string host_compiler() {
  std::string name = getenv_or_empty("SDFC_CXX");
  bool from_env = !name.empty();
  if (!from_env) name = "c++";
  std::string path = resolve_program(name);
  if (path.empty()) {
    throw_at(name, from_env
                       ? "cannot find the C++ compiler named by SDFC_CXX (not an executable file, or not in PATH); "
                         "set SDFC_CXX to the path of a C++17 compiler"
                       : "cannot find a C++ compiler ('c++' is not in PATH); install one or set SDFC_CXX to the "
                         "path of a C++17 compiler");
  }
  return path;
}

BuildResult build_library(const BuildRequest& req) {
  Plan plan = make_plan(req);
  BuildResult result;
  result.cache_key = cache_key(req, plan);
  std::string lib_name = "lib" + req.program_name + ".so";

  if (!req.use_cache) {
    std::string dir = make_private_dir(req.program_name);
    build_in(dir, plan, req, lib_name, /*in_cache=*/true);  // a private build under the cache moves out too
    result.library_path = (fs::path(dir) / lib_name).string();
    return result;
  }

  fs::path root = ensure_cache_dir();
  double limit_mb = cache_limit_mb();  // read before building: a bad setting must not cost a compile
  fs::path entry = root / result.cache_key;
  result.library_path = (entry / lib_name).string();
  EntryLock lock(root, result.cache_key);  // a parallel build of the same program finishes first
  if (is_complete_entry(entry, lib_name)) {
    EntryState state = entry_state(entry, lib_name);
    if (state == EntryState::Intact) {
      touch(entry);
      result.cache_hit = true;
      return result;
    }
    // Truncated, overwritten or flipped (or without a checksum): never load it; rebuild the entry.
    discard_dir(entry, root);
    if (state == EntryState::Corrupt)
      result.note = fmt::format(
          "the cached library {} did not match its checksum (corrupted or changed since it was built); it was removed "
          "and "
          "built again",
          (entry / lib_name).string());
  }

  std::string tmp = make_temp_dir((root / fmt::format("tmp-{}-{}-", result.cache_key, ::getpid())).string());
  if (tmp.empty())
    throw_at(root.string(), fmt::format("cannot create a build directory in the build cache: {}; set SDFC_CACHE_DIR to "
                                        "a writable directory",
                                        errno_text(errno)));
  build_in(tmp, plan, req, lib_name, /*in_cache=*/true);
  seal_entry(tmp, result.cache_key, lib_name);
  if (!publish(tmp, entry, root, lib_name)) {
    touch(entry);
    result.cache_hit = true;
    return result;
  }
  touch(entry);
  bound_cache(root, result.cache_key, limit_mb);
  return result;
}

void install_library(const std::string& built, const std::string& dest) {
  std::ifstream in(built, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in && !in.eof()) throw_at(dest, fmt::format("cannot read the built library {}", built));
  OutputOptions o;
  o.executable = true;
  write_output(dest, bytes, o);
}

}  // namespace sdfc
