// The Python-facing GpuArray: a view (owner, offset, shape, strides) of an
// array whose current value is the owner's node (thesis 4.1).
#pragma once

#include "bindings/numpy_api.hpp"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <memory>
#include <vector>

#include "core/building/views.hpp"
#include "core/graph/array.hpp"

namespace gpupy {

namespace py = pybind11;

// --- the class (py_array.cpp) ----------------------------------------------------
// The Python object of a GpuArray holds the C++ value inline: making or
// dropping one is one allocation, with none of pybind11's instance
// registry, holder or type lookups (which cost a third of a slice).
struct GpuArrayObject {
    PyObject_HEAD
    GpuArray value;
    PyObject* weakrefs;
    // A 0-d result where NumPy gives a scalar (a reduction over every axis,
    // a ufunc of 0-d operands): immutable as a NumPy scalar is -- hashable
    // by value, no item assignment, in-place operators rebind -- and lazy
    // until a value is asked for (docs/ecosystem.md, "Scalars").
    bool scalar;
};

// Whether obj is a GpuArray (or subclass), and the GpuArray it holds.
bool is_gpuarray(py::handle obj);
bool is_exact_gpuarray(py::handle obj);  // not a subclass
inline GpuArray& gpuarray_mut(py::handle obj) { return reinterpret_cast<GpuArrayObject*>(obj.ptr())->value; }
inline const GpuArray& gpuarray_ref(py::handle obj) { return gpuarray_mut(obj); }  // obj must pass is_gpuarray
// A new Python GpuArray holding `a`.
py::object wrap_gpuarray(GpuArray&& a);
// The same for a result NumPy would give as a scalar when it is 0-d (a
// ufunc's without out=, a reduction's, a vector product's).
py::object wrap_result(GpuArray&& a);
inline bool is_scalar_result(py::handle obj) { return reinterpret_cast<GpuArrayObject*>(obj.ptr())->scalar; }

// Runs f (returning a py::object) for a CPython slot: its result as a new
// reference, or null with the Python error set from a C++ or Python
// exception (pybind11's translators, as for bound functions).
template <class F>
PyObject* guarded(F&& f) {
    try {
        return f().release().ptr();
    } catch (py::error_already_set& e) {
        e.restore();
    } catch (...) {
        py::detail::try_translate_exceptions();
    }
    return nullptr;
}

// --- conversions (py_convert.cpp) ---------------------------------------------
// The gpupy dtype of a NumPy dtype, or -1 if gpupy cannot hold it.
DType dtype_from_numpy(PyArray_Descr* descr);
DType dtype_from_object(py::handle obj);  // anything np.dtype() accepts; -1 if unsupported
py::object numpy_dtype(DType t);          // np.dtype object
int typenum_of(DType t);                  // NumPy's type number (NPY_FLOAT32, ...)
// A new gpupy array holding a copy of `arr` (which must have a supported
// dtype), in the ndarray's own memory order (NumPy's copy with order="K").
GpuArray copy_of_ndarray(py::handle arr);
// How an ndarray's memory is lent to a gpupy array (lend_ndarray).
enum class Lending {
    // The caller's array: `gpupy.asarray(a)` is a view of a's memory, as
    // NumPy's asarray is a itself; writes either way are seen, and while
    // anything else holds a, lazy expressions read a snapshot of it.
    Shared,
    // A result NumPy has just made that nobody else holds: its memory
    // becomes the array's storage.
    Sole,
    // Bytes received from another process (unpickling): nobody else
    // writes them; read-only ones are copied at the first write.
    Received,
};
// A gpupy array over an ndarray's own memory, without a copy, where it can
// be a node's storage (aligned, native byte order, a dtype gpupy holds,
// strides in whole elements, not empty): the node is the memory the
// ndarray spans, viewed with its strides. Else a copy (copy_of_ndarray).
// A read-only ndarray makes a read-only array, except for received bytes.
GpuArray lend_ndarray(py::handle arr, Lending how);
// Whether lend_ndarray uses `obj`'s memory itself (an ndarray it can lend).
bool lends_in_place(py::handle obj);
// The memory order (core/graph/memory_order.hpp) NumPy gives a copy of `a`
// made with order= "C", "F", "A" or "K" (None: "K"); ValueError for others.
std::vector<int> requested_order(const GpuArray& a, py::handle order);
// Whether `a` is laid out so already (a copy=False request is `a` itself).
bool in_requested_order(const GpuArray& a, py::handle order);
// A read-only ndarray viewing the view's host data; evaluates first.
py::object to_ndarray(const GpuArray& a);
// An ndarray sharing a node's host buffer with the given geometry.
py::object host_ndarray(Node* node, const ViewGeometry& g, bool writeable);
// A writable ndarray of the array's host bytes for another library to hold
// (the buffer protocol): a write through it reaches the array. Until the
// last such export ends the bytes are the array's value (HostBuffer::
// exported). A read-only array's export is to_ndarray's.
py::object exported_ndarray(const GpuArray& a);
// Whether all of a view's values are in host memory now (no evaluation
// needed): what the paths that read them there at once ask first.
bool values_on_host(const GpuArray& a);
// The values of such a view in C order: its node's memory where the view
// is C-contiguous, else gathered into `scratch` (which holds them).
const char* c_order_values(const GpuArray& a, std::vector<char>* scratch);
// The read-only ndarray of a view whose values are all in host memory now
// (no evaluation); an empty object if some are not.
py::object host_values(const GpuArray& a);
// What NumPy returned (an ndarray or a NumPy scalar) as a new gpupy array
// holding its values in its memory order: the results of the eager paths.
GpuArray from_numpy_result(py::handle r);
// func(*host values of args) for a NumPy function that only reads gpupy
// arrays (a product or a decomposition in a loop), with no Python-level
// bookkeeping: None unless every argument is a GpuArray (not a subclass); else
// (True, result) for a NumPy scalar or a fresh ndarray (copied into a new
// gpupy array), or (False, NumPy's result, the host values) for the caller
// to wrap (a tuple of results, a view of an argument).
py::object host_call(py::handle func, py::tuple args);
// A NumPy scalar of the element at owner index `idx` of a node with host data.
py::object numpy_scalar(Node* node, int64_t idx);
// Python value -> gpupy_scalar of dtype t (for fills); NumPy's casting
// for `a[...] = value`.
gpupy_scalar scalar_from_python(py::handle value, DType t);
// The same for one element, `a[i, j] = value`: NumPy refuses any sequence
// there, even of one element ("setting an array element with a sequence").
gpupy_scalar element_from_python(py::handle value, DType t);
// The common values of `a[i] = v` in a loop, converted without NumPy: a
// NumPy scalar of exactly dtype t, a Python float into float64, a Python
// int into int64 or (exactly representable) float64. False for anything
// else, which element_from_python converts by NumPy's rules.
bool plain_element(py::handle value, DType t, gpupy_scalar* out);
// The gpupy dtype of a NumPy scalar whose type is exactly that dtype's
// scalar type (np.float64, np.int8, ...), with its value in *value; -1
// for anything else. A type comparison and a copy: no descriptor lookups.
DType exact_numpy_scalar(PyObject* v, gpupy_scalar* value);

// --- advanced indexing on the host (py_advanced.cpp) ----------------------------
// Whether the array's node is small (the eager threshold: a write there may
// copy it whole, copy-on-write) and all its values are in host memory: the
// arrays small writes go into at once.
bool small_host_array(const GpuArray& a);
// a[key] of a small array with values in host memory, by NumPy at once
// (gpupy arrays in the key must be on the host too); empty otherwise.
py::object small_advanced_get(const GpuArray& a, py::handle key);
// a[key] = value the same way; false (nothing done) otherwise.
bool small_advanced_set(const GpuArray& a, py::handle key, py::handle value);
// host[key] = value into the array's node in host memory (evaluated and
// copied-on-write as needed, core/building/writes.hpp); key and value are
// anything NumPy's indexing takes.
void write_on_host(const GpuArray& a, py::handle key, py::handle value);

// --- views (py_views.cpp) ---------------------------------------------------------
// Basic indexing; returns false if `key` needs advanced indexing.
bool basic_index(const GpuArray& a, py::handle key, ViewGeometry* out, bool* scalar_result);
// `a[i, j]` in a loop: a key of one Python int per dimension gives the
// element's owner offset at once (or NumPy's IndexError), without parsing
// items or building a view; false for any other key.
bool element_key(const GpuArray& a, py::handle key, int64_t* offset);
Dims shape_from_python(py::handle shape);
// operator.index(obj): TypeError "'x' object cannot be interpreted as an
// integer" for anything that is not an integer (a float axis, a float
// dimension), as NumPy reports it.
int64_t index_value(py::handle obj);

// --- buffer export (py_buffer_export.cpp) ----------------------------------------
// The type's buffer protocol (Py_bf_getbuffer): the array's host bytes.
int gpuarray_getbuffer(PyObject* self, Py_buffer* view, int flags);
// Raises the error the last buffer export of `self` failed with, if any
// (NumPy discards it, then asks __array_interface__ or __array__).
void raise_export_error(py::handle self);

// --- operations (py_ops.cpp) ------------------------------------------------------
// Applies an op-table ufunc lazily; `out` may be None. Returns
// NotImplemented for operand types it does not know. `as_operator`: called
// as Python's operator (a ** 2 is NumPy's square, and its warnings say so).
py::object apply_ufunc(OpCode op, const std::vector<py::handle>& args, py::handle out, bool as_operator = false);
py::object apply_where(py::handle cond, py::handle x, py::handle y);
// a[...] = value for the view `target` (casting="unsafe"): the Python value
// converted to an array, then the core's assign (core/building/writes.hpp).
void assign_value(const GpuArray& target, py::handle value);
// In-place operator: target op= value, lazily when target is whole.
py::object inplace(OpCode op, py::object self, py::handle value);
// Coerces an operand to a GpuArray (ndarrays/scalars/lists copied).
bool as_gpuarray(py::handle obj, GpuArray* out);
// What NumPy's floating-point error state (np.errstate, np.seterr) asks
// for (py_errstate.cpp). gpupy's device detects division by zero, overflow
// and invalid values (execution/fp_errors.hpp), so their "warn" is
// honoured there; "raise", "call", "print" and "log", and anything but
// "ignore" for underflow (never detected), send the ufunc to NumPy, which
// does it all.
// The state lives in NumPy's context variable, a new object for each
// errstate block or seterr call; NumPy's modes are asked once per object:
// one context-variable read per ufunc otherwise.
struct NumpyFpState {
    bool numpy_acts = false;  // some mode only NumPy's loops can honour
    uint8_t warn = 0;         // FpKind bits in "warn" mode
};
const NumpyFpState& numpy_fp_state();
// Why a call goes to NumPy when the state asks for more than warnings.
extern const char* const kErrstateReason;
// NumPy's `name` ("sum", "add.reduce") on `args` through the package's
// fallback (counted, refused in raise mode, arguments flushed, the result
// wrapped), for `reason`.
py::object call_numpy_counted(const char* name, const py::tuple& args, const py::dict& kwargs, const char* reason);
// numpy.<ufunc> for an op-table op, looked up once.
py::handle numpy_ufunc(OpCode op);

void register_array(py::module_& m);
void register_array_functions(py::module_& m);  // py_array_functions.cpp
void register_ops(py::module_& m);
void register_runtime(py::module_& m);
void register_structural(py::module_& m);
// a reduced over `axes` into dtype t: NumPy's reduce at once for a small
// array of host values, else the core's lazy chunked reduction.
// `checked`: the reduction is NumPy's ufunc.reduce, whose floating-point
// errors np.errstate governs (not a product's or gpupy's own inner sums).
// Where the state asks for more than warnings, NumPy does it.
py::object reduce_now_or_lazily(const GpuArray& a, OpCode fold, const std::vector<int64_t>& axes, DType t, int64_t chunk,
                                bool checked);
// `x.sum()`, `x.prod()`, `x.max()`, `x.min()` without arguments or with
// one int axis, in C (py_reduce_methods.cpp), installed after the package's
// methods, which every other call goes to; `chunk` is the package's
// reduction chunk.
void install_reduce_methods(PyTypeObject* gpuarray_type, int64_t chunk);
void register_reduce_methods(py::module_& m);
void register_ufunc_base(py::module_& m);  // py_ufunc.cpp
void register_random_draws(py::module_& m);  // py_random_draws.cpp
void register_handover(py::module_& m);
void register_memory(py::module_& m);      // py_memory.cpp: which arrays share memory    // py_handover.cpp: gpupy's functions as the namespace holds them
void register_products(py::module_& m);    // py_products.cpp
// a @ b (dot: dot(a, b)) of two gpupy arrays by NumPy on their host values
// when products run on the host and the case is the common one (vectors
// and matrices of one dtype); an empty object otherwise (py_products.cpp).
py::object host_product(py::handle a, py::handle b, bool dot);
// Replaces the package's GpuArray.__array_ufunc__ by a C method whose plain
// form skips Python (py_ufunc.cpp); other forms still reach the package's.
void install_array_ufunc(PyTypeObject* gpuarray_type);
// Hands NumPy's own ufunc inner loops to the runtime, which offers them to
// every driver it loads (numpy_loops.cpp).
void register_numpy_loops();
// NumPy's inner loop for `op` over operands of `dtype` (numpy_loops.cpp:
// the exact signature only), or null.
struct HostLoop;
const HostLoop* numpy_loop(OpCode op, DType dtype);

}  // namespace gpupy

// pybind11 converts GpuArray arguments and results of bound functions
// through GpuArrayObject: an argument is the value inside the object (no
// copy for a reference parameter), a result a new object.
namespace pybind11::detail {

template <>
struct type_caster<gpupy::GpuArray> {
    static constexpr auto name = const_name("gpupy.ndarray");

    bool load(handle src, bool /*convert*/) {
        if (!gpupy::is_gpuarray(src)) return false;
        value_ = &gpupy::gpuarray_mut(src);
        return true;
    }
    static handle cast(gpupy::GpuArray&& src, return_value_policy, handle) {
        return gpupy::wrap_gpuarray(std::move(src)).release();
    }
    static handle cast(const gpupy::GpuArray& src, return_value_policy, handle) {
        return gpupy::wrap_gpuarray(gpupy::GpuArray(src)).release();
    }
    static handle cast(const gpupy::GpuArray* src, return_value_policy policy, handle parent) {
        if (!src) return none().release();
        return cast(*src, policy, parent);
    }

    template <typename T>
    using cast_op_type = pybind11::detail::cast_op_type<T>;
    operator gpupy::GpuArray*() { return value_; }
    operator gpupy::GpuArray&() { return *value_; }

  private:
    gpupy::GpuArray* value_ = nullptr;
};

}  // namespace pybind11::detail
