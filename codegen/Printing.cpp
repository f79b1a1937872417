// The shared printer of the code generator. See Printing.h.
#include "codegen/Printing.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "ir/Diagnostic.h"

namespace sdfc::codegen {

std::string ctype(DType t) {
  return std::string(dtype_ctype(t));
}

std::string callback_type(const Callback& cb, const std::string& declarator) {
  std::vector<std::string> params;
  auto value = [](const Callback::Value& v) { return ctype(v.dtype) + (v.array ? " const *" : ""); };
  for (auto& v : cb.arguments) params.push_back(value(v));
  if (!cb.returns_scalar())
    for (auto& v : cb.results) params.push_back(v.array ? value(v) : ctype(v.dtype) + " *");
  std::string result = cb.results.empty() || !cb.returns_scalar() ? "void" : ctype(cb.results[0].dtype);
  return fmt::format("{} ({})({})", result, declarator, fmt::join(params, ", "));
}

std::string sym(const Expr& e) {
  return print_cpp(simplify(e));
}

namespace {

/// Whether `e` multiplies (or raises to a power).
bool has_product(const Expr& e) {
  if (e->kind == ExprKind::Binary) {
    auto op = static_cast<BinOp>(e->op);
    if (op == BinOp::Pow || op == BinOp::LShift || op == BinOp::Mul) return true;
  }
  for (auto& a : e->args)
    if (has_product(a)) return true;
  return false;
}

}  // namespace

std::string wide_size(const Expr& e) {
  std::set<std::string> names;
  free_symbols(e, names);
  if (names.empty() || !has_product(simplify(e))) return fmt::format("static_cast<std::size_t>({})", sym(e));
  std::vector<std::string> params, args;
  for (auto& n : names) {
    params.push_back("std::int64_t " + ident(n));
    args.push_back(ident(n));
  }
  return fmt::format("[]({}) {{ return static_cast<std::size_t>({}); }}({})", fmt::join(params, ", "), sym(e),
                     fmt::join(args, ", "));
}

std::vector<Expr> starts(const Range& r) {
  std::vector<Expr> s;
  for (auto& d : r) s.push_back(d.start);
  return s;
}

std::string fill(std::string_view text, const std::vector<std::pair<std::string_view, std::string>>& values) {
  std::string out;
  std::size_t at = 0;
  for (std::size_t k; (k = text.find("${", at)) != std::string_view::npos;) {
    std::size_t end = text.find('}', k);
    SDFC_ASSERT(end != std::string_view::npos, "unterminated ${ in a code template");
    std::string_view key = text.substr(k + 2, end - k - 2);
    auto it = std::find_if(values.begin(), values.end(), [&](auto& v) { return v.first == key; });
    SDFC_ASSERT(it != values.end(), "unknown key in a code template: " + std::string(key));
    out.append(text.substr(at, k - at)).append(it->second);
    at = end + 1;
  }
  return out.append(text.substr(at));
}

std::string gpu_stream(int s) {
  return fmt::format("sdfc::gpu::stream({}, {})", kCtx, s);
}

std::string gpu_check(const std::string& call) {
  return fmt::format("SDFC_GPU_CHECK({}, {});", kCtx, call);
}

void host_waits(const std::vector<int>& streams, CodeWriter& w) {
  for (int s : streams)
    w.line(gpu_check(fmt::format("sdfc::gpu::gpuStreamSynchronize({})", gpu_stream(s))) +
           "  // synchronization pass: host waits");
}

void stream_waits(int stream, const std::vector<int>& events, CodeWriter& w, bool capture_aware) {
  for (int e : events)
    w.line((capture_aware ? fmt::format("sdfc::gpu::wait_event({}, {}, {});", kCtx, gpu_stream(stream), e)
                          : gpu_check(fmt::format("sdfc::gpu::gpuStreamWaitEvent({}, sdfc::gpu::event({}, {}))",
                                                  gpu_stream(stream), kCtx, e))) +
           "  // synchronization pass: event");
}

void stream_record(int stream, int event, CodeWriter& w, bool capture_aware) {
  if (event < 0) return;
  w.line((capture_aware ? fmt::format("sdfc::gpu::record_event({}, {}, {});", kCtx, event, gpu_stream(stream))
                        : gpu_check(fmt::format("sdfc::gpu::gpuEventRecord(sdfc::gpu::event({}, {}), {})", kCtx, event,
                                                gpu_stream(stream)))) +
         "  // synchronization pass: event");
}

}  // namespace sdfc::codegen
