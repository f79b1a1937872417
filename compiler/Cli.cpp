#include "compiler/Cli.h"

#include <fmt/format.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "ir/Diagnostic.h"
#include "ir/Dump.h"
#include "ir/JsonReader.h"
#include "ir/JsonWriter.h"
#include "ir/Validate.h"

#ifndef SDFC_VERSION
#define SDFC_VERSION "0.0.0"
#endif

namespace sdfc {
namespace {

constexpr int kOk = 0, kInvalid = 1, kUsage = 2;

const char* kMainHelp = R"(sdfc - a compiler for stateful dataflow programs (DaCe SDFG files)

usage: sdfc <command> [options] [files]

commands:
  validate FILE...     check SDFG files; one diagnostic per problem on stderr
  print FILE           print the SDFG as readable text
  convert IN OUT       read IN and write it as DaCe JSON to OUT (.sdfgz: gzip)
  help [COMMAND]       show help for a command

options:
  -h, --help           show help (also after a command: sdfc validate --help)
  --version            print the version

exit codes: 0 success, 1 invalid or unsupported input, 2 usage error
)";

const char* kValidateHelp = R"(usage: sdfc validate FILE...

Reads each SDFG file (.sdfg JSON or gzip-compressed .sdfgz) and checks it: JSON syntax, known
node, block and descriptor types, enum values, expressions, dangling edges and connectors, map
scopes, cycles in states, subsets provably out of bounds. Each problem is printed on stderr as
  FILE: /json/pointer: error: message
(or FILE:LINE:COLUMN: error: ... for JSON syntax errors). Prints "FILE: ok" for valid files.
Exit code 0 when every file is valid, 1 otherwise.
)";

const char* kPrintHelp = R"(usage: sdfc print FILE

Prints the SDFG in FILE as indented text: symbols, data containers, control flow, and for each
state its nodes ([id] kind ...) and edges (src:connector -> dst:connector  data[subset]).
Exit code 1 (with diagnostics) when FILE is invalid.
)";

const char* kConvertHelp = R"(usage: sdfc convert IN OUT [--indent N]

Reads IN and writes it to OUT as DaCe SDFG JSON (compact, as DaCe's SDFG.save() writes it;
--indent N indents by N spaces). OUT ending in .sdfgz is gzip-compressed. The output is
deterministic: converting sdfc's own output gives identical bytes. OUT is written atomically
and left untouched when IN is invalid. Use "-" as OUT to write to standard output.
)";

bool is_help(const std::string& a) { return a == "-h" || a == "--help"; }

void report(std::ostream& err, const std::vector<Diagnostic>& ds) {
  for (auto& d : ds) err << d.str() << "\n";
}

/// Reads and validates; nullptr (after printing diagnostics) when the file is invalid.
std::unique_ptr<SDFG> load(const std::string& path, std::ostream& err) {
  try {
    auto sdfg = read_sdfg_file(path);
    auto ds = validate(*sdfg, path);
    if (!ds.empty()) {
      report(err, ds);
      return nullptr;
    }
    return sdfg;
  } catch (const UserError& e) {
    err << e.diagnostic().str() << "\n";
    return nullptr;
  }
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// Writes to a temporary file beside `path` and renames it over `path`.
bool write_atomically(const std::string& path, const std::string& bytes, bool gzip, std::ostream& err) {
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  bool ok;
  if (gzip) {
    gzFile f = gzopen(tmp.c_str(), "wb9");
    ok = f && gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())) == static_cast<int>(bytes.size());
    if (f) ok = gzclose(f) == Z_OK && ok;
  } else {
    std::ofstream o(tmp, std::ios::binary);
    o.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    o.close();
    ok = static_cast<bool>(o);
  }
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    err << fmt::format("{}: error: cannot write the output file (is the directory writable?)\n", path);
    return false;
  }
  return true;
}

int cmd_validate(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  std::vector<std::string> files;
  for (auto& a : args) {
    if (is_help(a)) {
      out << kValidateHelp;
      return kOk;
    }
    if (a.size() > 1 && a[0] == '-') {
      err << fmt::format("sdfc validate: unknown option '{}'\n{}", a, kValidateHelp);
      return kUsage;
    }
    files.push_back(a);
  }
  if (files.empty()) {
    err << "sdfc validate: no input files\n" << kValidateHelp;
    return kUsage;
  }
  int rc = kOk;
  for (auto& f : files) {
    if (load(f, err)) out << f << ": ok\n";
    else rc = kInvalid;
  }
  return rc;
}

int cmd_print(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  for (auto& a : args)
    if (is_help(a)) {
      out << kPrintHelp;
      return kOk;
    }
  if (args.size() != 1 || (args[0].size() > 1 && args[0][0] == '-')) {
    err << "sdfc print: expected exactly one input file\n" << kPrintHelp;
    return kUsage;
  }
  auto sdfg = load(args[0], err);
  if (!sdfg) return kInvalid;
  out << dump(*sdfg);
  return kOk;
}

int cmd_convert(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  std::vector<std::string> files;
  int indent = -1;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (is_help(args[i])) {
      out << kConvertHelp;
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
      err << fmt::format("sdfc convert: unknown option '{}'\n{}", args[i], kConvertHelp);
      return kUsage;
    }
    files.push_back(args[i]);
  }
  if (files.size() != 2) {
    err << "sdfc convert: expected an input and an output file\n" << kConvertHelp;
    return kUsage;
  }
  auto sdfg = load(files[0], err);
  if (!sdfg) return kInvalid;
  std::string text = write_sdfg(*sdfg, indent);
  if (files[1] == "-") {
    out << text;
    return kOk;
  }
  return write_atomically(files[1], text, ends_with(files[1], ".sdfgz"), err) ? kOk : kInvalid;
}

}  // namespace

int run_cli(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    err << kMainHelp;
    return kUsage;
  }
  const std::string cmd = args[0];
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (is_help(cmd)) {
    out << kMainHelp;
    return kOk;
  }
  if (cmd == "--version" || cmd == "version") {
    out << "sdfc " << SDFC_VERSION << "\n";
    return kOk;
  }
  try {
    if (cmd == "help") {
      if (rest.empty()) out << kMainHelp;
      else if (rest[0] == "validate") out << kValidateHelp;
      else if (rest[0] == "print") out << kPrintHelp;
      else if (rest[0] == "convert") out << kConvertHelp;
      else {
        err << fmt::format("sdfc help: unknown command '{}'\n", rest[0]);
        return kUsage;
      }
      return kOk;
    }
    if (cmd == "validate") return cmd_validate(rest, out, err);
    if (cmd == "print") return cmd_print(rest, out, err);
    if (cmd == "convert") return cmd_convert(rest, out, err);
  } catch (const std::exception& e) {
    err << "sdfc: " << e.what() << "\n";
    return kInvalid;
  }
  err << fmt::format("sdfc: unknown command '{}'\n\n{}", cmd, kMainHelp);
  return kUsage;
}

}  // namespace sdfc
