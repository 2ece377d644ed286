#include "bindings/py_operands.hpp"

#include "bindings/numpy_api.hpp"
#include "core/runtime/errors.hpp"

namespace gpupy {

namespace {

// Whether an object's type implements NumPy's ufunc override protocol
// (__array_ufunc__, NEP 13) itself, as pandas, xarray and dask types do:
// NumPy hands a ufunc of one to it (or, where it sets the protocol to None,
// refuses), and gpupy does as NumPy does.
bool overrides_ufuncs(PyObject* p) {
    static PyObject* const name = PyUnicode_InternFromString("__array_ufunc__");
    PyObject* own = PyObject_GetAttr(reinterpret_cast<PyObject*>(Py_TYPE(p)), name);
    if (!own) {
        PyErr_Clear();
        return false;
    }
    static PyObject* const ndarray_own = PyObject_GetAttr(reinterpret_cast<PyObject*>(&PyArray_Type), name);
    const bool foreign = own != ndarray_own;
    Py_DECREF(own);
    return foreign;
}

}  // namespace

Operand classify(py::handle obj, bool defer_foreign) {
    Operand o;
    o.obj = obj;
    PyObject* p = obj.ptr();
    if (is_gpuarray(obj)) {
        o.kind = Operand::Array;
        o.borrowed = &gpuarray_ref(obj);
        return o;
    }
    // NumPy scalars first: np.float64 subclasses float and np.bool_ does
    // not, but both are strong types under NEP 50, unlike Python numbers.
    const DType exact = exact_numpy_scalar(p, &o.constant_value);
    if (exact >= 0) {
        o.kind = Operand::Array;
        o.pending_constant = true;
        o.constant_dtype = exact;
        return o;
    }
    if (PyArray_IsScalar(p, Generic)) {
        PyArray_Descr* d = PyArray_DescrFromScalar(p);
        const DType t = dtype_from_numpy(d);
        if (t >= 0) {
            char buf[16] = {0};
            PyArray_ScalarAsCtype(p, buf);
            o.kind = Operand::Array;
            o.pending_constant = true;
            o.constant_dtype = t;
            o.constant_value = scalar_load(t, buf);
        } else {
            o.kind = Operand::Unsupported;
        }
        Py_DECREF(d);
        return o;
    }
    if (PyBool_Check(p)) {
        o.kind = Operand::Array;
        o.pending_constant = true;
        o.constant_dtype = GPUPY_BOOL;
        o.constant_value = scalar_from_int(GPUPY_BOOL, p == Py_True);
        return o;
    }
    if (PyLong_Check(p)) {
        o.kind = Operand::PyInt;
        return o;
    }
    if (PyFloat_Check(p)) {
        o.kind = Operand::PyFloat;
        return o;
    }
    if (PyComplex_Check(p)) {
        o.kind = Operand::Unsupported;
        return o;
    }
    py::object arr;
    if (PyArray_Check(p)) {
        arr = py::reinterpret_borrow<py::object>(obj);
    } else if (defer_foreign && overrides_ufuncs(p)) {
        o.kind = Operand::Foreign;
        return o;
    } else if (PyList_Check(p) || PyTuple_Check(p) || PyObject_HasAttrString(p, "__array__") ||
               PyObject_HasAttrString(p, "__array_interface__")) {
        arr = py::reinterpret_steal<py::object>(PyArray_FromAny(p, nullptr, 0, 0, 0, nullptr));
        if (!arr) throw py::error_already_set();
    } else {
        return o;  // Unknown: the caller returns NotImplemented
    }
    if (dtype_from_numpy(PyArray_DESCR(reinterpret_cast<PyArrayObject*>(arr.ptr()))) < 0) {
        o.kind = Operand::Unsupported;
        return o;
    }
    // An ndarray operand is read in place: a lazy expression built on it
    // takes a snapshot while anything else may still write it (NumPy
    // memory is viewed, not copied: lend_ndarray).
    o.kind = Operand::Array;
    o.converted = std::move(arr);
    o.pending_array = true;
    o.converted_dtype = dtype_from_numpy(PyArray_DESCR(reinterpret_cast<PyArrayObject*>(o.converted.ptr())));
    return o;
}

Dims Operand::shape() const {
    if (kind != Array || pending_constant) return {};
    if (pending_array) {
        PyArrayObject* a = reinterpret_cast<PyArrayObject*>(converted.ptr());
        return Dims(PyArray_DIMS(a), PyArray_DIMS(a) + PyArray_NDIM(a));
    }
    return arr().geom.shape;
}

gpupy_scalar weak_value(const Operand& o, DType t, bool wrap) {
    PyObject* p = o.obj.ptr();
    if (wrap && o.kind == Operand::PyInt && !dtype_is_float(t)) {
        int overflow = 0;
        const long long v = PyLong_AsLongLongAndOverflow(p, &overflow);
        if (!overflow) return scalar_from_int(t, v);
        // NumPy reads an int beyond int64 as a uint64 and wraps that; one
        // beyond uint64 does not convert at all.
        const unsigned long long u = overflow > 0 ? PyLong_AsUnsignedLongLong(p) : 0;
        if (overflow < 0 || (u == static_cast<unsigned long long>(-1) && PyErr_Occurred())) {
            PyErr_Clear();
            throw OverflowError("Python int too large to convert to C long");
        }
        return scalar_from_int(t, static_cast<long long>(u));
    }
    if (o.kind == Operand::PyFloat) return scalar_from_double(t, PyFloat_AS_DOUBLE(p));
    if (dtype_is_float(t)) {
        const double d = PyLong_AsDouble(p);
        if (d == -1.0 && PyErr_Occurred()) throw py::error_already_set();
        return scalar_from_double(t, d);
    }
    // Integer loop: the value must fit.
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(p, &overflow);
    bool fits;
    gpupy_scalar s{};
    if (overflow == 0) {
        if (t == GPUPY_UINT64) {
            fits = v >= 0;
            s.u = static_cast<uint64_t>(v);
        } else {
            const int bits = dtype_itemsize(t) * 8;
            if (dtype_is_unsigned_int(t)) fits = v >= 0 && (bits >= 64 || v < (1LL << bits));
            else fits = bits >= 64 || (v >= -(1LL << (bits - 1)) && v < (1LL << (bits - 1)));
            s = scalar_from_int(t, v);
        }
    } else if (overflow > 0 && t == GPUPY_UINT64) {
        const unsigned long long u = PyLong_AsUnsignedLongLong(p);
        fits = !(u == static_cast<unsigned long long>(-1) && PyErr_Occurred());
        PyErr_Clear();
        s.u = u;
    } else {
        // NumPy's words for an int beyond int64 (and beyond uint64).
        throw OverflowError("Python int too large to convert to C long");
    }
    if (!fits) {
        throw OverflowError("Python integer " + std::string(py::str(o.obj)) + " out of bounds for " + dtype_name(t));
    }
    return s;
}

}  // namespace gpupy
