// `sdfc compile --format` (clang_tools/Format.h): clang-format changes whitespace only, the formatted
// code builds into its own cache entry and computes the same result. Built only with
// SDFC_WITH_CLANG.
#include <unistd.h>

#include <filesystem>
#include <sstream>

#include "TestUtil.h"
#include "clang_tools/Format.h"
#include "compiler/Cli.h"
#include "compiler/Compile.h"
#include "sdfc/sdfc.h"

using namespace sdfc;
using namespace sdfc::test;

namespace {

std::string without_whitespace(const std::string& s) {
  std::string out;
  for (char c : s)
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v') out += c;
  return out;
}

int cli(std::vector<std::string> args, std::string* err_text = nullptr) {
  args.insert(args.begin(), "sdfc");
  std::vector<const char*> argv;
  for (auto& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  int rc = run_cli(static_cast<int>(argv.size()), argv.data(), out, err);
  if (err_text) *err_text = err.str();
  return rc;
}

}  // namespace

TEST(Format, ChangesOnlyWhitespace) {
  std::vector<std::pair<std::string, Target>> inputs = {{std::string(SDFC_SAMPLES) + "/axpy.sdfg", Target::CPU}};
  for (const char* target : {"cpu", "cuda"})
    for (auto& f : std::filesystem::directory_iterator(std::string(SDFC_CODEGEN_TESTS) + "/" + target))
      if (f.path().extension() == ".sdfg" && f.path().filename().string().rfind("error_", 0) != 0)
        inputs.emplace_back(f.path().string(), std::string(target) == "cuda" ? Target::CUDA : Target::CPU);
  int changed = 0;
  for (auto& [path, target] : inputs) {
    auto sdfg = load_sdfg_file(path);
    CompileOptions o;
    o.target = target;
    GeneratedProgram program = generate_program(*sdfg, o, path);
    GeneratedProgram formatted = program;
    format_program(formatted);
    ASSERT_EQ(formatted.files.size(), program.files.size());
    for (std::size_t i = 0; i < program.files.size(); ++i) {
      EXPECT_EQ(without_whitespace(formatted.files[i].text), without_whitespace(program.files[i].text)) << path;
      changed += formatted.files[i].text != program.files[i].text;
    }
    EXPECT_EQ(without_whitespace(formatted.header), without_whitespace(program.header)) << path;
  }
  EXPECT_GT(changed, 0) << "clang-format changed nothing at all: is the style applied?";
}

TEST(Format, FormattedCodeBuildsSeparatelyAndComputesTheSameResult) {
  auto dir = std::filesystem::temp_directory_path() / ("sdfc_format_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string sample = std::string(SDFC_SAMPLES) + "/axpy.sdfg";
  std::string plain = (dir / "plain.so").string(), formatted = (dir / "formatted.so").string();
  std::string err_plain, err_formatted;
  ASSERT_EQ(cli({"compile", sample, "-o", plain, "--stats"}, &err_plain), 0) << err_plain;
  ASSERT_EQ(cli({"compile", sample, "-o", formatted, "--format", "--stats", "--emit-source", (dir / "src").string()},
                &err_formatted),
            0)
      << err_formatted;
  // The cache key hashes the sources: the formatted build is its own entry.
  auto key = [](const std::string& stats) { return stats.substr(stats.find("(key ")); };
  EXPECT_NE(key(err_plain), key(err_formatted));
  // The emitted source is the formatted one.
  EXPECT_NE(slurp((dir / "src" / "axpy.cpp").string()).find("__program_axpy"), std::string::npos);

  std::vector<std::vector<double>> results;
  for (auto& lib : {plain, formatted}) {
    Program p = Program::load(lib);
    std::vector<double> x{1, 2, 3, 4}, y{0.5, 0.5, 0.5, 0.5};
    p.set_array("x", x.data(), x.size());
    p.set_array("y", y.data(), y.size());
    p.set_value("a", 2.5);
    p.set_value("N", 4);
    p.call();
    results.push_back(y);
  }
  EXPECT_EQ(results[0], results[1]);
  EXPECT_EQ(results[0], (std::vector<double>{3.0, 5.5, 8.0, 10.5}));
  std::filesystem::remove_all(dir);
}
