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

/// Names of the passes, in pipeline order.
const std::vector<std::string>& pass_names();

/// Runs every pass on `sdfg` in order. Throws UserError when a pass rejects the program.
void run_pipeline(SDFG& sdfg, const CompileOptions& options, const PipelineHooks& hooks = {});

}  // namespace sdfc
