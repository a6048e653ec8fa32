// graphworld._core.VectorEnv: several C++ GraphEnvs stepped together on
// worker threads with the GIL released, their observations batched into
// one dict of NumPy arrays (docs/python.md, "VectorEnv"), with Gymnasium
// 1.x's next-step auto-reset: an environment that ended is reset by the
// step after, which ignores its action and returns its first observation
// with reward 0.
#pragma once

#include <pybind11/pybind11.h>

namespace graphworld::python {

void bind_vector_env(pybind11::module_& module);

}  // namespace graphworld::python
