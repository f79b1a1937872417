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

TEST(Cli, CompileEmitsSourcesWithoutACompiler) {
  std::string dir = tmp_path("emit");
  auto r = run({"compile", SDFC_SAMPLES "/axpy.sdfg", "--emit-source", dir, "--stats", "--time-passes"});
  ASSERT_EQ(r.rc, 0) << r.err;
  std::string cpp = slurp(dir + "/axpy.cpp");
  EXPECT_NE(cpp.find("SDFC_EXPORT void __program_axpy(axpy_state_t* __state, double * __restrict__ x, double * __restrict__ y, int N, double a)"),
            std::string::npos);
  EXPECT_NE(slurp(dir + "/axpy.h").find("axpyHandle_t __dace_init_axpy(int N);"), std::string::npos);
  EXPECT_NE(r.err.find("pass normalize"), std::string::npos);
  EXPECT_NE(r.err.find("generated lines"), std::string::npos);
  // The directory may exist already.
  EXPECT_EQ(run({"compile", SDFC_SAMPLES "/axpy.sdfg", "--emit-source", dir}).rc, 0);
}

TEST(Cli, CompileAndRun) {
  std::string lib = tmp_path("libaxpy.so");
  auto r = run({"compile", SDFC_SAMPLES "/axpy.sdfg", "-o", lib});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(std::filesystem::exists(lib));
  std::string inputs = tmp_path("axpy_inputs.json");
  std::ofstream(inputs) << R"({"symbols": {"N": {"dtype": "int32", "value": 3}, "UNUSED": {"value": 1}},
    "scalars": {"a": {"dtype": "float64", "value": 2}},
    "arrays": {"x": {"dtype": "float64", "shape": [3], "data": [1, 2, 3]},
               "y": {"dtype": "float64", "shape": [3], "data": [0.5, 0.5, 0.5]},
               "ignored": {"dtype": "int32", "shape": [1], "data": [7]}}})";
  auto out = run({"run", SDFC_SAMPLES "/axpy.sdfg", "--inputs", inputs});
  ASSERT_EQ(out.rc, 0) << out.err;
  Json j = Json::parse(out.out);
  EXPECT_EQ(j["arrays"]["y"]["data"], Json::array({2.5, 4.5, 6.5}));
  EXPECT_EQ(j["arrays"]["x"]["shape"], Json::array({3}));
}

TEST(Cli, RunRejectsBadBindings) {
  std::string inputs = tmp_path("bad_inputs.json");
  std::ofstream(inputs) << R"({"symbols": {"N": {"value": 3}}, "scalars": {"a": {"value": 2}},
    "arrays": {"x": {"dtype": "float64", "shape": [3], "data": [1, 2, 3]}}})";
  auto r = run({"run", SDFC_SAMPLES "/axpy.sdfg", "--inputs", inputs});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("/arrays: error: missing array argument \"y\" (float64 [N]) of program \"axpy\""), std::string::npos) << r.err;
  std::ofstream(inputs) << R"({"symbols": {"N": {"value": 3}}, "scalars": {"a": {"value": 2}},
    "arrays": {"x": {"dtype": "float64", "shape": [3], "data": [1, 2, 3]},
               "y": {"dtype": "float64", "shape": [3], "data": [1, "two", 3]}}})";
  r = run({"run", SDFC_SAMPLES "/axpy.sdfg", "--inputs", inputs});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("bad_inputs.json: /arrays/y/data/1: error: expected a number but found \"two\""), std::string::npos) << r.err;
  std::ofstream(inputs) << R"({"symbols": {"N": {"value": 3.5}}, "scalars": {"a": {"value": 2}},
    "arrays": {"x": {"dtype": "float64", "shape": [3], "data": [1, 2, 3]},
               "y": {"dtype": "float64", "shape": [3], "data": [1, 2, 3]}}})";
  r = run({"run", SDFC_SAMPLES "/axpy.sdfg", "--inputs", inputs});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("/symbols/N/value: error: value 3.5 does not convert exactly to int32"), std::string::npos) << r.err;
  std::ofstream(inputs) << R"({"symbols": {"N": {"value": 4}}, "scalars": {"a": {"value": 2}},
    "arrays": {"x": {"dtype": "float64", "shape": [3], "data": [1, 2, 3]},
               "y": {"dtype": "float64", "shape": [3], "data": [1, 2, 3]}}})";
  r = run({"run", SDFC_SAMPLES "/axpy.sdfg", "--inputs", inputs});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("array argument \"x\" of program \"axpy\" has 3 elements, but its shape [N] needs 4"), std::string::npos) << r.err;
}

TEST(Cli, CompileUsageErrors) {
  EXPECT_EQ(run({"compile"}).rc, 2);
  EXPECT_EQ(run({"compile", "x.sdfg"}).rc, 2);  // neither -o nor --emit-source
  auto r = run({"compile", "x.sdfg", "-o", "x.so", "--gpu-streams", "-1"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("--gpu-streams must be 0 or more, not -1"), std::string::npos);
  r = run({"compile", "x.sdfg", "-o", "x.so", "--print-after=frobnicate"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("unknown pass 'frobnicate'; passes: normalize"), std::string::npos) << r.err;
  EXPECT_EQ(run({"compile", "x.sdfg", "-o", "x.so", "--target", "fpga"}).rc, 2);
  EXPECT_EQ(run({"run", "x.sdfg"}).rc, 2);  // --inputs missing
  auto missing = run({"compile", "/nonexistent.sdfg", "-o", tmp_path("x.so")});
  EXPECT_EQ(missing.rc, 1);
}

TEST(Cli, PrintAfterShowsTheDecisions) {
  auto r = run({"compile", SDFC_SAMPLES "/axpy.sdfg", "--emit-source", tmp_path("pa"), "--print-after=normalize"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("// IR after normalize"), std::string::npos);
  EXPECT_NE(r.out.find("schedule=CPU_Multicore"), std::string::npos);
  EXPECT_NE(r.out.find("storage=CPU_Heap"), std::string::npos);
}
