// The module's functions that make, copy or view arrays for the package
// (asarray's and full's helpers, memory orders, explicit views), apart
// from the array type itself (py_array.cpp).
#include "bindings/numpy_api.hpp"
#include "bindings/py_array.hpp"
#include "core/building/elementwise.hpp"
#include "core/building/writes.hpp"
#include "core/graph/memory_order.hpp"
#include "core/graph/node_factory.hpp"
#include "core/memory/host_memory.hpp"
#include "core/runtime/errors.hpp"

namespace gpupy {

void register_array_functions(py::module_& m) {
    m.def("write_on_host", [](const GpuArray& a, py::handle key, py::handle value) { write_on_host(a, key, value); });
    // Bytes received from another process (gpupy._convert.from_pickle).
    m.def("adopt_ndarray", [](py::handle arr) { return lend_ndarray(arr, Lending::Received); });
    // The view of `a` with its axes in memory order (order_of: by the
    // size of their steps; an axis stepping back keeps its direction, as
    // in NumPy's "K" order), and whether one steps back: ravel and flatten
    // with order="K".
    m.def("memory_view", [](const GpuArray& a) {
        bool back = false;
        for (size_t d = 0; d < a.geom.shape.size(); ++d) back = back || (a.geom.strides[d] < 0 && a.geom.shape[d] > 1);
        GpuArray v = a.view(permuted(a.geom, order_of(a.geom)));
        return py::make_tuple(py::cast(std::move(v)), back);
    });
    // The axes of a GpuArray's view from the slowest in memory to the
    // fastest (memory_order.hpp's order_of, listed in full), and those of
    // a new array NumPy lays out "like" it with order= "C", "F", "A", "K".
    auto listed = [](const MemoryOrder& order, int ndim) {
        py::list axes;
        for (int d = 0; d < ndim; ++d) axes.append(order.empty() ? d : order[static_cast<size_t>(d)]);
        return axes;
    };
    m.def("order_of", [listed](const GpuArray& a) { return listed(order_of(a.geom), a.ndim()); });
    m.def("layout_order",
          [listed](const GpuArray& a, py::handle order) { return listed(requested_order(a, order), a.ndim()); });
    // Whether a GpuArray is laid out as order= asks ("C", "F", "A", "K").
    m.def("in_order", [](const GpuArray& a, py::handle order) { return in_requested_order(a, order); });
    // A copy of an ndarray in its memory order (numpy.array's copy).
    m.def("copy_from_numpy", [](py::handle arr) {
        if (!PyArray_Check(arr.ptr())) throw TypeError("expected an ndarray");
        return copy_of_ndarray(arr);
    });
    m.def("array_from_numpy", [](py::handle arr) {
        GpuArray a;
        if (!as_gpuarray(arr, &a)) throw TypeError("cannot convert to a gpupy array");
        return a;
    });
    m.def("astype", [](const GpuArray& a, py::handle dtype) {
        const DType t = dtype_from_object(dtype);
        if (t < 0) throw TypeError("gpupy cannot hold dtype " + std::string(py::str(dtype)));
        return astype(a, t);
    });
    m.def("full", [](py::handle shape, py::handle value, py::handle dtype) {
        const DType t = dtype_from_object(dtype);
        if (t < 0) throw TypeError("gpupy cannot hold dtype " + std::string(py::str(dtype)));
        const Dims s = shape_from_python(shape);
        for (int64_t d : s) {
            if (d < 0) throw ValueError("negative dimensions are not allowed");
        }
        check_host_allocation(s, dtype_itemsize(t), dtype_name(t));
        return filled(s, t, scalar_from_python(value, t));
    });
    m.def("allocation_size_text", [](uint64_t bytes) { return allocation_size_text(bytes); });
    m.def("index_array", [](py::handle shape, int axis, py::handle dtype) {
        const DType t = dtype_from_object(dtype);
        if (t < 0) throw TypeError("gpupy cannot hold dtype " + std::string(py::str(dtype)));
        const Dims s = shape_from_python(shape);
        for (int64_t d : s) {
            if (d < 0) throw ValueError("negative dimensions are not allowed");
        }
        const int a = normalize_axis(axis, static_cast<int>(s.size()));
        check_host_allocation(s, dtype_itemsize(t), dtype_name(t));
        return GpuArray::of(NodeFactory::index(t, s, a));
    });
    m.def("view_as", [](const GpuArray& a, int64_t offset, py::handle shape, py::handle strides) {
        // A view with explicit element geometry (used by the package for
        // view-only functions); validated against the owner.
        ViewGeometry g{offset, shape_from_python(shape), shape_from_python(strides)};
        if (g.shape.size() != g.strides.size()) throw ValueError("shape and strides differ in length");
        if (g.size() > 0) {
            const Span s = view_span(g, 0, g.size());
            if (s.lo < 0 || s.hi >= a.owner->node->size()) throw ValueError("view outside its array");
        }
        GpuArray r = a.view(std::move(g));
        return r;
    });
}

}  // namespace gpupy
