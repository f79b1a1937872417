#include "compiler/CliHelp.h"

#include <fmt/format.h>

#include "ir/Options.h"
#include "passes/Pipeline.h"

namespace sdfc {

namespace {

const char* kMainHelp = R"(sdfc - a compiler for stateful dataflow programs (DaCe SDFG files)

usage: sdfc <command> [options] [files]

commands:
  validate FILE...     check SDFG files; one diagnostic per problem on stderr
  print FILE           print the SDFG as readable text
  convert IN OUT       read IN and write it as DaCe JSON to OUT (.sdfgz: gzip)
  compile FILE -o LIB  compile an SDFG into a shared library with DaCe's C ABI
  dot FILE -o OUT      draw the SDFG after the passes as Graphviz DOT (.dot) or SVG (.svg)
  opt FILE --passes=P  run the named passes only; write the IR with every decision (an IR file)
  options [--json]     list the compile options (--json: as JSON, for tools)
  run FILE --inputs J  compile (cached), call once with the inputs in J, print the arrays
  help [COMMAND]       show help for a command

options:
  -h, --help           show help (also after a command: sdfc validate --help)
  --version            print the version

exit codes: 0 success, 1 invalid or unsupported input, 2 usage error
)";

const char* kValidateHelp = R"(usage: sdfc validate FILE...

Reads each SDFG file (.sdfg JSON or gzip-compressed .sdfgz) and checks it: JSON syntax, known
node, block and descriptor types, enum values, expressions, dangling edges and connectors, map
scopes, cycles in states, subsets provably out of bounds, outer memlets of map scopes that provably
miss what the scope accesses (unpropagated memlets), and Python tasklets (translated as
compile translates them). Each problem is printed on stderr as
  FILE: /json/pointer: error: message
(or FILE:LINE:COLUMN: error: ... for JSON syntax errors). Prints "FILE: ok" for valid files.
Exit code 0 when every file is valid, 1 otherwise.
)";

const char* kPrintHelp = R"(usage: sdfc print FILE

Prints the SDFG in FILE as indented text: symbols, data containers, control flow, and for each
state its nodes ([id] kind ...) and edges (src:connector -> dst:connector  data[subset]).
Exit code 1 (with diagnostics) when FILE is invalid.
)";

/// Wraps `text` to lines of at most `width` characters, each after `indent` spaces but the first
/// (which continues a line of `first` characters).
std::string wrap(const std::string& text, std::size_t first, std::size_t indent, std::size_t width) {
  std::string out, word;
  std::size_t column = first;
  auto flush = [&] {
    if (word.empty()) return;
    if (column > indent && column + 1 + word.size() > width) {
      out += "\n" + std::string(indent, ' ');
      column = indent;
    } else if (column > indent || (column == indent && !out.empty() && out.back() != ' ')) {
      out += ' ';
      ++column;
    }
    out += word;
    column += word.size();
    word.clear();
  };
  for (char c : text) {
    if (c == ' ')
      flush();
    else
      word += c;
  }
  flush();
  return out;
}

const char* kCompileHelp = R"(usage: sdfc compile FILE -o LIB.so [options]
       sdfc compile FILE --emit-source DIR [options]
       sdfc compile FILE --dace-layout DIR [options]

Compiles an SDFG into a shared library exporting DaCe's C ABI (__dace_init_<name>,
__program_<name>, __dace_exit_<name>, the external-memory pair) and sdfc's __sdfc_ hooks.
Builds go through a content-addressed cache ($SDFC_CACHE_DIR, default ~/.cache/sdfc).

  -o LIB.so               where to write the library (written atomically)
  --emit-source DIR       also write the generated sources and a C header into DIR (without -o:
                          stop before any compiler runs)
  --dace-layout DIR       also lay out DaCe's program folder in DIR, which DaCe's own loader
                          (dace.codegen.compiler.load_precompiled_sdfg(DIR)) runs unmodified:
                          DIR/build/lib<name>.so, sdfc's loader stub DIR/build/libdacestub_<name>.so,
                          DIR/program.sdfg (the input), DIR/FOLDER_MODE, the sources; the library
                          then also prints each refused call's message on stderr (once per message)
  --format                run the generated sources through clang-format (sdfc's style; whitespace
                          changes only); needs an sdfc built with Clang
  --print-after=NAME      print the IR after pass NAME (or "all")
  --time-passes           print the time of each stage and pass on stderr
  --stats                 print counts of what was compiled, and workspace sizes, on stderr
  --verify-sync           prove the schedule's synchronization (every conflicting pair of
                          accesses by two streams or a stream and the host is ordered) before
                          writing anything; a race is an error naming both accesses

CPP tasklets are checked with Clang before code is generated: identifiers that are neither
connectors, symbols nor known functions (<cmath>, <cstdint>, <algorithm>, ..., sdfc's runtime,
global_code), writes to input connectors and output connectors never written are errors, reported
as FILE: /pointer/of/the/code:LINE:COLUMN: error: ... with the line and column inside the tasklet.
A check that passed is remembered in the build cache (the same tasklets, runtime headers and
sdfc are not parsed again: ~0.3 s saved per compile). An sdfc built without Clang skips the check
and says so in a note.
)";

const char* kDotHelp = R"(usage: sdfc dot FILE -o OUT.dot|OUT.svg [--after=PASS] [options]

Draws the SDFG in FILE after the pass pipeline as a Graphviz graph: states and control flow (loops
and conditionals as clusters), dataflow with map scopes as clusters, tasklets with their code,
nested SDFGs with their own control flow. What passes decided is drawn too: each GPU operation
(kernel, GPU copy) coloured by its stream, host syncs as marked nodes, the ordered return.

  -o OUT                  OUT.dot: the DOT text ("-": standard output); OUT.svg: rendered with
                          Graphviz's dot program (apt-get install graphviz). Written atomically.
  --after=PASS            stop after pass PASS (the passes are listed below), or "none" for the
                          SDFG as read (also what it contains that sdfc cannot compile);
                          default: every pass

The compile options below decide the passes.
)";

const char* kRunHelp = R"(usage: sdfc run FILE --inputs INPUTS.json [--output OUT.json] [options]

Compiles FILE (cached), binds the program's arguments by name from INPUTS.json (the corpus
format: "symbols", "scalars", "arrays" with dtype, shape and data), calls the program once and
writes every array argument as {"arrays": {name: {"dtype", "shape", "data"}}} to OUT.json (default:
standard output). Entries the program does not take are ignored; numbers convert when the
conversion is exact. A missing or mistyped argument is an error and the program is not called.
External workspaces are allocated by run itself.
)";

const char* kOptHelp = R"(usage: sdfc opt FILE --passes=NAME[,NAME...] [-o OUT.sdfg] [--print-after=NAME|all] [options]
       sdfc opt --list

Runs the named passes, and only those, on FILE: a DaCe SDFG file or an IR file that sdfc opt wrote
(DaCe's JSON with every pass decision in "sdfc" members, the passes run and the options they ran
with; docs/design.md, "The IR file"). Passes run in the pipeline's order, each after the passes
it needs; another order is refused with the reason. `sdfc compile` takes an IR file too and runs the
passes not yet run, with the file's options.

  --passes=NAME,...       the passes to run (see --list)
  -o OUT.sdfg             write the IR file after them (written atomically); without -o and
                          without --print-after the IR file goes to standard output
  --print-after=NAME|all  print the IR as text (as sdfc compile --print-after does) after that pass
  --list                  list the passes in order: what each needs and what it decides

Compile options (below) apply to a DaCe file; an IR file keeps the options its passes ran with, and
different ones are refused.
)";

const char* kOptionsCommandHelp = R"(usage: sdfc options [--json]

Lists the compile options that compile, run and dot take. With --json, prints them as a JSON array
for tools (sdfc's Python package and its DaCe and GT4Py integration read it), one object per
option: "name" (the library API's and Python's name), "flag", "kind" (choice, text, number or
switch), "metavar" ("" for a switch),
"values" (the values it takes; empty: any text, or a number), "switch" (for a switch, the value
its flag sets; "" otherwise), "default" (as text) and "help".
)";

const char* kConvertHelp = R"(usage: sdfc convert IN OUT [--indent N]

Reads IN and writes it to OUT as DaCe SDFG JSON (compact, as DaCe's SDFG.save() writes it;
--indent N indents by N spaces). OUT ending in .sdfgz is gzip-compressed. The output is
deterministic: converting sdfc's own output gives identical bytes. OUT is written atomically
and left untouched when IN is invalid. Use "-" as OUT to write to standard output.
)";

}  // namespace

/// The compile options' help, from the option table (ir/Options.h).
std::string options_help() {
  constexpr std::size_t kColumn = 26, kWidth = 100;
  std::string s = "\ncompile options (also for run, dot and opt):\n";
  auto row = [&](const std::string& left, const std::string& help) {
    std::string line = "  " + left;
    if (line.size() + 2 > kColumn) {
      s += line + "\n" + std::string(kColumn, ' ');
    } else {
      s += line + std::string(kColumn - line.size(), ' ');
    }
    s += wrap(help, kColumn, kColumn, kWidth) + "\n";
  };
  for (auto& o : option_table()) {
    std::string left = o.flag;
    if (*o.metavar)
      left += std::string(" ") + o.metavar;
    else if (!o.values.empty())
      left += " " + fmt::format("{}", fmt::join(o.values, "|"));
    row(left, o.help);
  }
  row("--no-cache", "always build and check; do not use or fill the build cache ($SDFC_CACHE_DIR)");
  return s;
}

std::string help(const std::string& command) {
  if (command.empty()) return kMainHelp;
  if (command == "validate") return kValidateHelp;
  if (command == "print") return kPrintHelp;
  if (command == "convert") return kConvertHelp;
  if (command == "compile") return kCompileHelp + options_help();
  if (command == "run") return kRunHelp + options_help();
  if (command == "dot")
    return kDotHelp + options_help() + fmt::format("\npasses, in order: {}\n", fmt::join(pass_names(), ", "));
  if (command == "options") return kOptionsCommandHelp;
  if (command == "opt") return kOptHelp + options_help();
  return "";
}

}  // namespace sdfc
