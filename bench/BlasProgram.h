// The programs of the BLAS benchmarks (BlasBench.cpp on the CPU, GpuBench.cu section 6 on the
// H200): C = A @ B (a MatMul node DaCe dispatches to Gemm) and y = A @ x (Gemv) on N x N float64,
// outside any map, so that --blas decides between the pure expansion (maps) and a vendor call.
#pragma once

#include <string>

#include "ir/Builder.h"
#include "ir/JsonWriter.h"

namespace sdfc::bench {

/// `matrix`: C = A @ B; otherwise y = A @ x. `gpu`: the arguments are device pointers.
inline std::string blas_program(bool matrix, bool gpu) {
  const std::string name = std::string(matrix ? "bench_gemm" : "bench_gemv") + (gpu ? "_gpu" : "");
  StorageType s = gpu ? StorageType::GPU_Global : StorageType::Default;
  SDFGBuilder b(name);
  b.symbol("N", DType::Int64);
  b.array("A", DType::Float64, {"N", "N"}, false, s);
  b.array("B", DType::Float64, matrix ? std::vector<std::string>{"N", "N"} : std::vector<std::string>{"N"}, false, s);
  b.array("C", DType::Float64, matrix ? std::vector<std::string>{"N", "N"} : std::vector<std::string>{"N"}, false, s);
  auto st = b.state("product");
  int mm = st.library("product", "dace.libraries.blas.nodes.matmul.MatMul", {"_a", "_b"}, {"_c"});
  std::string whole = matrix ? "0:N, 0:N" : "0:N";
  st.edge(st.access("A"), "", mm, "_a", "A", "0:N, 0:N");
  st.edge(st.access("B"), "", mm, "_b", "B", whole);
  st.edge(mm, "_c", st.access("C"), "", "C", whole);
  return write_sdfg(*b.build());
}

}  // namespace sdfc::bench
