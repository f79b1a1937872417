#include "ir/JsonReader.h"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <unordered_map>

#include "ir/Diagnostic.h"
#include "lang/CodeWriter.h"

namespace sdfc {
namespace {

/// Text from the file quoted in a message: at most 80 characters of it.
std::string excerpt(const std::string& text) {
  if (text.size() <= 80) return text;
  return fmt::format("{}... ({} characters)", text.substr(0, 72), text.size());
}

const Json kEmptyArray = Json::array();
const Json kEmptyObject = Json::object();

/// Thrown by the parser callback when the input nests too deeply.
struct TooDeep {
  std::string path;
};

std::string json_kind(const Json& j) {
  switch (j.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::boolean:
      return j.get<bool>() ? "true" : "false";
    case Json::value_t::string: {
      std::string s = j.get<std::string>();
      if (s.size() > 40) s = s.substr(0, 40) + "...";
      return fmt::format("the string \"{}\"", s);
    }
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float:
      return fmt::format("the number {}", j.dump());
    case Json::value_t::object:
      return "an object";
    case Json::value_t::array:
      return "an array";
    default:
      return "a value of another kind";
  }
}

/// A type name from the file as a message quotes it: "Weird", or what was found instead of a string.
std::string type_name(const Json& j) {
  return j.is_string() ? fmt::format("\"{}\"", j.get<std::string>().substr(0, 60)) : json_kind(j);
}

/// Walks the JSON document, building the IR; `ptr` is the JSON pointer of the current value.
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  /// A problem after which reading cannot go on; reported with the problems deferred before it.
  [[noreturn]] void fail(const std::string& ptr, const std::string& msg) const {
    defer(ptr, msg);
    throw UserError(std::move(deferred_));
  }
  /// A problem in one value (an unknown enum name, a malformed expression) after which reading
  /// goes on with a stand-in, so that one run reports every such problem of the file.
  void defer(const std::string& ptr, const std::string& msg) const {
    deferred_.push_back(Diagnostic{file_, ptr, 0, 0, msg});
  }

  std::unique_ptr<SDFG> read_root(const Json& j) {
    if (!j.is_object())
      fail("", fmt::format("expected an SDFG (a JSON object with \"type\": \"SDFG\") but found {}", json_kind(j)));
    auto t = j.find("type");
    if (t == j.end() || !t->is_string() || *t != "SDFG")
      fail("/type", fmt::format("expected \"SDFG\" at the top level but found {}; is this a DaCe .sdfg file?",
                                t == j.end() ? std::string("no \"type\" key") : json_kind(*t)));
    std::string version;
    if (auto v = j.find("dace_version"); v != j.end()) {
      if (!v->is_string()) fail("/dace_version", fmt::format("expected a version string but found {}", json_kind(*v)));
      version = v->get<std::string>();
    }
    dialect_ = version_uses_typed_symbols(version) ? Dialect::Typed : Dialect::Plain;
    auto sdfg = read_sdfg(j, "", 0);
    if (!deferred_.empty()) throw UserError(std::move(deferred_));
    sdfg->dace_version = version;
    return sdfg;
  }

 private:
  std::string file_;
  Dialect dialect_ = Dialect::Typed;
  mutable std::unordered_map<std::string, Expr> exprs_;
  mutable std::vector<Diagnostic> deferred_;  ///< problems found so far (defer)

  static std::string at(const std::string& ptr, const std::string& key) { return ptr + "/" + pointer_token(key); }
  static std::string at(const std::string& ptr, std::size_t i) { return ptr + "/" + std::to_string(i); }

  const Json& require(const Json& obj, const std::string& ptr, const char* key) const {
    auto it = obj.find(key);
    if (it == obj.end()) fail(ptr, fmt::format("missing required key \"{}\"", key));
    return *it;
  }
  const Json& object(const Json& j, const std::string& ptr, const char* what) const {
    if (!j.is_object()) fail(ptr, fmt::format("expected {} (an object) but found {}", what, json_kind(j)));
    return j;
  }
  const Json& array(const Json& j, const std::string& ptr, const char* what) const {
    if (!j.is_array()) fail(ptr, fmt::format("expected {} (an array) but found {}", what, json_kind(j)));
    return j;
  }
  std::string string(const Json& j, const std::string& ptr, const char* what) const {
    if (!j.is_string()) fail(ptr, fmt::format("expected {} (a string) but found {}", what, json_kind(j)));
    return j.get<std::string>();
  }
  bool boolean(const Json& j, const std::string& ptr, const char* what) const {
    if (!j.is_boolean()) fail(ptr, fmt::format("expected {} (true or false) but found {}", what, json_kind(j)));
    return j.get<bool>();
  }
  template <typename PtrFn>
  int index(const Json& j, const PtrFn& ptr, const char* what) const {
    // DaCe writes node and block indices as strings ("3") in edges and as numbers elsewhere.
    if (j.is_number_integer()) {
      auto v = j.get<std::int64_t>();
      if (v >= 0 && v < (1 << 30)) return static_cast<int>(v);
    } else if (j.is_string()) {
      const std::string& s = *j.get_ptr<const std::string*>();
      if (!s.empty() && s.size() < 10 && s.find_first_not_of("0123456789") == std::string::npos) return std::stoi(s);
    }
    fail(ptr(), fmt::format("expected {} (a non-negative index) but found {}", what, json_kind(j)));
  }
  int index(const Json& j, const std::string& ptr, const char* what) const {
    return index(
        j, [&] { return ptr; }, what);
  }

  /// Attributes not consumed by the reader go to `extra`.
  static Json rest(const Json& attrs, std::initializer_list<const char*> consumed) {
    Json out = Json::object();
    for (auto it = attrs.begin(); it != attrs.end(); ++it) {
      bool used = false;
      for (const char* k : consumed) used |= it.key() == k;
      if (!used) out[it.key()] = it.value();
    }
    return out;
  }

  /// An expression; `ptr()` makes its JSON pointer, only when there is an error to report.
  template <typename PtrFn>
  Expr expr_at(const Json& j, const PtrFn& ptr, const char* what) const {
    const std::string* text = j.is_string() ? j.get_ptr<const std::string*>() : nullptr;
    std::string number;
    if (!text) {
      if (!j.is_number_integer())
        fail(ptr(), fmt::format("expected {} (an expression string) but found {}", what, json_kind(j)));
      number = j.dump();
      text = &number;
    }
    // Files repeat the same few expressions thousands of times ("0", "-1 + $N", "symbol($i, ...)");
    // expressions are immutable, so one parse serves every occurrence.
    auto hit = exprs_.find(*text);
    if (hit != exprs_.end()) return hit->second;
    try {
      Expr e = parse_expr(*text, dialect_);
      exprs_.emplace(*text, e);
      return e;
    } catch (const ExprSyntaxError& e) {
      defer(ptr(),
            fmt::format("malformed expression \"{}\": {} (at character {})", excerpt(*text), e.what(), e.offset + 1));
      return make_symbol("?");  // a stand-in; the file is rejected when reading ends
    }
  }
  Expr expr(const Json& j, const std::string& ptr, const char* what) const {
    return expr_at(
        j, [&] { return ptr; }, what);
  }
  std::vector<Expr> expr_list(const Json& j, const std::string& ptr, const char* what) const {
    array(j, ptr, what);
    std::vector<Expr> out;
    for (std::size_t i = 0; i < j.size(); ++i) out.push_back(expr(j[i], at(ptr, i), what));
    return out;
  }

  DType dtype(const Json& j, const std::string& ptr) const {
    if (j.is_object() && j.value("type", "") == "struct") return struct_dtype(j, ptr);
    if (j.is_object()) {
      std::string kind = j.contains("type") ? j["type"].dump() : std::string("object");
      std::string advice;
      if (kind == "\"opaque\"")
        advice =
            "; DaCe's opaque types are C types sdfc does not know, such as the Python objects (pyobject) a "
            "callback returns: let callbacks return numbers or arrays";
      if (kind == "\"string\"")
        advice = "; DaCe's strings reach Python callbacks as Python objects: pass numbers or arrays instead";
      fail(ptr, fmt::format(
                    "unsupported composite dtype {} (supported: scalar types such as float64, and structs of them){}",
                    kind, advice));
    }
    std::string s = string(j, ptr, "a dtype name");
    auto t = parse_dtype(s);
    if (!t) {
      defer(ptr, fmt::format("unknown dtype \"{}\"; expected one of {}", s, dtype_names()));
      return DType::Float64;  // a stand-in
    }
    return *t;
  }

  /// DaCe's `struct` dtype: {"type": "struct", "name": ..., "data": [[field, dtype], ...]}, fields
  /// of scalar types (DaCe's argmin/argmax reduce into a struct of value and index).
  DType struct_dtype(const Json& j, const std::string& ptr) const {
    StructType st;
    st.name = string(require(j, ptr, "name"), at(ptr, "name"), "a struct name");
    if (!is_identifier(st.name))
      fail(at(ptr, "name"), fmt::format("struct name \"{}\" is not a C identifier", st.name));
    std::string fp = at(ptr, "data");
    const Json& fields = require(j, ptr, "data");
    array(fields, fp, "a list of struct fields ([name, dtype])");
    for (std::size_t i = 0; i < fields.size(); ++i) {
      std::string p = at(fp, i);
      if (!fields[i].is_array() || fields[i].size() != 2) fail(p, "a struct field must be a pair [name, dtype]");
      std::string name = string(fields[i][0], at(p, 0), "a field name");
      if (!is_identifier(name)) fail(at(p, 0), fmt::format("struct field name \"{}\" is not a C identifier", name));
      for (auto& f : st.fields)
        if (f.first == name) fail(at(p, 0), fmt::format("struct \"{}\" has two fields named \"{}\"", st.name, name));
      const Json& fj = fields[i][1];
      if (fj.is_object() && fj.value("type", Json()) == "pointer" && fj.contains("dtype")) {
        // a Structure's C type: a pointer to the elements of an array member or to a nested struct
        st.fields.emplace_back(name, dtype(fj["dtype"], at(at(p, 1), "dtype")));
        st.pointers.push_back(name);
        continue;
      }
      if (fj.is_object())
        fail(at(p, 1), fmt::format("struct field \"{}\" of struct \"{}\" is itself composite; sdfc's struct fields "
                                   "are scalars and pointers",
                                   name, st.name));
      st.fields.emplace_back(name, dtype(fj, at(p, 1)));
    }
    if (st.fields.empty()) fail(fp, fmt::format("struct \"{}\" has no fields", st.name));
    std::sort(st.pointers.begin(), st.pointers.end());
    return intern_struct(st);
  }

  /// DaCe's `callback` dtype: {"type": "callback", "arguments": [...], "returntypes": [...]}, each
  /// entry an Array or Scalar descriptor, a dtype name, or null (no value, skipped as DaCe does).
  Callback callback(const Json& j, const std::string& ptr) const {
    Callback cb;
    auto values = [&](const char* key, std::vector<Callback::Value>& out) {
      auto it = j.find(key);
      if (it == j.end()) return;
      std::string p = at(ptr, key);
      array(*it, p, "a list of callback values");
      for (std::size_t i = 0; i < it->size(); ++i) {
        const Json& v = (*it)[i];
        std::string vp = at(p, i);
        if (v.is_null()) continue;
        if (v.is_string()) {
          out.push_back({false, dtype(v, vp)});
          continue;
        }
        object(v, vp, "a callback value");
        std::string type = string(require(v, vp, "type"), at(vp, "type"), "a descriptor type");
        bool array = type == "Array" || type == "ArrayView" || type == "View";
        if (!array && type != "Scalar")
          fail(at(vp, "type"), fmt::format("a callback {} of type \"{}\" is not supported; sdfc passes arrays and "
                                           "scalars to callbacks",
                                           std::string(key) == "arguments" ? "argument" : "result", type));
        Callback::Value value{array, DType::Int32};
        auto attrs = v.find("attributes");
        if (attrs != v.end() && attrs->is_object() && attrs->contains("dtype"))
          value.dtype = dtype((*attrs)["dtype"], at(at(vp, "attributes"), "dtype"));
        out.push_back(value);
      }
    };
    values("arguments", cb.arguments);
    values("returntypes", cb.results);
    return cb;
  }

  CodeBlock code(const Json& j, const std::string& ptr, const char* what) const {
    object(j, ptr, what);
    CodeBlock c;
    c.code = string(require(j, ptr, "string_data"), at(ptr, "string_data"), "source code");
    if (auto l = j.find("language"); l != j.end()) {
      std::string lang = string(*l, at(ptr, "language"), "a language name");
      auto parsed = parse_language(lang);
      if (!parsed)
        fail(at(ptr, "language"), fmt::format("unsupported code language \"{}\"; expected Python or CPP", lang));
      c.language = *parsed;
    }
    return c;
  }

  /// DaCe's Indices subset ({"type": "Indices", "indices": ["i", "j + 1"]}): one element per
  /// dimension, read as the equivalent Range.
  template <typename PtrFn>
  Range indices(const Json& j, const PtrFn& ptr) const {
    auto it = j.find("indices");
    if (it == j.end()) fail(ptr(), "missing required key \"indices\" of an Indices subset");
    if (!it->is_array())
      fail(at(ptr(), "indices"), fmt::format("expected a list of indices (an array) but found {}", json_kind(*it)));
    Range out;
    for (std::size_t i = 0; i < it->size(); ++i) {
      Expr x = expr_at((*it)[i], [&] { return at(at(ptr(), "indices"), i); }, "an index");
      out.push_back({x, x, make_int(1), make_int(1)});
    }
    return out;
  }

  template <typename PtrFn>
  Range range(const Json& j, const PtrFn& ptr) const {
    if (!j.is_object()) fail(ptr(), fmt::format("expected a Range (an object) but found {}", json_kind(j)));
    auto t = j.find("type");
    if (t != j.end() && (!t->is_string() || (*t != "Range" && *t != "Indices")))
      fail(at(ptr(), "type"),
           fmt::format("unsupported subset type {}; expected \"Range\" or \"Indices\"", type_name(*t)));
    if (t != j.end() && *t == "Indices") return indices(j, ptr);
    auto rs_it = j.find("ranges");
    if (rs_it == j.end()) fail(ptr(), "missing required key \"ranges\"");
    const Json& rs = *rs_it;
    if (!rs.is_array())
      fail(at(ptr(), "ranges"), fmt::format("expected a list of ranges (an array) but found {}", json_kind(rs)));
    Range out;
    out.reserve(rs.size());
    for (std::size_t i = 0; i < rs.size(); ++i) {
      const Json& dim = rs[i];
      auto p = [&] { return at(at(ptr(), "ranges"), i); };
      if (!dim.is_object())
        fail(p(), fmt::format("expected a range dimension (an object) but found {}", json_kind(dim)));
      auto field = [&](const char* k) -> const Json* {
        auto it = dim.find(k);
        return it == dim.end() ? nullptr : &*it;
      };
      const Json* start = field("start");
      const Json* end = field("end");
      if (!start) fail(p(), "missing required key \"start\"");
      if (!end) fail(p(), "missing required key \"end\"");
      RangeDim d;
      d.start = expr_at(
          *start, [&] { return at(p(), "start"); }, "a range start");
      d.end = expr_at(
          *end, [&] { return at(p(), "end"); }, "a range end");
      const Json* step = field("step");
      const Json* tile = field("tile");
      d.step = step ? expr_at(
                          *step, [&] { return at(p(), "step"); }, "a range step")
                    : make_int(1);
      d.tile = tile ? expr_at(
                          *tile, [&] { return at(p(), "tile"); }, "a range tile")
                    : make_int(1);
      out.push_back(std::move(d));
    }
    return out;
  }

  std::vector<Connector> connectors(const Json& attrs, const char* key, const std::string& ptr) const {
    std::vector<Connector> out;
    auto it = attrs.find(key);
    if (it == attrs.end()) return out;
    std::string p = at(ptr, key);
    object(*it, p, "a connector map");
    for (auto c = it->begin(); c != it->end(); ++c) {
      Connector conn{c.key(), std::nullopt};
      const Json& t = c.value();
      if (t.is_object() && t.value("type", "") == "pointer" && t.contains("dtype")) {
        conn.dtype = dtype(t["dtype"], at(at(p, c.key()), "dtype"));
        conn.pointer = true;
      } else if (!t.is_null()) {
        conn.dtype = dtype(t, at(p, c.key()));
      }
      out.push_back(conn);
    }
    return out;
  }

  // -------------------------------------------------------------------------------------------

  std::unique_ptr<SDFG> read_sdfg(const Json& j, const std::string& ptr, int depth) {
    object(j, ptr, "an SDFG");
    auto sdfg = std::make_unique<SDFG>();
    std::string ap = at(ptr, "attributes");
    const Json& attrs = object(require(j, ptr, "attributes"), ap, "SDFG attributes");
    sdfg->name = string(require(attrs, ap, "name"), at(ap, "name"), "the SDFG name");

    if (auto a = attrs.find("_arrays"); a != attrs.end()) {
      std::string p = at(ap, "_arrays");
      object(*a, p, "the data containers");
      for (auto it = a->begin(); it != a->end(); ++it) {
        if (it.value().is_object() && it.value().value("type", Json()) == "Structure")
          structure(it.key(), it.value(), at(p, it.key()), std::nullopt, sdfg->arrays);
        else
          sdfg->arrays.emplace_back(it.key(), data_desc(it.value(), at(p, it.key())));
      }
    }
    if (auto s = attrs.find("symbols"); s != attrs.end()) {
      std::string p = at(ap, "symbols");
      object(*s, p, "the symbol table");
      for (auto it = s->begin(); it != s->end(); ++it) {
        const Json& v = it.value();
        if (v.is_object() && v.value("type", "") == "callback")
          sdfg->callbacks.emplace_back(it.key(), callback(v, at(p, it.key())));
        else
          sdfg->symbols.emplace_back(it.key(), dtype(v, at(p, it.key())));
      }
    }
    if (auto a = attrs.find("arg_names"); a != attrs.end()) {
      std::string p = at(ap, "arg_names");
      array(*a, p, "the argument names");
      for (std::size_t i = 0; i < a->size(); ++i)
        sdfg->arg_names.push_back(string((*a)[i], at(p, i), "an argument name"));
    }
    auto frame_code = [&](const char* key, CodeBlock& out, std::vector<std::pair<std::string, CodeBlock>>& targets) {
      auto c = attrs.find(key);
      if (c == attrs.end()) return;
      std::string p = at(ap, key);
      object(*c, p, "target code");
      for (auto it = c->begin(); it != c->end(); ++it) {
        const std::string& where = it.key();
        if (where != "frame" && where != "cpu" && where != "cuda" && where != "hip")
          fail(at(p, where), fmt::format("unknown code location \"{}\" in {}; DaCe's locations are frame, cpu, cuda "
                                         "and hip",
                                         where, key));
        CodeBlock block = code(it.value(), at(p, where), "code");
        if (block.language != Language::CPP && !block.code.empty())
          fail(at(p, where), fmt::format("{} must be C++ (language \"CPP\")", key));
        block.language = Language::CPP;
        if (where == "frame")
          out = block;
        else if (!block.code.empty())
          targets.emplace_back(where, block);
      }
    };
    frame_code("global_code", sdfg->global_code, sdfg->target_global_code);
    frame_code("init_code", sdfg->init_code, sdfg->target_init_code);
    frame_code("exit_code", sdfg->exit_code, sdfg->target_exit_code);
    if (auto c = attrs.find("constants_prop"); c != attrs.end() && !c->is_null())
      constants(*c, at(ap, "constants_prop"), *sdfg);
    // constants_prop stays in `extra` as read, for the writer: the values live on the descriptors.
    sdfg->extra = rest(attrs, {"name", "_arrays", "symbols", "arg_names", "global_code", "init_code", "exit_code"});
    if (auto v = j.find("dace_version"); v != j.end() && v->is_string()) sdfg->dace_version = v->get<std::string>();
    sdfg->top_extra = rest(j, {"type", "attributes", "nodes", "edges", "collapsed", "label", "id", "cfg_list_id",
                               "start_block", "dace_version", "start_state", "sdfg_list_id"});
    read_region_body(j, ptr, sdfg->root, depth);
    return sdfg;
  }

  /// The SDFG's `constants_prop` ({name: [descriptor, value]}, as DaCe writes it): each names a
  /// transient of the SDFG, whose elements it gives (a NumPy array `{"type": "ndarray", "data":
  /// nested lists}` or, for a scalar, a number).
  void constants(const Json& c, const std::string& ptr, SDFG& sdfg) const {
    object(c, ptr, "the SDFG's constants");
    for (auto it = c.begin(); it != c.end(); ++it) {
      std::string p = at(ptr, it.key());
      DataDesc* d = sdfg.find_data(it.key());
      // A constant no container holds (a global array the program only takes the length of): not
      // materialized; a use of its name elsewhere is an unknown name there, refused by validation.
      if (!d && !sdfg.symbol_type(it.key())) continue;
      if (!d || !d->transient)
        fail(p, fmt::format("unsupported SDFG constant \"{}\": sdfc supports constants that give the contents of "
                            "one of the SDFG's transients; pass a value like this one as a symbol or an argument",
                            it.key()));
      array(it.value(), p, "a constant ([descriptor, value])");
      if (it.value().size() != 2) fail(p, "a constant must be a pair [descriptor, value]");
      std::string vp = at(p, 1);
      const Json& v = it.value()[1];
      const Json& data = v.is_object() && v.value("type", "") == "ndarray" && v.contains("data") ? v["data"] : v;
      std::string dp = &data == &v ? vp : at(vp, "data");
      if (d->dtype == DType::Float16 || d->dtype == DType::Complex64 || d->dtype == DType::Complex128)
        fail(dp, fmt::format("unsupported constant \"{}\" of type {}: sdfc's constants are of integer, boolean or "
                             "real types",
                             it.key(), to_string(d->dtype)));
      std::vector<std::int64_t> shape;
      for (std::size_t k = 0; k < d->shape.size(); ++k) {
        auto n = as_constant(d->shape[k]);
        if (!n) fail(p, fmt::format("constant \"{}\" has a symbolic shape; constants need constant shapes", it.key()));
        shape.push_back(*n);
      }
      if (d->kind == DataKind::Scalar) shape.clear();
      // C order: the stride of each dimension is the product of the later extents.
      std::int64_t stride = 1;
      for (std::size_t k = shape.size(); k-- > 0;) {
        if (shape[k] != 1 && as_constant(d->strides[k]) != stride)
          fail(at(p, 0),
               fmt::format("constant \"{}\" is not laid out in C order; sdfc fills constants in C order", it.key()));
        stride *= shape[k];
      }
      Json flat = Json::array();
      flatten(data, dp, shape, 0, flat);
      d->constant = std::move(flat);
    }
  }

  /// Appends the elements of `v` (nested lists matching `shape` from dimension `k`) to `flat`.
  void flatten(const Json& v, const std::string& ptr, const std::vector<std::int64_t>& shape, std::size_t k,
               Json& flat) const {
    if (k == shape.size()) {
      if (!v.is_number() && !v.is_boolean())
        fail(ptr, "a constant's elements must be numbers or booleans (NaN and infinities are not JSON)");
      flat.push_back(v);
      return;
    }
    if (!v.is_array() || static_cast<std::int64_t>(v.size()) != shape[k])
      fail(ptr, fmt::format("a constant's value does not match its shape: dimension {} needs a list of {} elements", k,
                            shape[k]));
    for (std::size_t i = 0; i < v.size(); ++i) flatten(v[i], at(ptr, i), shape, k + 1, flat);
  }

  /// DaCe's `Structure` descriptor `name` (SDFG.h, DataDesc::structure): the structure, then each
  /// member as the container `name.field` (nested structures the same way, after their parent).
  /// `parent_transient` is the enclosing structure's transience (a member has its structure's).
  /// Returns the structure's struct type.
  DType structure(const std::string& name, const Json& j, const std::string& ptr, std::optional<bool> parent_transient,
                  std::vector<std::pair<std::string, DataDesc>>& out) const {
    std::string ap = at(ptr, "attributes");
    const Json& attrs = j.contains("attributes") ? object(j["attributes"], ap, "descriptor attributes") : kEmptyObject;
    DataDesc d;
    d.structure = true;
    d.shape = {make_int(1)};
    d.strides = {make_int(1)};
    d.total_size = make_int(1);
    d.offset = {make_int(0)};
    if (auto t = attrs.find("transient"); t != attrs.end()) d.transient = boolean(*t, at(ap, "transient"), "transient");
    if (parent_transient) {
      d.transient = *parent_transient;
      d.member = !*parent_transient;
    }
    storage(attrs, ap, d);
    StructType st;
    st.name = string(require(attrs, ap, "name"), at(ap, "name"), "a structure's type name");
    if (!is_identifier(st.name))
      fail(at(ap, "name"), fmt::format("structure type name \"{}\" is not a C identifier", st.name));
    std::string mp = at(ap, "members");
    const Json& members = array(require(attrs, ap, "members"), mp, "a list of structure members ([name, descriptor])");
    std::size_t at_structure = out.size();
    out.emplace_back(name, d);
    for (std::size_t i = 0; i < members.size(); ++i) {
      std::string p = at(mp, i);
      if (!members[i].is_array() || members[i].size() != 2)
        fail(p, "a structure member must be a pair [name, descriptor]");
      std::string field = string(members[i][0], at(p, 0), "a member name");
      if (!is_identifier(field))
        fail(at(p, 0), fmt::format("member name \"{}\" of structure \"{}\" is not a C identifier", field, name));
      for (auto& f : st.fields)
        if (f.first == field) fail(at(p, 0), fmt::format("structure \"{}\" has two members named \"{}\"", name, field));
      const Json& mj = members[i][1];
      std::string mptr = at(p, 1);
      std::string full = name + "." + field;
      if (mj.is_object() && mj.value("type", Json()) == "Structure") {
        st.fields.emplace_back(field, structure(full, mj, mptr, d.transient, out));
        st.pointers.push_back(field);
        continue;
      }
      DataDesc m = data_desc(mj, mptr);
      if (m.view)
        fail(at(mptr, "type"), fmt::format("member \"{}\" of structure \"{}\" is a view; sdfc's structure members are "
                                           "arrays, scalars and structures",
                                           field, name));
      if (is_struct(m.dtype))
        fail(at(mptr, "attributes/dtype"),
             fmt::format("member \"{}\" of structure \"{}\" has the struct dtype {}; sdfc's structure members "
                         "are arrays and scalars of scalar types, and structures",
                         field, name, to_string(m.dtype)));
      m.transient = d.transient;
      m.member = !d.transient;
      st.fields.emplace_back(field, m.dtype);
      if (m.kind == DataKind::Array) st.pointers.push_back(field);
      out.emplace_back(full, std::move(m));
    }
    if (st.fields.empty()) fail(mp, fmt::format("structure \"{}\" has no members", name));
    std::sort(st.pointers.begin(), st.pointers.end());
    DataDesc& self = out[at_structure].second;
    self.dtype = intern_struct(st);
    self.extra = rest(attrs, {"members", "name", "dtype", "shape", "transient", "storage", "lifetime", "optional"});
    return self.dtype;
  }

  /// A descriptor's `storage` attribute (at `ap`), when it has one, into `d`.
  void storage(const Json& attrs, const std::string& ap, DataDesc& d) const {
    auto s = attrs.find("storage");
    if (s == attrs.end()) return;
    std::string v = string(*s, at(ap, "storage"), "a storage type");
    if (auto st = parse_storage(v))
      d.storage = *st;
    else
      defer(at(ap, "storage"), fmt::format("unknown storage type \"{}\"; expected one of {}", v, storage_names()));
  }

  DataDesc data_desc(const Json& j, const std::string& ptr) const {
    object(j, ptr, "a data descriptor");
    DataDesc d;
    std::string type = string(require(j, ptr, "type"), at(ptr, "type"), "a data descriptor type");
    if (type == "Array" || type == "ArrayView" || type == "View") {
      d.kind = DataKind::Array;
      d.view = type != "Array";
    } else if (type == "Scalar") {
      d.kind = DataKind::Scalar;
    } else {
      std::string advice =
          type == "Stream"
              ? "DaCe's streams (queues pushed and popped at run time) are not modelled by sdfc: write the elements "
                "into an array with a counter"
          : type.rfind("Structure", 0) == 0 || type.rfind("Container", 0) == 0
              ? "structure views and references and container arrays are not: pass the structure or its members"
              : "a descriptor class sdfc does not know (a Python subclass of Array keeps its meaning in DaCe only): "
                "declare the data as dace.data.Array";
      fail(at(ptr, "type"), fmt::format("unsupported data descriptor type \"{}\"; supported: Array, Scalar, "
                                        "ArrayView, View, Structure; {}",
                                        type, advice));
    }
    std::string ap = at(ptr, "attributes");
    const Json& attrs = j.contains("attributes") ? object(j["attributes"], ap, "descriptor attributes") : kEmptyObject;
    if (auto t = attrs.find("dtype"); t != attrs.end()) d.dtype = dtype(*t, at(ap, "dtype"));
    if (auto s = attrs.find("shape"); s != attrs.end()) d.shape = expr_list(*s, at(ap, "shape"), "a shape");
    if (d.kind == DataKind::Scalar) {
      // A scalar is one element: give it the array fields too, so that code reading sizes and
      // strides needs no special case (the writer leaves them out for scalars, as DaCe does).
      if (d.shape.empty()) d.shape = {make_int(1)};
      d.strides = {make_int(1)};
      d.total_size = make_int(1);
      d.offset = {make_int(0)};
    }
    if (auto t = attrs.find("transient"); t != attrs.end()) d.transient = boolean(*t, at(ap, "transient"), "transient");
    storage(attrs, ap, d);
    if (auto s = attrs.find("lifetime"); s != attrs.end()) {
      std::string v = string(*s, at(ap, "lifetime"), "a lifetime");
      auto lt = parse_lifetime(v);
      if (!lt)
        defer(at(ap, "lifetime"), fmt::format("unknown lifetime \"{}\"; expected one of {}", v, lifetime_names()));
      else
        d.lifetime = *lt;
    }
    if (auto p = attrs.find("pool"); p != attrs.end()) d.pool = boolean(*p, at(ap, "pool"), "pool");
    if (auto o = attrs.find("optional"); o != attrs.end() && !o->is_null())
      d.optional_ = boolean(*o, at(ap, "optional"), "optional");
    if (d.kind == DataKind::Array) {
      if (auto s = attrs.find("strides"); s != attrs.end())
        d.strides = expr_list(*s, at(ap, "strides"), "strides");
      else
        d.strides = c_order_strides(d.shape);
      if (d.strides.size() != d.shape.size())
        fail(at(ap, "strides"), fmt::format("expected {} strides (one per dimension of the shape) but found {}",
                                            d.shape.size(), d.strides.size()));
      if (auto t = attrs.find("total_size"); t != attrs.end())
        d.total_size = expr(*t, at(ap, "total_size"), "a total size");
      else
        d.total_size = product(d.shape);
      if (auto o = attrs.find("offset"); o != attrs.end())
        d.offset = expr_list(*o, at(ap, "offset"), "offsets");
      else
        d.offset.assign(d.shape.size(), make_int(0));
      if (d.offset.size() != d.shape.size())
        fail(at(ap, "offset"), fmt::format("expected {} offsets (one per dimension of the shape) but found {}",
                                           d.shape.size(), d.offset.size()));
      if (auto s = attrs.find("start_offset");
          s != attrs.end() && !(s->is_number() && s->get<double>() == 0) && !(s->is_string() && *s == "0"))
        fail(at(ap, "start_offset"), "unsupported non-zero start_offset (pre-padding) on an array");
    }
    d.extra = rest(attrs, {"dtype", "shape", "transient", "storage", "lifetime", "pool", "optional", "strides",
                           "total_size", "offset"});
    return d;
  }

  /// Nodes, edges and the start block of a control-flow region (also the SDFG root).
  void read_region_body(const Json& j, const std::string& ptr, Block& region, int depth) {
    if (depth > 64) fail(ptr, "control flow nested deeper than 64 levels");
    std::string np = at(ptr, "nodes");
    const Json& nodes = array(require(j, ptr, "nodes"), np, "a list of control-flow blocks");
    for (std::size_t i = 0; i < nodes.size(); ++i) region.blocks.push_back(read_block(nodes[i], at(np, i), depth));
    std::string ep = at(ptr, "edges");
    const Json& edges = j.contains("edges") ? array(j["edges"], ep, "a list of interstate edges") : kEmptyArray;
    for (std::size_t i = 0; i < edges.size(); ++i) region.cf_edges.push_back(interstate_edge(edges[i], at(ep, i)));
    region.start_block = 0;
    const char* sk = j.contains("start_block") ? "start_block" : "start_state";
    if (auto s = j.find(sk); s != j.end() && !s->is_null())
      region.start_block = index(*s, at(ptr, sk), "the start block");
    else
      region.start_block = -1;  // DaCe: the first source block
  }

  InterstateEdge interstate_edge(const Json& j, const std::string& ptr) const {
    object(j, ptr, "an interstate edge");
    if (auto t = j.find("type"); t != j.end() && *t != "Edge")
      fail(at(ptr, "type"), fmt::format("unsupported control-flow edge type {}; expected \"Edge\"", type_name(*t)));
    InterstateEdge e;
    e.src = index(require(j, ptr, "src"), at(ptr, "src"), "the source block");
    e.dst = index(require(j, ptr, "dst"), at(ptr, "dst"), "the destination block");
    std::string ap = at(ptr, "attributes");
    if (!j.contains("attributes")) return e;
    const Json& attrs = object(j["attributes"], ap, "edge attributes");
    if (!attrs.contains("data")) return e;
    std::string dp = at(ap, "data");
    const Json& data = object(attrs["data"], dp, "an InterstateEdge");
    if (auto t = data.find("type"); t != data.end() && *t != "InterstateEdge")
      fail(at(dp, "type"), fmt::format("expected \"InterstateEdge\" but found {}", json_kind(*t)));
    std::string ip = at(dp, "attributes");
    if (!data.contains("attributes")) return e;
    const Json& ia = object(data["attributes"], ip, "interstate edge attributes");
    if (auto c = ia.find("condition"); c != ia.end() && !c->is_null()) {
      e.condition = code(*c, at(ip, "condition"), "a condition");
      check_python(e.condition, at(ip, "condition"));
    }
    if (auto a = ia.find("assignments"); a != ia.end()) {
      std::string p = at(ip, "assignments");
      object(*a, p, "symbol assignments");
      for (auto it = a->begin(); it != a->end(); ++it) {
        std::string v =
            it.value().is_string()
                ? it.value().get<std::string>()
                : (it.value().is_number() ? it.value().dump() : string(it.value(), at(p, it.key()), "an assignment"));
        try {
          parse_expr(v, Dialect::Plain);
        } catch (const ExprSyntaxError& err) {
          defer(at(p, it.key()), fmt::format("malformed expression \"{}\": {} (at character {})", excerpt(v),
                                             err.what(), err.offset + 1));
        }
        e.assignments.emplace_back(it.key(), v);
      }
    }
    e.extra = rest(ia, {"condition", "assignments"});
    return e;
  }

  void check_python(const CodeBlock& c, const std::string& ptr) const {
    if (c.language != Language::Python) fail(ptr, "conditions must be Python expressions");
    try {
      parse_expr(c.code, Dialect::Plain);
    } catch (const ExprSyntaxError& err) {
      defer(ptr, fmt::format("malformed expression \"{}\": {} (at character {})", excerpt(c.code), err.what(),
                             err.offset + 1));
    }
  }

  std::unique_ptr<Block> read_block(const Json& j, const std::string& ptr, int depth) {
    object(j, ptr, "a control-flow block");
    std::string type = string(require(j, ptr, "type"), at(ptr, "type"), "a block type");
    std::unique_ptr<Block> b;
    if (type == "SDFGState")
      b = std::make_unique<Block>(BlockKind::State);
    else if (type == "ControlFlowRegion" || type == "NamedRegion" || type == "FunctionCallRegion" ||
             type == "UnstructuredControlFlow")  // (a function call's `arguments` only describe it, as in DaCe)
      b = std::make_unique<Block>(BlockKind::Region);
    else if (type == "LoopRegion")
      b = std::make_unique<Block>(BlockKind::Loop);
    else if (type == "ConditionalBlock")
      b = std::make_unique<Block>(BlockKind::Conditional);
    else if (type == "BreakBlock")
      b = std::make_unique<Block>(BlockKind::Break);
    else if (type == "ContinueBlock")
      b = std::make_unique<Block>(BlockKind::Continue);
    else if (type == "ReturnBlock")
      b = std::make_unique<Block>(BlockKind::Return);
    else
      fail(at(ptr, "type"), fmt::format("unsupported control-flow block type \"{}\"; supported: SDFGState, "
                                        "ControlFlowRegion (NamedRegion, FunctionCallRegion), LoopRegion, "
                                        "ConditionalBlock, BreakBlock, ContinueBlock, ReturnBlock",
                                        type));
    b->type_name = type;
    if (auto l = j.find("label"); l != j.end()) b->label = string(*l, at(ptr, "label"), "a label");
    std::string ap = at(ptr, "attributes");
    const Json& attrs = j.contains("attributes") ? object(j["attributes"], ap, "block attributes") : kEmptyObject;
    switch (b->kind) {
      case BlockKind::State:
        read_state(j, ptr, *b, depth);
        b->extra = rest(attrs, {});
        break;
      case BlockKind::Region:
        read_region_body(j, ptr, *b, depth + 1);
        b->extra = rest(attrs, {});
        break;
      case BlockKind::Loop:
        b->loop_variable = attrs.contains("loop_variable") && !attrs["loop_variable"].is_null()
                               ? string(attrs["loop_variable"], at(ap, "loop_variable"), "the loop variable")
                               : "";
        if (auto c = attrs.find("init_statement"); c != attrs.end() && !c->is_null())
          b->init_statement = code(*c, at(ap, "init_statement"), "the loop's init statement");
        if (auto c = attrs.find("update_statement"); c != attrs.end() && !c->is_null())
          b->update_statement = code(*c, at(ap, "update_statement"), "the loop's update statement");
        b->loop_condition = attrs.contains("loop_condition") && !attrs["loop_condition"].is_null()
                                ? code(attrs["loop_condition"], at(ap, "loop_condition"), "the loop condition")
                                : CodeBlock{"True", Language::Python};
        check_python(b->loop_condition, at(ap, "loop_condition"));
        if (auto v = attrs.find("inverted"); v != attrs.end())
          b->inverted = boolean(*v, at(ap, "inverted"), "inverted");
        if (auto v = attrs.find("update_before_condition"); v != attrs.end())
          b->update_before_condition = boolean(*v, at(ap, "update_before_condition"), "update_before_condition");
        b->extra = rest(attrs, {"loop_variable", "init_statement", "update_statement", "loop_condition", "inverted",
                                "update_before_condition"});
        read_region_body(j, ptr, *b, depth + 1);
        break;
      case BlockKind::Conditional: {
        std::string bp = at(ptr, "branches");
        const Json& branches = array(require(j, ptr, "branches"), bp, "the branches of a conditional");
        for (std::size_t i = 0; i < branches.size(); ++i) {
          std::string p = at(bp, i);
          if (!branches[i].is_array() || branches[i].size() != 2)
            fail(p, fmt::format("expected a branch [condition or null, region] but found {}", json_kind(branches[i])));
          std::optional<CodeBlock> cond;
          if (!branches[i][0].is_null()) {
            cond = code(branches[i][0], at(p, 0), "a branch condition");
            check_python(*cond, at(p, 0));
          }
          auto body = read_block(branches[i][1], at(p, 1), depth + 1);
          if (body->kind != BlockKind::Region)
            fail(at(at(p, 1), "type"),
                 fmt::format("expected a ControlFlowRegion as branch body but found \"{}\"", body->type_name));
          b->branches.emplace_back(std::move(cond), std::move(body));
        }
        b->extra = rest(attrs, {});
        break;
      }
      default:
        b->extra = rest(attrs, {});
        break;
    }
    return b;
  }

  void read_state(const Json& j, const std::string& ptr, Block& state, int depth) {
    std::string np = at(ptr, "nodes");
    const Json& nodes = j.contains("nodes") ? array(j["nodes"], np, "a list of dataflow nodes") : kEmptyArray;
    for (std::size_t i = 0; i < nodes.size(); ++i) state.nodes.push_back(read_node(nodes[i], at(np, i), depth));
    std::string ep = at(ptr, "edges");
    const Json& edges = j.contains("edges") ? array(j["edges"], ep, "a list of dataflow edges") : kEmptyArray;
    state.edges.reserve(edges.size());
    for (std::size_t i = 0; i < edges.size(); ++i)
      state.edges.push_back(data_edge(edges[i], [&] { return at(ep, i); }));
  }

  std::unique_ptr<Node> read_node(const Json& j, const std::string& ptr, int depth) {
    object(j, ptr, "a dataflow node");
    std::string type = string(require(j, ptr, "type"), at(ptr, "type"), "a node type");
    std::unique_ptr<Node> n;
    if (type == "AccessNode")
      n = std::make_unique<Node>(NodeKind::Access);
    else if (type == "MapEntry")
      n = std::make_unique<Node>(NodeKind::MapEntry);
    else if (type == "MapExit")
      n = std::make_unique<Node>(NodeKind::MapExit);
    else if (type == "Tasklet")
      n = std::make_unique<Node>(NodeKind::Tasklet);
    else if (type == "NestedSDFG")
      n = std::make_unique<Node>(NodeKind::NestedSDFG);
    else if (type == "LibraryNode")
      n = std::make_unique<Node>(NodeKind::Library);
    else {
      std::string detail;
      if (auto c = j.find("classpath"); c != j.end() && c->is_string()) detail = " (" + c->get<std::string>() + ")";
      fail(at(ptr, "type"), fmt::format("unsupported dataflow node type \"{}\"{}; supported: AccessNode, MapEntry, "
                                        "MapExit, Tasklet, NestedSDFG, LibraryNode",
                                        type, detail));
    }
    if (auto l = j.find("label"); l != j.end()) n->label = string(*l, at(ptr, "label"), "a label");
    if (auto s = j.find("scope_entry"); s != j.end() && !s->is_null())
      n->scope_entry = index(*s, at(ptr, "scope_entry"), "a node index");
    if (auto s = j.find("scope_exit"); s != j.end() && !s->is_null())
      n->scope_exit = index(*s, at(ptr, "scope_exit"), "a node index");
    std::string ap = at(ptr, "attributes");
    const Json& attrs = j.contains("attributes") ? object(j["attributes"], ap, "node attributes") : kEmptyObject;
    n->in_connectors = connectors(attrs, "in_connectors", ap);
    n->out_connectors = connectors(attrs, "out_connectors", ap);
    switch (n->kind) {
      case NodeKind::Access:
        n->data = string(require(attrs, ap, "data"), at(ap, "data"), "a data container name");
        if (auto z = attrs.find("setzero"); z != attrs.end() && boolean(*z, at(ap, "setzero"), "setzero"))
          fail(at(ap, "setzero"), "unsupported setzero on an access node; initialize the data with a map instead");
        n->extra = rest(attrs, {"data", "setzero", "in_connectors", "out_connectors"});
        break;
      case NodeKind::MapEntry: {
        MapInfo& m = n->map;
        m.label = attrs.contains("label") ? string(attrs["label"], at(ap, "label"), "a label") : n->label;
        const Json& params = array(require(attrs, ap, "params"), at(ap, "params"), "the map parameters");
        for (std::size_t i = 0; i < params.size(); ++i)
          m.params.push_back(string(params[i], at(at(ap, "params"), i), "a map parameter name"));
        m.range = range(require(attrs, ap, "range"), [&] { return at(ap, "range"); });
        if (m.range.size() != m.params.size())
          fail(at(ap, "range"), fmt::format("expected {} range dimensions (one per map parameter) but found {}",
                                            m.params.size(), m.range.size()));
        if (auto s = attrs.find("schedule"); s != attrs.end()) {
          std::string v = string(*s, at(ap, "schedule"), "a schedule");
          auto sc = parse_schedule(v);
          if (!sc)
            defer(at(ap, "schedule"),
                  fmt::format("unknown or unsupported schedule \"{}\"; expected one of {}", v, schedule_names()));
          else
            m.schedule = *sc;
        }
        if (auto g = attrs.find("gpu_block_size"); g != attrs.end() && !g->is_null()) {
          std::string p = at(ap, "gpu_block_size");
          array(*g, p, "a GPU block size");
          for (std::size_t i = 0; i < g->size(); ++i) {
            const Json& v = (*g)[i];
            if (!v.is_number_integer() || v.get<std::int64_t>() < 1 || v.get<std::int64_t>() > 1024)
              fail(at(p, i), fmt::format("expected a block dimension between 1 and 1024 but found {}", json_kind(v)));
            m.gpu_block_size.push_back(v.get<int>());
          }
        }
        n->extra =
            rest(attrs, {"label", "params", "range", "schedule", "gpu_block_size", "in_connectors", "out_connectors"});
        break;
      }
      case NodeKind::MapExit:
        n->extra = rest(attrs, {"in_connectors", "out_connectors"});
        break;
      case NodeKind::Tasklet: {
        n->code = code(require(attrs, ap, "code"), at(ap, "code"), "tasklet code");
        if (auto g = attrs.find("code_global"); g != attrs.end() && !g->is_null()) {
          n->code_global = code(*g, at(ap, "code_global"), "global code");
          n->code_global.language = Language::CPP;
        }
        for (const char* k : {"code_init", "code_exit"}) {
          if (auto c = attrs.find(k); c != attrs.end() && !c->is_null() && !code(*c, at(ap, k), "code").code.empty())
            fail(at(ap, k), fmt::format("unsupported tasklet {}; move it into the SDFG's init_code/exit_code", k));
        }
        if (auto s = attrs.find("state_fields"); s != attrs.end() && s->is_array() && !s->empty())
          fail(at(ap, "state_fields"), "unsupported tasklet state_fields");
        if (n->code.language == Language::CPP && attrs.contains("label"))
          n->label = attrs["label"].is_string() ? attrs["label"].get<std::string>() : n->label;
        n->extra = rest(attrs, {"code", "code_global", "code_init", "code_exit", "state_fields", "in_connectors",
                                "out_connectors"});
        break;
      }
      case NodeKind::NestedSDFG: {
        std::string sp = at(ap, "sdfg");
        n->sdfg = read_sdfg(require(attrs, ap, "sdfg"), sp, depth + 1);
        if (auto m = attrs.find("symbol_mapping"); m != attrs.end()) {
          std::string p = at(ap, "symbol_mapping");
          object(*m, p, "a symbol mapping");
          for (auto it = m->begin(); it != m->end(); ++it)
            n->symbol_mapping.emplace_back(it.key(), expr(it.value(), at(p, it.key()), "a symbol mapping"));
        }
        if (auto p = attrs.find("ext_sdfg_path"); p != attrs.end() && p->is_string() && !p->get<std::string>().empty())
          fail(at(ap, "ext_sdfg_path"), "unsupported external nested SDFG file; embed the nested SDFG instead");
        n->extra = rest(attrs, {"sdfg", "symbol_mapping", "in_connectors", "out_connectors"});
        break;
      }
      case NodeKind::Library:
        n->classpath = string(require(j, ptr, "classpath"), at(ptr, "classpath"), "a library node class");
        if (auto l = attrs.find("label"); l != attrs.end() && l->is_string()) n->label = l->get<std::string>();
        n->extra = rest(attrs, {"in_connectors", "out_connectors"});
        break;
    }
    return n;
  }

  template <typename PtrFn>
  DataEdge data_edge(const Json& j, const PtrFn& ptr) const {
    if (!j.is_object()) fail(ptr(), fmt::format("expected a dataflow edge (an object) but found {}", json_kind(j)));
    auto get = [](const Json& o, const char* k) -> const Json* {
      auto it = o.find(k);
      return it == o.end() ? nullptr : &*it;
    };
    if (const Json* t = get(j, "type"); t && *t != "MultiConnectorEdge")
      fail(at(ptr(), "type"),
           fmt::format("unsupported dataflow edge type {}; expected \"MultiConnectorEdge\"", type_name(*t)));
    DataEdge e;
    const Json* src = get(j, "src");
    const Json* dst = get(j, "dst");
    if (!src) fail(ptr(), "missing required key \"src\"");
    if (!dst) fail(ptr(), "missing required key \"dst\"");
    e.src = index(
        *src, [&] { return at(ptr(), "src"); }, "the source node");
    e.dst = index(
        *dst, [&] { return at(ptr(), "dst"); }, "the destination node");
    if (auto c = get(j, "src_connector"); c && !c->is_null())
      e.src_conn = string(*c, at(ptr(), "src_connector"), "a connector name");
    if (auto c = get(j, "dst_connector"); c && !c->is_null())
      e.dst_conn = string(*c, at(ptr(), "dst_connector"), "a connector name");
    const Json* attrs = get(j, "attributes");
    if (!attrs) return e;
    auto ap = [&] { return at(ptr(), "attributes"); };
    if (!attrs->is_object())
      fail(ap(), fmt::format("expected edge attributes (an object) but found {}", json_kind(*attrs)));
    const Json* m = get(*attrs, "data");
    if (!m) return e;
    auto mp = [&] { return at(ap(), "data"); };
    if (!m->is_object()) fail(mp(), fmt::format("expected a Memlet (an object) but found {}", json_kind(*m)));
    if (auto t = get(*m, "type"); t && *t != "Memlet")
      fail(at(mp(), "type"), fmt::format("expected \"Memlet\" but found {}", json_kind(*t)));
    const Json* ma = get(*m, "attributes");
    if (!ma) return e;
    auto p = [&] { return at(mp(), "attributes"); };
    if (!ma->is_object()) fail(p(), fmt::format("expected memlet attributes (an object) but found {}", json_kind(*ma)));
    Memlet& mem = e.memlet;
    if (auto d = get(*ma, "data"); d && !d->is_null()) {
      if (!d->is_string())
        fail(at(p(), "data"), fmt::format("expected a data container name (a string) but found {}", json_kind(*d)));
      mem.data = *d->template get_ptr<const std::string*>();
    }
    if (auto s = get(*ma, "subset"); s && !s->is_null()) mem.subset = range(*s, [&] { return at(p(), "subset"); });
    if (auto s = get(*ma, "other_subset"); s && !s->is_null())
      mem.other_subset = range(*s, [&] { return at(p(), "other_subset"); });
    if (auto v = get(*ma, "volume"))
      mem.volume = expr_at(
          *v, [&] { return at(p(), "volume"); }, "a volume");
    if (auto d = get(*ma, "dynamic")) mem.dynamic = boolean(*d, at(p(), "dynamic"), "dynamic");
    if (auto w = get(*ma, "wcr"); w && !w->is_null()) mem.wcr = string(*w, at(p(), "wcr"), "a WCR lambda");
    if (auto d = get(*ma, "is_data_src"); d && !d->is_null())
      mem.is_data_src = boolean(*d, at(p(), "is_data_src"), "is_data_src");
    // src_subset, dst_subset and num_accesses are derived; the writer recomputes them.
    if (ma->size() > 0) {
      static const char* known[] = {"data", "subset",      "other_subset", "volume",     "dynamic",
                                    "wcr",  "is_data_src", "src_subset",   "dst_subset", "num_accesses"};
      for (auto it = ma->begin(); it != ma->end(); ++it) {
        bool used = false;
        for (const char* k : known) used |= it.key() == k;
        if (!used) mem.extra[it.key()] = it.value();
      }
    }
    return e;
  }
};

std::string too_large(const char* what) {
  return fmt::format(
      "the {} SDFG is larger than {} MiB, the most sdfc reads; raise the limit with SDFC_MAX_INPUT_MB if the file "
      "is real",
      what, max_input_bytes() >> 20);
}

std::string gunzip(std::string_view bytes, const std::string& file) {
  z_stream zs{};
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK)
    throw UserError(Diagnostic{file, "", 0, 0, "cannot initialize gzip decompression"});
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  zs.avail_in = static_cast<uInt>(bytes.size());
  std::string out;
  char buf[65536];
  const std::size_t limit = max_input_bytes();
  int rc;
  do {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof buf;
    rc = inflate(&zs, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      inflateEnd(&zs);
      throw UserError(
          Diagnostic{file, "", 0, 0, "corrupt gzip data (the file starts like a .sdfgz but does not decompress)"});
    }
    out.append(buf, sizeof buf - zs.avail_out);
    if (out.size() > limit) {
      inflateEnd(&zs);
      throw UserError(Diagnostic{file, "", 0, 0, too_large("decompressed")});
    }
  } while (rc != Z_STREAM_END && (zs.avail_in > 0 || zs.avail_out == 0));
  inflateEnd(&zs);
  if (rc != Z_STREAM_END) throw UserError(Diagnostic{file, "", 0, 0, "truncated gzip data"});
  return out;
}

void line_column(std::string_view text, std::size_t byte, int& line, int& col) {
  line = 1;
  col = 1;
  for (std::size_t i = 0; i + 1 < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
}

}  // namespace

Json parse_sdfg_document(std::string_view bytes, const std::string& file_name) {
  if (bytes.size() > max_input_bytes()) throw UserError(Diagnostic{file_name, "", 0, 0, too_large("input")});
  std::string inflated;
  if (bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
      static_cast<unsigned char>(bytes[1]) == 0x8b) {
    inflated = gunzip(bytes, file_name);
    bytes = inflated;
  }
  // One SAX pass builds the document. It rejects absurd nesting before anything recursive sees
  // it, reports duplicate keys (which a DOM would merge silently) with their pointer, and
  // appends object members in O(1): nlohmann's own ordered_json parser searches every object for
  // the key on each insert, which is quadratic in the number of data containers.
  struct Builder : nlohmann::json_sax<Json> {
    // Object members collect in a vector with movable keys (ordered_map's const keys would make
    // every reallocation deep-copy the members) and move into the object when it closes.
    struct Frame {
      Json* value;  // where the container lives; objects are filled in at close
      bool is_array;
      std::vector<std::pair<std::string, Json>> members;
    };
    std::vector<Frame> frames;
    Json root;
    const std::string& file;
    std::size_t error_byte = 0;
    std::string error_text;
    explicit Builder(const std::string& f) : file(f) {}

    // The pointer of the value being read; with `levels`, only its first levels.
    // In the innermost array the next element is not placed yet: its index is size().
    std::string path(std::size_t levels = SIZE_MAX) const {
      std::string p;
      for (std::size_t i = 0; i < frames.size() && i < levels; ++i) {
        const Frame& f = frames[i];
        bool innermost = i + 1 == frames.size();
        if (f.is_array)
          p += "/" + std::to_string(f.value->size() - (innermost ? 0 : 1));
        else if (!f.members.empty())
          p += "/" + pointer_token(f.members.back().first);
      }
      return p;
    }
    Json* put(Json&& v) {
      if (frames.empty()) {
        root = std::move(v);
        return &root;
      }
      Frame& f = frames.back();
      if (f.is_array) {
        auto& arr = f.value->get_ref<Json::array_t&>();
        arr.push_back(std::move(v));
        return &arr.back();
      }
      f.members.back().second = std::move(v);
      return &f.members.back().second;
    }
    bool open(bool is_array) {
      if (frames.size() >= static_cast<std::size_t>(kMaxJsonDepth)) throw TooDeep{path(kDeepPathLevels)};
      Json* slot = put(is_array ? Json::array() : Json::object());
      frames.push_back(Frame{slot, is_array, {}});
      return true;
    }
    bool null() override { return put(Json(nullptr)) != nullptr; }
    bool boolean(bool b) override { return put(Json(b)) != nullptr; }
    bool number_integer(number_integer_t v) override { return put(Json(v)) != nullptr; }
    bool number_unsigned(number_unsigned_t v) override { return put(Json(v)) != nullptr; }
    bool number_float(number_float_t v, const string_t&) override { return put(Json(v)) != nullptr; }
    bool string(string_t& v) override { return put(Json(std::move(v))) != nullptr; }
    bool binary(binary_t& v) override { return put(Json::binary(std::move(v))) != nullptr; }
    bool start_object(std::size_t) override { return open(false); }
    bool start_array(std::size_t) override { return open(true); }
    bool end_array() override {
      frames.pop_back();
      return true;
    }
    bool end_object() override {
      Frame& f = frames.back();
      check_duplicates(f);
      auto& obj = f.value->get_ref<Json::object_t&>();
      auto& members = static_cast<std::vector<std::pair<const std::string, Json>>&>(obj);
      members.reserve(f.members.size());
      for (auto& [k, v] : f.members) members.emplace_back(std::move(k), std::move(v));
      frames.pop_back();
      return true;
    }
    bool key(string_t& k) override {
      frames.back().members.emplace_back(std::move(k), nullptr);
      return true;
    }
    void check_duplicates(Frame& f) {
      const auto& m = f.members;
      const std::string* dup = nullptr;
      if (m.size() <= 16) {  // the usual case: no allocation
        for (std::size_t i = 1; i < m.size() && !dup; ++i)
          for (std::size_t j = 0; j < i; ++j)
            if (m[i].first == m[j].first) {
              dup = &m[i].first;
              break;
            }
      } else {
        std::vector<const std::string*> keys;
        keys.reserve(m.size());
        for (auto& kv : m) keys.push_back(&kv.first);
        std::sort(keys.begin(), keys.end(), [](auto* a, auto* b) { return *a < *b; });
        auto it = std::adjacent_find(keys.begin(), keys.end(), [](auto* a, auto* b) { return *a == *b; });
        if (it != keys.end()) dup = *it;
      }
      if (!dup) return;
      std::string k = *dup;
      // Point at the duplicate: move it to the end so that path() names it.
      f.members.emplace_back(k, nullptr);
      bool data = frames.size() >= 2 && !frames[frames.size() - 2].is_array &&
                  frames[frames.size() - 2].members.back().first == "_arrays";
      throw UserError(Diagnostic{file, path(), 0, 0,
                                 data ? fmt::format("two data containers are named \"{}\"; rename one of them", k)
                                      : fmt::format("duplicate key \"{}\" in one object", k)});
    }
    bool parse_error(std::size_t byte, const std::string&, const nlohmann::detail::exception& e) override {
      error_byte = byte;
      error_text = e.what();
      return false;
    }
  };
  Json doc;
  try {
    Builder builder(file_name);
    if (!Json::sax_parse(bytes.begin(), bytes.end(), &builder)) {
      // nlohmann's text is "[json.exception.parse_error.101] parse error at line 1, column 2: ..."
      const std::string& what = builder.error_text;
      auto colon = what.find(": ", what.find("parse error"));
      auto bracket = what.find("] ");
      std::string detail = colon != std::string::npos     ? what.substr(colon + 2)
                           : bracket != std::string::npos ? what.substr(bracket + 2)
                                                          : what;
      int line = 0, col = 0;
      line_column(bytes, builder.error_byte, line, col);
      throw UserError(Diagnostic{file_name, "", line, col, "malformed JSON: " + detail});
    }
    doc = std::move(builder.root);
  } catch (const Json::parse_error& e) {
    int line, col;
    line_column(bytes, e.byte, line, col);
    std::string what = e.what();
    // nlohmann's text is "[json.exception.parse_error.101] parse error at line 1, column 2: ..."
    auto colon = what.find(": ", what.find("parse error"));
    std::string detail = colon == std::string::npos ? what : what.substr(colon + 2);
    throw UserError(Diagnostic{file_name, "", line, col, "malformed JSON: " + detail});
  } catch (const Json::out_of_range& e) {
    // e.g. a number literal too large for a double (1e400), where the parser throws it
    std::string what = e.what();
    auto colon = what.find("] ");
    throw UserError(Diagnostic{file_name, "", 0, 0,
                               "malformed JSON: " + (colon == std::string::npos ? what : what.substr(colon + 2))});
  } catch (const TooDeep& t) {
    throw UserError(Diagnostic{file_name, t.path, 0, 0,
                               fmt::format("JSON nested deeper than {} levels (the pointer names the first {}); "
                                           "an SDFG never needs this",
                                           kMaxJsonDepth, kDeepPathLevels)});
  }
  return doc;
}

std::unique_ptr<SDFG> read_sdfg_document(const Json& doc, const std::string& file_name) {
  Reader r(file_name);
  return r.read_root(doc);
}

std::unique_ptr<SDFG> read_sdfg(std::string_view bytes, const std::string& file_name) {
  return read_sdfg_document(parse_sdfg_document(bytes, file_name), file_name);
}

std::size_t max_input_bytes() {
  const char* env = std::getenv("SDFC_MAX_INPUT_MB");
  char* end = nullptr;
  unsigned long long mb = env ? std::strtoull(env, &end, 10) : 0;
  return (env && end != env && *end == '\0' && mb > 0 && mb < (1ull << 24) ? mb : 256ull) << 20;
}

std::string read_file_bytes(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw UserError(Diagnostic{path, "", 0, 0, "is a directory, not an SDFG file"});
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError(Diagnostic{path, "", 0, 0, "cannot open the file (does it exist and is it readable?)"});
  // Read in chunks up to the limit: the size of a pipe or a device is not known in advance.
  std::string out;
  char buf[1 << 16];
  const std::size_t limit = max_input_bytes();
  while (in) {
    in.read(buf, sizeof buf);
    out.append(buf, static_cast<std::size_t>(in.gcount()));
    if (out.size() > limit) throw UserError(Diagnostic{path, "", 0, 0, too_large("input")});
  }
  if (in.bad()) throw UserError(Diagnostic{path, "", 0, 0, "cannot read the file"});
  return out;
}

std::unique_ptr<SDFG> read_sdfg_file(const std::string& path) {
  return read_sdfg(read_file_bytes(path), path);
}

}  // namespace sdfc
