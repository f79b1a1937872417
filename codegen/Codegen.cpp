// Code generation: the host or GPU emitter prints the body, the library frame wraps it. See Codegen.h.
#include "codegen/Codegen.h"

#include <memory>

#include "codegen/Emitter.h"
#include "codegen/Frame.h"

namespace sdfc {

GeneratedProgram generate(const SDFG& sdfg, const CompileOptions& options, const std::string& file) {
  std::unique_ptr<codegen::Emitter> emitter = options.target == Target::CPU
                                                  ? std::make_unique<codegen::Emitter>(sdfg, options, file)
                                                  : std::make_unique<codegen::GpuEmitter>(sdfg, options, file);
  return codegen::FramePrinter(sdfg, options, file, emitter->emit_program()).run();
}

}  // namespace sdfc
