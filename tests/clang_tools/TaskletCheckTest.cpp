// The Clang tasklet check (clang_tools/TaskletCheck.h): its error messages, their JSON pointers and
// line:column inside the tasklet, and no false positives on real DaCe tasklets. Built only with
// SDFC_WITH_CLANG.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "StreamTasklet.h"
#include "TestUtil.h"
#include "clang_tools/TaskletCheck.h"
#include "compiler/Compile.h"
#include "ir/Builder.h"

using namespace sdfc;
using namespace sdfc::test;

namespace {

/// A one-map program `B[i] = f(A[i])` whose tasklet is CPP `code`; `extra_in` adds a second input.
std::unique_ptr<SDFG> cpp_program(const std::string& code, ScheduleType schedule = ScheduleType::Default) {
  SDFGBuilder b("prog");
  b.symbol("N", DType::Int64).array("A", DType::Float64, {"N"}).array("B", DType::Float64, {"N"});
  if (schedule == ScheduleType::GPU_Device) {
    b.array("gA", DType::Float64, {"N"}, true, StorageType::GPU_Global)
        .array("gB", DType::Float64, {"N"}, true, StorageType::GPU_Global);
  }
  auto s = b.state("compute");
  bool gpu = schedule == ScheduleType::GPU_Device;
  s.mapped_tasklet("scale", {{"i", "0:N"}}, {{"a", gpu ? "gA[i]" : "A[i]"}}, code, {{"b", gpu ? "gB[i]" : "B[i]"}},
                   schedule);
  for (auto& n : s.state().nodes)
    if (n->kind == NodeKind::Tasklet) n->code.language = Language::CPP;
  return b.build();
}

/// The tasklet's node pointer in a cpp_program.
std::string tasklet_pointer(const SDFG& sdfg) {
  const Block& st = *sdfg.root.blocks[0];
  for (std::size_t i = 0; i < st.nodes.size(); ++i)
    if (st.nodes[i]->kind == NodeKind::Tasklet) return "/nodes/0/nodes/" + std::to_string(i);
  return "";
}

std::vector<Diagnostic> check(SDFG& sdfg, Target target = Target::CPU) {
  CompileOptions o;
  o.target = target;
  run_pipeline(sdfg, o);
  return check_cpp_tasklets(sdfg, o, "prog.sdfg", runtime_include_dir()).errors;
}

}  // namespace

TEST(TaskletCheck, UnknownIdentifierNamesTheTaskletAndLineColumn) {
  auto sdfg = cpp_program("double t = a * 2.0;\nif (t > 1.0) {\n  t = clamp_to_one(t);\n}\nb = t;");
  auto errors = check(*sdfg);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].pointer, tasklet_pointer(*sdfg) + "/attributes/code");
  EXPECT_EQ(errors[0].line, 3);
  EXPECT_EQ(errors[0].column, 7);
  EXPECT_EQ(
      errors[0].str(),
      "prog.sdfg: " + tasklet_pointer(*sdfg) +
          "/attributes/code:3:7: error: unknown identifier 'clamp_to_one' in tasklet \"scale\": not a connector "
          "(inputs: a; outputs: b), a symbol (N, i), nor a function or constant declared by <cstddef>, <cstdint>, "
          "<cmath>, <cstring>, <new>, <algorithm>, <chrono>, <complex>, <cstdio>, <numeric>, <limits>, <type_traits>, "
          "<mutex>, <stdexcept>, <string>, <unordered_set>, "
          "sdfc's runtime or the SDFG's global_code; fix the name, add a "
          "connector, or declare it in global_code");
}

TEST(TaskletCheck, WriteToAnInputConnector) {
  auto sdfg = cpp_program("b = a;\na += 1.0;");
  auto errors = check(*sdfg);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].str(), "prog.sdfg: " + tasklet_pointer(*sdfg) +
                                 "/attributes/code:2:1: error: tasklet \"scale\" writes to input connector 'a'; inputs "
                                 "are read-only: write the result to an output connector (with a memlet to the data) "
                                 "instead");
}

TEST(TaskletCheck, OutputNeverWritten) {
  auto sdfg = cpp_program("double t = a * 2.0;\n(void)t;");
  auto errors = check(*sdfg);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].str(),
            "prog.sdfg: " + tasklet_pointer(*sdfg) +
                "/attributes/out_connectors/b: error: output connector 'b' of tasklet \"scale\" is "
                "never written; assign it in the code (b = ...;) or remove the connector and its memlet");
}

TEST(TaskletCheck, OutputWrittenThroughAReferenceCounts) {
  auto sdfg = cpp_program("double& r = b;\nr = a;");
  EXPECT_TRUE(check(*sdfg).empty());
  auto swapped = cpp_program("double t = a;\nstd::swap(b, t);");
  EXPECT_TRUE(check(*swapped).empty());
}

TEST(TaskletCheck, DataContainerUsedDirectly) {
  auto sdfg = cpp_program("b = A[i] + a;");
  auto errors = check(*sdfg);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].line, 1);
  EXPECT_EQ(errors[0].column, 5);
  EXPECT_NE(errors[0].message.find("uses data container 'A' directly; a tasklet sees data only through its connectors"),
            std::string::npos)
      << errors[0].message;
}

TEST(TaskletCheck, OtherCompileErrorsAreReportedWithClangsMessage) {
  auto sdfg = cpp_program("b = a +;");
  auto errors = check(*sdfg);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].message, "tasklet \"scale\" does not compile: expected expression");
  EXPECT_EQ(errors[0].column, 8);
}

TEST(TaskletCheck, UnbalancedBracesAreTheTaskletsFault) {
  for (const char* code : {"b = a; }", "if (a > 0) {\n  b = a;"}) {
    auto sdfg = cpp_program(code);
    auto errors = check(*sdfg);
    ASSERT_FALSE(errors.empty()) << code;
    EXPECT_EQ(errors[0].pointer, tasklet_pointer(*sdfg) + "/attributes/code") << code;
    EXPECT_NE(errors[0].message.find("tasklet \"scale\" does not compile: "), std::string::npos) << errors[0].str();
    EXPECT_NE(errors[0].message.find("check that its braces and parentheses are balanced"), std::string::npos)
        << errors[0].str();
  }
}

TEST(TaskletCheck, KnownFunctionsSymbolsAndCastsPass) {
  auto sdfg = cpp_program(
      "double t = std::sqrt(std::fabs(a)) + exp(a) + pow(a, 2) + std::min(a, 2.0) + std::clamp(a, 0.0, 1.0);\n"
      "int64_t k = static_cast<int64_t>(N) + i + INT32_MAX;\n"
      "b = t + static_cast<double>(k) + M_PI + sdfc::rt::floordiv(k, 2) + sdfc::rt::max(a, 1);");
  auto errors = check(*sdfg);
  for (auto& e : errors) ADD_FAILURE() << e.str();
}

TEST(TaskletCheck, DynamicMapRangeInputsAreSymbols) {
  // tests/codegen/cpu/map_dynamic_range.sdfg with C++ tasklets: n and len are symbols in their maps.
  auto sdfg = load_sdfg_file(std::string(SDFC_TEST_DATA) + "/../codegen/cpu/map_dynamic_range.sdfg");
  for (auto& st : sdfg->root.blocks)
    for (auto& n : st->nodes)
      if (n->kind == NodeKind::Tasklet) {
        n->code.language = Language::CPP;
        n->code.code += ";";
      }
  auto errors = check(*sdfg);
  for (auto& e : errors) ADD_FAILURE() << e.str();
}

TEST(TaskletCheck, GlobalCodeDeclaresFunctions) {
  auto sdfg = cpp_program("b = twice(a);");
  sdfg->global_code.code = "static inline double twice(double x) { return 2 * x; }";
  EXPECT_TRUE(check(*sdfg).empty());
  auto broken = cpp_program("b = a;");
  broken->global_code.code = "static inline double twice(double x) { return 2 * y; }";
  auto errors = check(*broken);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].str(),
            "prog.sdfg: /attributes/global_code:1:51: error: global_code does not compile: use of "
            "undeclared identifier 'y'");
}

TEST(TaskletCheck, DeviceTaskletsMayUseGpuBuiltinsButConnectorsAreChecked) {
  // Inside a GPU kernel, CUDA built-ins are unknown to a host parse: not reported.
  auto sdfg = cpp_program("b = a + threadIdx.x;", ScheduleType::GPU_Device);
  EXPECT_TRUE(check(*sdfg, Target::CUDA).empty());
  auto writes_input = cpp_program("a = 1.0;\nb = a;", ScheduleType::GPU_Device);
  auto errors = check(*writes_input, Target::CUDA);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].message.find("writes to input connector 'a'"), std::string::npos);
}

TEST(TaskletCheck, ManyTaskletsMapBackToTheirOwnPointers) {
  SDFGBuilder b("many");
  b.symbol("N", DType::Int64);
  for (int k = 0; k <= 3; ++k) b.array("t" + std::to_string(k), DType::Float64, {"N"});
  auto s = b.state("s");
  std::map<std::string, int> outer;
  for (int k = 0; k < 3; ++k)
    s.mapped_tasklet("m" + std::to_string(k), {{"i", "0:N"}}, {{"a", "t" + std::to_string(k) + "[i]"}},
                     k == 1 ? "\n\n  b = nope;" : "b = a;", {{"b", "t" + std::to_string(k + 1) + "[i]"}},
                     ScheduleType::Default, &outer);
  std::string bad;
  for (std::size_t i = 0; i < s.state().nodes.size(); ++i) {
    auto& n = s.state().nodes[i];
    if (n->kind != NodeKind::Tasklet) continue;
    n->code.language = Language::CPP;
    if (n->label == "m1") bad = "/nodes/0/nodes/" + std::to_string(i) + "/attributes/code";
  }
  auto sdfg = b.build();
  auto errors = check(*sdfg);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].pointer, bad);
  EXPECT_EQ(errors[0].line, 3);
  EXPECT_EQ(errors[0].column, 7);
}

// Every CPP tasklet of every corpus program (CPU programs for the CPU, GPU programs for CUDA) and
// of the FileCheck inputs passes the check.
TEST(TaskletCheck, NoFalsePositivesOnTheCorpus) {
  std::vector<std::pair<std::string, Target>> files;
  std::string corpus = corpus_dir();
  if (!corpus.empty())
    for (auto& c : std::filesystem::directory_iterator(corpus))
      if (c.is_directory())
        for (auto& f : std::filesystem::directory_iterator(c.path()))
          if (f.path().extension() == ".sdfg" && !known_unsupported_file(f.path().string()))
            files.emplace_back(f.path().string(),
                               f.path().filename().string().rfind("program_gpu", 0) == 0 ? Target::CUDA : Target::CPU);
  for (const char* target : {"cpu", "cuda"})
    for (auto& f : std::filesystem::directory_iterator(std::string(SDFC_CODEGEN_TESTS) + "/" + target))
      if (f.path().extension() == ".sdfg" && f.path().filename().string().rfind("error_", 0) != 0)
        files.emplace_back(f.path().string(), std::string(target) == "cuda" ? Target::CUDA : Target::CPU);
  ASSERT_FALSE(files.empty());
  int tasklets = 0;
  for (auto& [path, target] : files) {
    auto sdfg = load_sdfg_file(path);
    CompileOptions o;
    o.target = target;
    run_pipeline(*sdfg, o);
    auto r = check_cpp_tasklets(*sdfg, o, path, runtime_include_dir());
    for (auto& e : r.errors) ADD_FAILURE() << e.str();
    tasklets += r.cpp_tasklets;
  }
  EXPECT_GE(tasklets, corpus.empty() ? 1 : 3);
  if (corpus.empty()) GTEST_SKIP() << "corpus not found (SDFC_CORPUS): checked only the FileCheck inputs";
}

TEST(TaskletCheck, CompileReportsTheErrorsAndWritesNothing) {
  auto sdfg = cpp_program("b = a * undefined_scale;");
  try {
    generate_program(*sdfg, CompileOptions{}, "prog.sdfg");
    ADD_FAILURE() << "expected InvalidInput";
  } catch (const InvalidInput& e) {
    ASSERT_EQ(e.diagnostics().size(), 1u);
    EXPECT_NE(e.diagnostics()[0].message.find("unknown identifier 'undefined_scale'"), std::string::npos);
  }
}

TEST(TaskletCheck, GlobalCodeIsCheckedWithoutCppTasklets) {
  // 42 of 1,500 mutants had global_code that only the C++ compiler rejected ("an sdfc bug").
  auto sdfg = cpp_program("b = a * 2.0;");
  for (auto& n : sdfg->root.blocks[0]->nodes)
    if (n->kind == NodeKind::Tasklet) n->code.language = Language::Python;
  sdfg->global_code.code = "int broken(( {";
  auto errors = check(*sdfg);
  ASSERT_FALSE(errors.empty());
  EXPECT_EQ(errors[0].pointer, "/attributes/global_code");
  EXPECT_NE(errors[0].message.find("global_code does not compile"), std::string::npos) << errors[0].message;
  sdfg->global_code.code = "inline double twice(double x) { return 2 * x; }";
  EXPECT_TRUE(check(*sdfg).empty());
}

TEST(TaskletCheck, TheUnitDoesNotNameTheProgram) {
  // Two programs that differ in name, labels and symbols no tasklet uses, with the same tasklet:
  // one unit, so a check that passed for one is remembered for the other.
  auto first = cpp_program("b = a * 2.0;");
  auto second = cpp_program("b = a * 2.0;");
  second->name = "other";
  second->symbols.emplace_back("M", DType::Int32);
  for (auto& n : second->root.blocks[0]->nodes) n->label += "_renamed";
  CompileOptions o;
  EXPECT_EQ(tasklet_check_source(*first, o), tasklet_check_source(*second, o));
  // A symbol the code uses is declared (typed as in generated code), one it does not is not.
  auto uses = cpp_program("b = a * N;");
  std::string text = tasklet_check_source(*uses, o);
  EXPECT_NE(text.find("const int64_t N = __sdfc_value<int64_t>();"), std::string::npos) << text;
  EXPECT_EQ(tasklet_check_source(*first, o).find("const int64_t N ="), std::string::npos);
}

TEST(TaskletCheck, SymbolsThatGlobalCodeMacrosNameStayDeclared) {
  auto sdfg = cpp_program("b = a * SCALE;");
  sdfg->global_code.code = "#define SCALE (N + 1)";
  EXPECT_TRUE(check(*sdfg).empty());
}

TEST(TaskletCheck, CompileRemembersPassedChecksOnly) {
  std::string cache = ::testing::TempDir() + "sdfc-check-memory-" + std::to_string(::getpid());
  std::filesystem::remove_all(cache);
  ScopedEnv env("SDFC_CACHE_DIR", cache);
  auto markers = [&] {
    std::error_code ec;
    auto it = std::filesystem::directory_iterator(cache + "/checks", ec);
    return ec ? 0 : static_cast<int>(std::distance(it, std::filesystem::directory_iterator()));
  };
  // A failing check is not remembered: the second compile reports the same error.
  for (int round = 0; round < 2; ++round) {
    auto bad = cpp_program("b = a * undefined_scale;");
    EXPECT_THROW(generate_program(*bad, CompileOptions{}, "prog.sdfg", {}, true), InvalidInput);
    EXPECT_EQ(markers(), 0);
  }
  // A passing one is, once; without remembering nothing is written.
  auto good = cpp_program("b = a * 2.0;");
  generate_program(*good, CompileOptions{}, "prog.sdfg");
  EXPECT_EQ(markers(), 0);
  generate_program(*good, CompileOptions{}, "prog.sdfg", {}, true);
  EXPECT_EQ(markers(), 1);
  auto again = cpp_program("b = a * 2.0;");
  generate_program(*again, CompileOptions{}, "prog.sdfg", {}, true);
  EXPECT_EQ(markers(), 1);
  // Any change of the tasklet is a new unit, checked again.
  auto changed = cpp_program("b = a * undefined_scale + 0.0;");
  EXPECT_THROW(generate_program(*changed, CompileOptions{}, "prog.sdfg", {}, true), InvalidInput);
  // The target changes the unit too (GPU programs' host code sees the CUDA runtime).
  auto gpu = cpp_program("b = a * 2.0;");
  CompileOptions cuda;
  cuda.target = Target::CUDA;
  generate_program(*gpu, cuda, "prog.sdfg", {}, true);
  EXPECT_EQ(markers(), 2);
  std::filesystem::remove_all(cache);
}

TEST(TaskletCheck, StreamTaskletsSeeTheirStreamOnGpuTargets) {
  // tests/StreamTasklet.h: cudaMemcpyAsync(dst, src, ..., __dace_current_stream) in a host tasklet.
  auto gpu = stream_tasklet_program();
  EXPECT_TRUE(check(*gpu, Target::CUDA).empty());
  auto hip = stream_tasklet_program();
  for (auto& n : hip->root.blocks[0]->nodes)
    if (n->label == "fetch")
      n->code.code = "hipMemcpyAsync(dst, src, N * sizeof(double), hipMemcpyDeviceToHost, __dace_current_stream);";
  EXPECT_TRUE(check(*hip, Target::HIP).empty());
  // On the CPU there is no stream: the check names the identifier.
  auto cpu = cpp_program("b = a;\n(void)__dace_current_stream;");
  auto errors = check(*cpu, Target::CPU);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].message.find("unknown identifier '__dace_current_stream'"), std::string::npos) << errors[0].str();
}

TEST(TaskletCheck, APrecompiledHeaderGivesTheSameFindings) {
  std::string dir = ::testing::TempDir() + "sdfc-check-pch-" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  auto errors_with = [&](const std::string& code, const std::string& pch_dir) {
    auto sdfg = cpp_program(code);
    CompileOptions o;
    run_pipeline(*sdfg, o);
    std::vector<std::string> out;
    for (auto& d : check_cpp_tasklets(*sdfg, o, "prog.sdfg", runtime_include_dir(), pch_dir).errors)
      out.push_back(d.str());
    return out;
  };
  auto pch_files = [&] {
    int n = 0;
    std::error_code ec;
    for (auto& e : std::filesystem::directory_iterator(dir, ec)) n += e.path().extension() == ".pch";
    return n;
  };
  for (const char* code : {"b = std::sqrt(a) + std::max(a, 1.0);", "b = a * undefined_scale;",
                           "auto t = std::chrono::steady_clock::now();\nb = a;", "a = 1.0;\nb = a;"}) {
    SCOPED_TRACE(code);
    auto plain = errors_with(code, "");
    EXPECT_EQ(errors_with(code, dir), plain);  // made here the first time
    EXPECT_EQ(pch_files(), 1);
    EXPECT_EQ(errors_with(code, dir), plain);  // loaded
  }
  // A damaged header is dropped and the parse repeated without it.
  for (auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".pch") std::ofstream(e.path(), std::ios::trunc) << "not a precompiled header";
  EXPECT_EQ(errors_with("b = a * undefined_scale;", dir), errors_with("b = a * undefined_scale;", ""));
  EXPECT_EQ(errors_with("b = std::sqrt(a);", dir), std::vector<std::string>{});
  EXPECT_EQ(pch_files(), 1);  // made again
  std::filesystem::remove_all(dir);
}
