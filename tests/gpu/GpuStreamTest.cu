// The caller's stream on the GPU (built with -DSDFC_GPU_TESTS=ON; the H200 runs it through
// scripts/gpu-check.sh): the program's work is ordered after what the caller queued before the
// call and before what it queues after, with --gpu-streams 0, 1, 2 and 4; changing the stream
// between calls orders the next call after the previous one; bad streams are refused and change
// nothing; every corpus GPU program gives DaCe's results behind a busy caller's stream; two dependent
// states whose streams carry their work across the boundary give their results. Each test skips
// without a GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "StreamTasklet.h"
#include "TestUtil.h"
#include "TwoStages.h"
#include "compiler/Compile.h"
#include "ir/Builder.h"
#include "ir/JsonWriter.h"
#include "sdfc/sdfc.h"

namespace {

bool have_gpu() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

/// Spins for about `us` microseconds on the device.
__global__ void spin(long long us) {
  long long start = clock64();
  long long rate = 1000;  // ticks per microsecond, roughly (>= 1 GHz clocks): a lower bound on the wait
  while (clock64() - start < us * rate) {
  }
}

__global__ void fill(double* x, double v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = v + i;
}

/// y = ((x * 2 + 1) + (x - 3)) through two independent branches (a fork-join): on several streams
/// the branches run concurrently. x, y are device arrays passed by the caller.
std::string forkjoin() {
  sdfc::SDFGBuilder b("forkjoin_dev");
  b.symbol("N");
  b.array("x", sdfc::DType::Float64, {"N"}, false, sdfc::StorageType::GPU_Global);
  b.array("y", sdfc::DType::Float64, {"N"}, false, sdfc::StorageType::GPU_Global);
  b.array("a", sdfc::DType::Float64, {"N"}, true, sdfc::StorageType::GPU_Global);
  b.array("c", sdfc::DType::Float64, {"N"}, true, sdfc::StorageType::GPU_Global);
  auto s = b.state("s");
  std::map<std::string, int> acc;
  s.mapped_tasklet("left", {{"i", "0:N"}}, {{"v", "x[i]"}}, "o = v * 2.0 + 1.0", {{"o", "a[i]"}},
                   sdfc::ScheduleType::GPU_Device, &acc);
  s.mapped_tasklet("right", {{"i", "0:N"}}, {{"v", "x[i]"}}, "o = v - 3.0", {{"o", "c[i]"}},
                   sdfc::ScheduleType::GPU_Device, &acc);
  s.mapped_tasklet("merge", {{"i", "0:N"}}, {{"p", "a[i]"}, {"q", "c[i]"}}, "o = p + q", {{"o", "y[i]"}},
                   sdfc::ScheduleType::GPU_Device, &acc);
  return sdfc::write_sdfg(*b.build());
}

struct Buffers {
  int n;
  double *x = nullptr, *y = nullptr;
  explicit Buffers(int count) : n(count) {
    cudaMalloc(&x, n * sizeof(double));
    cudaMalloc(&y, n * sizeof(double));
  }
  ~Buffers() {
    cudaFree(x);
    cudaFree(y);
  }
  std::vector<double> result() const {
    std::vector<double> h(static_cast<std::size_t>(n));
    cudaMemcpy(h.data(), y, n * sizeof(double), cudaMemcpyDeviceToHost);
    return h;
  }
};

}  // namespace

TEST(GpuStream, WorkIsOrderedOnTheCallersStreamInEveryStreamMode) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  const int n = 1 << 20;
  for (int streams : {0, 1, 2, 4})
    for (const char* mode : {"", "external", "pool"}) {
      SCOPED_TRACE(std::string("--gpu-streams ") + std::to_string(streams) + " --transients " + mode);
      sdfc::Options o;
      o.target = "cuda";
      o.gpu_streams = streams;
      o.transients = mode;
      sdfc::Program p = sdfc::Program::compile_string(forkjoin(), o);
      Buffers buf(n);
      cudaStream_t s;
      ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
      p.set_array("x", buf.x, static_cast<std::size_t>(n));
      p.set_array("y", buf.y, static_cast<std::size_t>(n));
      p.set_value("N", n);
      p.set_external_stream(s);
      for (int round = 0; round < 3; ++round) {
        // The caller's stream is busy, then writes the input: the program must wait for both.
        spin<<<1, 1, 0, s>>>(20000);
        fill<<<(n + 255) / 256, 256, 0, s>>>(buf.x, 10.0 * round, n);
        p.call();  // returns once queued
        // ... and the caller's next work (a copy of the result) must come after the program.
        std::vector<double> h(static_cast<std::size_t>(n));
        ASSERT_EQ(cudaMemcpyAsync(h.data(), buf.y, n * sizeof(double), cudaMemcpyDeviceToHost, s), cudaSuccess);
        ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
        for (int i = 0; i < n; i += 4099) {
          double x = 10.0 * round + i;
          ASSERT_EQ(h[static_cast<std::size_t>(i)], (x * 2 + 1) + (x - 3)) << "round " << round << " i " << i;
        }
      }
      // Destroyed before the program (which goes out of scope after it): the program's exit must
      // not touch the caller's stream (it waits on its own events instead).
      cudaStreamDestroy(s);
    }
}

TEST(GpuStream, ChangingTheStreamOrdersTheNextCallAfterThePrevious) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  const int n = 1 << 20;
  sdfc::Options o;
  o.target = "cuda";
  o.gpu_streams = 2;
  o.transients = "external";  // one workspace, reused by both calls
  sdfc::Program p = sdfc::Program::compile_string(forkjoin(), o);
  Buffers b1(n), b2(n);
  cudaStream_t s1, s2;
  cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking);
  cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking);
  p.set_value("N", n);
  fill<<<(n + 255) / 256, 256>>>(b1.x, 1.0, n);
  fill<<<(n + 255) / 256, 256>>>(b2.x, 1000.0, n);
  cudaDeviceSynchronize();
  p.set_array("x", b1.x, static_cast<std::size_t>(n));
  p.set_array("y", b1.y, static_cast<std::size_t>(n));
  p.set_external_stream(s1);
  spin<<<1, 1, 0, s1>>>(20000);  // the first call starts late
  p.call();
  p.set_array("x", b2.x, static_cast<std::size_t>(n));
  p.set_array("y", b2.y, static_cast<std::size_t>(n));
  p.set_external_stream(s2);  // a different stream: the second call must still wait for the first
  p.call();
  cudaStreamSynchronize(s1);
  cudaStreamSynchronize(s2);
  auto r1 = b1.result(), r2 = b2.result();
  for (int i = 0; i < n; i += 4099) {
    double x1 = 1.0 + i, x2 = 1000.0 + i;
    ASSERT_EQ(r1[static_cast<std::size_t>(i)], (x1 * 2 + 1) + (x1 - 3)) << i;
    ASSERT_EQ(r2[static_cast<std::size_t>(i)], (x2 * 2 + 1) + (x2 - 3)) << i;
  }
  cudaStreamDestroy(s1);
  cudaStreamDestroy(s2);
}

TEST(GpuStream, BadStreamsAreRefusedAndChangeNothing) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  const int n = 1024;
  sdfc::Options o;
  o.target = "cuda";
  o.gpu_streams = 2;
  sdfc::Program p = sdfc::Program::compile_string(forkjoin(), o);
  Buffers buf(n);
  fill<<<(n + 255) / 256, 256>>>(buf.x, 0.0, n);
  cudaDeviceSynchronize();
  p.set_array("x", buf.x, static_cast<std::size_t>(n));
  p.set_array("y", buf.y, static_cast<std::size_t>(n));
  p.set_value("N", n);
  p.call();  // initialized, default stream
  // A stream being captured into a graph is refused.
  cudaStream_t cap;
  cudaStreamCreateWithFlags(&cap, cudaStreamNonBlocking);
  ASSERT_EQ(cudaStreamBeginCapture(cap, cudaStreamCaptureModeRelaxed), cudaSuccess);
  try {
    p.set_external_stream(cap);
    ADD_FAILURE() << "a capturing stream was accepted";
  } catch (const sdfc::Error& e) {
    EXPECT_NE(std::string(e.what()).find("being captured into a graph"), std::string::npos) << e.what();
  }
  cudaGraph_t g;
  cudaStreamEndCapture(cap, &g);
  if (g) cudaGraphDestroy(g);
  cudaStreamDestroy(cap);
  // A stream of another device (needs two GPUs).
  int devices = 0;
  cudaGetDeviceCount(&devices);
  if (devices > 1) {
    cudaSetDevice(1);
    cudaStream_t other;
    cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking);
    cudaSetDevice(0);
    try {
      p.set_external_stream(other);
      ADD_FAILURE() << "a stream of device 1 was accepted";
    } catch (const sdfc::Error& e) {
      EXPECT_NE(std::string(e.what()).find("another device"), std::string::npos) << e.what();
    }
    cudaSetDevice(1);
    cudaStreamDestroy(other);
    cudaSetDevice(0);
  } else {
    std::printf("[   NOTE   ] one GPU: the stream-of-another-device check did not run\n");
  }
  // Nothing changed: the program still runs on the default stream and returns with its results.
  p.call();
  auto r = buf.result();
  EXPECT_EQ(r[5], (5.0 * 2 + 1) + (5.0 - 3));
}

/// Every corpus GPU program, with --gpu-streams 0, 1, 2 and 4, behind a caller's stream that is
/// busy (a 20 ms spin kernel queued on it before the call): the program's copies from the host
/// inputs and its kernels must wait for the caller's work, and the results are complete once the
/// caller synchronizes its stream (the call itself returns once queued). Programs whose device
/// arguments are bound to host memory (program_gpu_handbuilt) cannot return before their results
/// exist and are refused with an external stream: ApiTest covers that refusal.
TEST(GpuStream, EveryCorpusProgramBehindABusyCallersStream) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  if (sdfc::test::corpus_dir().empty()) GTEST_SKIP() << "corpus not found";
  cudaStream_t s;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  int ran = 0;
  for (const std::string& file : sdfc::test::supported_corpus_gpu_programs()) {
    if (file.find("handbuilt") != std::string::npos) continue;
    std::string dir = sdfc::test::corpus_dir() + "/" + file.substr(0, file.find('/'));
    auto inputs = nlohmann::json::parse(sdfc::test::slurp(dir + "/inputs.json"));
    auto expected = nlohmann::json::parse(sdfc::test::slurp(dir + "/expected.json"));
    for (int streams : {0, 1, 2, 4}) {
      SCOPED_TRACE(file + " --gpu-streams " + std::to_string(streams));
      sdfc::Options o;
      o.target = "cuda";
      o.gpu_streams = streams;
      sdfc::Program p = sdfc::Program::compile_file(sdfc::test::corpus_dir() + "/" + file, o);
      auto arrays = sdfc::test::bind_corpus_inputs(p, inputs);
      // Device arguments (GT4Py's program_gpu.sdfg: GPU_Global arrays) get device memory, as a
      // caller with a stream of its own binds them.
      auto sdfg = sdfc::load_sdfg_file(sdfc::test::corpus_dir() + "/" + file);
      std::vector<std::pair<std::string, void*>> on_device;
      for (auto& a : p.arguments()) {
        const sdfc::DataDesc* d = a.kind == "array" ? sdfg->find_data(a.name) : nullptr;
        if (!d || d->storage != sdfc::StorageType::GPU_Global) continue;
        auto& t = arrays.at(a.name);
        void* dp = nullptr;
        ASSERT_EQ(cudaMalloc(&dp, t.bytes.size()), cudaSuccess);
        ASSERT_EQ(cudaMemcpy(dp, t.bytes.data(), t.bytes.size(), cudaMemcpyHostToDevice), cudaSuccess);
        p.set_array(a.name, dp, a.dtype, t.count);
        on_device.emplace_back(a.name, dp);
      }
      p.set_external_stream(s);
      spin<<<1, 1, 0, s>>>(20000);
      p.call();
      ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
      for (auto& [name, dp] : on_device) {
        auto& t = arrays.at(name);
        ASSERT_EQ(cudaMemcpy(t.bytes.data(), dp, t.bytes.size(), cudaMemcpyDeviceToHost), cudaSuccess);
        cudaFree(dp);
      }
      sdfc::test::expect_corpus_outputs(expected, arrays);
      ++ran;
    }
  }
  cudaStreamDestroy(s);
  std::printf("[   NOTE   ] %d program x stream-mode runs behind a busy caller's stream\n", ran);
}

namespace {

/// Four device arrays each of x, y and z (n doubles), as the two-state, loop and branch programs of
/// tests/TwoStages.h name them.
struct StageArrays {
  int n;
  std::vector<double*> x = std::vector<double*>(4), y = std::vector<double*>(4), z = std::vector<double*>(4);
  explicit StageArrays(int count) : n(count) {
    for (auto* v : {&x, &y, &z})
      for (auto& p : *v) EXPECT_EQ(cudaMalloc(&p, n * sizeof(double)), cudaSuccess);
  }
  ~StageArrays() {
    for (auto* v : {&x, &y, &z})
      for (auto* p : *v) cudaFree(p);
  }
  StageArrays(const StageArrays&) = delete;
  StageArrays& operator=(const StageArrays&) = delete;

  void bind(sdfc::Program& p, bool with_z = true) {
    for (int k = 0; k < 4; ++k) {
      p.set_array("x" + std::to_string(k), x[k], n);
      p.set_array("y" + std::to_string(k), y[k], n);
      if (with_z) p.set_array("z" + std::to_string(k), z[k], n);
    }
    p.set_value("N", n);
  }
  /// On `s`: x_k[i] = base + 10000 k + i; y and z zeroed (a missing event shows as a wrong sum).
  void refill(cudaStream_t s, double base) {
    for (int k = 0; k < 4; ++k) {
      ::fill<<<(n + 255) / 256, 256, 0, s>>>(x[k], base + 10000.0 * k, n);
      EXPECT_EQ(cudaMemsetAsync(y[k], 0, n * sizeof(double), s), cudaSuccess);
      EXPECT_EQ(cudaMemsetAsync(z[k], 0, n * sizeof(double), s), cudaSuccess);
    }
  }
  /// Checks every element of `a`: want(i).
  template <typename Want>
  void expect(double* a, const std::string& what, Want want) {
    std::vector<double> h(static_cast<std::size_t>(n));
    ASSERT_EQ(cudaMemcpy(h.data(), a, n * sizeof(double), cudaMemcpyDeviceToHost), cudaSuccess);
    for (int i = 0; i < n; ++i) ASSERT_EQ(h[static_cast<std::size_t>(i)], want(i)) << what << "[" << i << "]";
  }
};

/// Calls `p` after the work queued on `s`: behind a still busy caller's stream `s` (external), or
/// blocking once `s` finished; returns when the results are visible.
void call_after(sdfc::Program& p, cudaStream_t s, bool external) {
  if (external)
    spin<<<1, 1, 0, s>>>(2000);  // the caller's stream is still busy when the call starts
  else
    ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  p.call();
  if (external) ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
}

/// Three calls of `p` after the work queued on `s` (call_after), each from x_k[i] = x0[k] + i,
/// x0[k] = base + 10000 k (StageArrays::refill): then every x_k[i] must be want(x0)[k] + i.
template <typename Want>
void expect_three_calls(sdfc::Program& p, StageArrays& a, cudaStream_t s, bool external, Want want) {
  for (int round = 0; round < 3; ++round) {
    double base = 1000.0 * (round + 1);
    a.refill(s, base);
    call_after(p, s, external);
    std::vector<double> x = want(std::vector<double>{base, base + 10000.0, base + 20000.0, base + 30000.0});
    for (int k = 0; k < 4; ++k)
      a.expect(a.x[k], "x" + std::to_string(k) + ", round " + std::to_string(round),
               [&](int i) { return x[static_cast<std::size_t>(k)] + i; });
  }
}

/// A two-state or loop program's shape: shift, joined, and --gpu-streams.
struct StageConfig {
  int shift;
  bool joined;
  int streams;
};

/// A stream setting of the loop tests, in stream mode or under --gpu-graph.
struct GraphStageConfig {
  int streams, shift;
  bool graph;
};

sdfc::Program compile_cuda(const std::string& sdfg, int streams, bool graph = false) {
  sdfc::Options o;
  o.target = "cuda";
  o.gpu_streams = streams;
  o.gpu_graph = graph;
  return sdfc::Program::compile_string(sdfg, o);
}

}  // namespace

// Schedules across states (tests/TwoStages.h): two dependent states of four kernels each, the
// second state's kernels reading first-state results of their own stream (shift 0) or of another
// stream (shift 1, an event across the state boundary), chained (no join between the states) or
// joined (a condition on the edge), in every stream mode, behind a busy caller's stream and
// blocking. The kernels' loop counts differ, so a missing event lets a second-state kernel read a
// stale or half-written input; every element of every output is checked on every call.
TEST(GpuStream, ChainedStatesGiveTheirResultsInEveryStreamMode) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  const int reps[2][4] = {{400, 20, 20, 20}, {20, 400, 400, 400}};
  StageArrays a(3000);
  cudaStream_t s;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  std::vector<StageConfig> configs;  // 10 programs (each compiled once: nvcc's time)
  for (int shift : {0, 1})
    for (bool joined : {false, true})
      for (int streams : {0, 4}) configs.push_back({shift, joined, streams});
  configs.push_back({1, false, 1});
  configs.push_back({1, false, 2});
  int runs = 0;
  for (const StageConfig& c : configs) {
    sdfc::Program p = compile_cuda(sdfc::test::two_stages(reps, c.shift, c.joined), c.streams);
    a.bind(p);
    for (bool external : {true, false}) {
      SCOPED_TRACE(::testing::Message() << "shift " << c.shift << " joined " << c.joined << " --gpu-streams "
                                        << c.streams << " caller's stream " << external);
      p.set_external_stream(external ? s : nullptr);
      for (int round = 0; round < 3; ++round) {
        double base = 1000.0 * (round + 1) + 100.0 * c.shift;
        a.refill(s, base);
        call_after(p, s, external);
        for (int k = 0; k < 4; ++k) {
          double x = base + 10000.0 * ((k + c.shift) % 4);
          a.expect(a.z[k], "z" + std::to_string(k) + ", round " + std::to_string(round),
                   [&](int i) { return sdfc::test::two_stages_expected(reps, c.shift, k, x + i); });
        }
      }
      ++runs;
    }
    p.set_external_stream(nullptr);
  }
  cudaStreamDestroy(s);
  std::printf("[   NOTE   ] %d runs of two-state programs, 3 calls each, every element checked\n", runs);
}

// A time loop over two dependent states (tests/TwoStages.h, loop_stages): with several streams the
// streams carry their work from one iteration into the next, ordered by events across the back
// edge (shift 1: every kernel reads what another stream wrote in the previous iteration, and that
// stream overwrites it after the read). The long kernels move to another stream every iteration,
// so a missing event lets a kernel read a stale or half-written input; every element is checked
// after each of 3 calls, behind a busy caller's stream and blocking.
TEST(GpuStream, LoopsCarryingTheirStreamsGiveTheirResultsInEveryStreamMode) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  const int T = 7;
  const int reps[2][4] = {{400, 20, 20, 20}, {20, 400, 400, 400}};
  StageArrays a(3000);
  cudaStream_t s;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  std::vector<StageConfig> configs{{1, false, 0}, {1, false, 1}, {1, false, 2},
                                   {1, false, 4}, {0, false, 4}, {1, true, 4}};
  int runs = 0;
  for (const StageConfig& c : configs) {
    sdfc::Program p = compile_cuda(sdfc::test::loop_stages(reps, c.shift, c.joined, true), c.streams);
    a.bind(p, false);
    p.set_value("T", T);
    for (bool external : {true, false}) {
      SCOPED_TRACE(::testing::Message() << "shift " << c.shift << " joined " << c.joined << " --gpu-streams "
                                        << c.streams << " caller's stream " << external);
      p.set_external_stream(external ? s : nullptr);
      expect_three_calls(p, a, s, external, [&](const std::vector<double>& x0) {
        return sdfc::test::loop_stages_expected(reps, c.shift, true, T, x0);
      });
      ++runs;
    }
    p.set_external_stream(nullptr);
  }
  cudaStreamDestroy(s);
  std::printf(
      "[   NOTE   ] %d runs of time loops over two states (7 iterations), 3 calls each, every element checked\n", runs);
}

// A state of four kernels and a conditional whose branches continue its chain of states
// (tests/TwoStages.h, branch_stages, shift 1): either branch gives its results in every stream
// setting, behind a busy caller's stream and blocking, over 3 calls each.
TEST(GpuStream, BranchesContinuingAChainGiveTheirResultsInEveryStreamMode) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  const int reps[3][4] = {{400, 20, 20, 20}, {20, 400, 400, 400}, {30, 30, 30, 300}};
  StageArrays a(3000);
  cudaStream_t s;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  int runs = 0;
  for (int streams : {0, 1, 2, 4}) {
    sdfc::Program p = compile_cuda(sdfc::test::branch_stages(reps, 1), streams);
    a.bind(p);
    for (bool then : {true, false})
      for (bool external : {true, false}) {
        SCOPED_TRACE(::testing::Message()
                     << "--gpu-streams " << streams << " then " << then << " caller's stream " << external);
        p.set_value("C", then ? 1 : 0);
        p.set_external_stream(external ? s : nullptr);
        for (int round = 0; round < 3; ++round) {
          double base = 1000.0 * (round + 1);
          a.refill(s, base);
          call_after(p, s, external);
          for (int k = 0; k < 4; ++k) {
            double x = base + 10000.0 * (then ? (k + 1) % 4 : k);
            a.expect(a.z[k], "z" + std::to_string(k) + ", round " + std::to_string(round),
                     [&](int i) { return sdfc::test::branch_stages_expected(reps, 1, then, k, x + i); });
          }
        }
        ++runs;
      }
    p.set_external_stream(nullptr);
  }
  cudaStreamDestroy(s);
  std::printf("[   NOTE   ] %d runs of branches continuing a chain, 3 calls each, every element checked\n", runs);
}

// A time loop whose body is a chain with a conditional in it (tests/TwoStages.h,
// loop_branch_stages): step -> (even | odd) -> back. With several streams the streams carry their
// work through the conditional, into the state after it and into the next iteration; "back" waits
// for both branches' events, one of which holds an older record or none. The branch alternates
// every iteration and the long kernels sit on different streams in each state, so a missing event
// shows as a wrong sum; every element is checked after each of 3 calls (7 and 8 iterations: the
// last one odd and even), behind a busy caller's stream and blocking; and under --gpu-graph with 2
// and 4 streams (the loop captured, the events graph edges; replayed while T stays the same).
TEST(GpuStream, ConditionalsInsideALoopChainGiveTheirResultsInEveryStreamMode) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  const int reps[4][4] = {{400, 20, 20, 20}, {20, 400, 20, 20}, {20, 20, 400, 20}, {20, 20, 20, 400}};
  StageArrays a(3000);
  cudaStream_t s;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  std::vector<GraphStageConfig> configs{{0, 0, false}, {1, 0, false}, {2, 0, false}, {4, 0, false}, {0, 1, false},
                                        {1, 1, false}, {2, 1, false}, {4, 1, false}, {2, 1, true},  {4, 1, true}};
  int runs = 0;
  for (const GraphStageConfig& c : configs) {
    const int streams = c.streams, shift = c.shift;
    sdfc::Program p = compile_cuda(sdfc::test::loop_branch_stages(reps, shift), streams, c.graph);
    a.bind(p);
    for (int T : {7, 8})
      for (bool external : {true, false}) {
        SCOPED_TRACE(::testing::Message() << "shift " << shift << " --gpu-streams " << streams << " graph " << c.graph
                                          << " T " << T << " caller's stream " << external);
        p.set_value("T", T);
        p.set_external_stream(external ? s : nullptr);
        expect_three_calls(p, a, s, external, [&](const std::vector<double>& x0) {
          return sdfc::test::loop_branch_stages_expected(reps, shift, T, x0);
        });
        ++runs;
      }
    p.set_external_stream(nullptr);
  }
  cudaStreamDestroy(s);
  std::printf(
      "[   NOTE   ] %d runs of time loops with a conditional in the body, 3 calls each, every element checked\n", runs);
}

// A time loop with an inner loop of substeps (tests/TwoStages.h, loop_substeps): with several
// streams the streams carry their work into the inner loop, across its iterations, out of it and
// into the next time step; a kernel of the inner loop waits for the writers before the loop and in
// the previous substep, and "back" for both (also with no substep at all: S = 0). Every element is
// checked after each of 3 calls, behind a busy caller's stream and blocking; and under --gpu-graph
// with 4 streams.
TEST(GpuStream, InnerLoopsInsideALoopChainGiveTheirResultsInEveryStreamMode) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  const int reps[4][4] = {{400, 20, 20, 20}, {20, 400, 20, 20}, {20, 20, 400, 20}, {20, 20, 20, 400}};
  StageArrays a(3000);
  cudaStream_t s;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  std::vector<GraphStageConfig> configs{{0, 1, false}, {1, 1, false}, {2, 1, false},
                                        {4, 0, false}, {4, 1, false}, {4, 1, true}};
  const int T = 3;
  int runs = 0;
  for (const GraphStageConfig& c : configs) {
    sdfc::Program p = compile_cuda(sdfc::test::loop_substeps(reps, c.shift), c.streams, c.graph);
    a.bind(p);
    p.set_value("T", T);
    for (int S : {0, 1, 3})
      for (bool external : {true, false}) {
        SCOPED_TRACE(::testing::Message() << "shift " << c.shift << " --gpu-streams " << c.streams << " graph "
                                          << c.graph << " S " << S << " caller's stream " << external);
        p.set_value("S", S);
        p.set_external_stream(external ? s : nullptr);
        expect_three_calls(p, a, s, external, [&](const std::vector<double>& x0) {
          return sdfc::test::loop_substeps_expected(reps, c.shift, T, S, x0);
        });
        ++runs;
      }
    p.set_external_stream(nullptr);
  }
  cudaStreamDestroy(s);
  std::printf("[   NOTE   ] %d runs of time loops with inner substep loops, 3 calls each, every element checked\n",
              runs);
}

// A host tasklet that queues a copy on __dace_current_stream (tests/StreamTasklet.h): the copy
// waits for the kernel, and the host map after it reads the copied values, also when the caller's
// stream is still busy when the call starts (a missing wait then reads stale host memory). The
// same with a synchronous cudaMemcpy, before which the host waits for the kernel.
TEST(GpuStream, StreamTaskletsAreOrderedInEveryStreamMode) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  const int n = 1 << 20;
  double *ga = nullptr, *gb = nullptr;
  ASSERT_EQ(cudaMalloc(&ga, n * sizeof(double)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&gb, n * sizeof(double)), cudaSuccess);
  std::vector<double> c(static_cast<std::size_t>(n));
  cudaStream_t s;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  int runs = 0;
  // The copy on the tasklet's stream, and (legacy) a synchronous cudaMemcpy outside every stream,
  // before which the host must wait for the kernel.
  for (bool legacy : {false, true})
    for (int streams : {0, 1, 2, 4}) {
      std::string program = sdfc::write_sdfg(*sdfc::test::stream_tasklet_program(legacy));
      sdfc::Options o;
      o.target = "cuda";
      o.gpu_streams = streams;
      sdfc::Program p = sdfc::Program::compile_string(program, o);
      p.set_array("gA", ga, static_cast<std::size_t>(n));
      p.set_array("gB", gb, static_cast<std::size_t>(n));
      p.set_array("C", c.data(), c.size());
      p.set_value("N", n);
      for (bool external : {true, false}) {
        SCOPED_TRACE(::testing::Message()
                     << "legacy copy " << legacy << " --gpu-streams " << streams << " caller's stream " << external);
        p.set_external_stream(external ? s : nullptr);
        for (int round = 0; round < 3; ++round) {
          double base = 100.0 * (round + 1) + 1000.0 * streams + (external ? 10000.0 : 0.0);
          fill<<<(n + 255) / 256, 256, 0, s>>>(ga, base, n);
          ASSERT_EQ(cudaMemsetAsync(gb, 0, n * sizeof(double), s), cudaSuccess);
          std::fill(c.begin(), c.end(), -1.0);
          if (external)
            spin<<<1, 1, 0, s>>>(2000);  // the call's work waits behind this
          else
            ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
          p.call();  // C is host memory: the call returns after the host map wrote it
          for (int i = 0; i < n; ++i)
            ASSERT_EQ(c[static_cast<std::size_t>(i)], 2.0 * (base + i) + 1.0) << "C[" << i << "] round " << round;
        }
        ++runs;
      }
      p.set_external_stream(nullptr);
    }
  cudaStreamDestroy(s);
  cudaFree(ga);
  cudaFree(gb);
  std::printf("[   NOTE   ] %d runs of a stream tasklet's program, 3 calls each, every element checked\n", runs);
}
