// Declarations of the CUDA and HIP runtime API names that host CPP tasklets of GPU programs may
// call (GT4Py's timers: cudaDeviceSynchronize), for the tasklet check's host-only Clang parse.
// Generated code never includes this file: nvcc and hipcc give it the real runtime headers.
#pragma once

#include <cstddef>

#define SDFC_DECLARE_GPU_RUNTIME(P)                                                                              \
  typedef int P##Error_t;                                                                                        \
  typedef struct P##_sdfc_stream* P##Stream_t;                                                                   \
  typedef struct P##_sdfc_event* P##Event_t;                                                                     \
  enum P##MemcpyKind{P##MemcpyHostToHost, P##MemcpyHostToDevice, P##MemcpyDeviceToHost, P##MemcpyDeviceToDevice, \
                     P##MemcpyDefault};                                                                          \
  constexpr P##Error_t P##Success = 0;                                                                           \
  constexpr unsigned P##StreamDefault = 0, P##StreamNonBlocking = 1;                                             \
  extern P##Stream_t P##StreamPerThread;                                                                         \
  P##Error_t P##DeviceSynchronize();                                                                             \
  P##Error_t P##StreamSynchronize(P##Stream_t);                                                                  \
  P##Error_t P##GetLastError();                                                                                  \
  P##Error_t P##PeekAtLastError();                                                                               \
  const char* P##GetErrorString(P##Error_t);                                                                     \
  P##Error_t P##GetDevice(int*);                                                                                 \
  P##Error_t P##SetDevice(int);                                                                                  \
  template <typename T>                                                                                          \
  P##Error_t P##Malloc(T**, std::size_t);                                                                        \
  P##Error_t P##Free(void*);                                                                                     \
  P##Error_t P##Memcpy(void*, const void*, std::size_t, P##MemcpyKind);                                          \
  P##Error_t P##MemcpyAsync(void*, const void*, std::size_t, P##MemcpyKind, P##Stream_t = nullptr);              \
  P##Error_t P##Memset(void*, int, std::size_t);                                                                 \
  P##Error_t P##MemsetAsync(void*, int, std::size_t, P##Stream_t = nullptr);                                     \
  P##Error_t P##EventCreate(P##Event_t*);                                                                        \
  P##Error_t P##EventDestroy(P##Event_t);                                                                        \
  P##Error_t P##EventRecord(P##Event_t, P##Stream_t = nullptr);                                                  \
  P##Error_t P##EventSynchronize(P##Event_t);                                                                    \
  P##Error_t P##EventElapsedTime(float*, P##Event_t, P##Event_t);                                                \
  P##Error_t P##StreamWaitEvent(P##Stream_t, P##Event_t, unsigned = 0);

SDFC_DECLARE_GPU_RUNTIME(cuda)
SDFC_DECLARE_GPU_RUNTIME(hip)
#undef SDFC_DECLARE_GPU_RUNTIME
