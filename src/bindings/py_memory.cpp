// Which arrays share memory: numpy.shares_memory and may_share_memory for
// gpupy arrays, ndarrays and the two together.
//
// An array's storage is its Owner (core/graph/array.hpp): every view of it
// shares that storage, a copy has its own. So two gpupy arrays of one owner
// share memory where their element sets overlap, and arrays of two owners
// do not -- unless both read memory that exists outside gpupy's own
// bookkeeping (lent by an ndarray, or exported to one), whose addresses
// decide, as they decide for ndarrays. The overlap itself is NumPy's
// question about strided ranges, answered by NumPy on ndarrays made only
// to carry the addresses (their memory is never read).
#include "bindings/py_array.hpp"
#include "core/graph/node.hpp"

namespace gpupy {

namespace {

// Where an array's elements lie: a space (an owner's, or real memory:
// nullptr) and the addresses of a strided range in it.
struct Placement {
    const void* space = nullptr;
    py::object arr;  // an ndarray carrying the range's addresses
};

// Owner storage is numbered from this address in its own space: above 0,
// so that no range reaches below it (a view's offset is never negative).
constexpr uintptr_t kOwnerSpaceBase = uintptr_t{1} << 20;

py::object address_carrier(char* data, const GpuArray& a) {
    const int item = dtype_itemsize(a.dtype());
    const int nd = a.ndim();
    std::vector<npy_intp> dims(static_cast<size_t>(nd)), strides(static_cast<size_t>(nd));
    for (int d = 0; d < nd; ++d) {
        dims[static_cast<size_t>(d)] = a.geom.shape[static_cast<size_t>(d)];
        strides[static_cast<size_t>(d)] = a.geom.strides[static_cast<size_t>(d)] * item;
    }
    PyArray_Descr* descr = PyArray_DescrFromType(typenum_of(a.dtype()));
    PyObject* r = PyArray_NewFromDescr(&PyArray_Type, descr, nd, dims.data(), strides.data(), data, 0, nullptr);
    if (!r) throw py::error_already_set();
    return py::reinterpret_steal<py::object>(r);
}

// Memory that exists outside gpupy's bookkeeping: lent by an ndarray, or
// held by one through an export.
bool outside_memory(const Node* node) {
    return node->host() && (node->host()->lent() || node->host()->exported());
}

Placement placement(py::handle obj, const GpuArray* same_owner_as) {
    if (!is_gpuarray(obj)) {
        Placement p;
        p.arr = PyArray_Check(obj.ptr()) ? py::reinterpret_borrow<py::object>(obj) : py::object();
        return p;
    }
    const GpuArray& a = gpuarray_ref(obj);
    const int item = dtype_itemsize(a.dtype());
    if ((!same_owner_as || same_owner_as->owner != a.owner) && outside_memory(a.node()))
        return Placement{nullptr, address_carrier(a.node()->host_data() + a.geom.offset * item, a)};
    char* base = reinterpret_cast<char*>(kOwnerSpaceBase);
    return Placement{a.owner.get(), address_carrier(base + a.geom.offset * item, a)};
}

py::object overlap(py::handle x, py::handle y, py::object max_work, bool exact) {
    const GpuArray* gx = is_gpuarray(x) ? &gpuarray_ref(x) : nullptr;
    const GpuArray* gy = is_gpuarray(y) ? &gpuarray_ref(y) : nullptr;
    // Two views of one owner are compared in its space, even where its
    // memory is also outside: the same answer, without the addresses.
    const Placement px = placement(x, gy), py_ = placement(y, gx);
    if (!px.arr || !py_.arr || px.space != py_.space) return py::bool_(false);
    // (Never released: they may be used until the interpreter ends.)
    static py::handle shares = py::object(py::module_::import("numpy").attr("shares_memory")).release();
    static py::handle may_share = py::object(py::module_::import("numpy").attr("may_share_memory")).release();
    const py::handle f = exact ? shares : may_share;
    if (max_work.is_none()) return f(px.arr, py_.arr);
    return f(px.arr, py_.arr, max_work);
}

}  // namespace

void register_memory(py::module_& m) {
    m.def(
        "shares_memory", [](py::handle a, py::handle b, py::object max_work) { return overlap(a, b, max_work, true); },
        py::arg("a"), py::arg("b"), py::arg("max_work") = py::none());
    m.def(
        "may_share_memory",
        [](py::handle a, py::handle b, py::object max_work) { return overlap(a, b, max_work, false); }, py::arg("a"),
        py::arg("b"), py::arg("max_work") = py::none());
}

}  // namespace gpupy
