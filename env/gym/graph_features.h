// Builds the graph tuple of an observation from a graph and its index.
#pragma once

#include "env/cost/graph_cost.h"
#include "env/gym/observation.h"
#include "env/rules/graph_index.h"

namespace graphworld {

struct GlobalInputs {
  double cost_ms = 0;
  double initial_cost_ms = 0;
  int32_t step = 0;
  int32_t max_steps = 1;
  size_t matches = 0;
  size_t allowed_xfers = 0;
  size_t num_xfers = 1;
};

// Fills `tuple` (reusing its buffers). Nodes are the live ops in id order;
// `op_to_node` gets each op's node index, or -1 for dead ops.
void build_graph_tuple(const Graph& graph, const GraphIndex& index, const CostTracker& cost,
                       const GlobalInputs& globals, GraphTuple& tuple, std::vector<int32_t>& op_to_node);

}  // namespace graphworld
