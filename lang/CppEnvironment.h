/// \file
/// The C++ environment generated code gives tasklets: the standard headers every generated source
/// includes before sdfc's runtime header. CPP tasklets may rely on what they declare; the tasklet
/// check (clang_tools/TaskletCheck.h) parses tasklets against the same list.
#pragma once

#include <string>
#include <vector>

namespace sdfc {

/// `<cstddef>`, `<cstdint>`, `<cmath>`, ... in the order generated sources include them.
const std::vector<std::string>& generated_std_includes();

}  // namespace sdfc
