// Ufuncs, np.where and writes of Python operands: each operand classified
// (py_operands.hpp), NumPy's loop resolved (py_dtype_resolution.hpp), small
// host work done by NumPy at once (py_eager.hpp), anything else built as
// nodes by the core (core/building/), with NumPy's checks for out=.
#include <cmath>
#include <optional>

#include "core/graph/node_factory.hpp"
#include "core/runtime/errors.hpp"
#include "core/execution/evaluator.hpp"
#include "core/execution/fp_errors.hpp"
#include "bindings/numpy_api.hpp"
#include "bindings/py_array.hpp"
#include "bindings/py_dtype_resolution.hpp"
#include "bindings/py_eager.hpp"
#include "bindings/py_operands.hpp"
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

namespace {

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

// Whether the NumPy in use computes `a ** s`, for a float array a and a
// scalar s of 1, -1, 0, 0.5 or 2, by a unary op on a (positive,
// reciprocal, ones_like, sqrt, square), in a's dtype whatever s's
// (NumPy 2.0: float16 ** float32(0.5) is float16; later NumPy promotes,
// float32). Asked of NumPy once.
bool numpy_power_keeps_float_dtype() {
    static const bool keeps = [] {
        py::module_ numpy = py::module_::import("numpy");
        py::object a = numpy.attr("ones")(1, "float16");
        py::object r = a.attr("__pow__")(numpy.attr("float32")(0.5));
        return r.attr("dtype").equal(a.attr("dtype"));
    }();
    return keeps;
}

// NumPy converts a weak Python number to a float loop's dtype as the
// dtype's scalar type does, warning "overflow encountered in cast" (under
// its error state: FloatingPointError with over="raise") where a finite
// number becomes an infinity (float16 + 1e5, float32 * 10**60). Where that
// happens (`v`: the converted value), the conversion is NumPy's own.
void warn_of_cast_overflow(const Operand& o, DType t, const gpupy_scalar& v) {
    if (!dtype_is_float(t) || std::isfinite(v.f)) return;
    const double d = o.kind == Operand::PyFloat ? PyFloat_AS_DOUBLE(o.obj.ptr()) : PyLong_AsDouble(o.obj.ptr());
    if (!std::isfinite(d)) return;  // an infinity or a NaN given: nothing overflowed
    numpy_dtype(t).attr("type")(o.obj);
}

// Where NumPy's `**` takes that shortcut for these operands: the loop in
// the array's dtype.
void keep_float_dtype_of_power(const std::vector<Operand>& ops, Loop* loop) {
    if (ops.size() != 2 || ops[0].kind != Operand::Array || !dtype_is_float(ops[0].dtype())) return;
    const std::optional<double> e = constant_exponent(ops[1]);
    if (!e || !(*e == 1 || *e == -1 || *e == 0 || *e == 0.5 || *e == 2) || !numpy_power_keeps_float_dtype()) return;
    loop->in[0] = loop->in[1] = loop->out = ops[0].dtype();
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

// NumPy's rule for writing a ufunc's result of dtype `result` into an
// output of dtype `target` (every `out=`, the in-place operators, and
// `a @= b` from Python: _core.check_output_cast), in NumPy's words.
void check_output_cast(DType result, DType target, const char* ufunc_name) {
    if (!can_cast_same_kind(result, target)) {
        throw TypeError(std::string("Cannot cast ufunc '") + ufunc_name + "' output from " + dtype_repr(result) +
                        " to " + dtype_repr(target) + " with casting rule 'same_kind'");
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
    check_output_cast(result.dtype(), target.dtype(), ufunc_name);
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
    if (op == GPUPY_OP_POWER && as_operator) keep_float_dtype_of_power(ops, &loop);
    // NumPy's order of refusals: a weak Python scalar that does not fit the
    // loop (OverflowError), then the output's dtype (TypeError), then the
    // shapes (ValueError). Out-of-range comparisons NumPy computes exactly.
    try {
        for (size_t i = 0; i < ops.size(); ++i) {
            if (ops[i].kind == Operand::PyInt || ops[i].kind == Operand::PyFloat)
                warn_of_cast_overflow(ops[i], loop.in[i], weak_value(ops[i], loop.in[i]));
        }
    } catch (const OverflowError&) {
        if (op_is_predicate(op)) return call_numpy(name, args, out);
        throw;
    }
    if (has_out) check_output_cast(loop.out, out_arr.dtype(), name);
    // The result's shape; in the common case (operands of one shape, or
    // scalars) without building the list of shapes.
    std::optional<Dims> common;
    bool one_shape = true;
    for (const Operand& o : ops) {
        Dims s = o.shape();
        if (s.empty()) continue;
        if (!common) common = std::move(s);
        else if (s != *common) one_shape = false;
    }
    auto all_shapes = [&] {
        std::vector<Dims> shapes;
        for (const Operand& o : ops) shapes.push_back(o.shape());
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
    const Dims shape = broadcast_shapes({oc.shape(), ox.shape(), oy.shape()});
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
        const gpupy_scalar element = scalar_from_python(value, t);
        if (!target.is_whole() && fill_in_place(target, element)) return;
        v = GpuArray::of(NodeFactory::constant(t, element));
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
    m.def("check_output_cast", [](const std::string& ufunc_name, const GpuArray& result, const GpuArray& target) {
        check_output_cast(result.dtype(), target.dtype(), ufunc_name.c_str());
    });
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

