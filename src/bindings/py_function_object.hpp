// What gpupy's C function objects share (py_handover.cpp's handover: the
// namespace's functions; py_random_draws.cpp's random_draw: gpupy.random's
// draws): they stand for a global of the package, so they pickle by
// reference, as the function they replace would (`__reduce__` returning
// the qualified name, looked up in `__module__`), and carry a `__dict__`
// for `__name__`, `__doc__`, `__wrapped__`, ... as a function's.
#pragma once

#include <Python.h>

namespace gpupy::function_object {

inline PyObject* reduce_by_qualname(PyObject* self, PyObject*) {
    return PyObject_GetAttrString(self, "__qualname__");
}

inline PyMethodDef methods[] = {
    {"__reduce__", reduce_by_qualname, METH_NOARGS, nullptr},
    {nullptr, nullptr, 0, nullptr},
};

inline PyGetSetDef getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, nullptr, nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

}  // namespace gpupy::function_object
