// A program of two dependent states of four kernels each, on device arrays: state "first" computes
// y_k from x_k, state "second" computes z_k from y_{(k + shift) % 4}. With --gpu-streams 4 each
// state's kernels run on streams 0..3: with shift 0 every second-state kernel depends only on the
// first-state kernel of its own stream, with shift 1 on one of another stream (an event across the
// state boundary). Each kernel's CPP tasklet loops `reps` times per element, so small grids keep
// the kernels long and far from filling the GPU. `joined` puts a condition (N > 0, always true) on
// the edge between the states: the streams then join into stream 0 at the end of the first state,
// the schedule every state had before schedules crossed state boundaries. Shared by the
// synchronization tests, the GPU tests and the GPU benchmark.
#pragma once

#include <string>

#include "ir/Builder.h"
#include "ir/JsonWriter.h"

namespace sdfc::test {

/// The loop every kernel runs per element: adds 1.0, `reps` times (exact for integer values).
inline std::string two_stages_tasklet(int reps) {
  return "double a = v; for (int r = 0; r < " + std::to_string(reps) + "; ++r) a = a + 1.0; o = a;";
}

/// The program; reps[s][k] is the loop count of kernel k in state s (0: first, 1: second).
inline std::string two_stages(const int (&reps)[2][4], int shift = 0, bool joined = false) {
  SDFGBuilder b("two_stages");
  b.symbol("N");
  for (const char* n : {"x", "y", "z"})
    for (int k = 0; k < 4; ++k) b.array(n + std::to_string(k), DType::Float64, {"N"}, false, StorageType::GPU_Global);
  for (int s = 0; s < 2; ++s) {
    auto st = b.state(s == 0 ? "first" : "second");
    for (int k = 0; k < 4; ++k) {
      std::string ks = std::to_string(k);
      std::string in = s == 0 ? "x" + ks : "y" + std::to_string((k + shift) % 4);
      std::string out = (s == 0 ? "y" : "z") + ks;
      st.mapped_tasklet((s == 0 ? "a" : "b") + ks, {{"i", "0:N"}}, {{"v", in + "[i]"}}, "o = v", {{"o", out + "[i]"}},
                        ScheduleType::GPU_Device);
      for (auto& n : st.state().nodes)  // the tasklet just added
        if (n->kind == NodeKind::Tasklet && n->code.code == "o = v") {
          n->code.language = Language::CPP;
          n->code.code = two_stages_tasklet(reps[s][k]);
        }
    }
  }
  b.edge(0, 1, joined ? "N > 0" : "1");
  return write_sdfg(*b.build());
}

/// z_k[i] for x_j[i] = x: each kernel adds its loop count.
inline double two_stages_expected(const int (&reps)[2][4], int shift, int k, double x) {
  return x + reps[0][(k + shift) % 4] + reps[1][k];
}

}  // namespace sdfc::test
