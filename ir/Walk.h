/// \file
/// One walker over an SDFG: every SDFG (the root and those nested in NestedSDFG nodes), every
/// control-flow block and every dataflow node, each with its JSON pointer in the file DaCe wrote,
/// so that passes, validation and the code generator report where a construct is without writing
/// their own switch over block kinds.
///
/// Pointers follow DaCe's layout: an SDFG's control-flow region is the SDFG's own object (the root
/// is ""); block i of a region is `<region>/nodes/i`; the body of branch k of a conditional is
/// `<conditional>/branches/k/1`; node i of a state is `<state>/nodes/i`; edge i of a state is
/// `<state>/edges/i`; the SDFG of a NestedSDFG node is `<node>/attributes/sdfg`. Data descriptors
/// are `<sdfg>/attributes/_arrays/<name>`.
///
/// Order: pre-order, in file order (a block before its children, child blocks before branches),
/// which is the order diagnostics are reported in. The walkers do not enter nested SDFGs unless
/// they say so; `for_each_sdfg` visits them.
#pragma once

#include <string>
#include <type_traits>

#include "ir/Diagnostic.h"
#include "ir/SDFG.h"

namespace sdfc::walk {

inline std::string block_pointer(const std::string& region, std::size_t i) {
  return region + "/nodes/" + std::to_string(i);
}
inline std::string branch_pointer(const std::string& conditional, std::size_t k) {
  return conditional + "/branches/" + std::to_string(k) + "/1";
}
inline std::string node_pointer(const std::string& state, std::size_t i) {
  return state + "/nodes/" + std::to_string(i);
}
inline std::string edge_pointer(const std::string& state, std::size_t i) {
  return state + "/edges/" + std::to_string(i);
}
/// Node `i` / edge `i` of `st` by its id in the file, which differs from its position once a pass
/// removed nodes or edges (fuse-maps).
inline std::string node_pointer(const Block& st, const std::string& state, std::size_t i) {
  int f = st.nodes.at(i)->file_id;
  return node_pointer(state, f < 0 ? i : static_cast<std::size_t>(f));
}
inline std::string edge_pointer(const Block& st, const std::string& state, std::size_t i) {
  int f = st.edges.at(i).file_id;
  return edge_pointer(state, f < 0 ? i : static_cast<std::size_t>(f));
}
inline std::string nested_sdfg_pointer(const std::string& node) {
  return node + "/attributes/sdfg";
}
inline std::string data_pointer(const std::string& sdfg, const std::string& name) {
  return sdfg + "/attributes/_arrays/" + pointer_token(name);
}

/// `Block` or `const Block`, following the constness of `T`.
template <typename T>
using BlockOf = std::conditional_t<std::is_const_v<T>, const Block, Block>;
template <typename T>
using NodeOf = std::conditional_t<std::is_const_v<T>, const Node, Node>;

/// Calls `fn(block, pointer)` on `block` and every block nested in it (child blocks of regions
/// and loops, bodies of conditional branches), pre-order in file order; not entering nested SDFGs.
template <typename B, typename Fn>
void for_each_block(B& block, const std::string& pointer, Fn&& fn) {
  fn(block, pointer);
  for (std::size_t i = 0; i < block.blocks.size(); ++i) for_each_block(*block.blocks[i], block_pointer(pointer, i), fn);
  for (std::size_t k = 0; k < block.branches.size(); ++k)
    for_each_block(*block.branches[k].second, branch_pointer(pointer, k), fn);
}

/// Calls `fn(sdfg, pointer)` on `sdfg` and every SDFG nested in it at any depth, pre-order.
template <typename S, typename Fn>
void for_each_sdfg(S& sdfg, const std::string& pointer, Fn&& fn) {
  fn(sdfg, pointer);
  for_each_block(sdfg.root, pointer, [&](BlockOf<S>& b, const std::string& bp) {
    if (b.kind != BlockKind::State) return;
    for (std::size_t i = 0; i < b.nodes.size(); ++i)
      if (b.nodes[i]->kind == NodeKind::NestedSDFG && b.nodes[i]->sdfg)
        for_each_sdfg(*b.nodes[i]->sdfg, nested_sdfg_pointer(node_pointer(b, bp, i)), fn);
  });
}

/// Calls `fn(state, pointer)` on every state of `sdfg` (not of nested SDFGs).
template <typename S, typename Fn>
void for_each_state(S& sdfg, const std::string& pointer, Fn&& fn) {
  for_each_block(sdfg.root, pointer, [&](BlockOf<S>& b, const std::string& bp) {
    if (b.kind == BlockKind::State) fn(b, bp);
  });
}

/// Calls `fn(state, id, node, pointer)` on every node of every state of `sdfg` (not of nested SDFGs).
template <typename S, typename Fn>
void for_each_node(S& sdfg, const std::string& pointer, Fn&& fn) {
  for_each_state(sdfg, pointer, [&](BlockOf<S>& st, const std::string& sp) {
    for (std::size_t i = 0; i < st.nodes.size(); ++i)
      fn(st, static_cast<int>(i), static_cast<NodeOf<S>&>(*st.nodes[i]), node_pointer(st, sp, i));
  });
}

}  // namespace sdfc::walk
