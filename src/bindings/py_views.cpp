// Python keys and shapes as the core's views take them: a basic index
// parsed into IndexItems (core/building/views.hpp), a shape tuple into Dims.
#include <algorithm>

#include "core/runtime/errors.hpp"
#include "bindings/numpy_api.hpp"
#include "bindings/py_array.hpp"

namespace gpupy {

namespace {

enum class KeyKind { Integer, Slice, Ellipsis, NewAxis, Advanced };

// The value of an integer key. A Python int past int64 is NumPy's "not a
// valid index" IndexError; a NumPy unsigned scalar past it is NumPy's
// OverflowError. No attribute lookups: `a[i]` in a loop is hot.
int64_t integer_key(PyObject* o) {
    PyObject* i = PyLong_Check(o) ? (Py_INCREF(o), o) : PyNumber_Index(o);
    if (!i) throw py::error_already_set();
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(i, &overflow);
    Py_DECREF(i);
    if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
    if (overflow) {
        if (PyLong_Check(o)) {
            throw IndexError("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer or "
                             "boolean arrays are valid indices");
        }
        throw OverflowError("Python int too large to convert to C long");
    }
    return v;
}

KeyKind key_kind(py::handle item, int64_t* value) {
    PyObject* o = item.ptr();
    if (PyLong_CheckExact(o)) {
        *value = integer_key(o);
        return KeyKind::Integer;
    }
    if (o == Py_None) return KeyKind::NewAxis;
    if (o == Py_Ellipsis) return KeyKind::Ellipsis;
    if (PySlice_Check(o)) return KeyKind::Slice;
    if (PyBool_Check(o) || PyArray_IsScalar(o, Bool)) return KeyKind::Advanced;
    if (PyLong_Check(o) || PyArray_IsScalar(o, Integer)) {
        *value = integer_key(o);
        return KeyKind::Integer;
    }
    if (PyArray_Check(o)) {
        PyArrayObject* a = reinterpret_cast<PyArrayObject*>(o);
        if (PyArray_NDIM(a) == 0 && PyArray_ISINTEGER(a)) {
            *value = integer_key(o);
            return KeyKind::Integer;
        }
        return KeyKind::Advanced;
    }
    if (Py_TYPE(o)->tp_as_number && Py_TYPE(o)->tp_as_number->nb_index && !PySequence_Check(o)) {
        *value = integer_key(o);
        return KeyKind::Integer;
    }
    return KeyKind::Advanced;
}

}  // namespace

bool basic_index(const GpuArray& a, py::handle key, ViewGeometry* out, bool* scalar_result) {
    // Read straight from the key (`A[i, j]` runs this per element: a
    // vector of its items cost more than parsing them).
    PyObject* k = key.ptr();
    const bool tuple = PyTuple_Check(k);
    const size_t n = tuple ? static_cast<size_t>(PyTuple_GET_SIZE(k)) : 1;
    std::vector<IndexItem> items(n);
    for (size_t i = 0; i < n; ++i) {
        IndexItem& it = items[i];
        py::handle item = tuple ? PyTuple_GET_ITEM(k, static_cast<Py_ssize_t>(i)) : k;
        switch (key_kind(item, &it.value)) {
        case KeyKind::Advanced: return false;
        case KeyKind::Integer: it.kind = IndexItem::Integer; break;
        case KeyKind::Ellipsis: it.kind = IndexItem::Ellipsis; break;
        case KeyKind::NewAxis: it.kind = IndexItem::NewAxis; break;
        case KeyKind::Slice: {
            it.kind = IndexItem::Slice;
            Py_ssize_t start, stop, step;
            if (PySlice_Unpack(item.ptr(), &start, &stop, &step) < 0) throw py::error_already_set();
            it.start = start;
            it.stop = stop;
            it.step = step;
            break;
        }
        }
    }
    *out = index_view(a, items, scalar_result);
    return true;
}

bool element_key(const GpuArray& a, py::handle key, int64_t* offset) {
    PyObject* k = key.ptr();
    const bool tuple = PyTuple_CheckExact(k);
    const Py_ssize_t n = tuple ? PyTuple_GET_SIZE(k) : 1;
    if (n == 0 || n != a.ndim()) return false;
    PyObject* const* items = tuple ? &PyTuple_GET_ITEM(k, 0) : &k;
    for (Py_ssize_t d = 0; d < n; ++d)
        if (!PyLong_CheckExact(items[d])) return false;
    int64_t at = a.geom.offset;
    for (Py_ssize_t d = 0; d < n; ++d) {
        const size_t i = static_cast<size_t>(d);
        at += checked_index(integer_key(items[d]), a.geom.shape[i], static_cast<int>(d)) * a.geom.strides[i];
    }
    *offset = at;
    return true;
}

int64_t index_value(py::handle obj) {
    PyObject* i = PyNumber_Index(obj.ptr());
    if (!i) throw py::error_already_set();
    const long long v = PyLong_AsLongLong(i);
    Py_DECREF(i);
    if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
    return v;
}

Dims shape_from_python(py::handle shape) {
    Dims out;
    PyObject* p = shape.ptr();
    if (PyTuple_Check(p)) {
        // The common spelling, first: no attribute lookups.
        const Py_ssize_t n = PyTuple_GET_SIZE(p);
        out.reserve(static_cast<size_t>(n));
        for (Py_ssize_t i = 0; i < n; ++i) out.push_back(index_value(PyTuple_GET_ITEM(p, i)));
        return out;
    }
    if (PyLong_Check(p) || PyArray_IsScalar(p, Integer) || (PyObject_HasAttrString(p, "__index__") && !PySequence_Check(p))) {
        out.push_back(index_value(shape));
        return out;
    }
    if (!PySequence_Check(p) && !PyObject_HasAttrString(p, "__iter__")) out.push_back(index_value(shape));
    else
        for (py::handle d : py::reinterpret_borrow<py::iterable>(shape)) out.push_back(index_value(d));
    return out;
}

}  // namespace gpupy
