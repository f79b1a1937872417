#include "compiler/Output.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "ir/Diagnostic.h"

namespace fs = std::filesystem;

namespace sdfc {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what, int err) {
  throw UserError(
      Diagnostic{path, "", 0, 0, fmt::format("{}: {}", what, std::error_code(err, std::generic_category()).message())});
}

/// The process's umask, without changing it (/proc/self/status; umask() twice where that is missing).
mode_t current_umask() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("Umask:", 0) == 0) return static_cast<mode_t>(std::stoul(line.substr(6), nullptr, 8));
  mode_t m = ::umask(022);
  ::umask(m);
  return m;
}

/// Writes all of `bytes` to `fd`; returns 0 or the errno of the failed write.
int write_all(int fd, std::string_view bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    ssize_t w = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return errno;
    if (w == 0) return EIO;
    done += static_cast<std::size_t>(w);
  }
  return 0;
}

std::string gzip_bytes(std::string_view bytes, const std::string& path) {
  z_stream z{};
  if (deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) fail(path, "cannot compress", ENOMEM);
  std::string out(deflateBound(&z, static_cast<uLong>(bytes.size())), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  int rc = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  if (rc != Z_STREAM_END) fail(path, "cannot compress", EIO);
  return out;
}

}  // namespace

bool writes_through(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

void write_output(const std::string& path, std::string_view bytes, const OutputOptions& options) {
  std::string compressed;
  if (options.gzip) {
    compressed = gzip_bytes(bytes, path);
    bytes = compressed;
  }
  // A link is followed: its target gets the bytes, the link stays.
  std::string target = path;
  std::error_code ec;
  if (fs::is_symlink(path, ec) && fs::exists(path, ec)) target = fs::canonical(path, ec).string();
  if (ec) target = path;

  struct stat st {};
  bool exists = ::stat(target.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) fail(path, "cannot write the output file", EISDIR);
  if (exists && !S_ISREG(st.st_mode)) {
    // A device or a FIFO: written through, never replaced.
    int fd = ::open(target.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) fail(path, "cannot write the output file", errno);
    int err = write_all(fd, bytes);
    if (::close(fd) != 0 && err == 0) err = errno;
    if (err) fail(path, "cannot write the output file", err);
    return;
  }

  fs::path t(target);
  fs::path dir = t.has_parent_path() ? t.parent_path() : fs::path(".");
  std::string templ = (dir / ("." + t.filename().string() + ".sdfc-XXXXXX")).string();
  int fd = ::mkostemp(templ.data(), O_CLOEXEC);
  if (fd < 0) fail(path, "cannot write the output file: cannot create a file in " + dir.string(), errno);
  auto abandon = [&](const char* what, int err) {
    if (fd >= 0) ::close(fd);
    ::unlink(templ.c_str());
    fail(path, what, err);
  };
  if (int err = write_all(fd, bytes)) abandon("cannot write the output file", err);
  // As a linker does, a library gets 0777 less the umask; other outputs keep a replaced file's mode.
  mode_t mode =
      exists && !options.executable ? (st.st_mode & 07777) : ((options.executable ? 0777 : 0666) & ~current_umask());
  if (::fchmod(fd, mode) != 0) abandon("cannot write the output file: cannot set its permissions", errno);
  if (options.executable && ::fsync(fd) != 0) abandon("cannot write the output file", errno);
  int closed = ::close(fd);
  fd = -1;
  if (closed != 0) abandon("cannot write the output file", errno);
  if (::rename(templ.c_str(), target.c_str()) != 0) abandon("cannot write the output file: cannot replace it", errno);
}

}  // namespace sdfc
