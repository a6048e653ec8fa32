#include "python/commands_binding.h"

#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "launch/command_json.h"

namespace graphworld::python {

namespace py = pybind11;

void bind_commands(py::module_& module) {
  module.def(
      "optimize_json",
      [](const std::vector<std::string>& args) {
        py::gil_scoped_release unlocked;
        return optimize_json(args);
      },
      py::arg("args"), "`graphworld optimize ARGS... --json` in this process: its JSON object as text");
  module.def(
      "cost_json",
      [](const std::vector<std::string>& args) {
        py::gil_scoped_release unlocked;
        return cost_json(args);
      },
      py::arg("args"), "`graphworld cost ARGS... --json` in this process: its JSON object as text");
}

}  // namespace graphworld::python
