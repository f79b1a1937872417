#include "compiler/Cli.h"

#include <unistd.h>

#include <filesystem>
#include <sstream>

#include "TestUtil.h"

using namespace sdfc;
using namespace sdfc::test;

namespace {
struct Result {
  int rc;
  std::string out, err;
};
Result run(std::vector<std::string> args) {
  args.insert(args.begin(), "sdfc");
  std::vector<const char*> argv;
  for (auto& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  int rc = run_cli(static_cast<int>(argv.size()), argv.data(), out, err);
  return {rc, out.str(), err.str()};
}
std::string tmp_path(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("sdfc_cli_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}
}  // namespace

TEST(Cli, HelpAndVersion) {
  auto r = run({"--help"});
  EXPECT_EQ(r.rc, 0);
  EXPECT_NE(r.out.find("usage: sdfc <command>"), std::string::npos);
  for (const char* cmd : {"validate", "print", "convert"}) {
    auto h = run({cmd, "--help"});
    EXPECT_EQ(h.rc, 0) << cmd;
    EXPECT_NE(h.out.find(std::string("usage: sdfc ") + cmd), std::string::npos) << cmd;
    EXPECT_EQ(run({"help", cmd}).out, h.out);
  }
  auto v = run({"--version"});
  EXPECT_EQ(v.rc, 0);
  EXPECT_EQ(v.out.rfind("sdfc ", 0), 0u);
}

TEST(Cli, UsageErrorsExitWithTwo) {
  EXPECT_EQ(run({}).rc, 2);
  auto r = run({"frobnicate"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("sdfc: unknown command 'frobnicate'"), std::string::npos);
  EXPECT_EQ(run({"validate"}).rc, 2);
  EXPECT_EQ(run({"validate", "--strict", "x.sdfg"}).rc, 2);
  EXPECT_EQ(run({"print", "a", "b"}).rc, 2);
  EXPECT_EQ(run({"convert", "a"}).rc, 2);
  EXPECT_EQ(run({"convert", "a", "b", "--indent"}).rc, 2);
}

TEST(Cli, ValidateReportsEachFile) {
  auto r = run({"validate", data_path("small.sdfg"), data_path("truncated.sdfg")});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find("small.sdfg: ok"), std::string::npos);
  EXPECT_NE(r.err.find("truncated.sdfg:1:58: error: malformed JSON"), std::string::npos) << r.err;
  auto missing = run({"validate", "/nonexistent.sdfg"});
  EXPECT_EQ(missing.rc, 1);
  EXPECT_EQ(missing.err, "/nonexistent.sdfg: /: error: cannot open the file (does it exist and is it readable?)\n");
}

TEST(Cli, ValidatePrintsOneLinePerProblem) {
  Json j = load_json("small.sdfg");
  j["nodes"][0]["nodes"][4]["attributes"]["data"] = "C";
  j["edges"][1]["dst"] = "9";
  std::string path = tmp_path("two_problems.sdfg");
  std::ofstream(path) << j.dump();
  auto r = run({"validate", path});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 2);
}

TEST(Cli, PrintDumpsTheIR) {
  auto r = run({"print", data_path("small.sdfg")});
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.out.rfind("sdfg small (dace 2.0.0a6)\n", 0), 0u);
  EXPECT_NE(r.out.find("loop 1 \"lp\" while (it: it = 0; (it < 3); it = (it + 1))"), std::string::npos) << r.out;
}

TEST(Cli, ConvertIsDeterministicAndAtomic) {
  std::string a = tmp_path("a.sdfg"), b = tmp_path("b.sdfg"), z = tmp_path("c.sdfgz"), c = tmp_path("c.sdfg");
  ASSERT_EQ(run({"convert", data_path("small.sdfg"), a}).rc, 0);
  ASSERT_EQ(run({"convert", a, b}).rc, 0);
  EXPECT_EQ(slurp(a), slurp(b));
  ASSERT_EQ(run({"convert", a, z}).rc, 0);
  EXPECT_EQ(static_cast<unsigned char>(slurp(z)[0]), 0x1f);  // gzip
  ASSERT_EQ(run({"convert", z, c}).rc, 0);
  EXPECT_EQ(slurp(c), slurp(a));
  // An invalid input leaves an existing output untouched
  std::string before = slurp(b);
  auto r = run({"convert", data_path("truncated.sdfg"), b});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(slurp(b), before);
  // Unwritable destination
  auto w = run({"convert", a, "/nonexistent-dir/out.sdfg"});
  EXPECT_EQ(w.rc, 1);
  EXPECT_NE(w.err.find("cannot write the output file"), std::string::npos);
}
