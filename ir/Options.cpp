#include "ir/Options.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <utility>

namespace sdfc {

namespace {

const TargetInfo kTargets[] = {
    {Target::CPU, "cpu", ".cpp", "sdfc/program.h"},
    {Target::CUDA, "cuda", ".cu", "sdfc/gpu.h"},
    {Target::HIP, "hip", ".hip.cpp", "sdfc/gpu.h"},
};

/// "a, b or c".
std::string one_of(const std::vector<std::string>& values) {
  std::string s;
  for (std::size_t i = 0; i < values.size(); ++i)
    s += (i == 0 ? "" : i + 1 == values.size() ? " or " : ", ") + values[i];
  return s;
}

/// The enumerator of `value` among `names` (in the enum's order: the names list is the enum's).
template <typename E>
E choose(const std::string& value, const std::vector<std::string>& names) {
  for (std::size_t i = 0; i < names.size(); ++i)
    if (value == names[i]) return static_cast<E>(i);
  throw OptionError(fmt::format("must be {}, not '{}'", one_of(names), value));
}

bool truth(const std::string& value) {
  if (value == "true") return true;
  if (value == "false") return false;
  throw OptionError(fmt::format("must be true or false, not '{}'", value));
}

std::string text(bool b) {
  return b ? "true" : "false";
}

constexpr long kMaxGpuStreams = 1024;

/// A switch's row reads and prints its field (a bool of CompileOptions)...
template <bool CompileOptions::*Field>
void set_switch(CompileOptions& o, const std::string& v) {
  o.*Field = truth(v);
}
template <bool CompileOptions::*Field>
std::string get_switch(const CompileOptions& o) {
  return text(o.*Field);
}

/// ... and a choice's its enum field by the enum's names (`Names`, in the enum's order).
template <typename E, E CompileOptions::*Field, const std::vector<std::string>* Names>
void set_choice(CompileOptions& o, const std::string& v) {
  o.*Field = choose<E>(v, *Names);
}
template <typename E, E CompileOptions::*Field, const std::vector<std::string>* Names>
std::string get_choice(const CompileOptions& o) {
  return (*Names)[static_cast<std::size_t>(o.*Field)];
}

// The enum's values, in the enum's order (choose<E> relies on it).
const std::vector<std::string> kTargetNames = [] {
  std::vector<std::string> names;
  for (auto& t : kTargets) names.push_back(t.name);
  return names;
}();
const std::vector<std::string> kTransientNames = {"as-declared", "scoped", "persistent", "pool", "external"};
const std::vector<std::string> kBlasNames = {"pure", "vendor"};

const std::vector<OptionSpec> kOptions = {
    {"target", "--target", OptionSpec::Kind::Choice, "", kTargetNames, "",
     "code to generate (default cpu; hip is compiled, never run here)",
     set_choice<Target, &CompileOptions::target, &kTargetNames>,
     get_choice<Target, &CompileOptions::target, &kTargetNames>},
    {"gpu_arch",
     "--gpu-arch",
     OptionSpec::Kind::Text,
     "ARCH",
     {},
     "",
     "GPU architecture (default sm_90 for cuda, gfx90a for hip)",
     [](CompileOptions& o, const std::string& v) { o.gpu_arch = v; },
     [](const CompileOptions& o) { return o.gpu_arch; }},
    {"transients", "--transients", OptionSpec::Kind::Choice, "MODE", kTransientNames, "",
     "the lifetime of every transient: scoped (allocated where used), persistent (for the library's "
     "life), pool (stream-ordered pool), external (workspaces the caller provides); default "
     "as-declared: lifetimes as the file declares",
     set_choice<TransientMode, &CompileOptions::transients, &kTransientNames>,
     get_choice<TransientMode, &CompileOptions::transients, &kTransientNames>},
    {"gpu_streams",
     "--gpu-streams",
     OptionSpec::Kind::Number,
     "N",
     {},
     "",
     "0: all GPU work on one stream (default); N >= 1: up to N internal streams ordered by events "
     "(at most 1024); ignored on the cpu",
     [](CompileOptions& o, const std::string& v) {
       char* end = nullptr;
       errno = 0;
       long n = std::strtol(v.c_str(), &end, 10);
       if (v.empty() || *end || errno == ERANGE) throw OptionError(fmt::format("needs a whole number, not '{}'", v));
       if (n < 0) throw OptionError(fmt::format("must be 0 or more, not {}", n));
       if (n > kMaxGpuStreams) throw OptionError(fmt::format("must be at most {}, not {}", kMaxGpuStreams, n));
       o.gpu_streams = static_cast<int>(n);
     },
     [](const CompileOptions& o) { return std::to_string(o.gpu_streams); }},
    {"gpu_graph",
     "--gpu-graph",
     OptionSpec::Kind::Switch,
     "",
     {},
     "true",
     "record each call's GPU work once as a CUDA/HIP graph and replay it while the arguments "
     "(pointers, scalars, symbols) stay the same; a change re-records (updating the graph in place "
     "where it can); copies from and to host array arguments are in the graph; other host work "
     "(host tasklets, host waits) splits the call into graph segments, the rest runs without a "
     "graph; a program with no part free of host work is refused; ignored on the cpu",
     set_switch<&CompileOptions::gpu_graph>,
     get_switch<&CompileOptions::gpu_graph>},
    {"fuse_maps",
     "--fuse-maps",
     OptionSpec::Kind::Switch,
     "",
     {},
     "true",
     "merge each chain of maps of one state that continue each other point by point (same "
     "schedule and ranges; what one writes, the next reads at the same point, through transients "
     "nothing else uses) into one map: one kernel on the GPU, the transients between them become "
     "registers",
     set_switch<&CompileOptions::fuse_maps>,
     get_switch<&CompileOptions::fuse_maps>},
    {"dependent_launch",
     "--no-dependent-launch",
     OptionSpec::Kind::Switch,
     "",
     {},
     "false",
     "cuda: launch kernels without programmatic stream serialization. By default, for sm_90 and "
     "newer, each kernel may start while the kernel before it on its stream finishes, and waits "
     "for that kernel's completion before it touches memory: part of each launch's latency is "
     "hidden",
     set_switch<&CompileOptions::dependent_launch>,
     get_switch<&CompileOptions::dependent_launch>},
    {"transient_layouts",
     "--declared-transient-layouts",
     OptionSpec::Kind::Switch,
     "",
     {},
     "false",
     "GPU targets: keep every transient's layout as the file declares it. By default a GPU "
     "transient that only kernels touch takes, at each call, the order of the dimensions of the "
     "argument its kernels access beside it (GT4Py declares its temporaries with the first "
     "dimension contiguous whatever its fields' layout)",
     set_switch<&CompileOptions::transient_layouts>,
     get_switch<&CompileOptions::transient_layouts>},
    {"blas", "--blas", OptionSpec::Kind::Choice, "", kBlasNames, "",
     "BLAS library nodes (MatMul, Gemm, Gemv) outside map scopes: pure (default) expands them into "
     "maps; vendor calls CBLAS on host data (links Debian's libblas) and cuBLAS on GPU data, on the "
     "node's stream",
     set_choice<BlasMode, &CompileOptions::blas, &kBlasNames>,
     get_choice<BlasMode, &CompileOptions::blas, &kBlasNames>},
    {"report_refusals",
     "--report-refusals",
     OptionSpec::Kind::Switch,
     "",
     {},
     "true",
     "the library prints each refused call's message on stderr (once per message); set by "
     "--dace-layout, since DaCe's loader never reads __sdfc_last_error",
     set_switch<&CompileOptions::report_refusals>,
     get_switch<&CompileOptions::report_refusals>},
};

/// Every field of CompileOptions has a row above: a field added without one stops the build here
/// (the structured binding names every field). Add the row, then the field's name below.
[[maybe_unused]] void every_field_has_a_row(const CompileOptions& o) {
  [[maybe_unused]] const auto& [target, gpu_arch, transients, gpu_streams, blas, gpu_graph, fuse_maps, dependent_launch,
                                transient_layouts, report_refusals] = o;
}

}  // namespace

const std::vector<OptionSpec>& option_table() {
  return kOptions;
}

const OptionSpec* find_option_flag(const std::string& flag) {
  for (auto& o : kOptions)
    if (flag == o.flag) return &o;
  return nullptr;
}

const OptionSpec* find_option(const std::string& name) {
  for (auto& o : kOptions)
    if (name == o.name) return &o;
  return nullptr;
}

const char* to_string(OptionSpec::Kind k) {
  switch (k) {
    case OptionSpec::Kind::Choice:
      return "choice";
    case OptionSpec::Kind::Text:
      return "text";
    case OptionSpec::Kind::Number:
      return "number";
    case OptionSpec::Kind::Switch:
      return "switch";
  }
  return "?";
}

std::string options_key(const CompileOptions& o) {
  std::string s;
  for (auto& spec : kOptions) s += fmt::format("{} {}\n", spec.name, spec.get(o));
  return s;
}

const TargetInfo& target_info(Target t) {
  for (auto& i : kTargets)
    if (i.target == t) return i;
  return kTargets[0];
}

std::string gpu_arch_or_default(const CompileOptions& o) {
  if (!o.gpu_arch.empty() || o.target == Target::CPU) return o.gpu_arch;
  return o.target == Target::CUDA ? "sm_90" : "gfx90a";
}

std::optional<Target> parse_target(const std::string& name) {
  for (auto& i : kTargets)
    if (name == i.name) return i.target;
  return std::nullopt;
}

std::string target_names() {
  return one_of(kTargetNames);
}

const char* to_string(Target t) {
  return target_info(t).name;
}

const char* to_string(TransientMode m) {
  return kTransientNames[static_cast<std::size_t>(m)].c_str();
}

const char* to_string(BlasMode m) {
  return kBlasNames[static_cast<std::size_t>(m)].c_str();
}

}  // namespace sdfc
