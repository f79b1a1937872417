#include "lang/CppEnvironment.h"

namespace sdfc {

const std::vector<std::string>& generated_std_includes() {
  // What DaCe's runtime header (dace/dace.h) gives the code it generates, so that DaCe CPP tasklets
  // compile unchanged: std::min/max/clamp/swap (<algorithm>), GT4Py's metrics timers
  // (std::chrono::high_resolution_clock), std::complex, printf, std::accumulate,
  // std::numeric_limits, type traits.
  static const std::vector<std::string> headers = {"<cstddef>", "<cstdint>",   "<cmath>",  "<cstring>",
                                                   "<new>",     "<algorithm>", "<chrono>", "<complex>",
                                                   "<cstdio>",  "<numeric>",   "<limits>", "<type_traits>"};
  return headers;
}

}  // namespace sdfc
