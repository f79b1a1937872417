#include "compiler/Run.h"

#include <fmt/format.h>
#include <unistd.h>

#include <complex>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "compiler/Compile.h"
#include "compiler/Convert.h"
#include "compiler/Output.h"
#include "ir/Diagnostic.h"
#include "sdfc/sdfc.h"

namespace sdfc {
namespace {

using InJson = nlohmann::json;

struct Buffer {
  DType dtype;
  std::vector<std::int64_t> shape;
  std::size_t count = 0;
  std::unique_ptr<unsigned char, void (*)(void*)> data{nullptr, std::free};
};

[[noreturn]] void bad_input(const std::string& file, const std::string& ptr, const std::string& msg) {
  throw UserError(Diagnostic{file, ptr, 0, 0, msg});
}

/// Converts one JSON number into `t` at `out`, exactly, or fails with the value's pointer.
void put_number(const InJson& v, DType t, unsigned char* out, const std::string& file, const std::string& ptr) {
  if ((t == DType::Complex64 || t == DType::Complex128) && v.is_array()) {  // [re, im]
    if (v.size() != 2)
      bad_input(file, ptr, fmt::format("expected a complex number as [re, im] but found {}", v.dump()));
    DType part = t == DType::Complex64 ? DType::Float32 : DType::Float64;
    put_number(v[0], part, out, file, ptr + "/0");
    put_number(v[1], part, out + dtype_size(part), file, ptr + "/1");
    return;
  }
  bool ok;
  if (v.is_number_integer() && !v.is_number_unsigned())
    ok = convert_exact(v.get<std::int64_t>(), t, out);
  else if (v.is_number_unsigned())
    ok = v.get<std::uint64_t>() <= INT64_MAX && convert_exact(v.get<std::int64_t>(), t, out);
  else if (v.is_number_float())
    ok = convert_exact(v.get<double>(), t, out);
  else if (v.is_boolean())
    ok = convert_exact(static_cast<std::int64_t>(v.get<bool>()), t, out);
  else if (v.is_string() && (v == "NaN" || v == "Infinity" || v == "-Infinity"))
    ok = convert_exact(v == "NaN" ? NAN : v == "Infinity" ? INFINITY : -INFINITY, t, out);
  else
    bad_input(file, ptr, fmt::format("expected a number but found {}", v.dump()));
  if (!ok) bad_input(file, ptr, fmt::format("value {} does not convert exactly to {}", v.dump(), to_string(t)));
}

const InJson* entry(const InJson& doc, const char* section, const std::string& name) {
  auto s = doc.find(section);
  if (s == doc.end() || !s->is_object()) return nullptr;
  auto e = s->find(name);
  return e == s->end() ? nullptr : &*e;
}

/// The pointer of argument `name`'s entry in the inputs file `doc` (its section when absent).
std::string argument_pointer(const std::string& name, const InJson& doc) {
  for (const char* section : {"arrays", "scalars", "symbols"})
    if (entry(doc, section, name)) return std::string("/") + section + "/" + pointer_token(name);
  return "";
}

}  // namespace

int run_program(const RunRequest& req, std::ostream& out, std::ostream& err) {
  InJson doc;
  try {
    std::ifstream in(req.inputs_path, std::ios::binary);
    if (!in) {
      err << fmt::format("{}: error: cannot open the inputs file\n", req.inputs_path);
      return 1;
    }
    doc = InJson::parse(in);
  } catch (const InJson::exception& e) {
    err << fmt::format("{}: error: malformed JSON: {}\n", req.inputs_path, e.what());
    return 1;
  }
  try {
    if (!doc.is_object())
      bad_input(req.inputs_path, "", "expected an object with \"symbols\", \"scalars\" and \"arrays\"");
    Program program = compile_program_file(req.sdfg_path, req.options, req.use_cache);
    std::map<std::string, Buffer> buffers;
    for (auto& a : program.arguments()) {
      DType t = parse_dtype(a.dtype).value_or(DType::Float64);
      if (a.kind == "array") {
        const InJson* e = entry(doc, "arrays", a.name);
        std::string p = "/arrays/" + pointer_token(a.name);
        if (!e)
          bad_input(req.inputs_path, "/arrays",
                    fmt::format("missing array argument \"{}\" ({} [{}]) of program \"{}\"", a.name, a.dtype,
                                fmt::join(a.shape, ", "), program.name()));
        if (!e->is_object() || !e->contains("data") || !(*e)["data"].is_array())
          bad_input(req.inputs_path, p, "expected {\"dtype\", \"shape\", \"data\": [...]}");
        Buffer b;
        b.dtype = t;
        const InJson& data = (*e)["data"];
        b.count = data.size();
        if (e->contains("shape")) {
          const InJson& shape = (*e)["shape"];
          std::size_t elements = 1;
          bool ok = shape.is_array();
          for (std::size_t i = 0; ok && i < shape.size(); ++i) {
            ok = shape[i].is_number_integer() && shape[i].get<std::int64_t>() >= 0;
            if (ok)
              b.shape.push_back(shape[i].get<std::int64_t>()), elements *= static_cast<std::size_t>(b.shape.back());
          }
          if (!ok)
            bad_input(req.inputs_path, p + "/shape",
                      fmt::format("expected a list of non-negative integers but found {}", shape.dump()));
          if (elements != b.count)
            bad_input(req.inputs_path, p + "/shape",
                      fmt::format("shape {} has {} elements but \"data\" has {}", shape.dump(), elements, b.count));
        }
        // The entry's own dtype, when it names one, must hold its values exactly too.
        std::optional<DType> declared;
        if (e->contains("dtype")) {
          const InJson& d = (*e)["dtype"];
          declared = d.is_string() ? parse_dtype(d.get<std::string>()) : std::nullopt;
          if (!declared)
            bad_input(req.inputs_path, p + "/dtype",
                      fmt::format("unknown dtype {}; expected a DaCe dtype such as \"float64\"", d.dump()));
        }
        std::size_t bytes = std::max<std::size_t>(64, (b.count * dtype_size(t) + 63) / 64 * 64);
        b.data.reset(static_cast<unsigned char*>(std::aligned_alloc(64, bytes)));
        if (!b.data) bad_input(req.inputs_path, p, "out of memory");
        for (std::size_t i = 0; i < b.count; ++i) {
          std::string vp = p + "/data/" + std::to_string(i);
          if (declared && *declared != t) {
            alignas(16) unsigned char tmp[16];
            put_number(data[i], *declared, tmp, req.inputs_path, vp);
          }
          put_number(data[i], t, b.data.get() + i * dtype_size(t), req.inputs_path, vp);
        }
        program.set_array(a.name, b.data.get(), a.dtype, b.count);
        buffers.emplace(a.name, std::move(b));
      } else {
        const char* section = a.kind == "symbol" ? "symbols" : "scalars";
        const InJson* e = entry(doc, section, a.name);
        if (!e) e = entry(doc, a.kind == "symbol" ? "scalars" : "symbols", a.name);
        if (!e)
          bad_input(req.inputs_path, std::string("/") + section,
                    fmt::format("missing {} argument \"{}\" ({}) of program \"{}\"", a.kind, a.name, a.dtype,
                                program.name()));
        const InJson& v = e->is_object() && e->contains("value") ? (*e)["value"] : *e;
        std::string p = std::string("/") + section + "/" + pointer_token(a.name) + "/value";
        alignas(16) unsigned char tmp[16];
        put_number(v, t, tmp, req.inputs_path, p);
        if (v.is_array())  // a complex number [re, im] (put_number accepted it)
          program.set_value(a.name, std::complex<double>(v[0].get<double>(), v[1].get<double>()));
        else if (v.is_number_float())
          program.set_value(a.name, v.get<double>());
        else if (v.is_string())  // "NaN", "Infinity", "-Infinity" (put_number accepted it)
          program.set_value(a.name, v == "NaN" ? NAN : v == "Infinity" ? INFINITY : -INFINITY);
        else if (v.is_boolean())  // bool symbols and scalars (GT4Py's `apply_clip`)
          program.set_value(a.name, static_cast<std::int64_t>(v.get<bool>()));
        else
          program.set_value(a.name, v.get<std::int64_t>());
      }
    }
    // Symbols that only size arrays let the program check the arrays it is given.
    if (auto s = doc.find("symbols"); s != doc.end() && s->is_object())
      for (auto it = s->begin(); it != s->end(); ++it) {
        bool is_arg = false;
        for (auto& a : program.arguments()) is_arg |= a.name == it.key();
        const InJson& v = it.value().is_object() && it.value().contains("value") ? it.value()["value"] : it.value();
        if (!is_arg && v.is_number_integer()) {
          try {
            program.set_value(it.key(), v.get<std::int64_t>());
          } catch (const Error&) {
            // not a symbol of this program: ignored, as every entry the program does not take
          }
        }
      }
    program.call();
    std::string text = "{\"arrays\": {";
    bool first = true;
    for (auto& a : program.arguments()) {
      if (a.kind != "array") continue;
      const Buffer& b = buffers.at(a.name);
      text += fmt::format("{}\n  \"{}\": {{\"dtype\": \"{}\", \"shape\": [{}], \"data\": [", first ? "" : ",", a.name,
                          a.dtype, fmt::join(b.shape, ", "));
      first = false;
      for (std::size_t i = 0; i < b.count; ++i) {
        if (i) text += ", ";
        text += format_element(b.data.get() + i * dtype_size(b.dtype), b.dtype);
      }
      text += "]}";
    }
    text += "\n}}\n";
    if (req.output_path.empty() || req.output_path == "-") {
      out << text << std::flush;
      if (!out) {
        err << "sdfc run: error: cannot write the results to standard output\n";
        return 1;
      }
    } else {
      write_output(req.output_path, text);
    }
    return 0;
  } catch (const UserError& e) {
    for (auto& d : e.diagnostics()) err << d.str() << "\n";
  } catch (const ArgumentError& e) {
    // A binding the program refused (an array too small for the symbol values): at its entry.
    err << Diagnostic{req.inputs_path, argument_pointer(e.argument(), doc), 0, 0, e.what()}.str() << "\n";
  } catch (const Error& e) {
    err << e.what() << "\n";
  }
  return 1;
}

}  // namespace sdfc
