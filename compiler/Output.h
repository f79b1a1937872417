/// \file
/// Writing what a user asked for (`-o`, `--output`, `convert OUT`, `dot -o`, `--emit-source`):
/// one function, so that every output follows the same rules.
///
/// - A path that does not exist, or names a regular file, gets the bytes atomically: a temporary
///   file created exclusively beside it (`.NAME.sdfc-XXXXXX`), every write, flush and close
///   checked, then one rename() over the path. A reader sees the old file or the whole new one;
///   on any failure the temporary is removed and the old file is untouched.
/// - A symbolic link is followed: its target is written as above (the link stays a link).
/// - A path that exists and is not a regular file (a character device such as /dev/null or
///   /dev/stdout, a FIFO) is written through, opened without O_CREAT and O_TRUNC: it is never
///   replaced. A directory is an error.
/// - New files get mode 0666 less the umask and a replaced file keeps its mode; libraries
///   (`executable`) always get 0777 less the umask, as a linker's output does.
#pragma once

#include <string>
#include <string_view>

namespace sdfc {

struct OutputOptions {
  bool gzip = false;        ///< compress (gzip format, level 9) before writing
  bool executable = false;  ///< a shared library: new files get 0777 less the umask
};

/// Writes `bytes` to `path` by the rules above. Throws UserError naming `path` and the system's
/// reason ("No space left on device", "Is a directory", ...) when anything fails.
void write_output(const std::string& path, std::string_view bytes, const OutputOptions& options = {});

/// Whether writing to `path` would write through (it exists and is neither a regular file nor a
/// directory, after following links).
bool writes_through(const std::string& path);

}  // namespace sdfc
