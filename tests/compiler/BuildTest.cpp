// The build driver: compiling generated sources, the content-addressed cache, compiler errors.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "TestUtil.h"
#include "compiler/Build.h"
#include "compiler/Compile.h"
#include "ir/Diagnostic.h"
#include "lang/CppEnvironment.h"

using namespace sdfc;
using sdfc::test::ScopedEnv;
using sdfc::test::slurp;
namespace fs = std::filesystem;

namespace {

const char* kAnswer = "extern \"C\" int answer() { return 42; }\n";

BuildRequest request(const std::string& program, const std::string& source = kAnswer) {
  BuildRequest req;
  req.program_name = program;
  req.sources = {{program + ".cpp", source}};
  req.key_material = "ir of " + program;
  return req;
}

/// Loads the library and calls its `int answer()`; -1 when it cannot.
int call_answer(const std::string& library) {
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    ADD_FAILURE() << "dlopen: " << dlerror();
    return -1;
  }
  auto fn = reinterpret_cast<int (*)()>(dlsym(handle, "answer"));
  int result = fn ? fn() : -1;
  dlclose(handle);
  return result;
}

bool is_key(const std::string& name) {
  return name.size() == 64 && name.find_first_not_of("0123456789abcdef") == std::string::npos;
}

uintmax_t tree_size(const fs::path& dir) {
  uintmax_t total = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) total += e.file_size();
  return total;
}

class BuildTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char templ[] = "/tmp/sdfc-build-test-XXXXXX";
    ASSERT_NE(mkdtemp(templ), nullptr);
    root_ = templ;
    cache_ = root_ + "/cache";
    cache_env_.set(cache_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  /// Names of the published cache entries.
  std::set<std::string> entries() const {
    std::set<std::string> out;
    for (const auto& e : fs::directory_iterator(cache_))
      if (is_key(e.path().filename().string())) out.insert(e.path().filename().string());
    return out;
  }
  /// Names in the cache that are not entries (build directories, ...).
  std::set<std::string> others() const {
    std::set<std::string> out;
    for (const auto& e : fs::directory_iterator(cache_))
      if (!is_key(e.path().filename().string()) && e.path().filename() != "locks" &&
          e.path().filename() != "linkers")  // the entries' lock files, the linker chosen per compiler
        out.insert(e.path().filename().string());
    return out;
  }

  std::string root_, cache_;
  ScopedEnv cache_env_{"SDFC_CACHE_DIR", std::nullopt};
  ScopedEnv limit_env_{"SDFC_CACHE_MAX_MB", std::nullopt};
  ScopedEnv cxx_env_{"SDFC_CXX", std::nullopt};
};

}  // namespace

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // 56 bytes: the length no longer fits in the first block, padding spills into a second one.
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(RunProcess, CapturesStatusAndOutputWithoutAShell) {
  ProcessResult echo = run_process({"echo", "a;b", "$HOME"});
  EXPECT_EQ(echo.status, 0);
  EXPECT_EQ(echo.output, "a;b $HOME\n");

  ProcessResult both = run_process({"sh", "-c", "echo out; echo err >&2; exit 3"});
  EXPECT_EQ(both.status, 3);
  EXPECT_EQ(both.output, "out\nerr\n");

  EXPECT_EQ(run_process({"pwd"}, "/").output, "/\n");
}

TEST(RunProcess, ReportsAProgramThatCannotStart) {
  ProcessResult missing = run_process({"sdfc-no-such-program-xyz"});
  EXPECT_EQ(missing.status, -1);
  EXPECT_NE(missing.output.find("sdfc-no-such-program-xyz"), std::string::npos) << missing.output;
  EXPECT_EQ(run_process({"/bin/sh", "-c", "true"}, "/no/such/dir").status, -1);
}

TEST(Paths, CacheDirFollowsTheEnvironment) {
  ScopedEnv cache("SDFC_CACHE_DIR", "/c/sdfc"), xdg("XDG_CACHE_HOME", "/x"), home("HOME", "/h");
  EXPECT_EQ(cache_dir(), "/c/sdfc");
  cache.set(std::nullopt);
  EXPECT_EQ(cache_dir(), "/x/sdfc");
  xdg.set(std::nullopt);
  EXPECT_EQ(cache_dir(), "/h/.cache/sdfc");
  home.set(std::nullopt);
  EXPECT_EQ(cache_dir(), "/tmp/sdfc-cache-" + std::to_string(getuid()));
}

TEST(Paths, HostCompilerIsAnAbsolutePath) {
  ScopedEnv cxx("SDFC_CXX", std::nullopt);
  std::string found = host_compiler();
  EXPECT_EQ(found.front(), '/');
  EXPECT_EQ(fs::path(found).filename(), "c++");
  cxx.set("g++");
  EXPECT_EQ(fs::path(host_compiler()).filename(), "g++");
  EXPECT_EQ(host_compiler().front(), '/');
}

TEST_F(BuildTest, BuildsLoadsAndHitsTheCache) {
  BuildResult first = build_library(request("answer"));
  EXPECT_FALSE(first.cache_hit);
  ASSERT_TRUE(is_key(first.cache_key)) << first.cache_key;
  fs::path entry = fs::path(cache_) / first.cache_key;
  EXPECT_EQ(first.library_path, (entry / "libanswer.so").string());
  EXPECT_TRUE(fs::exists(entry / "complete"));
  EXPECT_EQ(slurp((entry / "answer.cpp").string()), kAnswer);
  EXPECT_EQ(call_answer(first.library_path), 42);
  EXPECT_EQ(others(), std::set<std::string>{});  // the build directory became the entry

  BuildResult second = build_library(request("answer"));
  EXPECT_TRUE(second.cache_hit);
  EXPECT_EQ(second.library_path, first.library_path);
  EXPECT_EQ(second.cache_key, first.cache_key);
}

TEST_F(BuildTest, ACorruptedEntryIsNeverLoadedButRebuilt) {
  BuildResult first = build_library(request("answer"));
  fs::path lib = first.library_path;
  std::string good = slurp(lib.string());
  // A flipped byte in the middle, then a truncation: each is caught on the next hit.
  for (int damage = 0; damage < 2; ++damage) {
    std::string bad = good;
    if (damage == 0)
      bad[bad.size() / 2] ^= 0x01;
    else
      bad.resize(bad.size() / 3);
    std::ofstream(lib, std::ios::binary | std::ios::trunc) << bad;
    BuildResult again = build_library(request("answer"));
    EXPECT_FALSE(again.cache_hit);
    EXPECT_NE(again.note.find("did not match its checksum"), std::string::npos) << again.note;
    EXPECT_EQ(slurp(again.library_path), good);  // rebuilt: the same bytes as the first build
    EXPECT_EQ(call_answer(again.library_path), 42);
    EXPECT_TRUE(build_library(request("answer")).cache_hit);  // and trusted again
  }
  // An entry published by an sdfc without checksums (the key only) is rebuilt without a note.
  std::ofstream(fs::path(first.library_path).parent_path() / "complete") << first.cache_key << "\n";
  BuildResult older = build_library(request("answer"));
  EXPECT_FALSE(older.cache_hit);
  EXPECT_EQ(older.note, "");
  EXPECT_TRUE(build_library(request("answer")).cache_hit);
}

TEST_F(BuildTest, ChangingSourceFlagsOrKeyMaterialMisses) {
  BuildRequest base = request("answer");
  BuildResult original = build_library(base);

  BuildRequest source = base;
  source.sources[0].text = "extern \"C\" int answer() { return 43; }\n";
  BuildRequest flags = base;
  flags.extra_flags = {"-DUNUSED=1"};
  BuildRequest material = base;
  material.key_material += " changed";
  std::set<std::string> keys = {original.cache_key};
  for (const BuildRequest* r : {&source, &flags, &material}) {
    BuildResult b = build_library(*r);
    EXPECT_FALSE(b.cache_hit);
    keys.insert(b.cache_key);
  }
  EXPECT_EQ(keys.size(), 4u);
  EXPECT_EQ(entries(), keys);
  EXPECT_TRUE(build_library(flags).cache_hit);
}

TEST_F(BuildTest, UncachedBuildsNeverHit) {
  BuildRequest req = request("answer");
  req.use_cache = false;
  BuildResult a = build_library(req);
  BuildResult b = build_library(req);
  EXPECT_FALSE(a.cache_hit);
  EXPECT_FALSE(b.cache_hit);
  EXPECT_NE(a.library_path, b.library_path);
  EXPECT_EQ(a.cache_key, b.cache_key);
  EXPECT_EQ(call_answer(b.library_path), 42);
  EXPECT_EQ(entries(), std::set<std::string>{});
}

TEST_F(BuildTest, ConcurrentBuildsPublishOneEntry) {
  BuildRequest req = request("answer");
  std::vector<BuildResult> results(4);
  std::vector<std::string> errors(4);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < results.size(); ++i) {
    threads.emplace_back([&, i] {
      try {
        results[i] = build_library(req);
        // Whoever returns must find a complete entry, never a half-written one.
        if (!fs::exists(fs::path(results[i].library_path).parent_path() / "complete")) errors[i] = "no marker";
      } catch (const std::exception& e) {
        errors[i] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (size_t i = 0; i < results.size(); ++i) {
    EXPECT_EQ(errors[i], "") << "build " << i;
    EXPECT_EQ(results[i].library_path, results[0].library_path);
  }
  // Exactly one build published the entry; the others found it, before compiling or after losing the race.
  EXPECT_EQ(std::count_if(results.begin(), results.end(), [](const BuildResult& r) { return !r.cache_hit; }), 1);
  EXPECT_EQ(entries(), std::set<std::string>{results[0].cache_key});
  EXPECT_EQ(others(), std::set<std::string>{});  // the losers deleted their build directories
  EXPECT_EQ(call_answer(results[0].library_path), 42);
}

TEST_F(BuildTest, ConcurrentProcessesPublishOneEntry) {
  BuildRequest req = request("answer");
  std::vector<pid_t> children;
  for (int i = 0; i < 4; ++i) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {  // the child: no gtest assertions here, only a report file and the exit status
      std::ofstream report(root_ + "/child-" + std::to_string(i));
      try {
        BuildResult r = build_library(req);
        bool complete = fs::exists(fs::path(r.library_path).parent_path() / "complete");
        report << r.library_path << (complete ? "" : " (no marker)");
        report.close();
        _exit(complete ? 0 : 1);
      } catch (const std::exception& e) {
        report << e.what();
        report.close();
        _exit(1);
      }
    }
    children.push_back(pid);
  }
  std::set<std::string> paths;
  for (size_t i = 0; i < children.size(); ++i) {
    int status = 0;
    ASSERT_EQ(waitpid(children[i], &status, 0), children[i]);
    std::string report = slurp(root_ + "/child-" + std::to_string(i));
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child " << i << ": " << report;
    paths.insert(report);
  }
  ASSERT_EQ(paths.size(), 1u);
  EXPECT_EQ(entries().size(), 1u);
  EXPECT_EQ(others(), std::set<std::string>{});
  EXPECT_EQ(call_answer(*paths.begin()), 42);
}

TEST_F(BuildTest, AnEntryWithoutItsMarkerIsRebuilt) {
  BuildResult first = build_library(request("answer"));
  fs::path marker = fs::path(cache_) / first.cache_key / "complete";
  fs::remove(marker);
  BuildResult second = build_library(request("answer"));
  EXPECT_FALSE(second.cache_hit);
  EXPECT_TRUE(fs::exists(marker));
  EXPECT_EQ(call_answer(second.library_path), 42);
}

TEST_F(BuildTest, CompilerErrorPointsAtTheGeneratedLine) {
  std::string broken = "extern \"C\" int answer() {\n  int x = 1;\n  return x + undeclared_name;\n}\n";
  try {
    build_library(request("broken", broken));
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    const Diagnostic& d = e.diagnostic();
    EXPECT_EQ(fs::path(d.file).filename(), "broken.cpp");
    EXPECT_EQ(d.line, 3);
    EXPECT_EQ(d.column, 14);
    EXPECT_EQ(slurp(d.file), broken);  // the failed build is kept for the user to look at
    EXPECT_EQ(d.message.rfind("the generated code does not compile: 'undeclared_name' was not declared", 0), 0u)
        << d.message;
    EXPECT_NE(d.message.find("this is an sdfc bug; please report it with the input file"), std::string::npos);
    EXPECT_NE(d.message.find(fs::path(d.file).parent_path().string()), std::string::npos) << d.message;
    EXPECT_NE(d.message.find("\nbroken.cpp:3:14: error:"), std::string::npos) << d.message;  // the output
    EXPECT_TRUE(fs::exists(fs::path(d.file).parent_path() / "build.log"));
  }
  EXPECT_EQ(entries(), std::set<std::string>{});
}

/// A fake host compiler: a shell script with `body`, made executable in `dir`.
std::string fake_compiler(const std::string& dir, const std::string& body) {
  std::string path = dir + "/fake-c++";
  std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
  ::chmod(path.c_str(), 0755);
  return path;
}

std::string build_error(const BuildRequest& req) {
  try {
    build_library(req);
  } catch (const UserError& e) {
    return e.diagnostic().message;
  }
  return "";
}

// Host links use gold where the driver can link with it, probed once per compiler and remembered;
// $SDFC_LINKER=default keeps the driver's own linker.
TEST_F(BuildTest, HostLinksUseGoldWhereTheDriverCan) {
  std::string log = root_ + "/commands";
  ScopedEnv cxx("SDFC_CXX", fake_compiler(root_, "echo \"$*\" >> " + log + "\nexec c++ \"$@\""));
  EXPECT_EQ(call_answer(build_library(request("answer")).library_path), 42);
  std::string commands = slurp(log);
  std::string link;  // the command that makes the library
  for (std::istringstream lines(commands); std::getline(lines, link);)
    if (link.find("libanswer.so") != std::string::npos) break;
  bool gold = commands.find("probe.cpp") != std::string::npos && link.find("-fuse-ld=gold") != std::string::npos;
  bool driver_links_with_gold =
      std::system("c++ -shared -fPIC -fuse-ld=gold -x c++ /dev/null -o /dev/null 2>/dev/null") == 0;
  EXPECT_EQ(gold, driver_links_with_gold) << commands;
  ASSERT_TRUE(fs::is_directory(fs::path(cache_) / "linkers"));
  fs::remove(log);
  EXPECT_EQ(call_answer(build_library(request("answer_again")).library_path), 42);
  EXPECT_EQ(slurp(log).find("probe.cpp"), std::string::npos);  // remembered, not probed again
  ScopedEnv off("SDFC_LINKER", "default");
  fs::remove(log);
  EXPECT_EQ(call_answer(build_library(request("answer_default")).library_path), 42);
  EXPECT_EQ(slurp(log).find("-fuse-ld"), std::string::npos);
}

// Parallel compiles of one program (GT4Py compiles a run's programs in parallel processes) build it
// once: the others wait for the entry's lock and then find the entry.
TEST_F(BuildTest, ConcurrentBuildsCompileOnce) {
  std::string count = root_ + "/compiles";
  ScopedEnv cxx("SDFC_CXX", fake_compiler(root_, "case \"$*\" in *libanswer.so*) echo x >> " + count +
                                                     ";; esac\nsleep 0.5\nexec c++ \"$@\""));
  BuildRequest req = request("answer");
  std::vector<BuildResult> results(3);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < results.size(); ++i) threads.emplace_back([&, i] { results[i] = build_library(req); });
  for (auto& t : threads) t.join();
  EXPECT_EQ(slurp(count), "x\n");
  EXPECT_EQ(std::count_if(results.begin(), results.end(), [](const BuildResult& r) { return r.cache_hit; }), 2);
  EXPECT_EQ(call_answer(results[2].library_path), 42);
}

TEST_F(BuildTest, AFailedBuildLeavesTheCacheAtOnce) {
  ScopedEnv tmpdir("TMPDIR", root_);
  std::string message = build_error(request("broken", "int f() { return undeclared_name; }\n"));
  ASSERT_NE(message.find("this is an sdfc bug"), std::string::npos) << message;
  EXPECT_EQ(others(), std::set<std::string>{});  // nothing left in the cache, not even for an hour
  bool moved = false;
  for (auto& e : fs::directory_iterator(root_))
    if (e.path().filename().string().rfind("sdfc-failed-broken-", 0) == 0) {
      moved = true;
      EXPECT_TRUE(fs::exists(e.path() / "build.log"));
      EXPECT_NE(message.find(e.path().string()), std::string::npos) << message;
    }
  EXPECT_TRUE(moved);
}

TEST_F(BuildTest, ATimeLimitStopsTheCompilerAndEverythingItStarted) {
  // The fake compiler starts a child that would outlive it; both must be gone after the limit.
  std::string pidfile = root_ + "/child.pid";
  ScopedEnv cxx("SDFC_CXX", fake_compiler(root_, "sleep 60 &\necho $! > " + pidfile + "\nwait"));
  ScopedEnv timeout("SDFC_COMPILER_TIMEOUT_S", "1");
  auto t0 = std::chrono::steady_clock::now();
  std::string message = build_error(request("slow"));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20));
  EXPECT_NE(message.find("fake-c++ ran longer than the time limit (1 s, SDFC_COMPILER_TIMEOUT_S) and was stopped"),
            std::string::npos)
      << message;
  EXPECT_EQ(message.find("sdfc bug"), std::string::npos);
  pid_t child = std::stoi(slurp(pidfile));
  for (int i = 0; i < 100 && ::kill(child, 0) == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_NE(::kill(child, 0), 0) << "the compiler's child survived the time limit";
}

TEST_F(BuildTest, AMemoryLimitBoundsTheCompiler) {
  // global_code of `#include "/dev/zero"` made cc1plus grow to 24 GB; with a limit it stops.
  ScopedEnv memory("SDFC_COMPILER_MEMORY_MB", "256");
  auto t0 = std::chrono::steady_clock::now();
  std::string message = build_error(request("zero", "#include \"/dev/zero\"\n"));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(120));
  // cc1plus stops at the limit; on a machine short of memory the kernel may kill it first.
  EXPECT_TRUE(message.find("ran out of memory (its limit: 256 MB, SDFC_COMPILER_MEMORY_MB)") != std::string::npos ||
              message.find("was killed by a signal") != std::string::npos)
      << message;
  EXPECT_EQ(message.find("sdfc bug"), std::string::npos);
}

TEST_F(BuildTest, SignalsFullDisksAndBadLimitsAreSaidAsSuch) {
  ScopedEnv cxx("SDFC_CXX", fake_compiler(root_, "kill -9 $$"));
  std::string message = build_error(request("killed"));
  EXPECT_NE(message.find("fake-c++ was killed by signal 9"), std::string::npos) << message;
  cxx.set(
      fake_compiler(root_, "echo 'x.o: fatal error: error writing to /tmp/ccX.s: No space left on device'; exit 1"));
  message = build_error(request("full"));
  EXPECT_NE(message.find("the disk is full"), std::string::npos) << message;
  EXPECT_EQ(message.find("sdfc bug"), std::string::npos);
  ScopedEnv bad("SDFC_COMPILER_TIMEOUT_S", "soon");
  message = build_error(request("answer"));
  EXPECT_NE(message.find("SDFC_COMPILER_TIMEOUT_S must be a whole number >= 0 (0: no limit), got 'soon'"),
            std::string::npos)
      << message;
}

TEST_F(BuildTest, LinkErrorNamesTheProgram) {
  BuildRequest req = request("answer");
  req.extra_flags = {"-lsdfc_no_such_library"};
  try {
    build_library(req);
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    const Diagnostic& d = e.diagnostic();
    EXPECT_EQ(fs::path(d.file).filename(), "answer.cpp");
    EXPECT_EQ(d.line, 0);
    EXPECT_NE(d.message.find("sdfc_no_such_library"), std::string::npos) << d.message;
    EXPECT_NE(d.message.find("this is an sdfc bug"), std::string::npos);
  }
}

TEST_F(BuildTest, MissingCompilerSaysHowToSetIt) {
  ScopedEnv cxx("SDFC_CXX", "/no/such/c++");
  try {
    build_library(request("answer"));
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_EQ(e.diagnostic().file, "/no/such/c++");
    EXPECT_NE(e.diagnostic().message.find("set SDFC_CXX"), std::string::npos) << e.what();
  }
}

TEST_F(BuildTest, UnusableCacheDirSaysHowToSetIt) {
  std::ofstream(root_ + "/file") << "not a directory";
  std::string dir = root_ + "/file/cache";
  cache_env_.set(dir);
  try {
    build_library(request("answer"));
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_EQ(e.diagnostic().file, dir);
    EXPECT_NE(e.diagnostic().message.find("cannot create the build cache directory"), std::string::npos) << e.what();
    EXPECT_NE(e.diagnostic().message.find("SDFC_CACHE_DIR"), std::string::npos) << e.what();
  }
}

TEST_F(BuildTest, BadCacheLimitIsRejectedBeforeCompiling) {
  limit_env_.set("lots");
  try {
    build_library(request("answer"));
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_EQ(e.diagnostic().message, "SDFC_CACHE_MAX_MB must be a non-negative number of megabytes, got 'lots'");
  }
  EXPECT_EQ(entries(), std::set<std::string>{});
}

TEST_F(BuildTest, ZeroLimitKeepsOnlyTheNewestEntry) {
  limit_env_.set("0");
  build_library(request("first"));
  BuildResult second = build_library(request("second"));
  EXPECT_EQ(entries(), std::set<std::string>{second.cache_key});
  EXPECT_EQ(others(), std::set<std::string>{});
  EXPECT_EQ(call_answer(second.library_path), 42);
}

TEST_F(BuildTest, EvictionDropsTheLeastRecentlyUsed) {
  BuildResult a = build_library(request("a"));
  BuildResult b = build_library(request("b"));
  BuildResult c = build_library(request("c"));
  // Past the file system's timestamp tick (coarse: a hit right after c's build stamped a with c's
  // time, and the tie fell either way by the entries' names).
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_TRUE(build_library(request("a")).cache_hit);  // a is now the most recently used
  // Room for about two and a half entries of this size: adding d must evict the two oldest, b and c.
  double entry_mb = double(tree_size(fs::path(cache_) / a.cache_key)) / (1024 * 1024);
  limit_env_.set(std::to_string(2.5 * entry_mb));
  BuildResult d = build_library(request("d"));
  EXPECT_EQ(entries(), (std::set<std::string>{a.cache_key, d.cache_key}));
}

TEST_F(BuildTest, PublishingRemovesStaleBuildDirectories) {
  fs::create_directories(cache_ + "/tmp-stale/sub");
  fs::create_directories(cache_ + "/tmp-fresh");
  fs::create_directories(cache_ + "/tmp/private-stale");
  for (const char* old : {"/tmp-stale", "/tmp/private-stale"}) {
    struct timeval times[2] = {{time(nullptr) - 2 * 3600, 0}, {time(nullptr) - 2 * 3600, 0}};
    ASSERT_EQ(utimes((cache_ + old).c_str(), times), 0);
  }
  build_library(request("answer"));
  EXPECT_EQ(others(), (std::set<std::string>{"tmp", "tmp-fresh"}));
  EXPECT_FALSE(fs::exists(cache_ + "/tmp/private-stale"));
}

TEST_F(BuildTest, InstallReplacesTheDestinationAtomically) {
  std::string built = root_ + "/built.so", dest_dir = root_ + "/out", dest = dest_dir + "/libx.so";
  fs::create_directories(dest_dir);
  std::ofstream(built) << "new library";
  chmod(built.c_str(), 0755);
  std::ofstream(dest) << "old library";
  std::ifstream old_reader(dest);  // like a process that loaded the old library

  install_library(built, dest);
  EXPECT_EQ(slurp(dest), "new library");
  mode_t mask = ::umask(022);
  ::umask(mask);
  EXPECT_EQ(fs::status(dest).permissions() & fs::perms::all, fs::perms(0777 & ~mask));  // as a linker writes it
  std::string old_text;
  std::getline(old_reader, old_text);
  EXPECT_EQ(old_text, "old library");  // a new file, not an overwrite
  EXPECT_EQ(std::distance(fs::directory_iterator(dest_dir), fs::directory_iterator()), 1);

  try {
    install_library(built, root_ + "/no/such/dir/libx.so");
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_EQ(e.diagnostic().file, root_ + "/no/such/dir/libx.so");
  }
}

// CI's PATH names /usr/local/bin/nvcc, a two-line script that execs the toolkit's nvcc: the CUDA
// runtime library is not beside the script, and the link must still find it.
TEST_F(BuildTest, CudaLinksWhenNvccIsAWrapperOutsideTheToolkit) {
  std::string nvcc;
  for (const char* candidate : {"/usr/local/cuda/bin/nvcc", "/usr/bin/nvcc"})
    if (::access(candidate, X_OK) == 0) {
      nvcc = candidate;
      break;
    }
  if (nvcc.empty()) GTEST_SKIP() << "nvcc not found";
  fs::create_directories(root_ + "/wrapper/bin");
  std::string wrapper = root_ + "/wrapper/bin/nvcc";
  {
    std::ofstream out(wrapper);
    out << "#!/bin/sh\nexec " << nvcc << " \"$@\"\n";
  }
  ASSERT_EQ(::chmod(wrapper.c_str(), 0755), 0);
  ScopedEnv nvcc_env("SDFC_NVCC", wrapper);
  BuildRequest req;
  req.program_name = "answer_cuda";
  req.sources = {{"answer_cuda.cu",
                  "#include <cuda_runtime.h>\n"
                  "extern \"C\" int answer() { int n = 0; cudaGetDeviceCount(&n); return 42; }\n"}};
  req.key_material = "ir of answer_cuda";
  EXPECT_EQ(call_answer(build_library(req).library_path), 42);
}

// Generated host sources start with the precompiled prelude (the standard headers they read),
// made once per header set, compiler, flags and runtime headers and shared by every later build.
TEST_F(BuildTest, HostSourcesShareOnePrecompiledPrelude) {
  const std::string uses_runtime = "#include \"sdfc/program.h\"\n" + std::string(kAnswer);
  BuildRequest a = request("prelude_a", uses_runtime), b = request("prelude_b", uses_runtime);
  a.include_dirs = b.include_dirs = {sdfc::runtime_include_dir()};
  a.prelude_headers = b.prelude_headers = sdfc::prelude_std_includes(sdfc::core_std_includes(), sdfc::Target::CPU);
  EXPECT_EQ(call_answer(build_library(a).library_path), 42);
  auto preludes = [&] {
    std::vector<std::string> found;
    for (const auto& e : fs::directory_iterator(fs::path(cache_) / "pch"))
      if (fs::exists(e.path() / "sdfc_prelude.h.gch")) found.push_back(e.path().filename().string());
    return found;
  };
  auto first = preludes();
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(call_answer(build_library(b).library_path), 42);
  EXPECT_EQ(preludes(), first);  // reused, not made again
  // Another header set (DaCe's whole environment) has its own; none without a header set.
  BuildRequest full = request("prelude_full", uses_runtime), none = request("prelude_none", uses_runtime);
  full.include_dirs = none.include_dirs = {sdfc::runtime_include_dir()};
  full.prelude_headers = sdfc::prelude_std_includes(sdfc::generated_std_includes(), sdfc::Target::CPU);
  EXPECT_EQ(call_answer(build_library(full).library_path), 42);
  EXPECT_EQ(preludes().size(), 2u);
  EXPECT_EQ(call_answer(build_library(none).library_path), 42);
  EXPECT_EQ(preludes().size(), 2u);
  // Turned off: the build still works and makes none.
  ScopedEnv off("SDFC_NO_PCH", "1");
  fs::remove_all(fs::path(cache_) / "pch");
  BuildRequest c = request("prelude_c", uses_runtime);
  c.include_dirs = {sdfc::runtime_include_dir()};
  c.prelude_headers = sdfc::prelude_std_includes(sdfc::core_std_includes(), sdfc::Target::CPU);
  EXPECT_EQ(call_answer(build_library(c).library_path), 42);
  EXPECT_FALSE(fs::exists(fs::path(cache_) / "pch") && !preludes().empty());
}
