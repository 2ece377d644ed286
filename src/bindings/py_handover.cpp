// gpupy's functions as the namespace holds them: the implementation,
// unless an argument belongs to a library NumPy would hand the call to
// (gpupy/_deferral.py says which and why). Every call of a gpupy function
// passes here, so the common one -- gpupy arrays, NumPy arrays and scalars,
// Python numbers, a short list of arrays -- is told apart in C, with a
// vectorcall on to the implementation: as a Python wrapper the check cost a
// function of a few microseconds a fifth more.
#include "bindings/numpy_api.hpp"
#include "bindings/py_array.hpp"
#include "bindings/py_function_object.hpp"

namespace gpupy {

namespace {

struct HandoverObject {
    PyObject_HEAD
    PyObject* implementation;
    PyObject* numpy_function;
    PyObject* decide;  // decide(args, kwargs) -> bool: the package's look at other arguments
    PyObject* dict;    // __name__, __doc__, __wrapped__, ... (functools.update_wrapper)
    vectorcallfunc vectorcall;
};

constexpr Py_ssize_t kSequenceLook = 64;  // as _deferral._SEQUENCE_LOOK

// An argument no other library can claim: gpupy's and NumPy's arrays and
// scalars, Python's numbers, strings, None, slices, Ellipsis, and functions
// (fromfunction's, apply_along_axis's: NumPy looks for __array_function__
// on an argument's type, and a function's type has none).
bool native(PyObject* p) {
    return is_gpuarray(p) || PyArray_Check(p) || PyArray_IsScalar(p, Generic) || PyFloat_Check(p) ||
           PyLong_Check(p) || p == Py_None || PyUnicode_Check(p) || PyComplex_Check(p) || PySlice_Check(p) ||
           p == Py_Ellipsis || PyArray_DescrCheck(p) || PyType_Check(p) || PyFunction_Check(p) ||
           PyCFunction_Check(p) || PyMethod_Check(p);
}

bool native_or_sequence_of_native(PyObject* p) {
    if (native(p)) return true;
    if (!PyList_Check(p) && !PyTuple_Check(p)) return false;
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(p);
    if (n > kSequenceLook) return true;  // data, not arrays (NumPy's dispatchers look at arrays)
    PyObject** items = PySequence_Fast_ITEMS(p);
    for (Py_ssize_t i = 0; i < n; ++i) {
        if (!native(items[i])) return false;
    }
    return true;
}

PyObject* handover_call(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
    auto* h = reinterpret_cast<HandoverObject*>(self);
    const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    bool plain = true;
    for (Py_ssize_t i = 0; plain && i < nargs + nkw; ++i) plain = native_or_sequence_of_native(args[i]);
    PyObject* target = h->implementation;
    if (!plain) {
        PyObject* positional = PyTuple_New(nargs);
        if (!positional) return nullptr;
        for (Py_ssize_t i = 0; i < nargs; ++i) {
            Py_INCREF(args[i]);
            PyTuple_SET_ITEM(positional, i, args[i]);
        }
        PyObject* keywords = PyTuple_New(nkw);  // the keyword values (their names do not matter here)
        if (!keywords) {
            Py_DECREF(positional);
            return nullptr;
        }
        for (Py_ssize_t i = 0; i < nkw; ++i) {
            Py_INCREF(args[nargs + i]);
            PyTuple_SET_ITEM(keywords, i, args[nargs + i]);
        }
        PyObject* verdict = PyObject_CallFunctionObjArgs(h->decide, positional, keywords, nullptr);
        Py_DECREF(positional);
        Py_DECREF(keywords);
        if (!verdict) return nullptr;
        const int defer = PyObject_IsTrue(verdict);
        Py_DECREF(verdict);
        if (defer < 0) return nullptr;
        if (defer) target = h->numpy_function;
    }
    return PyObject_Vectorcall(target, args, nargsf, kwnames);
}

PyObject* handover_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
    PyObject *implementation, *numpy_function, *decide;
    static const char* names[] = {"implementation", "numpy_function", "decide", nullptr};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOO", const_cast<char**>(names), &implementation, &numpy_function,
                                     &decide))
        return nullptr;
    auto* h = reinterpret_cast<HandoverObject*>(type->tp_alloc(type, 0));
    if (!h) return nullptr;
    Py_INCREF(implementation);
    Py_INCREF(numpy_function);
    Py_INCREF(decide);
    h->implementation = implementation;
    h->numpy_function = numpy_function;
    h->decide = decide;
    h->vectorcall = handover_call;
    return reinterpret_cast<PyObject*>(h);
}

int handover_traverse(PyObject* self, visitproc visit, void* arg) {
    auto* h = reinterpret_cast<HandoverObject*>(self);
    Py_VISIT(h->implementation);
    Py_VISIT(h->numpy_function);
    Py_VISIT(h->decide);
    Py_VISIT(h->dict);
    return 0;
}

int handover_clear(PyObject* self) {
    auto* h = reinterpret_cast<HandoverObject*>(self);
    Py_CLEAR(h->implementation);
    Py_CLEAR(h->numpy_function);
    Py_CLEAR(h->decide);
    Py_CLEAR(h->dict);
    return 0;
}

void handover_dealloc(PyObject* self) {
    PyObject_GC_UnTrack(self);
    handover_clear(self);
    Py_TYPE(self)->tp_free(self);
}

PyObject* handover_repr(PyObject* self) {
    return PyObject_Repr(reinterpret_cast<HandoverObject*>(self)->implementation);
}

PyTypeObject handover_type = [] {
    PyTypeObject t{};  // every slot empty but those set below
    Py_SET_REFCNT(reinterpret_cast<PyObject*>(&t), 1);
    t.tp_name = "gpupy._core.handover";
    t.tp_basicsize = sizeof(HandoverObject);
    t.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL;
    t.tp_doc = "handover(implementation, numpy_function, decide): a gpupy function that hands calls with other "
               "libraries' arrays to NumPy's function (gpupy/_deferral.py).";
    t.tp_new = handover_new;
    t.tp_call = PyVectorcall_Call;
    t.tp_vectorcall_offset = offsetof(HandoverObject, vectorcall);
    t.tp_dictoffset = offsetof(HandoverObject, dict);
    t.tp_traverse = handover_traverse;
    t.tp_clear = handover_clear;
    t.tp_dealloc = handover_dealloc;
    t.tp_methods = function_object::methods;  // pickled by reference: gpupy.<qualname>
    t.tp_getset = function_object::getset;
    t.tp_repr = handover_repr;
    t.tp_getattro = PyObject_GenericGetAttr;
    t.tp_setattro = PyObject_GenericSetAttr;
    return t;
}();

}  // namespace

void register_handover(py::module_& m) {
    if (PyType_Ready(&handover_type) < 0) throw py::error_already_set();
    Py_INCREF(&handover_type);
    m.add_object("handover", py::handle(reinterpret_cast<PyObject*>(&handover_type)));
}

}  // namespace gpupy
