#include "lang/CppEnvironment.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <regex>
#include <set>

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

namespace {

/// The header of generated_std_includes beyond the core that declares each `std::` name C++ code
/// may spell (the first component after `std::`); "" for names the core headers (and those sdfc's
/// runtime headers include: <cstdlib>, <utility>, <exception>, <cstdarg>) declare.
const std::map<std::string, std::string>& std_name_headers() {
  static const std::map<std::string, std::string> table = [] {
    std::map<std::string, std::string> t;
    auto add = [&t](const std::string& header, std::initializer_list<const char*> names) {
      for (const char* n : names) t[n] = header;
    };
    add("<chrono>", {"chrono"});
    add("<complex>", {"complex", "real", "imag", "conj", "polar", "proj", "norm", "arg"});
    add("<numeric>", {"accumulate", "iota", "inner_product", "partial_sum", "adjacent_difference", "gcd", "lcm",
                      "reduce", "transform_reduce", "exclusive_scan", "inclusive_scan", "midpoint"});
    add("<mutex>", {"mutex", "lock_guard", "unique_lock", "scoped_lock", "call_once", "once_flag", "recursive_mutex",
                    "timed_mutex", "try_lock", "lock", "defer_lock", "adopt_lock", "try_to_lock"});
    add("<string>", {"string", "to_string", "stoi", "stol", "stoll", "stoul", "stoull", "stof", "stod", "stold",
                     "wstring", "u16string", "u32string", "char_traits", "getline"});
    add("<stdexcept>", {"runtime_error", "logic_error", "invalid_argument", "out_of_range", "domain_error",
                        "length_error", "overflow_error", "underflow_error", "range_error"});
    add("<unordered_set>", {"unordered_set", "unordered_multiset", "hash"});
    // <cmath>
    add("", {"abs",    "fabs",        "fmod",          "remainder",   "remquo",     "fma",
             "fmax",   "fmin",        "fdim",          "nan",         "exp",        "exp2",
             "expm1",  "log",         "log10",         "log2",        "log1p",      "pow",
             "sqrt",   "cbrt",        "hypot",         "sin",         "cos",        "tan",
             "asin",   "acos",        "atan",          "atan2",       "sinh",       "cosh",
             "tanh",   "asinh",       "acosh",         "atanh",       "erf",        "erfc",
             "tgamma", "lgamma",      "ceil",          "floor",       "trunc",      "round",
             "lround", "llround",     "nearbyint",     "rint",        "lrint",      "llrint",
             "frexp",  "ldexp",       "modf",          "scalbn",      "scalbln",    "ilogb",
             "logb",   "nextafter",   "nexttoward",    "copysign",    "fpclassify", "isfinite",
             "isinf",  "isnan",       "isnormal",      "signbit",     "isgreater",  "isgreaterequal",
             "isless", "islessequal", "islessgreater", "isunordered", "float_t",    "double_t"});
    // <algorithm>, <utility>
    add("", {"min",
             "max",
             "minmax",
             "clamp",
             "swap",
             "sort",
             "stable_sort",
             "partial_sort",
             "nth_element",
             "fill",
             "fill_n",
             "copy",
             "copy_n",
             "copy_if",
             "copy_backward",
             "move",
             "move_backward",
             "transform",
             "find",
             "find_if",
             "find_if_not",
             "count",
             "count_if",
             "all_of",
             "any_of",
             "none_of",
             "for_each",
             "reverse",
             "rotate",
             "unique",
             "remove",
             "remove_if",
             "replace",
             "replace_if",
             "equal",
             "lower_bound",
             "upper_bound",
             "binary_search",
             "equal_range",
             "min_element",
             "max_element",
             "minmax_element",
             "generate",
             "generate_n",
             "iter_swap",
             "swap_ranges",
             "is_sorted",
             "merge",
             "pair",
             "make_pair",
             "forward",
             "exchange",
             "declval",
             "get",
             "tuple_size",
             "tuple_element",
             "index_sequence",
             "make_index_sequence",
             "integer_sequence",
             "as_const",
             "in_place"});
    // <cstddef>, <cstdint>, <cstring>, <cstdio>, <cstdlib>, <new>, <limits>, <type_traits>, <exception>
    add("", {"size_t",
             "ptrdiff_t",
             "nullptr_t",
             "byte",
             "max_align_t",
             "int8_t",
             "int16_t",
             "int32_t",
             "int64_t",
             "uint8_t",
             "uint16_t",
             "uint32_t",
             "uint64_t",
             "intptr_t",
             "uintptr_t",
             "intmax_t",
             "uintmax_t",
             "int_fast8_t",
             "int_fast16_t",
             "int_fast32_t",
             "int_fast64_t",
             "int_least8_t",
             "int_least16_t",
             "int_least32_t",
             "int_least64_t",
             "uint_fast8_t",
             "uint_fast16_t",
             "uint_fast32_t",
             "uint_fast64_t",
             "memcpy",
             "memmove",
             "memset",
             "memcmp",
             "memchr",
             "strlen",
             "strcmp",
             "strncmp",
             "strcpy",
             "strncpy",
             "strcat",
             "strchr",
             "strstr",
             "printf",
             "fprintf",
             "sprintf",
             "snprintf",
             "puts",
             "fputs",
             "fflush",
             "FILE",
             "fopen",
             "fclose",
             "fwrite",
             "fread",
             "malloc",
             "calloc",
             "realloc",
             "free",
             "abort",
             "exit",
             "atoi",
             "atol",
             "atof",
             "strtol",
             "strtoll",
             "strtoul",
             "strtoull",
             "strtod",
             "strtof",
             "getenv",
             "qsort",
             "div",
             "ldiv",
             "lldiv",
             "labs",
             "llabs",
             "rand",
             "srand",
             "nothrow",
             "bad_alloc",
             "launder",
             "numeric_limits",
             "exception",
             "terminate",
             "uncaught_exceptions",
             "exception_ptr"});
    return t;
  }();
  return table;
}

/// Unqualified names that only a header outside the core declares (as `using namespace std` or a C
/// header would make them visible): their presence means the whole environment.
bool names_outside_core_unqualified(const std::string& code) {
  static const std::regex names(
      R"(\b(cout|cerr|clog|cin|endl|string|vector|map|unordered_map|set|array|tuple|ostream|istream|stringstream|ostringstream|istringstream|function|shared_ptr|unique_ptr|make_shared|make_unique|assert|thread|atomic)\b)");
  return std::regex_search(code, names);
}

/// `code` with its comments and string and character literals blanked (a loop, not a regex:
/// libstdc++'s regex recurses per character of a match).
std::string without_comments_and_literals(const std::string& code) {
  std::string out;
  out.reserve(code.size());
  for (std::size_t i = 0; i < code.size();) {
    if (code.compare(i, 2, "//") == 0) {
      i = code.find('\n', i);
      if (i == std::string::npos) break;
    } else if (code.compare(i, 2, "/*") == 0) {
      std::size_t end = code.find("*/", i + 2);
      i = end == std::string::npos ? code.size() : end + 2;
      out += ' ';
    } else if (code[i] == '"' ||
               (code[i] == '\'' && !(i > 0 && std::isalnum(static_cast<unsigned char>(code[i - 1]))))) {
      // (a quote after a digit separates digits: 1'000)
      char quote = code[i++];
      while (i < code.size() && code[i] != quote) i += code[i] == '\\' ? 2 : 1;
      ++i;
      out += ' ';
    } else {
      out += code[i++];
    }
  }
  return out;
}

}  // namespace

std::optional<std::vector<std::string>> cpp_code_std_includes(const std::string& text) {
  static const std::regex using_namespace(R"(\busing\s+namespace\b)");
  static const std::regex std_name(R"(\bstd\s*::\s*([A-Za-z_][A-Za-z_0-9]*))");
  const std::string code = without_comments_and_literals(text);
  if (std::regex_search(code, using_namespace) ||
      names_outside_core_unqualified(std::regex_replace(code, std_name, " ")))
    return std::nullopt;
  std::set<std::string> needed;
  for (std::sregex_iterator it(code.begin(), code.end(), std_name), end; it != end; ++it) {
    const std::string name = (*it)[1];
    if (name.find("is_") == 0 || name.find("enable_if") == 0 || name.find("conditional") == 0 ||
        name.find("remove_") == 0 || name.find("add_") == 0 || name.find("decay") == 0 ||
        name.find("common_type") == 0 || name.find("integral_constant") == 0 || name.find("true_type") == 0 ||
        name.find("false_type") == 0 || name.find("underlying_type") == 0 || name.find("make_") == 0)
      continue;  // <type_traits> and <utility>
    auto found = std_name_headers().find(name);
    if (found == std_name_headers().end()) return std::nullopt;
    if (!found->second.empty()) needed.insert(found->second);
  }
  // dace::complex64 / complex128 (sdfc/dace_math.h declares them only with <complex>)
  if (text.find("complex") != std::string::npos) needed.insert("<complex>");
  return std::vector<std::string>(needed.begin(), needed.end());
}

std::vector<std::string> in_include_order(const std::vector<std::string>& headers) {
  std::vector<std::string> ordered;
  for (const std::string& h : generated_std_includes())
    if (std::find(headers.begin(), headers.end(), h) != headers.end()) ordered.push_back(h);
  return ordered;
}

std::vector<std::string> prelude_std_includes(const std::vector<std::string>& includes, Target target) {
  std::vector<std::string> headers = includes;
  auto add = [&](const std::string& h) {
    if (std::find(headers.begin(), headers.end(), h) == headers.end()) headers.push_back(h);
  };
  // sdfc/program.h and sdfc/rt.h (and sdfc/dace_math.h; sdfc/complex.h reads <complex>, which is
  // then among `includes`)
  for (const char* h : {"<cstdarg>", "<cstdlib>", "<exception>", "<utility>", "<pthread.h>"}) add(h);
  // sdfc/gpu.h and its headers; the toolkit's runtime header stays where gpu_portability.h reads it
  if (target == Target::CUDA || target == Target::HIP)
    for (const char* h : {"<initializer_list>", "<vector>"}) add(h);
  return headers;
}

}  // namespace sdfc
