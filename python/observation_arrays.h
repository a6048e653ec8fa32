// An Observation as a dict of NumPy arrays named as its C++ fields
// (env/gym/observation.h): xfer_mask [N + 1] and location_mask [N, L]
// (uint8), node_features [nodes, 64], edge_features [edges, 8], globals [6]
// (float32), senders, receivers [edges], node_op [nodes], and the matches as
// location_begin [N + 1], node_begin [locations + 1] and match_nodes
// (int32), and, with location rewards on, location_reward [locations] and
// xfer_reward [N + 1] (float32). The arrays are the dict's own: the environment's later steps
// never change them.
#pragma once

#include <pybind11/pybind11.h>

#include "env/gym/observation.h"

namespace graphworld::python {

pybind11::dict observation_arrays(const Observation& observation);

// The other way, for a policy acting on an observation handed in from
// Python (GraphEnv's, or one built by hand): the same keys and shapes.
// ValueError (UsageError) naming the key when one is missing or its shape
// does not fit the others.
Observation observation_from_arrays(const pybind11::dict& arrays);

}  // namespace graphworld::python
