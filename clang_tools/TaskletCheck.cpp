// The tasklet check (see TaskletCheck.h): builds one translation unit for all CPP tasklets of a
// program and, in a build with Clang, parses it once and maps Clang's findings back to tasklets.
#include "clang_tools/TaskletCheck.h"

#ifdef SDFC_CLANG_PLUGIN
// The plugin (libsdfc_clang.so) holds the Clang half of this file; libsdfc holds the rest, and
// the plugin uses it from there. Its own definitions get other names so that the two never mix.
#define tasklet_check_source plugin_tasklet_check_source
#define tasklet_check_available plugin_tasklet_check_available
#define check_cpp_tasklets plugin_check_cpp_tasklets
#define tasklet_check_unit plugin_tasklet_check_unit
#endif
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "analysis/GpuOps.h"
#include "clang_tools/ClangPlugin.h"
#include "ir/Memlets.h"
#include "ir/Signature.h"
#include "lang/CodeWriter.h"
#include "lang/CppEnvironment.h"

#ifdef SDFC_WITH_CLANG
#include <clang/AST/ASTConsumer.h>
#include <clang/AST/ASTContext.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/Basic/DiagnosticSema.h>
#include <clang/Basic/Version.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/FrontendAction.h>
#include <clang/Frontend/FrontendActions.h>
#include <clang/Tooling/Tooling.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/VirtualFileSystem.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Support/xxhash.h>
#include <unistd.h>
#endif

namespace sdfc {
namespace {

/// The file name of the unit itself, and the `#line` file names that mark code from the SDFG.
constexpr const char* kUnitFile = "/sdfc-tasklet-check/tasklets.cpp";
constexpr const char* kSegmentPrefix = "sdfc-segment-";
constexpr const char* kTaskletFunctionPrefix = "__sdfc_tasklet_";

/// How a connector is bound in generated code (codegen/Dataflow.cpp, emit_tasklet).
enum class Binding { InValue, InPointer, OutValue, OutPointer, OutReference };

struct ConnectorDecl {
  std::string name;
  Binding binding;
  std::string ctype;
};

/// A piece of code from the SDFG inside the unit: a tasklet's code, the SDFG's global_code, or a
/// tasklet's code_global.
struct Segment {
  enum Kind { Tasklet, GlobalCode, CodeGlobal } kind = Tasklet;
  std::string pointer;       ///< JSON pointer of the code value (".../attributes/code")
  std::string node_pointer;  ///< Tasklet: the node's pointer
  std::string label;         ///< Tasklet: the tasklet's label
  bool device = false;       ///< device code: Clang's own errors are not reported
  std::vector<ConnectorDecl> connectors;
  std::vector<std::string> unbound;  ///< Tasklet: connectors without data (generated code omits them)
  std::vector<std::string> symbols;  ///< Tasklet: symbols in scope, for messages
  const SDFG* sdfg = nullptr;        ///< Tasklet: the SDFG the tasklet is in (its data containers)
  int unit_line = 0;                 ///< Tasklet: the line of the unit its function starts at
};

struct Unit {
  std::string text;
  std::vector<Segment> segments;
  int cpp_tasklets = 0;
};

bool has_cpp_type(DType t) {
  // The generated code's headers do not define dace::float16 (the code generator does not
  // support it yet); tasklets with such connectors are left to it.
  return t != DType::Float16;
}

/// The unit's first lines, the same for every program of a target kind (cpu, or GPU): the
/// generated code's headers and the check's declarations. A precompiled header of them saves
/// their parse (check_cpp_tasklets).
std::string unit_prefix(Target target) {
  bool gpu = target != Target::CPU;
  std::string text = "// sdfc tasklet check: every CPP tasklet, one function each\n";
  for (auto& h : generated_std_includes()) text += "#include " + h + "\n";
  text += "#include \"sdfc/program.h\"\n";
  if (gpu) {
    // GPU targets compile global code with nvcc/hipcc; a host parse reads its qualifiers as nothing.
    for (const char* q : {"__device__", "__host__", "__global__", "__forceinline__", "__shared__", "__constant__"})
      text += fmt::format("#define {}\n", q);
    // Host tasklets of GPU programs may call the CUDA/HIP runtime (GT4Py's timers do).
    text += "#include \"sdfc/gpu_runtime_decls.h\"\n";
    // HIP sources see the CUDA names DaCe-style code uses as their HIP twins, as generated code does.
    if (target == Target::HIP) text += "#define SDFC_HIP 1\n#include \"sdfc/gpu_runtime_names.h\"\n";
  }
  text += "template <typename T> T __sdfc_value();\n";
  text += "template <typename T> T& __sdfc_lvalue();\n";
  return text;
}

/// Builds the unit: the generated code's headers, global code, then one function per tasklet.
class UnitBuilder {
 public:
  explicit UnitBuilder(const CompileOptions& options) : target_(options.target), gpu_(options.target != Target::CPU) {}

  Unit build(const SDFG& root) {
    // Nothing that names the program (its name, labels, pointers, symbols no code uses) is in the
    // unit: programs with the same tasklets share the unit, and so the memory of its check
    // (compiler/Compile.cpp; GT4Py's timer tasklets are the same in every GT4Py program).
    append(unit_prefix(target_));
    // CBLAS for tasklets DaCe expanded into CBLAS calls (expand-library-nodes), as generated code
    if (root.libraries.count("cblas")) append("#include <cblas.h>\n");
    if (!root.global_code.code.empty()) {
      add_code_segment(Segment::GlobalCode, "/attributes/global_code", root.global_code.code);
      global_ids_ = identifiers_in(root.global_code.code);
    }
    // Tasklets' code_global precedes every tasklet, as in generated code (once per distinct text).
    collect_code_globals(root, "");
    walk_region(root, "", false);
    return std::move(unit_);
  }

 private:
  Target target_;
  bool gpu_;
  Unit unit_;
  std::set<std::string> code_globals_;
  std::set<std::string> global_ids_;  ///< identifiers of global_code and code_global (macros may use symbols)
  int lines_ = 0;                     ///< physical lines in unit_.text so far

  void append(const std::string& text) {
    unit_.text += text;
    lines_ += static_cast<int>(std::count(text.begin(), text.end(), '\n'));
  }

  /// Code from the SDFG under its own `#line` file name (segment `index`, lines from 1), then back
  /// to the unit's own numbering.
  void append_segment(int index, std::string code) {
    if (code.empty() || code.back() != '\n') code += '\n';
    append(fmt::format("#line 1 \"{}{}\"\n", kSegmentPrefix, index));
    append(code);
    append(fmt::format("#line {} \"{}\"\n", lines_ + 2, kUnitFile));
  }

  void add_code_segment(Segment::Kind kind, const std::string& pointer, const std::string& code) {
    Segment seg;
    seg.kind = kind;
    seg.pointer = pointer;
    seg.device = gpu_;  // compiled by nvcc/hipcc for GPU targets
    unit_.segments.push_back(std::move(seg));
    append_segment(static_cast<int>(unit_.segments.size()) - 1, code);
  }

  /// Calls f(state, pointer) for every state of a region, loops and conditionals included.
  template <typename F>
  static void for_each_state(const Block& region, const std::string& ptr, const F& f) {
    for (std::size_t b = 0; b < region.blocks.size(); ++b) {
      const Block& blk = *region.blocks[b];
      std::string bp = ptr + "/nodes/" + std::to_string(b);
      if (blk.kind == BlockKind::State) f(blk, bp);
      if (blk.is_region()) for_each_state(blk, bp, f);
      for (std::size_t k = 0; k < blk.branches.size(); ++k)
        for_each_state(*blk.branches[k].second, bp + "/branches/" + std::to_string(k) + "/1", f);
    }
  }

  void collect_code_globals(const SDFG& g, const std::string& sdfg_ptr) {
    for_each_state(g.root, sdfg_ptr, [&](const Block& st, const std::string& ptr) {
      for (std::size_t i = 0; i < st.nodes.size(); ++i) {
        const Node& n = *st.nodes[i];
        std::string np = ptr + "/nodes/" + std::to_string(i);
        if (n.kind == NodeKind::Tasklet && !n.code_global.code.empty() &&
            code_globals_.insert(n.code_global.code).second) {
          add_code_segment(Segment::CodeGlobal, np + "/attributes/code_global", n.code_global.code);
          for (auto& id : identifiers_in(n.code_global.code)) global_ids_.insert(id);
        }
        if (n.kind == NodeKind::NestedSDFG && n.sdfg) collect_code_globals(*n.sdfg, np + "/attributes/sdfg");
      }
    });
  }

  void walk_region(const SDFG& g, const std::string& sdfg_ptr, bool in_kernel) {
    for_each_state(g.root, sdfg_ptr, [&](const Block& st, const std::string& sp) {
      for (std::size_t i = 0; i < st.nodes.size(); ++i) {
        const Node& n = *st.nodes[i];
        std::string np = sp + "/nodes/" + std::to_string(i);
        bool device = in_kernel || in_gpu_map(st, static_cast<int>(i));
        if (n.kind == NodeKind::Tasklet && n.code.language == Language::CPP && n.library_call.empty()) {
          ++unit_.cpp_tasklets;
          add_tasklet(g, st, static_cast<int>(i), np, device);
        }
        if (n.kind == NodeKind::NestedSDFG && n.sdfg) walk_region(*n.sdfg, np + "/attributes/sdfg", device);
      }
    });
  }

  static bool in_gpu_map(const Block& st, int id) {
    for (int s = st.node(id).scope_entry; s >= 0; s = st.node(s).scope_entry)
      if (is_gpu_schedule(st.node(s).map.schedule)) return true;
    return false;
  }

  static const DataEdge* edge_at(const Block& st, int id, const std::string& conn, bool in) {
    for (auto& e : st.edges) {
      const auto& c = in ? e.dst_conn : e.src_conn;
      if ((in ? e.dst : e.src) == id && c && *c == conn) return &e;
    }
    return nullptr;
  }

  /// One function per tasklet: its symbols, then (in an inner block, so that a connector may
  /// shadow a symbol) its connectors bound as the code generator binds them (codegen/Dataflow.cpp's
  /// emit_tasklet: by value for one element, by pointer for a subset, by reference for a dynamic
  /// single-element output; connectors without data are not declared), then its code.
  void add_tasklet(const SDFG& g, const Block& st, int id, const std::string& np, bool device) {
    const Node& n = st.node(id);
    Segment seg;
    seg.kind = Segment::Tasklet;
    seg.pointer = np + "/attributes/code";
    seg.node_pointer = np;
    seg.label = n.label;
    seg.device = device;
    seg.sdfg = &g;
    for (bool in : {true, false}) {
      for (auto& c : in ? n.in_connectors : n.out_connectors) {
        const DataEdge* e = edge_at(st, id, c.name, in);
        if (!e || e->memlet.data.empty() || !e->memlet.subset) {
          seg.unbound.push_back(c.name);
          continue;
        }
        const DataDesc* d = g.find_data(e->memlet.data);
        std::optional<DType> t = c.dtype ? c.dtype : d ? std::optional<DType>(d->dtype) : std::nullopt;
        if (!t || !has_cpp_type(*t) || !is_identifier(c.name)) return;  // the code generator reports these
        bool one = single_element(*e->memlet.subset);
        Binding b = in ? (one && !e->memlet.dynamic ? Binding::InValue : Binding::InPointer)
                       : (!one                                  ? Binding::OutPointer
                          : e->memlet.dynamic && !e->memlet.wcr ? Binding::OutReference
                                                                : Binding::OutValue);
        // A name both in and out cannot be declared twice in one scope: the output binding wins.
        seg.connectors.erase(std::remove_if(seg.connectors.begin(), seg.connectors.end(),
                                            [&](const ConnectorDecl& x) { return x.name == c.name; }),
                             seg.connectors.end());
        seg.connectors.push_back({c.name, b, std::string(dtype_ctype(*t))});
      }
    }

    // Symbols in scope, typed as in generated code: the SDFG's symbols, symbols the program
    // assigns (int64 when untyped), the parameters and dynamic range inputs of the enclosing maps.
    std::vector<std::pair<std::string, std::string>> symbols;
    std::set<std::string> seen;
    auto add_symbol = [&](const std::string& s, DType t) {
      if (is_identifier(s) && seen.insert(s).second) symbols.emplace_back(s, std::string(dtype_ctype(t)));
    };
    for (auto& [s, t] : g.symbols) add_symbol(s, has_cpp_type(t) ? t : DType::Int64);
    for (auto& s : assigned_symbols(g)) add_symbol(s, DType::Int64);
    for (int s = n.scope_entry; s >= 0; s = st.node(s).scope_entry) {
      for (auto& p : st.node(s).map.params) add_symbol(p, DType::Int64);
      for (auto& d : dynamic_range_inputs(g, st, s)) add_symbol(d.name, has_cpp_type(d.type) ? d.type : DType::Int64);
    }
    for (auto& s : symbols) seg.symbols.push_back(s.first);

    int index = static_cast<int>(unit_.segments.size());
    std::string f = fmt::format("// tasklet {0}\nvoid {1}{0}() {{\n", index, kTaskletFunctionPrefix);
    // Only the symbols the code (or a macro of global code) can name: the others cannot change
    // the verdict, and leaving them out keeps the unit the same across programs.
    std::set<std::string> used = identifiers_in(n.code.code);
    for (auto& [s, t] : symbols)
      if (used.count(s) || global_ids_.count(s)) f += fmt::format("  const {0} {1} = __sdfc_value<{0}>();\n", t, s);
    if (gpu_ && is_stream_tasklet(n))  // the stream its work goes on (codegen/Dataflow.cpp)
      f += fmt::format("  const {0}Stream_t __dace_current_stream = __sdfc_value<{0}Stream_t>();\n",
                       target_ == Target::HIP ? "hip" : "cuda");
    f += "  {\n";
    for (auto& c : seg.connectors) {
      // Inputs are writable here (generated code makes them const) so that a write to one stays in
      // the AST and is reported as such.
      switch (c.binding) {
        case Binding::InValue:
          f += fmt::format("    {0} {1} = __sdfc_value<{0}>();\n", c.ctype, c.name);
          break;
        case Binding::OutValue:
          f += fmt::format("    {} {};\n", c.ctype, c.name);
          break;
        case Binding::InPointer:
        case Binding::OutPointer:
          f += fmt::format("    {0}* {1} = __sdfc_value<{0}*>();\n", c.ctype, c.name);
          break;
        case Binding::OutReference:
          f += fmt::format("    {0}& {1} = __sdfc_lvalue<{0}>();\n", c.ctype, c.name);
          break;
      }
    }
    seg.unit_line = lines_ + 2;  // after the comment line
    append(f);
    unit_.segments.push_back(std::move(seg));
    append_segment(index, n.code.code);
    append("  }\n}\n");
  }
};

}  // namespace

std::string tasklet_check_source(const SDFG& sdfg, const CompileOptions& options) {
  return UnitBuilder(options).build(sdfg).text;
}

TaskletCheckUnit tasklet_check_unit(const SDFG& sdfg, const CompileOptions& options) {
  Unit unit = UnitBuilder(options).build(sdfg);
  return {std::move(unit.text), unit.cpp_tasklets, !unit.segments.empty()};
}

#ifndef SDFC_WITH_CLANG

// libsdfc: Clang is in the plugin (ClangPlugin.h), loaded only for programs with CPP tasklets.
bool tasklet_check_available() {
  return clang_plugin() != nullptr;
}

std::string tasklet_check_identity() {
  std::string path = clang_plugin_path();
  struct stat st {};
  if (path.empty() || ::stat(path.c_str(), &st) != 0) return "";
  const char* resources = std::getenv("SDFC_CLANG_RESOURCE_DIR");
  return fmt::format("plugin {} {} {}.{}\nresources {}\n", path, static_cast<long long>(st.st_size),
                     static_cast<long long>(st.st_mtim.tv_sec), static_cast<long long>(st.st_mtim.tv_nsec),
                     resources ? resources : "(built in)");
}

TaskletCheckResult check_cpp_tasklets(const SDFG& sdfg, const CompileOptions& options, const std::string& file,
                                      const std::string& runtime_include_dir, const std::string& pch_dir) {
  TaskletCheckResult r;
  Unit unit = UnitBuilder(options).build(sdfg);
  r.cpp_tasklets = unit.cpp_tasklets;
  if (unit.segments.empty()) return r;  // no CPP tasklets and no global code: Clang is not started
  if (const ClangPlugin* plugin = clang_plugin())
    return plugin->check(sdfg, options, file, runtime_include_dir, pch_dir);
  r.skipped = true;
  return r;
}

#else

namespace {

/// One problem Clang or the write analysis found inside a segment.
struct Finding {
  int segment;
  int line, column;  ///< inside the segment's code; 0 when the finding is not at a place in the code
  std::string message;
  std::string pointer;  ///< "" = the segment's code
};

/// The segment index of a `#line` file name, or -1.
int segment_of(llvm::StringRef file) {
  if (!file.consume_front(kSegmentPrefix)) return -1;
  int k = -1;
  return file.getAsInteger(10, k) ? -1 : k;
}

/// Collects Clang's errors. An error outside the tasklets (in a header, e.g. inside a template a
/// tasklet instantiates) is attributed to the tasklet that Clang's "requested here" notes point at.
class CollectDiagnostics : public clang::DiagnosticConsumer {
 public:
  struct Error {
    int segment;
    int line, column;
    unsigned id;
    std::string message;
  };
  std::vector<Error> errors;
  /// Errors outside every segment that no "requested here" note attributes to one: in the unit's
  /// own lines (e.g. after a tasklet with unbalanced braces) or in a header.
  struct Outside {
    std::string file;
    int line;
    std::string message;
  };
  std::vector<Outside> outside;

  void HandleDiagnostic(clang::DiagnosticsEngine::Level level, const clang::Diagnostic& info) override {
    clang::DiagnosticConsumer::HandleDiagnostic(level, info);
    if (level < clang::DiagnosticsEngine::Note || level == clang::DiagnosticsEngine::Warning ||
        level == clang::DiagnosticsEngine::Remark)
      return;
    llvm::SmallString<256> text;
    info.FormatDiagnostic(text);
    std::string file;
    int seg = -1, line = 0, column = 0;
    if (info.hasSourceManager() && info.getLocation().isValid()) {
      const clang::SourceManager& sm = info.getSourceManager();
      clang::PresumedLoc p = sm.getPresumedLoc(sm.getExpansionLoc(info.getLocation()));
      if (p.isValid()) {
        seg = segment_of(p.getFilename());
        line = static_cast<int>(p.getLine());
        column = static_cast<int>(p.getColumn());
        file = p.getFilename();
      }
    }
    if (level == clang::DiagnosticsEngine::Note) {
      if (pending_ && seg >= 0) {
        errors.push_back({seg, line, column, 0, pending_->message});
        pending_.reset();
      }
      return;
    }
    flush_pending();
    if (seg >= 0)
      errors.push_back({seg, line, column, info.getID(), std::string(text)});
    else
      pending_ = Outside{file, line, std::string(text)};
  }
  void finish() override { flush_pending(); }

 private:
  std::optional<Outside> pending_;
  void flush_pending() {
    if (pending_) outside.push_back(*pending_);
    pending_.reset();
  }
};

/// The variable an lvalue expression writes into: `a`, `a[i]`, `*a`, `*(a + 1)`, `a.x` all write
/// through `a`.
const clang::VarDecl* written_variable(const clang::Expr* e) {
  while (e) {
    e = e->IgnoreParenCasts();
    if (auto* s = llvm::dyn_cast<clang::ArraySubscriptExpr>(e)) {
      e = s->getBase();
    } else if (auto* u = llvm::dyn_cast<clang::UnaryOperator>(e); u && u->getOpcode() == clang::UO_Deref) {
      e = u->getSubExpr();
    } else if (auto* b = llvm::dyn_cast<clang::BinaryOperator>(e); b && b->isAdditiveOp()) {
      e = b->getLHS()->getType()->isPointerType() ? b->getLHS() : b->getRHS();
    } else if (auto* m = llvm::dyn_cast<clang::MemberExpr>(e)) {
      e = m->getBase();
    } else if (auto* d = llvm::dyn_cast<clang::DeclRefExpr>(e)) {
      return llvm::dyn_cast<clang::VarDecl>(d->getDecl());
    } else {
      return nullptr;
    }
  }
  return nullptr;
}

/// Finds, in one tasklet function, its connector variables (declared by the unit, outside the
/// tasklet's code) and the writes to them: assignments and `++`/`--` (definite writes), and `&x`,
/// non-const reference arguments and references bound to x (possible writes, which count for
/// outputs but are not reported for inputs).
class TaskletWrites : public clang::RecursiveASTVisitor<TaskletWrites> {
 public:
  explicit TaskletWrites(const clang::SourceManager& sm) : sm_(sm) {}

  std::map<std::string, const clang::VarDecl*> declared;  ///< the unit's own locals, by name
  std::map<const clang::VarDecl*, clang::SourceLocation> first_write;
  std::set<const clang::VarDecl*> possible_writes;

  bool VisitBinaryOperator(clang::BinaryOperator* op) {
    if (op->isAssignmentOp()) definite(op->getLHS(), op->getBeginLoc());
    return true;
  }
  bool VisitUnaryOperator(clang::UnaryOperator* op) {
    if (op->isIncrementDecrementOp()) definite(op->getSubExpr(), op->getBeginLoc());
    if (op->getOpcode() == clang::UO_AddrOf) possible(op->getSubExpr());
    return true;
  }
  bool VisitCallExpr(clang::CallExpr* call) {
    auto* f = call->getDirectCallee();
    if (!f) return true;
    // A member operator's object is argument 0 of the call but not a parameter.
    unsigned shift = llvm::isa<clang::CXXOperatorCallExpr>(call) && llvm::isa<clang::CXXMethodDecl>(f) ? 1 : 0;
    for (unsigned i = shift; i < call->getNumArgs() && i - shift < f->getNumParams(); ++i) {
      clang::QualType t = f->getParamDecl(i - shift)->getType();
      if (t->isReferenceType() && !t.getNonReferenceType().isConstQualified()) possible(call->getArg(i));
    }
    return true;
  }
  bool VisitVarDecl(clang::VarDecl* v) {
    if (v->getIdentifier() && segment_of(sm_.getPresumedLoc(v->getLocation()).getFilename()) < 0)
      declared.emplace(v->getName().str(), v);
    if (v->getType()->isReferenceType() && !v->getType().getNonReferenceType().isConstQualified() && v->hasInit())
      possible(v->getInit());
    return true;
  }

 private:
  const clang::SourceManager& sm_;
  void definite(const clang::Expr* e, clang::SourceLocation at) {
    if (auto* v = written_variable(e)) first_write.emplace(v, at);
  }
  void possible(const clang::Expr* e) {
    if (auto* v = written_variable(e)) possible_writes.insert(v);
  }
};

/// After the parse: the connector checks on every tasklet function.
class CheckConsumer : public clang::ASTConsumer {
 public:
  CheckConsumer(const std::vector<Segment>& segments, const CollectDiagnostics& diags, std::vector<Finding>& findings)
      : segments_(segments), diags_(diags), findings_(findings) {}

  void HandleTranslationUnit(clang::ASTContext& ctx) override {
    // A tasklet that does not compile has an incomplete AST: only its errors are reported.
    std::set<int> failed;
    for (auto& e : diags_.errors) failed.insert(e.segment);
    for (clang::Decl* d : ctx.getTranslationUnitDecl()->decls()) {
      auto* f = llvm::dyn_cast<clang::FunctionDecl>(d);
      if (!f || !f->hasBody() || !f->getIdentifier()) continue;
      llvm::StringRef name = f->getName();
      int k = -1;
      if (!name.consume_front(kTaskletFunctionPrefix) || name.getAsInteger(10, k) || k < 0 ||
          k >= static_cast<int>(segments_.size()))
        continue;
      check_function(ctx.getSourceManager(), *f, k, failed.count(k) > 0);
    }
  }

 private:
  const std::vector<Segment>& segments_;
  const CollectDiagnostics& diags_;
  std::vector<Finding>& findings_;

  void check_function(const clang::SourceManager& sm, clang::FunctionDecl& f, int k, bool failed) {
    const Segment& seg = segments_[static_cast<std::size_t>(k)];
    TaskletWrites w(sm);
    w.TraverseDecl(&f);
    for (auto& c : seg.connectors) {
      auto it = w.declared.find(c.name);
      if (it == w.declared.end()) continue;
      const clang::VarDecl* v = it->second;
      auto write = w.first_write.find(v);
      bool input = c.binding == Binding::InValue || c.binding == Binding::InPointer;
      if (input && write != w.first_write.end()) {
        clang::PresumedLoc p = sm.getPresumedLoc(sm.getExpansionLoc(write->second));
        findings_.push_back(
            {k, static_cast<int>(p.getLine()), static_cast<int>(p.getColumn()),
             fmt::format("tasklet \"{}\" {} input connector '{}'; inputs are read-only: write the "
                         "result to an output connector (with a memlet to the data) instead",
                         seg.label, c.binding == Binding::InPointer ? "writes through" : "writes to", c.name),
             ""});
      }
      // Outputs bound by value must be assigned. Pointer outputs (subsets) and dynamic outputs
      // (references) may be written in ways the analysis cannot see, or legitimately not at all.
      if (c.binding == Binding::OutValue && !failed && write == w.first_write.end() && !w.possible_writes.count(v)) {
        findings_.push_back({k, 0, 0,
                             fmt::format("output connector '{}' of tasklet \"{}\" is never written; assign it in the "
                                         "code ({} = ...;) or remove the connector and its memlet",
                                         c.name, seg.label, c.name),
                             seg.node_pointer + "/attributes/out_connectors/" + pointer_token(c.name)});
      }
    }
  }
};

class CheckAction : public clang::ASTFrontendAction {
 public:
  CheckAction(const std::vector<Segment>& segments, const CollectDiagnostics& diags, std::vector<Finding>& findings)
      : segments_(segments), diags_(diags), findings_(findings) {}
  std::unique_ptr<clang::ASTConsumer> CreateASTConsumer(clang::CompilerInstance&, llvm::StringRef) override {
    return std::make_unique<CheckConsumer>(segments_, diags_, findings_);
  }

 private:
  const std::vector<Segment>& segments_;
  const CollectDiagnostics& diags_;
  std::vector<Finding>& findings_;
};

bool is_unknown_name(unsigned id) {
  namespace diag = clang::diag;
  return id == diag::err_undeclared_var_use || id == diag::err_undeclared_var_use_suggest ||
         id == diag::err_undeclared_use || id == diag::err_unknown_typename || id == diag::err_no_member ||
         id == diag::err_unknown_typename_suggest || id == diag::err_undeclared_use_suggest;
}

std::string join(const std::vector<std::string>& v) {
  return v.empty() ? "none" : fmt::format("{}", fmt::join(v, ", "));
}

/// The first 'quoted' word of a Clang message ("use of undeclared identifier 'foo'").
std::string quoted_name(const std::string& message) {
  auto a = message.find('\'');
  auto b = a == std::string::npos ? a : message.find('\'', a + 1);
  return b == std::string::npos ? "" : message.substr(a + 1, b - a - 1);
}

/// The message for a Clang error inside a segment.
std::string explain(const Segment& seg, unsigned id, const std::string& clang_message) {
  if (seg.kind == Segment::GlobalCode) return "global_code does not compile: " + clang_message;
  if (seg.kind == Segment::CodeGlobal) return "code_global does not compile: " + clang_message;
  if (!is_unknown_name(id)) return fmt::format("tasklet \"{}\" does not compile: {}", seg.label, clang_message);
  std::string name = quoted_name(clang_message);
  if (id == clang::diag::err_no_member)
    return fmt::format(
        "tasklet \"{}\" uses an unknown name: {}; known functions are those declared by {}, sdfc's "
        "runtime (sdfc/rt.h) and the SDFG's global_code",
        seg.label, clang_message, fmt::join(generated_std_includes(), ", "));
  if (seg.sdfg && seg.sdfg->find_data(name))
    return fmt::format(
        "tasklet \"{}\" uses data container '{}' directly; a tasklet sees data only through its "
        "connectors: add a memlet from '{}' to a connector and use the connector",
        seg.label, name, name);
  if (std::find(seg.unbound.begin(), seg.unbound.end(), name) != seg.unbound.end())
    return fmt::format(
        "tasklet \"{}\" uses connector '{}', which has no memlet (or an empty one); connect it to data "
        "or stop using it",
        seg.label, name);
  std::vector<std::string> inputs, outputs;
  for (auto& c : seg.connectors)
    (c.binding == Binding::InValue || c.binding == Binding::InPointer ? inputs : outputs).push_back(c.name);
  return fmt::format(
      "unknown identifier '{}' in tasklet \"{}\": not a connector (inputs: {}; outputs: {}), a symbol "
      "({}), nor a function or constant declared by {}, sdfc's runtime or the SDFG's global_code; fix "
      "the name, add a connector, or declare it in global_code",
      name, seg.label, join(inputs), join(outputs), join(seg.symbols), fmt::join(generated_std_includes(), ", "));
}

std::string resource_dir() {
  if (const char* env = std::getenv("SDFC_CLANG_RESOURCE_DIR"); env && *env) return env;
  return SDFC_CLANG_RESOURCE_DIR;
}

}  // namespace

bool tasklet_check_available() {
  return true;
}

/// Ignores every diagnostic (the precompiled header's build: a failure only costs the parse).
class IgnoreDiagnostics : public clang::DiagnosticConsumer {};

/// Language options shared by the precompiled header and the parse that uses it.
std::vector<std::string> language_args(const std::string& resources, const std::string& runtime_include_dir) {
  return {"-std=c++17", "-w", "-resource-dir=" + resources, "-I" + runtime_include_dir};
}

/// The precompiled header of `prefix` in `dir` (made there the first time, atomically), or ""
/// when it cannot be made. Its name hashes everything its validity depends on besides the
/// headers' contents, which Clang itself checks when it loads the header (sizes and times).
std::string precompiled_prefix(const std::string& prefix, const std::string& dir, const std::string& resources,
                               const std::string& runtime_include_dir) {
  std::string name = fmt::format("pch-{:016x}", llvm::xxHash64(prefix + "\n" + resources + "\n" + runtime_include_dir +
                                                               "\n" CLANG_VERSION_STRING));
  std::string header = dir + "/" + name + ".h", pch = dir + "/" + name + ".pch";
  if (llvm::sys::fs::exists(pch)) return pch;
  if (llvm::sys::fs::create_directories(dir)) return "";
  std::string tmp = fmt::format("{}.tmp.{}", pch, ::getpid());
  // A header already there is kept (its name is its content): a PCH another process is making
  // refers to its time stamp.
  if (auto existing = llvm::MemoryBuffer::getFile(header); !existing || (*existing)->getBuffer() != prefix) {
    std::string header_tmp = fmt::format("{}.tmp.{}", header, ::getpid());
    std::error_code ec;
    llvm::raw_fd_ostream out(header_tmp, ec);
    if (ec) return "";
    out << prefix;
    out.close();
    if (out.has_error() || llvm::sys::fs::rename(header_tmp, header)) return "";
  }
  std::vector<std::string> args = {"sdfc-tasklet-check-pch", "-x", "c++-header",
                                   // Templates the headers use are instantiated in the PCH, not
                                   // in every parse that loads it (60 ms -> 2 ms to load).
                                   "-fpch-instantiate-templates"};
  for (auto& a : language_args(resources, runtime_include_dir)) args.push_back(a);
  for (const char* a : {"-o", tmp.c_str(), header.c_str()}) args.push_back(a);
  llvm::IntrusiveRefCntPtr<clang::FileManager> files(new clang::FileManager(clang::FileSystemOptions()));
  IgnoreDiagnostics quiet;
  clang::tooling::ToolInvocation invocation(args, std::make_unique<clang::GeneratePCHAction>(), files.get());
  invocation.setDiagnosticConsumer(&quiet);
  bool ok = invocation.run() && !quiet.getNumErrors() && llvm::sys::fs::exists(tmp);
  if (!ok || llvm::sys::fs::rename(tmp, pch)) {
    llvm::sys::fs::remove(tmp);
    return "";
  }
  return pch;
}

/// Whether the parse failed because of the precompiled header (changed headers, another Clang):
/// then it runs again without it.
bool pch_failed(const CollectDiagnostics& diags) {
  auto about_pch = [](const std::string& m) {
    return m.find("precompiled header") != std::string::npos || m.find("PCH") != std::string::npos ||
           m.find("AST file") != std::string::npos;
  };
  for (auto& o : diags.outside)
    if (about_pch(o.message)) return true;
  for (auto& e : diags.errors)
    if (about_pch(e.message)) return true;
  return false;
}

TaskletCheckResult check_cpp_tasklets(const SDFG& sdfg, const CompileOptions& options, const std::string& file,
                                      const std::string& runtime_include_dir, const std::string& pch_dir) {
  TaskletCheckResult result;
  Unit unit = UnitBuilder(options).build(sdfg);
  result.cpp_tasklets = unit.cpp_tasklets;
  if (unit.segments.empty()) return result;

  std::string resources = resource_dir();
  if (!llvm::sys::fs::exists(resources + "/include/stddef.h"))
    throw UserError(Diagnostic{file, "", 0, 0,
                               fmt::format("cannot check CPP tasklets: Clang's resource directory {} has no "
                                           "include/stddef.h (install libclang-common-14-dev, or point "
                                           "SDFC_CLANG_RESOURCE_DIR at lib/clang/14.x of an LLVM 14 installation)",
                                           resources)});

  // The unit's prefix (its headers) from a precompiled header when there is a place for one: the
  // unit still includes the headers, which their include guards then skip.
  std::string pch =
      pch_dir.empty() ? "" : precompiled_prefix(unit_prefix(options.target), pch_dir, resources, runtime_include_dir);
  CollectDiagnostics diags;
  std::vector<Finding> findings;
  for (;;) {
    llvm::IntrusiveRefCntPtr<llvm::vfs::OverlayFileSystem> fs(
        new llvm::vfs::OverlayFileSystem(llvm::vfs::getRealFileSystem()));
    llvm::IntrusiveRefCntPtr<llvm::vfs::InMemoryFileSystem> memory(new llvm::vfs::InMemoryFileSystem);
    fs->pushOverlay(memory);
    memory->addFile(kUnitFile, 0, llvm::MemoryBuffer::getMemBuffer(unit.text, kUnitFile));
    llvm::IntrusiveRefCntPtr<clang::FileManager> files(new clang::FileManager(clang::FileSystemOptions(), fs));
    std::vector<std::string> args = {
        "sdfc-tasklet-check",  "-fsyntax-only",         "-x", "c++",
        "-fno-spell-checking",  // no "did you mean": faster, and the messages name the rules instead
        "-ferror-limit=0",     "-fno-caret-diagnostics"};
    for (auto& a : language_args(resources, runtime_include_dir)) args.push_back(a);
    if (!pch.empty()) {
      args.push_back("-include-pch");
      args.push_back(pch);
    }
    args.push_back(kUnitFile);
    diags = CollectDiagnostics();
    findings.clear();
    clang::tooling::ToolInvocation invocation(args, std::make_unique<CheckAction>(unit.segments, diags, findings),
                                              files.get());
    invocation.setDiagnosticConsumer(&diags);
    invocation.run();
    if (pch.empty() || !pch_failed(diags)) break;
    llvm::sys::fs::remove(pch);  // stale: the next check makes it again
    pch.clear();
  }

  for (auto& e : diags.errors) {
    const Segment& seg = unit.segments[static_cast<std::size_t>(e.segment)];
    if (seg.device) continue;  // device code: CUDA/HIP built-ins are unknown to a host parse
    findings.push_back({e.segment, e.line, e.column, explain(seg, e.id, e.message), ""});
  }
  // An error in the unit's own lines after a tasklet's function began: the tasklet's code left a
  // brace or parenthesis open or closed one too many.
  std::vector<CollectDiagnostics::Outside> unexplained;
  std::set<int> unbalanced;
  for (auto& o : diags.outside) {
    int k = -1;
    for (std::size_t i = 0; i < unit.segments.size(); ++i)
      if (o.file == kUnitFile && unit.segments[i].kind == Segment::Tasklet && unit.segments[i].unit_line <= o.line)
        k = static_cast<int>(i);
    if (k < 0) {
      unexplained.push_back(o);
      continue;
    }
    const Segment& seg = unit.segments[static_cast<std::size_t>(k)];
    if (seg.device || !unbalanced.insert(k).second) continue;  // the first such error says it
    findings.push_back({k, 0, 0,
                        fmt::format("tasklet \"{}\" does not compile: {} after the end of its code; check that its "
                                    "braces and parentheses are balanced",
                                    seg.label, o.message),
                        ""});
  }
  if (!unexplained.empty() && findings.empty())
    throw UserError(Diagnostic{
        file, "", 0, 0,
        fmt::format(
            "cannot check CPP tasklets: Clang cannot parse the headers generated code "
            "includes ({}); this is an sdfc installation problem (runtime headers in {}, "
            "Clang resources in {})",
            fmt::format("{}:{}: {}", unexplained.front().file, unexplained.front().line, unexplained.front().message),
            runtime_include_dir, resources)});

  std::stable_sort(findings.begin(), findings.end(), [](const Finding& a, const Finding& b) {
    return std::tie(a.segment, a.line, a.column) < std::tie(b.segment, b.line, b.column);
  });
  std::set<std::tuple<int, int, int, std::string>> seen;
  for (auto& f : findings) {
    if (!seen.insert({f.segment, f.line, f.column, f.message}).second) continue;
    const Segment& seg = unit.segments[static_cast<std::size_t>(f.segment)];
    result.errors.push_back(Diagnostic{file, f.pointer.empty() ? seg.pointer : f.pointer, f.line, f.column, f.message});
  }
  return result;
}

#endif

}  // namespace sdfc

#ifdef SDFC_CLANG_PLUGIN
extern "C" __attribute__((visibility("default"))) sdfc::TaskletCheckResult sdfc_clang_check_cpp_tasklets(
    const sdfc::SDFG& sdfg, const sdfc::CompileOptions& options, const std::string& file,
    const std::string& runtime_include_dir, const std::string& pch_dir) {
  return sdfc::plugin_check_cpp_tasklets(sdfg, options, file, runtime_include_dir, pch_dir);
}
#endif
