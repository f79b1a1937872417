/// \file
/// The C++ environment generated host code includes before sdfc's runtime header. sdfc's own
/// code needs a few standard headers (core_std_includes); DaCe's C++ code (CPP tasklets, global
/// code) may use anything DaCe's runtime header gives it (generated_std_includes, with complex
/// numbers). The host-environment pass chooses per program (SDFG::std_includes) from what the
/// program's C++ code names (cpp_code_std_includes); the tasklet check (clang_tools/TaskletCheck.h)
/// parses CPP tasklets against the whole environment. The build precompiles the chosen headers
/// with those sdfc's runtime headers include (prelude_std_includes).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/Options.h"

namespace sdfc {

/// DaCe's environment: `<cstddef>`, `<cstdint>`, `<cmath>`, ... `<complex>`, `<chrono>`, in the
/// order generated sources include them.
const std::vector<std::string>& generated_std_includes();

/// What sdfc's own generated code uses: a subset of generated_std_includes, in the same order.
const std::vector<std::string>& core_std_includes();

/// The headers of generated_std_includes beyond core_std_includes that C++ `code` needs, judged
/// from the standard-library names it spells (`std::chrono::...` needs `<chrono>`; any mention of
/// `complex`, DaCe's `dace::complex128` too, needs `<complex>`); nullopt when
/// it cannot tell (a `std::` name of no header sdfc knows, `using namespace`, an unqualified name
/// of a header outside the core such as `cout`): then the code gets the whole environment.
std::optional<std::vector<std::string>> cpp_code_std_includes(const std::string& code);

/// `headers` (a subset of generated_std_includes, any order) in generated_std_includes' order.
std::vector<std::string> in_include_order(const std::vector<std::string>& headers);

/// The standard headers a generated host source of `target` reads before its own code: `includes`
/// (the program's, SDFG::std_includes) and those sdfc's runtime headers include
/// (runtime/include/sdfc: program.h and rt.h; complex.h where `<complex>` is among `includes`; the
/// GPU runtime's for GPU targets). The build precompiles them once (compiler/Build.h,
/// BuildRequest::prelude_headers).
std::vector<std::string> prelude_std_includes(const std::vector<std::string>& includes, Target target);

}  // namespace sdfc
