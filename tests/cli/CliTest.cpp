#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "TestUtil.h"
#include "clang_tools/Format.h"
#include "clang_tools/TaskletCheck.h"
#include "compiler/Build.h"
#include "compiler/Cli.h"
#include "ir/Builder.h"
#include "ir/Dot.h"
#include "ir/Options.h"
#include "passes/Pipeline.h"

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
  for (const char* cmd : {"validate", "print", "convert", "compile", "dot", "options", "opt"}) {
    auto h = run({cmd, "--help"});
    EXPECT_EQ(h.rc, 0) << cmd;
    EXPECT_NE(h.out.find(std::string("usage: sdfc ") + cmd), std::string::npos) << cmd;
    EXPECT_EQ(run({"help", cmd}).out, h.out);
  }
  auto v = run({"--version"});
  EXPECT_EQ(v.rc, 0);
  EXPECT_EQ(v.out.rfind("sdfc ", 0), 0u);
}

TEST(Cli, EveryOptionOfTheTableIsInTheHelpOfCompileRunAndDotAndInOptionsJson) {
  for (const char* cmd : {"compile", "run", "dot"}) {
    auto h = run({"help", cmd});
    for (auto& o : option_table()) EXPECT_NE(h.out.find(std::string("  ") + o.flag), std::string::npos) << cmd;
  }
  auto r = run({"options", "--json"});
  ASSERT_EQ(r.rc, 0) << r.err;
  auto json = nlohmann::json::parse(r.out);
  ASSERT_EQ(json.size(), option_table().size());
  CompileOptions defaults;
  for (std::size_t i = 0; i < json.size(); ++i) {
    const OptionSpec& o = option_table()[i];
    EXPECT_EQ(json[i]["name"], o.name);
    EXPECT_EQ(json[i]["flag"], o.flag);
    EXPECT_EQ(json[i]["kind"], to_string(o.kind));
    EXPECT_EQ(json[i]["default"], o.get(defaults));
    EXPECT_EQ(json[i]["values"].size(), o.values.size());
  }
  EXPECT_EQ(run({"options", "--yaml"}).rc, 2);
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
  r = run({"print", "--bogus"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("sdfc print: unknown option '--bogus'"), std::string::npos) << r.err;
  r = run({"--version", "extra"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("sdfc --version: unexpected argument 'extra'"), std::string::npos) << r.err;
  // After "--" every argument is a file, also one that starts with '-'
  r = run({"validate", "--", data_path("small.sdfg")});
  EXPECT_EQ(r.rc, 0) << r.err;
  r = run({"validate", "--", "-odd-name.sdfg"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("-odd-name.sdfg: /: error: cannot open the file"), std::string::npos) << r.err;
  EXPECT_EQ(run({"print", "--", data_path("small.sdfg")}).rc, 0);
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

TEST(Cli, ValidateTranslatesPythonTasklets) {
  // validate reports the tasklet errors compile would (before: only compile found them, while
  // printing code). A tasklet that uses an unknown function and one that imports a module:
  Json j = load_json("small.sdfg");
  j["nodes"][0]["nodes"][2]["attributes"]["code"]["string_data"] = "b = math.frobnicate(a)";
  std::string path = tmp_path("bad_tasklet.sdfg");
  std::ofstream(path) << j.dump();
  auto r = run({"validate", path});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, path +
                       ": /nodes/0/nodes/2/attributes/code: error: unsupported function 'math.frobnicate' in tasklet "
                       "line 1; expected a math function (such as math.sqrt or exp), abs, min, max, pow or a cast "
                       "(such as float or dace.float32)\n");
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
  std::string upper = tmp_path("C.SDFGZ");
  ASSERT_EQ(run({"convert", a, upper}).rc, 0);
  EXPECT_EQ(static_cast<unsigned char>(slurp(upper)[0]), 0x1f);  // the extension in any case
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
  // A FIFO is written through, not replaced.
  std::string fifo = tmp_path("convert.fifo");
  std::filesystem::remove(fifo);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string received;
  std::thread reader([&] { received = slurp(fifo); });
  EXPECT_EQ(run({"convert", a, fifo}).rc, 0);
  reader.join();
  EXPECT_EQ(received, slurp(a));
  EXPECT_TRUE(std::filesystem::is_fifo(fifo));
}

TEST(Cli, CompileEmitsSourcesWithoutACompiler) {
  std::string dir = tmp_path("emit");
  auto r = run({"compile", SDFC_SAMPLES "/axpy.sdfg", "--emit-source", dir, "--stats", "--time-passes"});
  ASSERT_EQ(r.rc, 0) << r.err;
  std::string cpp = slurp(dir + "/axpy.cpp");
  EXPECT_NE(cpp.find("SDFC_EXPORT void __program_axpy(axpy_state_t* __state, double * __restrict__ x, double * "
                     "__restrict__ y, int N, double a)"),
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
  // NaN and infinities come back as the strings run reads (JSON has no such numbers).
  std::string special = tmp_path("axpy_special.json");
  std::ofstream(special) << R"({"symbols": {"N": {"dtype": "int32", "value": 3}},
    "scalars": {"a": {"dtype": "float64", "value": 1}},
    "arrays": {"x": {"dtype": "float64", "shape": [3], "data": ["NaN", "Infinity", "-Infinity"]},
               "y": {"dtype": "float64", "shape": [3], "data": [0, 0, 0]}}})";
  out = run({"run", SDFC_SAMPLES "/axpy.sdfg", "--inputs", special});
  ASSERT_EQ(out.rc, 0) << out.err;
  j = Json::parse(out.out);
  EXPECT_EQ(j["arrays"]["y"]["data"], Json::array({"NaN", "Infinity", "-Infinity"}));
  // Results on a full disk are an error, not an empty success.
  out = run({"run", SDFC_SAMPLES "/axpy.sdfg", "--inputs", inputs, "--output", "/dev/full"});
  EXPECT_EQ(out.rc, 1);
  EXPECT_NE(out.err.find("/dev/full: /: error: cannot write the output file: No space left on device"),
            std::string::npos)
      << out.err;
}

TEST(Cli, RunRejectsBadBindings) {
  std::string inputs = tmp_path("bad_inputs.json");
  std::ofstream(inputs) << R"({"symbols": {"N": {"value": 3}}, "scalars": {"a": {"value": 2}},
    "arrays": {"x": {"dtype": "float64", "shape": [3], "data": [1, 2, 3]}}})";
  auto r = run({"run", SDFC_SAMPLES "/axpy.sdfg", "--inputs", inputs});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("/arrays: error: missing array argument \"y\" (float64 [N]) of program \"axpy\""),
            std::string::npos)
      << r.err;
  std::ofstream(inputs) << R"({"symbols": {"N": {"value": 3}}, "scalars": {"a": {"value": 2}},
    "arrays": {"x": {"dtype": "float64", "shape": [3], "data": [1, 2, 3]},
               "y": {"dtype": "float64", "shape": [3], "data": [1, "two", 3]}}})";
  r = run({"run", SDFC_SAMPLES "/axpy.sdfg", "--inputs", inputs});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("bad_inputs.json: /arrays/y/data/1: error: expected a number but found \"two\""),
            std::string::npos)
      << r.err;
  std::ofstream(inputs) << R"({"symbols": {"N": {"value": 3.5}}, "scalars": {"a": {"value": 2}},
    "arrays": {"x": {"dtype": "float64", "shape": [3], "data": [1, 2, 3]},
               "y": {"dtype": "float64", "shape": [3], "data": [1, 2, 3]}}})";
  r = run({"run", SDFC_SAMPLES "/axpy.sdfg", "--inputs", inputs});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("/symbols/N/value: error: value 3.5 does not convert exactly to int32"), std::string::npos)
      << r.err;
  std::ofstream(inputs) << R"({"symbols": {"N": {"value": 4}}, "scalars": {"a": {"value": 2}},
    "arrays": {"x": {"dtype": "float64", "shape": [3], "data": [1, 2, 3]},
               "y": {"dtype": "float64", "shape": [3], "data": [1, 2, 3]}}})";
  r = run({"run", SDFC_SAMPLES "/axpy.sdfg", "--inputs", inputs});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("bad_inputs.json: /arrays/x: error: array argument \"x\" of program \"axpy\" has 3 elements, "
                       "but its shape [N] needs 4"),
            std::string::npos)
      << r.err;
  // An entry must agree with itself: its shape with its data, its values with its own dtype.
  std::ofstream(inputs) << R"({"symbols": {"N": {"value": 3}}, "scalars": {"a": {"value": 2}},
    "arrays": {"x": {"dtype": "float64", "shape": [2], "data": [1, 2, 3]},
               "y": {"dtype": "float64", "shape": [3], "data": [1, 2, 3]}}})";
  r = run({"run", SDFC_SAMPLES "/axpy.sdfg", "--inputs", inputs});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("bad_inputs.json: /arrays/x/shape: error: shape [2] has 2 elements but \"data\" has 3"),
            std::string::npos)
      << r.err;
  std::ofstream(inputs) << R"({"symbols": {"N": {"value": 3}}, "scalars": {"a": {"value": 2}},
    "arrays": {"x": {"dtype": "float64", "shape": [3], "data": [1, 2, 3]},
               "y": {"dtype": "int32", "shape": [3], "data": [1, 2.5, 3]}}})";
  r = run({"run", SDFC_SAMPLES "/axpy.sdfg", "--inputs", inputs});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("bad_inputs.json: /arrays/y/data/1: error: value 2.5 does not convert exactly to int32"),
            std::string::npos)
      << r.err;
  std::ofstream(inputs) << R"({"symbols": {"N": {"value": 3}}, "scalars": {"a": {"value": 2}},
    "arrays": {"x": {"dtype": "float64", "shape": [3], "data": [1, 2, 3]},
               "y": {"dtype": "double", "shape": [3], "data": [1, 2, 3]}}})";
  r = run({"run", SDFC_SAMPLES "/axpy.sdfg", "--inputs", inputs});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("bad_inputs.json: /arrays/y/dtype: error: unknown dtype \"double\""), std::string::npos)
      << r.err;
  // int32 values in a float64 argument convert exactly: accepted.
  std::ofstream(inputs) << R"({"symbols": {"N": {"value": 3}}, "scalars": {"a": {"value": 2}},
    "arrays": {"x": {"dtype": "float64", "shape": [3], "data": [1, 2, 3]},
               "y": {"dtype": "int32", "shape": [3], "data": [1, 2, 3]}}})";
  r = run({"run", SDFC_SAMPLES "/axpy.sdfg", "--inputs", inputs});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("\"y\": {\"dtype\": \"float64\", \"shape\": [3], \"data\": [3.0, 6.0, 9.0]}"), std::string::npos)
      << r.out;
}

TEST(Cli, DaceLayoutWritesDaceProgramFolder) {
  std::string dir = tmp_path("dace_layout");
  auto r = run({"compile", SDFC_SAMPLES "/axpy.sdfg", "--dace-layout", dir});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(slurp(dir + "/FOLDER_MODE"), "development\n");
  EXPECT_EQ(slurp(dir + "/program.sdfg"), slurp(SDFC_SAMPLES "/axpy.sdfg"));
  EXPECT_TRUE(std::filesystem::is_regular_file(dir + "/build/libaxpy.so"));
  EXPECT_TRUE(std::filesystem::is_regular_file(dir + "/build/libdacestub_axpy.so"));
  EXPECT_NE(slurp(dir + "/src/cpu/axpy.cpp").find("#define SDFC_REPORT_REFUSALS 1"), std::string::npos);
  EXPECT_NE(slurp(dir + "/include/axpy.h").find("__dace_init_axpy"), std::string::npos);
  // The stub exports what DaCe's ReloadableDLL calls, and loads the program through it.
  void* stub = dlopen((dir + "/build/libdacestub_axpy.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(stub, nullptr) << dlerror();
  auto load = reinterpret_cast<void* (*)(const char*)>(dlsym(stub, "load_library"));
  auto loaded = reinterpret_cast<int (*)(const char*)>(dlsym(stub, "is_library_loaded"));
  auto symbol = reinterpret_cast<void* (*)(void*, const char*)>(dlsym(stub, "get_symbol"));
  auto unload = reinterpret_cast<void (*)(void*)>(dlsym(stub, "unload_library"));
  ASSERT_TRUE(load && loaded && symbol && unload);
  std::string lib = std::filesystem::canonical(dir + "/build/libaxpy.so").string();
  EXPECT_EQ(loaded(nullptr), -1);
  EXPECT_EQ(loaded(lib.c_str()), 0);
  void* h = load(lib.c_str());
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(loaded(lib.c_str()), 1);
  EXPECT_NE(symbol(h, "__program_axpy"), nullptr);
  EXPECT_EQ(symbol(h, "no_such_symbol"), nullptr);
  EXPECT_EQ(symbol(nullptr, "__program_axpy"), nullptr);
  unload(h);
  dlclose(stub);
  // A plain library is built without the stderr report (a different cache entry).
  std::string emit = tmp_path("dace_layout_plain");
  ASSERT_EQ(run({"compile", SDFC_SAMPLES "/axpy.sdfg", "--emit-source", emit}).rc, 0);
  EXPECT_EQ(slurp(emit + "/axpy.cpp").find("SDFC_REPORT_REFUSALS"), std::string::npos);
  // A layout directory that is a file is an error naming it; a missing directory a usage error.
  std::string file = tmp_path("dace_layout_file");
  std::ofstream(file) << "x";
  r = run({"compile", SDFC_SAMPLES "/axpy.sdfg", "--dace-layout", file});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find(file), std::string::npos) << r.err;
  EXPECT_EQ(run({"compile", SDFC_SAMPLES "/axpy.sdfg", "--dace-layout"}).rc, 2);
}

TEST(Cli, CompileUsageErrors) {
  EXPECT_EQ(run({"compile"}).rc, 2);
  EXPECT_EQ(run({"compile", "x.sdfg"}).rc, 2);  // neither -o nor --emit-source
  auto r = run({"compile", "x.sdfg", "-o", "x.so", "--gpu-streams", "-1"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("--gpu-streams must be 0 or more, not -1"), std::string::npos);
  r = run({"compile", "x.sdfg", "-o", "x.so", "--print-after=frobnicate"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("unknown pass 'frobnicate'; passes: expand-library-nodes, fold-views, normalize"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(run({"compile", "x.sdfg", "-o", "x.so", "--target", "fpga"}).rc, 2);
  r = run({"compile", "x.sdfg", "-o", "x.so", "--blas", "mkl"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("--blas must be pure or vendor, not 'mkl'"), std::string::npos) << r.err;
  r = run({"compile", "x.sdfg", "-o", "x.so", "--gpu-streams=2000"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("--gpu-streams must be at most 1024, not 2000"), std::string::npos) << r.err;
  r = run({"compile", "x.sdfg", "-o", "x.so", "--fuse-maps=yes"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("--fuse-maps takes no value"), std::string::npos) << r.err;
  EXPECT_EQ(run({"run", "x.sdfg"}).rc, 2);  // --inputs missing
  auto missing = run({"compile", "/nonexistent.sdfg", "-o", tmp_path("x.so")});
  EXPECT_EQ(missing.rc, 1);
}

TEST(Cli, OptRunsNamedPassesAndCompileGoesOnFromItsIrFile) {
  auto list = run({"opt", "--list"});
  ASSERT_EQ(list.rc, 0) << list.err;
  for (auto& name : pass_names()) EXPECT_NE(list.out.find(name), std::string::npos) << name;
  EXPECT_NE(list.out.find("decides: Node::kernel (KernelPlan)"), std::string::npos) << list.out;

  // The first three passes, then the rest from the IR file: the same program as one compile.
  std::string input = SDFC_CODEGEN_TESTS "/cuda/fused_chain.sdfg", ir = tmp_path("chain.ir.sdfg");
  auto r = run({"opt", input, "--passes=expand-library-nodes,fold-views,normalize", "--target", "cuda", "--gpu-streams",
                "2", "-o", ir});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "");
  r = run({"opt", ir, "--passes", "fuse-maps,transient-lifetimes", "--print-after=transient-lifetimes"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out.rfind("// IR after transient-lifetimes\n", 0), 0u) << r.out;
  std::string whole = tmp_path("whole"), resumed = tmp_path("resumed");
  ASSERT_EQ(run({"compile", input, "--target", "cuda", "--gpu-streams", "2", "--emit-source", whole}).rc, 0);
  r = run({"compile", ir, "--emit-source", resumed});
  ASSERT_EQ(r.rc, 0) << r.err;
  for (const char* f : {"/chain4.cu", "/chain4.cpp"}) {
    std::string a = slurp(whole + f), b = slurp(resumed + f);
    // Past the first line, which names the input file.
    EXPECT_EQ(a.substr(a.find('\n')), b.substr(b.find('\n'))) << f;
  }

  // What opt refuses, and why.
  r = run({"opt", ir, "--passes=normalize"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("pass \"normalize\" has already run on this IR"), std::string::npos) << r.err;
  r = run({"opt", ir, "--passes=synchronization"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("needs \"stream-assignment\""), std::string::npos) << r.err;
  r = run({"opt", ir, "--passes=fuse-maps", "--target", "cpu"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("ran with other options (--target cuda, --gpu-streams 2)"), std::string::npos) << r.err;
  r = run({"compile", ir, "--emit-source", resumed, "--gpu-streams", "3"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("sdfc compile takes its options from the file"), std::string::npos) << r.err;
  EXPECT_EQ(run({"opt", input}).rc, 2);               // no --passes
  EXPECT_EQ(run({"opt", "--list", input}).rc, 2);     // --list takes no file
  EXPECT_EQ(run({"opt", input, "--passes="}).rc, 2);  // no pass named
  r = run({"run", ir, "--inputs", SDFC_SAMPLES "/axpy_inputs.json"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("this is an sdfc IR file"), std::string::npos) << r.err;
  // Commands that read DaCe files refuse it (convert would drop its decisions, dot would run its
  // passes again); print shows it with its decisions.
  for (std::vector<std::string> cmd : {std::vector<std::string>{"convert", ir, tmp_path("c.sdfg")},
                                       {"validate", ir},
                                       {"dot", ir, "-o", tmp_path("c.dot")}}) {
    r = run(cmd);
    EXPECT_EQ(r.rc, 1) << cmd[0];
    EXPECT_NE(r.err.find("give sdfc " + cmd[0] + " the DaCe file"), std::string::npos) << r.err;
  }
  std::string later = tmp_path("chain.streams.sdfg");
  ASSERT_EQ(run({"opt", ir, "--passes=fuse-maps,transient-lifetimes,stream-assignment", "-o", later}).rc, 0);
  {  // a header naming passes out of order (an edited file)
    std::string text = slurp(later);
    auto at = text.find("\"normalize\",");
    ASSERT_NE(at, std::string::npos);
    text.erase(at, std::string("\"normalize\",").size());
    std::string edited = tmp_path("edited.sdfg");
    std::ofstream(edited) << text;
    r = run({"compile", edited, "--emit-source", tmp_path("edited")});
    EXPECT_EQ(r.rc, 1);
    EXPECT_NE(
        r.err.find("/sdfc/passes: error: the passes this IR file records: pass \"fuse-maps\" needs \"normalize\""),
        std::string::npos)
        << r.err;
  }
  r = run({"print", later});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("stream=0"), std::string::npos) << r.out;
}

TEST(Cli, PrintAfterShowsTheDecisions) {
  auto r = run({"compile", SDFC_SAMPLES "/axpy.sdfg", "--emit-source", tmp_path("pa"), "--print-after=normalize"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("// IR after normalize"), std::string::npos);
  EXPECT_NE(r.out.find("schedule=CPU_Multicore"), std::string::npos);
  EXPECT_NE(r.out.find("storage=CPU_Heap"), std::string::npos);
}

namespace {
/// A program whose CPP tasklet's code holds every character DOT labels must escape.
std::string tricky_labels_sdfg() {
  SDFGBuilder b("tricky");
  b.symbol("N", DType::Int64).array("A", DType::Float64, {"N"}).array("B", DType::Float64, {"N"});
  auto s = b.state("compute \"quoted\" <state>");
  s.mapped_tasklet("t{1}", {{"i", "0:N"}}, {{"a", "A[i]"}},
                   "// \"quoted\" <tag> {braces} | back\\slash \\n \\l\nb = a < 1.0 ? a : -a;", {{"b", "B[i]"}});
  for (auto& n : s.state().nodes)
    if (n->kind == NodeKind::Tasklet) n->code.language = Language::CPP;
  return write_sdfg(*b.build());
}

bool have_dot() {
  return run_process({"dot", "-V"}).status == 0;
}
}  // namespace

TEST(Dot, EscapesLabels) {
  EXPECT_EQ(dot_escape("a \"b\" <c> {d} \\e"), "a \\\"b\\\" <c> {d} \\\\e");
  EXPECT_EQ(dot_escape("x\ny\n", "\\l"), "x\\ly\\l");
  EXPECT_EQ(dot_escape("tab\there"), "tab    here");
}

TEST(Dot, WritesAValidGraphThatGraphvizRenders) {
  std::string in = tmp_path("tricky.sdfg"), out = tmp_path("tricky.dot"), svg = tmp_path("tricky.svg");
  std::ofstream(in) << tricky_labels_sdfg();
  auto r = run({"dot", in, "-o", out});
  ASSERT_EQ(r.rc, 0) << r.err;
  std::string text = slurp(out);
  EXPECT_EQ(text.rfind("digraph \"tricky\" {", 0), 0u) << text.substr(0, 200);
  EXPECT_NE(text.find("label=\"state compute \\\"quoted\\\" <state>\""), std::string::npos) << text;
  EXPECT_NE(text.find("// \\\"quoted\\\" <tag> {braces} | back\\\\slash \\\\n \\\\l\\l"), std::string::npos) << text;
  if (!have_dot()) GTEST_SKIP() << "Graphviz's dot is not installed: the DOT text is not rendered";
  auto rendered = run_process({"dot", "-Tsvg", "-o", svg, out});
  EXPECT_EQ(rendered.status, 0) << rendered.output;
  EXPECT_EQ(rendered.output, "");  // no warnings either
  std::string image = slurp(svg);
  EXPECT_NE(image.find("&lt;tag&gt; {braces} | back\\slash \\n \\l"), std::string::npos) << image;
  // sdfc renders SVG itself too.
  std::string direct = tmp_path("direct.svg");
  auto r2 = run({"dot", in, "-o", direct});
  ASSERT_EQ(r2.rc, 0) << r2.err;
  EXPECT_NE(slurp(direct).find("<svg"), std::string::npos);
}

TEST(Dot, ColoursGpuWorkByStreamAfterThePasses) {
  std::string corpus = corpus_dir();
  if (corpus.empty()) GTEST_SKIP() << "corpus not found (SDFC_CORPUS)";
  std::string in = corpus + "/cond_datadep_s/program_gpu.sdfg";
  auto r = run({"dot", in, "--target", "cuda", "-o", "-"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("label=\"kernel sum_x_map[0:N] (GPU_Device), stream 0\";"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("xlabel=\"copy, stream 0\""), std::string::npos);
  EXPECT_NE(r.out.find("host sync before the conditions\\nwaits for stream 0"), std::string::npos);
  EXPECT_NE(r.out.find("return: host waits for all GPU work"), std::string::npos);
  EXPECT_NE(r.out.find("subgraph cluster_legend"), std::string::npos);
  // Before the stream and synchronization passes nothing is decided yet.
  auto before = run({"dot", in, "--target", "cuda", "--after=normalize", "-o", "-"});
  ASSERT_EQ(before.rc, 0) << before.err;
  EXPECT_EQ(before.out.find("stream 0"), std::string::npos);
  EXPECT_EQ(before.out.find("host sync"), std::string::npos);
  if (!have_dot()) GTEST_SKIP() << "Graphviz's dot is not installed";
  std::string out = tmp_path("gpu.dot");
  ASSERT_EQ(run({"dot", in, "--target", "cuda", "-o", out}).rc, 0);
  auto rendered = run_process({"dot", "-Tsvg", "-o", tmp_path("gpu.svg"), out});
  EXPECT_EQ(rendered.status, 0) << rendered.output;
  EXPECT_EQ(rendered.output, "");
}

TEST(Dot, DrawsEventsForkJoinAndEntryExitWithSeveralStreams) {
  std::string corpus = corpus_dir();
  if (corpus.empty()) GTEST_SKIP() << "corpus not found (SDFC_CORPUS)";
  std::string in = corpus + "/forkjoin2x2_s/program_gpu.sdfg";
  auto r = run({"dot", in, "--target", "cuda", "--gpu-streams", "2", "-o", "-"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("kernel v_second_map[0:N, 0:M] (GPU_Device), stream 1"), std::string::npos) << r.out;
  // The event v_second_map records (stream 1's colour) and merge_map's stream waits for.
  EXPECT_NE(
      r.out.find("[style=dashed, constraint=false, color=\"#ff7f0e\", fontcolor=\"#ff7f0e\", label=\"event 0\"];"),
      std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("stream 1 forks from stream 0 (event 1)"), std::string::npos);
  EXPECT_NE(r.out.find("entry: streams 0, 1 wait for the caller's stream"), std::string::npos);
  EXPECT_NE(r.out.find("exit: the caller's stream waits for streams 0, 1"), std::string::npos);
  // One stream: no event, no fork, no entry/exit stream list.
  auto one = run({"dot", in, "--target", "cuda", "-o", "-"});
  ASSERT_EQ(one.rc, 0) << one.err;
  EXPECT_EQ(one.out.find("label=\"event"), std::string::npos);
  EXPECT_EQ(one.out.find("forks from stream 0"), std::string::npos);
  if (!have_dot()) GTEST_SKIP() << "Graphviz's dot is not installed";
  std::string out = tmp_path("streams.dot");
  ASSERT_EQ(run({"dot", in, "--target", "cuda", "--gpu-streams", "2", "-o", out}).rc, 0);
  auto rendered = run_process({"dot", "-Tsvg", "-o", tmp_path("streams.svg"), out});
  EXPECT_EQ(rendered.status, 0) << rendered.output;
  EXPECT_EQ(rendered.output, "");
}

TEST(Dot, UsageAndEnvironmentErrors) {
  std::string in = data_path("small.sdfg");
  EXPECT_EQ(run({"dot", in}).rc, 2);
  auto ext = run({"dot", in, "-o", tmp_path("x.png")});
  EXPECT_EQ(ext.rc, 2);
  EXPECT_NE(ext.err.find("the output must end in .dot (DOT text) or .svg (rendered by Graphviz)"), std::string::npos);
  auto pass = run({"dot", in, "--after=frobnicate", "-o", tmp_path("x.dot")});
  EXPECT_EQ(pass.rc, 2);
  EXPECT_NE(pass.err.find("--after: unknown pass 'frobnicate'"), std::string::npos);
  // Without Graphviz's dot in PATH, .svg is a clear error and nothing is written.
  std::string svg = tmp_path("nodot.svg");
  std::string path = std::getenv("PATH") ? std::getenv("PATH") : "";
  ::setenv("PATH", "/nonexistent-sdfc-test", 1);
  auto r = run({"dot", in, "--after=none", "-o", svg});
  ::setenv("PATH", path.c_str(), 1);
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("Graphviz's dot program was not found in PATH"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(svg));
  for (auto& f : std::filesystem::directory_iterator(std::filesystem::path(svg).parent_path()))
    EXPECT_EQ(f.path().string().find("nodot.svg.tmp"), std::string::npos) << f.path();
}

TEST(Cli, TaskletErrorsFailCompileAndWriteNothing) {
  if (!tasklet_check_available()) GTEST_SKIP() << "this sdfc has no Clang: CPP tasklets are not checked";
  Json j = Json::parse(tricky_labels_sdfg());
  for (auto& n : j["nodes"][0]["nodes"])
    if (n["type"] == "Tasklet") n["attributes"]["code"]["string_data"] = "b = a + unknown_thing;";
  std::string in = tmp_path("bad_tasklet.sdfg"), dir = tmp_path("bad_tasklet_src"), lib = tmp_path("bad_tasklet.so");
  std::ofstream(in) << j.dump();
  auto r = run({"compile", in, "-o", lib, "--emit-source", dir});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("/attributes/code:1:9: error: unknown identifier 'unknown_thing' in tasklet \"t{1}\""),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir));
  EXPECT_FALSE(std::filesystem::exists(lib));
}

TEST(Cli, WithoutClangTaskletsAreSkippedWithANoteAndFormatIsAnError) {
  if (tasklet_check_available() || formatting_available()) GTEST_SKIP() << "this sdfc has Clang";
  std::string in = tmp_path("noclang.sdfg");
  std::ofstream(in) << tricky_labels_sdfg();
  auto r = run({"compile", in, "--emit-source", tmp_path("noclang_src")});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.err.find("note: 1 CPP tasklet(s) (and global code) not checked: this sdfc was built without Clang "
                       "(SDFC_WITH_CLANG=OFF)"),
            std::string::npos)
      << r.err;
  auto f = run({"compile", in, "--emit-source", tmp_path("noclang_src"), "--format"});
  EXPECT_EQ(f.rc, 2);
  EXPECT_NE(f.err.find("--format needs Clang, and this sdfc was built without it"), std::string::npos) << f.err;
}

TEST(Cli, VerifySyncProvesTheScheduleAndWorkspaceStatsArePrinted) {
  std::string dir = tmp_path("verify");
  auto r = run({"compile", SDFC_SAMPLES "/seed002.sdfg", "--target", "cuda", "--gpu-streams", "2", "--verify-sync",
                "--emit-source", dir});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.err.find("control-flow path(s), every conflicting access ordered"), std::string::npos) << r.err;
  // --stats reports each External workspace with and without byte sharing.
  auto s = run({"compile", SDFC_SAMPLES "/axpy.sdfg", "--transients", "external", "--stats", "--emit-source", dir});
  ASSERT_EQ(s.rc, 0) << s.err;
  EXPECT_EQ(s.err.find("workspace"), std::string::npos) << "axpy has no transients: " << s.err;
}

TEST(Cli, StatsSayWhichTransientsTheArenaLeavesOutAndWhy) {
  // fe_prefix_tmp_s: tmp has shape (i,) and tail (N - i,), i the loop variable.
  std::string corpus = corpus_dir();
  if (corpus.empty()) GTEST_SKIP() << "corpus not found";
  auto r = run({"compile", corpus + "/fe_prefix_tmp_s/program_gpu.sdfg", "--target", "cuda", "--stats", "--emit-source",
                tmp_path("prefix_stats")});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.err.find("elements): allocated in state \""), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("each time it runs, not per call: its size depends on a symbol assigned during the program"),
            std::string::npos)
      << r.err;
}
