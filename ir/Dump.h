/// \file
/// A readable text dump of the IR (`sdfc print`, `--print-after`). Stable: tests compare it.
#pragma once

#include <string>

#include "ir/SDFG.h"

namespace sdfc {

/// The SDFG as indented text: symbols, data, control flow, and each state's nodes and edges.
std::string dump(const SDFG& sdfg);

/// One control-flow block as dump() prints it (with the nested SDFGs of its states).
std::string dump_block(const Block& block);

/// A range in DaCe's slice notation with exclusive ends (`0:N, 1:M - 1`).
std::string range_str(const Range& r);

}  // namespace sdfc
