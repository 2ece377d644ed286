// gpupy.random's draws (gpupy/_submodules.py): a draw of one number from
// plain arguments -- `random.randint(0, 10)`, `rng.integers(0, 4)`, one per
// step of a maze or a random walk -- is NumPy's own call and result,
// counted as a host placement; every other call goes to the package's
// Python (arrays NumPy makes and hands over, counted as fallbacks). As a
// Python wrapper that choice, the count and the guard below cost ~0.4-0.6
// us a draw, half NumPy's own cost; as this C object, with vectorcall,
// ~0.1.
//
// The guard: NumPy's methods call others of the same generator (choice
// calls integers), which on gpupy's Generator subclass are these objects
// again; a draw already under way is not counted twice. It is per thread.
#include "bindings/numpy_api.hpp"
#include "bindings/py_array.hpp"
#include "bindings/py_function_object.hpp"

namespace gpupy {

namespace {

thread_local int t_drawing = 0;  // draws of NumPy's under way on this thread

struct DrawObject {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject* dict;       // __name__, __doc__, __wrapped__, ... as the package sets them
    PyObject* numpys;     // NumPy's function, or its unbound method
    PyObject* otherwise;  // the package's call for every other form
    PyObject* counts;     // the host placements (a dict: name -> count)
    PyObject* key;        // this draw's name in it
    Py_ssize_t size_at;   // where `size` stands among the arguments (self not counted)
    bool method;          // a method: bound to the instance it is got through
};

// An argument that leaves a draw at one number (gpupy/_submodules.py's
// _SCALAR_ARGUMENTS: None, bool, int, float, complex, str, NumPy scalars,
// dtypes, types): an array-like broadcasts into an array.
bool scalar_argument(PyObject* v) {
    return v == Py_None || PyLong_Check(v) || PyFloat_Check(v) || PyComplex_Check(v) || PyUnicode_Check(v) ||
           PyArray_IsScalar(v, Generic) || PyArray_DescrCheck(v) || PyType_Check(v);
}

bool one_value(const DrawObject* d, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    if (nargs > d->size_at && args[d->size_at] != Py_None) return false;
    for (Py_ssize_t i = 0; i < nargs; ++i) {
        if (!scalar_argument(args[i])) return false;
    }
    const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t i = 0; i < nkw; ++i) {
        PyObject* v = args[nargs + i];
        if (!scalar_argument(v)) return false;
        if (v != Py_None && PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, i), "size") == 0) return false;
    }
    return true;
}

int count(const DrawObject* d) {
    PyObject* was = PyDict_GetItemWithError(d->counts, d->key);  // borrowed
    if (!was && PyErr_Occurred()) return -1;
    PyObject* now = PyLong_FromLongLong((was ? PyLong_AsLongLong(was) : 0) + 1);
    if (!now) return -1;
    const int rc = PyDict_SetItem(d->counts, d->key, now);
    Py_DECREF(now);
    return rc;
}

PyObject* draw_call(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
    auto* d = reinterpret_cast<DrawObject*>(self);
    const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (t_drawing) return PyObject_Vectorcall(d->numpys, args, nargs, kwnames);  // part of a draw counted already
    const Py_ssize_t own = d->method ? 1 : 0;  // a method's first argument is the generator
    if (d->size_at >= 0 && nargs >= own && one_value(d, args + own, nargs - own, kwnames)) {
        if (count(d) < 0) return nullptr;
        ++t_drawing;
        PyObject* r = PyObject_Vectorcall(d->numpys, args, nargs, kwnames);
        --t_drawing;
        return r;
    }
    return PyObject_Vectorcall(d->otherwise, args, nargs, kwnames);
}

// Got through an instance (`rng.integers`): a bound method, as a Python
// function's. (A call `rng.integers(...)` skips it: the type is a method
// descriptor, and CPython calls it with the instance first.)
PyObject* draw_get(PyObject* self, PyObject* obj, PyObject*) {
    auto* d = reinterpret_cast<DrawObject*>(self);
    if (!d->method || !obj || obj == Py_None) {
        Py_INCREF(self);
        return self;
    }
    return PyMethod_New(self, obj);
}

int draw_traverse(PyObject* self, visitproc visit, void* arg) {
    auto* d = reinterpret_cast<DrawObject*>(self);
    Py_VISIT(d->dict);
    Py_VISIT(d->numpys);
    Py_VISIT(d->otherwise);
    Py_VISIT(d->counts);
    Py_VISIT(d->key);
    return 0;
}

int draw_clear(PyObject* self) {
    auto* d = reinterpret_cast<DrawObject*>(self);
    Py_CLEAR(d->dict);
    Py_CLEAR(d->numpys);
    Py_CLEAR(d->otherwise);
    Py_CLEAR(d->counts);
    Py_CLEAR(d->key);
    return 0;
}

void draw_dealloc(PyObject* self) {
    PyObject_GC_UnTrack(self);
    draw_clear(self);
    Py_TYPE(self)->tp_free(self);
}

PyObject* draw_repr(PyObject* self) {
    return PyUnicode_FromFormat("<gpupy draw %R>", reinterpret_cast<DrawObject*>(self)->key);
}

PyTypeObject draw_type = [] {
    PyTypeObject t{};
    Py_SET_REFCNT(reinterpret_cast<PyObject*>(&t), 1);
    t.tp_name = "gpupy._core.random_draw";
    t.tp_basicsize = sizeof(DrawObject);
    t.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR;
    t.tp_doc = "A draw of gpupy.random: NumPy's own call for one number, the package's for the rest.";
    t.tp_vectorcall_offset = offsetof(DrawObject, vectorcall);
    t.tp_dictoffset = offsetof(DrawObject, dict);
    t.tp_call = PyVectorcall_Call;
    t.tp_descr_get = draw_get;
    t.tp_traverse = draw_traverse;
    t.tp_clear = draw_clear;
    t.tp_dealloc = draw_dealloc;
    t.tp_repr = draw_repr;
    t.tp_methods = function_object::methods;  // pickled by reference: gpupy.random.<qualname>
    t.tp_getset = function_object::getset;
    return t;
}();

}  // namespace

void register_random_draws(py::module_& m) {
    if (PyType_Ready(&draw_type) < 0) throw py::error_already_set();
    // random_draw(numpys, otherwise, size_at, counts, key, method): see DrawObject.
    m.def(
        "random_draw",
        [](py::object numpys, py::object otherwise, py::object size_at, py::dict counts, py::str key, bool method) {
            auto* d = PyObject_GC_New(DrawObject, &draw_type);
            if (!d) throw py::error_already_set();
            d->vectorcall = draw_call;
            d->dict = nullptr;
            d->numpys = numpys.release().ptr();
            d->otherwise = otherwise.release().ptr();
            d->counts = counts.release().ptr();
            d->key = key.release().ptr();
            d->size_at = size_at.is_none() ? -1 : py::cast<Py_ssize_t>(size_at);
            d->method = method;
            PyObject_GC_Track(reinterpret_cast<PyObject*>(d));
            return py::reinterpret_steal<py::object>(reinterpret_cast<PyObject*>(d));
        },
        py::arg("numpys"), py::arg("otherwise"), py::arg("size_at"), py::arg("counts"), py::arg("key"),
        py::arg("method"));
    // The guard, for the package's own calls of NumPy's draws (an array of
    // draws handed over: its inner calls are not counted either).
    m.def("enter_draw", [] { ++t_drawing; });
    m.def("leave_draw", [] { --t_drawing; });
}

}  // namespace gpupy
