// libFuzzer entry point: any bytes must give an SDFG or a UserError, never a crash or a hang; a
// valid SDFG then goes through the pass pipeline and the code generator (emit only) for the CPU and
// for CUDA, where again only a UserError may stop it.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "codegen/Codegen.h"
#include "ir/Diagnostic.h"
#include "ir/Dump.h"
#include "ir/JsonReader.h"
#include "ir/JsonWriter.h"
#include "ir/Validate.h"
#include "passes/Pipeline.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    auto sdfg = sdfc::read_sdfg(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
    if (sdfc::validate(*sdfg, "fuzz").empty()) {
      (void)sdfc::dump(*sdfg);
      std::string text = sdfc::write_sdfg(*sdfg);
      for (sdfc::Target target : {sdfc::Target::CPU, sdfc::Target::CUDA}) {
        try {
          auto copy = sdfc::read_sdfg(text, "fuzz");  // the passes change the IR: a fresh one per target
          sdfc::CompileOptions options;
          options.target = target;
          sdfc::run_pipeline(*copy, options);
          (void)sdfc::generate(*copy, options, "fuzz");
        } catch (const sdfc::UserError&) {
        }
      }
    }
  } catch (const sdfc::UserError&) {
  }
  return 0;
}
