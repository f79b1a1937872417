// Sample: an explicit 2D diffusion time loop split over MPI ranks, one sdfc-compiled program per
// step on each rank, halo rows exchanged between calls (issue: where users live).
//
// The global domain has NX rows and M columns; rank r owns a block of consecutive rows and keeps
// them in u[NL + 2][M] with one halo row above (row 0) and one below (row NL + 1). The domain's
// outer rows and columns are fixed boundary values. Each step:
//   1. the rank calls the program: t = u + c * laplacian(u) on its NL x (M - 2) interior, then
//      u = t (t is an External transient: one workspace per rank, set once, reused every step);
//   2. the rank exchanges halos with its neighbours: its first row goes to the rank above (into
//      that rank's row NL + 1), its last row to the rank below (into row 0).
// Rank 0 then gathers the blocks, runs the same steps serially and prints
// `max |mpi - serial| = <value>` (0 on the CPU: the same operations in the same order).
//
// CPU (samples/mpi_halo/mpi_halo.cpp, target sample_mpi_halo): host buffers, MPI_Sendrecv on them.
// GPU (mpi_halo_gpu.cu includes this file with SDFC_MPI_HALO_GPU, built with -DSDFC_GPU_TESTS=ON):
// u lives on the device; the program runs on two internal streams (--gpu-streams 2) ordered
// against the rank's own stream (the caller's stream); before MPI touches the halo rows the rank
// synchronizes that stream. With a CUDA-aware MPI (Open MPI's MPIX_Query_cuda_support) the rows go
// straight from device memory, else through host staging buffers.
//
// Many nodes: run one rank per GPU (`mpirun -np <GPUs> --map-by ppr:<GPUs per node>:node`); each
// rank selects GPU (local rank) mod (GPUs on its node) before compiling, as below.
//
// Usage: mpirun -np P sample_mpi_halo [NX M STEPS]. Exit status 0 when the result matches, 1 when
// not, 77 (skip) when a GPU build finds no GPU.
#include <mpi.h>
#if defined(SDFC_MPI_HALO_GPU)
#include <cuda_runtime.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif
#endif

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "ir/Builder.h"
#include "ir/JsonWriter.h"
#include "sdfc/sdfc.h"

namespace {

constexpr double kC = 0.2;  // diffusion number: stable for c <= 0.25

#if defined(SDFC_MPI_HALO_GPU)
constexpr bool kGpu = true;
constexpr auto kStorage = sdfc::StorageType::GPU_Global;
constexpr auto kSchedule = sdfc::ScheduleType::GPU_Device;
#else
constexpr bool kGpu = false;
constexpr auto kStorage = sdfc::StorageType::CPU_Heap;
constexpr auto kSchedule = sdfc::ScheduleType::CPU_Multicore;
#endif

/// One diffusion step on a block of NL rows with halo rows 0 and NL + 1. The block is split into
/// an upper and a lower half written by two maps (independent: on the GPU they run on two
/// streams), each into its own part of the External transient t.
std::string diffusion_program() {
  sdfc::SDFGBuilder b("mpi_diffusion");
  b.symbol("NL").symbol("M");
  b.array("u", sdfc::DType::Float64, {"NL + 2", "M"}, false, kStorage);
  b.array("t", sdfc::DType::Float64, {"NL + 2", "M"}, true, kStorage);
  const std::string stencil = "o = c + " + std::to_string(kC) + " * (n + s + w + e - 4.0 * c)";
  const std::vector<std::pair<std::string, std::string>> in = {
      {"c", "u[i, j]"}, {"n", "u[i - 1, j]"}, {"s", "u[i + 1, j]"}, {"w", "u[i, j - 1]"}, {"e", "u[i, j + 1]"}};
  std::map<std::string, int> step_nodes, back_nodes;
  auto step = b.state("step");
  step.mapped_tasklet("upper", {{"i", "1:NL // 2 + 1"}, {"j", "1:M - 1"}}, in, stencil, {{"o", "t[i, j]"}}, kSchedule,
                      &step_nodes);
  step.mapped_tasklet("lower", {{"i", "NL // 2 + 1:NL + 1"}, {"j", "1:M - 1"}}, in, stencil, {{"o", "t[i, j]"}},
                      kSchedule, &step_nodes);
  auto back = b.state("write_back");
  back.mapped_tasklet("back_upper", {{"i", "1:NL // 2 + 1"}, {"j", "1:M - 1"}}, {{"x", "t[i, j]"}}, "o = x",
                      {{"o", "u[i, j]"}}, kSchedule, &back_nodes);
  back.mapped_tasklet("back_lower", {{"i", "NL // 2 + 1:NL + 1"}, {"j", "1:M - 1"}}, {{"x", "t[i, j]"}}, "o = x",
                      {{"o", "u[i, j]"}}, kSchedule, &back_nodes);
  b.chain();
  return sdfc::write_sdfg(*b.build());
}

double initial_value(long row, long col, long nx, long m) {
  if (row == 0 || row == nx - 1 || col == 0 || col == m - 1) return row == 0 ? 1.0 : 0.0;  // hot top edge
  return 0.5 * std::sin(0.37 * static_cast<double>(row)) * std::cos(0.23 * static_cast<double>(col));
}

/// The same steps on the whole domain, in the program's order of operations.
std::vector<double> serial_run(long nx, long m, int steps) {
  std::vector<double> u(static_cast<std::size_t>(nx * m)), t = u;
  for (long r = 0; r < nx; ++r)
    for (long c = 0; c < m; ++c) u[static_cast<std::size_t>(r * m + c)] = initial_value(r, c, nx, m);
  t = u;
  auto at = [m](std::vector<double>& a, long r, long c) -> double& { return a[static_cast<std::size_t>(r * m + c)]; };
  for (int s = 0; s < steps; ++s) {
    for (long r = 1; r < nx - 1; ++r)
      for (long c = 1; c < m - 1; ++c) {
        double cc = at(u, r, c), n = at(u, r - 1, c), so = at(u, r + 1, c), w = at(u, r, c - 1), e = at(u, r, c + 1);
        at(t, r, c) = cc + kC * (n + so + w + e - 4.0 * cc);
      }
    for (long r = 1; r < nx - 1; ++r)
      for (long c = 1; c < m - 1; ++c) at(u, r, c) = at(t, r, c);
  }
  return u;
}

#if defined(SDFC_MPI_HALO_GPU)
bool cuda_aware_mpi() {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}
#endif

int fail(const std::string& what) {
  std::fprintf(stderr, "mpi_halo: %s\n", what.c_str());
  MPI_Abort(MPI_COMM_WORLD, 1);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const long nx = argc > 1 ? std::atol(argv[1]) : (kGpu ? 4098 : 130);  // global rows, boundary included
  const long m = argc > 2 ? std::atol(argv[2]) : (kGpu ? 4096 : 96);
  const int steps = argc > 3 ? std::atoi(argv[3]) : (kGpu ? 200 : 50);
  // Interior rows 1..nx-2 are split into blocks; rank r owns global rows first..first+nl-1.
  const long interior = nx - 2, base = interior / ranks, extra = interior % ranks;
  const long nl = base + (rank < extra ? 1 : 0);
  const long first = 1 + rank * base + std::min<long>(rank, extra);
  if (nl < 2 || m < 3) return fail("each rank needs at least 2 interior rows and M >= 3");
  const int up = rank > 0 ? rank - 1 : MPI_PROC_NULL, down = rank + 1 < ranks ? rank + 1 : MPI_PROC_NULL;

  // The block with its halo rows: rows first-1 .. first+nl (the domain's boundary rows are halos
  // that never change).
  std::vector<double> block(static_cast<std::size_t>((nl + 2) * m));
  for (long r = 0; r < nl + 2; ++r)
    for (long c = 0; c < m; ++c) block[static_cast<std::size_t>(r * m + c)] = initial_value(first - 1 + r, c, nx, m);

  sdfc::Options options;
  options.transients = "external";
#if defined(SDFC_MPI_HALO_GPU)
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    if (rank == 0) std::printf("mpi_halo: no GPU, skipped\n");
    MPI_Finalize();
    return 77;
  }
  MPI_Comm node;  // ranks on this node share its GPUs
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  int local_rank = 0;
  MPI_Comm_rank(node, &local_rank);
  cudaSetDevice(local_rank % devices);
  options.target = "cuda";
  options.gpu_streams = 2;
#endif
  sdfc::Program program = [&] {
    try {
      return sdfc::Program::compile_string(diffusion_program(), options);
    } catch (const std::exception& e) {
      fail(std::string("compile failed: ") + e.what());
      throw;
    }
  }();

  double* u = block.data();
  void* workspace = nullptr;
  std::vector<double> host_workspace;
#if defined(SDFC_MPI_HALO_GPU)
  cudaStream_t stream;  // the rank's own stream: the program orders its internal streams against it
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  cudaMalloc(&u, block.size() * sizeof(double));
  cudaMemcpy(u, block.data(), block.size() * sizeof(double), cudaMemcpyHostToDevice);
  const bool direct = cuda_aware_mpi();
  const std::size_t row_bytes = static_cast<std::size_t>(m) * sizeof(double);
  std::vector<double> stage(static_cast<std::size_t>(4 * m));  // send up, send down, receive up, receive down
#endif
  try {
    program.set_array("u", u, block.size());
    program.set_value("NL", static_cast<int>(nl));
    program.set_value("M", static_cast<int>(m));
    const char* storage = kGpu ? "GPU_Global" : "CPU_Heap";
    std::size_t bytes = program.workspace_size(storage);
#if defined(SDFC_MPI_HALO_GPU)
    cudaMalloc(&workspace, bytes);
    program.set_external_stream(stream);
#else
    host_workspace.resize((bytes + sizeof(double) - 1) / sizeof(double));
    workspace = host_workspace.data();
#endif
    program.set_workspace(storage, workspace, bytes);

    for (int s = 0; s < steps; ++s) {
      program.call();
      double* first_row = u + m;
      double* last_row = u + nl * m;
      double* halo_up = u;
      double* halo_down = u + (nl + 1) * m;
#if defined(SDFC_MPI_HALO_GPU)
      if (!direct) {  // through the host: rows to staging buffers, exchange, rows back
        cudaMemcpyAsync(stage.data(), first_row, row_bytes, cudaMemcpyDeviceToHost, stream);
        cudaMemcpyAsync(stage.data() + m, last_row, row_bytes, cudaMemcpyDeviceToHost, stream);
        cudaStreamSynchronize(stream);
        MPI_Sendrecv(stage.data(), static_cast<int>(m), MPI_DOUBLE, up, 0, stage.data() + 3 * m, static_cast<int>(m),
                     MPI_DOUBLE, down, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Sendrecv(stage.data() + m, static_cast<int>(m), MPI_DOUBLE, down, 1, stage.data() + 2 * m,
                     static_cast<int>(m), MPI_DOUBLE, up, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (up != MPI_PROC_NULL)
          cudaMemcpyAsync(halo_up, stage.data() + 2 * m, row_bytes, cudaMemcpyHostToDevice, stream);
        if (down != MPI_PROC_NULL)
          cudaMemcpyAsync(halo_down, stage.data() + 3 * m, row_bytes, cudaMemcpyHostToDevice, stream);
        continue;  // the next call is queued behind these copies on the rank's stream
      }
      cudaStreamSynchronize(stream);  // MPI does not know streams: the step's rows must be final
#endif
      MPI_Sendrecv(first_row, static_cast<int>(m), MPI_DOUBLE, up, 0, halo_down, static_cast<int>(m), MPI_DOUBLE, down,
                   0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Sendrecv(last_row, static_cast<int>(m), MPI_DOUBLE, down, 1, halo_up, static_cast<int>(m), MPI_DOUBLE, up, 1,
                   MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  } catch (const std::exception& e) {
    return fail(std::string("rank ") + std::to_string(rank) + ": " + e.what());
  }
#if defined(SDFC_MPI_HALO_GPU)
  cudaStreamSynchronize(stream);
  cudaMemcpy(block.data(), u, block.size() * sizeof(double), cudaMemcpyDeviceToHost);
#endif

  // Gather the interior rows on rank 0 and compare with the serial run.
  std::vector<int> counts(static_cast<std::size_t>(ranks)), displs(static_cast<std::size_t>(ranks));
  int mine = static_cast<int>(nl * m);
  MPI_Gather(&mine, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  for (int r = 1; r < ranks; ++r)
    displs[static_cast<std::size_t>(r)] =
        displs[static_cast<std::size_t>(r - 1)] + counts[static_cast<std::size_t>(r - 1)];
  std::vector<double> gathered(rank == 0 ? static_cast<std::size_t>(interior * m) : 0);
  MPI_Gatherv(block.data() + m, mine, MPI_DOUBLE, gathered.data(), counts.data(), displs.data(), MPI_DOUBLE, 0,
              MPI_COMM_WORLD);
  int status = 0;
  if (rank == 0) {
    std::vector<double> serial = serial_run(nx, m, steps);
    double worst = 0;
    for (long i = 0; i < interior * m; ++i)
      worst =
          std::max(worst, std::fabs(gathered[static_cast<std::size_t>(i)] - serial[static_cast<std::size_t>(m + i)]));
    std::printf("mpi_halo (%s%s): %d ranks, %ld x %ld domain, %d steps: max |mpi - serial| = %.17g\n",
                kGpu ? "cuda, 2 internal streams on each rank's stream" : "cpu",
#if defined(SDFC_MPI_HALO_GPU)
                direct ? ", CUDA-aware MPI" : ", halos staged through the host",
#else
                "",
#endif
                ranks, nx, m, steps, worst);
    // The CPU run repeats the serial operations exactly; nvcc may contract a * b + c into FMAs.
    status = worst <= (kGpu ? 1e-12 : 0.0) ? 0 : 1;
  }
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
#if defined(SDFC_MPI_HALO_GPU)
  cudaFree(workspace);
  cudaFree(u);
  cudaStreamDestroy(stream);
#endif
  MPI_Finalize();
  return status;
}
