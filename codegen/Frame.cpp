// The library frame. See Frame.h.
#include "codegen/Frame.h"

#include <fmt/format.h>

#include <limits>
#include <set>

#include "codegen/CheckedSize.h"
#include "ir/Diagnostic.h"
#include "ir/Dump.h"
#include "ir/JsonReader.h"
#include "ir/Walk.h"
#include "lang/CppEnvironment.h"

namespace sdfc::codegen {

namespace {

/// The call of `__program_<name>_internal` with the exceptions it may end in recorded as the
/// call's error; `capture` (graph mode, capturing): also CaptureAbandoned, and __failed is set.
void emit_call_internal(const std::string& name_, const std::vector<std::string>& call_args, bool capture,
                        CodeWriter& w) {
  w.open("try");
  w.line(fmt::format("__program_{}_internal(__state{});", name_,
                     call_args.empty() ? "" : ", " + fmt::format("{}", fmt::join(call_args, ", "))));
  w.close();
  if (capture) {
    w.open("catch (const sdfc::gpu::CaptureAbandoned&)");
    w.line("__abandoned = true;");
    w.close();
  }
  std::string failed = capture ? "__failed = true; " : "";
  w.open("catch (const sdfc::rt::SizeError& e)");
  w.line(fmt::format("{}sdfc::rt::record_error(__state->__sdfc_error, \"{}: %s\", e.what());", failed, name_));
  w.close();
  w.open("catch (const std::bad_alloc&)");
  w.line(
      fmt::format("{}sdfc::rt::record_error(__state->__sdfc_error, \"{}: out of memory while allocating transients\");",
                  failed, name_));
  w.close();
  w.open("catch (...)");
  w.line(
      fmt::format("{}sdfc::rt::record_error(__state->__sdfc_error, \"{}: a C++ exception escaped from tasklet code\");",
                  failed, name_));
  w.close();
}

}  // namespace

FramePrinter::FramePrinter(const SDFG& root, const CompileOptions& options, std::string file, EmittedBody body)
    : root_(root),
      options_(options),
      file_(std::move(file)),
      name_(root.name),
      gpu_(options.target != Target::CPU),
      body_(std::move(body)) {
  all_sdfgs.push_back(&root_);
  all_sdfgs.insert(all_sdfgs.end(), body_.nested_sdfgs.begin(), body_.nested_sdfgs.end());
  SDFC_ASSERT(is_identifier(name_), "SDFG name not legalized: " + name_);
  sig = signature(root_);
  st = state_type();
  bool global_code = !root_.global_code.code.empty() || !root_.target_global_code.empty() || !body_.globals.empty();
  for (const SDFG* n : body_.nested_sdfgs) global_code |= !n->target_global_code.empty();
  split_ = options_.target == Target::CUDA && !global_code;

  // Persistent and External transients of the top-level SDFG live in the state struct.
  for (auto& [n, d] : root_.arrays) {
    if (!d.transient) continue;
    if (d.lifetime == Lifetime::Persistent) persistent.emplace_back(n, &d);
    if (d.lifetime == Lifetime::External) external.emplace_back(n, &d);
    SDFC_ASSERT(d.lifetime != Lifetime::Global, "Global lifetime not legalized: " + n);
  }
  std::vector<std::string> internal_params;
  for (auto& a : sig.args) {
    std::string t = ctype(a.dtype);
    if (a.kind == Argument::Kind::Callback)
      params.push_back(callback_type(*a.callback, "*" + ident(a.name)));
    else if (a.kind == Argument::Kind::Array || a.by_pointer)
      params.push_back(fmt::format("{} * __restrict__ {}", t, ident(a.name)));
    else
      params.push_back(fmt::format("{} {}", t, ident(a.name)));
    // The entry point keeps DaCe's types; the body reads integer symbols as int64_t (exact).
    internal_params.push_back(a.kind == Argument::Kind::Symbol
                                  ? fmt::format("{} {}", ctype(symbol_value_type(a.dtype)), ident(a.name))
                                  : params.back());
    call_args.push_back(ident(a.name));
  }
  internal_param_list = internal_params.empty() ? "" : ", " + fmt::format("{}", fmt::join(internal_params, ", "));
  for (auto& s : sig.init_symbols) {
    init_params.push_back(init_symbol_decl(s, ident(s)));
    init_args.push_back(ident(s));
  }
  param_list = params.empty() ? "" : ", " + fmt::format("{}", fmt::join(params, ", "));
  init_list = fmt::format("{}", fmt::join(init_params, ", "));
  for (auto& s : sig.init_symbols) {
    wide_params.push_back(init_symbol_decl(s, "__arg_" + ident(s)));
    widen.push_back(fmt::format("const {1} {0} = __arg_{0}; (void){0};", ident(s),
                                root_.find_callback(s) ? "auto" : "std::int64_t"));
    wide_args.push_back("__arg_" + ident(s));
  }
  wide_list = wide_params.empty() ? "" : ", " + fmt::format("{}", fmt::join(wide_params, ", "));

  for (auto& ws : root_.workspaces) {
    std::string s(to_string(ws.storage));
    workspace_of[s] = &ws;
    for (auto& n : ws.members) by_storage[s].emplace_back(n, root_.find_data(n));
  }
  for (auto& [s, v] : by_storage) storages.push_back(s);
  info = info_json();
}

std::string FramePrinter::init_symbol_decl(const std::string& s, const std::string& name) const {
  if (const Callback* cb = root_.find_callback(s)) return callback_type(*cb, "*" + name);
  std::string t = ctype(root_.symbol_type(s).value_or(DType::Int32));
  return name.find_first_not_of('*') == std::string::npos ? t + name : t + " " + name;
}

GeneratedProgram FramePrinter::run() {
  GeneratedProgram p;
  CodeWriter w;
  if (split_) {
    CodeWriter d;
    device_prologue(d);
    device_functions(d);
    p.files.push_back({name_ + ".cu", d.str()});
  }
  prologue(w);
  state_struct(w);
  if (!split_) device_functions(w);
  functions(w);
  program_entry(w);
  init_function(w);
  exit_function(w);
  external_memory(w);
  workspace_hooks(w);
  error_and_stream_hooks(w);
  array_entry_points(w);
  p.name = name_;
  p.files.push_back({name_ + (split_ ? ".cpp" : target_info(options_.target).source_extension), w.str()});
  p.header = c_header();
  p.info_json = info;
  p.libraries.assign(root_.libraries.begin(), root_.libraries.end());
  p.prelude_headers = prelude_std_includes(std_includes(), options_.target);
  if (split_) p.prelude_headers.push_back("<cuda_runtime.h>");  // gpu_portability.h's, parsed once
  return p;
}

namespace {
/// One element of a constant as a C++ literal of type `t` (the reader admits numbers and
/// booleans, and real, integer and boolean types only).
std::string constant_literal(const Json& v, DType t) {
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number_unsigned() && v.get<std::uint64_t>() > std::numeric_limits<std::int64_t>::max())
    return fmt::format("{}ULL", v.get<std::uint64_t>());
  if (v.is_number_integer()) {
    auto i = v.get<std::int64_t>();
    if (i == std::numeric_limits<std::int64_t>::min()) return "(-9223372036854775807LL - 1)";
    bool small = i >= std::numeric_limits<std::int32_t>::min() && i <= std::numeric_limits<std::int32_t>::max();
    return fmt::format(small ? "{}" : "{}LL", i);
  }
  double x = v.get<double>();
  if (t == DType::Float32 || t == DType::Float64)
    return fmt::format("{}", x).find_first_of(".en") == std::string::npos ? fmt::format("{}.0", x)
                                                                          : fmt::format("{}", x);
  return fmt::format("{}", x);  // a real value for an integer or boolean constant: C++ converts it
}
}  // namespace

/// Fills constant `n` (allocated just before) with its elements, in C order.
void FramePrinter::constant_fill(const std::string& n, const DataDesc& d, CodeWriter& w) const {
  std::vector<std::string> elements;
  for (auto& v : d.constant) elements.push_back(constant_literal(v, d.dtype));
  w.line(fmt::format("// constant {} (constants_prop): {} elements", n, elements.size()));
  w.line(fmt::format("static const {} __sdfc_constant_{}[] = {{{}}};", ctype(d.dtype), ident(n),
                     fmt::join(elements, ", ")));
  if (gpu_ && is_gpu_storage(d.storage))
    w.line(
        fmt::format("if (sdfc::gpu::gpuMemcpy(__state->__0_{0}, __sdfc_constant_{0}, sizeof __sdfc_constant_{0}, "
                    "sdfc::gpu::kMemcpyHostToDevice) != sdfc::gpu::kSuccess) throw sdfc::rt::SizeError(\"cannot "
                    "copy constant {1} to the GPU\");",
                    ident(n), n));
  else
    w.line(fmt::format("std::memcpy(__state->__0_{0}, __sdfc_constant_{0}, sizeof __sdfc_constant_{0});", ident(n)));
}

std::string FramePrinter::persistent_free(const std::string& name, const DataDesc& d) const {
  if (gpu_ && is_gpu_storage(d.storage))
    return fmt::format("if (__state->__0_{0}) (void)sdfc::gpu::gpuFree(__state->__0_{0});", ident(name));
  if (gpu_ && d.storage == StorageType::CPU_Pinned)
    return fmt::format("if (__state->__0_{0}) (void)sdfc::gpu::gpuFreeHost(__state->__0_{0});", ident(name));
  return fmt::format("delete[] __state->__0_{};", ident(name));
}

const std::vector<std::string>& FramePrinter::std_includes() const {
  return root_.std_includes.empty() ? generated_std_includes() : root_.std_includes;
}

/// The file's head: what generated it, the includes, global code.
void FramePrinter::prologue(CodeWriter& w) {
  w.line(fmt::format("// Generated by sdfc {} from SDFG \"{}\" ({}). Do not edit: regenerate with sdfc compile.",
                     SDFC_VERSION, name_, file_));
  w.line(fmt::format("// Target: {}. Passes decided schedules, storage and lifetimes; this file prints them.",
                     to_string(options_.target)));
  const std::vector<std::string>& includes = std_includes();
  for (auto& h : includes) w.line("#include " + h);
  if (std::find(includes.begin(), includes.end(), "<complex>") == includes.end())
    w.line("#define SDFC_NO_COMPLEX 1  // no complex numbers (host-environment)");
  if (options_.report_refusals) w.line("#define SDFC_REPORT_REFUSALS 1  // --dace-layout: refusals also go to stderr");
  w.line(fmt::format("#include \"{}\"", target_info(options_.target).runtime_header));
  if (gpu_ && !split_) w.line("#include \"sdfc/gpu_atomics.h\"");
  if (gpu_ && !split_ && combines_atomics())
    w.line("#include \"sdfc/gpu_atomics_combined.h\"  // a warp's atomics combined (cooperative groups)");
  if (root_.libraries.count("cblas"))
    w.line("#include \"sdfc/blas.h\"  // CBLAS on host data (--blas vendor, DaCe's CBLAS tasklets)");
  if (root_.libraries.count("cublas")) w.line("#include \"sdfc/gpu_blas.h\"  // --blas vendor: cuBLAS on GPU data");
  if (root_.libraries.count("linalg"))
    w.line("#include \"sdfc/linalg.h\"  // numpy.linalg's inv, solve, cholesky (DaCe's LAPACK nodes) on the host");
  if (options_.target == Target::HIP) w.line("#include \"sdfc/gpu_runtime_names.h\"  // CUDA names in DaCe code");
  w.line("");
  struct_definitions(w);
  if (!root_.global_code.code.empty()) {
    w.line("// global_code of the SDFG");
    w.raw(root_.global_code.code);
  }
  emit_located(options_.target, root_, root_.target_global_code, {"cpu", "cuda", "hip"}, "global_code", w, false);
  for (const SDFG* n : body_.nested_sdfgs)
    emit_located(options_.target, *n, n->target_global_code, {"cpu", "cuda", "hip"}, "global_code", w, false);
  // (tasklet code_global is collected while the body is generated)
  for (auto& g : body_.globals) {
    w.line("// code_global of a tasklet");
    w.raw(g);
  }
  w.line("");
}

/// The C++ definition of every struct type the program's data and connectors have (DaCe's struct
/// dtypes; legalize made sure one name means one type).
void FramePrinter::struct_definitions(CodeWriter& w) const {
  std::set<DType> types;
  auto note = [&](DType t) {
    if (is_struct(t)) types.insert(t);
  };
  for (const SDFG* s : all_sdfgs) {
    for (auto& [n, d] : s->arrays) note(d.dtype);
    walk::for_each_state(*s, "", [&](const Block& st, const std::string&) {
      for (auto& n : st.nodes)
        for (auto* list : {&n->in_connectors, &n->out_connectors})
          for (auto& c : *list)
            if (c.dtype) note(*c.dtype);
    });
  }
  // A structure's fields may point at another struct: every name is declared before any definition.
  bool pointers = false;
  for (DType t : types)
    for (auto& [name, type] : struct_of(t)->fields) pointers |= struct_of(t)->is_pointer(name) && is_struct(type);
  if (pointers)
    for (DType t : types) w.line(fmt::format("struct {};", struct_of(t)->name));
  for (DType t : types) {
    const StructType& st = *struct_of(t);
    w.line(st.pointers.empty()
               ? fmt::format("// struct dtype \"{}\" (DaCe's struct: C's layout of its fields)", st.name)
               : fmt::format("// structure type \"{}\" (DaCe's Structure: arrays and structures by pointer)", st.name));
    w.open(fmt::format("struct {}", st.name));
    for (auto& [name, type] : st.fields)
      w.line(fmt::format("{}{} {};", ctype(type), st.is_pointer(name) ? "*" : "", name));
    w.close(";");
  }
  if (!types.empty()) w.line("");
}

/// The state struct, the handle registry, DaCe's stream hooks declared.
void FramePrinter::state_struct(CodeWriter& w) {
  w.open(fmt::format("struct {}", st));
  for (auto& [n, d] : persistent)
    w.line(fmt::format("{} * __restrict__ __0_{} = nullptr;  // Persistent", ctype(d->dtype), ident(n)));
  for (auto& [n, d] : external)
    w.line(fmt::format("{} * __restrict__ __0_{} = nullptr;  // External, set by __dace_set_external_memory_*",
                       ctype(d->dtype), ident(n)));
  for (auto& [n, d] : persistent)
    w.line(fmt::format("std::size_t __sdfc_bytes_{} = 0;  // allocated at init", ident(n)));
  for (auto& [s, v] : by_storage)
    w.line(fmt::format(
        "std::size_t __sdfc_workspace_bytes_{} = 0;  // the {} workspace's size for the symbols it was set with", s,
        s));
  w.line("sdfc::rt::ErrorSlot __sdfc_error;");
  if (gpu_) w.line("sdfc::gpu::Context __sdfc_gpu;  // device, streams, events, the GPU's first error");
  if (root_.libraries.count("cublas"))
    w.line("sdfc::gpu::BlasHandle __sdfc_blas;  // the cuBLAS handle of --blas vendor calls, made at first use");
  w.close(";");
  w.line("");
  w.line("// Why the last __dace_init_ on this thread failed (it returns null, as DaCe's does), or why the last");
  w.line("// use of a null or finished handle was refused: __sdfc_last_error(NULL) reads it.");
  w.line("static thread_local char __sdfc_init_failure[1024];");
  w.line(
      "static sdfc::rt::HandleRegistry __sdfc_handles;  // the instances __dace_init_ made and __dace_exit_ did not "
      "end");
  w.open("static bool __sdfc_live(const void* __handle, const char* __function)");
  w.line("if (__sdfc_handles.live(__handle)) return true;");
  w.line(fmt::format(
      "std::snprintf(__sdfc_init_failure, sizeof __sdfc_init_failure, \"%s: %s\", __function, __handle ? \"the "
      "handle was not made by __dace_init_{0} or was already finished by __dace_exit_{0}\" : \"the handle is null "
      "(__dace_init_{0} failed or was not called)\");",
      name_));
  w.line("return false;");
  w.close();
  if (gpu_) {
    // DaCe's stream hooks, which init_code and CPP tasklets may call (GT4Py's init_code for
    // "cuda": __dace_gpu_set_all_streams(__state, cudaStreamDefault)); defined below.
    w.line(fmt::format("SDFC_EXPORT bool __dace_gpu_set_stream({}* __state, int id, sdfc::gpu::Stream stream);", st));
    w.line(fmt::format("SDFC_EXPORT void __dace_gpu_set_all_streams({}* __state, sdfc::gpu::Stream stream);", st));
  }
  w.line("");
}

/// Nested SDFGs, kernels, and the internal body function.
/// The head of the device source of a split CUDA program: the standard headers, the GPU
/// portability layer, and sdfc's math and atomics only where the kernels use them (each costs
/// nvcc as much as the kernels).
void FramePrinter::device_prologue(CodeWriter& w) {
  w.line(fmt::format("// Generated by sdfc {} from SDFG \"{}\" ({}). Do not edit: regenerate with sdfc compile.",
                     SDFC_VERSION, name_, file_));
  w.line("// Target: cuda, device source: the kernels and their launchers (the host code is in " + name_ + ".cpp).");
  const std::vector<std::string>& includes = std_includes();
  for (auto& h : includes) w.line("#include " + h);
  if (std::find(includes.begin(), includes.end(), "<complex>") == includes.end())
    w.line("#define SDFC_NO_COMPLEX 1  // no complex numbers (host-environment)");
  w.line("#include \"sdfc/gpu_portability.h\"");
  auto used = [&](std::string_view what) { return device_code_uses(what); };
  if (used("sdfc::rt::") || used("dace::")) w.line("#include \"sdfc/rt.h\"");
  if (used("sdfc::gpu::atomic")) w.line("#include \"sdfc/gpu_atomics.h\"");
  if (combines_atomics())
    w.line("#include \"sdfc/gpu_atomics_combined.h\"  // a warp's atomics combined (cooperative groups)");
  w.line("");
}

bool FramePrinter::combines_atomics() const {
  return device_code_uses("sdfc::gpu::atomic_add_combined") || device_code_uses("sdfc::gpu::atomic_add_grouped");
}

bool FramePrinter::device_code_uses(std::string_view what) const {
  for (auto* list : {&body_.kernels, &body_.device_functions})
    for (auto& k : *list)
      if (k.find(what) != std::string::npos) return true;
  return false;
}

/// Device functions, kernels and their launchers (the device source of a split program, or the
/// one .cu before the host functions).
void FramePrinter::device_functions(CodeWriter& w) {
  for (auto& f : body_.device_functions) {
    w.raw(f);
    w.line("");
  }
  if (body_.dependent_launch) {  // outline-kernels checked the architecture; this guards -arch by hand
    w.line("#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900");
    w.line(
        "#error \"kernels launched as programmatic dependent launches need sm_90 or newer (--no-dependent-launch)\"");
    w.line("#endif");
  }
  for (auto& k : body_.kernels) {
    w.raw(k);
    w.line("");
  }
  if (!gpu_) return;
  w.line("// the launchers the host code calls");
  for (auto& l : body_.launchers) w.raw(l.second);
  w.line(
      "SDFC_LAUNCHER void __sdfc_gpu_spin(sdfc::gpu::Stream s, long long ticks) { sdfc::gpu::launch_spin(s, ticks); }");
  w.line("");
}

void FramePrinter::functions(CodeWriter& w) {
  if (split_) {
    w.line(fmt::format("// the kernels' launchers, in {}.cu", name_));
    for (auto& l : body_.launchers) w.line(l.first);
    w.line("SDFC_LAUNCHER void __sdfc_gpu_spin(sdfc::gpu::Stream s, long long ticks);");
    w.line("");
  }
  for (auto& f : body_.functions) {
    w.raw(f);
    w.line("");
  }
  for (auto& [s, v] : by_storage)
    w.line(fmt::format("SDFC_EXPORT std::size_t __dace_get_external_memory_size_{}({}* __state{});", s, st, wide_list));
  w.open(fmt::format("static void __program_{}_internal({}* __state{})", name_, st, internal_param_list));
  w.raw(body_.text);
  w.close();
  w.line("");
}

/// __program_<name>: the checks, then the body (graph mode: replay, capture or plain).
void FramePrinter::program_entry(CodeWriter& w) {
  // __program_<name>: checks, then the body.
  w.open(fmt::format("SDFC_EXPORT void __program_{}({}* __state{})", name_, st, param_list));
  w.line(fmt::format("if (!__sdfc_live(__state, \"__program_{}\")) return;", name_));
  if (gpu_ && root_.gpu_graph) {
    w.line(fmt::format("sdfc::gpu::DeviceGuard __guard({});", kCtx));
    w.line("if (!__guard.ok()) return;");
  } else if (gpu_) {
    w.line(fmt::format("sdfc::gpu::DeviceGuard __guard({});", kCtx));
    w.line(fmt::format("// external-sync pass: the caller's stream waits for the previous call if it changed{}",
                       root_.sync_streams.empty()
                           ? ""
                           : fmt::format("; streams {} wait for it", fmt::join(root_.sync_streams, ", "))));
    w.line(fmt::format("if (!__guard.ok() || !sdfc::gpu::enter_call({}, {{{}}})) return;", kCtx,
                       fmt::join(root_.sync_streams, ", ")));
  }
  for (auto& [s, v] : by_storage) {
    w.open(fmt::format("if (!__state->__0_{})", ident(v.front().first)));
    w.line(fmt::format(
        "sdfc::rt::record_error(__state->__sdfc_error, \"{}: the external workspace for {} is not set; call "
        "__dace_set_external_memory_{} after init and before the first call\");",
        name_, s, s));
    w.line("return;");
    w.close();
    w.open(fmt::format("if (__dace_get_external_memory_size_{}(__state{}{}) > __state->__sdfc_workspace_bytes_{})", s,
                       init_args.empty() ? "" : ", ", fmt::join(init_args, ", "), s));
    w.line(fmt::format(
        "sdfc::rt::record_error(__state->__sdfc_error, \"{}: these symbol values need a larger {} workspace than "
        "the one set; set a workspace sized for them first\");",
        name_, s));
    w.line("return;");
    w.close();
  }
  for (auto& [n, d] : persistent) {
    w.open(fmt::format("if (!sdfc::rt::size_fits({}, sizeof({}), __state->__sdfc_bytes_{}))",
                       checked_size(d->total_size), ctype(d->dtype), ident(n)));
    w.line(fmt::format(
        "sdfc::rt::record_error(__state->__sdfc_error, \"{}: persistent transient {} needs more memory for these "
        "symbol values than was allocated at init; initialize a new instance with the larger sizes\");",
        name_, n));
    w.line("return;");
    w.close();
  }
  if (root_.gpu_graph) {
    // The key: every argument's bytes and the External workspaces' pointers (sdfc/gpu.h, graphs).
    std::vector<std::string> key;
    for (auto& a : call_args) key.push_back(fmt::format("{{(const void*)&{0}, sizeof({0})}}", a));
    for (auto& [s, v] : by_storage)
      for (auto& [n, d] : v)
        key.push_back(fmt::format("{{(const void*)&__state->__0_{0}, sizeof(__state->__0_{0})}}", ident(n)));
    if (key.empty()) key.push_back("{nullptr, 0}");
    w.line(fmt::format("// gpu-graph pass: the call's GPU work replays as one graph while these bytes stay the same"));
    w.line(fmt::format("const sdfc::gpu::GraphArg __graph_args[] = {{{}}};", fmt::join(key, ", ")));
    w.line("constexpr std::size_t __graph_count = sizeof(__graph_args) / sizeof(__graph_args[0]);");
    w.line(fmt::format("if (sdfc::gpu::graph_replay({}, __graph_args, __graph_count)) return;", kCtx));
    w.open(fmt::format("if (!sdfc::gpu::graph_plain({}, __graph_args, __graph_count))", kCtx));
    w.line("// the host code runs once with the streams capturing (nothing executes), then the graph is");
    w.line("// updated or instantiated and launched as the call's work");
    w.line(fmt::format("if (!sdfc::gpu::graph_begin({})) return;", kCtx));
    w.line(
        fmt::format("bool __failed = !sdfc::gpu::enter_call({}, {{{}}});", kCtx, fmt::join(root_.sync_streams, ", ")));
    w.line("bool __abandoned = false;");
    w.open("if (!__failed)");
    emit_call_internal(name_, call_args, true, w);
    w.close();
    w.open("if (!__abandoned)");
    w.line(fmt::format("sdfc::gpu::graph_end({}, __graph_args, __graph_count, __failed || __state->__sdfc_error.set);",
                       kCtx));
    w.line("return;");
    w.close();
    w.line(fmt::format("sdfc::gpu::graph_abandon({}, __graph_args, __graph_count);", kCtx));
    w.close();
    w.line("// these arguments lead to host work a replay would skip: the call runs without a graph");
    w.line(fmt::format("if (!sdfc::gpu::enter_call({}, {{{}}})) return;", kCtx, fmt::join(root_.sync_streams, ", ")));
  }
  emit_call_internal(name_, call_args, false, w);
  w.close();
  w.line("");
}

/// __dace_init_<name>: the state, the GPU context, init code, persistent transients.
void FramePrinter::init_function(CodeWriter& w) {
  // __dace_init_<name>
  w.open(fmt::format("SDFC_EXPORT {}* __dace_init_{}({})", st, name_, init_list));
  w.line("__sdfc_init_failure[0] = '\\0';");
  w.line(fmt::format("{0}* __state = new (std::nothrow) {0}();", st));
  w.open("if (!__state)");
  w.line("std::snprintf(__sdfc_init_failure, sizeof __sdfc_init_failure, \"out of memory\");");
  w.line("return nullptr;");
  w.close();
  w.line("// registered before init_code, which may call the stream hooks with it");
  w.open("if (!__sdfc_handles.add(__state))");
  w.line("std::snprintf(__sdfc_init_failure, sizeof __sdfc_init_failure, \"out of memory\");");
  w.line("delete __state;");
  w.line("return nullptr;");
  w.close();
  // Nothing may leave an extern "C" function: an exception from init code (or the allocations)
  // frees what was made and returns null with the reason.
  w.open("try");
  if (gpu_) {
    w.open(fmt::format(
        "if (!sdfc::gpu::init({0}, {1}, {2}){3})", kCtx, options_.gpu_streams, root_.num_events,
        root_.gpu_graph || root_.graph_segments > 0 ? fmt::format(" || !sdfc::gpu::enable_graphs({})", kCtx) : ""));
    w.line(
        fmt::format("std::snprintf(__sdfc_init_failure, sizeof __sdfc_init_failure, \"%s\", {}.error.message);", kCtx));
    if (root_.gpu_graph || root_.graph_segments > 0) w.line(fmt::format("sdfc::gpu::destroy({});", kCtx));
    w.line("__sdfc_handles.remove(__state);");
    w.line("delete __state;");
    w.line("return nullptr;");
    w.close();
  }
  // As DaCe: the GPU target's init_code once its streams exist, then the frame's and the CPU's.
  emit_located(options_.target, root_, root_.target_init_code, {"cuda", "hip"}, "init_code", w, true);
  for (const SDFG* n : body_.nested_sdfgs)
    emit_located(options_.target, *n, n->target_init_code, {"cuda", "hip"}, "init_code", w, true);
  if (!root_.init_code.code.empty()) {
    w.open("");
    w.line("// init_code of the SDFG");
    w.raw(root_.init_code.code);
    w.close();
  }
  emit_located(options_.target, root_, root_.target_init_code, {"cpu"}, "init_code", w, true);
  for (const SDFG* n : body_.nested_sdfgs)
    emit_located(options_.target, *n, n->target_init_code, {"cpu"}, "init_code", w, true);
  if (gpu_ && body_.uses_pool)
    w.line(fmt::format("(void)sdfc::gpu::enable_pool({}, UINT64_MAX);  // pooled transients: keep freed blocks", kCtx));
  for (auto& code : body_.init_codes) {
    w.open("");
    w.line("// init_code of a nested SDFG");
    w.raw(code);
    w.close();
  }
  // Every size first, with checked arithmetic (codegen/CheckedSize.h): a negative or overflowing
  // size is refused (sdfc::rt::SizeError, caught below) before anything is allocated.
  for (auto& [n, d] : persistent)
    w.line(fmt::format(
        "const std::size_t __sdfc_count_{} = {};", ident(n),
        checked_count("persistent transient " + n, d->total_size, fmt::format("sizeof({})", ctype(d->dtype)))));
  for (auto& [n, d] : persistent) {
    w.line(fmt::format("__state->__sdfc_bytes_{0} = __sdfc_count_{0} * sizeof({1});", ident(n), ctype(d->dtype)));
    if (gpu_ && is_gpu_storage(d->storage))
      w.line(fmt::format("(void)sdfc::gpu::gpuMalloc((void**)&__state->__0_{}, __state->__sdfc_bytes_{});", ident(n),
                         ident(n)));
    else if (gpu_ && d->storage == StorageType::CPU_Pinned)
      w.line(fmt::format("(void)sdfc::gpu::gpuHostAlloc((void**)&__state->__0_{}, __state->__sdfc_bytes_{});", ident(n),
                         ident(n)));
    else
      w.line(fmt::format("__state->__0_{0} = new (std::nothrow) {1}[__sdfc_count_{0}];", ident(n), ctype(d->dtype)));
    w.open(fmt::format("if (!__state->__0_{})", ident(n)));
    for (auto& [n2, d2] : persistent) w.line(persistent_free(n2, *d2));
    w.line(
        fmt::format("std::snprintf(__sdfc_init_failure, sizeof __sdfc_init_failure, \"cannot allocate persistent "
                    "transient {} (out of memory)\");",
                    n));
    if (gpu_) w.line(fmt::format("sdfc::gpu::destroy({});", kCtx));
    w.line("__sdfc_handles.remove(__state);");
    w.line("delete __state;");
    w.line("return nullptr;");
    w.close();
  }
  for (auto& [n, d] : persistent)
    if (!d->constant.is_null()) constant_fill(n, *d, w);
  w.close();
  w.open("catch (const sdfc::rt::SizeError& e)");
  for (auto& [n, d] : persistent) w.line(persistent_free(n, *d));
  w.line("std::snprintf(__sdfc_init_failure, sizeof __sdfc_init_failure, \"%s\", e.what());");
  if (gpu_) w.line(fmt::format("sdfc::gpu::destroy({});", kCtx));
  w.line("__sdfc_handles.remove(__state);");
  w.line("delete __state;");
  w.line("return nullptr;");
  w.close();
  w.open("catch (...)");
  for (auto& [n, d] : persistent) w.line(persistent_free(n, *d));
  w.line(
      "std::snprintf(__sdfc_init_failure, sizeof __sdfc_init_failure, \"an exception escaped from init code or an "
      "allocation\");");
  if (gpu_) w.line(fmt::format("sdfc::gpu::destroy({});", kCtx));
  w.line("__sdfc_handles.remove(__state);");
  w.line("delete __state;");
  w.line("return nullptr;");
  w.close();
  w.line("return __state;");
  w.close();
  w.line("");
}

/// __dace_exit_<name>: exit code, then everything the state owns.
void FramePrinter::exit_function(CodeWriter& w) {
  // __dace_exit_<name>
  w.open(fmt::format("SDFC_EXPORT int __dace_exit_{}({}* __state)", name_, st));
  w.line(fmt::format("if (!__sdfc_live(__state, \"__dace_exit_{}\")) return 1;", name_));
  w.line("__sdfc_handles.remove(__state);  // from here on, every use of the handle is refused");
  if (!root_.exit_code.code.empty()) {
    w.open("");
    w.line("// exit_code of the SDFG");
    w.raw(root_.exit_code.code);
    w.close();
  }
  for (auto& code : body_.exit_codes) {
    w.open("");
    w.line("// exit_code of a nested SDFG");
    w.raw(code);
    w.close();
  }
  // As DaCe: the frame's and the CPU's exit_code, then the GPU target's while its streams exist.
  for (const SDFG* n : all_sdfgs)
    emit_located(options_.target, *n, n->target_exit_code, {"cpu", "cuda", "hip"}, "exit_code", w, true);
  if (gpu_) {
    w.line(fmt::format("sdfc::gpu::DeviceGuard __guard({});", kCtx));
    w.line(fmt::format("sdfc::gpu::wait_idle({});  // never the caller's stream: it may be gone by now", kCtx));
  }
  for (auto& [n, d] : persistent) w.line(persistent_free(n, *d));
  w.line(gpu_ ? fmt::format("int __err = __state->__sdfc_error.set || {}.error.set;", kCtx)
              : "int __err = __state->__sdfc_error.set;");
  if (root_.libraries.count("cublas")) w.line("sdfc::gpu::blas_destroy(__state->__sdfc_blas);  // before the streams");
  if (gpu_) w.line(fmt::format("sdfc::gpu::destroy({});", kCtx));
  w.line("delete __state;");
  w.line("return __err;");
  w.close();
  w.line("");
}

/// DaCe's external-memory pair per storage.
void FramePrinter::external_memory(CodeWriter& w) {
  // DaCe's external-memory pair, one per storage, with the offsets workspace-layout chose. Sizes
  // and offsets are computed in 64 bits, whatever the symbols' types.
  for (auto& [s, v] : by_storage) {
    w.open(fmt::format("SDFC_EXPORT std::size_t __dace_get_external_memory_size_{}({}* __state{})", s, st, wide_list));
    w.line("(void)__state;");
    for (auto& l : widen) w.line(l);
    // A size that overflows or is negative for these symbol values reads as SIZE_MAX: no
    // workspace is that large, so installing one and every call are refused.
    w.open("try");
    w.line(fmt::format("return {};", checked_count("the " + s + " workspace", workspace_of[s]->bytes, "1")));
    w.close();
    w.open("catch (const sdfc::rt::SizeError&)");
    w.line("return SIZE_MAX;");
    w.close();
    w.close();
    w.open(fmt::format("SDFC_EXPORT void __dace_set_external_memory_{}({}* __state, char* ptr{})", s, st, wide_list));
    w.line(fmt::format("if (!__sdfc_live(__state, \"__dace_set_external_memory_{}\")) return;", s));
    // DaCe's setter has no size to check (__sdfc_set_workspace has); the alignment it can check.
    w.open(fmt::format("if (reinterpret_cast<std::uintptr_t>(ptr) % {} != 0)", workspace_of[s]->alignment));
    w.line(fmt::format(
        "sdfc::rt::record_error(__state->__sdfc_error, \"{}: the {} workspace at %p is not aligned to {} bytes; "
        "nothing was installed\", static_cast<void*>(ptr));",
        name_, s, workspace_of[s]->alignment));
    w.line("return;");
    w.close();
    w.line(
        fmt::format("__state->__sdfc_workspace_bytes_{} = ptr ? __dace_get_external_memory_size_{}(__state{}{}) : 0;",
                    s, s, wide_args.empty() ? "" : ", ", fmt::join(wide_args, ", ")));
    for (auto& l : widen) w.line(l);
    for (auto& [n, d] : v)
      w.line(
          fmt::format("__state->__0_{} = reinterpret_cast<{}*>(ptr ? ptr + static_cast<std::size_t>({}) : nullptr);  "
                      "// offset chosen by workspace-layout",
                      ident(n), ctype(d->dtype), sym(d->workspace_offset)));
    w.close();
    w.line("");
  }
}

}  // namespace sdfc::codegen
