// graphworld's C++ errors as Python exceptions: a user's mistake (a bad
// model path, a masked action, an unknown cost model, a model that does
// not import: UsageError, FormatError, ImportError, GraphError) is a
// ValueError, and any other graphworld error a RuntimeError, each with
// the C++ message, which names what was wrong and where.
#pragma once

#include <pybind11/pybind11.h>

namespace graphworld::python {

void register_error_translation(pybind11::module_& module);

}  // namespace graphworld::python
