// gpupy._core: the C++ core layer's Python module.
#define GPUPY_NUMPY_IMPORT
#include "bindings/numpy_api.hpp"

#include <pybind11/pybind11.h>

#include "core/runtime/errors.hpp"
#include "core/runtime/runtime.hpp"
#include "bindings/py_array.hpp"

namespace py = pybind11;

PYBIND11_MODULE(_core, m) {
    m.doc() = "gpupy core layer: lazy GPU arrays, blocks, cache, IR and partitioning";
    if (_import_array() < 0) throw py::error_already_set();

    using namespace gpupy;
    py::register_exception<DriverError>(m, "DriverError", PyExc_RuntimeError);
    static py::object axis_error = py::module_::import("numpy").attr("exceptions").attr("AxisError");
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const ValueError& e) {
            PyErr_SetString(PyExc_ValueError, e.what());
        } catch (const IndexError& e) {
            PyErr_SetString(PyExc_IndexError, e.what());
        } catch (const TypeError& e) {
            PyErr_SetString(PyExc_TypeError, e.what());
        } catch (const OverflowError& e) {
            PyErr_SetString(PyExc_OverflowError, e.what());
        } catch (const AxisError& e) {
            PyErr_SetString(axis_error.ptr(), e.what());
        } catch (const DeviceMemoryError& e) {
            PyErr_SetString(PyExc_MemoryError, e.what());
        } catch (const HostEvaluationRefused& e) {
            // The package's hook raises FallbackError for the op in "raise"
            // mode; the core is unwound and consistent by now.
            try {
                if (Runtime::get().on_host_evaluation) Runtime::get().on_host_evaluation(e.what());
                PyErr_SetString(PyExc_RuntimeError, (std::string("host evaluation of '") + e.what() + "' refused").c_str());
            } catch (py::error_already_set& err) {
                err.restore();
            }
        } catch (const HostMemoryError& e) {
            PyErr_SetString(PyExc_MemoryError, e.what());
        } catch (const std::bad_alloc&) {
            // Never a bare "std::bad_alloc": say what ran out.
            PyErr_SetString(PyExc_MemoryError,
                            "gpupy could not allocate host memory for an evaluation (the arrays involved do not fit "
                            "in this machine's memory)");
        } catch (const AttributeError& e) {
            PyErr_SetString(PyExc_AttributeError, e.what());
        } catch (const InternalError& e) {
            PyErr_SetString(PyExc_RuntimeError, (std::string("gpupy internal error: ") + e.what()).c_str());
        }
    });
    register_array(m);
    register_array_functions(m);
    register_ops(m);
    register_products(m);
    register_runtime(m);
    register_structural(m);
    register_reduce_methods(m);
    register_ufunc_base(m);
    register_random_draws(m);
    register_handover(m);
    register_memory(m);
    register_numpy_loops();
}
