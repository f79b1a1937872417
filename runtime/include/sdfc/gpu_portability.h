// The CUDA/HIP portability layer of the sdfc GPU runtime: the one place where the CUDA and HIP code
// paths differ. Everything above this header (sdfc/gpu.h, generated host code) is written once
// against the names defined here.
//
// Backend selection: HIP when compiled by hipcc (__HIPCC__), when HIP's platform macro is set
// (__HIP_PLATFORM_AMD__), or when SDFC_HIP is defined; the CUDA runtime API (cudart) otherwise.
// Only runtime-API calls are used, never the driver API, so a program loads on a machine without a
// GPU and reports "no device" through the first call that needs one.
//
// Names (namespace sdfc::gpu):
//   types      Stream, Event, Error, MemPool, Graph, GraphExec, PointerAttributes, MemcpyKind
//   constants  kSuccess, kNotReady, kBackendName, kMemcpyHostToHost, kMemcpyHostToDevice,
//              kMemcpyDeviceToHost, kMemcpyDeviceToDevice, kMemcpyDefault
//   wrappers   one inline function per runtime call, named gpu<Call> (gpuMalloc, gpuMemcpyAsync, ...);
//              the pointer-taking allocators also accept typed pointers (T**)
//   decoding   pointer_info() (device / pinned host / pageable host / managed, and the device ordinal)
//   device     spin_for_ticks() and delay_ticks_per_us(): the race-exposure delay kernel's clock
//
// HIP 5.2 (Debian's hipcc) is the oldest HIP this must compile against; every call used here
// exists there. Known differences, handled here:
//   - no hipStreamGetDevice: gpuStreamGetDevice() returns kNotSupported on HIP (and on CUDA before
//     12.8, where cudaStreamGetDevice does not exist); gpu.h finds a stream's device otherwise;
//   - hipPointerGetAttributes fails (hipErrorInvalidValue) on unregistered host memory, where CUDA
//     reports cudaMemoryTypeUnregistered; its attribute struct has `memoryType` + `isManaged` before
//     HIP 6 and `type` since; pointer_info() hides both;
//   - pinned host memory is hipHostMalloc/hipHostFree (hipHostAlloc/hipFreeHost are deprecated);
//   - the device wall clock: %globaltimer (ns) on NVIDIA, wall_clock64() on AMD, whose rate is a
//     device attribute only since HIP 6 (HIP 5: assumed 100 MHz, the MI100/MI200/MI300 rate).
//
// Everything is inline or static and has hidden visibility; the inline namespace differs between
// backends, so a CUDA-built and a HIP-built program linked into one process never share a symbol.
#pragma once

#include <cstddef>
#include <cstdint>

#if defined(__HIPCC__) || defined(__HIP_PLATFORM_AMD__) || defined(SDFC_HIP)
#ifndef SDFC_HIP
#define SDFC_HIP 1
#endif
#include <hip/hip_runtime.h>
#define SDFC_GPU_ABI_NAMESPACE hip_v1
#else
#define SDFC_CUDA 1
#include <cuda_runtime.h>
#define SDFC_GPU_ABI_NAMESPACE cuda_v1
#endif

#pragma GCC visibility push(hidden)

namespace sdfc {
namespace gpu {
inline namespace SDFC_GPU_ABI_NAMESPACE {

#if defined(SDFC_HIP)
// ----------------------------------------------------------------------------------------------- HIP
using Stream = hipStream_t;
using Event = hipEvent_t;
using Error = hipError_t;
using MemPool = hipMemPool_t;
using Graph = hipGraph_t;
using GraphExec = hipGraphExec_t;
using PointerAttributes = hipPointerAttribute_t;
using MemcpyKind = hipMemcpyKind;
constexpr const char* kBackendName = "hip";
constexpr Error kSuccess = hipSuccess;
constexpr Error kNotReady = hipErrorNotReady;
constexpr Error kNotSupported = hipErrorNotSupported;
constexpr Error kNoDevice = hipErrorNoDevice;
constexpr Error kInvalidValue = hipErrorInvalidValue;
constexpr MemcpyKind kMemcpyHostToHost = hipMemcpyHostToHost;
constexpr MemcpyKind kMemcpyHostToDevice = hipMemcpyHostToDevice;
constexpr MemcpyKind kMemcpyDeviceToHost = hipMemcpyDeviceToHost;
constexpr MemcpyKind kMemcpyDeviceToDevice = hipMemcpyDeviceToDevice;
constexpr MemcpyKind kMemcpyDefault = hipMemcpyDefault;

inline Error gpuMalloc(void** p, std::size_t bytes) {
  return hipMalloc(p, bytes);
}
inline Error gpuFree(void* p) {
  return hipFree(p);
}
/// Zero bytes give a null pointer and success, and freeing null does nothing, as with gpuMalloc and
/// gpuFree (a transient sized by a loop variable is empty in some iterations).
inline Error gpuMallocAsync(void** p, std::size_t bytes, Stream s) {
  if (bytes == 0) {
    *p = nullptr;
    return kSuccess;
  }
  return hipMallocAsync(p, bytes, s);
}
inline Error gpuFreeAsync(void* p, Stream s) {
  return p ? hipFreeAsync(p, s) : kSuccess;
}
inline Error gpuHostAlloc(void** p, std::size_t bytes) {
  return hipHostMalloc(p, bytes, hipHostMallocDefault);
}
inline Error gpuFreeHost(void* p) {
  return hipHostFree(p);
}
inline Error gpuMemcpy(void* dst, const void* src, std::size_t bytes, MemcpyKind kind) {
  return hipMemcpy(dst, src, bytes, kind);
}
inline Error gpuMemcpyAsync(void* dst, const void* src, std::size_t bytes, MemcpyKind kind, Stream s) {
  return hipMemcpyAsync(dst, src, bytes, kind, s);
}
inline Error gpuMemcpy2DAsync(void* dst, std::size_t dpitch, const void* src, std::size_t spitch, std::size_t width,
                              std::size_t height, MemcpyKind kind, Stream s) {
  return hipMemcpy2DAsync(dst, dpitch, src, spitch, width, height, kind, s);
}
inline Error gpuMemsetAsync(void* p, int value, std::size_t bytes, Stream s) {
  return hipMemsetAsync(p, value, bytes, s);
}
inline Error gpuStreamCreateWithFlags(Stream* s) {
  return hipStreamCreateWithFlags(s, hipStreamNonBlocking);
}
inline Error gpuStreamDestroy(Stream s) {
  return hipStreamDestroy(s);
}
inline Error gpuStreamSynchronize(Stream s) {
  return hipStreamSynchronize(s);
}
inline Error gpuStreamQuery(Stream s) {
  return hipStreamQuery(s);
}
inline Error gpuStreamWaitEvent(Stream s, Event e) {
  return hipStreamWaitEvent(s, e, 0);
}
inline Error gpuStreamIsCapturing(Stream s, bool* capturing) {
  hipStreamCaptureStatus st = hipStreamCaptureStatusNone;
  Error err = hipStreamIsCapturing(s, &st);
  *capturing = (err == hipSuccess && st != hipStreamCaptureStatusNone);
  return err;
}
/// Not available on HIP (no hipStreamGetDevice in HIP 5.2): always kNotSupported.
inline Error gpuStreamGetDevice(Stream, int* device) {
  *device = -1;
  return hipErrorNotSupported;
}
inline Error gpuEventCreateWithFlags(Event* e) {
  return hipEventCreateWithFlags(e, hipEventDisableTiming);
}
inline Error gpuEventRecord(Event e, Stream s) {
  return hipEventRecord(e, s);
}
inline Error gpuEventDestroy(Event e) {
  return hipEventDestroy(e);
}
inline Error gpuEventSynchronize(Event e) {
  return hipEventSynchronize(e);
}
inline Error gpuEventQuery(Event e) {
  return hipEventQuery(e);
}
inline Error gpuGetDevice(int* d) {
  return hipGetDevice(d);
}
inline Error gpuSetDevice(int d) {
  return hipSetDevice(d);
}
inline Error gpuGetDeviceCount(int* n) {
  return hipGetDeviceCount(n);
}
inline Error gpuDeviceSynchronize() {
  return hipDeviceSynchronize();
}
inline Error gpuGetLastError() {
  return hipGetLastError();
}
inline const char* gpuGetErrorString(Error e) {
  return hipGetErrorString(e);
}
inline const char* gpuGetErrorName(Error e) {
  return hipGetErrorName(e);
}
inline Error gpuPointerGetAttributes(PointerAttributes* a, const void* p) {
  return hipPointerGetAttributes(a, p);
}
inline Error gpuDeviceSupportsMemoryPools(int device, bool* yes) {
  int v = 0;
  Error err = hipDeviceGetAttribute(&v, hipDeviceAttributeMemoryPoolsSupported, device);
  *yes = (err == hipSuccess && v != 0);
  return err;
}
inline Error gpuDeviceGetDefaultMemPool(MemPool* pool, int device) {
  return hipDeviceGetDefaultMemPool(pool, device);
}
inline Error gpuMemPoolGetReleaseThreshold(MemPool pool, std::uint64_t* bytes) {
  return hipMemPoolGetAttribute(pool, hipMemPoolAttrReleaseThreshold, bytes);
}
inline Error gpuMemPoolSetReleaseThreshold(MemPool pool, std::uint64_t bytes) {
  return hipMemPoolSetAttribute(pool, hipMemPoolAttrReleaseThreshold, &bytes);
}
// Graphs (--gpu-graph): stream capture, instantiation, update in place, launch.
inline Error gpuStreamBeginCapture(Stream s) {
  return hipStreamBeginCapture(s, hipStreamCaptureModeRelaxed);
}
inline Error gpuStreamEndCapture(Stream s, Graph* g) {
  return hipStreamEndCapture(s, g);
}
inline Error gpuGraphInstantiate(GraphExec* e, Graph g) {
  return hipGraphInstantiate(e, g, nullptr, nullptr, 0);
}
/// Updates `e` in place to `g`'s parameters; fails when the topology (or anything else the
/// runtime cannot update) differs.
inline Error gpuGraphExecUpdate(GraphExec e, Graph g) {
  hipGraphNode_t node = nullptr;
  hipGraphExecUpdateResult result = hipGraphExecUpdateSuccess;
  return hipGraphExecUpdate(e, g, &node, &result);
}
inline Error gpuGraphLaunch(GraphExec e, Stream s) {
  return hipGraphLaunch(e, s);
}
inline Error gpuGraphExecDestroy(GraphExec e) {
  return hipGraphExecDestroy(e);
}
inline Error gpuGraphDestroy(Graph g) {
  return hipGraphDestroy(g);
}

#else
// ---------------------------------------------------------------------------------------------- CUDA
using Stream = cudaStream_t;
using Event = cudaEvent_t;
using Error = cudaError_t;
using MemPool = cudaMemPool_t;
using Graph = cudaGraph_t;
using GraphExec = cudaGraphExec_t;
using PointerAttributes = cudaPointerAttributes;
using MemcpyKind = cudaMemcpyKind;
constexpr const char* kBackendName = "cuda";
constexpr Error kSuccess = cudaSuccess;
constexpr Error kNotReady = cudaErrorNotReady;
constexpr Error kNotSupported = cudaErrorNotSupported;
constexpr Error kNoDevice = cudaErrorNoDevice;
constexpr Error kInvalidValue = cudaErrorInvalidValue;
constexpr MemcpyKind kMemcpyHostToHost = cudaMemcpyHostToHost;
constexpr MemcpyKind kMemcpyHostToDevice = cudaMemcpyHostToDevice;
constexpr MemcpyKind kMemcpyDeviceToHost = cudaMemcpyDeviceToHost;
constexpr MemcpyKind kMemcpyDeviceToDevice = cudaMemcpyDeviceToDevice;
constexpr MemcpyKind kMemcpyDefault = cudaMemcpyDefault;

inline Error gpuMalloc(void** p, std::size_t bytes) {
  return cudaMalloc(p, bytes);
}
inline Error gpuFree(void* p) {
  return cudaFree(p);
}
/// Zero bytes give a null pointer and success, and freeing null does nothing, as with gpuMalloc and
/// gpuFree (a transient sized by a loop variable is empty in some iterations).
inline Error gpuMallocAsync(void** p, std::size_t bytes, Stream s) {
  if (bytes == 0) {
    *p = nullptr;
    return kSuccess;
  }
  return cudaMallocAsync(p, bytes, s);
}
inline Error gpuFreeAsync(void* p, Stream s) {
  return p ? cudaFreeAsync(p, s) : kSuccess;
}
inline Error gpuHostAlloc(void** p, std::size_t bytes) {
  return cudaHostAlloc(p, bytes, cudaHostAllocDefault);
}
inline Error gpuFreeHost(void* p) {
  return cudaFreeHost(p);
}
inline Error gpuMemcpy(void* dst, const void* src, std::size_t bytes, MemcpyKind kind) {
  return cudaMemcpy(dst, src, bytes, kind);
}
inline Error gpuMemcpyAsync(void* dst, const void* src, std::size_t bytes, MemcpyKind kind, Stream s) {
  return cudaMemcpyAsync(dst, src, bytes, kind, s);
}
inline Error gpuMemcpy2DAsync(void* dst, std::size_t dpitch, const void* src, std::size_t spitch, std::size_t width,
                              std::size_t height, MemcpyKind kind, Stream s) {
  return cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, height, kind, s);
}
inline Error gpuMemsetAsync(void* p, int value, std::size_t bytes, Stream s) {
  return cudaMemsetAsync(p, value, bytes, s);
}
inline Error gpuStreamCreateWithFlags(Stream* s) {
  return cudaStreamCreateWithFlags(s, cudaStreamNonBlocking);
}
inline Error gpuStreamDestroy(Stream s) {
  return cudaStreamDestroy(s);
}
inline Error gpuStreamSynchronize(Stream s) {
  return cudaStreamSynchronize(s);
}
inline Error gpuStreamQuery(Stream s) {
  return cudaStreamQuery(s);
}
inline Error gpuStreamWaitEvent(Stream s, Event e) {
  return cudaStreamWaitEvent(s, e, 0);
}
inline Error gpuStreamIsCapturing(Stream s, bool* capturing) {
  cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
  Error err = cudaStreamIsCapturing(s, &st);
  *capturing = (err == cudaSuccess && st != cudaStreamCaptureStatusNone);
  return err;
}
/// cudaStreamGetDevice exists since CUDA 12.8; before that (and on HIP) this is kNotSupported. A
/// driver older than the toolkit may also fail it: callers treat any failure as "unknown".
inline Error gpuStreamGetDevice(Stream s, int* device) {
#if defined(CUDART_VERSION) && CUDART_VERSION >= 12080
  return cudaStreamGetDevice(s, device);
#else
  (void)s;
  *device = -1;
  return cudaErrorNotSupported;
#endif
}
inline Error gpuEventCreateWithFlags(Event* e) {
  return cudaEventCreateWithFlags(e, cudaEventDisableTiming);
}
inline Error gpuEventRecord(Event e, Stream s) {
  return cudaEventRecord(e, s);
}
inline Error gpuEventDestroy(Event e) {
  return cudaEventDestroy(e);
}
inline Error gpuEventSynchronize(Event e) {
  return cudaEventSynchronize(e);
}
inline Error gpuEventQuery(Event e) {
  return cudaEventQuery(e);
}
inline Error gpuGetDevice(int* d) {
  return cudaGetDevice(d);
}
inline Error gpuSetDevice(int d) {
  return cudaSetDevice(d);
}
inline Error gpuGetDeviceCount(int* n) {
  return cudaGetDeviceCount(n);
}
inline Error gpuDeviceSynchronize() {
  return cudaDeviceSynchronize();
}
inline Error gpuGetLastError() {
  return cudaGetLastError();
}
inline const char* gpuGetErrorString(Error e) {
  return cudaGetErrorString(e);
}
inline const char* gpuGetErrorName(Error e) {
  return cudaGetErrorName(e);
}
inline Error gpuPointerGetAttributes(PointerAttributes* a, const void* p) {
  return cudaPointerGetAttributes(a, p);
}
inline Error gpuDeviceSupportsMemoryPools(int device, bool* yes) {
  int v = 0;
  Error err = cudaDeviceGetAttribute(&v, cudaDevAttrMemoryPoolsSupported, device);
  *yes = (err == cudaSuccess && v != 0);
  return err;
}
inline Error gpuDeviceGetDefaultMemPool(MemPool* pool, int device) {
  return cudaDeviceGetDefaultMemPool(pool, device);
}
inline Error gpuMemPoolGetReleaseThreshold(MemPool pool, std::uint64_t* bytes) {
  return cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, bytes);
}
inline Error gpuMemPoolSetReleaseThreshold(MemPool pool, std::uint64_t bytes) {
  return cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &bytes);
}
// Graphs (--gpu-graph): stream capture, instantiation, update in place, launch.
inline Error gpuStreamBeginCapture(Stream s) {
  return cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed);
}
inline Error gpuStreamEndCapture(Stream s, Graph* g) {
  return cudaStreamEndCapture(s, g);
}
inline Error gpuGraphInstantiate(GraphExec* e, Graph g) {
  return cudaGraphInstantiate(e, g, 0);
}
/// Updates `e` in place to `g`'s parameters; fails when the topology (or anything else the
/// runtime cannot update) differs.
inline Error gpuGraphExecUpdate(GraphExec e, Graph g) {
  cudaGraphExecUpdateResultInfo info{};
  return cudaGraphExecUpdate(e, g, &info);
}
inline Error gpuGraphLaunch(GraphExec e, Stream s) {
  return cudaGraphLaunch(e, s);
}
inline Error gpuGraphExecDestroy(GraphExec e) {
  return cudaGraphExecDestroy(e);
}
inline Error gpuGraphDestroy(Graph g) {
  return cudaGraphDestroy(g);
}

// Programmatic dependent launch (sm_90 and newer; CUDA only: the kernels outline-kernels marks
// `dependent launch`). The launch lets the kernel start while the kernel before it on `s` is
// finishing; the kernel's first statement, dependent_launch_prologue(), waits until the kernels
// before it have completed and their memory is visible. So stream order holds for everything the
// kernel touches; what overlaps is the launch. Under stream capture the launch becomes a
// programmatic edge of the graph.
template <typename... Params, typename... Args>
inline Error launch_dependent(void (*kernel)(Params...), dim3 grid, dim3 block, Stream s, Args&&... args) {
  cudaLaunchAttribute attribute[1];
  attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute[0].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config = {};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = 0;
  config.stream = s;
  config.attrs = attribute;
  config.numAttrs = 1;
  return cudaLaunchKernelEx(&config, kernel, static_cast<Args&&>(args)...);
}

/// The first statement of a kernel launched with launch_dependent (see there). The next kernel on
/// the stream may start at once when this grid has at most `early_trigger_blocks_per_sm` blocks
/// per SM (a grid of one wave leaves room for the next kernel's blocks to wait beside it: the
/// launch latency is hidden); otherwise each block lets it start when it exits, so that a grid of
/// many waves never shares its SMs with blocks that can only wait (KernelPlan::early_trigger_blocks_per_sm;
/// %nsmid bounds the number of SMs from above). The generated code refuses to compile such kernels
/// for an architecture before sm_90.
__device__ __forceinline__ void dependent_launch_prologue(int early_trigger_blocks_per_sm = 0) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  unsigned sms;
  asm("mov.u32 %0, %%nsmid;" : "=r"(sms));
  unsigned long long blocks = static_cast<unsigned long long>(gridDim.x) * gridDim.y * gridDim.z;
  if (blocks <= static_cast<unsigned long long>(early_trigger_blocks_per_sm) * sms)
    cudaTriggerProgrammaticLaunchCompletion();
  cudaGridDependencySynchronize();
#endif
}
#endif

// -------------------------------------------------------------------------------- folded kernels
/// The pitch of a kernel whose y and x run as one index over the plane (KernelPlan::Layout::
/// pitch_dim): the y dimension's stride where x's dimension has unit stride and the rows leave at
/// most 32 idle points each (thread t then touches element t of the plane); otherwise x's extent
/// (no idle thread; correct for any strides). Launch and kernel compute it alike.
__host__ __device__ inline std::int64_t fold_pitch(std::int64_t stride_x, std::int64_t stride_y,
                                                   std::int64_t extent_x) {
  if (stride_x == 1 && stride_y >= extent_x && stride_y - extent_x <= 32) return stride_y;
  return extent_x > 0 ? extent_x : 1;
}
/// The idle threads a folded kernel launches first, so that warps start where the plane's element
/// index (`first`: the first point's offset from index 0) is a multiple of 32.
__host__ __device__ inline std::int64_t fold_lead(std::int64_t first) {
  return (first % 32 + 32) % 32;
}

// -------------------------------------------------------------------------------- shared spellings
/// Typed-pointer conveniences, so generated code writes gpuMalloc(&p, n) for any `T* p`.
template <typename T>
inline Error gpuMalloc(T** p, std::size_t bytes) {
  return gpuMalloc(reinterpret_cast<void**>(p), bytes);
}
template <typename T>
inline Error gpuMallocAsync(T** p, std::size_t bytes, Stream s) {
  return gpuMallocAsync(reinterpret_cast<void**>(p), bytes, s);
}
template <typename T>
inline Error gpuHostAlloc(T** p, std::size_t bytes) {
  return gpuHostAlloc(reinterpret_cast<void**>(p), bytes);
}

/// The release threshold through the attribute-style name of the brief (the only attribute used).
inline Error gpuMemPoolSetAttribute(MemPool pool, std::uint64_t release_threshold) {
  return gpuMemPoolSetReleaseThreshold(pool, release_threshold);
}

/// Where a pointer's memory lives.
enum class MemoryKind { kHostPageable, kHostPinned, kDevice, kManaged };

struct PointerInfo {
  MemoryKind kind = MemoryKind::kHostPageable;
  int device = -1;  ///< the owning device for device/managed/pinned memory; -1 when unknown
};

inline const char* memory_kind_name(MemoryKind k) {
  switch (k) {
    case MemoryKind::kHostPageable:
      return "pageable host";
    case MemoryKind::kHostPinned:
      return "pinned host";
    case MemoryKind::kDevice:
      return "device";
    case MemoryKind::kManaged:
      return "managed";
  }
  return "?";
}

/// Classifies a pointer. Unregistered (pageable) host memory is kHostPageable on both backends;
/// on HIP 5 that is the hipErrorInvalidValue case, whose last-error state is cleared here. Other
/// failures are returned as they are (and `info` says pageable host).
inline Error pointer_info(const void* p, PointerInfo* info) {
  *info = PointerInfo{};
  PointerAttributes a{};
  Error err = gpuPointerGetAttributes(&a, p);
#if defined(SDFC_HIP)
  if (err == hipErrorInvalidValue) {
    (void)hipGetLastError();
    return hipSuccess;
  }
  if (err != hipSuccess) return err;
  info->device = a.device;
#if HIP_VERSION_MAJOR >= 6
  switch (a.type) {
    case hipMemoryTypeHost:
      info->kind = MemoryKind::kHostPinned;
      break;
    case hipMemoryTypeDevice:
    case hipMemoryTypeArray:
      info->kind = MemoryKind::kDevice;
      break;
    case hipMemoryTypeManaged:
    case hipMemoryTypeUnified:
      info->kind = MemoryKind::kManaged;
      break;
    default:
      info->kind = MemoryKind::kHostPageable;
      info->device = -1;
      break;
  }
#else
  if (a.isManaged) {
    info->kind = MemoryKind::kManaged;
  } else {
    switch (a.memoryType) {
      case hipMemoryTypeHost:
        info->kind = MemoryKind::kHostPinned;
        break;
      case hipMemoryTypeDevice:
      case hipMemoryTypeArray:
        info->kind = MemoryKind::kDevice;
        break;
      case hipMemoryTypeUnified:
        info->kind = MemoryKind::kManaged;
        break;
      default:
        info->kind = MemoryKind::kHostPageable;
        info->device = -1;
        break;
    }
  }
#endif
#else
  if (err != cudaSuccess) return err;
  info->device = a.device;
  switch (a.type) {
    case cudaMemoryTypeHost:
      info->kind = MemoryKind::kHostPinned;
      break;
    case cudaMemoryTypeDevice:
      info->kind = MemoryKind::kDevice;
      break;
    case cudaMemoryTypeManaged:
      info->kind = MemoryKind::kManaged;
      break;
    default:
      info->kind = MemoryKind::kHostPageable;
      info->device = -1;
      break;
  }
#endif
  return err;
}

// --------------------------------------------------------------------------- device clock (delays)
/// Ticks of the clock read by spin_for_ticks() per microsecond on `device`.
inline Error delay_ticks_per_us(int device, long long* ticks) {
#if defined(SDFC_HIP)
#if HIP_VERSION_MAJOR >= 6
  int khz = 0;
  Error err = hipDeviceGetAttribute(&khz, hipDeviceAttributeWallClockRate, device);
  *ticks = (err == hipSuccess && khz > 0) ? khz / 1000 : 100;
  if (*ticks <= 0) *ticks = 1;
  return err;
#else
  (void)device;
  *ticks = 100;  // wall_clock64() runs at 100 MHz on gfx908/gfx90a/gfx94x
  return hipSuccess;
#endif
#else
  (void)device;
  *ticks = 1000;  // %globaltimer counts nanoseconds
  return cudaSuccess;
#endif
}

/// Busy-waits `ticks` ticks of the device wall clock (see delay_ticks_per_us) in one thread.
__device__ inline void spin_for_ticks(long long ticks) {
#if defined(__HIP_DEVICE_COMPILE__)
  long long start = wall_clock64();
  while (wall_clock64() - start < ticks) __builtin_amdgcn_s_sleep(64);
#elif defined(__CUDA_ARCH__)
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
#if __CUDA_ARCH__ >= 700
    __nanosleep(1000);
#endif
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (static_cast<long long>(now - start) < ticks);
#else
  (void)ticks;
#endif
}

/// A generated program's kernel launchers (and its __sdfc_gpu_spin): functions of its device
/// source that its host source calls; hidden, so that programs loaded together never share one.
#define SDFC_LAUNCHER __attribute__((visibility("hidden")))

#if defined(__CUDACC__) || defined(__HIPCC__)
static __global__ void sdfc_gpu_spin_kernel(long long ticks) {
  spin_for_ticks(ticks);
}
/// Queues a one-thread kernel on `s` that spins for `ticks` ticks (sdfc/gpu.h: maybe_delay). Only
/// in device compilations: a generated program's host source (compiled by the host compiler)
/// reaches it through its device source's __sdfc_gpu_spin.
inline void launch_spin(Stream s, long long ticks) {
  sdfc_gpu_spin_kernel<<<1, 1, 0, s>>>(ticks);
}
#endif

}  // namespace SDFC_GPU_ABI_NAMESPACE
}  // namespace gpu
}  // namespace sdfc

#pragma GCC visibility pop
