#include "python/python_errors.h"

#include "common/error.h"

namespace graphworld::python {

void register_error_translation(pybind11::module_& module) {
  (void)module;
  pybind11::register_exception_translator([](std::exception_ptr error) {
    try {
      if (error) std::rethrow_exception(error);
    } catch (const UsageError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const FormatError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const ImportError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const GraphError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const Error& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });
}

}  // namespace graphworld::python
