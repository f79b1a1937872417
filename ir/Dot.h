/// \file
/// Pictures of SDFGs (`sdfc dot`): the SDFG as a Graphviz DOT graph. Control flow: every block is
/// a cluster (loops and conditionals hold their bodies; each conditional branch is a cluster
/// entered from the conditional), interstate edges carry their conditions and assignments.
/// Dataflow: access nodes, tasklets (with their code), nested SDFGs (clusters holding their own
/// control flow), map scopes as clusters. What passes decided is drawn too: each GPU operation
/// (kernel, GPU copy) coloured by its stream (`Node::stream`, `DataEdge::stream`), host syncs
/// (`host_waits`) as marked nodes before what waits, the ordered return.
#pragma once

#include <string>

#include "ir/SDFG.h"

namespace sdfc {

/// The SDFG as a DOT digraph (deterministic: the same IR gives the same bytes).
std::string write_dot(const SDFG& sdfg);

/// `text` as the inside of a DOT double-quoted string: backslash and quote escaped, each line
/// ended by `line_end` ("\\l": left-justified, "\\n": centred), control characters dropped.
std::string dot_escape(const std::string& text, const char* line_end = "\\n");

}  // namespace sdfc
