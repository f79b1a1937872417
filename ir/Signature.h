/// \file
/// A program's calling convention as DaCe defines it (`SDFG.arglist()`, `init_signature`): which
/// containers and symbols are arguments, in which order, and how each is passed.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "ir/SDFG.h"

namespace sdfc {

/// One argument of `__program_<name>`.
struct Argument {
  enum class Kind { Array, Scalar, Symbol, Callback };
  std::string name;
  Kind kind;
  DType dtype;
  bool by_pointer;                     ///< arrays, and scalars stored in GPU_Global
  const DataDesc* desc = nullptr;      ///< the container (arrays and scalars)
  const Callback* callback = nullptr;  ///< the function's type (callbacks)
};

/// The program's signature.
struct Signature {
  std::vector<Argument> args;  ///< DaCe's arglist order
  /// The free symbols, callbacks among them, sorted (`__dace_init_<name>` parameters).
  std::vector<std::string> init_symbols;
};

/// Symbols the program reads that no interstate edge, loop or map defines: DaCe's free symbols
/// that are arguments (callbacks the code calls among them). A symbol that appears only in the shape of a non-transient
/// array is not one (DaCe: `d2h_symbol_s` takes no `N`).
std::set<std::string> free_symbols(const SDFG& sdfg);

/// DaCe's argument order: non-transient arrays sorted by name, then non-transient scalars and free
/// symbols sorted together (Python's string order: by code point).
Signature signature(const SDFG& sdfg);

/// Symbols assigned inside the SDFG (interstate assignments, loop variables), in first-seen order.
std::vector<std::string> assigned_symbols(const SDFG& sdfg);

/// Every name a piece of code mentions (identifier tokens), for code that is not parsed.
std::set<std::string> identifiers_in(const std::string& code);

/// The callbacks of `sdfg` (SDFG::callbacks) that the code of `tasklet` names, sorted.
std::vector<std::string> callbacks_called(const SDFG& sdfg, const Node& tasklet);

/// Every name the interstate code of `sdfg` mentions (conditions, assignments, loop statements,
/// branch conditions), not entering nested SDFGs.
std::set<std::string> interstate_names(const SDFG& sdfg);

}  // namespace sdfc
