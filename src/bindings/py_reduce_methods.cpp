// `x.sum()`, `x.prod()`, `x.max()`, `x.min()`, `x.all()` and `x.any()` with
// no arguments or one int axis -- the forms a loop uses (`while err.max() >
// tol`, `x.sum(axis=0)`, `if (row == pattern).all()`) -- as C methods
// straight into the core's reduction; `x.argmin()` and `x.argmax()` with no
// arguments, where the arg-reductions are placed on the host (products
// there: a CPU renderer), as one pass over the host values.
// Through the package's Python method, its function and its argument
// handling, such a call of 100 elements cost four times NumPy's. Any
// other argument, an empty array or a subclass goes to that Python
// method, kept as it was.
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "bindings/py_array.hpp"
#include "core/building/reductions.hpp"
#include "core/building/views.hpp"
#include "core/graph/node_factory.hpp"
#include "core/runtime/runtime.hpp"
#include "core/runtime/stats.hpp"

namespace gpupy {

namespace {

// The dtype of a method's result: NumPy's add/multiply accumulator (small
// integers widened), the input's, or bool (all, any); or the method is an
// arg-reduction (an int64 index).
enum class Result { Widened, Same, Bool, ArgMin, ArgMax };

struct ReduceMethod {
    const char* name;
    const char* fold;          // the NumPy ufunc folded
    Result result;
    PyObject* python = nullptr;  // the package's method
    OpCode op = GPUPY_OP_NONE;
    std::string doc{};         // the package's method's docstring, kept
};

ReduceMethod g_methods[] = {
    {"sum", "add", Result::Widened},
    {"prod", "multiply", Result::Widened},
    {"max", "maximum", Result::Same},
    {"min", "minimum", Result::Same},
    {"all", "logical_and", Result::Bool},
    {"any", "logical_or", Result::Bool},
    {"argmin", "minimum", Result::ArgMin},
    {"argmax", "maximum", Result::ArgMax},
};

int64_t g_chunk = 0;

// The dtype np.sum / np.prod give for dtype t with none asked for: the
// package's answer (gpupy._reductions._default_sum_dtype, which asks NumPy),
// asked once per dtype.
DType widened(DType t) {
    static DType known[GPUPY_NUM_DTYPES];
    static bool asked[GPUPY_NUM_DTYPES] = {};
    if (!asked[t]) {
        py::object answer = py::module_::import("gpupy._reductions").attr("_default_sum_dtype")(numpy_dtype(t));
        known[t] = dtype_from_object(answer);
        asked[t] = true;
    }
    return known[t];
}

// The one axis of `x.sum(1)` / `x.sum(axis=1)` (a Python int, not a bool),
// or null: no arguments at all reduce every axis; anything else is the
// package's to parse.
bool plain_call(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames, PyObject** axis) {
    const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    *axis = nullptr;
    if (nargs + nkw == 0) return true;
    if (nargs + nkw != 1) return false;
    if (nkw == 1 && PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), "axis") != 0) return false;
    if (!PyLong_CheckExact(args[0])) return false;
    *axis = args[0];
    return true;
}

// argmin/argmax of a whole array whose values are all in host memory
// (`argmin(abs(e - symbols))` per sample in a loop: one pass in C++, where
// NumPy's function and its dispatch cost several times the work): NumPy's
// answer -- the flat C-order index of the first extreme, of the first NaN
// where there is one -- as a 0-d int64 array; nullopt where they are not
// on the host.
std::optional<GpuArray> arg_extreme_on_host(const GpuArray& a, bool want_max) {
    const int64_t n = a.size();
    if (n == 0 || !values_on_host(a)) return std::nullopt;
    std::vector<char> scratch;
    const char* values = c_order_values(a, &scratch);
    const int64_t at = with_ctype<int64_t>(a.dtype(), [&](auto zero) -> int64_t {
        using T = decltype(zero);
        const T* v = reinterpret_cast<const T*>(values);
        int64_t best = 0;
        for (int64_t i = 0; i < n; ++i) {
            if constexpr (is_float_v<T>) {
                if (v[i] != v[i]) return i;  // NaN: NumPy's answer is the first one
            }
            if (want_max ? v[i] > v[best] : v[i] < v[best]) best = i;
        }
        return best;
    });
    NodeRef node = NodeFactory::array_uninitialized(GPUPY_INT64, Dims{});
    scalar_store(GPUPY_INT64, scalar_from_int(GPUPY_INT64, at), node->host_data());
    ++stats().direct_host_ops;
    return GpuArray::of(std::move(node));
}

// argmin/argmax of a whole array where the arg-reductions are placed on
// the host (with the products: a CPU renderer) and its values are there:
// the index found at once, counted as a host placement of NumPy's function
// (stats()); empty where the package decides (the device's arg-reduction,
// values not on the host).
std::optional<GpuArray> arg_extreme_now(const GpuArray& a, bool want_max) {
    if (!Runtime::get().products_on_host()) return std::nullopt;
    std::optional<GpuArray> found = arg_extreme_on_host(a, want_max);
    if (found) ++(want_max ? stats().host_argmaxes : stats().host_argmins);
    return found;
}

// The package's method, with self first.
PyObject* call_package_method(const ReduceMethod& m, PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                              PyObject* kwnames) {
    const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    std::vector<PyObject*> argv(static_cast<size_t>(1 + nargs + nkw));
    argv[0] = self;
    for (Py_ssize_t i = 0; i < nargs + nkw; ++i) argv[static_cast<size_t>(1 + i)] = args[i];
    return PyObject_Vectorcall(m.python, argv.data(), static_cast<size_t>(1 + nargs), kwnames);
}

template <int I>
PyObject* reduce_method(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    const ReduceMethod& m = g_methods[I];
    PyObject* axis = nullptr;
    if (m.result == Result::ArgMin || m.result == Result::ArgMax) {
        if (plain_call(args, nargs, kwnames, &axis) && !axis && is_exact_gpuarray(self) &&
            gpuarray_ref(self).size() > 0) {
            PyObject* found = guarded([&]() -> py::object {
                std::optional<GpuArray> r = arg_extreme_now(gpuarray_ref(self), m.result == Result::ArgMax);
                return r ? wrap_result(std::move(*r)) : py::object();  // empty: the package decides
            });
            if (found || PyErr_Occurred()) return found;
        }
        return call_package_method(m, self, args, nargs, kwnames);
    }
    // (A 0-d array with an axis is the package's: NumPy reduces it over
    // nothing for axis 0 or -1.)
    if (plain_call(args, nargs, kwnames, &axis) && is_exact_gpuarray(self) && gpuarray_ref(self).size() > 0 &&
        !(axis && gpuarray_ref(self).ndim() == 0)) {
        return guarded([&] {
            const GpuArray& a = gpuarray_ref(self);
            std::vector<int64_t> axes;
            if (axis) {
                const long long k = PyLong_AsLongLong(axis);
                if (k == -1 && PyErr_Occurred()) throw py::error_already_set();
                axes.push_back(normalize_axis(k, a.ndim()));  // NumPy's AxisError
            } else {
                axes.resize(static_cast<size_t>(a.ndim()));
                std::iota(axes.begin(), axes.end(), 0);
            }
            const DType t = m.result == Result::Widened ? widened(a.dtype())
                            : m.result == Result::Bool  ? GPUPY_BOOL
                                                        : a.dtype();
            return reduce_now_or_lazily(a, m.op, axes, t, g_chunk, true);
        });
    }
    return call_package_method(m, self, args, nargs, kwnames);
}

PyMethodDef g_defs[] = {
    {"sum", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(reduce_method<0>)), METH_FASTCALL | METH_KEYWORDS,
     nullptr},
    {"prod", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(reduce_method<1>)),
     METH_FASTCALL | METH_KEYWORDS, nullptr},
    {"max", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(reduce_method<2>)), METH_FASTCALL | METH_KEYWORDS,
     nullptr},
    {"min", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(reduce_method<3>)), METH_FASTCALL | METH_KEYWORDS,
     nullptr},
    {"all", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(reduce_method<4>)), METH_FASTCALL | METH_KEYWORDS,
     nullptr},
    {"any", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(reduce_method<5>)), METH_FASTCALL | METH_KEYWORDS,
     nullptr},
    {"argmin", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(reduce_method<6>)),
     METH_FASTCALL | METH_KEYWORDS, nullptr},
    {"argmax", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(reduce_method<7>)),
     METH_FASTCALL | METH_KEYWORDS, nullptr},
};

}  // namespace

void register_reduce_methods(py::module_& m) {
    // The package's argmin/argmax: the same at once, None where it decides.
    m.def(
        "arg_extreme_now",
        [](const GpuArray& a, bool want_max) -> py::object {
            if (std::optional<GpuArray> r = arg_extreme_now(a, want_max)) return wrap_result(std::move(*r));
            return py::none();
        },
        py::arg("array"), py::arg("want_max"));
}

void install_reduce_methods(PyTypeObject* gpuarray_type, int64_t chunk) {
    g_chunk = chunk;
    PyObject* type = reinterpret_cast<PyObject*>(gpuarray_type);
    for (size_t i = 0; i < sizeof(g_methods) / sizeof(g_methods[0]); ++i) {
        ReduceMethod& m = g_methods[i];
        PyObject* previous = PyObject_GetAttrString(type, m.name);
        if (!previous) throw py::error_already_set();
        if (PyObject_TypeCheck(previous, &PyMethodDescr_Type)) {  // already installed (a second call)
            Py_DECREF(previous);
            continue;
        }
        Py_XSETREF(m.python, previous);  // the package's method: a plain function, called with self first
        m.op = fold_op(m.fold);
        PyMethodDef& def = g_defs[i];
        py::object doc = py::reinterpret_borrow<py::object>(previous).attr("__doc__");
        m.doc = doc.is_none() ? std::string() : py::cast<std::string>(doc);
        def.ml_doc = m.doc.empty() ? nullptr : m.doc.c_str();
        PyObject* method = PyDescr_NewMethod(gpuarray_type, &def);
        if (!method) throw py::error_already_set();
        const int rc = PyObject_SetAttrString(type, m.name, method);
        Py_DECREF(method);
        if (rc < 0) throw py::error_already_set();
    }
}

}  // namespace gpupy
