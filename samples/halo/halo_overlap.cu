// Sample: a time loop that overlaps a halo exchange on the caller's stream with an sdfc program on
// internal streams, reusing one external workspace every step (issue: multi-stream scheduling).
//
// A periodic 1D field u[0..N+1] (u[0] and u[N+1] are halo cells) is smoothed T times. Each step:
//   1. the caller queues the "exchange" on its own stream: u[0] = u[N], u[N+1] = u[1] (two
//      device-to-device copies, as an MPI halo exchange would fill the halos);
//   2. the program smooths the left and right halves on two internal streams into a transient
//      (the caller's workspace, --transients external) and writes it back into u;
//   3. nothing waits on the host: the next step's exchange is queued behind the program on the
//      caller's stream, which the program's exit joins.
// At the end the caller synchronizes its stream and compares with a serial CPU reference.
//
// Built with -DSDFC_GPU_TESTS=ON (scripts/gpu-check.sh runs it on the H200): sample_halo_overlap.
// Exit status 0 when the result matches, 1 when not, 77 (skip) without a GPU.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "ir/Builder.h"
#include "ir/JsonWriter.h"
#include "sdfc/sdfc.h"

namespace {

std::string smoothing_program() {
  sdfc::SDFGBuilder b("halo_smooth");
  b.symbol("N");
  b.array("u", sdfc::DType::Float64, {"N + 2"}, false, sdfc::StorageType::GPU_Global);
  // One transient per half: the halves are independent, so they run on two internal streams
  // (stream assignment orders by container, not by subset).
  b.array("tl", sdfc::DType::Float64, {"N + 2"}, true, sdfc::StorageType::GPU_Global);
  b.array("tr", sdfc::DType::Float64, {"N + 2"}, true, sdfc::StorageType::GPU_Global);
  auto s0 = b.state("smooth");
  std::map<std::string, int> acc;
  s0.mapped_tasklet("left", {{"i", "1:N // 2 + 1"}}, {{"l", "u[i - 1]"}, {"c", "u[i]"}, {"r", "u[i + 1]"}},
                    "o = 0.25 * l + 0.5 * c + 0.25 * r", {{"o", "tl[i]"}}, sdfc::ScheduleType::GPU_Device, &acc);
  s0.mapped_tasklet("right", {{"i", "N // 2 + 1:N + 1"}}, {{"l", "u[i - 1]"}, {"c", "u[i]"}, {"r", "u[i + 1]"}},
                    "o = 0.25 * l + 0.5 * c + 0.25 * r", {{"o", "tr[i]"}}, sdfc::ScheduleType::GPU_Device, &acc);
  std::map<std::string, int> acc2;
  auto s1 = b.state("write_back");
  s1.mapped_tasklet("back_left", {{"i", "1:N // 2 + 1"}}, {{"t", "tl[i]"}}, "o = t", {{"o", "u[i]"}},
                    sdfc::ScheduleType::GPU_Device, &acc2);
  s1.mapped_tasklet("back_right", {{"i", "N // 2 + 1:N + 1"}}, {{"t", "tr[i]"}}, "o = t", {{"o", "u[i]"}},
                    sdfc::ScheduleType::GPU_Device, &acc2);
  b.chain();
  return sdfc::write_sdfg(*b.build());
}

}  // namespace

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("halo_overlap: no GPU, skipped\n");
    return 77;
  }
  const int n = 1 << 20, steps = 100;
  sdfc::Options o;
  o.target = "cuda";
  o.gpu_streams = 2;
  o.transients = "external";
  sdfc::Program program = sdfc::Program::compile_string(smoothing_program(), o);

  std::vector<double> host(static_cast<std::size_t>(n) + 2);
  for (int i = 1; i <= n; ++i)
    host[static_cast<std::size_t>(i)] = std::sin(6.283185307179586 * i / n) + (i % 7 == 0 ? 1.0 : 0.0);
  double* u = nullptr;
  cudaMalloc(&u, host.size() * sizeof(double));
  cudaMemcpy(u, host.data(), host.size() * sizeof(double), cudaMemcpyHostToDevice);
  cudaStream_t caller;
  cudaStreamCreateWithFlags(&caller, cudaStreamNonBlocking);

  program.set_array("u", u, host.size());
  program.set_value("N", n);
  // One workspace of the caller's, reused by every step.
  std::size_t bytes = program.workspace_size("GPU_Global");
  void* workspace = nullptr;
  cudaMalloc(&workspace, bytes);
  program.set_workspace("GPU_Global", workspace, bytes);
  program.set_external_stream(caller);

  for (int t = 0; t < steps; ++t) {
    cudaMemcpyAsync(u, u + n, sizeof(double), cudaMemcpyDeviceToDevice, caller);          // u[0] = u[N]
    cudaMemcpyAsync(u + n + 1, u + 1, sizeof(double), cudaMemcpyDeviceToDevice, caller);  // u[N+1] = u[1]
    program.call();  // queued behind the exchange; the next exchange is queued behind it
  }
  std::vector<double> gpu(host.size());
  cudaMemcpyAsync(gpu.data(), u, gpu.size() * sizeof(double), cudaMemcpyDeviceToHost, caller);
  cudaStreamSynchronize(caller);

  // The serial reference.
  std::vector<double> ref = host, next = host;
  for (int t = 0; t < steps; ++t) {
    ref[0] = ref[static_cast<std::size_t>(n)];
    ref[static_cast<std::size_t>(n) + 1] = ref[1];
    for (int i = 1; i <= n; ++i)
      next[static_cast<std::size_t>(i)] = 0.25 * ref[static_cast<std::size_t>(i) - 1] +
                                          0.5 * ref[static_cast<std::size_t>(i)] +
                                          0.25 * ref[static_cast<std::size_t>(i) + 1];
    for (int i = 1; i <= n; ++i) ref[static_cast<std::size_t>(i)] = next[static_cast<std::size_t>(i)];
  }
  double worst = 0;
  for (int i = 1; i <= n; ++i)
    worst = std::max(worst, std::fabs(gpu[static_cast<std::size_t>(i)] - ref[static_cast<std::size_t>(i)]));
  std::printf(
      "halo_overlap: %d steps of N = %d on 2 internal streams with the caller's stream, workspace %zu bytes: max |gpu "
      "- cpu| = %.3g\n",
      steps, n, bytes, worst);
  cudaFree(workspace);
  cudaFree(u);
  cudaStreamDestroy(caller);
  return worst < 1e-12 ? 0 : 1;
}
