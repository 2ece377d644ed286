// Python operands of ufuncs, np.where and writes: what each argument is
// (array, weak Python scalar, something only NumPy handles), NumPy's dtype
// resolution (asked once per signature, then cached) and its checks for
// out=; the nodes themselves are built by the core (core/building/).
#include <array>
#include <cfenv>
#include <cstring>
#include <optional>
#include <unordered_map>

#include "core/graph/node_factory.hpp"
#include "core/runtime/errors.hpp"
#include "core/execution/evaluator.hpp"
#include "core/execution/fp_errors.hpp"
#include "bindings/numpy_api.hpp"
#include "bindings/py_array.hpp"
#include "core/runtime/runtime.hpp"
#include "core/runtime/stats.hpp"
#include "core/building/elementwise.hpp"
#include "core/building/rewrites.hpp"
#include "core/building/writes.hpp"
#include "core/graph/host_state.hpp"
#include "core/graph/memory_order.hpp"
#include "core/memory/host_transfer.hpp"
#include "core/runtime/driver_loader.hpp"

namespace gpupy {

// The package installs the function that runs anything gpupy cannot
// represent (complex operands, float16 results, ...) through NumPy, with
// fallback accounting: fallback(name, args_tuple, kwargs_dict).
py::object& numpy_fallback() {
    static auto* f = new py::object();
    return *f;
}

py::object call_numpy_counted(const char* name, const py::tuple& args, const py::dict& kwargs, const char* reason) {
    if (!numpy_fallback()) throw InternalError("the package did not install its NumPy fallback");
    return numpy_fallback()(name, args, kwargs, reason);
}

const char* const kErrstateReason =
    "np.errstate or np.seterr asks to raise or call on floating-point errors (or to report underflow), which "
    "NumPy's loops do and gpupy's device does not";

// NumPy's error state, read once per state object (py_array.hpp).
const NumpyFpState& numpy_fp_state() {
    static PyObject* var = nullptr;
    static PyObject* last = nullptr;
    static NumpyFpState state;
    if (!var) var = py::object(py::module_::import("numpy._core.umath").attr("_extobj_contextvar")).release().ptr();
    PyObject* now = nullptr;
    if (PyContextVar_Get(var, nullptr, &now) < 0) throw py::error_already_set();
    py::object held = py::reinterpret_steal<py::object>(now);
    if (now == last) return state;
    NumpyFpState fresh;
    py::dict modes = py::module_::import("numpy").attr("geterr")();
    const std::pair<const char*, uint8_t> detected[] = {{"divide", kFpDivide}, {"over", kFpOverflow}, {"invalid", kFpInvalid}};
    for (const auto& [name, kind] : detected) {
        const std::string mode = py::str(modes[name]);
        if (mode == "warn") fresh.warn |= kind;
        else if (mode != "ignore") fresh.numpy_acts = true;
    }
    if (std::string(py::str(modes["under"])) != "ignore") fresh.numpy_acts = true;
    Py_XDECREF(last);
    last = held.release().ptr();
    state = fresh;
    return state;
}

namespace {

struct Operand {
    // Foreign: an array-like of another library with NumPy's override
    // protocol (a pandas Series, an xarray DataArray, a dask array), which
    // decides what a ufunc of it gives.
    enum Kind { Array, PyInt, PyFloat, Unsupported, Unknown, Foreign };
    Kind kind = Unknown;
    // A GpuArray argument is used in place (it outlives the call); one made
    // from a scalar or an ndarray is owned here.
    const GpuArray* borrowed = nullptr;
    mutable GpuArray owned;
    py::handle obj;
    // A NumPy scalar or a bool: its value, made a constant node only when
    // an expression needs one (an eager op reads the value directly: the
    // node would cost as much as the op).
    mutable bool pending_constant = false;
    DType constant_dtype = GPUPY_BOOL;
    gpupy_scalar constant_value{};

    const GpuArray& arr() const {
        if (pending_constant) {
            owned = GpuArray::of(NodeFactory::constant(constant_dtype, constant_value));
            pending_constant = false;
        }
        return borrowed ? *borrowed : owned;
    }
    DType dtype() const { return pending_constant ? constant_dtype : arr().dtype(); }
    // The value of a scalar operand known now (a NumPy scalar, a bool, a
    // constant array), if this is one.
    std::optional<gpupy_scalar> known_value() const {
        if (pending_constant) return constant_value;
        if (kind == Array && arr().node()->kind() == NodeKind::Constant) return arr().node()->value();
        return std::nullopt;
    }
};

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

// With `defer_foreign`, an array-like of another library that overrides
// ufuncs is Foreign (a ufunc hands it over); otherwise it is converted
// like any array-like (np.where, asarray and assignment read its values).
Operand classify(py::handle obj, bool defer_foreign = false) {
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
    o.owned = lend_ndarray(arr, Lending::Shared);
    return o;
}

// --- dtype resolution --------------------------------------------------------------

struct Loop {
    DType in[3];
    DType out;
    bool representable;  // all loop dtypes are gpupy dtypes
};

constexpr int kWeakInt = 30, kWeakFloat = 31;

int operand_code(const Operand& o) {
    switch (o.kind) {
    case Operand::Array: return o.dtype();
    case Operand::PyInt: return kWeakInt;
    case Operand::PyFloat: return kWeakFloat;
    default: return -1;
    }
}

std::unordered_map<uint64_t, Loop>& loop_cache() {
    static auto* m = new std::unordered_map<uint64_t, Loop>();
    return *m;
}

// Asks NumPy which loop `op` uses for these operands (NEP 50: Python int
// and float operands are "weak"), remembering the answer per signature.
Loop resolve_loop(OpCode op, const std::vector<Operand>& ops) {
    uint64_t key = static_cast<uint64_t>(op);
    for (const Operand& o : ops) key = key * 64 + static_cast<uint64_t>(operand_code(o) + 1);
    auto& cache = loop_cache();
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
    py::module_ np = py::module_::import("numpy");
    py::object ufunc = np.attr(op_display_name(op));
    py::tuple sig(ops.size() + 1);
    py::object builtins = py::module_::import("builtins");
    for (size_t i = 0; i < ops.size(); ++i) {
        switch (ops[i].kind) {
        case Operand::PyInt: sig[i] = builtins.attr("int"); break;
        case Operand::PyFloat: sig[i] = builtins.attr("float"); break;
        default: sig[i] = numpy_dtype(ops[i].dtype()); break;
        }
    }
    sig[ops.size()] = py::none();
    py::tuple res = ufunc.attr("resolve_dtypes")(sig);
    Loop loop{};
    loop.representable = true;
    for (size_t i = 0; i <= ops.size(); ++i) {
        const DType t = dtype_from_object(res[i]);
        if (t < 0) loop.representable = false;
        if (i < ops.size()) loop.in[i] = t;
        else loop.out = t;
    }
    cache.emplace(key, loop);
    return loop;
}

// A weak Python scalar converted to the loop dtype; OverflowError as NumPy
// unless `wrap` (np.where of NumPy up to 2.4 converts Python ints with an
// unsafe cast: numpy_where_wraps_ints).
gpupy_scalar weak_value(const Operand& o, DType t, bool wrap = false) {
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

// The operand's view as a child of an expression of shape `shape` stored
// in `order` (memory_order.hpp), converted to dtype t. The conversion is
// made over the operand's own elements in that order, then broadcast.
NodeView child_view(const Operand& o, DType t, const Dims& shape, const MemoryOrder& order, bool wrap = false) {
    if (o.kind == Operand::PyInt || o.kind == Operand::PyFloat)
        return constant_view(NodeFactory::constant(t, weak_value(o, t, wrap)), permuted_shape(shape, order));
    NodeView v = o.arr().node_view();
    if (order.empty()) return broadcast_view(cast_view(std::move(v), t), shape);
    // Leading length-1 dimensions up to the result's rank, so that the
    // order applies to the operand's own view.
    const size_t lead = shape.size() - v.geom.shape.size();
    v.geom.shape.insert(v.geom.shape.begin(), lead, 1);
    v.geom.strides.insert(v.geom.strides.begin(), lead, 0);
    return broadcast_view(cast_view(permuted(std::move(v), order), t), permuted_shape(shape, order));
}

// NumPy's memory order of a new result of `shape` computed elementwise
// from these operands (keep_order over their views broadcast to `shape`).
MemoryOrder result_order(const std::vector<Operand>& ops, const Dims& shape) {
    if (shape.size() < 2) return {};
    std::vector<ViewGeometry> views;
    views.reserve(ops.size());
    for (const Operand& o : ops) {
        if (o.kind != Operand::Array || o.pending_constant) continue;
        const ViewGeometry& g = o.arr().geom;
        if (g.shape.size() < 2) continue;  // at most one axis: no order among the result's axes
        views.push_back(ViewGeometry{g.offset, shape, broadcast_strides(g.shape, g.strides, shape)});
    }
    std::vector<const ViewGeometry*> refs;
    for (const ViewGeometry& v : views) refs.push_back(&v);
    return keep_order(shape, refs);
}

// The value of an exponent that is a scalar known now (a Python number or
// a constant), as a double.
std::optional<double> constant_exponent(const Operand& o) {
    if (o.kind == Operand::PyInt) {
        int overflow = 0;
        const long long v = PyLong_AsLongLongAndOverflow(o.obj.ptr(), &overflow);
        if (overflow) return std::nullopt;
        return static_cast<double>(v);
    }
    if (o.kind == Operand::PyFloat) return PyFloat_AS_DOUBLE(o.obj.ptr());
    if (const std::optional<gpupy_scalar> v = o.known_value()) {
        const DType t = o.dtype();
        if (dtype_is_float(t)) return v->f;
        if (t == GPUPY_UINT64) return static_cast<double>(v->u);
        return static_cast<double>(v->i);
    }
    return std::nullopt;
}

Dims operand_shape(const Operand& o) {
    return o.kind == Operand::Array && !o.pending_constant ? o.arr().geom.shape : Dims{};
}

py::object call_numpy(const char* name, const std::vector<py::handle>& args, py::handle out,
                      const char* reason = nullptr) {
    if (!numpy_fallback()) throw InternalError("the package did not install its NumPy fallback");
    py::tuple t(args.size());
    for (size_t i = 0; i < args.size(); ++i) t[i] = py::reinterpret_borrow<py::object>(args[i]);
    py::dict kw;
    if (out && !out.is_none()) kw["out"] = out;
    if (reason) return numpy_fallback()(name, t, kw, reason);
    return numpy_fallback()(name, t, kw);
}

// The ops whose loops NumPy checks for floating-point errors: anything of
// floats, and integer division, reciprocals and powers (division by zero).
bool may_raise_fp_error(OpCode op, DType out, DType in) {
    return dtype_is_float(out) || dtype_is_float(in) || op == GPUPY_OP_FLOOR_DIVIDE || op == GPUPY_OP_REMAINDER ||
           op == GPUPY_OP_FMOD || op == GPUPY_OP_POWER || op == GPUPY_OP_RECIPROCAL;
}

bool can_cast_same_kind(DType from, DType to) {
    static int table[GPUPY_NUM_DTYPES][GPUPY_NUM_DTYPES];
    static bool filled = false;
    if (!filled) {
        for (int a = 0; a < GPUPY_NUM_DTYPES; ++a) {
            for (int b = 0; b < GPUPY_NUM_DTYPES; ++b) {
                PyArray_Descr* da = reinterpret_cast<PyArray_Descr*>(numpy_dtype(a).ptr());
                PyArray_Descr* db = reinterpret_cast<PyArray_Descr*>(numpy_dtype(b).ptr());
                table[a][b] = PyArray_CanCastTypeTo(da, db, NPY_SAME_KIND_CASTING);
            }
        }
        filled = true;
    }
    return table[from][to] != 0;
}

std::string dtype_repr(DType t) { return std::string("dtype('") + dtype_name(t) + "')"; }

// Writes `value` (already a GpuArray of `target`'s shape after
// broadcasting) into target, following NumPy's rules for `out=`.
void check_output_cast(DType result, const GpuArray& target, const char* ufunc_name) {
    if (!can_cast_same_kind(result, target.dtype())) {
        throw TypeError(std::string("Cannot cast ufunc '") + ufunc_name + "' output from " + dtype_repr(result) +
                        " to " + dtype_repr(target.dtype()) + " with casting rule 'same_kind'");
    }
}

// NumPy broadcasts an `out=` with the operands' shapes, then requires the
// result to be the output's shape: ValueError with NumPy's words if not.
void check_output_shape(const Dims& out_shape, std::vector<Dims> operand_shapes) {
    operand_shapes.push_back(out_shape);
    const Dims all = broadcast_shapes(operand_shapes);
    if (all != out_shape) {
        throw ValueError("non-broadcastable output operand with shape " + shape_str(out_shape) +
                         " doesn't match the broadcast shape " + shape_str(all));
    }
}

void write_output(const GpuArray& target, const GpuArray& result, const char* ufunc_name) {
    check_output_cast(result.dtype(), target, ufunc_name);
    if (result.geom.shape != target.geom.shape) check_output_shape(target.geom.shape, {result.geom.shape});
    assign(target, result.node_view());
}

}  // namespace

bool as_gpuarray(py::handle obj, GpuArray* out) {
    Operand o = classify(obj);
    if (o.kind == Operand::Array) {
        *out = o.arr();
        return true;
    }
    if (o.kind == Operand::PyInt || o.kind == Operand::PyFloat) {
        py::object arr = py::reinterpret_steal<py::object>(PyArray_FromAny(obj.ptr(), nullptr, 0, 0, 0, nullptr));
        if (!arr) throw py::error_already_set();
        *out = copy_of_ndarray(arr);
        return true;
    }
    return false;
}

namespace {

// One number: a Python or NumPy scalar, or a 0-d ndarray.
bool is_host_number(py::handle h) {
    PyObject* p = h.ptr();
    if (PyLong_Check(p) || PyFloat_Check(p) || PyBool_Check(p) || PyComplex_Check(p)) return true;
    if (PyArray_IsScalar(p, Generic)) return true;
    return PyArray_Check(p) && PyArray_NDIM(reinterpret_cast<PyArrayObject*>(p)) == 0;
}

// Numbers only: NumPy's own scalar arithmetic, eagerly. A lazy node per
// number would cost more than the arithmetic (a Python loop over elements
// builds one per step), and NumPy's rules for weak scalars alone decide
// the result (np.negative(2**63) is a uint64, np.add(2**63, 1) raises).
py::object numbers_in_numpy(OpCode op, const std::vector<py::handle>& args, py::handle out,
                            const GpuArray* out_arr) {
    py::tuple t(args.size());
    for (size_t i = 0; i < args.size(); ++i) t[i] = py::reinterpret_borrow<py::object>(args[i]);
    // No out= or NumPy's own (an ndarray, or what NumPy refuses): NumPy's
    // ufunc as it is called.
    if (!out_arr) return out && !out.is_none() ? numpy_ufunc(op)(*t, py::arg("out") = out) : numpy_ufunc(op)(*t);
    // NumPy checks the casting into out's dtype on a host stand-in.
    py::object host = py::module_::import("numpy").attr("empty")(out.attr("shape"), numpy_dtype(out_arr->dtype()));
    numpy_ufunc(op)(*t, py::arg("out") = host);
    assign_value(*out_arr, host);
    return py::reinterpret_borrow<py::object>(out);
}

// The operands' host values for NumPy (new references into `argv`), or
// false if one is not all in host memory (argv is then released).
bool host_operands(const std::vector<Operand>& ops, std::vector<PyObject*>* argv) {
    for (const Operand& o : ops) {
        if (o.kind != Operand::Array || !o.borrowed) {
            argv->push_back(py::reinterpret_borrow<py::object>(o.obj).release().ptr());  // a number or an ndarray
            continue;
        }
        Node* x = o.arr().node();
        if (!o.arr().is_whole() && x->kind() == NodeKind::Expression && !x->complete() &&
            x->size() <= Runtime::get().cache().block_size()) {
            // Small work on a slice of a lazy expression that fits one block
            // (imgOut[i, :] in a loop over rows): evaluate the expression
            // whole, once -- NumPy computed it whole too -- so this and the
            // next slices run at once instead of one evaluation each.
            ensure_host(NodeView{o.arr().owner->node, identity_view(x->shape())}, 0, x->size());
        }
        py::object host = host_values(o.arr());
        if (!host) {
            for (PyObject* p : *argv) Py_DECREF(p);
            argv->clear();
            return false;
        }
        argv->push_back(host.release().ptr());
    }
    return true;
}

// NumPy's ufunc called straight (vectorcall: no argument tuple or dict
// built), with out= when given; steals the references in argv.
py::object call_numpy_ufunc(OpCode op, std::vector<PyObject*>& argv, PyObject* out) {
    static PyObject* out_name = PyTuple_Pack(1, PyUnicode_InternFromString("out"));
    const size_t nargs = argv.size();
    if (out) argv.push_back(out);
    PyObject* r = PyObject_Vectorcall(numpy_ufunc(op).ptr(), argv.data(), nargs, out ? out_name : nullptr);
    for (size_t i = 0; i < nargs; ++i) Py_DECREF(argv[i]);
    if (!r) throw py::error_already_set();
    return py::reinterpret_steal<py::object>(r);
}

// --- NumPy's inner loop called directly ------------------------------------------
// The eager path's commonest case -- operands of the loop's own dtype, in
// host memory (any strides, broadcast included) or scalars -- costs NumPy's
// ufunc call (type resolution, an ndarray per operand) three times what
// the loop itself does on a few hundred elements. NumPy's own inner loop
// (numpy_loops.cpp: the function its ufunc call runs for this signature)
// is called here on the host memory directly. NumPy's floating-point
// error handling is kept by not handling it: if the loop raised any flag
// NumPy would look at (divide, overflow, invalid, underflow), the result
// is discarded and NumPy's ufunc call does the work again, with its
// warnings or errors as errstate says.

// One operand of a direct loop: where its first element is, and its byte
// stride along each dimension of the result (0 where broadcast; all 0 for
// a scalar).
constexpr size_t kLoopDims = 32;  // more dimensions: NumPy's call

struct LoopOperand {
    const char* data = nullptr;
    int64_t strides[kLoopDims];
    alignas(8) char scalar[8] = {0};  // a Python number converted to the loop's dtype
};

bool loop_operand(const Operand& o, DType t, const Dims& shape, LoopOperand* out) {
    const int item = dtype_itemsize(t);
    if (shape.size() > kLoopDims) return false;
    std::fill(out->strides, out->strides + shape.size(), int64_t{0});
    if (o.kind == Operand::PyInt || o.kind == Operand::PyFloat) {
        scalar_store(t, weak_value(o, t), out->scalar);
        out->data = out->scalar;
        return true;
    }
    if (o.kind != Operand::Array) return false;
    if (const std::optional<gpupy_scalar> v = o.known_value()) {
        // A NumPy scalar operand (`alpha * v` with alpha = A[i, k]): its
        // value is known, like a Python number's.
        if (o.dtype() != t) return false;
        scalar_store(t, *v, out->scalar);
        out->data = out->scalar;
        return true;
    }
    const GpuArray& a = o.arr();
    const Node* x = a.node();
    if (a.dtype() != t || !x->host() || !view_evaluated(*x, a.geom, 0, a.size())) return false;
    const size_t nd = shape.size(), gnd = a.geom.shape.size();
    for (size_t k = 0; k < gnd; ++k) {  // aligned on the right, as broadcasting is
        if (a.geom.shape[gnd - 1 - k] != 1) out->strides[nd - 1 - k] = a.geom.strides[gnd - 1 - k] * item;
    }
    out->data = x->host_data() + a.geom.offset * item;
    return true;
}

// Runs NumPy's loop for `op` into the contiguous memory, laid out in
// `order`, that
// `destination()` gives -- asked for only once the loop applies, so an op
// that goes to NumPy's call allocates nothing here: true if it ran and
// raised no floating-point flag NumPy would report. As NumPy's iterator
// does, dimensions that step together are merged first; the loop then runs
// once per row of the innermost one.
template <class Destination>
bool run_numpy_loop(OpCode op, const Loop& loop, const std::vector<Operand>& ops, const Dims& shape,
                    const MemoryOrder& order, Destination&& destination) {
    const DType t = loop.in[0];
    const HostLoop* l = numpy_loop(op, t);
    const size_t nin = ops.size();
    if (!l || nin > 2 || loop.out != (op_is_predicate(op) ? GPUPY_BOOL : t) || shape_size(shape) == 0) return false;
    LoopOperand in[2];
    for (size_t i = 0; i < nin; ++i) {
        if (loop.in[i] != t || !loop_operand(ops[i], t, shape, &in[i])) return false;
    }
    // Per dimension of length > 1: its length and each operand's stride
    // (the output's last), merged with the next inner one where they step
    // together.
    const int out_item = dtype_itemsize(loop.out);
    // On the stack: this runs for every eager op (a few allocations cost
    // as much as a small loop).
    const size_t nd = shape.size();
    if (nd > kLoopDims) return false;
    int64_t c[kLoopDims];  // the output's strides in `order`, in elements
    if (order.empty()) {
        for (size_t d = nd, acc = 1; d-- > 0;) {
            c[d] = static_cast<int64_t>(acc);
            acc *= static_cast<size_t>(std::max<int64_t>(shape[d], 1));
        }
    } else {
        const Dims s = order_strides(shape, order);
        std::copy(s.begin(), s.end(), c);
    }
    int64_t len[kLoopDims + 1];
    std::array<int64_t, 3> step[kLoopDims + 1];
    size_t count = 0;
    for (size_t d = 0; d < nd; ++d) {
        if (shape[d] == 1) continue;
        std::array<int64_t, 3> s{};
        for (size_t i = 0; i < nin; ++i) s[i] = in[i].strides[d];
        s[nin] = c[d] * out_item;
        if (count) {
            bool merge = true;
            for (size_t i = 0; i <= nin; ++i) merge = merge && step[count - 1][i] == s[i] * shape[d];
            if (merge) {
                len[count - 1] *= shape[d];
                step[count - 1] = s;
                continue;
            }
        }
        len[count] = shape[d];
        step[count] = s;
        ++count;
    }
    if (!count) {  // one point
        len[0] = 1;
        step[0] = {};
        count = 1;
    }
    const size_t outer = count - 1;
    char* const dst = destination();
    char* args[3];
    int64_t steps[3];
    for (size_t i = 0; i <= nin; ++i) steps[i] = step[outer][i];
    int64_t at[kLoopDims] = {0};  // the odometer over the outer dimensions
    constexpr int kReported = FE_DIVBYZERO | FE_OVERFLOW | FE_INVALID | FE_UNDERFLOW;
    std::feclearexcept(kReported);
    for (;;) {
        for (size_t i = 0; i <= nin; ++i) {
            int64_t off = 0;
            for (size_t d = 0; d < outer; ++d) off += at[d] * step[d][i];
            args[i] = (i < nin ? const_cast<char*>(in[i].data) : dst) + off;
        }
        l->loop(args, &len[outer], steps, l->data);
        // Some loops report errors as Python exceptions (an integer to a
        // negative power): NumPy's call would raise the same.
        if (PyErr_Occurred()) throw py::error_already_set();
        size_t d = outer;
        while (d > 0 && ++at[d - 1] == len[d - 1]) at[--d] = 0;
        if (d == 0) break;
    }
    return !std::fetestexcept(kReported);
}

// Small work on values already in host memory, computed by NumPy now: a
// lazy node and a later evaluation cost tens of microseconds where NumPy
// spends one or two (a Python loop over rows or small slices pays this per
// step), and NumPy's loops give NumPy's values by construction -- and
// NumPy's floating-point warnings (RuntimeWarning for 1/0), as NumPy does
// (suppressing them costs more than the op). Up to the eager threshold
// (GPUPY_EAGER_ELEMENTS, set_eager_threshold; 0 keeps all work lazy).
// NumPy's inner loop directly when it can (above), else NumPy's call with
// its result written straight into a new node's host memory (out= of the
// dtype gpupy resolved, with casting="safe"): no copy of the result
// afterwards, which at the eager threshold's size cost as much as NumPy's
// loop. Should NumPy's loop have
// another output dtype, the safe cast refuses it (a TypeError, raised
// before any element is computed) and NumPy's own result is copied.
std::optional<GpuArray> small_on_host(OpCode op, const Loop& loop, const std::vector<Operand>& ops,
                                      const Dims& shape, const MemoryOrder& order) {
    if (shape_size(shape) > Runtime::get().eager_elements()) return std::nullopt;
    const DType out = loop.out;
    {
        // The node is made only once the loop has run cleanly.
        std::shared_ptr<HostBuffer> buf;
        auto destination = [&] {
            buf = std::make_shared<HostBuffer>(static_cast<size_t>(shape_size(shape) * dtype_itemsize(out)));
            return buf->data();
        };
        if (run_numpy_loop(op, loop, ops, shape, order, destination)) {
            ++stats().eager_numpy_ops;
            ++stats().direct_numpy_loops;
            return of_ordered(NodeFactory::array(out, permuted_shape(shape, order), std::move(buf)), order);
        }
    }
    std::vector<PyObject*> argv;
    argv.reserve(ops.size() + 2);
    if (!host_operands(ops, &argv)) return std::nullopt;
    ++stats().eager_numpy_ops;
    NodeRef node = NodeFactory::array_uninitialized(out, permuted_shape(shape, order));
    py::object dst = host_ndarray(node.get(), ViewGeometry{0, shape, order_strides(shape, order)}, true);
    static PyObject* const kwnames = Py_BuildValue("(ss)", "out", "casting");
    static PyObject* const safe = PyUnicode_InternFromString("safe");
    const size_t nargs = argv.size();
    argv.push_back(dst.ptr());
    argv.push_back(safe);
    PyObject* r = PyObject_Vectorcall(numpy_ufunc(op).ptr(), argv.data(), nargs, kwnames);
    argv.resize(nargs);
    if (r) {
        Py_DECREF(r);  // dst itself
        for (PyObject* a : argv) Py_DECREF(a);
        return of_ordered(std::move(node), order);
    }
    if (!PyErr_ExceptionMatches(PyExc_TypeError)) {
        for (PyObject* a : argv) Py_DECREF(a);
        throw py::error_already_set();
    }
    PyErr_Clear();
    return from_numpy_result(call_numpy_ufunc(op, argv, nullptr));
}

// Small in-place work on host values (`y[:k] += v` in a loop): NumPy's
// loop writes straight into the output's host memory -- no result node, no
// copy, no write-back -- when the output may be overwritten there now
// (writable_in_place) and has the result's shape. NumPy's own out= rules
// apply (overlapping operands are buffered by NumPy, as for ndarrays).
constexpr int64_t kDirectInPlaceBytes = 64 << 10;  // L2-resident: the temporary costs little

bool small_in_place(OpCode op, const Loop& loop, const std::vector<Operand>& ops, const Dims& shape,
                    const GpuArray& out) {
    if (shape != out.geom.shape || shape_size(shape) > Runtime::get().eager_elements()) return false;
    Node* target = writable_in_place(out);
    if (!target) return false;
    const int64_t n = shape_size(shape);
    const int64_t bytes = n * dtype_itemsize(loop.out);
    if (loop.out == out.dtype() && bytes <= kDirectInPlaceBytes) {
        // NumPy's loop into a temporary (an operand may overlap the output,
        // and a loop that raised a flag leaves the target untouched for
        // NumPy's call), then one scatter into the target's memory. Larger
        // results go to NumPy's call, which writes in place: there the
        // temporary's extra pass would cost more than the call saves.
        std::unique_ptr<char[]> values;
        auto destination = [&] {
            values.reset(new char[static_cast<size_t>(bytes)]);  // bytes > 0: empty results never get here
            return values.get();
        };
        if (run_numpy_loop(op, loop, ops, shape, MemoryOrder{}, destination)) {
            forget_old_values(target);
            scatter_to_host(target, out.geom, 0, n, values.get());
            ++stats().eager_numpy_ops;
            ++stats().direct_numpy_loops;
            return true;
        }
    }
    std::vector<PyObject*> argv;
    argv.reserve(ops.size() + 1);
    if (!host_operands(ops, &argv)) return false;
    py::object dst = host_ndarray(target, out.geom, true);
    forget_old_values(target);
    call_numpy_ufunc(op, argv, dst.ptr());
    ++stats().eager_numpy_ops;
    return true;
}

}  // namespace

// Never released: it may be used until the interpreter ends.
py::handle numpy_ufunc(OpCode op) {
    static std::vector<PyObject*>* table = new std::vector<PyObject*>(GPUPY_NUM_OPS, nullptr);
    PyObject*& f = (*table)[static_cast<size_t>(op)];
    if (!f) f = py::object(py::module_::import("numpy").attr(op_numpy_name(op))).release().ptr();
    return f;
}

namespace {

// A ufunc with an operand of another library (NEP 13): NumPy's ufunc,
// whose override dispatch gives that library the call (GpuArray's own
// __array_ufunc__ hands it over, _deferral.hand_over_ufunc), so `g + series`
// is a Series with its index as `ndarray + series` is. NotImplemented where
// the library opts out of ufuncs (__array_ufunc__ = None): Python then asks
// its reflected operator.
py::object defer_to_override(OpCode op, const std::vector<py::handle>& args, py::handle foreign) {
    py::object protocol = py::getattr(py::type::handle_of(foreign), "__array_ufunc__");
    if (protocol.is_none()) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
    py::tuple argv(args.size());
    for (size_t i = 0; i < args.size(); ++i) argv[i] = args[i];
    return numpy_ufunc(op)(*argv);
}

}  // namespace

py::object apply_ufunc(OpCode op, const std::vector<py::handle>& args, py::handle out, bool as_operator) {
    // `a ** 2` is NumPy's square of a (ndarray.__pow__'s fast path), whose
    // loop differs from power's for booleans (int8, where power gives int64).
    if (op == GPUPY_OP_POWER && as_operator && is_gpuarray(args[0]) && !is_scalar_result(args[0]) &&
        PyLong_CheckExact(args[1].ptr())) {
        int overflow = 0;
        if (PyLong_AsLongAndOverflow(args[1].ptr(), &overflow) == 2 && !overflow)
            return apply_ufunc(GPUPY_OP_SQUARE, {args[0]}, out, false);
    }
    // A read-only output is refused first, as NumPy refuses it.
    if (out && is_gpuarray(out) && !gpuarray_ref(out).writeable) throw ValueError("output array is read-only");
    if (std::all_of(args.begin(), args.end(), is_host_number))
        return numbers_in_numpy(op, args, out, out && is_gpuarray(out) ? &gpuarray_ref(out) : nullptr);
    std::vector<Operand> ops;
    ops.reserve(args.size());
    bool unsupported = false;
    // With out= (`g += series`), the other library's operand is read as an
    // array: the result is the gpupy array written into.
    const bool defer_foreign = !out || out.is_none();
    for (py::handle a : args) {
        ops.push_back(classify(a, defer_foreign));
        if (ops.back().kind == Operand::Foreign) return defer_to_override(op, args, a);
        if (ops.back().kind == Operand::Unknown) {
            // `g == None` compares elementwise in NumPy; other operators
            // with unknown types are NotImplemented (a TypeError).
            if (op == GPUPY_OP_EQUAL || op == GPUPY_OP_NOT_EQUAL) {
                // None, strings and objects with identity equality never
                // equal a number: NumPy's answer is known without computing.
                // Objects with their own __eq__ go to NumPy's object loop.
                py::handle other = args[0].ptr() == a.ptr() ? args[1] : args[0];
                PyObject* u = a.ptr();
                const bool identity_eq = Py_TYPE(u)->tp_richcompare == PyBaseObject_Type.tp_richcompare;
                if ((u == Py_None || PyUnicode_Check(u) || identity_eq) && is_gpuarray(other) && !out) {
                    const GpuArray& g = gpuarray_ref(other);
                    const bool value = op == GPUPY_OP_NOT_EQUAL;
                    NodeView c = constant_view(NodeFactory::constant(GPUPY_BOOL, scalar_from_int(GPUPY_BOOL, value)),
                                               g.geom.shape);
                    return wrap_result(GpuArray::of(NodeFactory::expression(GPUPY_OP_CAST, GPUPY_BOOL, g.geom.shape, {c})));
                }
                return call_numpy(op == GPUPY_OP_EQUAL ? "ndarray.__eq__" : "ndarray.__ne__", args, out);
            }
            return py::reinterpret_borrow<py::object>(Py_NotImplemented);
        }
        if (ops.back().kind == Operand::Unsupported) unsupported = true;
    }
    const char* name = op_display_name(op);
    GpuArray out_arr;
    const bool has_out = out && !out.is_none();
    if (has_out) {
        if (is_gpuarray(out)) {
            out_arr = gpuarray_ref(out);
        } else if (lends_in_place(out) && PyArray_ISWRITEABLE(reinterpret_cast<PyArrayObject*>(out.ptr()))) {
            // An ndarray out= is written in place, through its own memory.
            out_arr = lend_ndarray(out, Lending::Shared);
        } else {
            unsupported = true;
        }
        if (!unsupported && !out_arr.writeable) throw ValueError("output array is read-only");
    }
    if (unsupported) return call_numpy(name, args, out);
    Loop loop = resolve_loop(op, ops);
    if (!loop.representable) return call_numpy(name, args, out);
    // NumPy's order of refusals: a weak Python scalar that does not fit the
    // loop (OverflowError), then the output's dtype (TypeError), then the
    // shapes (ValueError). Out-of-range comparisons NumPy computes exactly.
    try {
        for (size_t i = 0; i < ops.size(); ++i) {
            if (ops[i].kind == Operand::PyInt || ops[i].kind == Operand::PyFloat) weak_value(ops[i], loop.in[i]);
        }
    } catch (const OverflowError&) {
        if (op_is_predicate(op)) return call_numpy(name, args, out);
        throw;
    }
    if (has_out) check_output_cast(loop.out, out_arr, name);
    // The result's shape; in the common case (operands of one shape, or
    // scalars) without building the list of shapes.
    const Dims* common = nullptr;
    bool one_shape = true;
    for (const Operand& o : ops) {
        if (o.kind != Operand::Array || o.pending_constant || o.arr().geom.shape.empty()) continue;
        const Dims& s = o.arr().geom.shape;
        if (!common) common = &s;
        else if (s != *common) one_shape = false;
    }
    auto all_shapes = [&] {
        std::vector<Dims> shapes;
        for (const Operand& o : ops) shapes.push_back(operand_shape(o));
        return shapes;
    };
    const Dims shape = one_shape ? (common ? *common : Dims{}) : broadcast_shapes(all_shapes());
    if (has_out && shape != out_arr.geom.shape) check_output_shape(out_arr.geom.shape, all_shapes());
    if (has_out && small_in_place(op, loop, ops, shape, out_arr)) return py::reinterpret_borrow<py::object>(out);
    // A new result is laid out as NumPy lays it out (memory_order.hpp).
    const MemoryOrder order = has_out ? MemoryOrder{} : result_order(ops, shape);
    if (std::optional<GpuArray> now = small_on_host(op, loop, ops, shape, order)) {
        if (!has_out) return wrap_result(std::move(*now));
        write_output(out_arr, *now, name);
        return py::reinterpret_borrow<py::object>(out);
    }
    // (The small host paths above are NumPy's loops, which check for errors themselves.)
    FpWarnings fp;
    if (may_raise_fp_error(op, loop.out, loop.in[0])) {
        const NumpyFpState& state = numpy_fp_state();
        if (state.numpy_acts) {
            return call_numpy(name, args, out, kErrstateReason);
        }
        fp = FpWarnings{state.warn, op};
    }
    std::vector<NodeView> children;
    children.reserve(ops.size());
    for (size_t i = 0; i < ops.size(); ++i) children.push_back(child_view(ops[i], loop.in[i], shape, order));
    const Dims stored = permuted_shape(shape, order);
    if (ops.size() == 2 && loop.in[0] != loop.in[1]) {
        // NumPy 2 compares uint64 with int64 exactly (mixed loops); the op
        // table has one operand dtype, so spell it out with the sign test.
        if (op_is_predicate(op) && dtype_is_integer(loop.in[0]) && dtype_is_integer(loop.in[1])) {
            GpuArray result = of_ordered(mixed_sign_compare(op, children[0], children[1], loop.in[0], stored), order);
            if (has_out) {
                write_output(out_arr, result, name);
                return py::reinterpret_borrow<py::object>(out);
            }
            return wrap_result(std::move(result));
        }
        return call_numpy(name, args, out);
    }
    OpCode node_op = op;
    if (op == GPUPY_OP_POWER) {
        const PowerPlan plan = plan_power(constant_exponent(ops[1]), dtype_is_float(loop.out));
        if (plan.needs_numpy) return call_numpy(name, args, out);
        node_op = plan.op;
        if (plan.drop_exponent) children.pop_back();
        // NumPy's `a ** 2` is its square (and warns as "square"); np.power(a, 2)
        // stays "power".
        if (as_operator) fp.ufunc = node_op;
    }
    GpuArray result = of_ordered(elementwise(node_op, loop.out, stored, std::move(children), fp), order);
    if (has_out) {
        write_output(out_arr, result, name);
        return py::reinterpret_borrow<py::object>(out);
    }
    return wrap_result(std::move(result));
}

// Whether the NumPy in use converts a Python int operand of where() to the
// result dtype with an unsafe cast (wrapping: NumPy up to 2.4) rather than
// as its ufuncs do (OverflowError where it does not fit: NumPy 2.5). Asked
// of NumPy once, with an int8 array and 1000.
bool numpy_where_wraps_ints() {
    static const bool wraps = [] {
        py::module_ numpy = py::module_::import("numpy");
        try {
            numpy.attr("where")(true, numpy.attr("zeros")(1, "int8"), 1000);
            return true;
        } catch (py::error_already_set& e) {
            if (e.matches(PyExc_OverflowError)) return false;
            throw;
        }
    }();
    return wraps;
}

py::object apply_where(py::handle cond, py::handle x, py::handle y) {
    Operand oc = classify(cond), ox = classify(x), oy = classify(y);
    for (const Operand* o : {&oc, &ox, &oy}) {
        if (o->kind == Operand::Unknown || o->kind == Operand::Unsupported)
            return call_numpy("where", {cond, x, y}, py::handle());
    }
    // NumPy's promotion of the two value operands, weak scalars included.
    auto rt_arg = [](const Operand& o) -> py::object {
        if (o.kind == Operand::Array) return numpy_dtype(o.dtype());
        return py::reinterpret_borrow<py::object>(o.obj);
    };
    static py::handle result_type = py::object(py::module_::import("numpy").attr("result_type")).release();
    const DType t = dtype_from_object(result_type(rt_arg(ox), rt_arg(oy)));
    if (t < 0) return call_numpy("where", {cond, x, y}, py::handle());
    const Dims shape = broadcast_shapes({operand_shape(oc), operand_shape(ox), operand_shape(oy)});
    if (shape_size(shape) <= Runtime::get().eager_elements()) {
        // Small and on the host: NumPy's where at once, as small ufuncs.
        std::vector<PyObject*> argv;
        if (host_operands({oc, ox, oy}, &argv)) {
            static py::handle numpy_where = py::object(py::module_::import("numpy").attr("where")).release();
            PyObject* r = PyObject_Vectorcall(numpy_where.ptr(), argv.data(), argv.size(), nullptr);
            for (PyObject* a : argv) Py_DECREF(a);
            if (!r) throw py::error_already_set();
            ++stats().eager_numpy_ops;
            return py::cast(from_numpy_result(py::reinterpret_steal<py::object>(r)));
        }
    }
    const MemoryOrder order = result_order({oc, ox, oy}, shape);
    const Dims stored = permuted_shape(shape, order);
    std::vector<NodeView> children;
    if (oc.kind != Operand::Array) {
        // A Python int/float condition: its truth value.
        const bool truth = PyObject_IsTrue(oc.obj.ptr()) == 1;
        children.push_back(constant_view(NodeFactory::constant(GPUPY_BOOL, scalar_from_int(GPUPY_BOOL, truth)), stored));
    } else {
        children.push_back(child_view(oc, GPUPY_BOOL, shape, order));
    }
    const bool wrap = numpy_where_wraps_ints();
    children.push_back(child_view(ox, t, shape, order, wrap));
    children.push_back(child_view(oy, t, shape, order, wrap));
    return py::cast(of_ordered(NodeFactory::expression(GPUPY_OP_WHERE, t, stored, std::move(children)), order));
}

void assign_value(const GpuArray& target, py::handle value) {
    if (!target.writeable) throw ValueError("assignment destination is read-only");
    const DType t = target.dtype();
    GpuArray v;
    PyObject* p = value.ptr();
    if (PyLong_Check(p) || PyFloat_Check(p) || PyBool_Check(p) ||
        (PyArray_IsScalar(p, Generic) && !is_gpuarray(value))) {
        v = GpuArray::of(NodeFactory::constant(t, scalar_from_python(value, t)));
    } else {
        Operand o = PyList_Check(p) || PyTuple_Check(p) ? Operand{} : classify(value);
        if (o.kind != Operand::Array) {
            // Something NumPy can convert (or reject with its own message).
            py::object arr = py::module_::import("numpy").attr("asarray")(value, numpy_dtype(t));
            // NumPy reads a nested sequence no deeper than the target (an
            // array value, by contrast, broadcasts with its leading 1s dropped).
            if ((PyList_Check(p) || PyTuple_Check(p)) && PyArray_NDIM(reinterpret_cast<PyArrayObject*>(arr.ptr())) > target.ndim()) {
                throw ValueError("setting an array element with a sequence. The requested array would exceed the "
                                 "maximum number of dimension of " + std::to_string(target.ndim()) + ".");
            }
            o = classify(arr);
            if (o.kind != Operand::Array) throw TypeError("cannot assign this value to a gpupy array");
        }
        v = o.arr();
    }
    if (v.dtype() != t && !target.is_whole() && small_host_array(target)) {
        // A small partial write of host values of another dtype (a float64
        // sum into a float32 output, `out[:, i, j, :] = np.sum(...)` in a
        // loop): NumPy's setitem casts and writes into the target's host
        // memory at once; as a lazy cast it cost an evaluation per write.
        if (py::object host = host_values(v)) {
            write_on_host(target, py::handle(Py_Ellipsis), host);
            ++stats().eager_numpy_ops;
            return;
        }
    }
    assign(target, v.node_view());
}

// `a op= b` is NumPy's `ufunc(a, b, out=a)`: the loop and the output's
// casting are checked before the shapes, exactly as for an explicit out=.
py::object inplace(OpCode op, py::object self, py::handle value) {
    py::object r = apply_ufunc(op, {self, value}, self, true);
    if (r.is(py::handle(Py_NotImplemented))) return r;
    return self;
}

void register_ops(py::module_& m) {
    m.def("_set_numpy_fallback", [](py::object f) { numpy_fallback() = std::move(f); });
    m.def(
        "ufunc",
        [](const std::string& name, py::args args, py::object out) {
            const OpCode op = op_from_numpy_name(name);
            if (op == GPUPY_OP_NONE || op_is_internal(op))
                throw ValueError("gpupy has no elementwise op '" + name + "'");
            if (static_cast<int>(args.size()) != op_arity(op)) {
                throw TypeError(name + "() takes from " + std::to_string(op_arity(op)) + " to " +
                                std::to_string(op_arity(op) + 1) + " positional arguments but " +
                                std::to_string(args.size()) + " were given");
            }
            std::vector<py::handle> hs(args.begin(), args.end());
            return apply_ufunc(op, hs, out);
        },
        py::arg("name"), py::kw_only(), py::arg("out") = py::none());
    m.def("where", &apply_where);
    m.def("host_call", &host_call);
    m.def("ufunc_names", [] {
        py::list names;
        for (const gpupy_op_row& row : gpupy_op_rows) {
            if (!op_is_internal(row.code)) names.append(row.numpy_name);
        }
        return names;
    });
    // The op table (ops.def) as the core was built with it, for tests and
    // introspection: one dict per row.
    m.def("op_table", [] {
        static const char* const folds[] = {"none", "zero", "one", "all_ones", "lowest", "highest",
                                            "nan_or_lowest", "nan_or_highest"};
        py::list rows;
        for (const gpupy_op_row& r : gpupy_op_rows) {
            py::dict d;
            d["code"] = r.code;
            d["name"] = r.name;
            d["numpy_name"] = r.numpy_name;
            d["arity"] = r.arity;
            d["commutative"] = (r.flags & GPUPY_OPF_COMMUTATIVE) != 0;
            d["predicate"] = (r.flags & GPUPY_OPF_PREDICATE) != 0;
            d["internal"] = (r.flags & GPUPY_OPF_INTERNAL) != 0;
            d["math"] = (r.flags & GPUPY_OPF_MATH) != 0;
            d["fold"] = folds[r.fold_start];
            rows.append(d);
        }
        return rows;
    });
    m.def("dtype_table", [] {
        py::list rows;
        for (const gpupy_dtype_row& r : gpupy_dtype_rows) rows.append(py::make_tuple(r.code, r.numpy_name, r.itemsize));
        return rows;
    });
    m.def("ufunc_arity", [](const std::string& name) {
        const OpCode op = op_from_numpy_name(name);
        if (op == GPUPY_OP_NONE) throw ValueError("unknown op " + name);
        return op_arity(op);
    });
}

}  // namespace gpupy
