// Helpers shared by the tests: test data paths, reading JSON, collecting diagnostics.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/Convert.h"
#include "ir/Diagnostic.h"
#include "ir/JsonReader.h"
#include "ir/JsonWriter.h"
#include "ir/Validate.h"
#include "sdfc/sdfc.h"

namespace sdfc::test {

inline std::string data_path(const std::string& name) {
  return std::string(SDFC_TEST_DATA) + "/" + name;
}

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline Json load_json(const std::string& name) {
  return Json::parse(slurp(data_path(name)));
}

/// The corpus folder ($SDFC_CORPUS, default ../shared/corpus), or "" when it is absent.
inline std::string corpus_dir() {
  const char* env = std::getenv("SDFC_CORPUS");
  std::string dir = env && *env ? env : SDFC_DEFAULT_CORPUS;
  return std::filesystem::is_directory(dir) ? dir : "";
}

/// The corpus's GPU programs (`program_gpu*.sdfg`) as "case/file", sorted; empty without a corpus.
inline std::vector<std::string> corpus_gpu_programs() {
  std::vector<std::string> out;
  std::string dir = corpus_dir();
  if (dir.empty()) return out;
  for (auto& c : std::filesystem::directory_iterator(dir)) {
    if (!c.is_directory()) continue;
    for (auto& f : std::filesystem::directory_iterator(c.path()))
      if (f.path().filename().string().rfind("program_gpu", 0) == 0 && f.path().extension() == ".sdfg")
        out.push_back(c.path().filename().string() + "/" + f.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// The diagnostics of reading + validating `text` (none when it is valid).
inline std::vector<Diagnostic> problems(const std::string& text) {
  try {
    auto sdfg = read_sdfg(text, "test.sdfg");
    return validate(*sdfg, "test.sdfg");
  } catch (const UserError& e) {
    return e.diagnostics();
  }
}
inline std::vector<Diagnostic> problems(const Json& j) {
  return problems(j.dump());
}

/// Exactly one problem: returns it (and fails the test otherwise).
inline Diagnostic one_problem(const Json& j) {
  auto ds = problems(j);
  EXPECT_EQ(ds.size(), 1u);
  if (ds.size() != 1)
    for (auto& d : ds) ADD_FAILURE() << "got: " << d.str();
  return ds.empty() ? Diagnostic{} : ds[0];
}

/// An array from a corpus inputs/expected file ({"dtype", "shape", "data"}) as typed bytes.
struct TypedArray {
  DType dtype = DType::Float64;
  std::vector<unsigned char> bytes;
  std::size_t count = 0;
};

inline TypedArray typed_array(const nlohmann::json& a) {
  TypedArray t;
  t.dtype = *parse_dtype(a["dtype"].get<std::string>());
  t.count = a["data"].size();
  t.bytes.resize(t.count * dtype_size(t.dtype) + 16);
  for (std::size_t i = 0; i < t.count; ++i) {
    const auto& v = a["data"][i];
    unsigned char* out = &t.bytes[i * dtype_size(t.dtype)];
    bool ok = v.is_number_float() ? convert_exact(v.get<double>(), t.dtype, out)
                                  : convert_exact(v.get<std::int64_t>(), t.dtype, out);
    EXPECT_TRUE(ok);
  }
  return t;
}

/// Element i as a double (the corpus dtypes: float64, float32, int32, int64).
inline double element_value(const TypedArray& t, std::size_t i) {
  const unsigned char* p = &t.bytes[i * dtype_size(t.dtype)];
  switch (t.dtype) {
    case DType::Float64: {
      double v;
      std::memcpy(&v, p, 8);
      return v;
    }
    case DType::Float32: {
      float v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case DType::Int32: {
      std::int32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case DType::Int64: {
      std::int64_t v;
      std::memcpy(&v, p, 8);
      return static_cast<double>(v);
    }
    default:
      ADD_FAILURE() << "unexpected dtype";
      return 0;
  }
}

/// Binds every argument of `p` from a corpus inputs.json (arrays, symbols, scalars); returns the
/// arrays, which the program reads and writes in place.
inline std::map<std::string, TypedArray> bind_corpus_inputs(Program& p, const nlohmann::json& inputs) {
  std::map<std::string, TypedArray> arrays;
  for (auto& a : p.arguments()) {
    if (a.kind == "array") {
      TypedArray& t = arrays[a.name] = typed_array(inputs["arrays"][a.name]);
      p.set_array(a.name, t.bytes.data(), a.dtype, t.count);
    } else if (a.kind == "symbol") {
      p.set_value(a.name, inputs["symbols"][a.name]["value"].get<std::int64_t>());
    } else {
      const auto& v = inputs["scalars"][a.name]["value"];
      if (v.is_number_float())
        p.set_value(a.name, v.get<double>());
      else
        p.set_value(a.name, v.get<std::int64_t>());
    }
  }
  return arrays;
}

/// Compares the outputs `arrays` hold with a corpus expected.json, within its tolerances (at most
/// five mismatches reported per output).
inline void expect_corpus_outputs(const nlohmann::json& expected, const std::map<std::string, TypedArray>& arrays) {
  for (auto& out : expected["outputs"]) {
    std::string name = out.get<std::string>();
    TypedArray want = typed_array(expected["arrays"][name]);
    const TypedArray& got = arrays.at(name);
    ASSERT_EQ(got.count, want.count) << name;
    auto tol =
        expected["tolerance"].value(expected["arrays"][name]["dtype"].get<std::string>(), nlohmann::json::object());
    double rtol = tol.value("rtol", 0.0), atol = tol.value("atol", 0.0);
    int bad = 0;
    for (std::size_t i = 0; i < want.count; ++i) {
      double g = element_value(got, i), w = element_value(want, i);
      if (!(std::abs(g - w) <= atol + rtol * std::abs(w)) && ++bad <= 5)
        ADD_FAILURE() << name << "[" << i << "] = " << g << ", expected " << w;
    }
    EXPECT_EQ(bad, 0) << name;
  }
}

}  // namespace sdfc::test
