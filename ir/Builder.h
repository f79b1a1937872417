/// \file
/// A builder API for SDFGs in C++ (tests, samples, benchmarks). Subsets and ranges are written as
/// in DaCe's Python API, with exclusive ends: "0:N", "i, j + 1", "1:N - 1". Errors in builder
/// input (a malformed range, an unknown container) throw UserError with the offending text.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ir/SDFG.h"

namespace sdfc {

/// Parses "0:N, i + 1" (exclusive ends, optional ":step") into an inclusive-end Range.
Range parse_subset(const std::string& text);

/// Adds nodes and edges to one state.
class StateBuilder {
 public:
  StateBuilder(SDFG& sdfg, Block& state) : sdfg_(&sdfg), state_(&state) {}

  /// An access node for `data`; `scope` is the enclosing map entry (-1: top level).
  int access(const std::string& data, int scope = -1);
  /// A map entry/exit pair; ranges as "0:N" per parameter. Returns {entry, exit}.
  std::pair<int, int> map(const std::string& label, const std::vector<std::string>& params,
                          const std::vector<std::string>& ranges, ScheduleType schedule = ScheduleType::Default,
                          int scope = -1);
  /// A tasklet with the given connectors (types inferred from memlets).
  int tasklet(const std::string& label, const std::vector<std::string>& ins, const std::vector<std::string>& outs,
              const std::string& code, Language language = Language::Python, int scope = -1);
  /// A nested SDFG node; connectors are the nested SDFG's non-transient containers named here.
  int nested(std::unique_ptr<SDFG> inner, const std::vector<std::string>& ins, const std::vector<std::string>& outs,
             const std::map<std::string, std::string>& symbol_mapping, int scope = -1);
  /// A DaCe library node of class `classpath` (e.g. dace.libraries.blas.nodes.matmul.MatMul) with
  /// its connectors and properties (as DaCe writes the node's attributes: {"transA": true}).
  int library(const std::string& label, const std::string& classpath, const std::vector<std::string>& ins,
              const std::vector<std::string>& outs, const Json& properties = Json::object(), int scope = -1);
  /// An edge carrying `subset_text` of `data` ("" data: an empty memlet). Adds the connectors
  /// to map entries/exits (IN_x/OUT_x) when they are missing.
  void edge(int src, const std::string& src_conn, int dst, const std::string& dst_conn, const std::string& data,
            const std::string& subset_text, const std::string& wcr = "");
  /// A copy between two access nodes: `src_subset` of src's data to `dst_subset` of dst's.
  void copy(int src, int dst, const std::string& src_subset, const std::string& dst_subset);
  /// The edge through which view node `view` views `subset` of the data of access node `viewed`,
  /// as DaCe's frontend writes it (the `views` connector on the view's side): from `viewed` to
  /// the view for a view that is read, from the view to `viewed` for one that is written.
  void view_of(int view, int viewed, const std::string& subset, bool written = false);

  /// DaCe's add_mapped_tasklet: access nodes, map, tasklet and memlets in one call.
  /// Inputs/outputs map connector -> "A[i, j]"; `outer` reuses existing access nodes by name.
  /// Returns {entry, exit}.
  std::pair<int, int> mapped_tasklet(const std::string& label,
                                     const std::vector<std::pair<std::string, std::string>>& map_ranges,
                                     const std::vector<std::pair<std::string, std::string>>& inputs,
                                     const std::string& code,
                                     const std::vector<std::pair<std::string, std::string>>& outputs,
                                     ScheduleType schedule = ScheduleType::Default,
                                     std::map<std::string, int>* outer = nullptr);

  Block& state() { return *state_; }

 private:
  SDFG* sdfg_;
  Block* state_;
  int add(std::unique_ptr<Node> n);
};

/// Builds an SDFG: containers, symbols, states in the root region, interstate edges.
class SDFGBuilder {
 public:
  explicit SDFGBuilder(std::string name);

  SDFGBuilder& symbol(const std::string& name, DType t = DType::Int32);
  /// An array with shape expressions such as {"N", "M - 2"}.
  SDFGBuilder& array(const std::string& name, DType t, const std::vector<std::string>& shape, bool transient = false,
                     StorageType storage = StorageType::Default, Lifetime lifetime = Lifetime::Scope);
  /// A view (DaCe's ArrayView) with its own shape and strides (element strides, as "1", "M").
  SDFGBuilder& view(const std::string& name, DType t, const std::vector<std::string>& shape,
                    const std::vector<std::string>& strides, StorageType storage = StorageType::Default);
  SDFGBuilder& scalar(const std::string& name, DType t, bool transient = false,
                      StorageType storage = StorageType::Default);
  /// Appends a state to the root region (the first one is the start block).
  StateBuilder state(const std::string& label);
  /// Appends a loop `for var = init; cond; var = update` whose body is one new state.
  StateBuilder loop(const std::string& label, const std::string& var, const std::string& init, const std::string& cond,
                    const std::string& update);
  /// An interstate edge between root blocks (by index) with a condition and assignments.
  SDFGBuilder& edge(int src, int dst, const std::string& condition = "1",
                    const std::vector<std::pair<std::string, std::string>>& assignments = {});
  /// Chains every root block to the next with unconditional edges (where no edge exists).
  SDFGBuilder& chain();

  SDFG& sdfg() { return *sdfg_; }
  /// Hands the SDFG over; the builder is empty afterwards (a second build() throws
  /// std::logic_error instead of returning null).
  std::unique_ptr<SDFG> build();

 private:
  std::unique_ptr<SDFG> sdfg_;
};

}  // namespace sdfc
