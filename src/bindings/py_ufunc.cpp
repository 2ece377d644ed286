// The base type of gpupy's ufunc objects (gpupy/_ufuncs.py). Calling a
// ufunc -- np.sqrt(x), np.maximum(a, b) -- is the hottest call of a Python
// loop over elements after the operators; as a Python method it cost more
// than the op it built. Here CPython calls the type's C slot, which hands
// the plain form f(x) / f(x, y) straight to apply_ufunc; keywords, another
// number of arguments or operands apply_ufunc does not take go to the
// Python class's `_call`, which has every other case.
#include "bindings/py_array.hpp"
#include "core/graph/op_table.hpp"
#include "core/runtime/errors.hpp"

namespace gpupy {

namespace {

struct UfuncObject {
    PyObject_HEAD
    OpCode op;
    int arity;  // 0: no fast path (a ufunc gpupy has no op for)
};

int ufunc_init(PyObject* self, PyObject* args, PyObject* kwargs) {
    const char* name = nullptr;
    if (kwargs && PyDict_GET_SIZE(kwargs)) {
        PyErr_SetString(PyExc_TypeError, "ufunc_base takes no keyword arguments");
        return -1;
    }
    if (!PyArg_ParseTuple(args, "s", &name)) return -1;
    auto* u = reinterpret_cast<UfuncObject*>(self);
    u->op = op_from_numpy_name(name);
    u->arity = u->op == GPUPY_OP_NONE || op_is_internal(u->op) ? 0 : op_arity(u->op);
    return 0;
}

PyObject* ufunc_call(PyObject* self, PyObject* args, PyObject* kwargs) {
    auto* u = reinterpret_cast<UfuncObject*>(self);
    const Py_ssize_t n = PyTuple_GET_SIZE(args);
    if (u->arity && n == u->arity && (!kwargs || PyDict_GET_SIZE(kwargs) == 0)) {
        PyObject* r = guarded([&] {
            std::vector<py::handle> operands;
            operands.reserve(static_cast<size_t>(n));
            for (Py_ssize_t i = 0; i < n; ++i) operands.emplace_back(PyTuple_GET_ITEM(args, i));
            return apply_ufunc(u->op, operands, py::handle());
        });
        if (r != Py_NotImplemented) return r;  // a result, or an error set
        Py_DECREF(r);
    }
    static PyObject* const slow = PyUnicode_InternFromString("_call");
    PyObject* method = PyObject_GetAttr(self, slow);
    if (!method) return nullptr;
    PyObject* r = PyObject_Call(method, args, kwargs);
    Py_DECREF(method);
    return r;
}

PyTypeObject ufunc_base_type = [] {
    PyTypeObject t{};  // every slot empty but those set below
    Py_SET_REFCNT(reinterpret_cast<PyObject*>(&t), 1);  // as PyVarObject_HEAD_INIT: a static type's own reference
    t.tp_name = "gpupy._core.ufunc_base";
    t.tp_basicsize = sizeof(UfuncObject);
    t.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE;
    t.tp_doc = "The C part of gpupy's ufunc objects: their call.";
    t.tp_new = PyType_GenericNew;
    t.tp_init = ufunc_init;
    t.tp_call = ufunc_call;
    return t;
}();

}  // namespace

void register_ufunc_base(py::module_& m) {
    if (PyType_Ready(&ufunc_base_type) < 0) throw py::error_already_set();
    Py_INCREF(&ufunc_base_type);
    m.add_object("ufunc_base", py::handle(reinterpret_cast<PyObject*>(&ufunc_base_type)));
}

}  // namespace gpupy
