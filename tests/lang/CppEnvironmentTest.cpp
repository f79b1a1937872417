#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "compiler/Compile.h"
#include "lang/CppEnvironment.h"

namespace fs = std::filesystem;

namespace {

/// The standard headers (`#include <...>`) a runtime header names, outside any #if.
std::vector<std::string> std_includes_of(const std::string& header) {
  std::ifstream in(fs::path(sdfc::runtime_include_dir()) / "sdfc" / header);
  EXPECT_TRUE(in) << header;
  std::vector<std::string> found;
  static const std::regex include(R"(^#include (<[^>]+>))");
  std::string line;
  int depth = 0;
  while (std::getline(in, line)) {
    if (line.rfind("#if", 0) == 0) ++depth;
    if (line.rfind("#endif", 0) == 0) --depth;
    std::smatch m;
    if (depth == 0 && std::regex_search(line, m, include)) found.push_back(m[1]);
  }
  return found;
}

bool contains(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

}  // namespace

// The precompiled prelude must hold every standard header a generated host source reads before its
// own code, or the headers it leaves out are parsed again by every compile.
TEST(CppEnvironment, PreludeHoldsWhatTheRuntimeHeadersInclude) {
  for (bool whole : {false, true})
    for (sdfc::Target target : {sdfc::Target::CPU, sdfc::Target::CUDA}) {
      const std::vector<std::string>& own = whole ? sdfc::generated_std_includes() : sdfc::core_std_includes();
      std::vector<std::string> prelude = sdfc::prelude_std_includes(own, target);
      std::vector<std::string> headers = {"program.h", "rt.h", "dace_math.h"};
      if (whole) headers.push_back("complex.h");
      if (target == sdfc::Target::CUDA) headers.push_back("gpu.h");
      for (const std::string& h : headers)
        for (const std::string& std_header : std_includes_of(h))
          EXPECT_TRUE(contains(prelude, std_header)) << h << " includes " << std_header << " (whole " << whole << ")";
      for (const std::string& h : own) EXPECT_TRUE(contains(prelude, h)) << h;
    }
}

// sdfc's own code gets a subset of DaCe's environment, without the expensive headers.
TEST(CppEnvironment, CoreIsASubsetWithoutTheExpensiveHeaders) {
  for (const std::string& h : sdfc::core_std_includes()) EXPECT_TRUE(contains(sdfc::generated_std_includes(), h)) << h;
  for (const char* h : {"<complex>", "<chrono>", "<mutex>", "<string>"}) {
    EXPECT_FALSE(contains(sdfc::core_std_includes(), h)) << h;
    EXPECT_FALSE(contains(sdfc::prelude_std_includes(sdfc::core_std_includes(), sdfc::Target::CPU), h)) << h;
  }
  EXPECT_EQ(sdfc::in_include_order({"<complex>", "<cmath>", "<chrono>"}),
            (std::vector<std::string>{"<cmath>", "<chrono>", "<complex>"}));
}

// C++ code gets the headers of the standard names it spells; the whole environment where sdfc cannot
// tell what it needs.
TEST(CppEnvironment, CppCodeGetsTheHeadersItNames) {
  using V = std::vector<std::string>;
  // GT4Py's metrics timer
  EXPECT_EQ(sdfc::cpp_code_std_includes("auto now = std::chrono::high_resolution_clock::now();\n"
                                        "time = std::chrono::duration_cast<std::chrono::nanoseconds>(\n"
                                        "    now.time_since_epoch()).count();"),
            V{"<chrono>"});
  EXPECT_EQ(sdfc::cpp_code_std_includes("out = std::max(a, std::sqrt(b)) + std::numeric_limits<double>::epsilon();"),
            V{});
  EXPECT_EQ(sdfc::cpp_code_std_includes("out = std::accumulate(a, a + 4, 0.0); c = std::complex<double>(1, 2);"),
            (V{"<complex>", "<numeric>"}));
  EXPECT_EQ(sdfc::cpp_code_std_includes("static_assert(std::is_same_v<T, double>); out = std::memcpy(a, b, 8);"), V{});
  // what sdfc cannot place: the whole environment
  EXPECT_EQ(sdfc::cpp_code_std_includes("std::vector<int> v(4); out = v[0];"), std::nullopt);
  EXPECT_EQ(sdfc::cpp_code_std_includes("using namespace std; out = sqrt(a);"), std::nullopt);
  EXPECT_EQ(sdfc::cpp_code_std_includes("cout << a;"), std::nullopt);
  EXPECT_EQ(sdfc::cpp_code_std_includes("std::string s = \"x\";"), V{"<string>"});
}
