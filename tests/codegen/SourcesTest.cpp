// The sources a GPU program is printed as (docs/design.md, "Sources of a GPU program"): a CUDA
// program without global code is a device source with the kernels and their launchers and a host
// source with no device syntax; HIP programs and programs with global code are one source.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "codegen/Codegen.h"
#include "compiler/Compile.h"
#include "passes/Pipeline.h"

using namespace sdfc;

namespace {

GeneratedProgram generated(Target target, const std::string& global_code = "") {
  auto sdfg = load_sdfg_file(std::string(SDFC_CODEGEN_TESTS) + "/cuda/sync_sites.sdfg");
  sdfg->global_code.code = global_code;
  CompileOptions o;
  o.target = target;
  run_pipeline(*sdfg, o);
  return generate(*sdfg, o, "sync_sites.sdfg");
}

}  // namespace

TEST(Sources, ACudaProgramIsADeviceSourceAndAHostSource) {
  GeneratedProgram p = generated(Target::CUDA);
  ASSERT_EQ(p.files.size(), 2u);
  const std::string& device = p.files[0].text;
  const std::string& host = p.files[1].text;
  EXPECT_EQ(p.files[0].name, "gpu_sync.cu");
  EXPECT_EQ(p.files[1].name, "gpu_sync.cpp");
  // the kernels and their launchers, not the frame nor sdfc's host runtime
  EXPECT_NE(device.find("__global__ void"), std::string::npos);
  EXPECT_NE(device.find("SDFC_LAUNCHER void __sdfc_launch_first_0_kernel0("), std::string::npos);
  EXPECT_NE(device.find("SDFC_LAUNCHER void __sdfc_gpu_spin("), std::string::npos);
  EXPECT_EQ(device.find("__program_gpu_sync"), std::string::npos);
  EXPECT_EQ(device.find("sdfc/gpu.h"), std::string::npos);
  EXPECT_EQ(device.find("sdfc/rt.h"), std::string::npos);  // its kernels use none of it
  // the host calls the launchers it declares; nothing a host compiler cannot read
  EXPECT_NE(host.find("SDFC_LAUNCHER void __sdfc_launch_first_0_kernel0("), std::string::npos);
  EXPECT_NE(host.find("__sdfc_launch_first_0_kernel0(__grid, __block, "), std::string::npos);
  for (const char* device_only : {"<<<", "__global__", "launch_dependent(", "__device__", "__shared__"})
    EXPECT_EQ(host.find(device_only), std::string::npos) << device_only;
  EXPECT_NE(std::find(p.prelude_headers.begin(), p.prelude_headers.end(), "<cuda_runtime.h>"), p.prelude_headers.end());
}

TEST(Sources, GlobalCodeAndHipKeepOneSource) {
  GeneratedProgram with_global = generated(Target::CUDA, "static int answer = 42;\n");
  ASSERT_EQ(with_global.files.size(), 1u);
  EXPECT_EQ(with_global.files[0].name, "gpu_sync.cu");
  EXPECT_NE(with_global.files[0].text.find("__sdfc_launch_first_0_kernel0(__grid, __block, "), std::string::npos);
  GeneratedProgram hip = generated(Target::HIP);
  ASSERT_EQ(hip.files.size(), 1u);
  EXPECT_EQ(hip.files[0].name, "gpu_sync.hip.cpp");
}
