// Views: basic indexing, reshape, transpose, broadcast_to. None of them
// copies or evaluates anything; they make a new (offset, shape, strides)
// over the same owner, with NumPy's rules and error messages.
#include <algorithm>

#include "core/runtime/errors.hpp"
#include "bindings/numpy_api.hpp"
#include "bindings/py_array.hpp"

namespace gpupy {

namespace {

enum class KeyKind { Integer, Slice, Ellipsis, NewAxis, Advanced };

KeyKind key_kind(py::handle item, int64_t* value) {
    PyObject* o = item.ptr();
    if (o == Py_None) return KeyKind::NewAxis;
    if (o == Py_Ellipsis) return KeyKind::Ellipsis;
    if (PySlice_Check(o)) return KeyKind::Slice;
    if (PyBool_Check(o) || PyArray_IsScalar(o, Bool)) return KeyKind::Advanced;
    if (PyLong_Check(o) || PyArray_IsScalar(o, Integer)) {
        *value = py::cast<int64_t>(py::reinterpret_borrow<py::object>(item).attr("__index__")());
        return KeyKind::Integer;
    }
    if (PyArray_Check(o)) {
        PyArrayObject* a = reinterpret_cast<PyArrayObject*>(o);
        if (PyArray_NDIM(a) == 0 && PyArray_ISINTEGER(a)) {
            *value = py::cast<int64_t>(py::reinterpret_borrow<py::object>(item).attr("__index__")());
            return KeyKind::Integer;
        }
        return KeyKind::Advanced;
    }
    if (PyObject_HasAttrString(o, "__index__") && !PySequence_Check(o)) {
        *value = py::cast<int64_t>(py::reinterpret_borrow<py::object>(item).attr("__index__")());
        return KeyKind::Integer;
    }
    return KeyKind::Advanced;
}

}  // namespace

int normalize_axis(int64_t axis, int ndim) {
    if (axis < -ndim || axis >= ndim) {
        throw AxisError("axis " + std::to_string(axis) + " is out of bounds for array of dimension " +
                        std::to_string(ndim));
    }
    return static_cast<int>(axis < 0 ? axis + ndim : axis);
}

bool basic_index(const GpuArray& a, py::handle key, ViewGeometry* out, bool* scalar_result) {
    std::vector<py::handle> items;
    if (PyTuple_Check(key.ptr())) {
        for (py::handle it : py::reinterpret_borrow<py::tuple>(key)) items.push_back(it);
    } else {
        items.push_back(key);
    }
    std::vector<KeyKind> kinds(items.size());
    std::vector<int64_t> ints(items.size(), 0);
    int consumed = 0, ellipses = 0;
    bool all_int = true;
    for (size_t i = 0; i < items.size(); ++i) {
        kinds[i] = key_kind(items[i], &ints[i]);
        switch (kinds[i]) {
        case KeyKind::Advanced: return false;
        case KeyKind::Integer: ++consumed; break;
        case KeyKind::Slice: ++consumed; all_int = false; break;
        case KeyKind::Ellipsis: ++ellipses; all_int = false; break;
        case KeyKind::NewAxis: all_int = false; break;
        }
    }
    const int nd = a.ndim();
    if (ellipses > 1) throw IndexError("an index can only have a single ellipsis ('...')");
    if (consumed > nd) {
        throw IndexError("too many indices for array: array is " + std::to_string(nd) + "-dimensional, but " +
                         std::to_string(consumed) + " were indexed");
    }
    ViewGeometry g;
    g.offset = a.geom.offset;
    int d = 0;
    for (size_t i = 0; i < items.size(); ++i) {
        switch (kinds[i]) {
        case KeyKind::NewAxis:
            g.shape.push_back(1);
            g.strides.push_back(0);
            break;
        case KeyKind::Ellipsis:
            for (int k = 0; k < nd - consumed; ++k, ++d) {
                g.shape.push_back(a.geom.shape[d]);
                g.strides.push_back(a.geom.strides[d]);
            }
            break;
        case KeyKind::Integer: {
            const int64_t n = a.geom.shape[d];
            int64_t idx = ints[i];
            if (idx < -n || idx >= n) {
                throw IndexError("index " + std::to_string(idx) + " is out of bounds for axis " + std::to_string(d) +
                                 " with size " + std::to_string(n));
            }
            if (idx < 0) idx += n;
            g.offset += idx * a.geom.strides[d];
            ++d;
            break;
        }
        case KeyKind::Slice: {
            Py_ssize_t start, stop, step;
            if (PySlice_Unpack(items[i].ptr(), &start, &stop, &step) < 0) throw py::error_already_set();
            const Py_ssize_t len = PySlice_AdjustIndices(static_cast<Py_ssize_t>(a.geom.shape[d]), &start, &stop, step);
            if (len > 0) g.offset += start * a.geom.strides[d];
            g.shape.push_back(len);
            g.strides.push_back(a.geom.strides[d] * step);
            ++d;
            break;
        }
        case KeyKind::Advanced: break;
        }
    }
    for (; d < nd; ++d) {
        g.shape.push_back(a.geom.shape[d]);
        g.strides.push_back(a.geom.strides[d]);
    }
    *scalar_result = all_int && consumed == nd;
    *out = std::move(g);
    return true;
}

namespace {

// operator.index(obj): TypeError "'x' object cannot be interpreted as an
// integer" for anything that is not an integer, as NumPy reports it.
int64_t index_value(py::handle obj) {
    PyObject* i = PyNumber_Index(obj.ptr());
    if (!i) throw py::error_already_set();
    const long long v = PyLong_AsLongLong(i);
    Py_DECREF(i);
    if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
    return v;
}

}  // namespace

Dims shape_from_python(py::handle shape) {
    Dims out;
    PyObject* p = shape.ptr();
    if (PyLong_Check(p) || PyArray_IsScalar(p, Integer) || (PyObject_HasAttrString(p, "__index__") && !PySequence_Check(p))) {
        out.push_back(index_value(shape));
        return out;
    }
    if (!PySequence_Check(p) && !PyObject_HasAttrString(p, "__iter__")) out.push_back(index_value(shape));
    else
        for (py::handle d : py::reinterpret_borrow<py::iterable>(shape)) out.push_back(index_value(d));
    return out;
}

GpuArray reshape(const GpuArray& a, Dims shape) {
    int unknown = -1;
    int64_t known = 1;
    for (size_t i = 0; i < shape.size(); ++i) {
        if (shape[i] == -1) {
            if (unknown >= 0) throw ValueError("can only specify one unknown dimension");
            unknown = static_cast<int>(i);
        } else if (shape[i] < 0) {
            throw ValueError("negative dimensions not allowed");
        } else {
            known *= shape[i];
        }
    }
    const int64_t size = a.size();
    if (unknown >= 0) {
        if (known == 0 || size % known != 0) {
            std::string s = "(";
            for (size_t i = 0; i < shape.size(); ++i) {
                if (i) s += ",";
                s += shape[i] == -1 ? "newaxis" : std::to_string(shape[i]);
            }
            if (shape.size() == 1) s += ",";
            throw ValueError("cannot reshape array of size " + std::to_string(size) + " into shape " + s + ")");
        }
        shape[unknown] = size / known;
    } else if (known != size) {
        throw ValueError("cannot reshape array of size " + std::to_string(size) + " into shape " + shape_str(shape));
    }
    Dims strides;
    if (reshape_strides(a.geom.shape, a.geom.strides, shape, &strides)) {
        ViewGeometry g{a.geom.offset, shape, strides};
        GpuArray r = a.view(std::move(g));
        r.writeable = a.writeable;
        return r;
    }
    // NumPy copies when no strided view can express the new shape.
    GpuArray c = lazy_copy(a);
    return c.view(ViewGeometry{0, shape, c_strides(shape)});
}

GpuArray transpose(const GpuArray& a, const std::vector<int>& axes) {
    const int nd = a.ndim();
    std::vector<int> perm;
    if (axes.empty()) {
        for (int i = nd - 1; i >= 0; --i) perm.push_back(i);
    } else {
        if (static_cast<int>(axes.size()) != nd) throw ValueError("axes don't match array");
        std::vector<bool> seen(nd, false);
        for (int ax : axes) {
            const int n = normalize_axis(ax, nd);
            if (seen[n]) throw ValueError("repeated axis in transpose");
            seen[n] = true;
            perm.push_back(n);
        }
    }
    ViewGeometry g;
    g.offset = a.geom.offset;
    for (int p : perm) {
        g.shape.push_back(a.geom.shape[p]);
        g.strides.push_back(a.geom.strides[p]);
    }
    GpuArray r = a.view(std::move(g));
    r.writeable = a.writeable;
    return r;
}

GpuArray broadcast_to(const GpuArray& a, const Dims& shape) {
    for (int64_t d : shape) {
        if (d < 0) throw ValueError("all elements of broadcast shape must be non-negative");
    }
    if (shape.size() < a.geom.shape.size())
        throw ValueError("input operand has more dimensions than allowed by the axis remapping");
    bool ok = true;
    for (size_t i = 0; ok && i < a.geom.shape.size(); ++i) {
        const int64_t have = a.geom.shape[i], want = shape[shape.size() - a.geom.shape.size() + i];
        ok = have == want || have == 1;
    }
    if (!ok) {
        throw ValueError("operands could not be broadcast together with remapped shapes [original->remapped]: " +
                         shape_str(a.geom.shape) + "  and requested shape " + shape_str(shape));
    }
    ViewGeometry g{a.geom.offset, shape, broadcast_strides(a.geom.shape, a.geom.strides, shape)};
    GpuArray r = a.view(std::move(g));
    r.writeable = false;  // as NumPy: a broadcast view repeats elements
    return r;
}

}  // namespace gpupy
