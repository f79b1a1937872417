/// \file
/// sdfc's IR file: the IR after any pass, written and read back exactly, so that one pass can run on
/// a chosen input (`sdfc opt`, docs/design.md "The IR file").
///
/// The form is DaCe's SDFG JSON as JsonWriter writes it, plus a member "sdfc" on each object that
/// carries pass decisions (beside its "attributes": data descriptors, nodes, edges, interstate
/// edges, blocks, SDFGs) and, at the top level, {"sdfc": {"format": 1, "passes": [the passes run,
/// in order], "options": {every compile option by name}}}. Members hold only what differs from the
/// IR's defaults. A file without the top-level member is a DaCe file: no pass has run on it.
///
/// Exact: write_ir(read_ir(write_ir(x))) == write_ir(x), and the passes after the last one recorded
/// give the same program as the whole pipeline (tests/ir/IrFileTest.cpp, over the corpus after every
/// pass). Every field of the IR's structs is named once in IrFile.cpp (a structured binding per
/// struct): a field added to the IR stops the build until the file says whether it is written.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ir/Options.h"
#include "ir/SDFG.h"

namespace sdfc {

/// An IR file read back: the program with its decisions, and the options its passes ran with.
struct IrFile {
  std::unique_ptr<SDFG> sdfg;
  CompileOptions options;  ///< defaults for a DaCe file
  bool from_sdfc = false;  ///< the file has sdfc's header (written by write_ir), not only DaCe's format
};

/// The IR file of `sdfg` after the passes in sdfg.passes_run, which ran with `options`.
Json ir_to_json(const SDFG& sdfg, const CompileOptions& options);
/// The same as text (indented by one space per level, so that tests and users can read it).
std::string write_ir(const SDFG& sdfg, const CompileOptions& options);

/// Reads an IR file or a DaCe file (bytes as read_sdfg takes them). Throws UserError naming the
/// JSON pointer of a decision that cannot be read.
IrFile read_ir(std::string_view bytes, const std::string& file_name = "<input>");
IrFile read_ir_file(const std::string& path);

/// Why `who` (e.g. "sdfc convert") does not take an IR file: one message for every command and the
/// library API that read DaCe files only (they would drop its decisions or run its passes again).
std::string ir_file_refusal(const std::string& who);

}  // namespace sdfc
