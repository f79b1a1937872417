/// \file
/// The pass pipeline, written once and in order (DESIGN.md §2). It can print the IR after any
/// pass and time every pass.
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "ir/Options.h"
#include "ir/SDFG.h"

namespace sdfc {

struct PipelineHooks {
  std::string print_after;           ///< a pass name, or "all"; "" = none
  std::ostream* print_to = nullptr;  ///< where --print-after writes
  bool time_passes = false;
  std::ostream* time_to = nullptr;  ///< where --time-passes writes
  std::string stop_after;           ///< a pass name: stop after it (sdfc dot --after=NAME); "" = run every pass
  std::ostream* notes_to =
      nullptr;  ///< where the compile driver writes notes (the tasklet check skipped); null = nowhere
};

/// A pass of the pipeline: its name, the passes that must have run before it, and what it decides
/// in the IR (docs/design.md's table of passes; `sdfc opt --list`).
struct PassInfo {
  std::string name;
  std::vector<std::string> requires_;
  std::string produces;
};

/// Names of the passes, in pipeline order.
const std::vector<std::string>& pass_names();
/// The passes, in pipeline order.
const std::vector<PassInfo>& pass_infos();

/// Runs every pass not yet run on `sdfg` in order: all of them on a program as read, the rest after
/// the last of SDFG::passes_run on an IR file (a pass left out before that is an error). Records
/// each in SDFG::passes_run. Throws UserError when a pass rejects the program.
void run_pipeline(SDFG& sdfg, const CompileOptions& options, const PipelineHooks& hooks = {});

/// What is wrong with running passes `names` in that order after passes `done` ("" when nothing):
/// an unknown pass, one run twice, one out of the pipeline's order, one whose required passes have
/// not run.
std::string check_pass_order(const std::vector<std::string>& done, const std::vector<std::string>& names);
/// Runs passes `names` in that order (sdfc opt); throws UserError with check_pass_order's message.
void run_passes(SDFG& sdfg, const std::vector<std::string>& names, const CompileOptions& options,
                const PipelineHooks& hooks = {});

}  // namespace sdfc
