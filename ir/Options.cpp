#include "ir/Options.h"

namespace sdfc {

namespace {

const TargetInfo kTargets[] = {
    {Target::CPU, "cpu", ".cpp", "sdfc/program.h"},
    {Target::CUDA, "cuda", ".cu", "sdfc/gpu.h"},
    {Target::HIP, "hip", ".hip.cpp", "sdfc/gpu.h"},
};

}  // namespace

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
  std::string s;
  std::size_t n = sizeof(kTargets) / sizeof(kTargets[0]);
  for (std::size_t i = 0; i < n; ++i) s += std::string(i == 0 ? "" : i + 1 == n ? " or " : ", ") + kTargets[i].name;
  return s;
}

const char* to_string(Target t) {
  return target_info(t).name;
}

const char* to_string(TransientMode m) {
  switch (m) {
    case TransientMode::AsDeclared:
      return "as-declared";
    case TransientMode::Scoped:
      return "scoped";
    case TransientMode::Persistent:
      return "persistent";
    case TransientMode::Pool:
      return "pool";
    case TransientMode::External:
      return "external";
  }
  return "?";
}

const char* to_string(BlasMode m) {
  return m == BlasMode::Vendor ? "vendor" : "pure";
}

}  // namespace sdfc
