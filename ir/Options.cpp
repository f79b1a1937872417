#include "ir/Options.h"

namespace sdfc {

const char* to_string(Target t) {
  switch (t) {
    case Target::CPU:
      return "cpu";
    case Target::CUDA:
      return "cuda";
    case Target::HIP:
      return "hip";
  }
  return "?";
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
