/// \file
/// The build driver: turns generated sources into a shared library with the host compiler (and,
/// for device code, nvcc or hipcc), through a content-addressed build cache.
///
/// Cache layout: `<cache_dir()>/<key>/` holds `lib<program>.so`, the sources it was built from and a
/// `complete` marker (the key, and the library's size and zlib CRC-32, verified on every hit: a
/// library that does not match is never loaded; the entry is rebuilt and the result says so); `<key>` is the hex
/// SHA-256 of everything that determines the library. An entry is built in a private `tmp-<key>-<pid>-<random>/`
/// directory and published with one rename(), so concurrent processes see either no entry or a complete one. After
/// publishing, the cache is bounded to $SDFC_CACHE_MAX_MB (least recently used entries go first) and build directories
/// abandoned for more than an hour are removed.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "compiler/BuildCache.h"
#include "compiler/Process.h"
#include "compiler/Sha256.h"

namespace sdfc {

/// One generated source file.
struct SourceFile {
  std::string name;  ///< file name only, [A-Za-z0-9_.-]: "prog.cpp", "prog_cuda.cu", "prog_hip.hip.cpp", "prog.h"
  std::string text;
};

/// What to build. Sources ending in `.cpp` are compiled with the host compiler, `.cu` with nvcc
/// ($SDFC_NVCC), `.hip.cpp` with hipcc ($SDFC_HIPCC); any other file (a header) is only written
/// next to them. Device sources are compiled to objects first and linked into the same library.
struct BuildRequest {
  std::string program_name;               ///< sanitized identifier; the library is `lib<program_name>.so`
  std::vector<SourceFile> sources;        ///< at least one compiled source
  std::vector<std::string> include_dirs;  ///< made absolute; their paths (not contents) enter the cache key
  std::vector<std::string> extra_flags;   ///< appended to each host compile; relative paths resolve in the build dir
  std::vector<std::string> device_flags;  ///< appended to each nvcc/hipcc compile (host flags do not suit nvcc)
  std::vector<std::string> libraries;     ///< vendor libraries to link: "cblas" (-lblas), "cublas" (the toolkit's)
  /// The standard headers the host sources read before their own code (lang/CppEnvironment.h,
  /// prelude_std_includes), precompiled once per compiler, flags and runtime headers into the
  /// cache; empty: none (a source that is not a generated program, as DaCe's loader stub).
  std::vector<std::string> prelude_headers;
  std::string key_material;  ///< normalized IR text, options and runtime hash: enters the cache key
  bool use_cache = true;     ///< false: always build, into a private directory
};

/// Where the library is.
struct BuildResult {
  std::string library_path;  ///< inside the cache entry, or in a private directory when use_cache=false
  bool cache_hit = false;    ///< true when an existing entry was reused (also when another process just built it)
  std::string cache_key;     ///< hex SHA-256
  std::string note;          ///< something the user should know (a corrupted entry was rebuilt); "" = nothing
};

/// Compiles and links `req` into a shared library. Throws UserError when the compiler fails: the
/// diagnostic points at the generated file and line of the first compiler error (inside the failed
/// build directory, which is kept), and the message includes the compiler's first output lines and
/// says "this is an sdfc bug; please report it with the input file". Also throws UserError when a
/// compiler cannot be found or started, or the cache directory cannot be created. Thread-safe.
BuildResult build_library(const BuildRequest& req);

/// Copies a built library to `dest` as an output (compiler/Output.h: atomically for a regular file
/// or a new path, so that a process that loaded the previous file keeps its copy; written through
/// for a device such as /dev/null, never replaced). Throws UserError naming `dest`.
void install_library(const std::string& built, const std::string& dest);

/// Absolute path of the host C++ compiler: $SDFC_CXX (a path, or a name looked up in PATH), else
/// `c++` looked up in PATH. Throws UserError when it cannot be found.
std::string host_compiler();

}  // namespace sdfc
