// The base type of gpupy's ufunc objects (gpupy/_ufuncs.py). Calling a
// ufunc -- np.sqrt(x), np.maximum(a, b) -- is the hottest call of a Python
// loop over elements after the operators; as a Python method it cost more
// than the op it built. Here CPython calls the type's C slot, which hands
// the plain form f(x) / f(x, y) straight to apply_ufunc; keywords, another
// number of arguments or operands apply_ufunc does not take go to the
// Python class's `_call`, which has every other case.
//
// The same holds for NumPy's side of the protocol: `alpha * v` with alpha
// a NumPy scalar (an element read, `A[i, k]`) is NumPy's scalar operator,
// which calls numpy.multiply, which calls GpuArray.__array_ufunc__. That
// method's plain form is a C method here too; any other form goes to the
// Python method it replaced.
#include <unordered_map>

#include "bindings/numpy_api.hpp"
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

// --- GpuArray.__array_ufunc__ -------------------------------------------------

// gpupy's op for each NumPy ufunc it has one for (the op table's rows).
const std::unordered_map<PyObject*, OpCode>& ops_by_numpy_ufunc() {
    static auto* m = [] {
        auto* table = new std::unordered_map<PyObject*, OpCode>();
        for (const gpupy_op_row& row : gpupy_op_rows) {
            if (!op_is_internal(row.code)) table->emplace(numpy_ufunc(row.code).ptr(), row.code);
        }
        return table;
    }();
    return *m;
}

// An operand the fast path takes as NumPy would: anything else (a pandas
// or xarray object, which implements the protocol itself) goes to the
// Python method, which defers to it.
bool plain_operand(PyObject* p) {
    return is_gpuarray(p) || PyArray_Check(p) || PyArray_IsScalar(p, Generic) || PyFloat_Check(p) ||
           PyLong_Check(p) || PyComplex_Check(p);
}

PyObject*& python_array_ufunc() {
    static PyObject* f = nullptr;  // the package's method, kept for the process
    return f;
}

// __array_ufunc__(self, ufunc, method, *inputs, **kwargs)
PyObject* array_ufunc(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    if (!kwnames && nargs >= 3 && PyUnicode_Check(args[1]) && PyUnicode_CompareWithASCIIString(args[1], "__call__") == 0) {
        const auto& table = ops_by_numpy_ufunc();
        auto it = table.find(args[0]);
        const Py_ssize_t nin = nargs - 2;
        bool plain = it != table.end() && nin == op_arity(it->second);
        for (Py_ssize_t i = 0; plain && i < nin; ++i) plain = plain_operand(args[2 + i]);
        if (plain) {
            PyObject* r = guarded([&] {
                std::vector<py::handle> operands(args + 2, args + nargs);
                return apply_ufunc(it->second, operands, py::handle());
            });
            if (r != Py_NotImplemented) return r;  // a result, or an error set
            Py_DECREF(r);
        }
    }
    std::vector<PyObject*> with_self;
    const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    with_self.reserve(static_cast<size_t>(nargs + nkw + 1));
    with_self.push_back(self);
    with_self.insert(with_self.end(), args, args + nargs + nkw);
    return PyObject_Vectorcall(python_array_ufunc(), with_self.data(), static_cast<size_t>(nargs + 1), kwnames);
}

PyMethodDef array_ufunc_def = {"__array_ufunc__", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(array_ufunc)),
                               METH_FASTCALL | METH_KEYWORDS,
                               "NumPy's ufuncs on GpuArrays (np.sin(g), ndarray + g) stay gpupy's."};

}  // namespace

void install_array_ufunc(PyTypeObject* gpuarray_type) {
    PyObject* previous = PyObject_GetAttrString(reinterpret_cast<PyObject*>(gpuarray_type), "__array_ufunc__");
    if (!previous) throw py::error_already_set();
    if (PyObject_TypeCheck(previous, &PyMethodDescr_Type)) {  // already installed (a second call)
        Py_DECREF(previous);
        return;
    }
    python_array_ufunc() = previous;
    PyObject* method = PyDescr_NewMethod(gpuarray_type, &array_ufunc_def);
    if (!method) throw py::error_already_set();
    const int rc = PyObject_SetAttrString(reinterpret_cast<PyObject*>(gpuarray_type), "__array_ufunc__", method);
    Py_DECREF(method);
    if (rc < 0) throw py::error_already_set();
}

void register_ufunc_base(py::module_& m) {
    if (PyType_Ready(&ufunc_base_type) < 0) throw py::error_already_set();
    Py_INCREF(&ufunc_base_type);
    m.add_object("ufunc_base", py::handle(reinterpret_cast<PyObject*>(&ufunc_base_type)));
}

}  // namespace gpupy
