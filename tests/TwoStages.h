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

#include <fmt/format.h>

#include <optional>
#include <string>
#include <vector>

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

/// A time loop over two dependent states of four kernels each, on device arrays x_k and y_k: for
/// t in [0, T), state "step" computes y_k from x_{(k + shift) % 4} and state "back" x_k from y_k,
/// each kernel adding its loop count (as in two_stages). Kernel k of state s loops
/// reps[s][(k + t) % 4] times with `rotate`, reps[s][k] times otherwise, so that with rotate the
/// long kernels move to another stream every iteration. With --gpu-streams 4 the streams carry their
/// work from one iteration into the next; `joined` adds an empty third state after a conditional
/// edge (N > 0, always true) to the body, which makes every iteration end with a join into stream 0
/// (the schedule of every loop before loops carried their streams).
inline std::string loop_stages(const int (&reps)[2][4], int shift = 0, bool joined = false, bool rotate = false) {
  SDFGBuilder b("loop_stages");
  b.symbol("N").symbol("T").symbol("t");
  for (const char* n : {"x", "y"})
    for (int k = 0; k < 4; ++k) b.array(n + std::to_string(k), DType::Float64, {"N"}, false, StorageType::GPU_Global);
  b.loop("time", "t", "0", "t < T", "t + 1");
  Block& loop = *b.sdfg().root.blocks.back();
  loop.blocks[0]->label = "step";
  for (const char* label : {"back", "tail"}) {
    if (std::string(label) == "tail" && !joined) break;
    auto st = std::make_unique<Block>(BlockKind::State);
    st->label = label;
    st->type_name = "SDFGState";
    loop.blocks.push_back(std::move(st));
    InterstateEdge e;
    e.src = static_cast<int>(loop.blocks.size()) - 2;
    e.dst = e.src + 1;
    e.condition = {std::string(label) == "tail" ? "N > 0" : "1", Language::Python};
    loop.cf_edges.push_back(std::move(e));
  }
  for (int s = 0; s < 2; ++s) {
    StateBuilder st(b.sdfg(), *loop.blocks[static_cast<std::size_t>(s)]);
    for (int k = 0; k < 4; ++k) {
      std::string ks = std::to_string(k);
      std::string in = s == 0 ? "x" + std::to_string((k + shift) % 4) : "y" + ks;
      std::string out = (s == 0 ? "y" : "x") + ks;
      st.mapped_tasklet((s == 0 ? "a" : "b") + ks, {{"i", "0:N"}}, {{"v", in + "[i]"}}, "o = v", {{"o", out + "[i]"}},
                        ScheduleType::GPU_Device);
      std::string count = std::to_string(reps[s][k]);
      if (rotate)
        count = fmt::format("((t + {0}) % 4 == 0 ? {1} : (t + {0}) % 4 == 1 ? {2} : (t + {0}) % 4 == 2 ? {3} : {4})", k,
                            reps[s][0], reps[s][1], reps[s][2], reps[s][3]);
      for (auto& n : st.state().nodes)  // the tasklet just added
        if (n->kind == NodeKind::Tasklet && n->code.code == "o = v") {
          n->code.language = Language::CPP;
          n->code.code = "double a = v; for (int r = 0; r < " + count + "; ++r) a = a + 1.0; o = a;";
        }
    }
  }
  return write_sdfg(*b.build());
}

/// The four kernels of one state: out_k from in_{(k + shift) % 4}, kernel k looping reps[k] times.
inline void four_kernels(SDFGBuilder& b, Block& state, const char* label, const char* in, const char* out,
                         const int (&reps)[4], int shift) {
  StateBuilder st(b.sdfg(), state);
  for (int k = 0; k < 4; ++k) {
    std::string ks = std::to_string(k);
    st.mapped_tasklet(label + ks, {{"i", "0:N"}}, {{"v", in + std::to_string((k + shift) % 4) + "[i]"}}, "o = v",
                      {{"o", out + ks + "[i]"}}, ScheduleType::GPU_Device);
    for (auto& n : st.state().nodes)  // the tasklet just added
      if (n->kind == NodeKind::Tasklet && n->code.code == "o = v") {
        n->code.language = Language::CPP;
        n->code.code = two_stages_tasklet(reps[k]);
      }
  }
}

/// A state of four kernels followed by a conditional on symbol C: state "first" computes y_k from
/// x_k; then, if C > 0, branch state "second" computes z_k from y_{(k + shift) % 4} (reps[1]),
/// else branch state "other" z_k from y_k (reps[2]). With --gpu-streams 4 the streams carry their
/// work from "first" into the branch that runs, and join into stream 0 after the conditional.
inline std::string branch_stages(const int (&reps)[3][4], int shift = 0) {
  SDFGBuilder b("branch_stages");
  b.symbol("N").symbol("C");
  for (const char* n : {"x", "y", "z"})
    for (int k = 0; k < 4; ++k) b.array(n + std::to_string(k), DType::Float64, {"N"}, false, StorageType::GPU_Global);
  four_kernels(b, b.state("first").state(), "a", "x", "y", reps[0], 0);
  auto cond = std::make_unique<Block>(BlockKind::Conditional);
  cond->label = "choose";
  cond->type_name = "ConditionalBlock";
  for (int branch = 0; branch < 2; ++branch) {
    auto body = std::make_unique<Block>(BlockKind::Region);
    body->label = branch == 0 ? "then" : "else";
    body->type_name = "ControlFlowRegion";
    auto st = std::make_unique<Block>(BlockKind::State);
    st->label = branch == 0 ? "second" : "other";
    st->type_name = "SDFGState";
    body->blocks.push_back(std::move(st));
    body->start_block = 0;
    four_kernels(b, *body->blocks[0], branch == 0 ? "b" : "c", "y", "z", reps[1 + branch], branch == 0 ? shift : 0);
    std::optional<CodeBlock> c;
    if (branch == 0) c = CodeBlock{"C > 0", Language::Python};
    cond->branches.emplace_back(std::move(c), std::move(body));
  }
  b.sdfg().root.blocks.push_back(std::move(cond));
  b.edge(0, 1);
  return write_sdfg(*b.build());
}

/// Appends an empty state `label` to `region`; returns it.
inline Block& add_state(Block& region, const std::string& label) {
  auto st = std::make_unique<Block>(BlockKind::State);
  st->label = label;
  st->type_name = "SDFGState";
  region.blocks.push_back(std::move(st));
  return *region.blocks.back();
}

/// Chains `region`'s blocks in order with unconditional edges.
inline void chain_blocks(Block& region) {
  for (std::size_t e = 0; e + 1 < region.blocks.size(); ++e) {
    InterstateEdge edge;
    edge.src = static_cast<int>(e);
    edge.dst = static_cast<int>(e) + 1;
    edge.condition = {"1", Language::Python};
    region.cf_edges.push_back(std::move(edge));
  }
}

/// A conditional block `label` on `condition` with one state per branch (then: `then_state`,
/// else: `else_state`), for the caller to fill.
inline std::unique_ptr<Block> two_way(const std::string& label, const std::string& condition,
                                      const std::string& then_state, const std::string& else_state) {
  auto cond = std::make_unique<Block>(BlockKind::Conditional);
  cond->label = label;
  cond->type_name = "ConditionalBlock";
  for (int branch = 0; branch < 2; ++branch) {
    auto body = std::make_unique<Block>(BlockKind::Region);
    body->label = branch == 0 ? "then" : "else";
    body->type_name = "ControlFlowRegion";
    add_state(*body, branch == 0 ? then_state : else_state);
    body->start_block = 0;
    std::optional<CodeBlock> c;
    if (branch == 0) c = CodeBlock{condition, Language::Python};
    cond->branches.emplace_back(std::move(c), std::move(body));
  }
  return cond;
}

/// A time loop whose body is a chain with a conditional in it, on device arrays x_k, y_k, z_k: for
/// t in [0, T), state "step" computes y_k from x_{(k + shift) % 4} (reps[0]); then, if t is even,
/// branch state "even" z_k from y_k (reps[1]), else branch state "odd" z_k from
/// y_{(k + shift) % 4} (reps[2]); then state "back" x_k from z_{(k + shift) % 4} (reps[3]). With
/// --gpu-streams 4 the streams carry their work through the conditional, into the state after it
/// and into the next iteration, without a join. `looped` false: the body alone, once, at the top
/// level (t an argument).
inline std::string loop_branch_stages(const int (&reps)[4][4], int shift = 0, bool looped = true) {
  SDFGBuilder b("loop_branch_stages");
  b.symbol("N").symbol("T").symbol("t");
  for (const char* n : {"x", "y", "z"})
    for (int k = 0; k < 4; ++k) b.array(n + std::to_string(k), DType::Float64, {"N"}, false, StorageType::GPU_Global);
  if (looped)
    b.loop("time", "t", "0", "t < T", "t + 1");
  else
    b.state("step");
  Block& loop = looped ? *b.sdfg().root.blocks.back() : b.sdfg().root;
  loop.blocks[0]->label = "step";
  four_kernels(b, *loop.blocks[0], "a", "x", "y", reps[0], shift);
  loop.blocks.push_back(two_way("choose", "t % 2 == 0", "even", "odd"));
  Block& choose = *loop.blocks.back();
  four_kernels(b, *choose.branches[0].second->blocks[0], "b", "y", "z", reps[1], 0);
  four_kernels(b, *choose.branches[1].second->blocks[0], "c", "y", "z", reps[2], shift);
  four_kernels(b, add_state(loop, "back"), "d", "z", "x", reps[3], shift);
  chain_blocks(loop);
  return write_sdfg(*b.build());
}

/// x_k after `T` iterations of loop_branch_stages from x_k = x0[k] (every element alike).
inline std::vector<double> loop_branch_stages_expected(const int (&reps)[4][4], int shift, int T,
                                                       const std::vector<double>& x0) {
  std::vector<double> x = x0, y(4), z(4);
  auto at = [](std::vector<double>& v, int k) -> double& { return v[static_cast<std::size_t>(k % 4)]; };
  for (int t = 0; t < T; ++t) {
    for (int k = 0; k < 4; ++k) at(y, k) = at(x, k + shift) + reps[0][k];
    for (int k = 0; k < 4; ++k) at(z, k) = t % 2 == 0 ? at(y, k) + reps[1][k] : at(y, k + shift) + reps[2][k];
    for (int k = 0; k < 4; ++k) at(x, k) = at(z, k + shift) + reps[3][k];
  }
  return x;
}

/// A time loop with an inner loop of substeps in its body, on device arrays x_k, y_k, z_k: for t in
/// [0, T), state "step" computes z_k from x_{(k + shift) % 4} (reps[0]); then for s in [0, S) state
/// "sub_a" y_k from z_{(k + shift) % 4} (reps[1]) and state "sub_b" z_k from y_k (reps[2]); then
/// state "back" x_k from z_{(k + shift) % 4} (reps[3]). With --gpu-streams 4 the streams carry
/// their work into the inner loop, across its iterations, out of it and into the next time step,
/// without a join.
inline std::string loop_substeps(const int (&reps)[4][4], int shift = 0) {
  SDFGBuilder b("loop_substeps");
  b.symbol("N").symbol("T").symbol("S").symbol("t").symbol("s");
  for (const char* n : {"x", "y", "z"})
    for (int k = 0; k < 4; ++k) b.array(n + std::to_string(k), DType::Float64, {"N"}, false, StorageType::GPU_Global);
  b.loop("time", "t", "0", "t < T", "t + 1");
  Block& loop = *b.sdfg().root.blocks.back();
  loop.blocks[0]->label = "step";
  four_kernels(b, *loop.blocks[0], "a", "x", "z", reps[0], shift);
  auto sub = std::make_unique<Block>(BlockKind::Loop);
  sub->label = "substeps";
  sub->type_name = "LoopRegion";
  sub->loop_variable = "s";
  sub->init_statement = CodeBlock{"s = 0", Language::Python};
  sub->loop_condition = CodeBlock{"s < S", Language::Python};
  sub->update_statement = CodeBlock{"s = s + 1", Language::Python};
  four_kernels(b, add_state(*sub, "sub_a"), "b", "z", "y", reps[1], shift);
  four_kernels(b, add_state(*sub, "sub_b"), "c", "y", "z", reps[2], 0);
  chain_blocks(*sub);
  loop.blocks.push_back(std::move(sub));
  four_kernels(b, add_state(loop, "back"), "d", "z", "x", reps[3], shift);
  chain_blocks(loop);
  return write_sdfg(*b.build());
}

/// x_k after `T` time steps of `S` substeps of loop_substeps from x_k = x0[k] (every element alike).
inline std::vector<double> loop_substeps_expected(const int (&reps)[4][4], int shift, int T, int S,
                                                  const std::vector<double>& x0) {
  std::vector<double> x = x0, y(4), z(4), w(4);
  auto at = [](std::vector<double>& v, int k) -> double& { return v[static_cast<std::size_t>(k % 4)]; };
  for (int t = 0; t < T; ++t) {
    for (int k = 0; k < 4; ++k) at(z, k) = at(x, k + shift) + reps[0][k];
    for (int s = 0; s < S; ++s) {
      for (int k = 0; k < 4; ++k) at(y, k) = at(z, k + shift) + reps[1][k];
      for (int k = 0; k < 4; ++k) at(z, k) = at(y, k) + reps[2][k];
    }
    for (int k = 0; k < 4; ++k) at(w, k) = at(z, k + shift) + reps[3][k];
    x = w;
  }
  return x;
}

/// z_k after branch_stages with x_j[i] = x: each kernel on the path adds its loop count.
inline double branch_stages_expected(const int (&reps)[3][4], int shift, bool then, int k, double x) {
  return then ? x + reps[0][(k + shift) % 4] + reps[1][k] : x + reps[0][k] + reps[2][k];
}

/// x_k after `T` iterations of loop_stages, x_j[i] = x0[j] + i before them (every element i adds i).
inline std::vector<double> loop_stages_expected(const int (&reps)[2][4], int shift, bool rotate, int T,
                                                const std::vector<double>& x0) {
  std::vector<double> x = x0;
  for (int t = 0; t < T; ++t) {
    std::vector<double> y(4);
    auto count = [&](int s, int k) { return reps[s][rotate ? (k + t) % 4 : k]; };
    for (int k = 0; k < 4; ++k)
      y[static_cast<std::size_t>(k)] = x[static_cast<std::size_t>((k + shift) % 4)] + count(0, k);
    for (int k = 0; k < 4; ++k) x[static_cast<std::size_t>(k)] = y[static_cast<std::size_t>(k)] + count(1, k);
  }
  return x;
}

}  // namespace sdfc::test
