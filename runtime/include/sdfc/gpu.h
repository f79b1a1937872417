// The GPU part of the sdfc runtime (CUDA and HIP), header-only. Generated CUDA/HIP host code
// includes it after sdfc/program.h; it is compiled by nvcc or hipcc only (it holds device code).
//
// A program instance owns one `sdfc::gpu::Context`: the device it is bound to, its internal
// streams and events, the caller's external stream, the cross-call event, and its error state.
// There is no global state; two instances never share a stream, an event or an error. Everything
// is inline or static with hidden visibility (see gpu_portability.h), so many sdfc-built libraries
// live in one process.
//
// Stream model (DESIGN.md §1.3):
//   num_streams == 0  "single stream": all work runs on stream(ctx, i) == the external stream if one
//                     is set, else the legacy default stream (nullptr);
//   num_streams == N  N internal non-blocking streams, ordered against the anchor stream (the
//                     external stream if set, else the default stream) by events at entry
//                     (enter_call: the internal streams wait on the anchor) and exit (exit_call:
//                     the anchor waits on every internal stream).
//   Across calls the anchor records `cross_call` at exit; when the next call's anchor differs from
//   the stream the previous call ended on, enter_call makes the new anchor wait on it first, so a
//   caller that switches streams between calls never races the previous call's workspaces.
//   Without an external stream exit_call synchronizes the anchor (the call returns with its results
//   visible to the host); with one it returns once the work is queued (stream-ordered return).
//
// Which of these helpers run, and where, is the passes' decision (external-sync, synchronization);
// the generated code only calls them.
//
// Errors: SDFC_GPU_CHECK(ctx, call) and SDFC_KERNEL_LAUNCH_CHECK(ctx, name) record the first
// failure into ctx.error (message: call text, error name and string, file:line; first error wins
// for the instance's lifetime) and its raw code into ctx.last_code (first since the last
// dace_gpu_last_error(), which returns and clears it, like DaCe's __dace_gpu_last_error).
//
// One instance is not thread-safe. Functions that enqueue work expect the context's device to be
// current; the entry points do that with a DeviceGuard.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <vector>

#include "sdfc/gpu_portability.h"
#include "sdfc/program.h"

#pragma GCC visibility push(hidden)

namespace sdfc {
namespace gpu {
inline namespace SDFC_GPU_ABI_NAMESPACE {

/// Largest accepted SDFC_GPU_DELAY_US (10 s); larger values are clamped.
constexpr long long kMaxDelayUs = 10LL * 1000 * 1000;

/// Graph mode keeps up to this many instantiated graphs for a call (and for each graph segment),
/// each with the argument bytes it was captured with: a call replays the one whose bytes match, so
/// alternating between a few argument sets (buffers swapped every call) replays without capturing.
/// A miss captures into a free entry or, when all are taken, into the least recently replayed one
/// (updated in place where the topology allows, re-instantiated otherwise).
constexpr std::size_t kGraphCacheEntries = 4;

/// One instantiated graph and the argument bytes it was captured with.
struct CachedGraph {
  GraphExec exec = nullptr;
  std::vector<unsigned char> key;
  std::uint64_t used = 0;  ///< GraphCache::clock at its last capture or replay
};

/// The instantiated graphs of a call or of a graph segment (kGraphCacheEntries at most).
struct GraphCache {
  std::vector<CachedGraph> entries;
  std::uint64_t clock = 0;
  int captures = 0;  ///< captures that ended in this cache (instantiated or updated): tests count them
};

struct Context {
  int device = -1;                       ///< the device current at init; all work of the instance runs there
  bool initialized = false;              ///< init() succeeded (destroy() undoes it)
  int num_streams = 0;                   ///< 0 = single-stream mode
  std::vector<Stream> internal_streams;  ///< created and destroyed by the context (non-blocking)
  std::vector<Stream> streams;           ///< the handles work uses; streams[i] == internal_streams[i]
                                         ///< unless replaced through dace_gpu_set_stream; size max(1, N)
  std::vector<bool> stream_overridden;   ///< streams[i] was replaced through the DaCe API
  std::vector<Event> events;             ///< the passes' events, ids 0..num_events-1, created at init

  Stream external = nullptr;      ///< the caller's stream (nullptr = the legacy default stream)
  bool external_set = false;      ///< an external stream was set (stream-ordered return)
  bool external_changed = false;  ///< the anchor differs from the stream the previous call ended on

  Event cross_call = nullptr;  ///< recorded on the anchor at exit, waited on at entry when the anchor changed
  bool cross_call_recorded = false;
  Stream cross_call_stream = nullptr;  ///< where cross_call was last recorded
  Event sync_event = nullptr;          ///< scratch event: entry fork / exit join / stream validation

  bool pool_enabled = false;         ///< enable_pool() already ran
  long long delay_us = 0;            ///< SDFC_GPU_DELAY_US at init (0 = off)
  long long delay_ticks_per_us = 0;  ///< device clock ticks per microsecond (when delay_us > 0)

  // Graph mode (--gpu-graph): the call's GPU work is captured once from `graph_stream` and replayed.
  bool graph_mode = false;               ///< enable_graphs() ran
  Stream graph_stream = nullptr;         ///< the capture's origin stream (internal, non-blocking)
  bool capturing = false;                ///< between graph_begin and graph_end: work goes into the capture
  GraphCache graphs;                     ///< the call's graphs, by the argument bytes they were captured with
  std::vector<unsigned char> plain_key;  ///< the last argument bytes whose call did host work (no graph)
  bool plain_known = false;
  /// Graph segments (a call split at its host work): per segment id, its graphs.
  std::vector<GraphCache> segments;
  int capture_serial = 0;             ///< counts captures; 0 = none yet
  std::vector<int> event_capture;     ///< per event id: the capture its last record was in (0: none)
  char* held_arena = nullptr;         ///< graph mode: the call's arena, held between calls (held_arena())
  std::size_t held_arena_bytes = 0;   ///< its size
  std::vector<void*> retired_arenas;  ///< arenas outgrown while capturing: freed when the capture ends

  rt::ErrorSlot error;         ///< the first error (message), for the __sdfc_ last-error hook
  Error last_code = kSuccess;  ///< the raw code, for __dace_gpu_last_error

  Context() = default;
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
};

// ------------------------------------------------------------------------------------- errors
/// Records a failed runtime call into the context (first error wins) and clears the runtime's
/// last-error state, so a later launch check reports only its own launch.
inline void record_failure(Context& ctx, Error err, const char* what, const char* file, int line) {
  if (ctx.last_code == kSuccess) ctx.last_code = err;
  rt::record_error(ctx.error, "%s failed: %s (%s, code %d) at %s:%d", what, gpuGetErrorString(err),
                   gpuGetErrorName(err), static_cast<int>(err), file, line);
  (void)gpuGetLastError();
}

/// Records `msg` as the context's error (no runtime call involved); `code` goes to last_code.
inline void record_message(Context& ctx, Error code, const char* msg) {
  if (ctx.last_code == kSuccess) ctx.last_code = code;
  rt::record_error(ctx.error, "%s", msg);
}

inline bool check_call(Context& ctx, Error err, const char* what, const char* file, int line) {
  if (err == kSuccess) return true;
  record_failure(ctx, err, what, file, line);
  return false;
}
/// For generated code that holds the context by pointer; a null context only reports the result.
inline bool check_call(Context* ctx, Error err, const char* what, const char* file, int line) {
  if (err == kSuccess) return true;
  if (ctx) record_failure(*ctx, err, what, file, line);
  return false;
}

inline bool check_launch(Context& ctx, const char* kernel, const char* file, int line) {
  Error err = gpuGetLastError();
  if (err == kSuccess) return true;
  if (ctx.last_code == kSuccess) ctx.last_code = err;
  rt::record_error(ctx.error, "launch of kernel %s failed: %s (%s, code %d) at %s:%d", kernel, gpuGetErrorString(err),
                   gpuGetErrorName(err), static_cast<int>(err), file, line);
  return false;
}
inline bool check_launch(Context* ctx, const char* kernel, const char* file, int line) {
  if (ctx) return check_launch(*ctx, kernel, file, line);
  return gpuGetLastError() == kSuccess;
}

/// Discards an error left pending by code outside the program (DaCe's __dace_gpu_drain_error).
inline void drain_pending_error() {
  (void)gpuGetLastError();
}

}  // namespace SDFC_GPU_ABI_NAMESPACE
}  // namespace gpu
}  // namespace sdfc

/// Evaluates a runtime call; on failure records it into `ctx` (a Context& or Context*). Yields a
/// bool (true = success), so callers can bail out: `if (!SDFC_GPU_CHECK(ctx, ...)) return;`.
#define SDFC_GPU_CHECK(ctx, call) (::sdfc::gpu::check_call((ctx), (call), #call, __FILE__, __LINE__))

/// After a kernel launch: checks gpuGetLastError; `kernel_name` is a C string. Yields a bool.
#define SDFC_KERNEL_LAUNCH_CHECK(ctx, kernel_name) (::sdfc::gpu::check_launch((ctx), (kernel_name), __FILE__, __LINE__))

namespace sdfc {
namespace gpu {
inline namespace SDFC_GPU_ABI_NAMESPACE {

// ------------------------------------------------------------------------------------- device
/// Makes `device` current for the guard's lifetime (only switches when needed) and restores the
/// previous device afterwards. A failure to switch is recorded in the context; ok() says so.
class DeviceGuard {
 public:
  explicit DeviceGuard(Context& ctx) : DeviceGuard(ctx, ctx.device) {}
  DeviceGuard(Context& ctx, int device) {
    if (device < 0 || gpuGetDevice(&previous_) != kSuccess) {
      (void)gpuGetLastError();
      previous_ = -1;
      return;
    }
    if (previous_ != device) {
      ok_ = SDFC_GPU_CHECK(ctx, gpuSetDevice(device));
      switched_ = ok_;
    }
  }
  ~DeviceGuard() {
    if (switched_) (void)gpuSetDevice(previous_);
  }
  bool ok() const { return ok_; }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
  bool switched_ = false;
  bool ok_ = true;
};

// --------------------------------------------------------------------------------- workspaces
/// Whether `p` is memory a workspace of `storage` ("CPU_Heap", "CPU_Pinned", "GPU_Global") may
/// use: device (or managed) memory of the program's device for GPU_Global, pinned host memory for
/// CPU_Pinned, any host memory for CPU_Heap. Returns nullptr, or why not (in `why`).
inline const char* check_workspace_memory(const Context& ctx, const char* storage, const void* p, char* why,
                                          std::size_t size) {
  PointerInfo info;
  if (pointer_info(p, &info) != kSuccess) {
    (void)gpuGetLastError();
    std::snprintf(why, size, "the %s workspace at %p cannot be classified by the GPU runtime", storage, p);
    return why;
  }
  bool gpu = std::strcmp(storage, "GPU_Global") == 0, pinned = std::strcmp(storage, "CPU_Pinned") == 0;
  if (gpu && info.kind != MemoryKind::kDevice && info.kind != MemoryKind::kManaged) {
    std::snprintf(why, size,
                  "the GPU_Global workspace at %p is %s memory; it must be device memory (cudaMalloc/hipMalloc, "
                  "CuPy) of device %d",
                  p, memory_kind_name(info.kind), ctx.device);
    return why;
  }
  if (gpu && info.kind == MemoryKind::kDevice && info.device != ctx.device) {
    std::snprintf(why, size, "the GPU_Global workspace at %p is memory of device %d, but the program runs on device %d",
                  p, info.device, ctx.device);
    return why;
  }
  if (pinned && info.kind != MemoryKind::kHostPinned) {
    std::snprintf(why, size,
                  "the CPU_Pinned workspace at %p is %s memory; it must be pinned host memory "
                  "(cudaMallocHost/hipHostMalloc)",
                  p, memory_kind_name(info.kind));
    return why;
  }
  if (!gpu && info.kind == MemoryKind::kDevice) {
    std::snprintf(why, size, "the %s workspace at %p is device memory; it must be host memory", storage, p);
    return why;
  }
  return nullptr;
}

// ----------------------------------------------------------------------------------- streams
/// The stream the program's entry/exit ordering is anchored on: the external stream if set,
/// otherwise the legacy default stream.
inline Stream anchor_stream(const Context& ctx) {
  if (ctx.capturing) return ctx.graph_stream;  // graph mode: the capture's origin stands in for it
  if (ctx.external_set) return ctx.external;
  // Single-stream mode with stream 0 replaced through the DaCe API: the work runs there, so the
  // return waits for that stream (as DaCe's end-of-state synchronization does).
  if (ctx.num_streams == 0 && !ctx.stream_overridden.empty() && ctx.stream_overridden[0]) return ctx.streams[0];
  return nullptr;
}

/// The stream that work with logical stream id `i` runs on.
inline Stream stream(Context& ctx, int i) {
  if (ctx.capturing && ctx.num_streams == 0) return ctx.graph_stream;
  if (ctx.capturing && i >= 0 && i < ctx.num_streams) return ctx.internal_streams[i];  // never a replaced one
  if (ctx.num_streams == 0) {
    // Single-stream mode: the external stream wins; a handle set through the DaCe API
    // (dace_gpu_set_stream(ctx, 0, s)) is used otherwise.
    if (ctx.external_set) return ctx.external;
    return ctx.stream_overridden.empty() || !ctx.stream_overridden[0] ? nullptr : ctx.streams[0];
  }
  if (i < 0 || i >= ctx.num_streams) {
    record_message(ctx, kInvalidValue, "internal error: stream id out of range");
    return ctx.streams[0];
  }
  return ctx.streams[i];
}

/// The event with id `i` (created at init).
/// The call's graph cache and every segment's.
inline std::vector<GraphCache*> graph_caches(Context& ctx) {
  std::vector<GraphCache*> out{&ctx.graphs};
  for (auto& c : ctx.segments) out.push_back(&c);
  return out;
}

inline Event event(Context& ctx, int i) {
  if (i < 0 || i >= static_cast<int>(ctx.events.size())) {
    record_message(ctx, kInvalidValue, "internal error: event id out of range");
    return ctx.sync_event;
  }
  return ctx.events[i];
}

// ------------------------------------------------------------------------------ init / destroy
inline void destroy(Context& ctx);

/// Binds the context to the current device and creates `num_streams` internal streams
/// (non-blocking) and `num_events` events (timing disabled). Returns false (error recorded:
/// "no GPU device found" when the runtime reports none) on failure; the context is then empty.
inline bool init(Context& ctx, int num_streams, int num_events) {
  if (ctx.initialized) return true;
  if (num_streams < 0 || num_events < 0) {
    record_message(ctx, kInvalidValue, "invalid GPU context size (negative stream or event count)");
    return false;
  }
  int count = 0;
  Error err = gpuGetDeviceCount(&count);
  if (err != kSuccess || count <= 0) {
    if (ctx.last_code == kSuccess) ctx.last_code = err != kSuccess ? err : kNoDevice;
    if (err != kSuccess)
      rt::record_error(ctx.error, "no GPU device found (%s runtime: %s)", kBackendName, gpuGetErrorString(err));
    else
      rt::record_error(ctx.error, "no GPU device found");
    (void)gpuGetLastError();
    return false;
  }
  if (!SDFC_GPU_CHECK(ctx, gpuGetDevice(&ctx.device))) return false;

  ctx.num_streams = num_streams;
  bool ok = true;
  ctx.internal_streams.assign(static_cast<std::size_t>(num_streams), nullptr);
  for (int i = 0; i < num_streams && ok; ++i)
    ok = SDFC_GPU_CHECK(ctx, gpuStreamCreateWithFlags(&ctx.internal_streams[i]));
  ctx.streams.assign(num_streams > 0 ? static_cast<std::size_t>(num_streams) : 1u, nullptr);
  for (int i = 0; i < num_streams; ++i) ctx.streams[i] = ctx.internal_streams[i];
  ctx.stream_overridden.assign(ctx.streams.size(), false);
  ctx.events.assign(static_cast<std::size_t>(num_events), nullptr);
  for (int i = 0; i < num_events && ok; ++i) ok = SDFC_GPU_CHECK(ctx, gpuEventCreateWithFlags(&ctx.events[i]));
  if (ok) ok = SDFC_GPU_CHECK(ctx, gpuEventCreateWithFlags(&ctx.cross_call));
  if (ok) ok = SDFC_GPU_CHECK(ctx, gpuEventCreateWithFlags(&ctx.sync_event));

  ctx.delay_us = 0;
  if (const char* env = std::getenv("SDFC_GPU_DELAY_US")) {
    char* end = nullptr;
    long long us = std::strtoll(env, &end, 10);
    if (end != env && us > 0) ctx.delay_us = us > kMaxDelayUs ? kMaxDelayUs : us;
  }
  if (ok && ctx.delay_us > 0) ok = SDFC_GPU_CHECK(ctx, delay_ticks_per_us(ctx.device, &ctx.delay_ticks_per_us));

  if (!ok) {
    ctx.initialized = true;  // let destroy() release what was created
    destroy(ctx);
    return false;
  }
  ctx.initialized = true;
  return true;
}

/// Waits for everything the instance queued — its internal streams, and its last call's end (the
/// cross-call event, recorded on the stream the call ended on) — without touching a caller's
/// stream, which the caller may have destroyed by now (program exit frees memory after this).
inline bool wait_idle(Context& ctx) {
  if (!ctx.initialized) return true;
  bool ok = true;
  for (Stream s : ctx.internal_streams)
    if (s) ok = SDFC_GPU_CHECK(ctx, gpuStreamSynchronize(s)) && ok;
  if (ctx.cross_call && ctx.cross_call_recorded) ok = SDFC_GPU_CHECK(ctx, gpuEventSynchronize(ctx.cross_call)) && ok;
  return ok;
}

/// Waits for the instance's outstanding work (its internal streams, and its last call on the
/// anchor stream), then destroys the internal streams and all events. Never destroys or
/// synchronizes the caller's external stream as a whole. Errors are recorded; the context is
/// empty afterwards either way.
inline void destroy(Context& ctx) {
  if (!ctx.initialized) return;
  DeviceGuard guard(ctx);
  for (Stream s : ctx.internal_streams)
    if (s) SDFC_GPU_CHECK(ctx, gpuStreamSynchronize(s));
  if (ctx.cross_call && ctx.cross_call_recorded) SDFC_GPU_CHECK(ctx, gpuEventSynchronize(ctx.cross_call));
  for (Stream s : ctx.internal_streams)
    if (s) SDFC_GPU_CHECK(ctx, gpuStreamDestroy(s));
  for (GraphCache* c : graph_caches(ctx))
    for (auto& g : c->entries)
      if (g.exec) SDFC_GPU_CHECK(ctx, gpuGraphExecDestroy(g.exec));
  if (ctx.graph_stream) SDFC_GPU_CHECK(ctx, gpuStreamSynchronize(ctx.graph_stream));
  if (ctx.held_arena) SDFC_GPU_CHECK(ctx, gpuFree(ctx.held_arena));
  for (void* p : ctx.retired_arenas) SDFC_GPU_CHECK(ctx, gpuFree(p));
  ctx.held_arena = nullptr;
  ctx.held_arena_bytes = 0;
  ctx.retired_arenas.clear();
  if (ctx.graph_stream) SDFC_GPU_CHECK(ctx, gpuStreamDestroy(ctx.graph_stream));
  ctx.segments.clear();
  ctx.graphs = GraphCache{};
  ctx.graph_stream = nullptr;
  ctx.graph_mode = false;
  for (Event e : ctx.events)
    if (e) SDFC_GPU_CHECK(ctx, gpuEventDestroy(e));
  if (ctx.cross_call) SDFC_GPU_CHECK(ctx, gpuEventDestroy(ctx.cross_call));
  if (ctx.sync_event) SDFC_GPU_CHECK(ctx, gpuEventDestroy(ctx.sync_event));
  ctx.internal_streams.clear();
  ctx.streams.clear();
  ctx.stream_overridden.clear();
  ctx.events.clear();
  ctx.cross_call = ctx.sync_event = nullptr;
  ctx.cross_call_recorded = false;
  ctx.cross_call_stream = nullptr;
  ctx.external = nullptr;
  ctx.external_set = ctx.external_changed = false;
  ctx.num_streams = 0;
  ctx.initialized = false;
}

// ----------------------------------------------------------------------------- external stream
/// Sets the caller's stream. Validates it first: it must not be under graph capture, a query must
/// answer success or not-ready, and it must belong to the context's device (cudaStreamGetDevice
/// where available — CUDA >= 12.8 —, and everywhere by recording the context's scratch event into
/// it, which the runtime refuses for a stream of another device). Returns nullptr on success, or a
/// message for the caller; on failure nothing changes and no error is recorded in the context.
/// Updates `external_changed`: whether the new stream differs from the stream the previous call
/// ended on. nullptr selects the legacy default stream as external stream (no validation needed).
inline const char* set_external_stream(Context& ctx, Stream s) {
  if (!ctx.initialized) return "the GPU context is not initialized";
  DeviceGuard guard(ctx);
  if (!guard.ok()) return "cannot make the program's device current";
  if (s != nullptr) {
    bool capturing = false;
    Error err = gpuStreamIsCapturing(s, &capturing);
    if (err != kSuccess) {
      (void)gpuGetLastError();
      return "invalid stream: the runtime cannot query its capture status";
    }
    if (capturing) return "the stream is being captured into a graph; graph capture is not supported";
    err = gpuStreamQuery(s);
    if (err != kSuccess && err != kNotReady) {
      (void)gpuGetLastError();
      return "invalid stream: querying it failed (neither success nor not-ready)";
    }
    (void)gpuGetLastError();  // not-ready is not an error; keep the last-error state clean
    int dev = -1;
    if (gpuStreamGetDevice(s, &dev) == kSuccess) {
      if (dev != ctx.device) return "the stream belongs to another device than the one the program was initialized on";
    } else {
      (void)gpuGetLastError();
    }
    err = gpuEventRecord(ctx.sync_event, s);
    if (err != kSuccess) {
      (void)gpuGetLastError();
      return "the stream belongs to another device than the one the program was initialized on (or is invalid)";
    }
  }
  ctx.external = s;
  ctx.external_set = true;
  ctx.external_changed = ctx.cross_call_recorded && ctx.cross_call_stream != s;
  return nullptr;
}

/// Returns to "no external stream": the anchor is the default stream and calls return with their
/// results visible to the host.
inline void clear_external_stream(Context& ctx) {
  ctx.external = nullptr;
  ctx.external_set = false;
  ctx.external_changed = ctx.cross_call_recorded && ctx.cross_call_stream != nullptr;
}

// ------------------------------------------------------------------------- entry / exit ordering
/// If the anchor differs from the stream the previous call ended on, the anchor waits on that
/// call's cross_call event.
inline bool order_after_previous_call(Context& ctx) {
  if (ctx.capturing) return true;  // graph mode: done where the graph is launched
  Stream anchor = anchor_stream(ctx);
  bool ok = true;
  if (ctx.cross_call_recorded && ctx.cross_call_stream != anchor)
    ok = SDFC_GPU_CHECK(ctx, gpuStreamWaitEvent(anchor, ctx.cross_call));
  ctx.external_changed = false;
  return ok;
}

/// Every internal stream waits on the anchor (work queued there so far). No-op in single-stream mode.
inline bool fork_internal_streams(Context& ctx) {
  if (ctx.num_streams == 0) return true;
  Stream anchor = anchor_stream(ctx);
  if (!SDFC_GPU_CHECK(ctx, gpuEventRecord(ctx.sync_event, anchor))) return false;
  bool ok = true;
  for (Stream s : ctx.streams)
    if (s != anchor) ok = SDFC_GPU_CHECK(ctx, gpuStreamWaitEvent(s, ctx.sync_event)) && ok;
  return ok;
}

/// The anchor waits on every internal stream. No-op in single-stream mode.
inline bool join_internal_streams(Context& ctx) {
  if (ctx.num_streams == 0) return true;
  Stream anchor = anchor_stream(ctx);
  bool ok = true;
  for (Stream s : ctx.streams) {
    if (s == anchor) continue;
    // One scratch event suffices: a wait captures the event's most recent record at enqueue time.
    ok = SDFC_GPU_CHECK(ctx, gpuEventRecord(ctx.sync_event, s)) &&
         SDFC_GPU_CHECK(ctx, gpuStreamWaitEvent(anchor, ctx.sync_event)) && ok;
  }
  return ok;
}

/// The end of a call, after its work was joined into the anchor: with an external stream, records
/// cross_call there (the next call on another stream waits for it); without one the host waits for
/// the anchor, so the call's work is finished and the next call needs no event.
inline bool end_call(Context& ctx) {
  Stream anchor = anchor_stream(ctx);
  if (!ctx.external_set) {
    ctx.cross_call_recorded = false;
    return SDFC_GPU_CHECK(ctx, gpuStreamSynchronize(anchor));
  }
  if (!SDFC_GPU_CHECK(ctx, gpuEventRecord(ctx.cross_call, anchor))) return false;
  ctx.cross_call_recorded = true;
  ctx.cross_call_stream = anchor;
  return true;
}

/// Program entry: drain a foreign pending error, order after the previous call, fork.
inline bool enter_call(Context& ctx) {
  drain_pending_error();
  bool ok = order_after_previous_call(ctx);
  return fork_internal_streams(ctx) && ok;
}

/// Program exit: join, record cross_call, and — without an external stream — wait for the anchor
/// so the results are visible to the host on return.
inline bool exit_call(Context& ctx) {
  bool ok = join_internal_streams(ctx);
  if (ctx.capturing) return ok;  // graph mode: the rest happens where the graph is launched
  return end_call(ctx) && ok;
}

// ------------------------------------------------- entry / exit of the streams a program uses
// What the external-sync pass decided: only the internal streams the program uses are forked from
// and joined into the anchor (the caller's stream, or the default stream).

/// Each of the `count` streams `ids` waits on the anchor (the work queued there so far, and
/// through it the previous call).
inline bool fork_streams(Context& ctx, const int* ids, std::size_t count) {
  if (ctx.num_streams == 0 || count == 0) return true;
  Stream anchor = anchor_stream(ctx);
  if (!SDFC_GPU_CHECK(ctx, gpuEventRecord(ctx.sync_event, anchor))) return false;
  bool ok = true;
  for (std::size_t k = 0; k < count; ++k) {
    Stream s = stream(ctx, ids[k]);
    if (s != anchor) ok = SDFC_GPU_CHECK(ctx, gpuStreamWaitEvent(s, ctx.sync_event)) && ok;
  }
  return ok;
}
inline bool fork_streams(Context& ctx, std::initializer_list<int> ids) {
  return fork_streams(ctx, ids.begin(), ids.size());
}

/// The anchor waits on each of the `count` streams `ids` (each records the scratch event; a wait
/// captures the record made just before it).
inline bool join_streams(Context& ctx, const int* ids, std::size_t count) {
  if (ctx.num_streams == 0) return true;
  Stream anchor = anchor_stream(ctx);
  bool ok = true;
  for (std::size_t k = 0; k < count; ++k) {
    Stream s = stream(ctx, ids[k]);
    if (s == anchor) continue;
    ok = SDFC_GPU_CHECK(ctx, gpuEventRecord(ctx.sync_event, s)) &&
         SDFC_GPU_CHECK(ctx, gpuStreamWaitEvent(anchor, ctx.sync_event)) && ok;
  }
  return ok;
}
inline bool join_streams(Context& ctx, std::initializer_list<int> ids) {
  return join_streams(ctx, ids.begin(), ids.size());
}

/// Program entry: drain a foreign pending error, order after the previous call (when the caller's
/// stream changed), fork the streams the program uses.
inline bool enter_call(Context& ctx, std::initializer_list<int> ids) {
  drain_pending_error();
  bool ok = order_after_previous_call(ctx);
  return fork_streams(ctx, ids) && ok;
}

/// Program exit: join the streams the program uses, then end_call: with an external stream record
/// the cross-call event on it; without one wait for the anchor (results visible to the host).
inline bool exit_call(Context& ctx, std::initializer_list<int> ids) {
  bool ok = join_streams(ctx, ids);
  if (ctx.capturing) return ok;  // graph mode: the rest happens where the graph is launched
  return end_call(ctx) && ok;
}

// ----------------------------------------------------------------------------------------- pool
/// Sets the release threshold of the device's default memory pool (once per context). The default
/// pool is shared by the whole process: the threshold is only ever raised, never lowered below
/// what another user set. Fails (error recorded) on devices without memory-pool support.
inline bool enable_pool(Context& ctx, std::uint64_t release_threshold) {
  if (ctx.pool_enabled) return true;
  bool supported = false;
  if (!SDFC_GPU_CHECK(ctx, gpuDeviceSupportsMemoryPools(ctx.device, &supported))) return false;
  if (!supported) {
    record_message(ctx, kNotSupported, "the GPU does not support stream-ordered memory pools");
    return false;
  }
  MemPool pool = nullptr;
  if (!SDFC_GPU_CHECK(ctx, gpuDeviceGetDefaultMemPool(&pool, ctx.device))) return false;
  std::uint64_t current = 0;
  if (!SDFC_GPU_CHECK(ctx, gpuMemPoolGetReleaseThreshold(pool, &current))) return false;
  if (current < release_threshold && !SDFC_GPU_CHECK(ctx, gpuMemPoolSetAttribute(pool, release_threshold)))
    return false;
  ctx.pool_enabled = true;
  return true;
}

// ------------------------------------------------------------------------------------ graphs
// Graph mode (--gpu-graph; the gpu-graph pass decided the program has no host work between its GPU
// operations). A call whose argument bytes (pointers, scalars, symbols, external workspaces) equal
// the last capture's replays that graph: it is launched on the anchor stream, ordered after the
// previous call and before the return exactly as a plain call's work is. Otherwise the call runs
// its host code once with every stream in capture mode (nothing executes): graph_stream is the
// origin, the internal streams join through the usual fork events; the captured graph then
// replaces the cached one, updated in place when the runtime can (same topology: new pointers or
// sizes of the same kernels), re-instantiated otherwise. Up to kGraphCacheEntries graphs per call
// (and per segment), by argument bytes: alternating between a few argument sets replays them all.

/// One argument's bytes, as the generated code lists them for the key.
struct GraphArg {
  const void* p;
  std::size_t bytes;
};

/// Thrown where a capturing call reaches host work a replay would skip (a conditional branch the
/// gpu-graph pass marked): the call abandons its capture and runs without a graph.
struct CaptureAbandoned {};

inline void abandon_capture_here(const Context& ctx) {
  if (ctx.capturing) throw CaptureAbandoned{};
}

inline bool same_key(const std::vector<unsigned char>& key, const GraphArg* args, std::size_t n) {
  std::size_t at = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (at + args[i].bytes > key.size() || std::memcmp(key.data() + at, args[i].p, args[i].bytes) != 0) return false;
    at += args[i].bytes;
  }
  return at == key.size();
}

inline void store_key(std::vector<unsigned char>& key, const GraphArg* args, std::size_t n) {
  key.clear();
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char* b = static_cast<const unsigned char*>(args[i].p);
    key.insert(key.end(), b, b + args[i].bytes);
  }
}

/// How many captures ended in the instance's graph caches (the call's and every segment's).
inline int graph_captures(Context& ctx) {
  int n = 0;
  for (GraphCache* c : graph_caches(ctx)) n += c->captures;
  return n;
}

/// Creates the capture's origin stream (once); init calls it for graph-mode programs.
inline bool enable_graphs(Context& ctx) {
  if (ctx.graph_mode) return true;
  if (!SDFC_GPU_CHECK(ctx, gpuStreamCreateWithFlags(&ctx.graph_stream))) return false;
  ctx.graph_mode = true;
  return true;
}

/// The cached graph captured with these argument bytes (now the most recently used), or null.
inline CachedGraph* cached_graph(GraphCache& c, const GraphArg* args, std::size_t n) {
  for (auto& g : c.entries)
    if (g.exec && same_key(g.key, args, n)) {
      g.used = ++c.clock;
      return &g;
    }
  return nullptr;
}

/// The entry a new capture goes into: a free one, a new one while there are fewer than
/// kGraphCacheEntries, else the least recently used (its graph is updated or replaced).
inline CachedGraph& graph_slot(GraphCache& c) {
  for (auto& g : c.entries)
    if (!g.exec) return g;
  if (c.entries.size() < kGraphCacheEntries) return c.entries.emplace_back();
  return *std::min_element(c.entries.begin(), c.entries.end(),
                           [](const CachedGraph& a, const CachedGraph& b) { return a.used < b.used; });
}

/// True when the last call with these argument bytes did host work: this call runs without a
/// graph too, without trying to capture.
inline bool graph_plain(const Context& ctx, const GraphArg* args, std::size_t n) {
  return ctx.plain_known && same_key(ctx.plain_key, args, n);
}

/// Launches a cached graph as the call's work: after the previous call, on the anchor; then the
/// call's end (cross-call event; without an external stream, the host waits).
inline bool graph_launch(Context& ctx, GraphExec exec) {
  bool ok = order_after_previous_call(ctx);
  Stream anchor = anchor_stream(ctx);
  ok = SDFC_GPU_CHECK(ctx, gpuGraphLaunch(exec, anchor)) && ok;
  return end_call(ctx) && ok;
}

/// The call's start in graph mode: true when the cached graph was replayed (the call is done);
/// false when the caller must run the program's host code, which then captures (graph_end ends it).
inline bool graph_replay(Context& ctx, const GraphArg* args, std::size_t n) {
  CachedGraph* g = cached_graph(ctx.graphs, args, n);
  if (!g) return false;
  drain_pending_error();
  graph_launch(ctx, g->exec);
  return true;
}

/// Starts capturing the call's work on graph_stream. False (error recorded) when it cannot.
inline bool graph_begin(Context& ctx) {
  drain_pending_error();
  if (!SDFC_GPU_CHECK(ctx, gpuStreamBeginCapture(ctx.graph_stream))) return false;
  ctx.capturing = true;
  ++ctx.capture_serial;
  return true;
}

/// Joins every internal stream still in the capture into graph_stream and ends the capture.
inline bool end_capture(Context& ctx, Graph* graph) {
  bool ok = true;
  for (Stream s : ctx.internal_streams) {
    bool in_capture = false;
    if (s && gpuStreamIsCapturing(s, &in_capture) == kSuccess && in_capture)
      ok = SDFC_GPU_CHECK(ctx, gpuEventRecord(ctx.sync_event, s)) &&
           SDFC_GPU_CHECK(ctx, gpuStreamWaitEvent(ctx.graph_stream, ctx.sync_event)) && ok;
  }
  ok = SDFC_GPU_CHECK(ctx, gpuStreamEndCapture(ctx.graph_stream, graph)) && ok;
  ctx.capturing = false;
  for (void* p : ctx.retired_arenas) ok = SDFC_GPU_CHECK(ctx, gpuFree(p)) && ok;  // waits for earlier calls
  ctx.retired_arenas.clear();
  return ok;
}

/// Forgets every cached graph (their kernels point into memory that is about to be freed).
inline void drop_graphs(Context& ctx) {
  for (GraphCache* c : graph_caches(ctx)) {
    for (auto& g : c->entries)
      if (g.exec) (void)gpuGraphExecDestroy(g.exec);  // freed when its launches finish
    c->entries.clear();
  }
}

/// Makes `exec` run `graph`: an in-place update where the runtime accepts it (same topology),
/// else a fresh instantiation. False (error recorded) when neither works.
inline bool update_or_instantiate(Context& ctx, GraphExec& exec, Graph graph) {
  if (exec && gpuGraphExecUpdate(exec, graph) == kSuccess) return true;
  (void)gpuGetLastError();  // a refused update is not an error: instantiate instead
  if (exec) (void)gpuGraphExecDestroy(exec);
  exec = nullptr;
  return SDFC_GPU_CHECK(ctx, gpuGraphInstantiate(&exec, graph));
}

/// Graph mode: the call's arena of `bytes`, held by the instance between calls so that captured
/// kernels keep valid pointers (and the graph holds no memory nodes). Grows when the symbols need
/// more: the old arena is freed (while capturing: once the capture ends; cudaFree waits for the
/// work queued before it) and every cached graph is dropped. Null (error recorded) on failure.
inline char* held_arena(Context& ctx, std::size_t bytes) {
  bytes = bytes ? bytes : 1;
  if (ctx.held_arena && bytes <= ctx.held_arena_bytes) return ctx.held_arena;
  drop_graphs(ctx);
  if (ctx.held_arena) {
    if (ctx.capturing)
      ctx.retired_arenas.push_back(ctx.held_arena);
    else
      SDFC_GPU_CHECK(ctx, gpuFree(ctx.held_arena));
  }
  ctx.held_arena = nullptr;
  ctx.held_arena_bytes = 0;
  void* p = nullptr;
  if (!SDFC_GPU_CHECK(ctx, gpuMalloc(&p, bytes))) return nullptr;
  ctx.held_arena = static_cast<char*>(p);
  ctx.held_arena_bytes = bytes;
  return ctx.held_arena;
}

/// The capture reached host work (CaptureAbandoned): it is ended and discarded, and these argument
/// bytes are remembered as needing a call without a graph. The caller then runs the call plainly.
inline void graph_abandon(Context& ctx, const GraphArg* args, std::size_t n) {
  Graph graph = nullptr;
  if (end_capture(ctx, &graph) && graph) (void)gpuGraphDestroy(graph);
  (void)gpuGetLastError();
  store_key(ctx.plain_key, args, n);
  ctx.plain_known = true;
}

/// Ends a capture into `cache` (graph_slot): on success returns the graph that runs it (updated in
/// place, or instantiated), cached with the argument bytes; null when the capture or the host code
/// (`failed`) stopped with an error, or was abandoned: the capture is discarded (the cache keeps
/// the graphs of other argument bytes), so the next call with these bytes captures afresh.
inline GraphExec finish_capture(Context& ctx, GraphCache& cache, const GraphArg* args, std::size_t n, bool failed) {
  Graph graph = nullptr;
  bool ok = end_capture(ctx, &graph);
  if (ok && !failed && !ctx.error.set) {
    CachedGraph& slot = graph_slot(cache);
    slot.key.clear();
    ok = update_or_instantiate(ctx, slot.exec, graph);
    (void)gpuGraphDestroy(graph);
    if (!ok) return nullptr;
    store_key(slot.key, args, n);
    slot.used = ++cache.clock;
    ++cache.captures;
    return slot.exec;
  }
  if (graph) (void)gpuGraphDestroy(graph);
  (void)gpuGetLastError();
  return nullptr;
}

/// Ends the call's capture: the graph becomes the cached one with the call's key and is launched
/// as the call's work. `failed`: the host code stopped with an error; then nothing is launched and
/// the cached graph is dropped.
inline bool graph_end(Context& ctx, const GraphArg* args, std::size_t n, bool failed) {
  GraphExec exec = finish_capture(ctx, ctx.graphs, args, n, failed);
  return exec && graph_launch(ctx, exec);
}

// ------------------------------------------------------------------------------ graph segments
// A call the gpu-graph pass split at its host work (host tasklets, host copies, host waits,
// control flow reading data): each graph segment (a state, loop, region or branch body without
// such work) is captured once and replayed while its key (the call's arguments, the symbols the
// program assigns, the root's host scalars and per-call pointers) stays the same; the rest runs
// as without --gpu-graph. At a segment's start the caller's stream (or the default stream: the
// anchor) waits for the internal streams (join), the segment's graph runs on the anchor, and the
// internal streams wait for it at its end (fork), so the plain work before and after is ordered
// with it. Events recorded on one side of a segment boundary and waited on the other are ordered
// by that join and fork: record_event/wait_event skip such waits (a capture cannot wait for an
// event recorded outside it).

/// Records event `id` on `s`, remembering whether it was recorded in a capture (which one).
inline bool record_event(Context& ctx, int id, Stream s) {
  if (ctx.event_capture.size() <= static_cast<std::size_t>(id) && id >= 0)
    ctx.event_capture.resize(static_cast<std::size_t>(id) + 1, 0);
  bool ok = SDFC_GPU_CHECK(ctx, gpuEventRecord(event(ctx, id), s));
  if (id >= 0) ctx.event_capture[static_cast<std::size_t>(id)] = ctx.capturing ? ctx.capture_serial : 0;
  return ok;
}

/// `s` waits for event `id`, unless its last record was on the other side of a segment boundary
/// (ordered there already).
inline bool wait_event(Context& ctx, Stream s, int id) {
  int recorded = id >= 0 && static_cast<std::size_t>(id) < ctx.event_capture.size()
                     ? ctx.event_capture[static_cast<std::size_t>(id)]
                     : 0;
  if (recorded != (ctx.capturing ? ctx.capture_serial : 0)) return true;
  return SDFC_GPU_CHECK(ctx, gpuStreamWaitEvent(s, event(ctx, id)));
}

/// One graph segment of a call. The constructor joins the internal streams `ids` into the anchor;
/// then it replays the segment's graph when the key matches (run() is false: the host code of the
/// segment is skipped) or starts capturing (run() is true: the host code runs, queueing into the
/// capture; finish() ends it). If the capture cannot start, the segment runs without a graph.
class Segment {
 public:
  /// `ids`/`count`: the internal streams the program uses (they outlive the segment).
  Segment(Context& ctx, int id, const GraphArg* args, std::size_t n, const int* ids, std::size_t count)
      : ctx_(ctx), id_(id), args_(args), n_(n), ids_(ids), count_(count) {
    if (ctx.segments.size() <= static_cast<std::size_t>(id)) ctx.segments.resize(static_cast<std::size_t>(id) + 1);
    join_streams(ctx, ids, count);
    if (CachedGraph* g = cached_graph(ctx.segments[static_cast<std::size_t>(id)], args, n)) {
      SDFC_GPU_CHECK(ctx, gpuGraphLaunch(g->exec, anchor_stream(ctx)));
      fork_streams(ctx, ids, count);
      return;
    }
    run_ = true;
    if (!graph_begin(ctx)) return;  // error recorded: the segment runs without a graph
    capturing_ = true;
    fork_streams(ctx, ids, count);  // capturing: the internal streams join the capture
  }
  Segment(const Segment&) = delete;
  Segment& operator=(const Segment&) = delete;

  /// Whether the segment's host code must run (capturing, or without a graph).
  bool run() const { return run_; }

  /// Ends the capture: the graph replaces the segment's cached one (updated or instantiated) and
  /// runs on the anchor; the internal streams then wait for it. `failed`: the host code stopped
  /// with an error (nothing is launched, the cached graph is dropped).
  void finish(bool failed) {
    if (!capturing_) {
      if (run_) fork_streams(ctx_, ids_, count_);
      return;
    }
    capturing_ = false;
    GraphExec exec = finish_capture(ctx_, ctx_.segments[static_cast<std::size_t>(id_)], args_, n_, failed);
    if (!exec) return;
    SDFC_GPU_CHECK(ctx_, gpuGraphLaunch(exec, anchor_stream(ctx_)));
    fork_streams(ctx_, ids_, count_);
  }

  /// An unfinished capture (the host code returned or threw) is ended and discarded.
  ~Segment() {
    if (!capturing_) return;
    (void)finish_capture(ctx_, ctx_.segments[static_cast<std::size_t>(id_)], args_, n_, /*failed=*/true);
  }

 private:
  Context& ctx_;
  int id_;
  const GraphArg* args_;
  std::size_t n_;
  const int* ids_;
  std::size_t count_;
  bool run_ = false;
  bool capturing_ = false;
};

// ------------------------------------------------------------------------------ DaCe compatibility
/// __dace_gpu_last_error: returns the recorded code and clears it.
inline int dace_gpu_last_error(Context& ctx) {
  int code = static_cast<int>(ctx.last_code);
  ctx.last_code = kSuccess;
  return code;
}

/// __dace_gpu_set_stream: replaces the handle used for stream id `id` (bounds-checked); the
/// internal stream stays owned by the context. In single-stream mode id 0 is the only slot, and an
/// external stream set through set_external_stream takes precedence over it.
inline bool dace_gpu_set_stream(Context& ctx, int id, Stream s) {
  if (!ctx.initialized || id < 0 || id >= static_cast<int>(ctx.streams.size())) return false;
  ctx.streams[id] = s;
  ctx.stream_overridden[id] = true;
  return true;
}

/// __dace_gpu_set_all_streams.
inline void dace_gpu_set_all_streams(Context& ctx, Stream s) {
  for (std::size_t i = 0; i < ctx.streams.size(); ++i) {
    ctx.streams[i] = s;
    ctx.stream_overridden[i] = true;
  }
}

// ------------------------------------------------------------------------------ race exposure
/// Debug aid: when SDFC_GPU_DELAY_US was positive at init, queues a one-thread kernel on `s` that
/// spins for that many microseconds, so missing synchronization shows up as wrong results.
/// `spin` launches that kernel (a generated program's __sdfc_gpu_spin, in its device source, so
/// that a host source compiled by the host compiler can queue it too).
inline bool maybe_delay(Context& ctx, Stream s, void (*spin)(Stream, long long)) {
  if (ctx.delay_us <= 0) return true;
  spin(s, ctx.delay_us * ctx.delay_ticks_per_us);
  return SDFC_KERNEL_LAUNCH_CHECK(ctx, "sdfc_gpu_spin_kernel");
}
#if defined(__CUDACC__) || defined(__HIPCC__)
inline bool maybe_delay(Context& ctx, Stream s) {
  return maybe_delay(ctx, s, launch_spin);
}
#endif

}  // namespace SDFC_GPU_ABI_NAMESPACE
}  // namespace gpu
}  // namespace sdfc

#pragma GCC visibility pop
