// graphworld._core.GraphEnv: one C++ GraphEnv (env/gym/graph_env.h) on a
// model, with its rules and cost model, for the Gymnasium-style class of
// python/graphworld/env.py. reset() and step() run with the GIL released.
#pragma once

#include <pybind11/pybind11.h>

namespace graphworld::python {

void bind_graph_env(pybind11::module_& module);

}  // namespace graphworld::python
