/// \file
/// Writes the IR as DaCe SDFG JSON that DaCe loads again: `dace_version` kept, symbolic
/// properties in the dialect of that version, derived fields (scope_dict, src_subset, ...)
/// recomputed, unmodelled fields written back as read. Deterministic: the same IR always gives
/// the same bytes, so converting sdfc's own output reproduces it exactly.
#pragma once

#include <string>

#include "ir/SDFG.h"

namespace sdfc {

/// The SDFG as a JSON value.
Json to_json(const SDFG& sdfg);
/// The SDFG as compact JSON text (as DaCe's `SDFG.save()` writes it), or indented with `indent`>=0.
std::string write_sdfg(const SDFG& sdfg, int indent = -1);

}  // namespace sdfc
