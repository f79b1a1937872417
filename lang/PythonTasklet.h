/// \file
/// Translation of DaCe Python tasklets into C++ statements. A Python tasklet holds assignments to
/// output connectors, to output connector elements and to temporaries, over expressions of
/// connectors, symbols and math constants, and the statements DaCe's frontend writes around them:
/// `if`/`elif`/`else` blocks and `for NAME in range(...)` loops (constant steps), nested. With
/// control flow every temporary is declared before the first statement with the one type all its
/// assignments have (a temporary assigned values of two types there is an error); straight-line
/// code declares a new C++ variable when a temporary changes type, as Python's untyped names do. The translation infers
/// a type for every expression and keeps Python's semantics in C++: true division, floor division and modulo, `**`,
/// mixed int/float promotion, `and`/`or` returning an operand, truncating `int()`. The caller
/// declares the connectors and includes `runtime/include/sdfc/rt.h` (the `sdfc::rt` helpers that the
/// statements call); temporaries are declared by the statements themselves.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/Diagnostic.h"
#include "ir/Expr.h"
#include "ir/SDFG.h"
#include "ir/Types.h"

namespace sdfc {

/// Types visible to a tasklet: connectors and symbols (name -> dtype).
struct TaskletScope {
  /// Input connectors: read-only locals, already declared by the caller.
  std::map<std::string, DType> inputs;
  /// Output connectors: locals already declared by the caller; the code assigns them.
  std::map<std::string, DType> outputs;
  /// Symbols and map parameters, readable by value.
  std::map<std::string, DType> symbols;
  /// Connectors bound to a pointer (a memlet of more than one element): the element stride (C++
  /// text) of each dimension of the memlet's subset (`all`), and of those that move more than one
  /// element (`moving`). `c[i]` / `c[i, j]` index with as many indices as either list has, as
  /// DaCe's code generator does; a connector without a layout takes one unit-stride index.
  struct Layout {
    std::vector<std::string> all, moving;
  };
  std::map<std::string, Layout> layouts;
  /// Connectors bound to a pointer (with or without a layout): the code must subscript them; a
  /// bare use would read or replace the pointer, not an element.
  std::set<std::string> pointers;
  /// Connectors declared as pointers (DaCe's `pointer` dtype) to a memlet of one element, as
  /// DaCe's frontend declares the results of a callback: a bare use reads or assigns the element
  /// (`x = f()` is `x[0] = f()`, as DaCe prints it); a callback's argument takes the pointer.
  std::set<std::string> element_pointers;
  /// Callbacks the code may call (the SDFG's symbols of DaCe's `callback` dtype).
  std::map<std::string, const Callback*> callbacks;
  /// Struct types the code may build by name (`S(f=..., g=...)`): those of the SDFG's data and of
  /// the tasklet's connectors (DaCe's struct dtypes).
  std::map<std::string, DType> structs;
};

/// How the code generator binds a tasklet's connector to the memlet of its (first) edge.
enum class ConnectorBinding {
  Value,      ///< one element: a local (an output written after the tasklet, possibly to several edges)
  Reference,  ///< one element, dynamic (no write-conflict resolution for an output): read or written
              ///< only where the code does, as DaCe does
  Pointer,    ///< more than one element (subscripted through a layout), or a connector declared a
              ///< pointer (DaCe's `pointer` dtype) to one element
};
/// The rule, in one place, for input connector `c` whose memlet `m` moves `r`...
ConnectorBinding input_binding(const Connector& c, const Memlet& m, const Range& r);
/// ... and for output connector `c` whose first memlet `m` moves `r`.
ConnectorBinding output_binding(const Connector& c, const Memlet& m, const Range& r);

/// The scope of tasklet `id` of `state` in `sdfg` as the code generator binds it: symbols (the
/// SDFG's, loop variables, enclosing map parameters and dynamic range inputs), input and output
/// connectors with their types, and the layouts of those bound as pointers (strides printed as
/// C++). `in` and `out` are the tasklet's edges (in edge order).
TaskletScope python_tasklet_scope(const SDFG& sdfg, const Block& state, int id, const std::vector<const DataEdge*>& in,
                                  const std::vector<const DataEdge*>& out);

/// Translates every Python tasklet of `sdfg` and of its nested SDFGs with `python_tasklet_scope`,
/// hands each translation to `done` (when given) and returns the errors (one per failing tasklet,
/// in file order; `file` is their file name). The translate-python pass stores the texts.
std::vector<Diagnostic> translate_python_tasklets(const SDFG& sdfg, const std::string& file,
                                                  const std::function<void(const Node&, std::string)>& done);
/// The errors alone (`sdfc validate`, which reports what compiling would).
std::vector<Diagnostic> check_python_tasklets(const SDFG& sdfg, const std::string& file);

/// Translates Python tasklet code into C++ statements (one per line, each ending in ';' and a newline,
/// no indentation). `file` and `pointer` (the tasklet's JSON pointer) are used in errors. Throws
/// UserError for code outside the supported subset, naming the construct and the line inside the
/// tasklet (Diagnostic.pointer = pointer + "/attributes/code", message like
/// "tasklet line 2: unsupported statement 'import math'; ...").
std::string translate_python_tasklet(const std::string& code, const TaskletScope& scope, const std::string& file,
                                     const std::string& pointer);

/// A translated expression: C++ text and the Python type it has.
struct ExpressionTranslation {
  std::string text;
  DType type;
};

/// Translates one Python expression of control flow (an interstate condition or assignment
/// value, a loop condition or statement) with the rules of tasklets: Python's division, floor
/// division, modulo and power, `and`/`or`/`not`, casts, and the math functions tasklets know;
/// names are `scope.symbols` (connectors are not used). `what` names the expression in errors
/// ("the condition of interstate edge 2"); `code_pointer` is the JSON pointer of its text. With
/// `condition`, the text is a C++ bool (Python's truth test). Throws UserError for a name or a
/// function outside that set, instead of passing it to the C++ compiler.
ExpressionTranslation translate_python_expression(const Expr& e, const TaskletScope& scope, const std::string& file,
                                                  const std::string& code_pointer, const std::string& what,
                                                  bool condition);

}  // namespace sdfc
