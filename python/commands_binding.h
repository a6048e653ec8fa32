// _core.optimize_json and _core.cost_json: `graphworld optimize` and
// `graphworld cost` run in this process for their JSON report
// (launch/command_json.h), with the GIL released while they work.
#pragma once

#include <pybind11/pybind11.h>

namespace graphworld::python {

void bind_commands(pybind11::module_& module);

}  // namespace graphworld::python
