/// \file
/// The small printer every emitter and the library frame share: C types, expressions and sizes as
/// C++ text, and the lines that print what the synchronization pass decided (host waits, events)
/// through the GPU runtime context `__state->__sdfc_gpu`. Nothing here decides anything.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/Expr.h"
#include "ir/Memlets.h"
#include "ir/SDFG.h"
#include "lang/CodeWriter.h"

namespace sdfc::codegen {

/// The runtime's GPU context in generated code (sdfc/gpu.h).
inline constexpr const char* kCtx = "__state->__sdfc_gpu";

std::string ctype(DType t);
/// The C type of a callback as DaCe's loader passes it (`dtypes.callback.as_arg`), around
/// `declarator`: "*f" declares the function pointer f, "*" is its type, "**" a pointer to it.
std::string callback_type(const Callback& cb, const std::string& declarator);
/// `e` simplified, as C++.
std::string sym(const Expr& e);
/// `e` (a size or offset in bytes) evaluated in 64 bits whatever the symbols' C types: a lambda
/// whose int64 parameters shadow the symbols, called with them (plain when `e` has no product of
/// symbols, where 32-bit symbols could overflow long before the sizes they describe do).
std::string wide_size(const Expr& e);

std::vector<Expr> starts(const Range& r);
inline Expr extent(const RangeDim& d) {
  return range_extent(d);
}

/// A code template filled in: every `${key}` of `text` becomes its value (an unknown key is an
/// internal error). The library frame's fixed parts are such templates, so that they read as the
/// C++ they print.
std::string fill(std::string_view text, const std::vector<std::pair<std::string_view, std::string>>& values);

/// `sdfc::gpu::stream(ctx, s)`: the stream a pass numbered `s`.
std::string gpu_stream(int s);
/// `SDFC_GPU_CHECK(ctx, call);`
std::string gpu_check(const std::string& call);
/// Prints the host waits a pass decided (one stream synchronization per stream).
void host_waits(const std::vector<int>& streams, CodeWriter& w);
/// Prints the events the synchronization pass decided: `stream` waits for `events` first.
/// `capture_aware` (graph mode: the call or its segments are captured): through the runtime's
/// capture-aware helpers.
void stream_waits(int stream, const std::vector<int>& events, CodeWriter& w, bool capture_aware = false);
/// ... and `stream` records `event` after the operation (nothing when -1).
void stream_record(int stream, int event, CodeWriter& w, bool capture_aware = false);

}  // namespace sdfc::codegen
