// Full validation of a graph: structure (no cycle, no dangling reference)
// plus, for every op, that its recorded outputs are what its inputs and
// parameters imply. Throws GraphError naming the first offending op.
#pragma once

#include "env/graph/graph.h"

namespace graphworld {

void validate_graph(const Graph& graph);

}  // namespace graphworld
