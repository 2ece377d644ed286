// Matrix products of two gpupy arrays placed on the host, without the
// package's Python: the `@` operator's slot and the common call of
// gpupy.matmul / gpupy.dot. A loop over rows (`A[i, :j] @ A[:j, j]` in an
// LU or Cholesky factorisation) does one small product per step, where
// the Python path (the operator method, the function, placement, the call
// through host_call) cost four times NumPy's whole product.
//
// NumPy computes the product, so its values are NumPy's: for two vectors
// the dtype's dot function, which is what NumPy's matmul and dot run for
// that case themselves (BLAS's dot where the strides allow); otherwise
// numpy.matmul writing into the new array's host memory. Anything else --
// mixed dtypes, other dimensions, mismatched lengths (NumPy's error
// message), a device placement -- is the Python path's.
#include "bindings/numpy_api.hpp"
#include "bindings/py_array.hpp"
#include "core/execution/evaluator.hpp"
#include "core/graph/node_factory.hpp"
#include "core/runtime/runtime.hpp"
#include "core/runtime/stats.hpp"

namespace gpupy {

namespace {

// The product of two float vectors by the dtype's dot function, as a
// NumPy scalar; empty if the dtype has none.
py::object vector_dot(const GpuArray& x, const GpuArray& y) {
    const DType t = x.dtype();
    PyArray_Descr* descr = PyArray_DescrFromType(typenum_of(t));
    PyArray_DotFunc* dot = PyDataType_GetArrFuncs(descr)->dotfunc;
    if (!dot) {
        Py_DECREF(descr);
        return py::object();
    }
    ensure_host(x.node_view());
    ensure_host(y.node_view());
    const int item = dtype_itemsize(t);
    alignas(16) char value[16] = {0};
    dot(x.node()->host_data() + x.geom.offset * item, x.geom.strides[0] * item,
        y.node()->host_data() + y.geom.offset * item, y.geom.strides[0] * item, value, x.geom.shape[0], nullptr);
    PyObject* s = PyArray_Scalar(value, descr, nullptr);
    Py_DECREF(descr);
    if (!s) throw py::error_already_set();
    return py::reinterpret_steal<py::object>(s);
}

// numpy.matmul (or numpy.dot) of x and y, out= the result's host memory.
py::object matrix_product(const GpuArray& x, const GpuArray& y, bool dot) {
    static PyObject* const matmul = py::object(py::module_::import("numpy").attr("matmul")).release().ptr();
    static PyObject* const numpy_dot = py::object(py::module_::import("numpy").attr("dot")).release().ptr();
    static PyObject* const out_name = PyTuple_Pack(1, PyUnicode_InternFromString("out"));
    Dims shape;
    if (x.ndim() == 2) shape.push_back(x.geom.shape[0]);
    if (y.ndim() == 2) shape.push_back(y.geom.shape[1]);
    py::object hx = to_ndarray(x), hy = to_ndarray(y);
    NodeRef node = NodeFactory::array_uninitialized(x.dtype(), shape);
    py::object dst = host_ndarray(node.get(), identity_view(shape), true);
    PyObject* argv[] = {hx.ptr(), hy.ptr(), dst.ptr()};
    PyObject* r = PyObject_Vectorcall(dot ? numpy_dot : matmul, argv, 2, out_name);
    if (!r) throw py::error_already_set();
    Py_DECREF(r);  // dst itself
    return py::cast(GpuArray::of(std::move(node)));
}

}  // namespace

py::object host_product(py::handle a, py::handle b, bool dot) {
    if (!is_exact_gpuarray(a) || !is_exact_gpuarray(b) || !Runtime::get().products_on_host()) return py::object();
    const GpuArray& x = gpuarray_ref(a);
    const GpuArray& y = gpuarray_ref(b);
    const int nx = x.ndim(), ny = y.ndim();
    if (nx < 1 || nx > 2 || ny < 1 || ny > 2 || x.dtype() != y.dtype()) return py::object();
    if (x.geom.shape[nx - 1] != y.geom.shape[0]) return py::object();  // NumPy's error, from the Python path
    const bool vectors = nx == 1 && ny == 1;
    if (vectors) {
        // Integer vectors: the Python path. numpy.dot copies a vector with
        // a stride BLAS does not take (negative, zero) before its dot, so
        // the dot function sees other strides than here: the Python path.
        if (!dtype_is_float(x.dtype())) return py::object();
        if (dot && x.geom.shape[0] > 1 && (x.geom.strides[0] <= 0 || y.geom.strides[0] <= 0)) return py::object();
    }
    py::object r = vectors ? vector_dot(x, y) : matrix_product(x, y, dot);
    if (r) ++(dot ? stats().host_dots : stats().host_matmuls);
    return r;
}

void register_products(py::module_& m) {
    m.def(
        "host_product",
        [](py::handle a, py::handle b, bool dot) -> py::object {
            py::object r = host_product(a, b, dot);
            return r ? r : py::none();
        },
        "a @ b (or dot(a, b)) of two gpupy arrays in NumPy on their host values now, when products run on the "
        "host and this is the common case; None otherwise.");
}

}  // namespace gpupy
