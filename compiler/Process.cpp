#include "compiler/Process.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string_view>
#include <system_error>

#include "ir/Diagnostic.h"

extern char** environ;

namespace sdfc {

namespace fs = std::filesystem;

std::string errno_text(int err) {
  return std::error_code(err, std::generic_category()).message();
}

namespace {

bool is_executable_file(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

}  // namespace

std::string resolve_program(const std::string& name) {
  if (name.empty()) return "";
  if (name.find('/') != std::string::npos) return is_executable_file(name) ? fs::absolute(name).string() : "";
  const char* path_env = std::getenv("PATH");
  std::string path = path_env ? path_env : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (true) {
    size_t end = path.find(':', start);
    std::string dir = path.substr(start, end == std::string::npos ? std::string::npos : end - start);
    std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
    if (is_executable_file(candidate)) return fs::absolute(candidate).string();
    if (end == std::string::npos) return "";
    start = end + 1;
  }
}

namespace {

// run_process() with an explicit environment.
ProcessResult spawn_and_wait(const std::vector<std::string>& argv, const std::string& cwd, char* const* envp,
                             const CompilerLimits& limits = {0, 0}) {
  if (argv.empty()) return {-1, "no program to run"};
  std::string program = resolve_program(argv[0]);
  if (program.empty()) return {-1, fmt::format("'{}' is not an executable file, nor found in PATH", argv[0])};

  // Close-on-exec, so that the write end does not leak into children spawned concurrently by other
  // threads (which would keep our read from seeing end-of-file until they exit).
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return {-1, "cannot create a pipe: " + errno_text(errno)};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  // Its own process group: a time limit stops the compiler and everything it started (cc1plus, as).
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int rc = ::posix_spawn(&pid, program.c_str(), &actions, &attr, args.data(), envp);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    return {-1, fmt::format("cannot start {}{}: {}", program, cwd.empty() ? "" : " in " + cwd, errno_text(rc))};
  }
  // The memory limit, set as the process starts (before it starts the compiler proper); its
  // children inherit it.
  if (limits.memory_mb > 0) {
    rlim_t bytes = static_cast<rlim_t>(limits.memory_mb) * 1024 * 1024;
    struct rlimit lim = {bytes, bytes};
    ::prlimit(pid, RLIMIT_DATA, &lim, nullptr);
  }

  ProcessResult result{0, ""};
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(limits.timeout_s);
  char buf[4096];
  while (true) {
    int wait_ms = -1;
    if (limits.timeout_s > 0) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      wait_ms = static_cast<int>(std::max<long long>(0, std::min<long long>(left.count(), 1 << 30)));
    }
    struct pollfd pfd = {fds[0], POLLIN, 0};
    int ready = ::poll(&pfd, 1, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) {  // the time limit: stop the whole group
      ::kill(-pid, SIGKILL);
      result.timed_out = true;
      break;
    }
    ssize_t n = ::read(fds[0], buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    result.output.append(buf, size_t(n));
  }
  ::close(fds[0]);
  int wstatus = 0;
  while (::waitpid(pid, &wstatus, 0) < 0) {
    if (errno != EINTR) return {-1, result.output + "cannot wait for the process: " + errno_text(errno)};
  }
  result.status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
  return result;
}

}  // namespace

ProcessResult run_compiler(const std::vector<std::string>& argv, const std::string& cwd) {
  // The C locale: English "error:" lines with ASCII quotes that first_error() can parse, and a
  // `--version` text (part of the cache key) that does not depend on the user's language.
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string_view var(*e);
    if (var.rfind("LC_ALL=", 0) != 0 && var.rfind("LC_MESSAGES=", 0) != 0 && var.rfind("LANG=", 0) != 0 &&
        var.rfind("LANGUAGE=", 0) != 0)
      env.emplace_back(var);
  }
  env.emplace_back("LC_ALL=C");
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  return spawn_and_wait(argv, cwd, envp.data(), compiler_limits());
}

std::string getenv_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

namespace {

long limit_from_env(const char* name, long fallback) {
  std::string text = getenv_or_empty(name);
  if (text.empty()) return fallback;
  char* end = nullptr;
  errno = 0;
  long v = std::strtol(text.c_str(), &end, 10);
  if (end == text.c_str() || *end != '\0' || errno == ERANGE || v < 0)
    throw_at("<environment>", fmt::format("{} must be a whole number >= 0 (0: no limit), got '{}'", name, text));
  return v;
}

}  // namespace

CompilerLimits compiler_limits() {
  CompilerLimits l;
  l.timeout_s = limit_from_env("SDFC_COMPILER_TIMEOUT_S", l.timeout_s);
  l.memory_mb = limit_from_env("SDFC_COMPILER_MEMORY_MB", l.memory_mb);
  return l;
}

ProcessResult run_process(const std::vector<std::string>& argv, const std::string& cwd) {
  return spawn_and_wait(argv, cwd, environ);
}

}  // namespace sdfc
