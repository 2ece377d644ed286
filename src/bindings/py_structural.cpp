// Python entry points for the non-elementwise nodes: reductions and scans
// (core/building/reductions.hpp), joins and repeat/tile-like reads
// (core/building/movement.hpp). Argument conversion only.
#include <pybind11/stl.h>

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "bindings/fp_flags.hpp"
#include "bindings/py_array.hpp"
#include "core/building/movement.hpp"
#include "core/graph/node_factory.hpp"
#include "core/graph/value_bounds.hpp"
#include "core/building/reductions.hpp"
#include "core/building/views.hpp"
#include "core/memory/host_transfer.hpp"
#include "core/runtime/errors.hpp"
#include "core/runtime/runtime.hpp"
#include "core/runtime/stats.hpp"

namespace gpupy {

namespace {

DType dtype_or_type_error(py::handle dtype, const char* what) {
    const DType t = dtype_from_object(dtype);
    if (t < 0) throw TypeError(std::string("gpupy cannot ") + what + " dtype " + std::string(py::str(dtype)));
    return t;
}

std::vector<int64_t> ints_from(py::handle seq) {
    std::vector<int64_t> out;
    for (py::handle h : py::reinterpret_borrow<py::iterable>(seq)) out.push_back(py::cast<int64_t>(h));
    return out;
}

// `(row == pattern).all()`, `mask.any()` of a small boolean or integer
// array whose values are on the host, over every axis: an element is true
// when any of its bytes is nonzero, so the answer is a scan of the bytes --
// no NumPy call. (Floats are NumPy's: -0.0 is false.) nullopt otherwise.
std::optional<GpuArray> small_truth_on_host(const GpuArray& a, OpCode fold, size_t naxes, DType t) {
    if ((fold != GPUPY_OP_LOGICAL_AND && fold != GPUPY_OP_LOGICAL_OR) || t != GPUPY_BOOL ||
        naxes != static_cast<size_t>(a.ndim()) || dtype_is_float(a.dtype()))
        return std::nullopt;
    if (!values_on_host(a)) return std::nullopt;
    const int64_t n = a.size();
    const size_t item = static_cast<size_t>(dtype_itemsize(a.dtype()));
    std::vector<char> scratch;
    const char* bytes = c_order_values(a, &scratch);
    const bool want_all = fold == GPUPY_OP_LOGICAL_AND;
    bool answer = want_all;
    for (int64_t i = 0; i < n && answer == want_all; ++i) {
        const char* e = bytes + static_cast<size_t>(i) * item;
        const bool truth = std::any_of(e, e + item, [](char c) { return c != 0; });
        if (truth != want_all) answer = !want_all;
    }
    NodeRef node = NodeFactory::array_uninitialized(GPUPY_BOOL, Dims{});
    *node->host_data() = answer ? 1 : 0;
    ++stats().direct_host_ops;
    return GpuArray::of(std::move(node));
}

// NumPy's reduce of a contiguous array calls its ufunc's inner loop once
// over the whole array, in its reduce form (the output as the first
// operand, stride 0), when the array fits the iterator's buffer: larger
// ones it may hand over in pieces.
constexpr int64_t kOneLoopCall = 8192;  // NPY_BUFSIZE

// `err.max()`, `x.sum()` of a small C-contiguous float host array into its
// own dtype: NumPy's inner loop called as NumPy's reduce calls it -- the
// output starting at the ufunc's identity (add, multiply) or at the first
// element (maximum, minimum: no identity), then the loop over the rest --
// so the value is NumPy's bit for bit (add's pairwise summation included)
// without NumPy's reduce machinery. A loop that raised a floating-point
// flag is discarded (NumPy's call then warns or raises as errstate says).
// nullopt where this does not apply.
std::optional<GpuArray> small_fold_by_numpy_loop(const GpuArray& a, OpCode fold, size_t naxes, DType t) {
    const bool identity = fold == GPUPY_OP_ADD || fold == GPUPY_OP_MULTIPLY;
    if ((!identity && fold != GPUPY_OP_MAXIMUM && fold != GPUPY_OP_MINIMUM) || !dtype_is_float(t) ||
        t != a.dtype() || naxes != static_cast<size_t>(a.ndim()) || a.size() > kOneLoopCall ||
        !is_c_contiguous(a.geom.shape, a.geom.strides))
        return std::nullopt;
    const HostLoop* l = numpy_loop(fold, t);
    if (!l || !values_on_host(a)) return std::nullopt;
    const int64_t n = a.size();
    const int64_t item = dtype_itemsize(t);
    const char* values = a.node()->host_data() + a.geom.offset * item;  // (C-contiguous)
    NodeRef node = NodeFactory::array_uninitialized(t, Dims{});
    char* out = node->host_data();
    int64_t first = 0;
    if (identity) {
        scalar_store(t, scalar_from_double(t, fold == GPUPY_OP_ADD ? 0.0 : 1.0), out);
    } else {
        std::memcpy(out, values, static_cast<size_t>(item));
        first = 1;
    }
    const int64_t rest = n - first;
    if (rest > 0) {
        char* args[3] = {out, const_cast<char*>(values + first * item), out};
        const int64_t steps[3] = {0, item, 0};
        clear_reported_fp_flags();
        l->loop(args, &rest, steps, l->data);
        if (reported_fp_flags_raised()) return std::nullopt;
    }
    ++stats().eager_numpy_ops;
    ++stats().direct_numpy_loops;
    return GpuArray::of(std::move(node));
}

// NumPy's ufunc.reduce of an ndarray's values (`ndim` dims) along `axes`
// into dtype t, as a gpupy array.
GpuArray numpy_reduce(const py::object& host, OpCode fold, const std::vector<int64_t>& axes, int ndim, DType t) {
    // ufunc.reduce(host, axis=axes, dtype=t) by vectorcall: pybind11's
    // keyword call cost twice NumPy's reduce of 100 elements.
    static PyObject* const method = PyUnicode_InternFromString("reduce");
    static PyObject* const kwnames = Py_BuildValue("(ss)", "axis", "dtype");
    // axis=None for all axes and an int for one: NumPy's own spellings of
    // the same reduction, which it parses faster than a tuple.
    py::object axis;
    if (static_cast<int>(axes.size()) == ndim) {
        axis = py::none();
    } else if (axes.size() == 1) {
        axis = py::int_(axes[0]);
    } else {
        py::tuple axis_tuple(axes.size());
        for (size_t i = 0; i < axes.size(); ++i) axis_tuple[i] = py::int_(axes[i]);
        axis = std::move(axis_tuple);
    }
    py::object dtype = numpy_dtype(t);
    PyObject* args[] = {numpy_ufunc(fold).ptr(), host.ptr(), axis.ptr(), dtype.ptr()};
    py::object r = py::reinterpret_steal<py::object>(PyObject_VectorcallMethod(method, args, 2, kwnames));
    if (!r) throw py::error_already_set();
    return from_numpy_result(r);
}

// A small reduction of values already in host memory, by NumPy at once
// (as small ufuncs are, py_ops.cpp): a lazy 0-d node and its evaluation
// cost microseconds where NumPy's reduce costs one (`while diff > tol:`
// loops reduce every step). nullopt when not small or not on the host.
std::optional<GpuArray> small_reduce_on_host(const GpuArray& a, OpCode fold, const std::vector<int64_t>& axes,
                                             DType t) {
    if (a.size() == 0 || a.size() > Runtime::get().eager_elements()) return std::nullopt;
    if (std::optional<GpuArray> truth = small_truth_on_host(a, fold, axes.size(), t)) return truth;
    if (std::optional<GpuArray> folded = small_fold_by_numpy_loop(a, fold, axes.size(), t)) return folded;
    py::object host = host_values(a);
    if (!host) return std::nullopt;
    ++stats().eager_numpy_ops;
    return numpy_reduce(host, fold, axes, a.ndim(), t);
}

// A small concatenation of host values, by NumPy at once into the new
// node's host memory (np.hstack of a few small results in a time loop
// would otherwise be a lazy node that the next in-place op evaluates on
// the host engine, at an evaluation's fixed cost). The caller checked the
// casting rule; the shapes are checked here, with NumPy's messages.
std::optional<GpuArray> small_concatenate_on_host(const std::vector<GpuArray>& arrays, int axis, DType t) {
    const Dims shape = concatenated_shape(arrays, axis);
    if (shape_size(shape) > Runtime::get().eager_elements()) return std::nullopt;
    // Along the first axis, of one dtype: each piece is one run of the
    // result in C order, copied from its host values a run at a time
    // (NumPy's concatenate with out= cost eight times NumPy's own call).
    bool direct = axis == 0;
    for (const GpuArray& a : arrays) {
        direct = direct && a.dtype() == t && values_on_host(a);
    }
    if (direct) {
        NodeRef node = NodeFactory::array_uninitialized(t, shape);
        char* out = node->host_data();
        for (const GpuArray& a : arrays) {
            gather_from_host(a.node(), a.geom, 0, a.size(), out);
            out += a.size() * dtype_itemsize(t);
        }
        ++stats().eager_numpy_ops;
        return GpuArray::of(std::move(node));
    }
    py::list hosts(arrays.size());
    for (size_t i = 0; i < arrays.size(); ++i) {
        py::object h = host_values(arrays[i]);
        if (!h) return std::nullopt;
        hosts[i] = h;
    }
    NodeRef node = NodeFactory::array_uninitialized(t, shape);
    py::object dst = host_ndarray(node.get(), identity_view(shape), true);
    static py::handle numpy_concatenate = py::object(py::module_::import("numpy").attr("concatenate")).release();
    numpy_concatenate(hosts, py::arg("axis") = axis, py::arg("out") = dst, py::arg("casting") = "unsafe");
    ++stats().eager_numpy_ops;
    return GpuArray::of(std::move(node));
}

// What a reduction or scan (`method`: kFpReduce, kFpAccumulate) folding
// with `fold` into t is checked for under NumPy's error state; sets
// *numpy_acts where only NumPy can do what the state asks.
FpWarnings fold_warnings(OpCode fold, DType t, const char* method, bool* numpy_acts) {
    *numpy_acts = false;
    if (!gpupy_fold_checkable(fold, t)) return {};
    const NumpyFpState& state = numpy_fp_state();
    *numpy_acts = state.numpy_acts;
    return state.numpy_acts ? FpWarnings{} : FpWarnings{state.warn, fold, method};
}

// numpy.<fold>.<method>(a, axis=axis, dtype=t) through the package's fallback.
py::object fold_by_numpy(const GpuArray& a, OpCode fold, const char* method, py::object axis, DType t) {
    py::dict kwargs;
    kwargs["axis"] = std::move(axis);
    kwargs["dtype"] = numpy_dtype(t);
    const std::string name = std::string(op_numpy_name(fold)) + "." + method;
    return call_numpy_counted(name.c_str(), py::make_tuple(wrap_result(GpuArray(a))), kwargs, kErrstateReason);
}

}  // namespace

py::object reduce_now_or_lazily(const GpuArray& a, OpCode fold, const std::vector<int64_t>& axes, DType t, int64_t chunk,
                                bool checked) {
    if (std::optional<GpuArray> now = small_reduce_on_host(a, fold, axes, t)) return wrap_result(std::move(*now));
    if (t == GPUPY_FLOAT16 && (fold == GPUPY_OP_ADD || fold == GPUPY_OP_MULTIPLY) && a.size() > 0) {
        // NumPy folds float16 in float32 within its innermost loop and
        // rounds to float16 between loop calls, so its answer depends on
        // the layout (an axis-0 sum of a C-order array rounds every step:
        // a column of 0.1s stops at 256, a row sums to 1000). No device
        // fold repeats that: NumPy's own reduce of the values, counted as
        // a host placement.
        ++stats().host_float16_folds;
        return wrap_result(numpy_reduce(to_ndarray(a), fold, axes, a.ndim(), t));
    }
    FpWarnings fp;
    if (checked) {
        bool numpy_acts;
        fp = fold_warnings(fold, t, kFpReduce, &numpy_acts);
        if (numpy_acts) {
            py::tuple axis(axes.size());
            for (size_t i = 0; i < axes.size(); ++i) axis[i] = py::int_(axes[i]);
            return fold_by_numpy(a, fold, kFpReduce, std::move(axis), t);
        }
    }
    return wrap_result(reduce(a, fold, axes, t, chunk, fp));
}

void register_structural(py::module_& m) {
    m.def(
        "reduce",
        [](const GpuArray& a, const std::string& fold, py::handle axes, py::handle dtype, int64_t chunk, bool checked) {
            const DType t = dtype_or_type_error(dtype, "reduce into");
            const std::vector<int64_t> ax = ints_from(axes);
            return reduce_now_or_lazily(a, fold_op(fold), ax, t, chunk, checked);
        },
        py::arg("array"), py::arg("fold"), py::arg("axes"), py::arg("dtype"), py::arg("chunk") = 256,
        py::arg("checked") = true);
    m.def(
        "scan",
        [](const GpuArray& a, const std::string& fold, int64_t axis, py::handle dtype, int64_t chunk) -> py::object {
            const DType t = dtype_or_type_error(dtype, "scan into");
            const OpCode op = fold_op(fold);
            bool numpy_acts;
            const FpWarnings fp = fold_warnings(op, t, kFpAccumulate, &numpy_acts);
            if (numpy_acts) return fold_by_numpy(a, op, kFpAccumulate, py::int_(normalize_axis(axis, a.ndim())), t);
            return wrap_result(scan(a, op, axis, t, chunk, fp));
        },
        py::arg("array"), py::arg("fold"), py::arg("axis"), py::arg("dtype"), py::arg("chunk") = 256);
    m.def(
        "concatenate",
        [](const std::vector<GpuArray>& arrays, int axis, py::handle dtype) {
            const DType t = dtype_or_type_error(dtype, "hold");
            if (std::optional<GpuArray> now = small_concatenate_on_host(arrays, axis, t)) return std::move(*now);
            return concatenate(arrays, axis, t);
        },
        py::arg("arrays"), py::arg("axis"), py::arg("dtype"));
    m.def(
        "remap",
        [](const GpuArray& a, py::handle shape, std::vector<int64_t> div, std::vector<int64_t> mod,
           std::vector<int64_t> shift, std::vector<int32_t> edge) {
            return remap(a, shape_from_python(shape),
                         RemapParams{Dims(div.begin(), div.end()), Dims(mod.begin(), mod.end()),
                                     Dims(shift.begin(), shift.end()), std::move(edge)});
        },
        py::arg("array"), py::arg("shape"), py::arg("div"), py::arg("mod"), py::arg("shift") = std::vector<int64_t>{},
        py::arg("edge") = std::vector<int32_t>{});
    m.def("gather", &gather, py::arg("array"), py::arg("index"));
    // (lo, hi) every element lies within, proven from the graph, or None.
    m.def(
        "value_bounds",
        [](const GpuArray& a) -> py::object {
            const auto b = value_bounds(a.node_view());
            if (!b) return py::none();
            return py::make_tuple(b->lo, b->hi);
        },
        py::arg("array"));
    m.def(
        "roll", [](const GpuArray& a, std::vector<int64_t> shifts) { return roll(a, Dims(shifts.begin(), shifts.end())); },
        py::arg("array"), py::arg("shifts"));
    m.def(
        "pad",
        [](const GpuArray& a, std::vector<int64_t> before, std::vector<int64_t> after, const std::string& mode) {
            static const std::pair<const char*, int32_t> kModes[] = {{"edge", GPUPY_EDGE_CLAMP},
                                                                     {"wrap", GPUPY_EDGE_WRAP},
                                                                     {"reflect", GPUPY_EDGE_REFLECT},
                                                                     {"symmetric", GPUPY_EDGE_SYMMETRIC}};
            for (const auto& [name, edge] : kModes) {
                if (mode == name)
                    return pad(a, Dims(before.begin(), before.end()), Dims(after.begin(), after.end()), edge);
            }
            throw ValueError("mode '" + mode + "' is not supported");
        },
        py::arg("array"), py::arg("before"), py::arg("after"), py::arg("mode"));
}

}  // namespace gpupy
