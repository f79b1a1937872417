// Graph mode (--gpu-graph) on the GPU (built with -DSDFC_GPU_TESTS=ON; the H200 runs it through
// scripts/gpu-check.sh's graph phase): a program with a fork-join of kernels through transients
// inside a loop of T iterations, on device arrays, compiled with --gpu-graph in every memory mode
// and with 0, 1, 2 and 4 streams, gives the loop's results (computed here) when calls replay the
// captured graph with new data behind the same pointers, when the pointers swap between two
// buffer pairs every call (the graph is updated), when N and T change (re-captured), and on a
// caller's stream. A data-dependent loop (kernel states, a copy to the host and a condition on it)
// is split into graph segments and gives the loop's results in every mode and stream setting,
// with other trip counts, swapped pointers and on a caller's stream. Copies from and to host
// arguments (pageable memory) are graph nodes that read and write the call's data. And every corpus GPU program the
// gpu-graph pass accepts (GT4Py's files as GT4Py writes them among them) gives DaCe's results over three calls on the
// same device arrays (a capture, then replays), with GT4Py's metrics off and on (the timers' branch abandons the
// capture and the call runs without a graph). Each test skips without a GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "TestUtil.h"
#include "compiler/Compile.h"
#include "ir/Builder.h"
#include "ir/JsonWriter.h"
#include "sdfc/sdfc.h"

namespace {

bool have_gpu() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

__global__ void fill(double* x, double scale, double shift, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = scale * i + shift;
}

/// y = 0; for k in 0..T: a = 2x + k, c = x - 3 (two independent kernels), y = a + c. So y[i] is
/// 3 x[i] - 3 + (T - 1) for T >= 1, and 0 for T = 0.
std::string looped_forkjoin() {
  sdfc::SDFGBuilder b("graph_loop");
  b.symbol("N").symbol("T");
  b.array("x", sdfc::DType::Float64, {"N"}, false, sdfc::StorageType::GPU_Global);
  b.array("y", sdfc::DType::Float64, {"N"}, false, sdfc::StorageType::GPU_Global);
  b.array("a", sdfc::DType::Float64, {"N"}, true, sdfc::StorageType::GPU_Global);
  b.array("c", sdfc::DType::Float64, {"N"}, true, sdfc::StorageType::GPU_Global);
  b.state("zero").mapped_tasklet("zero", {{"i", "0:N"}}, {}, "o = 0.0", {{"o", "y[i]"}},
                                 sdfc::ScheduleType::GPU_Device);
  auto body = b.loop("steps", "k", "0", "k < T", "k + 1");
  std::map<std::string, int> acc;
  body.mapped_tasklet("left", {{"i", "0:N"}}, {{"v", "x[i]"}}, "o = v * 2.0 + k", {{"o", "a[i]"}},
                      sdfc::ScheduleType::GPU_Device, &acc);
  body.mapped_tasklet("right", {{"i", "0:N"}}, {{"v", "x[i]"}}, "o = v - 3.0", {{"o", "c[i]"}},
                      sdfc::ScheduleType::GPU_Device, &acc);
  body.mapped_tasklet("merge", {{"i", "0:N"}}, {{"p", "a[i]"}, {"q", "c[i]"}}, "o = p + q", {{"o", "y[i]"}},
                      sdfc::ScheduleType::GPU_Device, &acc);
  b.chain();
  return sdfc::write_sdfg(*b.build());
}

/// x is halved until x[0] <= 1, then incremented: a data-dependent loop (GPU states, a copy of
/// x[0] to a host scalar, a condition on it) that --gpu-graph splits into graph segments: the
/// kernel states replay their graphs once per iteration, the copy and the condition run on the
/// host. The same SDFG is tests/passes/gpu_graph_segments.sdfg.
std::string halving() {
  sdfc::SDFGBuilder b("graph_halving");
  b.symbol("N");
  b.array("x", sdfc::DType::Float64, {"N"}, false, sdfc::StorageType::GPU_Global);
  b.array("y", sdfc::DType::Float64, {"N"}, true, sdfc::StorageType::GPU_Global);
  b.array("total", sdfc::DType::Float64, {"1"}, true, sdfc::StorageType::GPU_Global);
  b.scalar("h", sdfc::DType::Float64, true);
  b.state("half").mapped_tasklet("half", {{"i", "0:N"}}, {{"v", "x[i]"}}, "o = v * 0.5", {{"o", "y[i]"}},
                                 sdfc::ScheduleType::GPU_Device);
  b.state("back").mapped_tasklet("back", {{"i", "0:N"}}, {{"v", "y[i]"}}, "o = v", {{"o", "x[i]"}},
                                 sdfc::ScheduleType::GPU_Device);
  b.state("probe").mapped_tasklet("probe", {{"i", "0:1"}}, {{"v", "x[i]"}}, "o = v", {{"o", "total[i]"}},
                                  sdfc::ScheduleType::GPU_Device);
  auto fetch = b.state("fetch");
  fetch.copy(fetch.access("total"), fetch.access("h"), "0", "0");
  b.state("done").mapped_tasklet("done", {{"i", "0:N"}}, {{"v", "x[i]"}}, "o = v + 1.0", {{"o", "x[i]"}},
                                 sdfc::ScheduleType::GPU_Device);
  b.edge(0, 1).edge(1, 2).edge(2, 3).edge(3, 0, "h > 1.0").edge(3, 4, "not (h > 1.0)");
  return sdfc::write_sdfg(*b.build());
}

/// y = 2x + 1 on host arrays, as DaCe's GPU programs take them: x is copied to a GPU transient,
/// a kernel computes, the result is copied back into y. The copies from and to the arguments'
/// pageable host memory are nodes of the graph: a replay reads x as it is at the call.
std::string host_roundtrip() {
  sdfc::SDFGBuilder b("graph_host_roundtrip");
  b.symbol("N");
  b.array("x", sdfc::DType::Float64, {"N"});
  b.array("y", sdfc::DType::Float64, {"N"});
  b.array("gx", sdfc::DType::Float64, {"N"}, true, sdfc::StorageType::GPU_Global);
  b.array("gy", sdfc::DType::Float64, {"N"}, true, sdfc::StorageType::GPU_Global);
  auto s = b.state("s");
  int gx = s.access("gx"), gy = s.access("gy");
  s.copy(s.access("x"), gx, "0:N", "0:N");
  auto [entry, exit] = s.map("k", {"i"}, {"0:N"}, sdfc::ScheduleType::GPU_Device);
  int t = s.tasklet("k", {"v"}, {"o"}, "o = v * 2.0 + 1.0", sdfc::Language::Python, entry);
  s.edge(gx, "", entry, "IN_gx", "gx", "0:N");
  s.edge(entry, "OUT_gx", t, "v", "gx", "i");
  s.edge(t, "o", exit, "IN_gy", "gy", "i");
  s.edge(exit, "OUT_gy", gy, "", "gy", "0:N");
  s.copy(gy, s.access("y"), "0:N", "0:N");
  return sdfc::write_sdfg(*b.build());
}

/// x[i] after halving(): halved until x[0] <= 1 (at least once), plus one.
std::vector<double> halving_result(const std::vector<double>& x) {
  double scale = 1.0, first = x[0];
  do {
    first *= 0.5;
    scale *= 0.5;
  } while (first > 1.0);
  std::vector<double> out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) out[i] = x[i] * scale + 1.0;
  return out;
}

struct Pair {
  int n;
  double *x = nullptr, *y = nullptr;
  explicit Pair(int count) : n(count) {
    cudaMalloc(&x, n * sizeof(double));
    cudaMalloc(&y, n * sizeof(double));
  }
  ~Pair() {
    cudaFree(x);
    cudaFree(y);
  }
  void fill_x(double scale, double shift, cudaStream_t s = nullptr) {
    fill<<<(n + 255) / 256, 256, 0, s>>>(x, scale, shift, n);
  }
};

/// The first `n` elements of `p.y` against the loop's closed form for x[i] = scale * i + shift.
void expect_result(const Pair& p, int n, long long t, double scale, double shift, const std::string& what) {
  std::vector<double> h(static_cast<std::size_t>(n));
  ASSERT_EQ(cudaMemcpy(h.data(), p.y, n * sizeof(double), cudaMemcpyDeviceToHost), cudaSuccess) << what;
  int bad = 0;
  for (int i = 0; i < n && bad < 5; ++i) {
    double x = scale * i + shift;
    double want = t > 0 ? 3 * x - 3 + static_cast<double>(t - 1) : 0.0;
    if (std::abs(h[static_cast<std::size_t>(i)] - want) > 1e-9 * (1 + std::abs(want))) {
      ADD_FAILURE() << what << ": y[" << i << "] = " << h[static_cast<std::size_t>(i)] << ", want " << want;
      ++bad;
    }
  }
}

/// The text naming one cell of the stream × memory-mode matrix (for traces and failures).
std::string matrix_cell(int streams, const char* mode) {
  return std::string("--gpu-streams ") + std::to_string(streams) + " --transients " + (*mode ? mode : "(as declared)");
}

/// CUDA in graph mode with `streams` internal streams and transients in `mode` ("" = as declared).
sdfc::Options graph_options(int streams, const char* mode) {
  sdfc::Options o;
  o.target = "cuda";
  o.gpu_streams = streams;
  o.transients = mode;
  o.gpu_graph = true;
  return o;
}

}  // namespace

TEST(GpuGraph, ReplaysUpdatesAndRecapturesInEveryModeAndStreamSetting) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  const int n = 3000;
  for (int streams : {0, 1, 2, 4})
    for (const char* mode : {"", "scoped", "persistent", "pool", "external"}) {
      std::string what = matrix_cell(streams, mode);
      SCOPED_TRACE(what);
      sdfc::Options o = graph_options(streams, mode);
      sdfc::Program p = sdfc::Program::compile_string(looped_forkjoin(), o);
      Pair one(n), two(n);
      auto bind = [&](Pair& q, int count, long long t) {
        p.set_array("x", q.x, static_cast<std::size_t>(count));
        p.set_array("y", q.y, static_cast<std::size_t>(count));
        p.set_value("N", static_cast<std::int64_t>(count));
        p.set_value("T", static_cast<std::int64_t>(t));
      };
      // 1. capture (first call), then replays with new data behind the same pointers
      bind(one, n, 5);
      for (int call = 0; call < 4; ++call) {
        one.fill_x(1.0 + call, -2.0 * call);
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        p.call();
        expect_result(one, n, 5, 1.0 + call, -2.0 * call, what + ", same pointers, call " + std::to_string(call));
      }
      int first = p.graph_captures();
      EXPECT_GE(first, 1);
      // 2. the pointers swap between two buffer pairs every call: the second pair is captured once,
      // then both replay from the graph cache
      for (int call = 0; call < 6; ++call) {
        Pair& q = call % 2 ? two : one;
        q.fill_x(0.5, call, nullptr);
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        bind(q, n, 5);
        p.call();
        expect_result(q, n, 5, 0.5, call, what + ", swapped pointers, call " + std::to_string(call));
      }
      EXPECT_EQ(p.graph_captures(), 2 * first);
      // 3. N and T change: re-captured (other grids, another number of iterations)
      for (auto [count, t] : {std::pair{n / 2, 5LL}, {n / 2, 2LL}, {n, 7LL}, {n, 7LL}}) {
        one.fill_x(2.0, 1.0);
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        bind(one, count, t);
        p.call();
        expect_result(one, count, t, 2.0, 1.0, what + ", N " + std::to_string(count) + " T " + std::to_string(t));
      }
      // 4. on a caller's stream: the fill before and the read after are ordered by the stream
      cudaStream_t s;
      ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
      p.set_external_stream(s);
      bind(one, n, 3);
      for (int call = 0; call < 3; ++call) {
        one.fill_x(-1.0, call, s);
        p.call();
        ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
        expect_result(one, n, 3, -1.0, call, what + ", caller's stream, call " + std::to_string(call));
      }
      p.set_external_stream(nullptr);
      cudaStreamDestroy(s);
    }
}

TEST(GpuGraph, SegmentsSplitADataDependentLoopInEveryModeAndStreamSetting) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  const int n = 2000;
  for (int streams : {0, 1, 2, 4})
    for (const char* mode : {"", "scoped", "persistent", "pool", "external"}) {
      std::string what = matrix_cell(streams, mode);
      SCOPED_TRACE(what);
      sdfc::Options o = graph_options(streams, mode);
      sdfc::Program p = sdfc::Program::compile_string(halving(), o);
      Pair one(n), two(n);
      cudaStream_t s;
      ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
      // the first element decides the number of iterations: 6, 2, 9, 1, ... (captures, then replays
      // with other data and so other trip counts, swapped pointers, a caller's stream)
      const double firsts[] = {40.0, 3.0, 300.0, 1.5, 40.0, 3.0, 300.0, 1.5};
      for (int call = 0; call < 8; ++call) {
        Pair& q = call >= 4 && call % 2 ? two : one;
        bool on_stream = call >= 6;
        if (on_stream) p.set_external_stream(s);
        std::vector<double> x(n);
        for (int i = 0; i < n; ++i) x[static_cast<std::size_t>(i)] = firsts[call] * (1.0 + 0.001 * i);
        ASSERT_EQ(cudaMemcpy(q.x, x.data(), n * sizeof(double), cudaMemcpyHostToDevice), cudaSuccess);
        p.set_array("x", q.x, static_cast<std::size_t>(n));
        p.set_value("N", static_cast<std::int64_t>(n));
        p.call();
        if (on_stream) ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
        std::vector<double> got(n), want = halving_result(x);
        ASSERT_EQ(cudaMemcpy(got.data(), q.x, n * sizeof(double), cudaMemcpyDeviceToHost), cudaSuccess);
        int bad = 0;
        for (int i = 0; i < n && bad < 5; ++i)
          if (std::abs(got[static_cast<std::size_t>(i)] - want[static_cast<std::size_t>(i)]) > 1e-12 * want[0]) {
            ADD_FAILURE() << what << ", call " << call << ": x[" << i << "] = " << got[static_cast<std::size_t>(i)]
                          << ", want " << want[static_cast<std::size_t>(i)];
            ++bad;
          }
      }
      p.set_external_stream(nullptr);
      cudaStreamDestroy(s);
    }
}

TEST(GpuGraph, CopiesFromAndToHostArgumentsReplayWithTheCallsData) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  const int n = 5000;
  for (int streams : {0, 2})
    for (const char* mode : {"", "persistent", "pool"}) {
      std::string what = matrix_cell(streams, mode);
      SCOPED_TRACE(what);
      sdfc::Options o = graph_options(streams, mode);
      sdfc::Program p = sdfc::Program::compile_string(host_roundtrip(), o);
      std::vector<double> x1(n), y1(n), x2(n), y2(n);
      cudaStream_t s;
      ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
      for (int call = 0; call < 8; ++call) {  // same pointers with new data, then swapped, then a caller's stream
        bool second = call >= 4 && call % 2;
        std::vector<double>& x = second ? x2 : x1;
        std::vector<double>& y = second ? y2 : y1;
        for (int i = 0; i < n; ++i) x[static_cast<std::size_t>(i)] = call * 100.0 + i;
        std::fill(y.begin(), y.end(), -1.0);
        if (call >= 6) p.set_external_stream(s);
        p.set_array("x", x.data(), static_cast<std::size_t>(n));
        p.set_array("y", y.data(), static_cast<std::size_t>(n));
        p.set_value("N", static_cast<std::int64_t>(n));
        p.call();
        if (call >= 6) ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
        int bad = 0;
        for (int i = 0; i < n && bad < 5; ++i)
          if (y[static_cast<std::size_t>(i)] != 2.0 * (call * 100.0 + i) + 1.0) {
            ADD_FAILURE() << what << ", call " << call << ": y[" << i << "] = " << y[static_cast<std::size_t>(i)];
            ++bad;
          }
      }
      p.set_external_stream(nullptr);
      cudaStreamDestroy(s);
    }
}

/// A corpus program bound to device copies of its GPU arrays (allocated once: calls keep the pointers).
struct OnDevice {
  std::unique_ptr<sdfc::Program> p;
  std::map<std::string, sdfc::test::TypedArray> arrays, pristine;
  std::vector<std::pair<std::string, void*>> device;

  OnDevice(const std::string& path, const sdfc::Options& o, const nlohmann::json& inputs)
      : p(std::make_unique<sdfc::Program>(sdfc::Program::compile_file(path, o))) {
    auto sdfg = sdfc::load_sdfg_file(path);
    arrays = sdfc::test::bind_corpus_inputs(*p, inputs);
    pristine = arrays;
    for (auto& a : p->arguments()) {
      const sdfc::DataDesc* d = a.kind == "array" ? sdfg->find_data(a.name) : nullptr;
      if (!d || d->storage != sdfc::StorageType::GPU_Global) continue;
      void* dp = nullptr;
      EXPECT_EQ(cudaMalloc(&dp, arrays.at(a.name).bytes.size()), cudaSuccess);
      p->set_array(a.name, dp, a.dtype, arrays.at(a.name).count);
      device.emplace_back(a.name, dp);
    }
  }
  ~OnDevice() {
    for (auto& [name, dp] : device) cudaFree(dp);
  }

  /// One call on the inputs as read (device arrays uploaded again, host arrays restored in the same
  /// buffers); the arrays it left.
  const std::map<std::string, sdfc::test::TypedArray>& call() {
    for (auto& entry : arrays) {
      const std::string& name = entry.first;
      auto& from = pristine.at(name);
      auto it = std::find_if(device.begin(), device.end(), [&](auto& e) { return e.first == name; });
      if (it == device.end())
        std::copy(from.bytes.begin(), from.bytes.end(), entry.second.bytes.begin());
      else
        EXPECT_EQ(cudaMemcpy(it->second, from.bytes.data(), from.bytes.size(), cudaMemcpyHostToDevice), cudaSuccess);
    }
    p->call();
    for (auto& [name, dp] : device) {
      auto& t = arrays.at(name);
      EXPECT_EQ(cudaMemcpy(t.bytes.data(), dp, t.bytes.size(), cudaMemcpyDeviceToHost), cudaSuccess);
    }
    return arrays;
  }
};

// GT4Py computes a kernel's scalar argument (dt / nsub, from two scalar arguments that are symbols)
// in host tasklets of the kernel's state. In graph mode they run only when the graph is captured:
// calls with the symbols changed (one at a time, and back) give the plain program's results bit
// for bit, and capture only for a new (dt, nsub) of an instance, so a replay's baked-in value is
// always right.
TEST(GpuGraph, HostScalarTaskletsRunOnlyWhenTheGraphIsCaptured) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  if (sdfc::test::corpus_dir().empty()) GTEST_SKIP() << "corpus not found";
  std::string dir = sdfc::test::corpus_dir() + "/gt4py_mixed_scalars_s";
  auto inputs = nlohmann::json::parse(sdfc::test::slurp(dir + "/inputs.json"));
  sdfc::Options plain_options;
  plain_options.target = "cuda";
  OnDevice graph(dir + "/program_gpu.sdfg", graph_options(2, ""), inputs);
  OnDevice plain(dir + "/program_gpu.sdfg", plain_options, inputs);
  struct Call {
    double dt;
    int nsub, captures;
  };
  // nsub is also a symbol of the program's init: changing it initializes a new instance (whose
  // graph caches start empty), dt is not.
  for (Call c : {Call{0.75, 3, 1}, Call{0.75, 3, 1}, Call{0.5, 3, 2}, Call{0.75, 3, 2}, Call{0.5, 2, 1},
                 Call{0.5, 2, 1}, Call{0.25, 2, 2}}) {
    SCOPED_TRACE("dt = " + std::to_string(c.dt) + ", nsub = " + std::to_string(c.nsub));
    for (OnDevice* d : {&graph, &plain}) {
      d->p->set_value("dt", c.dt);
      d->p->set_value("nsub", c.nsub);
    }
    auto want = plain.call();
    auto got = graph.call();
    EXPECT_EQ(graph.p->graph_captures(), c.captures);
    for (const char* out : {"x_out", "flag"})
      EXPECT_TRUE(got.at(out).bytes == want.at(out).bytes) << out << " differs from the plain call's";
    bool moved = false;  // the calls compute something: x_out is not x
    for (std::size_t i = 0; i < want.at("x").count; ++i)
      moved |= sdfc::test::element_value(want.at("x_out"), i) != sdfc::test::element_value(want.at("x"), i);
    EXPECT_TRUE(moved);
  }
}

TEST(GpuGraph, EveryCorpusProgramItAcceptsReplaysDaCesResults) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  if (sdfc::test::corpus_dir().empty()) GTEST_SKIP() << "corpus not found";
  int accepted = 0, refused = 0;
  for (const std::string& file : sdfc::test::supported_corpus_gpu_programs()) {
    if (file.find("handbuilt") != std::string::npos) continue;
    std::string path = sdfc::test::corpus_dir() + "/" + file;
    std::string dir = path.substr(0, path.rfind('/'));
    bool gt4py = file.rfind("gt4py_", 0) == 0;
    auto expected = nlohmann::json::parse(sdfc::test::slurp(dir + "/expected.json"));
    bool was_refused = false;
    for (int level : gt4py ? std::vector<int>{0, 10} : std::vector<int>{-1}) {
      SCOPED_TRACE(file + (level >= 0 ? " gt_metrics_level " + std::to_string(level) : ""));
      auto inputs = nlohmann::json::parse(sdfc::test::slurp(dir + "/inputs.json"));
      if (level >= 0) inputs["symbols"]["gt_metrics_level"]["value"] = level;
      std::unique_ptr<OnDevice> d;
      try {
        d = std::make_unique<OnDevice>(path, graph_options(2, ""), inputs);
      } catch (const sdfc::Error& e) {
        ASSERT_NE(std::string(e.what()).find("--gpu-graph: "), std::string::npos) << file << ": " << e.what();
        was_refused = true;
        break;
      }
      for (int call = 0; call < 3; ++call) {  // a capture, then replays (or, with metrics, plain calls)
        SCOPED_TRACE("call " + std::to_string(call));
        auto& arrays = d->call();
        sdfc::test::expect_corpus_outputs(expected, arrays);
        if (level > 0) {
          double t = sdfc::test::element_value(arrays.at("gt_compute_time"), 0);
          EXPECT_TRUE(t > 0.0 && t < 60.0) << "gt_compute_time = " << t;
        }
      }
    }
    ++(was_refused ? refused : accepted);
  }
  std::printf("[   NOTE   ] --gpu-graph: %d corpus GPU programs accepted and matched, %d refused\n", accepted, refused);
  EXPECT_GT(accepted, 0);
}
