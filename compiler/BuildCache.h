/// \file
/// The build cache's folder and entries (the layout is in compiler/Build.h): where the cache is,
/// an entry's lock, its seal (a marker with the library's checksum) and publication by one rename,
/// the least-recently-used bound, private build folders. compiler/Build.cpp decides what to build
/// and when; this file only keeps the entries.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace sdfc {

/// Cache directory: $SDFC_CACHE_DIR, else $XDG_CACHE_HOME/sdfc, else $HOME/.cache/sdfc, else
/// /tmp/sdfc-cache-<uid>. Does not create it.
std::string cache_dir();

namespace cache {

namespace fs = std::filesystem;

/// Creates the cache directory when needed (private when it is the shared /tmp fallback) and
/// returns it. Throws UserError when it cannot, or when the fallback belongs to another user.
std::string ensure_cache_dir();
/// $SDFC_CACHE_MAX_MB (default 2048). Throws UserError for a value that is not a number >= 0.
double cache_limit_mb();

/// An exclusive lock on `<cache>/locks/<name>.lock` for its scope (flock: released when the
/// process ends however it ends). Builds of one cache entry take it, so that parallel compiles of
/// the same program (GT4Py compiles a run's programs in parallel processes) build it once: the
/// others wait and then find the entry. Best effort: without a lock file (an unwritable cache is
/// reported by the build itself) the builds race as before, and publishing stays atomic.
class EntryLock {
 public:
  EntryLock(const fs::path& root, const std::string& name);
  EntryLock(const EntryLock&) = delete;
  EntryLock& operator=(const EntryLock&) = delete;
  ~EntryLock();

 private:
  int fd_ = -1;
};

/// mkdtemp on `prefix` + "XXXXXX"; "" on failure.
std::string make_temp_dir(const std::string& prefix);
/// A fresh directory for a build that bypasses the cache: under <cache>/tmp, else the system's
/// temporary directory. Throws UserError when neither works.
std::string make_private_dir(const std::string& program);
/// Removes a directory of the cache so that nobody sees it half-deleted: first renamed out of the
/// way (atomic), then deleted. Losing a race against another process deleting it too is fine.
void discard_dir(const fs::path& dir, const fs::path& root);

/// Whether `entry` has its marker and its library...
bool is_complete_entry(const fs::path& entry, const std::string& lib_name);
/// ... and whether that library is still the one that was published (its checksum matches the
/// marker's; an entry of an sdfc without checksums is OlderFormat).
enum class EntryState { Intact, OlderFormat, Corrupt };
EntryState entry_state(const fs::path& entry, const std::string& lib_name);
/// Seals a finished build in `dir` before it is published: the library synced to disk, then the
/// marker (the key and the library's size and CRC-32), synced. Whoever sees the entry sees it
/// complete; a crash right after publishing cannot leave a marker next to a truncated library.
void seal_entry(const fs::path& dir, const std::string& key, const std::string& lib_name);
/// Moves the sealed build `tmp` to `entry`. Returns false when another process published the same
/// entry first (then `tmp` is deleted and the existing entry is used). Throws UserError.
bool publish(const std::string& tmp, const fs::path& entry, const fs::path& root, const std::string& lib_name);
/// Marks an entry as just used, for the least-recently-used eviction. A read-only cache stays usable.
void touch(const fs::path& path);
/// Deletes least recently used entries (never `keep`) until the cache is within `limit_mb`, build
/// directories abandoned long ago, and passed checks, precompiled headers and lock files unused
/// for a month.
void bound_cache(const fs::path& root, const std::string& keep, double limit_mb);

/// Writes `text` to `path` (created or truncated; fsync'ed with `sync`). Throws UserError.
void write_file(const fs::path& path, std::string_view text, bool sync = false);

}  // namespace cache
}  // namespace sdfc
