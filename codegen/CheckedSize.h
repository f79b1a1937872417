/// \file
/// Sizes of the containers generated code allocates, computed from symbol values with every step
/// checked (issue 18): `N * M` of two `int` symbols computed in `int` overflows at 2^31 elements
/// and allocates a buffer smaller than the program then writes. The printed expression has type
/// `sdfc::rt::Size` (runtime/include/sdfc/program.h), whose operations record an overflow;
/// `sdfc::rt::element_count` then refuses an overflowed or negative size, naming the container
/// and its size expression, before the allocation.
#pragma once

#include <string>

#include "ir/Expr.h"

namespace sdfc {

/// C++ text of type `sdfc::rt::Size` computing `e`, with its symbols (C identifiers, in scope
/// where the text is printed) converted one by one. Operations without a checked form (true
/// division, bit operations, calls other than Max/Min/int_floor/int_ceil/Mod/Abs) are computed
/// in 64 bits without a check.
std::string checked_size(const Expr& e);

/// C++ text of a `std::size_t` element count of container `what` ("transient A") of `size`
/// elements of `element_bytes` (C++ text, e.g. `sizeof(double)`): a constant for a constant
/// size, otherwise a call of `sdfc::rt::element_count` on `checked_size(size)` that throws
/// `sdfc::rt::SizeError` for an overflowed or negative size.
std::string checked_count(const std::string& what, const Expr& size, const std::string& element_bytes);

}  // namespace sdfc
