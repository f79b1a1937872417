// libFuzzer entry point: any bytes must give an SDFG or a UserError, never a crash or a hang.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ir/Diagnostic.h"
#include "ir/Dump.h"
#include "ir/JsonReader.h"
#include "ir/JsonWriter.h"
#include "ir/Validate.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    auto sdfg = sdfc::read_sdfg(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
    if (sdfc::validate(*sdfg, "fuzz").empty()) {
      (void)sdfc::dump(*sdfg);
      (void)sdfc::write_sdfg(*sdfg);
    }
  } catch (const sdfc::UserError&) {
  }
  return 0;
}
