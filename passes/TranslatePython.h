/// \file
/// `translate-python`: translates the program's Python code into C++ once and stores it in the IR,
/// so that the code generator only prints: every Python tasklet (Node::cpp_code, with the scope
/// the code generator binds, lang/PythonTasklet.h), and the code of control flow (ControlCode,
/// ir/SDFG.h): each interstate edge's condition and assignments, each loop's init, condition and
/// update, each branch's condition, in the program and its nested SDFGs. Control code is translated
/// with the tasklets' typed rules: symbols keep their types (loop variables not in the symbol
/// table are int64), containers read in the code become reads of one element of their dtype,
/// `A is None` for an array is a null test of its pointer, and DaCe's SymPy spellings (Max, Min,
/// Abs, ceiling, int_floor, int_ceil, Mod) become Python's; where each read lands (a local value,
/// a scalar's pointer, an array) is printed where the code runs. Code outside the translated
/// subset (a malformed expression, an unknown function or name, a subscript with the wrong number
/// of indices, an assignment to something not a name) is an error here, at the code's JSON
/// pointer, all of them at once.
#pragma once

#include "ir/Options.h"
#include "ir/SDFG.h"

namespace sdfc {

/// Sets Node::cpp_code of every Python tasklet and the ControlCode members of every interstate
/// edge, loop and conditional of `root` and of its nested SDFGs. Throws UserError naming every
/// piece of code it cannot translate.
void translate_python(SDFG& root, const CompileOptions& options);

}  // namespace sdfc
