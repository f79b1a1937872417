/// \file
/// Reads DaCe's SDFG JSON (`.sdfg`, and gzip-compressed `.sdfgz`) into the IR. Omitted properties
/// take DaCe's defaults; ranges keep DaCe's inclusive ends; symbolic properties are parsed in the
/// dialect that `dace_version` selects. Anything the IR cannot represent is a UserError naming the
/// construct and its JSON pointer; nothing is dropped silently. Built to take arbitrary bytes
/// (fuzzed): malformed input is an error, never a crash or a hang.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "ir/SDFG.h"

namespace sdfc {

/// Parses an SDFG from the bytes of a file (plain JSON or gzip). `file_name` is used in messages.
/// Throws UserError.
std::unique_ptr<SDFG> read_sdfg(std::string_view bytes, const std::string& file_name = "<input>");

/// The two halves of read_sdfg: the bytes as a JSON document (gunzipped, duplicate keys and absurd
/// nesting refused) and the document as an SDFG. Both throw UserError.
Json parse_sdfg_document(std::string_view bytes, const std::string& file_name = "<input>");
std::unique_ptr<SDFG> read_sdfg_document(const Json& doc, const std::string& file_name = "<input>");

/// Reads and parses a file. Throws UserError (also for a file that cannot be read).
std::unique_ptr<SDFG> read_sdfg_file(const std::string& path);

/// Reads a whole file into memory; gunzips gzip data. Throws UserError.
std::string read_file_bytes(const std::string& path);

/// The largest input read, plain or decompressed: 256 MiB, or $SDFC_MAX_INPUT_MB MiB.
std::size_t max_input_bytes();

/// Maximum nesting depth of JSON values accepted (deeper input is rejected, not recursed into).
constexpr int kMaxJsonDepth = 512;
// How many levels of the pointer a too-deep error names.
constexpr std::size_t kDeepPathLevels = 16;

}  // namespace sdfc
