// A GPU program whose host CPP tasklet queues its own GPU work on `__dace_current_stream`, as
// DaCe's copy expansion (MemcpyCUDA1D) and users' cuBLAS tasklets do: a kernel doubles gA into gB,
// the tasklet "fetch" copies gB into the host transient H with cudaMemcpyAsync on its stream, and a
// host map computes C = H + 1. Shared by the pass tests, the FileCheck inputs and the GPU test.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "ir/Builder.h"

namespace sdfc::test {

/// The copy as the tasklet "fetch" makes it: on its stream, or (`legacy`) with a synchronous
/// cudaMemcpy, which runs outside every stream: the host must wait for the kernel first.
inline std::string fetch_code(bool legacy) {
  return legacy ? "cudaMemcpy(dst, src, N * sizeof(double), cudaMemcpyDeviceToHost);"
                : "cudaMemcpyAsync(dst, src, N * sizeof(double), cudaMemcpyDeviceToHost, __dace_current_stream);";
}

inline std::unique_ptr<SDFG> stream_tasklet_program(bool legacy = false) {
  SDFGBuilder b("stream_tasklet");
  b.symbol("N", DType::Int32)
      .array("gA", DType::Float64, {"N"}, false, StorageType::GPU_Global)
      .array("gB", DType::Float64, {"N"}, false, StorageType::GPU_Global)
      .array("H", DType::Float64, {"N"}, true)
      .array("C", DType::Float64, {"N"});
  auto s = b.state("compute");
  std::map<std::string, int> first;
  s.mapped_tasklet("twice", {{"i", "0:N"}}, {{"a", "gA[i]"}}, "b = 2 * a", {{"b", "gB[i]"}}, ScheduleType::GPU_Device,
                   &first);
  int h = s.access("H");
  int fetch = s.tasklet("fetch", {"src"}, {"dst"}, fetch_code(legacy), Language::CPP);
  s.edge(first.at("gB"), "", fetch, "src", "gB", "0:N");
  s.edge(fetch, "dst", h, "", "H", "0:N");
  std::map<std::string, int> second{{"H", h}};
  s.mapped_tasklet("plus", {{"i", "0:N"}}, {{"x", "H[i]"}}, "y = x + 1", {{"y", "C[i]"}}, ScheduleType::Default,
                   &second);
  return b.build();
}

}  // namespace sdfc::test
