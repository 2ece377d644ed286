// The eager path of ufuncs and np.where: small work on values already in
// host memory is done by NumPy at once -- its inner loop called directly
// where it can be, else its ufunc -- rather than as a lazy node.
#include "bindings/py_eager.hpp"

#include <array>
#include <cstring>

#include "bindings/fp_flags.hpp"
#include "bindings/numpy_api.hpp"
#include "core/building/writes.hpp"
#include "core/execution/evaluator.hpp"
#include "core/memory/host_transfer.hpp"
#include "core/runtime/runtime.hpp"
#include "core/runtime/stats.hpp"

namespace gpupy {

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
            // a number, an ndarray, or the ndarray an array-like became
            argv->push_back(py::reinterpret_borrow<py::object>(o.converted ? o.converted : o.obj).release().ptr());
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

namespace {

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
    if (a.dtype() != t || !values_on_host(a)) return false;
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
    clear_reported_fp_flags();
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
    return !reported_fp_flags_raised();
}

}  // namespace

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
namespace {
constexpr int64_t kDirectInPlaceBytes = 64 << 10;  // L2-resident: the temporary costs little
}  // namespace

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
}  // namespace gpupy
