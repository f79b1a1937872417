// Outputs (compiler/Output.h): atomic replacement of regular files, links followed, devices and
// FIFOs written through and never replaced, every failure an error with nothing half-written.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <csignal>
#include <filesystem>
#include <functional>
#include <thread>

#include "TestUtil.h"
#include "compiler/Output.h"

using namespace sdfc;
using namespace sdfc::test;
namespace fs = std::filesystem;

namespace {

class OutputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("sdfc_output_test_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  /// Files in the test directory whose name says they are sdfc's temporaries.
  int temporaries() const {
    int n = 0;
    for (auto& e : fs::directory_iterator(dir_)) n += e.path().filename().string().find(".sdfc-") != std::string::npos;
    return n;
  }
  fs::path dir_;
};

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.diagnostic().str();
  }
  return "";
}

mode_t mode_of(const std::string& p) {
  struct stat st {};
  ::stat(p.c_str(), &st);
  return st.st_mode;
}

}  // namespace

TEST_F(OutputTest, NewFilesTakeTheUmaskAndReplacedFilesKeepTheirMode) {
  std::string p = path("out.json");
  write_output(p, "first");
  EXPECT_EQ(slurp(p), "first");
  mode_t mask = ::umask(022);
  ::umask(mask);
  EXPECT_EQ(mode_of(p) & 0777, 0666 & ~mask);
  ::chmod(p.c_str(), 0640);
  write_output(p, "second");
  EXPECT_EQ(slurp(p), "second");
  EXPECT_EQ(mode_of(p) & 0777, 0640u);
  OutputOptions lib;
  lib.executable = true;
  write_output(path("libx.so"), "ELF", lib);
  EXPECT_EQ(mode_of(path("libx.so")) & 0777, 0777 & ~mask);
  EXPECT_EQ(temporaries(), 0);
}

TEST_F(OutputTest, LinksAreFollowedAndStayLinks) {
  std::string target = path("target.sdfg"), link = path("link.sdfg");
  write_output(target, "old");
  fs::create_symlink(target, link);
  write_output(link, "new");
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(slurp(target), "new");
  EXPECT_EQ(temporaries(), 0);
}

TEST_F(OutputTest, FifosAreWrittenThroughNotReplaced) {
  std::string fifo = path("pipe");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string received;
  std::thread reader([&] { received = slurp(fifo); });
  write_output(fifo, "through the pipe");
  reader.join();
  EXPECT_EQ(received, "through the pipe");
  EXPECT_TRUE(S_ISFIFO(mode_of(fifo)));
  EXPECT_TRUE(writes_through(fifo));
}

TEST_F(OutputTest, DeviceNodesAreNeverReplaced) {
  // A full device: the write fails, is reported, and the device is still a device.
  std::string full = error_of([] { write_output("/dev/full", std::string(100000, 'x')); });
  EXPECT_NE(full.find("/dev/full: /: error: cannot write the output file: No space left on device"), std::string::npos)
      << full;
  EXPECT_TRUE(S_ISCHR(mode_of("/dev/full")));
  // A scratch null device of the test's own (needs root to make).
  std::string node = path("null");
  if (::mknod(node.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) GTEST_SKIP() << "cannot make a device node (not root)";
  write_output(node, "a shared library, say");
  EXPECT_TRUE(S_ISCHR(mode_of(node)));
  EXPECT_EQ(temporaries(), 0);
}

TEST_F(OutputTest, DirectoriesAreErrors) {
  std::string e = error_of([&] { write_output(dir_.string(), "x"); });
  EXPECT_NE(e.find("cannot write the output file: Is a directory"), std::string::npos) << e;
  e = error_of([&] { write_output(path("missing/out.json"), "x"); });
  EXPECT_NE(e.find("cannot write the output file: cannot create a file in"), std::string::npos) << e;
}

TEST_F(OutputTest, AFailedWriteLeavesTheOldFileAndNoTemporary) {
  // The disk "fills up" after 64 bytes (a file size limit, in a child process).
  std::string p = path("result.json");
  write_output(p, "old contents");
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::signal(SIGXFSZ, SIG_IGN);
    rlimit lim{64, 64};
    ::setrlimit(RLIMIT_FSIZE, &lim);
    std::string e = error_of([&] { write_output(p, std::string(4096, 'y')); });
    ::_exit(e.find("cannot write the output file: File too large") != std::string::npos ? 0 : 1);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(slurp(p), "old contents");
  EXPECT_EQ(temporaries(), 0);
}

TEST_F(OutputTest, GzipRoundTrips) {
  std::string p = path("x.sdfgz"), text(50000, 'q');
  OutputOptions o;
  o.gzip = true;
  write_output(p, text, o);
  gzFile f = gzopen(p.c_str(), "rb");
  ASSERT_NE(f, nullptr);
  std::string back(text.size() + 10, '\0');
  int n = gzread(f, back.data(), static_cast<unsigned>(back.size()));
  gzclose(f);
  back.resize(static_cast<std::size_t>(std::max(n, 0)));
  EXPECT_EQ(back, text);
}
