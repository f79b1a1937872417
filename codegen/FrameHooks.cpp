/// \file
/// The library frame's hooks (see Frame.h): sdfc's checked workspace pair, the error and
/// external-stream hooks, the entry points taking arguments as arrays of pointers, the program
/// info that binds arguments by name, and the C header for callers.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "codegen/Frame.h"
#include "ir/Dump.h"

namespace sdfc::codegen {

namespace {

/// DaCe's GPU hooks, the caller's-stream hook and device memory for callers that hold host data.
constexpr std::string_view kGpuHooks = R"(// DaCe's GPU hooks.
SDFC_EXPORT int __dace_gpu_last_error(${state}* __state) {
  return __sdfc_live(__state, "__dace_gpu_last_error") ? sdfc::gpu::dace_gpu_last_error(${ctx}) : 1;
}
SDFC_EXPORT bool __dace_gpu_set_stream(${state}* __state, int id, sdfc::gpu::Stream stream) {
  return __sdfc_live(__state, "__dace_gpu_set_stream") && sdfc::gpu::dace_gpu_set_stream(${ctx}, id, stream);
}
SDFC_EXPORT void __dace_gpu_set_all_streams(${state}* __state, sdfc::gpu::Stream stream) {
  if (__sdfc_live(__state, "__dace_gpu_set_all_streams")) sdfc::gpu::dace_gpu_set_all_streams(${ctx}, stream);
}
/// Sets the caller's stream (validated; nothing changes when it is rejected): nullptr or why not.
SDFC_EXPORT const char* __sdfc_set_external_stream(${state}* __state, sdfc::gpu::Stream stream) {
  if (!__sdfc_live(__state, "__sdfc_set_external_stream")) return __sdfc_init_failure;
  return sdfc::gpu::set_external_stream(${ctx}, stream);
}
/// Graph mode: how many captures this instance made (the call's and its segments'); -1: bad handle.
SDFC_EXPORT int __sdfc_graph_captures(${state}* __state) {
  return __sdfc_live(__state, "__sdfc_graph_captures") ? sdfc::gpu::graph_captures(${ctx}) : -1;
}
/// Device memory for callers that hold host data (sdfc run): allocate, free, copy (synchronous).
SDFC_EXPORT void* __sdfc_device_alloc(std::size_t bytes) {
  void* p = nullptr;
  return sdfc::gpu::gpuMalloc(&p, bytes) == sdfc::gpu::kSuccess ? p : nullptr;
}
SDFC_EXPORT void __sdfc_device_free(void* p) {
  (void)sdfc::gpu::gpuFree(p);
}
SDFC_EXPORT int __sdfc_pointer_is_device(const void* p) {
  sdfc::gpu::PointerInfo info{};
  if (sdfc::gpu::pointer_info(p, &info) != sdfc::gpu::kSuccess) return 0;
  return info.kind == sdfc::gpu::MemoryKind::kDevice || info.kind == sdfc::gpu::MemoryKind::kManaged;
}
SDFC_EXPORT int __sdfc_device_copy(void* dst, const void* src, std::size_t bytes) {
  return sdfc::gpu::gpuMemcpy(dst, src, bytes, sdfc::gpu::kMemcpyDefault) == sdfc::gpu::kSuccess ? 0 : 1;
}
)";

/// The C header for callers: DaCe's ABI and sdfc's hooks (`${storage_functions}`: the external-
/// memory pair per storage).
constexpr std::string_view kCHeader =
    R"(// C interface of the sdfc-built program "${name}" (DaCe's ABI plus sdfc's hooks).
#pragma once
#include <stddef.h>
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif
typedef void* ${name}Handle_t;
${name}Handle_t __dace_init_${name}(${init_params});
void __program_${name}(${name}Handle_t handle${params});
int __dace_exit_${name}(${name}Handle_t handle);
${storage_functions}const char* __sdfc_last_error(${name}Handle_t handle);
void __sdfc_clear_error(${name}Handle_t handle);
const char* __sdfc_program_info(void);
size_t __sdfc_workspace_size(${name}Handle_t handle, const char* storage, void** symbols);
const char* __sdfc_set_workspace(${name}Handle_t handle, const char* storage, void* ptr, size_t bytes, void** symbols);
const char* __sdfc_set_external_stream(${name}Handle_t handle, void* stream);  /* cudaStream_t / hipStream_t */
void* __sdfc_init(void** symbols);
void __sdfc_call(void* handle, void** args);
#ifdef __cplusplus
}
#endif
)";

}  // namespace

std::string FramePrinter::info_json() const {
  Json j = Json::object();
  j["name"] = name_;
  j["target"] = to_string(options_.target);
  j["sdfc_version"] = SDFC_VERSION;
  Json args = Json::array();
  for (auto& a : sig.args) {
    Json x = Json::object();
    x["name"] = a.name;
    static const char* const kinds[] = {"array", "scalar", "symbol", "callback"};
    x["kind"] = kinds[static_cast<int>(a.kind)];
    x["dtype"] = a.callback ? "callback" : std::string(to_string(a.dtype));
    if (a.callback) x["signature"] = callback_type(*a.callback, "*");
    x["by_pointer"] = a.by_pointer;
    if (a.desc) {
      Json shape = Json::array();
      for (auto& s : a.desc->shape) shape.push_back(print_expr(simplify(s)));
      x["shape"] = shape;
      if (a.desc->kind == DataKind::Array) {
        Json strides = Json::array();
        for (auto& s : a.desc->strides) strides.push_back(print_expr(simplify(s)));
        x["strides"] = strides;  // in elements
        x["total_size"] = print_expr(simplify(a.desc->total_size));
      }
      x["storage"] = std::string(to_string(a.desc->storage));
      if (a.desc->structure) x["structure"] = true;  // one C struct, bound by its address
    }
    args.push_back(x);
  }
  j["args"] = args;
  j["init_symbols"] = sig.init_symbols;
  j["external_storages"] = storages;
  return j.dump();
}

/// sdfc's checked workspace hooks.
void FramePrinter::workspace_hooks(CodeWriter& w) {
  // sdfc's checked workspace hooks: symbols come as an array of pointers (init order).
  std::vector<std::string> unpack_syms;
  for (std::size_t i = 0; i < sig.init_symbols.size(); ++i)
    unpack_syms.push_back(fmt::format("*static_cast<{}>(syms[{}])", init_symbol_decl(sig.init_symbols[i], "*"), i));
  std::string sym_call = unpack_syms.empty() ? "" : ", " + fmt::format("{}", fmt::join(unpack_syms, ", "));
  w.line("/// Bytes of the workspace for `storage` (0 when the program has none), with the symbol values at `syms`.");
  w.open(
      fmt::format("SDFC_EXPORT std::size_t __sdfc_workspace_size({}* __state, const char* storage, void** syms)", st));
  w.line("(void)__state; (void)storage; (void)syms;");
  if (!by_storage.empty()) {
    w.line("if (!storage) return 0;");
    if (!sig.init_symbols.empty()) w.line("if (!syms) return 0;");
  }
  for (auto& [s, v] : by_storage)
    w.line(
        fmt::format("if (std::strcmp(storage, \"{0}\") == 0) return __dace_get_external_memory_size_{0}(__state{1});",
                    s, sym_call));
  w.line("return 0;");
  w.close();
  w.line("/// Installs a workspace after checking it; returns nullptr, or why it was rejected (nothing installed).");
  w.open(
      fmt::format("SDFC_EXPORT const char* __sdfc_set_workspace({}* __state, const char* storage, void* ptr, "
                  "std::size_t bytes, void** syms)",
                  st));
  w.line("static thread_local char why[512];");
  w.line("if (!__sdfc_live(__state, \"__sdfc_set_workspace\")) return __sdfc_init_failure;");
  w.line("if (!storage) return \"the storage name is null\";");
  if (!sig.init_symbols.empty()) w.line("if (!syms) return \"the symbol values (syms) are null\";");
  for (auto& [s, v] : by_storage) {
    std::size_t align = workspace_of[s]->alignment;
    w.open(fmt::format("if (std::strcmp(storage, \"{}\") == 0)", s));
    w.line(fmt::format("std::size_t need = __dace_get_external_memory_size_{}(__state{});", s, sym_call));
    w.line("if (!ptr) return \"the workspace pointer is null\";");
    w.open("if (need == SIZE_MAX)");
    w.line("return " +
           c_string(fmt::format("the size of the {} workspace ({}) overflows or is negative for these symbol values", s,
                                print_expr(workspace_of[s]->bytes))) +
           ";");
    w.close();
    w.open("if (bytes < need)");
    w.line(
        fmt::format("std::snprintf(why, sizeof why, \"the {} workspace has %zu bytes but the program needs %zu for "
                    "these symbol values\", bytes, need);",
                    s));
    w.line("return why;");
    w.close();
    w.open(fmt::format("if (reinterpret_cast<std::uintptr_t>(ptr) % {} != 0)", align));
    w.line(
        fmt::format("std::snprintf(why, sizeof why, \"the {} workspace at %p is not aligned to {} bytes (the largest "
                    "element size)\", ptr);",
                    s, align));
    w.line("return why;");
    w.close();
    if (gpu_)
      w.line(fmt::format(
          "if (const char* bad = sdfc::gpu::check_workspace_memory({}, \"{}\", ptr, why, sizeof why)) return bad;",
          kCtx, s));
    w.line(fmt::format("__dace_set_external_memory_{}(__state, static_cast<char*>(ptr){});", s, sym_call));
    w.line("return nullptr;");
    w.close();
  }
  w.line(
      "std::snprintf(why, sizeof why, \"the program has no external workspace of storage %s\", storage ? storage : "
      "\"(null)\");");
  w.line("(void)ptr; (void)bytes; (void)syms;");
  w.line("return why;");
  w.close();
}

/// sdfc's error hooks, DaCe's GPU hooks and the caller's-stream hook.
void FramePrinter::error_and_stream_hooks(CodeWriter& w) {
  // sdfc's hooks.
  w.line("/// Why the last __dace_init_ on this thread failed (\"\" after a successful one).");
  w.open("SDFC_EXPORT const char* __sdfc_init_error()");
  w.line("return __sdfc_init_failure;");
  w.close();
  w.line("/// The program's error; with a null handle, why the last init on this thread failed (or null).");
  w.open(fmt::format("SDFC_EXPORT const char* __sdfc_last_error({}* __state)", st));
  w.line("if (!__sdfc_handles.live(__state)) return __sdfc_init_failure[0] ? __sdfc_init_failure : nullptr;");
  if (gpu_) w.line(fmt::format("if ({0}.error.set) return {0}.error.message;", kCtx));
  w.line("return __state->__sdfc_error.set ? __state->__sdfc_error.message : nullptr;");
  w.close();
  w.open(fmt::format("SDFC_EXPORT void __sdfc_clear_error({}* __state)", st));
  w.line("if (!__sdfc_live(__state, \"__sdfc_clear_error\")) return;");
  w.line("__state->__sdfc_error = sdfc::rt::ErrorSlot();");
  if (gpu_) w.line(fmt::format("{}.error = sdfc::rt::ErrorSlot();", kCtx));
  w.close();
  if (gpu_) {
    w.raw(fill(kGpuHooks, {{"state", st}, {"ctx", kCtx}}));
  } else {
    w.line("/// A CPU program has no GPU work to order against a caller's stream: always rejected.");
    w.open(fmt::format("SDFC_EXPORT const char* __sdfc_set_external_stream({}* __state, void* stream)", st));
    w.line("(void)__state; (void)stream;");
    w.line(fmt::format(
        "return \"program {} was compiled for the CPU (--target cpu): it has no GPU work to order against a "
        "caller's stream; compile with --target cuda or hip\";",
        name_));
    w.close();
  }
}

/// The program info and the entry points taking arguments as arrays of pointers.
void FramePrinter::array_entry_points(CodeWriter& w) {
  w.line("/// The program's arguments as JSON (names, kinds, dtypes, shapes), for binding by name.");
  w.open("SDFC_EXPORT const char* __sdfc_program_info()");
  w.line(fmt::format("return {};", c_string(info)));
  w.close();
  w.line("/// Calls with arguments passed as an array of pointers to each value (DaCe's arglist order).");
  w.open("SDFC_EXPORT void* __sdfc_init(void** args)");
  std::vector<std::string> unpack_init;
  for (std::size_t i = 0; i < sig.init_symbols.size(); ++i)
    unpack_init.push_back(fmt::format("*static_cast<{}>(args[{}])", init_symbol_decl(sig.init_symbols[i], "*"), i));
  w.line(fmt::format("(void)args;"));
  if (!unpack_init.empty()) {
    w.open("if (!args)");
    w.line(
        "std::snprintf(__sdfc_init_failure, sizeof __sdfc_init_failure, \"__sdfc_init: the argument array is null\");");
    w.line("return nullptr;");
    w.close();
  }
  w.line(fmt::format("return __dace_init_{}({});", name_, fmt::join(unpack_init, ", ")));
  w.close();
  w.open("SDFC_EXPORT void __sdfc_call(void* state, void** args)");
  std::vector<std::string> unpack;
  for (std::size_t i = 0; i < sig.args.size(); ++i) {
    const Argument& a = sig.args[i];
    std::string t = a.callback ? callback_type(*a.callback, "**") : ctype(a.dtype) + (a.by_pointer ? "**" : "*");
    unpack.push_back(fmt::format("*static_cast<{}>(args[{}])", t, i));
  }
  w.line("(void)args;");
  if (!unpack.empty()) {
    // The handle first: the arguments of a finished or foreign handle are never read.
    w.line("if (!__sdfc_live(state, \"__sdfc_call\")) return;");
    w.open("if (!args)");
    w.line("sdfc::rt::record_error(static_cast<" + st +
           "*>(state)->__sdfc_error, \"__sdfc_call: the argument array is null\");");
    w.line("return;");
    w.close();
  }
  w.line(fmt::format("__program_{}(static_cast<{}*>(state){}{});", name_, st, unpack.empty() ? "" : ", ",
                     fmt::join(unpack, ", ")));
  w.close();
}

std::string FramePrinter::c_header() const {
  std::string storage_functions;
  for (auto& s : storages)
    storage_functions += fmt::format(
        "size_t __dace_get_external_memory_size_{0}({1}Handle_t handle{2}{3});\n"
        "void __dace_set_external_memory_{0}({1}Handle_t handle, char* ptr{2}{3});\n",
        s, name_, init_list.empty() ? "" : ", ", init_list);
  std::string cparams;
  for (auto& p : params) cparams += ", " + p;
  return fill(kCHeader, {{"name", name_},
                         {"init_params", init_params.empty() ? "void" : init_list},
                         {"params", cparams},
                         {"storage_functions", storage_functions}});
}

}  // namespace sdfc::codegen
