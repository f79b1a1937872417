// Helpers shared by the tests: test data paths, reading JSON, collecting diagnostics.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "CorpusKnown.h"
#include "compiler/Compile.h"
#include "compiler/Convert.h"
#include "ir/Diagnostic.h"
#include "ir/JsonReader.h"
#include "ir/JsonWriter.h"
#include "ir/Validate.h"
#include "ir/Walk.h"
#include "passes/Pipeline.h"
#include "sdfc/sdfc.h"

namespace sdfc::test {

inline std::string data_path(const std::string& name) {
  return std::string(SDFC_TEST_DATA) + "/" + name;
}

/// Sets (or, with nullopt, unsets) an environment variable for the scope of a test.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    set(value);
  }
  ~ScopedEnv() { set(old_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
  void set(const std::optional<std::string>& value) {
    if (value)
      setenv(name_, value->c_str(), 1);
    else
      unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

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

/// Whether `path` (absolute, or "case/file" relative to the corpus) is a corpus file on the
/// known-unsupported list (CorpusKnown.h; the corpus tests check that it is refused).
inline bool known_unsupported_file(const std::string& path) {
  std::string dir = corpus_dir();
  std::string rel = !dir.empty() && path.rfind(dir + "/", 0) == 0 ? path.substr(dir.size() + 1) : path;
  return find_known_unsupported(rel) != nullptr;
}

/// The corpus's GPU programs that sdfc supports, without those on the known-unsupported list.
inline std::vector<std::string> supported_corpus_gpu_programs();

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

inline std::vector<std::string> supported_corpus_gpu_programs() {
  std::vector<std::string> out;
  for (auto& f : corpus_gpu_programs())
    if (!known_unsupported_file(f)) out.push_back(f);
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
  bool complex = t.dtype == DType::Complex64 || t.dtype == DType::Complex128;
  for (std::size_t i = 0; i < t.count; ++i) {
    const auto& v = a["data"][i];
    unsigned char* out = &t.bytes[i * dtype_size(t.dtype)];
    if (complex) {  // [re, im]
      DType part = t.dtype == DType::Complex64 ? DType::Float32 : DType::Float64;
      EXPECT_TRUE(v.is_array() && v.size() == 2 && convert_exact(v[0].get<double>(), part, out) &&
                  convert_exact(v[1].get<double>(), part, out + dtype_size(part)));
      continue;
    }
    bool ok = v.is_number_float() ? convert_exact(v.get<double>(), t.dtype, out)
              : v.is_boolean()    ? convert_exact(static_cast<std::int64_t>(v.get<bool>()), t.dtype, out)
                                  : convert_exact(v.get<std::int64_t>(), t.dtype, out);
    EXPECT_TRUE(ok);
  }
  return t;
}

/// How many numbers `t` holds: its elements, or two per element (re, im) for complex data.
inline std::size_t value_count(const TypedArray& t) {
  return t.dtype == DType::Complex64 || t.dtype == DType::Complex128 ? 2 * t.count : t.count;
}

/// Number i (of value_count) as a double (the corpus dtypes: float64, float32, int32, int64, and
/// the parts of complex64 and complex128, re and im interleaved).
inline double element_value(const TypedArray& t, std::size_t i) {
  DType d = t.dtype == DType::Complex64 ? DType::Float32 : t.dtype == DType::Complex128 ? DType::Float64 : t.dtype;
  const unsigned char* p = &t.bytes[i * dtype_size(d)];
  switch (d) {
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
    } else {
      // Symbols and scalars: integers, floats (GT4Py's float symbols) and bools.
      const auto& v = inputs[a.kind == "symbol" ? "symbols" : "scalars"][a.name]["value"];
      if (v.is_boolean())
        p.set_value(a.name, static_cast<std::int64_t>(v.get<bool>()));
      else if (v.is_number_float())
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
    for (std::size_t i = 0; i < value_count(want); ++i) {
      double g = element_value(got, i), w = element_value(want, i);
      if (!(std::abs(g - w) <= atol + rtol * std::abs(w)) && ++bad <= 5)
        ADD_FAILURE() << name << "[" << i << "] = " << g << ", expected " << w;
    }
    EXPECT_EQ(bad, 0) << name;
  }
}

/// Containers written through a floating-point write-conflict resolution in `sdfg` ("*" when a
/// nested SDFG writes one: its names are not the caller's): atomics make their last bits vary.
inline std::set<std::string> float_wcr_outputs(const SDFG& sdfg) {
  std::set<std::string> out;
  walk::for_each_block(sdfg.root, "", [&](const Block& b, const std::string&) {
    if (b.kind != BlockKind::State) return;
    for (auto& e : b.edges)
      if (e.memlet.wcr)
        if (const DataDesc* d = sdfg.find_data(e.memlet.data);
            d && (is_float(d->dtype) || d->dtype == DType::Complex64 || d->dtype == DType::Complex128))
          out.insert(e.memlet.data);
    for (auto& n : b.nodes)
      if (n->kind == NodeKind::NestedSDFG && !float_wcr_outputs(*n->sdfg).empty()) out.insert("*");
  });
  return out;
}

/// The differential check: the outputs of two configurations of one program agree bit for bit,
/// except containers in `tolerant` (or all, with "*"), which agree within expected.json's
/// tolerance.
inline void expect_same_outputs(const nlohmann::json& expected, const std::map<std::string, TypedArray>& a,
                                const std::map<std::string, TypedArray>& b, const std::set<std::string>& tolerant,
                                const std::string& what) {
  for (auto& out : expected["outputs"]) {
    std::string name = out.get<std::string>();
    const TypedArray& x = a.at(name);
    const TypedArray& y = b.at(name);
    ASSERT_EQ(x.count, y.count) << name << " (" << what << ")";
    bool loose = tolerant.count(name) || tolerant.count("*");
    auto tol =
        expected["tolerance"].value(expected["arrays"][name]["dtype"].get<std::string>(), nlohmann::json::object());
    double rtol = loose ? tol.value("rtol", 0.0) : 0.0, atol = loose ? tol.value("atol", 0.0) : 0.0;
    std::size_t size = dtype_size(x.dtype) * x.count / std::max<std::size_t>(1, value_count(x));
    int bad = 0;
    for (std::size_t i = 0; i < value_count(x); ++i) {
      bool same =
          loose ? std::abs(element_value(x, i) - element_value(y, i)) <= atol + rtol * std::abs(element_value(x, i))
                : std::equal(&x.bytes[i * size], &x.bytes[(i + 1) * size], &y.bytes[i * size]);
      if (!same && ++bad <= 5)
        ADD_FAILURE() << name << "[" << i << "]: " << element_value(x, i) << " vs " << element_value(y, i) << " ("
                      << what << (loose ? ", within tolerance" : ", bit for bit") << ")";
    }
    EXPECT_EQ(bad, 0) << name << " differs between configurations (" << what << ")";
  }
}

/// The map scopes of `sdfg` and of the SDFGs nested in it.
inline int map_count(const SDFG& sdfg) {
  int maps = 0;
  walk::for_each_sdfg(sdfg, "", [&](const SDFG& s, const std::string&) {
    walk::for_each_node(
        s, "", [&](const Block&, int, const Node& n, const std::string&) { maps += n.kind == NodeKind::MapEntry; });
  });
  return maps;
}

/// The map scopes of `sdfg` after the pipeline up to fuse-maps, with fusion on or off: fewer with
/// it on when fusion merges maps.
inline int maps_after_fusion(SDFG& sdfg, bool fuse, Target target = Target::CPU) {
  CompileOptions o;
  o.target = target;
  o.fuse_maps = fuse;
  PipelineHooks hooks;
  hooks.stop_after = "fuse-maps";
  run_pipeline(sdfg, o, hooks);
  return map_count(sdfg);
}

/// The same for the SDFG in file `path`.
inline int maps_after_fusion(const std::string& path, bool fuse, Target target = Target::CPU) {
  return maps_after_fusion(*load_sdfg_file(path), fuse, target);
}

}  // namespace sdfc::test
