#include "lang/CppEnvironment.h"

namespace sdfc {

const std::vector<std::string>& generated_std_includes() {
  // What DaCe's runtime header (dace/dace.h) gives the code it generates, so that DaCe CPP tasklets
  // compile unchanged: std::min/max/clamp/swap (<algorithm>), GT4Py's metrics timers
  // (std::chrono::high_resolution_clock), std::complex, printf, std::accumulate,
  // std::numeric_limits, type traits; and what sdfc's runtime headers once gave them (strings,
  // mutexes, exceptions, hash sets), which C++ code may have come to rely on.
  static const std::vector<std::string> headers = {
      "<cstddef>", "<cstdint>", "<cmath>",  "<cstring>",     "<new>",   "<algorithm>", "<chrono>", "<complex>",
      "<cstdio>",  "<numeric>", "<limits>", "<type_traits>", "<mutex>", "<stdexcept>", "<string>", "<unordered_set>"};
  return headers;
}

const std::vector<std::string>& core_std_includes() {
  // Translated Python tasklets and interstate code: <cmath> functions, std::min/max (<algorithm>),
  // std::numeric_limits, memcpy (copies), snprintf (refusals), placement new.
  static const std::vector<std::string> headers = {"<cstddef>",   "<cstdint>", "<cmath>",  "<cstring>",    "<new>",
                                                   "<algorithm>", "<cstdio>",  "<limits>", "<type_traits>"};
  return headers;
}

std::vector<std::string> prelude_std_includes(bool dace_environment, Target target) {
  std::vector<std::string> headers = dace_environment ? generated_std_includes() : core_std_includes();
  auto add = [&](const std::string& h) {
    for (const std::string& present : headers)
      if (present == h) return;
    headers.push_back(h);
  };
  // sdfc/program.h and sdfc/rt.h (and sdfc/dace_math.h, sdfc/complex.h)
  for (const char* h : {"<cstdarg>", "<cstdlib>", "<exception>", "<utility>", "<pthread.h>"}) add(h);
  if (dace_environment) add("<complex>");
  // sdfc/gpu.h and its headers; the toolkit's runtime header stays where gpu_portability.h reads it
  if (target == Target::CUDA || target == Target::HIP)
    for (const char* h : {"<initializer_list>", "<vector>"}) add(h);
  return headers;
}

}  // namespace sdfc
