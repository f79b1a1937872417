// Helpers shared by the tests: test data paths, reading JSON, collecting diagnostics.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "ir/Diagnostic.h"
#include "ir/JsonReader.h"
#include "ir/JsonWriter.h"
#include "ir/Validate.h"

namespace sdfc::test {

inline std::string data_path(const std::string& name) { return std::string(SDFC_TEST_DATA) + "/" + name; }

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline Json load_json(const std::string& name) { return Json::parse(slurp(data_path(name))); }

/// The corpus folder ($SDFC_CORPUS, default ../shared/corpus), or "" when it is absent.
inline std::string corpus_dir() {
  const char* env = std::getenv("SDFC_CORPUS");
  std::string dir = env && *env ? env : SDFC_DEFAULT_CORPUS;
  return std::filesystem::is_directory(dir) ? dir : "";
}

/// The first diagnostic of reading + validating `text` ("" when there is none).
inline std::vector<Diagnostic> problems(const std::string& text) {
  try {
    auto sdfg = read_sdfg(text, "test.sdfg");
    return validate(*sdfg, "test.sdfg");
  } catch (const UserError& e) {
    return {e.diagnostic()};
  }
}
inline std::vector<Diagnostic> problems(const Json& j) { return problems(j.dump()); }

/// Exactly one problem: returns it (and fails the test otherwise).
inline Diagnostic one_problem(const Json& j) {
  auto ds = problems(j);
  EXPECT_EQ(ds.size(), 1u);
  if (ds.size() != 1)
    for (auto& d : ds) ADD_FAILURE() << "got: " << d.str();
  return ds.empty() ? Diagnostic{} : ds[0];
}

}  // namespace sdfc::test
