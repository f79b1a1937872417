/// \file
/// `legalize`: refuses, before any code is printed, what the code generator cannot print — every
/// construct sdfc does not support yet that validation (which checks the file against DaCe's
/// rules) lets through. Each refusal is a diagnostic with the construct's JSON pointer; all of
/// them are reported at once. After this pass the code generator treats these conditions as
/// internal invariants (SDFC_ASSERT), not as user errors.
///
/// Refused (in the SDFG and every nested one):
///  - float16 in data, connectors and symbols (no C++ type in sdfc's runtime yet); complex64 and
///    complex128 symbols (symbols are integers or reals; complex values travel as data);
///  - an SDFG name that is not a C identifier or starts with `__` (DaCe's entry points are named
///    after it);
///  - transients with Global lifetime; Persistent and External transients inside nested SDFGs
///    (after transient-lifetimes lifted what it could); a Persistent transient whose size depends
///    on a symbol that is not a free symbol of the program (it is allocated at init);
///  - break and continue blocks outside a LoopRegion of their SDFG;
///  - GPU schedules on the cpu target; GPU maps whose range of one dimension uses the parameter
///    of an earlier one (sdfc runs a GPU map's dimensions side by side);
///  - connector names that are not C identifiers (tasklets, dynamic map range inputs);
///  - a tasklet output connector bound as a pointer or a reference that fans out to several edges;
///  - edges whose role sdfc has no lowering for (`edge_role_problem`, ir/Memlets.h);
///  - copies without subsets at both ends, copies that reshape (a different number of moved
///    dimensions), and copies through the GPU runtime that change the dtype or run backwards;
///  - nested SDFGs with a connector not connected to data, or a symbol that neither their symbol
///    mapping nor the SDFG around them defines;
///  - Python tasklets the translator refuses (lang/PythonTasklet.h), with the connectors bound
///    as the code generator binds them, so that one compile reports them with the rest; the next
///    pass, translate-python, translates them again and stores the C++ for the code generator.
/// Runs after stream-assignment (lifetimes and the streams of copies are decided) and before
/// synchronization.
#pragma once

#include "ir/Options.h"
#include "ir/SDFG.h"

namespace sdfc {

void legalize(SDFG& sdfg, const CompileOptions& options);

}  // namespace sdfc
