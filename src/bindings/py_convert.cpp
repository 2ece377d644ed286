// Conversions between NumPy objects and the core: dtypes, ndarrays that
// become ARRAY nodes, host data handed back as ndarrays and scalars.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>

#include "core/graph/host_state.hpp"
#include "core/memory/host_transfer.hpp"
#include "core/graph/memory_order.hpp"
#include "core/graph/node_factory.hpp"
#include "core/building/export_watch.hpp"
#include "core/building/writes.hpp"
#include "core/runtime/errors.hpp"
#include "core/execution/evaluator.hpp"
#include "bindings/blas_threads.hpp"
#include "bindings/numpy_api.hpp"
#include "bindings/py_array.hpp"

namespace gpupy {

DType dtype_from_numpy(PyArray_Descr* d) {
    if (!d || PyDataType_HASFIELDS(d) || PyDataType_HASSUBARRAY(d)) return -1;
    if (d->byteorder == '>') return -1;  // non-native byte order
    const npy_intp size = PyDataType_ELSIZE(d);
    switch (d->kind) {
    case 'b': return size == 1 ? GPUPY_BOOL : -1;
    case 'i':
        switch (size) {
        case 1: return GPUPY_INT8;
        case 2: return GPUPY_INT16;
        case 4: return GPUPY_INT32;
        case 8: return GPUPY_INT64;
        }
        return -1;
    case 'u':
        switch (size) {
        case 1: return GPUPY_UINT8;
        case 2: return GPUPY_UINT16;
        case 4: return GPUPY_UINT32;
        case 8: return GPUPY_UINT64;
        }
        return -1;
    case 'f':
        switch (size) {
        case 2: return GPUPY_FLOAT16;
        case 4: return GPUPY_FLOAT32;
        case 8: return GPUPY_FLOAT64;
        }
        return -1;
    }
    return -1;
}

DType dtype_from_object(py::handle obj) {
    PyArray_Descr* d = nullptr;
    if (!PyArray_DescrConverter(obj.ptr(), &d)) throw py::error_already_set();
    DType t = dtype_from_numpy(d);
    Py_XDECREF(d);
    return t;
}

py::object numpy_dtype(DType t) {
    static py::object cache[GPUPY_NUM_DTYPES];
    if (!cache[t]) cache[t] = py::module_::import("numpy").attr("dtype")(dtype_name(t));
    return cache[t];
}

int typenum_of(DType t) {
    switch (t) {
    case GPUPY_BOOL: return NPY_BOOL;
    case GPUPY_INT8: return NPY_INT8;
    case GPUPY_UINT8: return NPY_UINT8;
    case GPUPY_INT16: return NPY_INT16;
    case GPUPY_UINT16: return NPY_UINT16;
    case GPUPY_INT32: return NPY_INT32;
    case GPUPY_UINT32: return NPY_UINT32;
    case GPUPY_INT64: return NPY_INT64;
    case GPUPY_UINT64: return NPY_UINT64;
    case GPUPY_FLOAT32: return NPY_FLOAT32;
    case GPUPY_FLOAT64: return NPY_FLOAT64;
    case GPUPY_FLOAT16: return NPY_FLOAT16;
    }
    return NPY_NOTYPE;
}

namespace {

void release_host_capsule(PyObject* capsule) {
    delete static_cast<std::shared_ptr<HostBuffer>*>(PyCapsule_GetPointer(capsule, "gpupy.HostBuffer"));
}

// The base of an exported ndarray: its end ends the export.
void release_export_capsule(PyObject* capsule) {
    auto* keep = static_cast<std::shared_ptr<HostBuffer>*>(PyCapsule_GetPointer(capsule, "gpupy.HostBuffer"));
    if ((*keep)->drop_export()) export_ended(*keep);
    delete keep;
}

// An ndarray viewing a node's host bytes with the given geometry, kept
// alive (and, for an export, counted) by a capsule as its base.
py::object ndarray_over(Node* node, const ViewGeometry& g, bool writeable, bool is_export) {
    const int item = dtype_itemsize(node->dtype());
    const int nd = static_cast<int>(g.shape.size());
    if (nd > NPY_MAXDIMS) throw ValueError("too many dimensions for a NumPy array");
    npy_intp dims[NPY_MAXDIMS], strides[NPY_MAXDIMS];  // on the stack: this runs for every eager operand
    for (int d = 0; d < nd; ++d) {
        dims[d] = g.shape[d];
        strides[d] = g.strides[d] * item;
    }
    PyArray_Descr* descr = PyArray_DescrFromType(typenum_of(node->dtype()));
    char* data = node->host_data() + g.offset * item;
    int flags = NPY_ARRAY_ALIGNED | (writeable ? NPY_ARRAY_WRITEABLE : 0);
    PyObject* arr = PyArray_NewFromDescr(&PyArray_Type, descr, nd, dims, strides, data, flags, nullptr);
    if (!arr) throw py::error_already_set();
    // The ndarray keeps the host buffer alive, not the node (which may be
    // large and hold its operands).
    auto* keep = new std::shared_ptr<HostBuffer>(node->host());
    if (is_export) node->host()->add_export();
    PyObject* capsule = PyCapsule_New(keep, "gpupy.HostBuffer", is_export ? release_export_capsule : release_host_capsule);
    if (!capsule) {
        delete keep;
        Py_DECREF(arr);
        throw py::error_already_set();
    }
    if (PyArray_SetBaseObject(reinterpret_cast<PyArrayObject*>(arr), capsule) < 0) {
        Py_DECREF(arr);
        throw py::error_already_set();
    }
    return py::reinterpret_steal<py::object>(arr);
}

}  // namespace

namespace {

// `obj` as an ndarray of a dtype gpupy holds, or TypeError.
DType held_dtype(PyArrayObject* arr) {
    const DType t = dtype_from_numpy(PyArray_DESCR(arr));
    if (t < 0) throw TypeError("gpupy cannot hold dtype " + std::string(py::str(py::handle(reinterpret_cast<PyObject*>(PyArray_DESCR(arr))))));
    return t;
}

// The ndarray's dimensions and strides, in bytes, as a view geometry (for
// memory_order.hpp, which compares strides only).
ViewGeometry byte_geometry(PyArrayObject* arr) {
    const int nd = PyArray_NDIM(arr);
    return ViewGeometry{0, Dims(PyArray_DIMS(arr), PyArray_DIMS(arr) + nd), Dims(PyArray_STRIDES(arr), PyArray_STRIDES(arr) + nd)};
}

// Whether anything besides gpupy may write an ndarray's memory now: the
// ndarray or an array of its base chain is referenced from elsewhere (a
// variable, a view, a memoryview: each holds a reference), or the memory
// belongs to another kind of object -- a bytearray, a mapped file, another
// gpupy array's buffer -- whose owner may write it however it is held
// (bytes alone never change). `held` is the number of references gpupy
// itself holds to `arr`.
bool others_may_write(PyObject* arr, Py_ssize_t held) {
    if (Py_REFCNT(arr) > held) return true;
    PyObject* o = arr;
    while (PyArray_Check(o)) {
        PyObject* base = PyArray_BASE(reinterpret_cast<PyArrayObject*>(o));
        if (!base) return false;  // its own memory, reachable through it alone
        if (Py_REFCNT(base) > 1) return true;
        o = base;
    }
    return !PyBytes_CheckExact(o);
}

// An ndarray whose memory can be a node's storage as it is: aligned, in
// native byte order, a dtype gpupy holds, strides in whole elements, and
// not empty (an empty array has no memory to share).
bool lendable(PyArrayObject* arr) {
    if (!PyArray_ISALIGNED(arr) || !PyArray_ISNOTSWAPPED(arr) || PyArray_SIZE(arr) == 0) return false;
    if (dtype_from_numpy(PyArray_DESCR(arr)) < 0) return false;
    const npy_intp item = PyArray_ITEMSIZE(arr);
    for (int d = 0; d < PyArray_NDIM(arr); ++d) {
        if (PyArray_STRIDES(arr)[d] % item != 0) return false;
    }
    return true;
}

}  // namespace

namespace {

// order= as one upper-case letter of "CFAK" (None is "K"); ValueError else.
char order_letter(py::handle order) {
    const std::string o = order.is_none() ? "K" : std::string(py::str(order));
    if (o.size() == 1 && std::strchr("CFAKcfak", o[0])) return static_cast<char>(std::toupper(o[0]));
    throw ValueError("order must be one of 'C', 'F', 'A', or 'K' (got '" + o + "')");
}

}  // namespace

MemoryOrder requested_order(const GpuArray& a, py::handle order) {
    const char o = order_letter(order);
    if (o == 'K') return like_order(a.geom);
    // "A": Fortran order where `a` is Fortran-contiguous and not C-contiguous.
    const bool fortran = o == 'F' || (o == 'A' && is_f_contiguous(a.geom.shape, a.geom.strides) &&
                                      !is_c_contiguous(a.geom.shape, a.geom.strides));
    if (!fortran || a.ndim() < 2) return {};
    MemoryOrder reversed(static_cast<size_t>(a.ndim()));
    for (int d = 0; d < a.ndim(); ++d) reversed[static_cast<size_t>(d)] = a.ndim() - 1 - d;
    return reversed;
}

bool in_requested_order(const GpuArray& a, py::handle order) {
    const bool c = is_c_contiguous(a.geom.shape, a.geom.strides), f = is_f_contiguous(a.geom.shape, a.geom.strides);
    switch (order_letter(order)) {
    case 'C': return c;
    case 'F': return f;
    case 'A': return c || f;
    default: return true;  // "K": any layout
    }
}

bool lends_in_place(py::handle obj) {
    return PyArray_Check(obj.ptr()) && lendable(reinterpret_cast<PyArrayObject*>(obj.ptr()));
}

GpuArray copy_of_ndarray(py::handle obj) {
    PyArrayObject* arr = reinterpret_cast<PyArrayObject*>(obj.ptr());
    const DType t = held_dtype(arr);
    const int nd = PyArray_NDIM(arr);
    const Dims shape(PyArray_DIMS(arr), PyArray_DIMS(arr) + nd);
    const size_t nbytes = static_cast<size_t>(shape_size(shape) * dtype_itemsize(t));
    if (PyArray_IS_C_CONTIGUOUS(arr)) {
        NodeRef node = NodeFactory::array_uninitialized(t, shape);
        if (nbytes) copy_bytes(node->host_data(), static_cast<const char*>(PyArray_DATA(arr)), nbytes);
        return GpuArray::of(std::move(node));
    }
    // The copy keeps the ndarray's memory order (NumPy's order="K"): a
    // Fortran-ordered array stays Fortran-ordered, so the same reshapes
    // are views of it. NumPy does the strided copy into the node.
    const MemoryOrder order = like_order(byte_geometry(arr));
    NodeRef node = NodeFactory::array_uninitialized(t, permuted_shape(shape, order));
    py::object dst = host_ndarray(node.get(), ViewGeometry{0, shape, order_strides(shape, order)}, true);
    if (PyArray_CopyInto(reinterpret_cast<PyArrayObject*>(dst.ptr()), arr) < 0) throw py::error_already_set();
    return of_ordered(std::move(node), order);
}

GpuArray lend_ndarray(py::handle obj, Lending how) {
    PyArrayObject* arr = reinterpret_cast<PyArrayObject*>(obj.ptr());
    if (!lendable(arr)) return copy_of_ndarray(obj);
    const DType t = dtype_from_numpy(PyArray_DESCR(arr));
    const int nd = PyArray_NDIM(arr);
    const npy_intp item = PyArray_ITEMSIZE(arr);
    // The memory the ndarray's elements span, from its lowest address.
    char* const data = static_cast<char*>(PyArray_DATA(arr));
    char* lo = data;
    char* hi = data;
    for (int d = 0; d < nd; ++d) {
        const npy_intp reach = (PyArray_DIMS(arr)[d] - 1) * PyArray_STRIDES(arr)[d];
        (reach < 0 ? lo : hi) += reach;
    }
    const int64_t span = (hi - lo) / item + 1;
    // The ndarray stays alive as long as the buffer; its reference is given
    // back with the GIL held, whichever thread drops the buffer last.
    PyObject* owner = obj.ptr();
    Py_INCREF(owner);
    auto release = [owner] {
        if (!Py_IsInitialized()) return;  // at exit: the process's memory goes with it
        PyGILState_STATE state = PyGILState_Ensure();
        Py_DECREF(owner);
        PyGILState_Release(state);
    };
    std::function<bool()> shared;
    if (how == Lending::Shared) shared = [owner] { return others_may_write(owner, 1); };
    const bool read_only = !PyArray_ISWRITEABLE(arr);
    auto buf = std::make_shared<HostBuffer>(lo, static_cast<size_t>(span * item), read_only, std::move(release),
                                            std::move(shared));
    const Dims shape(PyArray_DIMS(arr), PyArray_DIMS(arr) + nd);
    GpuArray a;
    if (PyArray_IS_C_CONTIGUOUS(arr)) {
        a.geom = identity_view(shape);
        a.owner = std::make_shared<Owner>(Owner{NodeFactory::array(t, shape, std::move(buf))});
    } else {
        // A strided ndarray: the node is the memory it spans, in elements,
        // and the array views it with the ndarray's own offset and strides.
        Dims strides(nd);
        for (int d = 0; d < nd; ++d) strides[d] = PyArray_STRIDES(arr)[d] / item;
        a.geom = ViewGeometry{(data - lo) / item, shape, std::move(strides)};
        a.owner = std::make_shared<Owner>(Owner{NodeFactory::array(t, Dims{span}, std::move(buf))});
    }
    // (The owner takes the node as it is: GpuArray::of would read lent
    // memory others may write through a snapshot.)
    a.writeable = how == Lending::Received || !read_only;
    return a;
}

bool values_on_host(const GpuArray& a) {
    const Node* x = a.node();
    return x->host() && view_evaluated(*x, a.geom, 0, a.size());
}

const char* c_order_values(const GpuArray& a, std::vector<char>* scratch) {
    const int64_t item = dtype_itemsize(a.dtype());
    if (is_c_contiguous(a.geom.shape, a.geom.strides)) return a.node()->host_data() + a.geom.offset * item;
    scratch->resize(static_cast<size_t>(a.size() * item));
    if (a.size()) gather_from_host(a.node(), a.geom, 0, a.size(), scratch->data());
    return scratch->data();
}

py::object host_values(const GpuArray& a) {
    if (!values_on_host(a)) return py::object();
    return host_ndarray(a.node(), a.geom, false);
}

GpuArray from_numpy_result(py::handle r) {
    // A large result NumPy has just made and nobody else holds (an eager
    // op's, a product's) is kept as it is: its bytes become the array's,
    // with no copy. (A small one is copied: the copy costs less than
    // keeping the ndarray alive beside the buffer.) Either way the array
    // keeps NumPy's memory order.
    constexpr npy_intp kAdoptBytes = 64 << 10;
    if (PyArray_CheckExact(r.ptr()) && Py_REFCNT(r.ptr()) == 1 &&
        PyArray_CHKFLAGS(reinterpret_cast<PyArrayObject*>(r.ptr()), NPY_ARRAY_OWNDATA | NPY_ARRAY_WRITEABLE) &&
        PyArray_NBYTES(reinterpret_cast<PyArrayObject*>(r.ptr())) >= kAdoptBytes) {
        return lend_ndarray(r, Lending::Sole);
    }
    gpupy_scalar value;
    if (const DType t = exact_numpy_scalar(r.ptr(), &value); t >= 0) {
        // A NumPy scalar (a small reduction's, `.all()`'s): its value into
        // a 0-d node, without the 0-d ndarray NumPy would make of it first.
        NodeRef node = NodeFactory::array_uninitialized(t, Dims{});
        scalar_store(t, value, node->host_data());
        return GpuArray::of(std::move(node));
    }
    py::object arr = py::reinterpret_steal<py::object>(PyArray_FromAny(r.ptr(), nullptr, 0, 0, 0, nullptr));
    if (!arr) throw py::error_already_set();
    return copy_of_ndarray(arr);
}

py::object host_call(py::handle func, py::tuple args) {
    const size_t n = args.size();
    for (size_t i = 0; i < n; ++i) {
        if (!is_exact_gpuarray(args[i])) return py::none();
    }
    py::tuple hosts(n);
    double largest = 0, bytes = 0;
    for (size_t i = 0; i < n; ++i) {
        const GpuArray& a = gpuarray_ref(args[i]);
        hosts[i] = to_ndarray(a);
        largest = std::max(largest, static_cast<double>(a.size()));
        bytes += static_cast<double>(a.size() * dtype_itemsize(a.dtype()));
    }
    // BLAS/LAPACK work grows as n^3 for n x n operands: 2 * size^1.5 flops.
    BlasOnCallingThread alone(2 * largest * std::sqrt(largest), bytes);
    py::object result = py::reinterpret_steal<py::object>(PyObject_Call(func.ptr(), hosts.ptr(), nullptr));
    if (!result) throw py::error_already_set();
    if (PyArray_IsScalar(result.ptr(), Generic)) return py::make_tuple(true, result);  // as NumPy gives
    if (PyArray_CheckExact(result.ptr()) && !PyArray_BASE(reinterpret_cast<PyArrayObject*>(result.ptr())))
        return py::make_tuple(true, py::cast(from_numpy_result(result)));
    return py::make_tuple(false, result, hosts);
}

py::object host_ndarray(Node* node, const ViewGeometry& g, bool writeable) { return ndarray_over(node, g, writeable, false); }

py::object exported_ndarray(const GpuArray& a) {
    if (a.size() == 0) return to_ndarray(a);  // no memory to share
    // The bytes become the array's value, alone: evaluated, copied first if
    // a lazy expression or another array still needs the old values, and
    // dropped from the device. A read-only view's export is read-only, and
    // still its array's memory (NumPy's view of a broadcast shares it).
    if (!a.writeable && a.node()->host() && a.node()->host()->read_only()) {
        // Memory lent read-only (asarray of a read-only ndarray): nothing
        // writes it through gpupy, and it is its owner's to keep.
        ensure_host(a.node_view());
        return ndarray_over(a.node(), a.geom, false, true);
    }
    return ndarray_over(export_target(a), a.geom, a.writeable, true);
}

py::object to_ndarray(const GpuArray& a) {
    ensure_host(a.node_view());
    return host_ndarray(a.node(), a.geom, false);
}

py::object numpy_scalar(Node* node, int64_t idx) {
    PyArray_Descr* descr = PyArray_DescrFromType(typenum_of(node->dtype()));
    PyObject* s = PyArray_Scalar(node->host_data() + idx * dtype_itemsize(node->dtype()), descr, nullptr);
    Py_DECREF(descr);
    if (!s) throw py::error_already_set();
    return py::reinterpret_steal<py::object>(s);
}

namespace {

// `cell[key] = value` on a 0-d array of dtype t is NumPy's own conversion
// for an assignment through that kind of key (truncation, OverflowError
// for out-of-range Python ints, an unsafe cast from a NumPy integer
// scalar of another dtype, ...); the dtype's bare setitem differs from it
// for NumPy scalars.
gpupy_scalar converted_by_numpy(py::handle value, DType t, PyObject* key) {
    npy_intp none = 0;
    py::object cell = py::reinterpret_steal<py::object>(PyArray_SimpleNew(0, &none, typenum_of(t)));
    if (!cell) throw py::error_already_set();
    if (PyObject_SetItem(cell.ptr(), key, value.ptr()) < 0) throw py::error_already_set();
    return scalar_load(t, PyArray_DATA(reinterpret_cast<PyArrayObject*>(cell.ptr())));
}

}  // namespace

// A NumPy scalar of one of gpupy's dtypes is a PyObject_HEAD followed by
// its value (NumPy's Py<Type>ScalarObject layouts, all the same up to the
// value's type), so reading one of the expected type is a copy.
static_assert(offsetof(PyDoubleScalarObject, obval) == sizeof(PyObject) &&
              offsetof(PyFloatScalarObject, obval) == sizeof(PyObject) &&
              offsetof(PyLongLongScalarObject, obval) == sizeof(PyObject) &&
              offsetof(PyLongScalarObject, obval) == sizeof(PyObject) &&
              offsetof(PyIntScalarObject, obval) == sizeof(PyObject) &&
              offsetof(PyShortScalarObject, obval) == sizeof(PyObject) &&
              offsetof(PyByteScalarObject, obval) == sizeof(PyObject) &&
              offsetof(PyBoolScalarObject, obval) == sizeof(PyObject),
              "NumPy scalar layout");

DType exact_numpy_scalar(PyObject* v, gpupy_scalar* value) {
    static PyTypeObject* scalar_type[GPUPY_NUM_DTYPES] = {};
    if (!scalar_type[0]) {
        for (int t = 0; t < GPUPY_NUM_DTYPES; ++t)
            scalar_type[t] = reinterpret_cast<PyTypeObject*>(PyArray_TypeObjectFromType(typenum_of(t)));
    }
    for (int t = 0; t < GPUPY_NUM_DTYPES; ++t) {
        if (Py_TYPE(v) != scalar_type[t]) continue;
        alignas(8) char bits[8];
        std::memcpy(bits, reinterpret_cast<const char*>(v) + sizeof(PyObject), static_cast<size_t>(dtype_itemsize(t)));
        *value = scalar_load(t, bits);
        return t;
    }
    return -1;
}

bool plain_element(py::handle value, DType t, gpupy_scalar* out) {
    PyObject* v = value.ptr();
    const int typenum = typenum_of(t);
    if (PyFloat_CheckExact(v)) {
        if (typenum != NPY_FLOAT64) return false;
        out->f = PyFloat_AS_DOUBLE(v);
        return true;
    }
    if (PyLong_CheckExact(v)) {
        if (typenum != NPY_INT64 && typenum != NPY_FLOAT64) return false;
        int overflow = 0;
        const long long i = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (overflow || (i == -1 && PyErr_Occurred())) {
            PyErr_Clear();
            return false;
        }
        if (typenum == NPY_INT64) out->i = i;
        else if (i >= -(1LL << 53) && i <= (1LL << 53)) out->f = static_cast<double>(i);
        else return false;
        return true;
    }
    // A NumPy scalar of exactly dtype t (`A[i, j] += A[i, j - 1]` stores
    // one of the array's own dtype).
    gpupy_scalar exact;
    if (exact_numpy_scalar(v, &exact) != t) return false;
    *out = exact;
    return true;
}

gpupy_scalar scalar_from_python(py::handle value, DType t) {
    gpupy_scalar exact;
    if (plain_element(value, t, &exact)) return exact;  // the same value for a fill
    return converted_by_numpy(value, t, Py_Ellipsis);
}

gpupy_scalar element_from_python(py::handle value, DType t) {
    gpupy_scalar exact;
    if (plain_element(value, t, &exact)) return exact;
    py::tuple no_index;
    return converted_by_numpy(value, t, no_index.ptr());
}

}  // namespace gpupy
