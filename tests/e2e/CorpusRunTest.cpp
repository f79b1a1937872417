// End to end on the CPU: every host program of the corpus (program.sdfg; GT4Py's
// program_nometrics.sdfg; program_libnodes.sdfg) compiles, takes DaCe's arguments in DaCe's order
// with DaCe's C signature, and reproduces expected.json within its tolerances (integers exactly),
// in every memory mode, each mode agreeing with the others bit for bit (the differential check).
// Files on the known-unsupported list (CorpusKnown.h) must be refused with an error naming the
// construct instead. Skipped, saying so, where the corpus is absent.
#include <dlfcn.h>
#include <fmt/format.h>

#include <filesystem>
#include <regex>

#include "CorpusKnown.h"
#include "TestUtil.h"
#include "compiler/Compile.h"
#include "compiler/Convert.h"
#include "sdfc/sdfc.h"

using namespace sdfc;
using namespace sdfc::test;
namespace fs = std::filesystem;

namespace {

/// The host programs of the corpus as "case/file.sdfg", sorted.
std::vector<std::string> cases() {
  std::vector<std::string> out;
  std::string dir = corpus_dir();
  if (dir.empty()) return out;
  for (auto& e : fs::directory_iterator(dir))
    for (const char* f : {"program.sdfg", "program_nometrics.sdfg", "program_libnodes.sdfg"})
      if (fs::exists(e.path() / f)) out.push_back(e.path().filename().string() + "/" + f);
  std::sort(out.begin(), out.end());
  return out;
}

std::string case_of(const std::string& file) {
  return file.substr(0, file.find('/'));
}

/// DaCe's argument order, SDFG name and C signature of `file`: inputs.json for program.sdfg and
/// program_libnodes.sdfg, meta.json's `nometrics` entry for GT4Py's program_nometrics.sdfg.
struct Expected {
  std::string name, c_signature;
  std::vector<std::string> arglist;
};
Expected expected_frame(const std::string& file) {
  std::string dir = corpus_dir() + "/" + case_of(file);
  auto inputs = nlohmann::json::parse(slurp(dir + "/inputs.json"));
  nlohmann::json from = inputs;
  if (file.find("program_nometrics.sdfg") != std::string::npos)
    from = nlohmann::json::parse(slurp(dir + "/meta.json"))["nometrics"];
  return {from["sdfg_name"].get<std::string>(), from["c_signature"].get<std::string>(),
          from["arglist"].get<std::vector<std::string>>()};
}

/// A known-unsupported file is refused, with the construct named; true when `file` is one.
bool refused_as_known(const std::string& file, const Options& options) {
  const KnownUnsupported* k = find_known_unsupported(file);
  if (!k) return false;
  try {
    Program::compile_file(corpus_dir() + "/" + file, options);
    ADD_FAILURE() << file << " is on the known-unsupported list (issue " << k->issue
                  << ") but compiled: check its results and remove it from tests/CorpusKnown.h";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(k->error), std::string::npos)
        << file << " was refused, but not for the listed construct \"" << k->error << "\": " << e.what();
  }
  return true;
}

/// Compiles a corpus file with a transient mode ("" = as declared), runs it on its case's inputs,
/// compares with DaCe's outputs, and returns the outputs for comparison across modes.
std::map<std::string, TypedArray> reproduce(const std::string& file, const std::string& mode, bool fuse = false) {
  std::string dir = corpus_dir() + "/" + case_of(file);
  auto inputs = nlohmann::json::parse(slurp(dir + "/inputs.json"));
  auto expected = nlohmann::json::parse(slurp(dir + "/expected.json"));
  Options options;
  options.transients = mode;
  options.fuse_maps = fuse;
  Program p = Program::compile_file(corpus_dir() + "/" + file, options);
  Expected frame = expected_frame(file);
  EXPECT_EQ(p.name(), frame.name);
  // DaCe's argument order
  std::vector<std::string> names;
  for (auto& a : p.arguments()) names.push_back(a.name);
  EXPECT_EQ(names, frame.arglist);
  std::map<std::string, TypedArray> arrays = bind_corpus_inputs(p, inputs);
  for (auto& a : p.arguments()) {
    if (a.kind == "array") {
      EXPECT_EQ(std::string(to_string(arrays.at(a.name).dtype)), a.dtype) << a.name;
    }
  }
  p.call();
  expect_corpus_outputs(expected, arrays);
  return arrays;
}

class CorpusRun : public ::testing::TestWithParam<std::string> {};

TEST_P(CorpusRun, ReproducesDaCe) {
  if (refused_as_known(GetParam(), Options{})) return;
  reproduce(GetParam(), "");
}

/// Every transient memory mode gives DaCe's results too, and the same bits as the file's own
/// lifetimes (the CPU code has no write-conflict atomics whose order could vary between modes).
TEST_P(CorpusRun, ReproducesDaCeInEveryMemoryMode) {
  if (find_known_unsupported(GetParam())) GTEST_SKIP() << "known unsupported (see ReproducesDaCe)";
  std::string path = corpus_dir() + "/" + GetParam();
  auto expected = nlohmann::json::parse(slurp(corpus_dir() + "/" + case_of(GetParam()) + "/expected.json"));
  auto tolerant = float_wcr_outputs(*load_sdfg_file(path));
  auto declared = reproduce(GetParam(), "");
  for (const char* mode : {"scoped", "persistent", "pool", "external"}) {
    SCOPED_TRACE(mode);
    expect_same_outputs(expected, declared, reproduce(GetParam(), mode), tolerant,
                        std::string("as declared vs --transients ") + mode);
  }
}

/// --fuse-maps: every file in which fusion merges maps still gives DaCe's results (the others
/// compile to the same program as without it).
TEST_P(CorpusRun, ReproducesDaCeWithFusedMaps) {
  if (find_known_unsupported(GetParam())) GTEST_SKIP() << "known unsupported (see ReproducesDaCe)";
  std::string path = corpus_dir() + "/" + GetParam();
  int before = maps_after_fusion(path, false), after = maps_after_fusion(path, true);
  ASSERT_LE(after, before);
  if (after == before) GTEST_SKIP() << "no maps to fuse";
  std::printf("NOTE: --fuse-maps: %s: %d map scopes -> %d\n", GetParam().c_str(), before, after);
  reproduce(GetParam(), "", true);
}

/// GT4Py's metrics code (program.sdfg of the GT4Py cases): with gt_metrics_level 0 nothing is
/// timed (gt_compute_time keeps its value); at level 10 the timer tasklets (std::chrono) store a
/// positive duration, and the results are DaCe's either way.
TEST_P(CorpusRun, GT4PyMetricsTimeTheCallWhenAsked) {
  if (GetParam().rfind("gt4py_", 0) != 0 || GetParam().find("/program.sdfg") == std::string::npos)
    GTEST_SKIP() << "not a GT4Py file with metrics";
  if (find_known_unsupported(GetParam())) GTEST_SKIP() << "known unsupported (see ReproducesDaCe)";
  std::string dir = corpus_dir() + "/" + case_of(GetParam());
  auto inputs = nlohmann::json::parse(slurp(dir + "/inputs.json"));
  auto expected = nlohmann::json::parse(slurp(dir + "/expected.json"));
  for (int level : {0, 10}) {
    SCOPED_TRACE(level);
    inputs["symbols"]["gt_metrics_level"]["value"] = level;
    Program p = Program::compile_file(corpus_dir() + "/" + GetParam());
    std::map<std::string, TypedArray> arrays = bind_corpus_inputs(p, inputs);
    p.call();
    expect_corpus_outputs(expected, arrays);
    double t = element_value(arrays.at("gt_compute_time"), 0);
    if (level == 0)
      EXPECT_EQ(t, 1.0) << "nothing is timed at level 0 (inputs.json's value stays)";
    else
      EXPECT_TRUE(t > 0.0 && t < 60.0 && t != 1.0) << "gt_compute_time = " << t;
  }
}

TEST_P(CorpusRun, MatchesDaCeCSignature) {
  if (find_known_unsupported(GetParam())) GTEST_SKIP() << "known unsupported (see ReproducesDaCe)";
  std::string path = corpus_dir() + "/" + GetParam();
  Expected frame = expected_frame(GetParam());
  auto sdfg = load_sdfg_file(path);
  auto prog = generate_program(*sdfg, CompileOptions{}, path);
  std::string name = frame.name;
  std::smatch m;
  std::string header = prog.header;
  ASSERT_TRUE(std::regex_search(header, m,
                                std::regex("void __program_" + name + "\\(" + name + "Handle_t handle(, )?(.*)\\);")));
  EXPECT_EQ(m[2].str(), frame.c_signature);
  if (GetParam().find("program.sdfg") == std::string::npos) return;  // init_signature: program.sdfg only
  auto inputs = nlohmann::json::parse(slurp(corpus_dir() + "/" + case_of(GetParam()) + "/inputs.json"));
  ASSERT_TRUE(std::regex_search(header, m, std::regex(name + "Handle_t __dace_init_" + name + "\\((.*)\\);")));
  std::string init = m[1].str() == "void" ? "" : m[1].str();
  EXPECT_EQ(init, inputs["init_signature"].get<std::string>());
}

INSTANTIATE_TEST_SUITE_P(Corpus, CorpusRun, ::testing::ValuesIn(cases()), [](const auto& info) {
  std::string s = info.param;
  for (char& ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return s;
});
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(CorpusRun);

TEST(CorpusRunAvailability, CorpusPresentOrSkipped) {
  if (corpus_dir().empty()) GTEST_SKIP() << "corpus not found (set SDFC_CORPUS); end-to-end corpus runs skipped";
  EXPECT_FALSE(cases().empty());
}

/// Every entry of the known-unsupported list names a file of the corpus (a renamed or removed
/// file must leave the list too).
TEST(CorpusRunAvailability, KnownUnsupportedFilesExist) {
  if (corpus_dir().empty()) GTEST_SKIP() << "corpus not found";
  for (auto& k : known_unsupported()) EXPECT_TRUE(fs::exists(corpus_dir() + "/" + k.file)) << k.file;
}

/// DaCe's CompiledSDFG protocol for External transients: init, ask the size, set the workspace
/// through DaCe's own pair, call.
TEST(CorpusRunAvailability, ExternalWorkspaceThroughDaCesPair) {
  if (corpus_dir().empty()) GTEST_SKIP() << "corpus not found";
  std::string dir = corpus_dir() + "/external_ws_s";
  Program p = Program::compile_file(dir + "/program.sdfg");
  void* h = dlopen(p.library_path().c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  ASSERT_TRUE(h);
  using Init = void* (*)(int);
  using Size = std::size_t (*)(void*, int);
  using Set = void (*)(void*, char*, int);
  using Call = void (*)(void*, double*, double*, double*, int);
  using Exit = int (*)(void*);
  using LastError = const char* (*)(void*);
  auto init = reinterpret_cast<Init>(dlsym(h, "__dace_init_external_ws_s"));
  auto size = reinterpret_cast<Size>(dlsym(h, "__dace_get_external_memory_size_CPU_Heap"));
  auto set = reinterpret_cast<Set>(dlsym(h, "__dace_set_external_memory_CPU_Heap"));
  auto call = reinterpret_cast<Call>(dlsym(h, "__program_external_ws_s"));
  auto exit = reinterpret_cast<Exit>(dlsym(h, "__dace_exit_external_ws_s"));
  auto last_error = reinterpret_cast<LastError>(dlsym(h, "__sdfc_last_error"));
  ASSERT_TRUE(init && size && set && call && exit && last_error);
  auto inputs = nlohmann::json::parse(slurp(dir + "/inputs.json"));
  int n = inputs["symbols"]["N"]["value"].get<int>();
  auto vec = [&](const char* k) { return inputs["arrays"][k]["data"].get<std::vector<double>>(); };
  std::vector<double> a = vec("a"), b = vec("b"), c = vec("c");
  void* state = init(n);
  ASSERT_TRUE(state);
  // DaCe reports 440 bytes (55 doubles); sdfc places arrays at 256-byte multiples and says so.
  EXPECT_EQ(size(state, n), 512u);
  // Calling before the workspace is set is an error, and the program does nothing.
  std::vector<double> c_before = c;
  call(state, a.data(), b.data(), c.data(), n);
  ASSERT_TRUE(last_error(state));
  EXPECT_NE(std::string(last_error(state)).find("external workspace for CPU_Heap is not set"), std::string::npos);
  EXPECT_EQ(c, c_before);
  EXPECT_EQ(exit(state), 1);  // the recorded error is reported at exit too
  state = init(n);
  std::vector<char> ws(size(state, n) + 64);
  char* base = ws.data() + (64 - reinterpret_cast<std::uintptr_t>(ws.data()) % 64) % 64;
  set(state, base, n);
  call(state, a.data(), b.data(), c.data(), n);
  EXPECT_EQ(last_error(state), nullptr);
  auto expected = nlohmann::json::parse(slurp(dir + "/expected.json"));
  auto want = expected["arrays"]["c"]["data"].get<std::vector<double>>();
  ASSERT_EQ(c.size(), want.size());
  for (std::size_t i = 0; i < c.size(); ++i) EXPECT_NEAR(c[i], want[i], 1e-12);
  EXPECT_EQ(exit(state), 0);
}

TEST(CorpusRunAvailability, TheCAbiRefusesMisuseWithAMessage) {
  if (corpus_dir().empty()) GTEST_SKIP() << "corpus not found";
  std::string dir = corpus_dir() + "/external_ws_s";
  Program p = Program::compile_file(dir + "/program.sdfg");
  void* h = dlopen(p.library_path().c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  ASSERT_TRUE(h);
  auto init = reinterpret_cast<void* (*)(int)>(dlsym(h, "__dace_init_external_ws_s"));
  auto set = reinterpret_cast<void (*)(void*, char*, int)>(dlsym(h, "__dace_set_external_memory_CPU_Heap"));
  auto call = reinterpret_cast<void (*)(void*, double*, double*, double*, int)>(dlsym(h, "__program_external_ws_s"));
  auto exit = reinterpret_cast<int (*)(void*)>(dlsym(h, "__dace_exit_external_ws_s"));
  auto last_error = reinterpret_cast<const char* (*)(void*)>(dlsym(h, "__sdfc_last_error"));
  auto ws_size = reinterpret_cast<std::size_t (*)(void*, const char*, void**)>(dlsym(h, "__sdfc_workspace_size"));
  auto set_ws = reinterpret_cast<const char* (*)(void*, const char*, void*, std::size_t, void**)>(
      dlsym(h, "__sdfc_set_workspace"));
  auto sdfc_call = reinterpret_cast<void (*)(void*, void**)>(dlsym(h, "__sdfc_call"));
  ASSERT_TRUE(init && set && call && exit && last_error && ws_size && set_ws && sdfc_call);
  auto says = [](const char* message, const std::string& part) {
    return message && std::string(message).find(part) != std::string::npos;
  };
  std::vector<double> a(8, 1.0), b(8, 2.0), c(8, 0.0);
  int n = 8;
  // A null handle: refused, and the reason is readable (it was a silent no-op).
  call(nullptr, a.data(), b.data(), c.data(), n);
  EXPECT_TRUE(says(last_error(nullptr), "__program_external_ws_s: the handle is null")) << last_error(nullptr);
  void* st = init(n);
  ASSERT_TRUE(st);
  // Null storage names and argument arrays: refused, not strcmp(NULL) or a null dereference.
  void* syms[] = {&n};
  EXPECT_EQ(ws_size(st, nullptr, syms), 0u);
  EXPECT_TRUE(says(set_ws(st, nullptr, a.data(), 1024, syms), "the storage name is null"));
  EXPECT_TRUE(says(set_ws(st, "CPU_Heap", a.data(), 1024, nullptr), "the symbol values (syms) are null"));
  sdfc_call(st, nullptr);
  EXPECT_TRUE(says(last_error(st), "__sdfc_call: the argument array is null")) << last_error(st);
  EXPECT_EQ(exit(st), 1);
  // DaCe's setter cannot check a size, but checks the alignment: nothing is installed.
  st = init(n);
  std::vector<char> ws(4096);
  char* aligned = ws.data() + (64 - reinterpret_cast<std::uintptr_t>(ws.data()) % 64) % 64;
  set(st, aligned + 1, n);
  EXPECT_TRUE(says(last_error(st), "is not aligned to 8 bytes; nothing was installed")) << last_error(st);
  EXPECT_EQ(exit(st), 1);
  // After exit, the handle is dead: a call and a second exit are refused, not run on freed memory.
  st = init(n);
  set(st, aligned, n);
  call(st, a.data(), b.data(), c.data(), n);
  EXPECT_EQ(last_error(st), nullptr);
  EXPECT_EQ(exit(st), 0);
  std::vector<double> before = c;
  call(st, a.data(), b.data(), c.data(), n);
  EXPECT_EQ(c, before);
  EXPECT_TRUE(says(last_error(st), "was already finished by __dace_exit_external_ws_s")) << last_error(st);
  EXPECT_EQ(exit(st), 1);
  EXPECT_TRUE(says(last_error(nullptr), "__dace_exit_external_ws_s: the handle was not made by"));
  // A dead handle with an argument array of null slots: the handle is checked before any slot is
  // read (the slots were dereferenced first).
  void* null_slots[] = {nullptr, nullptr, nullptr, nullptr};
  sdfc_call(st, null_slots);
  EXPECT_TRUE(says(last_error(nullptr), "__sdfc_call: the handle was not made by")) << last_error(nullptr);
}

}  // namespace
