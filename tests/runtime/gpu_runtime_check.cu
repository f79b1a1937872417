// Compile test for the GPU runtime headers (sdfc/gpu.h, sdfc/gpu_portability.h): exercises every
// wrapper and macro once, the way generated CUDA/HIP host code uses them. It is compiled by
// tests/runtime/check_gpu_headers.sh with nvcc (sm_90) and hipcc (gfx90a, as HIP source); no GPU is
// needed for that. Built with -DSDFC_GPU_CHECK_MAIN it also links into a program that runs
// exercise() and prints the outcome: on a machine without a GPU it must report "no GPU device found".
#include "sdfc/gpu.h"
#include "sdfc/program.h"

namespace {

using namespace sdfc::gpu;

__global__ void scale_kernel(double* __restrict__ a, int n, double f) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] *= f;
}

// A program state the way generated code holds it.
struct check_state_t {
  Context gpu;
};

}  // namespace

// Returns 0 when everything succeeded, 1 when init reported that there is no device, 2 otherwise.
int exercise(const char** message) {
  static check_state_t state_storage;  // function-local: one instance for this test only
  check_state_t* __state = &state_storage;
  Context& ctx = __state->gpu;
  *message = "";

  // ---- init: 2 internal streams, 2 events
  if (!init(ctx, 2, 2)) {
    *message = ctx.error.message;
    return 1;
  }
  DeviceGuard guard(ctx);
  drain_pending_error();

  // ---- a caller's stream, validated and set
  Stream caller = nullptr;
  SDFC_GPU_CHECK(ctx, gpuStreamCreateWithFlags(&caller));
  if (const char* why = set_external_stream(ctx, caller)) {
    *message = why;
    return 2;
  }
  if (ctx.external_changed) sdfc::rt::record_error(ctx.error, "first external stream reported as a change");

  // ---- pool
  enable_pool(ctx, UINT64_MAX);

  const int n = 1000;
  const std::size_t bytes = n * sizeof(double);
  double* d_a = nullptr;
  double* d_b = nullptr;
  double* d_pooled = nullptr;
  double* h_pinned = nullptr;
  double h_pageable[n];
  for (int i = 0; i < n; ++i) h_pageable[i] = i;

  enter_call(ctx);

  if (!SDFC_GPU_CHECK(ctx, gpuMalloc(&d_a, bytes))) goto done;
  if (!SDFC_GPU_CHECK(&ctx, gpuMalloc(reinterpret_cast<void**>(&d_b), bytes))) goto done;
  SDFC_GPU_CHECK(ctx, gpuMallocAsync(&d_pooled, bytes, stream(ctx, 0)));
  SDFC_GPU_CHECK(ctx, gpuHostAlloc(&h_pinned, bytes));
  SDFC_GPU_CHECK(ctx, gpuMemcpyAsync(d_a, h_pageable, bytes, kMemcpyHostToDevice, stream(ctx, 0)));
  SDFC_GPU_CHECK(ctx, gpuMemsetAsync(d_b, 0, bytes, stream(ctx, 1)));

  // ---- kernel on stream 0, with the race-exposure delay and the launch check
  maybe_delay(ctx, stream(ctx, 0));
  scale_kernel<<<(n + 255) / 256, 256, 0, stream(ctx, 0)>>>(d_a, n, 2.0);
  SDFC_KERNEL_LAUNCH_CHECK(ctx, "scale_kernel");

  // ---- cross-stream ordering: stream 1 waits for stream 0
  SDFC_GPU_CHECK(ctx, gpuEventRecord(event(ctx, 0), stream(ctx, 0)));
  SDFC_GPU_CHECK(ctx, gpuStreamWaitEvent(stream(ctx, 1), event(ctx, 0)));
  SDFC_GPU_CHECK(ctx, gpuMemcpy2DAsync(d_b, 10 * sizeof(double), d_a, 10 * sizeof(double), 10 * sizeof(double), n / 10,
                                       kMemcpyDeviceToDevice, stream(ctx, 1)));
  SDFC_GPU_CHECK(ctx, gpuMemcpyAsync(d_pooled, d_b, bytes, kMemcpyDefault, stream(ctx, 1)));
  SDFC_GPU_CHECK(ctx, gpuMemcpyAsync(h_pinned, d_pooled, bytes, kMemcpyDeviceToHost, stream(ctx, 1)));
  SDFC_GPU_CHECK(ctx, gpuEventRecord(event(ctx, 1), stream(ctx, 1)));
  SDFC_GPU_CHECK(ctx, gpuEventSynchronize(event(ctx, 1)));  // host reader of h_pinned
  if (h_pinned[3] != 6.0) sdfc::rt::record_error(ctx.error, "wrong result %g", h_pinned[3]);
  SDFC_GPU_CHECK(ctx, gpuFreeAsync(d_pooled, stream(ctx, 1)));

  // ---- pointer classification
  {
    PointerInfo pi;
    SDFC_GPU_CHECK(ctx, pointer_info(d_a, &pi));
    if (pi.kind != MemoryKind::kDevice || pi.device != ctx.device)
      sdfc::rt::record_error(ctx.error, "device pointer classified as %s", memory_kind_name(pi.kind));
    SDFC_GPU_CHECK(ctx, pointer_info(h_pinned, &pi));
    if (pi.kind != MemoryKind::kHostPinned)
      sdfc::rt::record_error(ctx.error, "pinned pointer classified as %s", memory_kind_name(pi.kind));
    SDFC_GPU_CHECK(ctx, pointer_info(h_pageable, &pi));
    if (pi.kind != MemoryKind::kHostPageable)
      sdfc::rt::record_error(ctx.error, "pageable pointer classified as %s", memory_kind_name(pi.kind));
    PointerAttributes raw{};
    (void)gpuPointerGetAttributes(&raw, d_a);
    (void)gpuGetLastError();
  }

  exit_call(ctx);
  SDFC_GPU_CHECK(ctx, gpuStreamSynchronize(caller));  // the caller reads after syncing its stream
  {
    Error q = gpuStreamQuery(caller);  // not-ready is a state, not an error
    if (q != kNotReady) SDFC_GPU_CHECK(ctx, q);
  }

  // ---- a second call on another stream: ordered after the first through cross_call
  clear_external_stream(ctx);
  enter_call(ctx);
  SDFC_GPU_CHECK(ctx, gpuMemsetAsync(d_a, 0, bytes, stream(ctx, 0)));
  exit_call(ctx);

  // ---- DaCe compatibility entry points
  dace_gpu_set_stream(ctx, 1, caller);
  if (dace_gpu_set_stream(ctx, 7, caller)) sdfc::rt::record_error(ctx.error, "out-of-range stream id accepted");
  dace_gpu_set_all_streams(ctx, nullptr);
  (void)dace_gpu_last_error(ctx);

  // ---- everything else once
  {
    int dev = -1, count = 0;
    SDFC_GPU_CHECK(ctx, gpuGetDevice(&dev));
    SDFC_GPU_CHECK(ctx, gpuSetDevice(dev));
    SDFC_GPU_CHECK(ctx, gpuGetDeviceCount(&count));
    int sdev = -1;
    if (gpuStreamGetDevice(caller, &sdev) != kSuccess) (void)gpuGetLastError();
    bool capturing = false;
    SDFC_GPU_CHECK(ctx, gpuStreamIsCapturing(caller, &capturing));
    SDFC_GPU_CHECK(ctx, gpuEventQuery(event(ctx, 1)));
    const char* s = gpuGetErrorString(kSuccess);
    (void)s;
    MemPool pool = nullptr;
    SDFC_GPU_CHECK(ctx, gpuDeviceGetDefaultMemPool(&pool, dev));
    SDFC_GPU_CHECK(ctx, gpuMemPoolSetAttribute(pool, UINT64_MAX));
    SDFC_GPU_CHECK(ctx, gpuMemcpy(h_pageable, d_a, bytes, kMemcpyDeviceToHost));
    SDFC_GPU_CHECK(ctx, gpuDeviceSynchronize());
    Event e = nullptr;
    SDFC_GPU_CHECK(ctx, gpuEventCreateWithFlags(&e));
    SDFC_GPU_CHECK(ctx, gpuEventDestroy(e));
  }

done:
  SDFC_GPU_CHECK(ctx, gpuFree(d_a));
  SDFC_GPU_CHECK(ctx, gpuFree(d_b));
  if (h_pinned) SDFC_GPU_CHECK(ctx, gpuFreeHost(h_pinned));
  destroy(ctx);  // never destroys the caller's stream
  SDFC_GPU_CHECK(ctx, gpuStreamDestroy(caller));
  *message = ctx.error.message;
  return ctx.error.set ? 2 : 0;
}

#ifdef SDFC_GPU_CHECK_MAIN
#include <chrono>

// Runtime-only checks (need a GPU; CUDA only): a capturing stream is refused, single-stream mode
// runs on the external stream, and the delay kernel spins for about the requested time.
static int runtime_extras() {
#if defined(SDFC_CUDA)
  Context ctx;
  if (!init(ctx, 0, 0)) return 0;
  int bad = 0;
  Stream s = nullptr;
  SDFC_GPU_CHECK(ctx, gpuStreamCreateWithFlags(&s));
  cudaGraph_t graph = nullptr;
  SDFC_GPU_CHECK(ctx, cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
  const char* why = set_external_stream(ctx, s);
  SDFC_GPU_CHECK(ctx, cudaStreamEndCapture(s, &graph));
  if (graph) cudaGraphDestroy(graph);
  std::printf("capturing stream: %s\n", why ? why : "(accepted)");
  bad |= why == nullptr;
  why = set_external_stream(ctx, s);
  bad |= why != nullptr || stream(ctx, 3) != s;
  ctx.delay_us = 200000;  // what SDFC_GPU_DELAY_US=200000 would set
  SDFC_GPU_CHECK(ctx, delay_ticks_per_us(ctx.device, &ctx.delay_ticks_per_us));
  auto t0 = std::chrono::steady_clock::now();
  maybe_delay(ctx, stream(ctx, 0));
  SDFC_GPU_CHECK(ctx, gpuStreamSynchronize(s));
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("delay of 200 ms took %.1f ms\n", ms);
  bad |= ms < 190 || ms > 1000;
  enter_call(ctx);
  exit_call(ctx);
  int count = 0;
  SDFC_GPU_CHECK(ctx, gpuGetDeviceCount(&count));
  if (count >= 2) {  // a stream of another device is refused, by both detection routes
    int other = ctx.device == 0 ? 1 : 0;
    Stream foreign = nullptr;
    SDFC_GPU_CHECK(ctx, gpuSetDevice(other));
    SDFC_GPU_CHECK(ctx, gpuStreamCreateWithFlags(&foreign));
    SDFC_GPU_CHECK(ctx, gpuSetDevice(ctx.device));
    why = set_external_stream(ctx, foreign);
    std::printf("stream of device %d: %s\n", other, why ? why : "(accepted)");
    bad |= why == nullptr || ctx.external != s;
    Error probe = gpuEventRecord(ctx.sync_event, foreign);
    std::printf("event-record probe on it: %s\n", gpuGetErrorName(probe));
    (void)gpuGetLastError();
    bad |= probe == kSuccess;
    SDFC_GPU_CHECK(ctx, gpuStreamDestroy(foreign));
  }
  destroy(ctx);
  SDFC_GPU_CHECK(ctx, gpuStreamDestroy(s));
  if (ctx.error.set) std::printf("error: %s\n", ctx.error.message);
  return bad || ctx.error.set;
#else
  return 0;
#endif
}

int main() {
  const char* message = "";
  int rc = exercise(&message);
  std::printf("backend=%s rc=%d message=%s\n", kBackendName, rc, message);
  if (rc == 2) return 1;
  if (rc == 0 && runtime_extras() != 0) return 1;
  return 0;
}
#endif
