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
#include <vector>

#include "bindings/blas_threads.hpp"
#include "bindings/numpy_api.hpp"
#include "bindings/py_array.hpp"
#include "core/execution/evaluator.hpp"
#include "core/graph/node_factory.hpp"
#include "core/memory/host_transfer.hpp"
#include "core/runtime/runtime.hpp"
#include "core/runtime/stats.hpp"

namespace gpupy {

namespace {

// The product of two float vectors by the dtype's dot function, as a
// NumPy scalar; empty if the dtype has none. numpy.dot first copies a
// vector whose stride BLAS does not take (negative, or zero over several
// elements) -- np.dot(np.flip(r[:k]), y[:k]) in a recurrence -- and so
// does `copy_bad_strides` here, so the dot function sees what it sees in
// NumPy; numpy.matmul passes the strides as they are.
py::object vector_dot(const GpuArray& x, const GpuArray& y, bool copy_bad_strides) {
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
    const int64_t n = x.geom.shape[0];
    std::vector<char> copies[2];
    char* data[2];
    npy_intp stride[2];
    const GpuArray* v[2] = {&x, &y};
    for (int i = 0; i < 2; ++i) {
        data[i] = v[i]->node()->host_data() + v[i]->geom.offset * item;
        stride[i] = v[i]->geom.strides[0] * item;
        if (copy_bad_strides && (stride[i] < 0 || (stride[i] == 0 && n > 1))) {
            copies[i].resize(static_cast<size_t>(n * item));
            gather_from_host(v[i]->node(), v[i]->geom, 0, n, copies[i].data());
            data[i] = copies[i].data();
            stride[i] = item;
        }
    }
    alignas(16) char value[16] = {0};
    dot(data[0], stride[0], data[1], stride[1], value, n, nullptr);
    PyObject* s = PyArray_Scalar(value, descr, nullptr);
    Py_DECREF(descr);
    if (!s) throw py::error_already_set();
    return py::reinterpret_steal<py::object>(s);
}

// numpy.matmul (or numpy.dot) of x and y, out= the result's host memory;
// BLAS's worker threads only for a product long enough to pay for them
// (CostModel::product_threads_pay).
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
    const double flops = 2.0 * static_cast<double>(shape_size(shape)) * static_cast<double>(y.geom.shape[0]);
    const double bytes = static_cast<double>((x.size() + y.size()) * dtype_itemsize(x.dtype()));
    BlasOnCallingThread alone(flops, bytes);
    PyObject* r = PyObject_Vectorcall(dot ? numpy_dot : matmul, argv, 2, out_name);
    if (!r) throw py::error_already_set();
    Py_DECREF(r);  // dst itself
    return wrap_result(GpuArray::of(std::move(node)));
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
    if (vectors && !dtype_is_float(x.dtype())) return py::object();  // integer vectors: the Python path
    py::object r = vectors ? vector_dot(x, y, dot) : matrix_product(x, y, dot);
    if (r) ++(dot ? stats().host_dots : stats().host_matmuls);
    return r;
}

void register_products(py::module_& m) {
    m.def("blas_threads_settable", &blas_threads_settable,
          "Whether NumPy's BLAS lets a product run on the calling thread alone (stats' products_on_calling_thread).");
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
