// The buffer protocol of gpupy arrays: the host bytes exported to C
// libraries (memoryview, SciPy, PIL), and the error of a failed export
// kept for NumPy's next question.
#include "bindings/numpy_api.hpp"
#include "bindings/py_array.hpp"

namespace gpupy {

namespace {

// The error of the last failed buffer export, kept for the next export of
// the same array. NumPy's np.asarray asks for a buffer first and discards
// any error it raises -- a KeyboardInterrupt, a FallbackError, a warning
// turned into an error -- then asks __array_interface__ or __array__,
// which raise it instead (raise_export_error). A new buffer request
// forgets it.
struct ExportError {
    py::object owner;
    py::object type, value, traceback;
};
ExportError& export_error() {
    static auto* e = new ExportError();
    return *e;
}

void keep_export_error(PyObject* self) {
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    ExportError& e = export_error();
    e.owner = py::reinterpret_borrow<py::object>(self);
    e.type = py::reinterpret_steal<py::object>(type);
    e.value = py::reinterpret_steal<py::object>(value);
    e.traceback = py::reinterpret_steal<py::object>(traceback);
    PyErr_Restore(e.type.inc_ref().ptr(), e.value ? e.value.inc_ref().ptr() : nullptr,
                  e.traceback ? e.traceback.inc_ref().ptr() : nullptr);
}

}  // namespace

void raise_export_error(py::handle self) {
    ExportError& e = export_error();
    if (!e.owner || !e.owner.is(self)) return;
    ExportError taken = std::move(e);
    e = ExportError{};
    PyErr_Restore(taken.type.release().ptr(), taken.value.release().ptr(), taken.traceback.release().ptr());
    throw py::error_already_set();
}

int gpuarray_getbuffer(PyObject* self, Py_buffer* view, int flags) {
    export_error() = ExportError{};
    try {
        // A buffer exports the array's own host bytes, writable as an
        // ndarray's are: a C library writing into it (SciPy's output=, a
        // Cython loop) writes into the array (exported_ndarray). A consumer
        // that needs contiguous bytes of a strided view gets a read-only
        // contiguous copy, and one that needs them writable an error: a
        // write into a copy would be lost.
        const GpuArray& a = gpuarray_ref(self);
        if (!a.writeable && (flags & PyBUF_WRITABLE)) {
            PyErr_SetString(PyExc_BufferError, "this gpupy array is read-only");
            view->obj = nullptr;
            return -1;
        }
        {
            py::object arr = exported_ndarray(a);
            if (PyObject_GetBuffer(arr.ptr(), view, flags) == 0) return 0;
            if (flags & PyBUF_WRITABLE) {
                PyErr_SetString(PyExc_BufferError,
                                "a writable buffer of this strided gpupy view would have to be a copy, and a write "
                                "into it would be lost; export the contiguous array (or write with indexing or out=)");
                view->obj = nullptr;
                return -1;
            }
            PyErr_Clear();
        }
        py::object arr = to_ndarray(a);
        if (!PyArray_IS_C_CONTIGUOUS(reinterpret_cast<PyArrayObject*>(arr.ptr()))) {
            // Consumers such as PIL.Image.frombuffer want contiguous bytes.
            arr = py::reinterpret_steal<py::object>(
                PyArray_NewCopy(reinterpret_cast<PyArrayObject*>(arr.ptr()), NPY_CORDER));
            if (!arr) throw py::error_already_set();
            PyArray_CLEARFLAGS(reinterpret_cast<PyArrayObject*>(arr.ptr()), NPY_ARRAY_WRITEABLE);
        }
        return PyObject_GetBuffer(arr.ptr(), view, flags);
    } catch (py::error_already_set& e) {
        e.restore();
    } catch (...) {
        // The error evaluating raised (a FallbackError, a DriverError, ...),
        // as gpupy's other entry points raise it.
        py::detail::try_translate_exceptions();
    }
    keep_export_error(self);
    view->obj = nullptr;
    return -1;
}

}  // namespace gpupy
