// graphworld._core: the C++ side of the graphworld Python package
// (python/README.md). The package's Python files wrap it.
#include <pybind11/pybind11.h>

#include "python/commands_binding.h"
#include "python/graph_env_binding.h"
#include "python/policy_binding.h"
#include "python/python_errors.h"
#include "python/rollout_store_binding.h"
#include "python/vector_env_binding.h"

PYBIND11_MODULE(_core, module) {
  module.doc() = "graphworld's C++ core: graph rewriting environments over ONNX models";
  graphworld::python::register_error_translation(module);
  graphworld::python::bind_graph_env(module);
  graphworld::python::bind_vector_env(module);
  graphworld::python::bind_policy(module);
  graphworld::python::bind_commands(module);
  graphworld::python::bind_rollout_store(module);
}
