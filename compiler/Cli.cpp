#include "compiler/Cli.h"

#include <fmt/format.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "clang_tools/Format.h"
#include "compiler/Build.h"
#include "compiler/CliHelp.h"
#include "compiler/Compile.h"
#include "compiler/DaceLayout.h"
#include "compiler/Output.h"
#include "compiler/Run.h"
#include "ir/Diagnostic.h"
#include "ir/Dot.h"
#include "ir/Dump.h"
#include "ir/IrFile.h"
#include "ir/JsonReader.h"
#include "ir/JsonWriter.h"
#include "ir/Validate.h"
#include "ir/Walk.h"
#include "lang/PythonTasklet.h"
#include "passes/Pipeline.h"
#include "passes/VerifySync.h"

#ifndef SDFC_VERSION
#define SDFC_VERSION "0.0.0"
#endif

namespace fs = std::filesystem;

namespace sdfc {
namespace {

constexpr int kOk = 0, kInvalid = 1, kUsage = 2;

bool is_help(const std::string& a) {
  return a == "-h" || a == "--help";
}

void report(std::ostream& err, const std::vector<Diagnostic>& ds) {
  for (auto& d : ds) err << d.str() << "\n";
}

/// Reads and validates a DaCe file; nullptr (after printing diagnostics) when the file is invalid.
/// An IR file (sdfc opt) is read with its decisions where `ir_file_ok` (sdfc print), else refused:
/// a command that treats it as a DaCe file would drop its decisions or run its passes again.
std::unique_ptr<SDFG> load(const std::string& path, std::ostream& err, const char* command, bool ir_file_ok = false) {
  try {
    IrFile ir = read_ir_file(path);
    if (ir.from_sdfc && ir_file_ok) return std::move(ir.sdfg);
    if (ir.from_sdfc) {
      report(err, {Diagnostic{path, "/sdfc", 0, 0, ir_file_refusal(fmt::format("sdfc {}", command))}});
      return nullptr;
    }
    auto sdfg = std::move(ir.sdfg);
    auto ds = validate(*sdfg, path);
    if (!ds.empty()) {
      report(err, ds);
      return nullptr;
    }
    return sdfg;
  } catch (const UserError& e) {
    report(err, e.diagnostics());
    return nullptr;
  }
}

/// Whether `s` ends with `suffix` (lower case), in any case: OUT.SDFGZ is gzip as out.sdfgz is.
bool ends_with_ignoring_case(const std::string& s, const std::string& suffix) {
  if (s.size() < suffix.size()) return false;
  for (std::size_t i = 0; i < suffix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(s[s.size() - suffix.size() + i])) != suffix[i]) return false;
  return true;
}

/// Writes an output file (compiler/Output.h); false after reporting the failure on `err`.
bool write_atomically(const std::string& path, const std::string& bytes, bool gzip, std::ostream& err) {
  try {
    OutputOptions o;
    o.gzip = gzip;
    write_output(path, bytes, o);
    return true;
  } catch (const UserError& e) {
    err << e.diagnostic().str() << "\n";
    return false;
  }
}

/// A mistake in the command line (exit code 2, the command's help after the message).
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Parses the compile option at args[i] (a row of the option table, or --no-cache), advancing i
/// past its value; returns false when args[i] is not one. Throws UsageError.
bool parse_option(const std::vector<std::string>& args, std::size_t& i, CompileOptions& o, bool& use_cache) {
  const std::string& a = args[i];
  if (a == "--no-cache") {
    use_cache = false;
    return true;
  }
  std::string flag = a.substr(0, a.find('='));
  const OptionSpec* spec = find_option_flag(flag);
  if (!spec) return false;
  std::string value;
  if (*spec->switch_value) {
    if (flag != a) throw UsageError(fmt::format("{} takes no value", flag));
    value = spec->switch_value;
  } else if (flag != a) {
    value = a.substr(flag.size() + 1);
  } else {
    if (i + 1 >= args.size()) throw UsageError(fmt::format("{} needs a value", flag));
    value = args[++i];
  }
  try {
    spec->set(o, value);
  } catch (const OptionError& e) {
    throw UsageError(fmt::format("{} {}", flag, e.what()));
  }
  return true;
}

/// A command's one positional argument, the input file; an unknown option or a second file is a
/// usage error.
void input_file(const std::string& a, std::string& file) {
  if (a.size() > 1 && a[0] == '-') throw UsageError(fmt::format("unknown option '{}'", a));
  if (!file.empty()) throw UsageError(fmt::format("unexpected argument '{}' (one input file only)", a));
  file = a;
}

/// The directory of option `name` at args[i] (`NAME DIR` or `NAME=DIR`, advancing i past DIR), or
/// nullopt when args[i] is another argument. A missing or empty directory is a usage error.
std::optional<std::string> directory_option(const std::vector<std::string>& args, std::size_t& i,
                                            const std::string& name) {
  const std::string& a = args[i];
  std::string dir;
  if (a == name && i + 1 < args.size())
    dir = args[++i];
  else if (a.rfind(name + "=", 0) == 0)
    dir = a.substr(name.size() + 1);
  else if (a != name)
    return std::nullopt;
  if (dir.empty()) throw UsageError(name + " needs a directory");
  return dir;
}

/// The pass of `--print-after=NAME` (or `--print-after NAME`) at args[i], advancing i past it;
/// nullopt when args[i] is another argument. An unknown pass is a usage error.
std::optional<std::string> print_after_option(const std::vector<std::string>& args, std::size_t& i) {
  const std::string& a = args[i];
  if (a != "--print-after" && a.rfind("--print-after=", 0) != 0) return std::nullopt;
  std::string pass = a == "--print-after" ? (i + 1 < args.size() ? args[++i] : "") : a.substr(14);
  if (pass != "all" && std::find(pass_names().begin(), pass_names().end(), pass) == pass_names().end())
    throw UsageError(
        fmt::format("--print-after: unknown pass '{}'; passes: {}, or all", pass, fmt::join(pass_names(), ", ")));
  return pass;
}

/// The program of an IR file or a DaCe file, with the options its passes run with: the file's for
/// an IR file (command-line options must then be the same or none), `given` for a DaCe file, which
/// is validated. Null after reporting a problem on `err`.
std::unique_ptr<SDFG> load_ir(const std::string& path, const CompileOptions& given, bool any_given,
                              CompileOptions& options, const std::string& command, std::ostream& err) {
  try {
    IrFile ir = read_ir_file(path);
    if (!ir.from_sdfc) {
      auto ds = validate(*ir.sdfg, path);
      if (!ds.empty()) {
        report(err, ds);
        return nullptr;
      }
      options = given;
      return std::move(ir.sdfg);
    }
    if (any_given && options_key(given) != options_key(ir.options)) {
      std::string theirs;
      for (auto& row : option_table())
        if (row.get(ir.options) != row.get(given))
          theirs += fmt::format("{}{} {}", theirs.empty() ? "" : ", ", row.flag, row.get(ir.options));
      err << fmt::format(
          "{}: error: this IR file's passes ran with other options ({}); sdfc {} takes its options from the file: "
          "drop the compile options, or start again from the DaCe file\n",
          path, theirs, command);
      return nullptr;
    }
    if (std::string problem = check_pass_order({}, ir.sdfg->passes_run); !problem.empty()) {
      err << fmt::format("{}: /sdfc/passes: error: the passes this IR file records: {}\n", path, problem);
      return nullptr;
    }
    options = ir.options;
    return std::move(ir.sdfg);
  } catch (const UserError& e) {
    report(err, e.diagnostics());
    return nullptr;
  }
}

int cmd_opt(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  CompileOptions given;
  bool use_cache = true;  // accepted for symmetry with compile; nothing is built
  std::string file, output, print_after;
  std::vector<std::string> names;
  bool list = false, any_given = false;
  try {
    for (std::size_t i = 0; i < args.size(); ++i) {
      const std::string& a = args[i];
      if (is_help(a)) {
        out << help("opt");
        return kOk;
      }
      if (parse_option(args, i, given, use_cache)) {
        any_given |= args[i] != "--no-cache";
        continue;
      }
      if (a == "-o") {
        if (i + 1 >= args.size()) throw UsageError("-o needs a file name");
        output = args[++i];
      } else if (a == "--list") {
        list = true;
      } else if (a == "--passes" || a.rfind("--passes=", 0) == 0) {
        if (a == "--passes" && i + 1 >= args.size()) throw UsageError("--passes needs pass names");
        std::string text = a == "--passes" ? args[++i] : a.substr(9);
        for (std::size_t at = 0; at <= text.size();) {
          std::size_t comma = std::min(text.find(',', at), text.size());
          if (comma > at) names.push_back(text.substr(at, comma - at));
          at = comma + 1;
        }
        if (names.empty()) throw UsageError("--passes needs pass names");
      } else if (auto pass = print_after_option(args, i)) {
        print_after = *pass;
      } else {
        input_file(a, file);
      }
    }
    if (list) {
      if (!file.empty() || !names.empty()) throw UsageError("--list takes no file and no passes");
      for (auto& p : pass_infos())
        out << fmt::format("{:<21} needs: {}\n{:<21} decides: {}\n", p.name,
                           p.requires_.empty() ? "nothing" : fmt::format("{}", fmt::join(p.requires_, ", ")), "",
                           p.produces);
      return kOk;
    }
    if (file.empty()) throw UsageError("no input file");
    if (names.empty()) throw UsageError("--passes=NAME,... is required (sdfc opt --list lists them)");
  } catch (const UsageError& e) {
    err << "sdfc opt: " << e.what() << "\n" << help("opt");
    return kUsage;
  }
  CompileOptions options;
  auto sdfg = load_ir(file, given, any_given, options, "opt", err);
  if (!sdfg) return kInvalid;
  if (std::string problem = check_pass_order(sdfg->passes_run, names); !problem.empty()) {
    err << fmt::format("{}: error: {}\n", file, problem);
    return kInvalid;
  }
  try {
    PipelineHooks hooks;
    hooks.print_after = print_after;
    hooks.print_to = &out;
    run_passes(*sdfg, names, options, hooks);
  } catch (const UserError& e) {
    std::vector<Diagnostic> ds = e.diagnostics();
    for (auto& d : ds)
      if (d.file.empty()) d.file = file;
    report(err, ds);
    return kInvalid;
  }
  std::string text = write_ir(*sdfg, options);
  if (!output.empty()) return write_atomically(output, text, false, err) ? kOk : kInvalid;
  if (print_after.empty()) out << text;
  return kOk;
}

int cmd_compile(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  CompileOptions co;
  bool use_cache = true;
  std::string file, output, emit_dir, dace_dir, print_after;
  bool time_passes = false, stats = false, format = false, verify = false, any_given = false;
  try {
    for (std::size_t i = 0; i < args.size(); ++i) {
      const std::string& a = args[i];
      if (is_help(a)) {
        out << help("compile");
        return kOk;
      }
      if (parse_option(args, i, co, use_cache)) {
        any_given |= args[i] != "--no-cache";
        continue;
      }
      if (a == "-o") {
        if (i + 1 >= args.size()) throw UsageError("-o needs a file name");
        output = args[++i];
      } else if (auto dir = directory_option(args, i, "--emit-source")) {
        emit_dir = *dir;
      } else if (auto dir = directory_option(args, i, "--dace-layout")) {
        dace_dir = *dir;
      } else if (auto pass = print_after_option(args, i)) {
        print_after = *pass;
      } else if (a == "--time-passes") {
        time_passes = true;
      } else if (a == "--stats") {
        stats = true;
      } else if (a == "--format") {
        format = true;
      } else if (a == "--verify-sync") {
        verify = true;
      } else {
        input_file(a, file);
      }
    }
    if (file.empty()) throw UsageError("no input file");
    if (output.empty() && emit_dir.empty() && dace_dir.empty())
      throw UsageError("nothing to do: give -o LIB.so, --emit-source DIR and/or --dace-layout DIR");
  } catch (const UsageError& e) {
    err << "sdfc compile: " << e.what() << "\n" << help("compile");
    return kUsage;
  }
  if (format && !formatting_available()) {
    err << "sdfc compile: --format needs Clang, and this sdfc was built without it (SDFC_WITH_CLANG=OFF); rebuild "
           "with libclang-cpp14-dev and libclang-14-dev installed, or drop --format\n";
    return kUsage;
  }
  auto clock = [] { return std::chrono::steady_clock::now(); };
  auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
  auto t0 = clock();
  // A DaCe file, or an IR file (sdfc opt) whose remaining passes run with the file's options.
  CompileOptions given = co;
  auto sdfg = load_ir(file, given, any_given, co, "compile", err);
  if (!sdfg) return kInvalid;
  co.report_refusals |= !dace_dir.empty();
  try {
    auto t1 = clock();
    PipelineHooks hooks;
    hooks.print_after = print_after;
    hooks.print_to = &out;
    hooks.time_passes = time_passes;
    hooks.time_to = &err;
    hooks.notes_to = &err;
    if (time_passes) err << fmt::format("load+validate {:16.3f} ms\n", ms(t0, t1));
    if (co.target == Target::CPU && co.gpu_streams > 0)
      err << "sdfc compile: note: --gpu-streams is ignored for --target cpu\n";
    auto program = generate_program(*sdfg, co, file, hooks, use_cache);
    auto t2 = clock();
    if (time_passes) err << fmt::format("passes+codegen {:15.3f} ms\n", ms(t1, t2));
    if (verify) {
      SyncReport report = verify_sync(*sdfg, co);
      auto t = clock();
      if (time_passes) err << fmt::format("verify-sync {:18.3f} ms\n", ms(t2, t));
      t2 = t;
      for (auto& race : report.races) err << fmt::format("{}: error: race: {}\n", file, race);
      if (!report.ok()) {
        err << fmt::format(
            "{}: {} unordered pair(s) of accesses; this is an sdfc bug in the synchronization pass, please report "
            "it with the input file and options\n",
            file, report.races.size());
        return kInvalid;
      }
      err << fmt::format("verify-sync: {} control-flow path(s){}, every conflicting access ordered{}\n", report.paths,
                         report.bounded ? " (bounded)" : "",
                         co.target == Target::CPU ? " (CPU: one agent, nothing to order)" : "");
    }
    if (format) {
      // Whitespace only; the formatted text is what is built, so it has its own cache entries
      // (the cache key hashes the sources).
      format_program(program);
      auto t = clock();
      if (time_passes) err << fmt::format("format {:23.3f} ms\n", ms(t2, t));
      t2 = t;
    }
    if (!emit_dir.empty()) emit_sources(program, emit_dir);
    if (stats) {
      std::size_t lines = 0;
      for (auto& f : program.files) lines += static_cast<std::size_t>(std::count(f.text.begin(), f.text.end(), '\n'));
      err << fmt::format("program {}: {} generated lines in {} file(s)\n", program.name, lines, program.files.size());
      for (auto& ws : sdfg->workspaces) {
        std::string saving;
        auto shared = as_constant(ws.bytes), unshared = as_constant(ws.unshared_bytes);
        if (shared && unshared && *unshared > 0)
          saving = fmt::format(", {:.0f}% saved by sharing",
                               100.0 * static_cast<double>(*unshared - *shared) / static_cast<double>(*unshared));
        err << fmt::format("workspace {}: {} transient(s), {} bytes; {} bytes without sharing{}\n",
                           to_string(ws.storage), ws.members.size(), print_expr(ws.bytes),
                           print_expr(ws.unshared_bytes), saving);
      }
      // Transients the call's arena and the workspaces leave out, and why (transient-lifetimes
      // placed them where their size is known).
      walk::for_each_sdfg(*sdfg, "", [&](const SDFG& g, const std::string&) {
        for (auto& [n, d] : g.arrays) {
          if (d.place == DataDesc::Place::State && d.place_state)
            err << fmt::format(
                "transient {} ({} elements): allocated in state \"{}\" each time it runs, not per "
                "call: its size depends on a symbol assigned during the program\n",
                n, print_expr(simplify(d.total_size)), d.place_state->label);
          if (d.place == DataDesc::Place::MapScope && d.place_state)
            err << fmt::format(
                "transient {} ({} elements): allocated inside the one map scope that uses it, in "
                "state \"{}\"\n",
                n, print_expr(simplify(d.total_size)), d.place_state->label);
        }
      });
    }
    if (output.empty() && dace_dir.empty()) return kOk;
    auto built = build_program(program, co, use_cache);
    if (!built.note.empty()) err << "sdfc compile: note: " << built.note << "\n";
    auto t3 = clock();
    if (time_passes)
      err << fmt::format("build ({}) {:>14.3f} ms\n", built.cache_hit ? "cache hit" : "compiled", ms(t2, t3));
    if (stats)
      err << fmt::format("build: {} (key {})\n", built.cache_hit ? "cache hit" : "compiled",
                         built.cache_key.substr(0, 16));
    if (!output.empty()) install_library(built.library_path, output);
    if (!dace_dir.empty()) write_dace_layout(dace_dir, program, built.library_path, file, *sdfg, co, use_cache);
    return kOk;
  } catch (const InvalidInput& e) {
    report(err, e.diagnostics());
  } catch (const UserError& e) {
    report(err, e.diagnostics());
  }
  return kInvalid;
}

/// Renders DOT text to SVG with Graphviz's `dot` (no shell) in a private temporary directory, then
/// writes the SVG to `path` as an output.
bool write_svg(const std::string& path, const std::string& dot_text, std::ostream& err) {
  std::string dir = (fs::temp_directory_path() / "sdfc-dot-XXXXXX").string();
  if (!::mkdtemp(dir.data())) {
    err << fmt::format("{}: error: cannot create a temporary directory to render SVG in (set TMPDIR)\n", path);
    return false;
  }
  struct RemoveDir {
    std::string dir;
    ~RemoveDir() {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  } cleanup{dir};
  std::string tmp_dot = dir + "/graph.dot", tmp_svg = dir + "/graph.svg";
  if (!write_atomically(tmp_dot, dot_text, false, err)) return false;
  ProcessResult r = run_process({"dot", "-Tsvg", "-o", tmp_svg, tmp_dot});
  if (r.status == -1) {
    err << fmt::format(
        "{}: error: cannot render SVG: Graphviz's dot program was not found in PATH ({}); install it "
        "(apt-get install graphviz) or write the DOT text instead (-o OUT.dot)\n",
        path, r.output);
    return false;
  }
  if (r.status != 0) {
    std::string first = r.output.substr(0, std::min<std::size_t>(r.output.size(), 400));
    while (!first.empty() && (first.back() == '\n' || first.back() == ' ')) first.pop_back();
    err << fmt::format(
        "{}: error: Graphviz's dot failed (exit {}) on the graph sdfc wrote: {}; this is an sdfc bug, "
        "please report it with the input file (-o OUT.dot writes the graph)\n",
        path, r.status, first);
    return false;
  }
  std::ifstream in(tmp_svg, std::ios::binary);
  std::string svg((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return write_atomically(path, svg, false, err);
}

int cmd_dot(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  CompileOptions co;
  bool use_cache = true;  // accepted for symmetry with compile; nothing is built
  std::string file, output, after;
  try {
    for (std::size_t i = 0; i < args.size(); ++i) {
      const std::string& a = args[i];
      if (is_help(a)) {
        out << help("dot");
        return kOk;
      }
      if (parse_option(args, i, co, use_cache)) continue;
      if (a == "-o") {
        if (i + 1 >= args.size()) throw UsageError("-o needs a file name");
        output = args[++i];
      } else if (a == "--after" || a.rfind("--after=", 0) == 0) {
        if (a == "--after" && i + 1 >= args.size()) throw UsageError("--after needs a pass name");
        after = a == "--after" ? args[++i] : a.substr(8);
        bool known = after == "none";
        for (auto& n : pass_names()) known |= n == after;
        if (!known)
          throw UsageError(
              fmt::format("--after: unknown pass '{}'; passes: {}, or none", after, fmt::join(pass_names(), ", ")));
      } else {
        input_file(a, file);
      }
    }
    if (file.empty()) throw UsageError("no input file");
    if (output.empty()) throw UsageError("-o OUT.dot or -o OUT.svg is required");
    if (output != "-" && !ends_with_ignoring_case(output, ".dot") && !ends_with_ignoring_case(output, ".svg"))
      throw UsageError(
          fmt::format("-o {}: the output must end in .dot (DOT text) or .svg (rendered by Graphviz)", output));
  } catch (const UsageError& e) {
    err << "sdfc dot: " << e.what() << "\n" << help("dot");
    return kUsage;
  }
  auto sdfg = load(file, err, "dot");
  if (!sdfg) return kInvalid;
  try {
    if (after != "none") {
      PipelineHooks hooks;
      hooks.stop_after = after;
      run_pipeline(*sdfg, co, hooks);
    }
  } catch (const UserError& e) {
    std::vector<Diagnostic> ds = e.diagnostics();
    for (auto& d : ds)
      if (d.file.empty()) d.file = file;  // passes know the JSON pointer, not the file
    report(err, ds);
    err << "sdfc dot: note: the passes refused the program; `--after none` draws the SDFG as the file has it\n";
    return kInvalid;
  }
  std::string text = write_dot(*sdfg);
  if (output == "-") {
    out << text;
    return kOk;
  }
  if (ends_with_ignoring_case(output, ".svg")) return write_svg(output, text, err) ? kOk : kInvalid;
  return write_atomically(output, text, false, err) ? kOk : kInvalid;
}

int cmd_run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  RunRequest req;
  try {
    for (std::size_t i = 0; i < args.size(); ++i) {
      const std::string& a = args[i];
      if (is_help(a)) {
        out << help("run");
        return kOk;
      }
      if (parse_option(args, i, req.options, req.use_cache)) continue;
      if (a == "--inputs" || a == "--output") {
        if (i + 1 >= args.size()) throw UsageError(a + " needs a file name");
        (a == "--inputs" ? req.inputs_path : req.output_path) = args[++i];
      } else if (a.rfind("--inputs=", 0) == 0) {
        req.inputs_path = a.substr(9);
      } else if (a.rfind("--output=", 0) == 0) {
        req.output_path = a.substr(9);
      } else if (a.size() > 1 && a[0] == '-') {
        throw UsageError(fmt::format("unknown option '{}'", a));
      } else if (req.sdfg_path.empty()) {
        req.sdfg_path = a;
      } else {
        throw UsageError(fmt::format("unexpected argument '{}' (one input file only)", a));
      }
    }
    if (req.sdfg_path.empty()) throw UsageError("no input file");
    if (req.inputs_path.empty()) throw UsageError("--inputs INPUTS.json is required");
  } catch (const UsageError& e) {
    err << "sdfc run: " << e.what() << "\n" << help("run");
    return kUsage;
  }
  return run_program(req, out, err);
}

int cmd_options(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  bool json = false;
  for (auto& a : args) {
    if (is_help(a)) {
      out << help("options");
      return kOk;
    }
    if (a != "--json") {
      err << fmt::format("sdfc options: unexpected argument '{}'\n{}", a, help("options"));
      return kUsage;
    }
    json = true;
  }
  if (!json) {
    out << options_help().substr(1);
    return kOk;
  }
  nlohmann::ordered_json table = nlohmann::ordered_json::array();
  CompileOptions defaults;
  for (auto& o : option_table())
    table.push_back({{"name", o.name},
                     {"flag", o.flag},
                     {"kind", to_string(o.kind)},
                     {"metavar", o.metavar},
                     {"values", o.values},
                     {"switch", o.switch_value},
                     {"default", o.get(defaults)},
                     {"help", o.help}});
  out << table.dump(1) << "\n";
  return kOk;
}

int cmd_validate(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  std::vector<std::string> files;
  bool only_files = false;  // after "--" every argument is a file
  for (auto& a : args) {
    if (only_files) {
      files.push_back(a);
      continue;
    }
    if (a == "--") {
      only_files = true;
      continue;
    }
    if (is_help(a)) {
      out << help("validate");
      return kOk;
    }
    if (a.size() > 1 && a[0] == '-') {
      err << fmt::format("sdfc validate: unknown option '{}'\n{}", a, help("validate"));
      return kUsage;
    }
    files.push_back(a);
  }
  if (files.empty()) {
    err << "sdfc validate: no input files\n" << help("validate");
    return kUsage;
  }
  int rc = kOk;
  for (auto& f : files) {
    auto sdfg = load(f, err, "validate");
    // Python tasklets are translated too, as compile does before printing (its legalize pass).
    std::vector<Diagnostic> tasklets = sdfg ? check_python_tasklets(*sdfg, f) : std::vector<Diagnostic>{};
    report(err, tasklets);
    if (sdfg && tasklets.empty())
      out << f << ": ok\n";
    else
      rc = kInvalid;
  }
  return rc;
}

int cmd_print(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  std::vector<std::string> files;
  bool only_files = false;  // after "--" every argument is a file
  for (auto& a : args) {
    if (!only_files && a == "--") {
      only_files = true;
      continue;
    }
    if (!only_files && is_help(a)) {
      out << help("print");
      return kOk;
    }
    if (!only_files && a.size() > 1 && a[0] == '-') {
      err << fmt::format("sdfc print: unknown option '{}'\n{}", a, help("print"));
      return kUsage;
    }
    files.push_back(a);
  }
  if (files.size() != 1) {
    err << "sdfc print: expected exactly one input file\n" << help("print");
    return kUsage;
  }
  auto sdfg = load(files[0], err, "print", true);
  if (!sdfg) return kInvalid;
  out << dump(*sdfg);
  return kOk;
}

int cmd_convert(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  std::vector<std::string> files;
  int indent = -1;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (is_help(args[i])) {
      out << help("convert");
      return kOk;
    }
    if (args[i] == "--indent") {
      if (i + 1 >= args.size() || args[i + 1].find_first_not_of("0123456789") != std::string::npos ||
          args[i + 1].empty() || args[i + 1].size() > 2) {
        err << "sdfc convert: --indent needs a number of spaces (0-99)\n";
        return kUsage;
      }
      indent = std::stoi(args[++i]);
      continue;
    }
    if (args[i].size() > 1 && args[i][0] == '-') {
      err << fmt::format("sdfc convert: unknown option '{}'\n{}", args[i], help("convert"));
      return kUsage;
    }
    files.push_back(args[i]);
  }
  if (files.size() != 2) {
    err << "sdfc convert: expected an input and an output file\n" << help("convert");
    return kUsage;
  }
  auto sdfg = load(files[0], err, "convert");
  if (!sdfg) return kInvalid;
  std::string text = write_sdfg(*sdfg, indent);
  if (files[1] == "-") {
    out << text;
    return kOk;
  }
  return write_atomically(files[1], text, ends_with_ignoring_case(files[1], ".sdfgz"), err) ? kOk : kInvalid;
}

}  // namespace

int run_cli(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    err << help("");
    return kUsage;
  }
  const std::string cmd = args[0];
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (is_help(cmd)) {
    out << help("");
    return kOk;
  }
  if (cmd == "--version" || cmd == "version") {
    if (!rest.empty()) {
      err << fmt::format("sdfc {}: unexpected argument '{}'\n", cmd, rest[0]);
      return kUsage;
    }
    out << "sdfc " << SDFC_VERSION << "\n";
    return kOk;
  }
  try {
    if (cmd == "help") {
      std::string text = help(rest.empty() ? "" : rest[0]);
      if (text.empty()) {
        err << fmt::format("sdfc help: unknown command '{}'\n", rest[0]);
        return kUsage;
      }
      out << text;
      return kOk;
    }
    if (cmd == "validate") return cmd_validate(rest, out, err);
    if (cmd == "print") return cmd_print(rest, out, err);
    if (cmd == "convert") return cmd_convert(rest, out, err);
    if (cmd == "compile") return cmd_compile(rest, out, err);
    if (cmd == "run") return cmd_run(rest, out, err);
    if (cmd == "dot") return cmd_dot(rest, out, err);
    if (cmd == "options") return cmd_options(rest, out, err);
    if (cmd == "opt") return cmd_opt(rest, out, err);
  } catch (const std::exception& e) {
    err << "sdfc: " << e.what() << "\n";
    return kInvalid;
  }
  err << fmt::format("sdfc: unknown command '{}'\n\n{}", cmd, help(""));
  return kUsage;
}

}  // namespace sdfc
