// _core.Policy: a trained policy file (.gwpolicy, or 'default' /
// 'default-gpu') acting on observations handed in from Python.
#pragma once

#include <pybind11/pybind11.h>

namespace graphworld::python {

void bind_policy(pybind11::module_& module);

}  // namespace graphworld::python
