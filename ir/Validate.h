/// \file
/// Structural validation of an SDFG. Reports only what is provably wrong (a dangling edge, an
/// unknown container, a subset that is out of bounds for every symbol value, ...), so that every
/// file DaCe validates is accepted. Each problem is one Diagnostic with the JSON pointer of the
/// offending value in the file as DaCe (and sdfc's writer) lays it out.
#pragma once

#include <string>
#include <vector>

#include "ir/Diagnostic.h"
#include "ir/SDFG.h"

namespace sdfc {

/// All problems found, in document order; empty when the SDFG is valid.
std::vector<Diagnostic> validate(const SDFG& sdfg, const std::string& file_name = "<input>");

}  // namespace sdfc
