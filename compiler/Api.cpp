// The embedding API (include/sdfc/sdfc.h) over the compiler driver and a loaded library.
#include <dlfcn.h>
#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "compiler/Compile.h"
#include "compiler/Convert.h"
#include "ir/Expr.h"
#include "sdfc/sdfc.h"

namespace sdfc {
namespace {

std::string diagnostics_text(const InvalidInput& e) {
  return e.what();
}

std::int64_t as_int64(const unsigned char* p, DType t) {
  switch (t) {
    case DType::Int8: {
      std::int8_t x;
      std::memcpy(&x, p, 1);
      return x;
    }
    case DType::Int16: {
      std::int16_t x;
      std::memcpy(&x, p, 2);
      return x;
    }
    case DType::Int32: {
      std::int32_t x;
      std::memcpy(&x, p, 4);
      return x;
    }
    case DType::Int64: {
      std::int64_t x;
      std::memcpy(&x, p, 8);
      return x;
    }
    case DType::UInt8: {
      std::uint8_t x;
      std::memcpy(&x, p, 1);
      return x;
    }
    case DType::UInt16: {
      std::uint16_t x;
      std::memcpy(&x, p, 2);
      return x;
    }
    case DType::UInt32: {
      std::uint32_t x;
      std::memcpy(&x, p, 4);
      return x;
    }
    case DType::UInt64: {
      std::uint64_t x;
      std::memcpy(&x, p, 8);
      return static_cast<std::int64_t>(x);
    }
    default:
      return 0;
  }
}

}  // namespace

CompileOptions to_compile_options(const Options& o) {
  CompileOptions c;
  // Each field through its row of the option table (ir/Options.h): the command line's checks.
  auto set = [&](const char* name, const std::string& value) {
    try {
      find_option(name)->set(c, value);
    } catch (const OptionError& e) {
      throw Error(fmt::format("{} {}", name, e.what()));
    }
  };
  auto text = [](bool b) { return std::string(b ? "true" : "false"); };
  set("target", o.target);
  set("gpu_arch", o.gpu_arch);
  set("transients", o.transients.empty() ? "as-declared" : o.transients);
  set("gpu_streams", std::to_string(o.gpu_streams));
  set("blas", o.blas.empty() ? "pure" : o.blas);
  set("gpu_graph", text(o.gpu_graph));
  set("fuse_maps", text(o.fuse_maps));
  set("dependent_launch", text(o.dependent_launch));
  return c;
}

struct Program::Impl {
  struct Arg {
    ArgumentInfo info;
    DType dtype = DType::Float64;
    bool by_pointer = false;
    bool device = false;  ///< the argument lives in GPU memory
    std::vector<Expr> shape;
    bool bound = false;
    void* data = nullptr;
    std::size_t count = 0;
    alignas(16) unsigned char value[16] = {};
  };

  void* handle = nullptr;
  std::string path, name;
  std::vector<ArgumentInfo> infos;
  std::vector<Arg> args;
  std::vector<std::string> init_symbols, storages;
  std::map<std::string, std::int64_t> extra_symbols;  // shape-only symbols the caller provided

  void* (*init_fn)(void**) = nullptr;
  void (*call_fn)(void*, void**) = nullptr;
  int (*exit_fn)(void*) = nullptr;
  const char* (*last_error_fn)(void*) = nullptr;
  void (*clear_error_fn)(void*) = nullptr;
  std::size_t (*ws_size_fn)(void*, const char*, void**) = nullptr;
  const char* (*set_ws_fn)(void*, const char*, void*, std::size_t, void**) = nullptr;
  // GPU programs only: device memory for host arrays bound to device arguments.
  const char* (*init_error_fn)() = nullptr;
  int (*graph_captures_fn)(void*) = nullptr;
  void* (*device_alloc_fn)(std::size_t) = nullptr;
  void (*device_free_fn)(void*) = nullptr;
  int (*device_copy_fn)(void*, const void*, std::size_t) = nullptr;
  int (*is_device_fn)(const void*) = nullptr;

  void* state = nullptr;
  std::vector<std::int64_t> state_symbols;
  std::map<std::string, std::pair<void*, std::size_t>> workspaces;
  std::map<std::string, bool> workspace_on_device;
  std::map<std::string, std::pair<void*, std::size_t>> user_workspaces;  ///< set_workspace: the caller's buffers
  const char* (*set_stream_fn)(void*, void*) = nullptr;
  bool stream_set = false;  ///< set_external_stream was called: re-applied after a re-initialization
  void* stream = nullptr;

  std::map<std::string, std::int64_t> symbol_values();
  std::vector<void*> init_pointers();
  void ensure_state(const std::map<std::string, std::int64_t>& syms);
  void install_workspace(const std::string& storage, void* ptr, std::size_t bytes, std::vector<void*>& init_ptrs);
  void check_storage(const std::string& storage) const;

  ~Impl() {
    if (state && exit_fn) exit_fn(state);
    for (auto& [s, w] : workspaces) {
      if (workspace_on_device[s] && device_free_fn)
        device_free_fn(w.first);
      else
        std::free(w.first);
    }
    if (handle) dlclose(handle);
  }

  template <typename F>
  F sym(const std::string& s, bool required = true) {
    void* p = dlsym(handle, s.c_str());
    if (!p && required) throw Error(fmt::format("{}: the library does not export {}; was it built by sdfc?", path, s));
    return reinterpret_cast<F>(p);
  }

  Arg& find(const std::string& n) {
    for (auto& a : args)
      if (a.info.name == n) return a;
    std::string names;
    for (auto& a : args) names += (names.empty() ? "" : ", ") + a.info.name;
    throw Error(fmt::format("program \"{}\" has no argument \"{}\" (its arguments: {})", name, n, names));
  }

  bool is_shape_symbol(const std::string& n) const {
    for (auto& a : args) {
      std::set<std::string> s;
      for (auto& e : a.shape) free_symbols(e, s);
      if (s.count(n)) return true;
    }
    return false;
  }

  template <typename V>
  void set_value(const std::string& n, V value) {
    bool is_arg = false;
    for (auto& a : args) is_arg |= a.info.name == n;
    if (!is_arg && is_shape_symbol(n)) {
      if constexpr (std::is_floating_point_v<V>) {
        if (value != std::floor(value))
          throw ArgumentError(n, fmt::format("symbol \"{}\" must be an integer, not {}", n, value));
      }
      extra_symbols[n] = static_cast<std::int64_t>(value);
      return;
    }
    auto& a = find(n);
    if (a.info.kind == "array" || a.by_pointer)
      throw ArgumentError(
          n, fmt::format("argument \"{}\" of program \"{}\" is an array; bind it with set_array", n, name));
    if (a.info.kind == "callback")
      throw ArgumentError(
          n, fmt::format("argument \"{}\" of program \"{}\" is a callback; bind it with set_callback", n, name));
    if (!convert_exact(value, a.dtype, a.value))
      throw ArgumentError(
          n, fmt::format("value {} does not convert exactly to {}, the dtype of argument \"{}\" of program \"{}\"",
                         value, a.info.dtype, n, name));
    a.bound = true;
  }
};

Program::Program(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Program::Program(Program&&) noexcept = default;
Program& Program::operator=(Program&&) noexcept = default;
Program::~Program() = default;

const std::string& Program::name() const {
  return impl_->name;
}
const std::string& Program::library_path() const {
  return impl_->path;
}
const std::vector<ArgumentInfo>& Program::arguments() const {
  return impl_->infos;
}

Program Program::load(const std::string& library_path) {
  auto impl = std::make_unique<Impl>();
  impl->path = library_path;
  // RTLD_NODELETE: OpenMP worker threads of a program outlive its Program object; unloading the
  // library (and libgomp with it) under them would crash the process.
  impl->handle = dlopen(library_path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!impl->handle) throw Error(fmt::format("cannot load {}: {}", library_path, dlerror()));
  auto info_fn = impl->sym<const char* (*)()>("__sdfc_program_info");
  Json info;
  try {
    info = Json::parse(info_fn());
  } catch (const std::exception& e) {
    throw Error(fmt::format("{}: malformed program description: {}", library_path, e.what()));
  }
  impl->name = info.value("name", "");
  for (auto& a : info["args"]) {
    Impl::Arg arg;
    arg.info.name = a["name"].get<std::string>();
    arg.info.kind = a["kind"].get<std::string>();
    arg.info.dtype = a["dtype"].get<std::string>();
    arg.info.signature = a.value("signature", "");
    arg.dtype = parse_dtype(arg.info.dtype).value_or(DType::Float64);
    arg.by_pointer = a["by_pointer"].get<bool>();
    arg.device = a.value("storage", "") == "GPU_Global";
    if (a.contains("shape"))
      for (auto& s : a["shape"]) {
        arg.info.shape.push_back(s.get<std::string>());
        arg.shape.push_back(parse_expr(s.get<std::string>()));
      }
    impl->infos.push_back(arg.info);
    impl->args.push_back(std::move(arg));
  }
  for (auto& s : info["init_symbols"]) impl->init_symbols.push_back(s.get<std::string>());
  for (auto& s : info["external_storages"]) impl->storages.push_back(s.get<std::string>());
  impl->init_fn = impl->sym<void* (*)(void**)>("__sdfc_init");
  impl->call_fn = impl->sym<void (*)(void*, void**)>("__sdfc_call");
  impl->exit_fn = impl->sym<int (*)(void*)>("__dace_exit_" + impl->name);
  impl->last_error_fn = impl->sym<const char* (*)(void*)>("__sdfc_last_error");
  impl->clear_error_fn = impl->sym<void (*)(void*)>("__sdfc_clear_error");
  impl->ws_size_fn = impl->sym<std::size_t (*)(void*, const char*, void**)>("__sdfc_workspace_size");
  impl->set_ws_fn = impl->sym<const char* (*)(void*, const char*, void*, std::size_t, void**)>("__sdfc_set_workspace");
  impl->set_stream_fn = impl->sym<const char* (*)(void*, void*)>("__sdfc_set_external_stream", false);
  impl->init_error_fn = impl->sym<const char* (*)()>("__sdfc_init_error", false);
  impl->graph_captures_fn = impl->sym<int (*)(void*)>("__sdfc_graph_captures", false);
  impl->device_alloc_fn = impl->sym<void* (*)(std::size_t)>("__sdfc_device_alloc", false);
  impl->device_free_fn = impl->sym<void (*)(void*)>("__sdfc_device_free", false);
  impl->device_copy_fn = impl->sym<int (*)(void*, const void*, std::size_t)>("__sdfc_device_copy", false);
  impl->is_device_fn = impl->sym<int (*)(const void*)>("__sdfc_pointer_is_device", false);
  return Program(std::move(impl));
}

namespace {
/// Load (file or text), pipeline, code generation, build, load the library.
template <typename LoadFn>
Program compile_with(const CompileOptions& co, bool use_cache, const std::string& display_name, LoadFn load_fn) {
  try {
    auto sdfg = load_fn();
    auto program = generate_program(*sdfg, co, display_name, {}, use_cache);
    auto built = build_program(program, co, use_cache);
    return Program::load(built.library_path);
  } catch (const InvalidInput& e) {
    throw Error(diagnostics_text(e));
  } catch (const UserError& e) {
    throw Error(e.what());
  }
}
}  // namespace

Program compile_program_file(const std::string& path, const CompileOptions& options, bool use_cache) {
  return compile_with(options, use_cache, path, [&] { return load_sdfg_file(path); });
}

Program Program::compile_file(const std::string& sdfg_path, const Options& options) {
  return compile_program_file(sdfg_path, to_compile_options(options), options.use_cache);
}

Program Program::compile_string(const std::string& sdfg_json, const Options& options) {
  return compile_with(to_compile_options(options), options.use_cache, "<string>",
                      [&] { return load_sdfg_text(sdfg_json, "<string>"); });
}

void Program::set_array(const std::string& name, void* data, const std::string& dtype, std::size_t count) {
  auto& a = impl_->find(name);
  if (a.info.kind != "array" && !(a.info.kind == "scalar" && a.by_pointer))
    throw ArgumentError(
        name, fmt::format("argument \"{}\" of program \"{}\" is a {}, not an array; bind it with set_value", name,
                          impl_->name, a.info.kind));
  if (dtype != a.info.dtype)
    throw ArgumentError(
        name, fmt::format("argument \"{}\" of program \"{}\" has dtype {}, but the bound array has dtype {}", name,
                          impl_->name, a.info.dtype, dtype));
  if (!data)
    throw ArgumentError(name,
                        fmt::format("argument \"{}\" of program \"{}\": the array pointer is null", name, impl_->name));
  a.data = data;
  a.count = count;
  a.bound = true;
}

void Program::set_callback_pointer(const std::string& name, void (*function)()) {
  auto& a = impl_->find(name);
  if (a.info.kind != "callback")
    throw ArgumentError(
        name, fmt::format("argument \"{}\" of program \"{}\" is a {}, not a callback", name, impl_->name, a.info.kind));
  if (!function)
    throw ArgumentError(
        name, fmt::format("argument \"{}\" of program \"{}\": the function pointer is null", name, impl_->name));
  static_assert(sizeof function <= sizeof a.value, "a function pointer fits the value slot");
  std::memcpy(a.value, &function, sizeof function);
  a.bound = true;
}

void Program::set_value(const std::string& name, double value) {
  impl_->set_value(name, value);
}
void Program::set_value(const std::string& name, std::int64_t value) {
  impl_->set_value(name, value);
}
void Program::set_value(const std::string& name, std::complex<double> value) {
  auto& a = impl_->find(name);
  bool complex = a.dtype == DType::Complex64 || a.dtype == DType::Complex128;
  if (!complex) {
    if (value.imag() != 0)
      throw ArgumentError(
          name, fmt::format("argument \"{}\" of program \"{}\" is {}, not complex", name, impl_->name, a.info.dtype));
    impl_->set_value(name, value.real());
    return;
  }
  if (a.info.kind == "array" || a.by_pointer)
    throw ArgumentError(
        name, fmt::format("argument \"{}\" of program \"{}\" is an array; bind it with set_array", name, impl_->name));
  DType part = a.dtype == DType::Complex64 ? DType::Float32 : DType::Float64;
  if (!convert_exact(value.real(), part, a.value) || !convert_exact(value.imag(), part, a.value + dtype_size(part)))
    throw ArgumentError(name, fmt::format("value ({}, {}) does not convert exactly to {}, the dtype of argument "
                                          "\"{}\" of program \"{}\"",
                                          value.real(), value.imag(), a.info.dtype, name, impl_->name));
  a.bound = true;
}

std::map<std::string, std::int64_t> Program::Impl::symbol_values() {
  std::map<std::string, std::int64_t> syms = extra_symbols;
  for (auto& a : args) {
    if (!a.bound)
      throw ArgumentError(a.info.name,
                          fmt::format("argument \"{}\" of program \"{}\" is not bound; bind it with {} before calling",
                                      a.info.name, name,
                                      a.info.kind == "array"      ? "set_array"
                                      : a.info.kind == "callback" ? "set_callback"
                                                                  : "set_value"));
    if (a.info.kind == "symbol") syms[a.info.name] = as_int64(a.value, a.dtype);
    // A callback is an init argument too: another function makes a new instance, as in DaCe.
    if (a.info.kind == "callback") std::memcpy(&syms[a.info.name], a.value, sizeof(std::int64_t));
  }
  return syms;
}

void Program::Impl::install_workspace(const std::string& storage, void* ptr, std::size_t bytes,
                                      std::vector<void*>& init_ptrs) {
  if (const char* why = set_ws_fn(state, storage.c_str(), ptr, bytes, init_ptrs.data()))
    throw Error(fmt::format("program \"{}\": {}", name, why));
}

std::vector<void*> Program::Impl::init_pointers() {
  std::vector<void*> ptrs;
  for (auto& s : init_symbols) ptrs.push_back(find(s).value);
  return ptrs;
}

void Program::Impl::ensure_state(const std::map<std::string, std::int64_t>& syms) {
  // (Re)initialize when the symbol values the instance was made for change.
  std::vector<std::int64_t> init_values;
  for (auto& s : init_symbols) init_values.push_back(syms.at(s));
  if (state && init_values == state_symbols) return;
  std::vector<void*> init_ptrs = init_pointers();
  if (state) exit_fn(state);
  state_symbols.clear();
  state = init_fn(init_ptrs.data());
  if (!state) {
    const char* why = init_error_fn ? init_error_fn() : nullptr;
    throw Error(fmt::format("program \"{}\" failed to initialize: {}", name, why && *why ? why : "out of memory"));
  }
  for (auto& storage : storages) {
    auto user = user_workspaces.find(storage);
    if (user != user_workspaces.end()) {
      install_workspace(storage, user->second.first, user->second.second, init_ptrs);
      continue;
    }
    std::size_t bytes = ws_size_fn(state, storage.c_str(), init_ptrs.data());
    auto& ws = workspaces[storage];
    bool device = storage == "GPU_Global";
    if (ws.second < bytes || !ws.first) {
      if (ws.first) (workspace_on_device[storage] ? device_free_fn(ws.first) : std::free(ws.first));
      std::size_t rounded = std::max<std::size_t>(256, (bytes + 255) / 256 * 256);
      ws.first = device && device_alloc_fn ? device_alloc_fn(rounded) : std::aligned_alloc(256, rounded);
      workspace_on_device[storage] = device && device_alloc_fn;
      ws.second = bytes;
      if (!ws.first) throw Error(fmt::format("cannot allocate the {} workspace of {} bytes", storage, bytes));
    }
    install_workspace(storage, ws.first, ws.second, init_ptrs);
  }
  if (stream_set)
    if (const char* why = set_stream_fn(state, stream)) throw Error(fmt::format("program \"{}\": {}", name, why));
  state_symbols = init_values;
}

void Program::set_external_stream(void* stream) {
  Impl& m = *impl_;
  if (!m.set_stream_fn)
    throw Error(
        fmt::format("{}: the library does not export __sdfc_set_external_stream; rebuild it with this sdfc", m.path));
  // Checked now when the program is initialized (or always rejected: a CPU program), else at init.
  if (m.state || !m.device_alloc_fn)
    if (const char* why = m.set_stream_fn(m.state, stream)) throw Error(fmt::format("program \"{}\": {}", m.name, why));
  m.stream_set = true;
  m.stream = stream;
}

int Program::graph_captures() const {
  const Impl& m = *impl_;
  return m.state && m.graph_captures_fn ? m.graph_captures_fn(m.state) : 0;
}

const std::vector<std::string>& Program::workspace_storages() const {
  return impl_->storages;
}

void Program::Impl::check_storage(const std::string& storage) const {
  if (std::find(storages.begin(), storages.end(), storage) != storages.end()) return;
  throw Error(fmt::format(
      "program \"{}\" has no {} workspace (its workspaces: {})", name, storage,
      storages.empty() ? "none; compile with --transients external" : fmt::format("{}", fmt::join(storages, ", "))));
}

std::size_t Program::workspace_size(const std::string& storage) {
  Impl& m = *impl_;
  m.check_storage(storage);
  m.ensure_state(m.symbol_values());
  std::vector<void*> init_ptrs = m.init_pointers();
  return m.ws_size_fn(m.state, storage.c_str(), init_ptrs.data());
}

void Program::set_workspace(const std::string& storage, void* ptr, std::size_t bytes) {
  Impl& m = *impl_;
  m.check_storage(storage);
  if (m.state) {
    std::vector<void*> init_ptrs = m.init_pointers();
    m.install_workspace(storage, ptr, bytes, init_ptrs);  // throws, installing nothing, when rejected
  }
  m.user_workspaces[storage] = {ptr, bytes};
  auto own = m.workspaces.find(storage);
  if (own != m.workspaces.end()) {
    if (m.workspace_on_device[storage])
      m.device_free_fn(own->second.first);
    else
      std::free(own->second.first);
    m.workspaces.erase(own);
  }
}

void Program::call() {
  Impl& m = *impl_;
  std::map<std::string, std::int64_t> syms = m.symbol_values();
  for (auto& a : m.args) {
    if (a.info.kind != "array") continue;
    std::int64_t need = 1;
    bool known = true;  // false: a symbol of the shape is not bound
    for (std::size_t d = 0; d < a.shape.size(); ++d) {
      std::set<std::string> names;
      free_symbols(a.shape[d], names);
      std::vector<std::string> values;
      bool bound = true;
      for (auto& n : names) {
        auto it = syms.find(n);
        if (it == syms.end())
          bound = false;
        else
          values.push_back(fmt::format("{} = {}", n, it->second));
      }
      auto v = evaluate(a.shape[d], syms);
      // With every symbol bound, no value means the arithmetic overflowed (or divided by zero).
      if (bound && (!v || *v < 0))
        throw ArgumentError(
            a.info.name,
            fmt::format("array argument \"{}\" of program \"{}\": extent {} of its shape [{}] is {} for {}; "
                        "sizes must be between 0 and 2^63 - 1: check the symbol values",
                        a.info.name, m.name, d, fmt::join(a.info.shape, ", "),
                        v ? std::to_string(*v) : "not computable (it overflows 64 bits)", fmt::join(values, ", ")));
      if (!v || !known) {
        known = false;
        continue;
      }
      std::int64_t product;
      if (__builtin_mul_overflow(need, *v, &product))
        throw ArgumentError(a.info.name, fmt::format("array argument \"{}\" of program \"{}\": its shape [{}] has more "
                                                     "than 2^63 elements for these symbol values",
                                                     a.info.name, m.name, fmt::join(a.info.shape, ", ")));
      need = product;
    }
    if (known && static_cast<std::uint64_t>(a.count) < static_cast<std::uint64_t>(need))
      throw ArgumentError(a.info.name, fmt::format("array argument \"{}\" of program \"{}\" has {} elements, but its "
                                                   "shape [{}] needs {} for these symbol values",
                                                   a.info.name, m.name, a.count, fmt::join(a.info.shape, ", "), need));
  }
  m.ensure_state(syms);
  // Host arrays bound to device arguments are mirrored in device memory around the call.
  struct Mirror {
    Impl::Arg* arg;
    void* host;
    std::size_t bytes;
  };
  std::vector<Mirror> mirrors;
  auto release = [&] {
    for (auto& mi : mirrors) {
      m.device_free_fn(mi.arg->data);
      mi.arg->data = mi.host;
    }
  };
  for (auto& a : m.args) {
    if (!a.device || !a.bound || (a.info.kind != "array" && !a.by_pointer) || !m.is_device_fn || m.is_device_fn(a.data))
      continue;
    if (m.stream_set) {
      release();
      throw ArgumentError(
          a.info.name,
          fmt::format(
              "argument \"{}\" of program \"{}\" is host memory bound to a device argument; with an external stream "
              "the call returns before its results exist, so bind device memory instead",
              a.info.name, m.name));
    }
    std::size_t bytes = a.count * dtype_size(a.dtype);
    void* dev = m.device_alloc_fn(std::max<std::size_t>(bytes, 1));
    if (!dev || m.device_copy_fn(dev, a.data, bytes) != 0) {
      release();
      throw Error(fmt::format("cannot copy argument \"{}\" ({} bytes) to the GPU", a.info.name, bytes));
    }
    mirrors.push_back({&a, a.data, bytes});
    a.data = dev;
  }
  std::vector<void*> ptrs;
  for (auto& a : m.args)
    ptrs.push_back(a.info.kind == "array" || a.by_pointer ? static_cast<void*>(&a.data) : static_cast<void*>(a.value));
  m.call_fn(m.state, ptrs.data());
  for (auto& mi : mirrors) m.device_copy_fn(mi.host, mi.arg->data, mi.bytes);
  release();
  if (const char* err = m.last_error_fn(m.state)) {
    std::string msg = err;
    m.clear_error_fn(m.state);
    throw Error(msg);
  }
}

}  // namespace sdfc
