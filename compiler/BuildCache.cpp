#include "compiler/BuildCache.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <vector>

#include "compiler/Process.h"
#include "ir/Diagnostic.h"

namespace sdfc {

namespace cache {

namespace {

constexpr const char* kCompleteMarker = "complete";
constexpr double kDefaultCacheMaxMb = 2048;
// Build directories older than this were abandoned (a crashed build, or a failed one kept for the user).
constexpr auto kStaleAge = std::chrono::hours(1);
constexpr auto kCheckMemoryAge = std::chrono::hours(24 * 30);

void sync_file(const fs::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

std::atomic<unsigned> discard_counter{0};

bool is_cache_key(const std::string& name) {
  return name.size() == 64 &&
         std::all_of(name.begin(), name.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

/// The library's line in an entry's marker: "library <bytes> <CRC-32>" (zlib's CRC-32 of the whole
/// file), or "" when it cannot be read. The checksum guards against corruption (a truncated or
/// overwritten library, a flipped bit), not against someone who can write the cache: they could
/// rewrite the marker too.
std::string library_checksum(const fs::path& lib) {
  std::ifstream in(lib, std::ios::binary);
  if (!in) return "";
  uLong crc = crc32(0L, Z_NULL, 0);
  std::uintmax_t bytes = 0;
  char buf[65536];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    crc = crc32(crc, reinterpret_cast<const Bytef*>(buf), static_cast<uInt>(in.gcount()));
    bytes += static_cast<std::uintmax_t>(in.gcount());
  }
  if (in.bad()) return "";
  return fmt::format("library {} {:08x}", bytes, crc);
}

uintmax_t tree_size(const fs::path& dir) {
  uintmax_t total = 0;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code size_ec;
    if (it->is_regular_file(size_ec)) {
      uintmax_t size = it->file_size(size_ec);
      if (!size_ec) total += size;
    }
  }
  return total;
}

bool is_stale(const fs::path& path, fs::file_time_type now, std::chrono::hours age = kStaleAge) {
  std::error_code ec;
  auto mtime = fs::last_write_time(path, ec);
  return !ec && now - mtime > age;
}

std::string fallback_cache_dir() {
  return fmt::format("/tmp/sdfc-cache-{}", ::getuid());
}

}  // namespace

void write_file(const fs::path& path, std::string_view text, bool sync) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw_at(path.string(), fmt::format("cannot create the file: {}", errno_text(errno)));
  while (!text.empty()) {
    ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      throw_at(path.string(), fmt::format("cannot write the file: {}", errno_text(err)));
    }
    text.remove_prefix(size_t(n));
  }
  if (sync) ::fsync(fd);
  ::close(fd);
}

EntryLock::EntryLock(const fs::path& root, const std::string& name) {
  std::error_code ec;
  fs::create_directories(root / "locks", ec);
  fd_ = ::open((root / "locks" / (name + ".lock")).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd_ < 0) return;
  while (::flock(fd_, LOCK_EX) != 0)
    if (errno != EINTR) {
      ::close(fd_);
      fd_ = -1;
      return;
    }
}

EntryLock::~EntryLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the only descriptor releases the lock
}

std::string make_temp_dir(const std::string& prefix) {
  std::string templ = prefix + "XXXXXX";
  if (!::mkdtemp(templ.data())) return "";
  return templ;
}

void discard_dir(const fs::path& dir, const fs::path& root) {
  fs::path aside = root / fmt::format("tmp-discard-{}-{}-{}", dir.filename().string(), ::getpid(), discard_counter++);
  if (::rename(dir.c_str(), aside.c_str()) != 0) return;
  std::error_code ec;
  fs::remove_all(aside, ec);
}

EntryState entry_state(const fs::path& entry, const std::string& lib_name) {
  std::ifstream marker(entry / kCompleteMarker);
  std::string key, line;
  std::getline(marker, key);
  std::getline(marker, line);
  if (line.empty()) return EntryState::OlderFormat;  // published by an sdfc without checksums
  std::string sum = library_checksum(entry / lib_name);
  return !sum.empty() && line == sum ? EntryState::Intact : EntryState::Corrupt;
}

bool is_complete_entry(const fs::path& entry, const std::string& lib_name) {
  std::error_code ec;
  return fs::is_regular_file(entry / kCompleteMarker, ec) && fs::is_regular_file(entry / lib_name, ec);
}

void touch(const fs::path& path) {
  ::utimes(path.c_str(), nullptr);
}

std::string ensure_cache_dir() {
  std::string dir = cache_dir();
  bool shared_tmp = dir == fallback_cache_dir();
  if (shared_tmp) ::mkdir(dir.c_str(), 0700);  // private: other users must not plant libraries in it
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    throw_at(dir,
             fmt::format("cannot create the build cache directory ({}); set SDFC_CACHE_DIR to a writable directory",
                         ec ? ec.message() : "not a directory"));
  struct stat st;
  if (shared_tmp && (::stat(dir.c_str(), &st) != 0 || st.st_uid != ::getuid()))
    throw_at(dir, "the build cache directory belongs to another user; set SDFC_CACHE_DIR to a directory of your own");
  return dir;
}

double cache_limit_mb() {
  std::string text = getenv_or_empty("SDFC_CACHE_MAX_MB");
  if (text.empty()) return kDefaultCacheMaxMb;
  char* end = nullptr;
  double mb = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || !std::isfinite(mb) || mb < 0)
    throw_at("<environment>",
             fmt::format("SDFC_CACHE_MAX_MB must be a non-negative number of megabytes, got '{}'", text));
  return mb;
}

void bound_cache(const fs::path& root, const std::string& keep, double limit_mb) {
  struct Entry {
    fs::path path;
    fs::file_time_type used;
    uintmax_t size;
  };
  auto limit = static_cast<uintmax_t>(limit_mb * 1024 * 1024);
  auto now = fs::file_time_type::clock::now();
  std::vector<Entry> entries;
  uintmax_t total = 0;
  std::error_code ec;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    std::error_code entry_ec;
    if (!it->is_directory(entry_ec)) continue;
    if (is_cache_key(name)) {
      auto used = fs::last_write_time(it->path(), entry_ec);
      if (entry_ec) continue;  // deleted meanwhile by another process
      entries.push_back({it->path(), used, tree_size(it->path())});
      total += entries.back().size;
    } else if (name.rfind("tmp-", 0) == 0 && is_stale(it->path(), now)) {
      fs::remove_all(it->path(), entry_ec);
    } else if (name == "checks" || name == "pch" || name == "locks") {
      // passed tasklet checks, precompiled headers (Compile.h, the preludes) and the entries' lock
      // files: forgotten after a month unused
      for (fs::directory_iterator p(it->path(), entry_ec), pend; !entry_ec && p != pend; p.increment(entry_ec)) {
        std::error_code remove_ec;
        if (is_stale(p->path(), now, kCheckMemoryAge)) fs::remove(p->path(), remove_ec);
      }
    } else if (name == "tmp") {
      for (fs::directory_iterator p(it->path(), entry_ec), pend; !entry_ec && p != pend; p.increment(entry_ec)) {
        std::error_code remove_ec;
        if (is_stale(p->path(), now)) fs::remove_all(p->path(), remove_ec);
      }
    }
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.used < b.used; });
  for (const Entry& e : entries) {
    if (total <= limit) break;
    if (e.path.filename() == keep) continue;
    discard_dir(e.path, root);
    total -= e.size;
  }
}

std::string make_private_dir(const std::string& program) {
  std::error_code ec;
  try {
    fs::path tmp = fs::path(ensure_cache_dir()) / "tmp";
    fs::create_directories(tmp, ec);
    if (!ec) {
      std::string dir = make_temp_dir((tmp / (program + "-")).string());
      if (!dir.empty()) return dir;
    }
  } catch (const UserError&) {
    // An unusable cache does not matter for an uncached build.
  }
  std::string system_tmp = getenv_or_empty("TMPDIR");
  if (system_tmp.empty()) system_tmp = "/tmp";
  std::string dir = make_temp_dir(system_tmp + "/sdfc-" + program + "-");
  if (dir.empty())
    throw_at(system_tmp, fmt::format("cannot create a build directory: {}; set SDFC_CACHE_DIR or TMPDIR to a writable "
                                     "directory",
                                     errno_text(errno)));
  return dir;
}

bool publish(const std::string& tmp, const fs::path& entry, const fs::path& root, const std::string& lib_name) {
  for (int attempt = 0; attempt < 3; ++attempt) {
    if (::rename(tmp.c_str(), entry.c_str()) == 0) return true;
    int err = errno;
    if (err != EEXIST && err != ENOTEMPTY)
      throw_at(entry.string(), fmt::format("cannot publish the build cache entry: {}; set SDFC_CACHE_DIR to a writable "
                                           "directory",
                                           errno_text(err)));
    if (is_complete_entry(entry, lib_name)) {
      std::error_code ec;
      fs::remove_all(tmp, ec);
      return false;
    }
    // Not published by sdfc (entries appear complete, by rename): set it aside and try again.
    discard_dir(entry, root);
  }
  throw_at(entry.string(), "cannot publish the build cache entry: an incomplete entry keeps reappearing");
}

void seal_entry(const fs::path& dir, const std::string& key, const std::string& lib_name) {
  sync_file(dir / lib_name);
  std::string sum = library_checksum(dir / lib_name);
  if (sum.empty()) throw_at(dir.string(), "cannot read the library just built");
  write_file(dir / kCompleteMarker, key + "\n" + sum + "\n", /*sync=*/true);
}

}  // namespace cache

std::string cache_dir() {
  std::string dir = getenv_or_empty("SDFC_CACHE_DIR");
  if (!dir.empty()) return dir;
  std::string xdg = getenv_or_empty("XDG_CACHE_HOME");
  if (!xdg.empty() && xdg[0] == '/') return xdg + "/sdfc";  // the XDG spec says to ignore relative paths
  std::string home = getenv_or_empty("HOME");
  if (!home.empty()) return home + "/.cache/sdfc";
  return cache::fallback_cache_dir();
}

}  // namespace sdfc
