// Building the non-elementwise nodes from Python: reductions (chains of
// chunked REDUCE nodes), scans (in-chunk prefixes plus carried chunk
// totals), joins (CONCAT) and repeat/tile-like reads (REMAP).
#include <cmath>
#include <limits>

#include <pybind11/stl.h>

#include "core/runtime/errors.hpp"
#include "bindings/numpy_api.hpp"
#include "bindings/py_array.hpp"
#include "core/runtime/runtime.hpp"

namespace gpupy {

namespace {

// The binary op a reduction folds with: a row of ops.def with a FOLD value.
OpCode fold_op(const std::string& name) {
    const OpCode op = op_from_numpy_name(name);
    if (!op_folds(op)) throw ValueError("gpupy has no device reduction for '" + name + "'");
    return op;
}

// A chunk size: at most `requested`, at most a block (a chunk must not
// span more than two blocks of the domain), at least 1.
int64_t chunk_for(int64_t requested, int64_t inner) {
    const int64_t B = Runtime::get().cache().block_size();
    return std::max<int64_t>(1, std::min({requested, inner, B}));
}

// The view of `a` with `axes` moved to the end (in the given order).
NodeView axes_last(const GpuArray& a, const std::vector<int>& axes) {
    std::vector<int> perm;
    std::vector<bool> moved(a.ndim(), false);
    for (int ax : axes) moved[ax] = true;
    for (int d = 0; d < a.ndim(); ++d) {
        if (!moved[d]) perm.push_back(d);
    }
    perm.insert(perm.end(), axes.begin(), axes.end());
    return transpose(a, perm).node_view();
}

NodeView cast_view(NodeView v, DType t) {
    if (v.node->dtype() == t) return v;
    NodeRef c = NodeFactory::expression(GPUPY_OP_CAST, t, v.geom.shape, {v});
    return NodeView{c, identity_view(v.geom.shape)};
}

// Folds the last `ndim` dims of `v` (shape outer ++ inner) down to one
// value per outer index, chunk by chunk: a chain of REDUCE nodes, each
// reading many elements per output (not Accelerator's four).
NodeView reduce_trailing(NodeView v, int ndim, OpCode fold, DType t, int64_t chunk) {
    const Dims& shape = v.geom.shape;
    const Dims outer(shape.begin(), shape.end() - ndim);
    int64_t inner = 1;
    for (size_t d = outer.size(); d < shape.size(); ++d) inner *= shape[d];
    ReduceParams p;
    p.fold = fold;
    p.mode = GPUPY_REDUCE_CHUNKS;
    p.identity = op_fold_start(fold, t);
    if (inner == 0 || shape_size(outer) == 0) {
        NodeView c = constant_view(NodeFactory::constant(t, p.identity), outer);
        return NodeView{NodeFactory::expression(GPUPY_OP_CAST, t, outer, {c}), identity_view(outer)};
    }
    NodeView cur = v;
    int cur_ndim = ndim;
    int64_t n = inner;
    do {
        p.ndim = cur_ndim;
        p.chunk = chunk_for(chunk, n);
        const int64_t nchunks = (n + p.chunk - 1) / p.chunk;
        Dims rshape = outer;
        rshape.push_back(nchunks);
        NodeRef r = NodeFactory::reduce(t, rshape, cur, p);
        cur = NodeView{r, identity_view(rshape)};
        cur_ndim = 1;
        n = nchunks;
    } while (n > 1);
    // Drop the trailing length-1 dimension: a view.
    Dims strides = c_strides(cur.geom.shape);
    strides.pop_back();
    cur.geom = ViewGeometry{0, outer, strides};
    return cur;
}

// A GpuArray owning the node behind `v`, viewed as `v`.
GpuArray owning(const NodeView& v) {
    GpuArray a = GpuArray::of(v.node);
    a.geom = v.geom;
    return a;
}

// Joins views (same dtype; same shape except dim 0) along dim 0.
NodeView concat0(std::vector<NodeView> parts, DType t) {
    Dims shape = parts.at(0).geom.shape;
    shape[0] = 0;
    std::vector<NodeView> kept;
    for (NodeView& p : parts) {
        shape[0] += p.geom.shape[0];
        if (p.geom.shape[0] > 0) kept.push_back(cast_view(std::move(p), t));
    }
    if (kept.size() == 1) return kept[0];
    if (kept.empty()) {
        NodeView c = constant_view(NodeFactory::constant(t, scalar_from_int(t, 0)), shape);
        return NodeView{NodeFactory::expression(GPUPY_OP_CAST, t, shape, {c}), identity_view(shape)};
    }
    return NodeView{NodeFactory::concat(t, shape, std::move(kept)), identity_view(shape)};
}

// Swaps dims 0 and `axis` of a view (its own inverse).
ViewGeometry swap0(ViewGeometry g, int axis) {
    std::swap(g.shape[0], g.shape[axis]);
    std::swap(g.strides[0], g.strides[axis]);
    return g;
}

// Inclusive scan with `fold` along the last dim of `v` (any shape, ndim >= 1).
NodeView scan_last(NodeView v, OpCode fold, DType t, int64_t chunk_req) {
    const Dims shape = v.geom.shape;
    const int nd = static_cast<int>(shape.size());
    const int64_t n = shape.back();
    if (shape_size(shape) == 0) return NodeView{NodeFactory::expression(GPUPY_OP_CAST, t, shape, {v}), identity_view(shape)};
    const int64_t chunk = chunk_for(chunk_req, n);
    ReduceParams p;
    p.fold = fold;
    p.mode = GPUPY_REDUCE_PREFIX;
    p.ndim = 1;
    p.chunk = chunk;
    p.identity = op_fold_start(fold, t);
    NodeView local{NodeFactory::reduce(t, shape, v, p), identity_view(shape)};
    if (n <= chunk) return local;
    // Totals of whole chunks, scanned (recursively: far fewer of them),
    // shifted by one chunk: what every element of a chunk must add.
    Dims outer(shape.begin(), shape.end() - 1);
    const int64_t nchunks = (n + chunk - 1) / chunk;
    ReduceParams q = p;
    q.mode = GPUPY_REDUCE_CHUNKS;
    Dims tshape = outer;
    tshape.push_back(nchunks);
    NodeView totals{NodeFactory::reduce(t, tshape, v, q), identity_view(tshape)};
    NodeView running = scan_last(totals, fold, t, chunk_req);
    // exclusive[c] = running[c - 1], exclusive[0] = identity: a join along
    // the last dim, built as a join along dim 0 of swapped views.
    Dims one = outer;
    one.push_back(1);
    NodeView first = constant_view(NodeFactory::constant(t, p.identity), one);
    NodeView head = running;
    head.geom.shape.back() = nchunks - 1;
    const int last = nd - 1;
    NodeView a{first.node, swap0(first.geom, last)}, b{head.node, swap0(head.geom, last)};
    NodeView exclusive = concat0({a, b}, t);
    exclusive.geom = swap0(exclusive.geom, last);
    // carry[..., r] = exclusive[..., r / chunk]
    RemapParams rp;
    rp.div.assign(nd, 1);
    rp.mod.assign(nd, 0);
    rp.div[last] = chunk;
    NodeView carry{NodeFactory::remap(t, shape, exclusive, rp), identity_view(shape)};
    NodeRef sum = NodeFactory::expression(fold, t, shape, {carry, local});
    return NodeView{sum, identity_view(shape)};
}

std::vector<int> axes_from(py::handle axes, int ndim) {
    std::vector<int> out;
    std::vector<bool> seen(ndim, false);
    for (py::handle h : py::reinterpret_borrow<py::iterable>(axes)) {
        const int a = normalize_axis(py::cast<int64_t>(h), ndim);
        if (seen[a]) throw ValueError("duplicate value in 'axis'");
        seen[a] = true;
        out.push_back(a);
    }
    return out;
}

}  // namespace

void register_structural(py::module_& m) {
    m.def(
        "reduce",
        [](const GpuArray& a, const std::string& fold, py::handle axes, py::handle dtype, int64_t chunk) {
            const DType t = dtype_from_object(dtype);
            if (t < 0) throw TypeError("gpupy cannot reduce into dtype " + std::string(py::str(dtype)));
            const std::vector<int> ax = axes_from(axes, a.ndim());
            const OpCode f = fold_op(fold);
            if (ax.empty()) return astype(a, t);  // folding nothing: each value as it is
            NodeView v = cast_view(axes_last(a, ax), t);
            return owning(reduce_trailing(v, static_cast<int>(ax.size()), f, t, chunk));
        },
        py::arg("array"), py::arg("fold"), py::arg("axes"), py::arg("dtype"), py::arg("chunk") = 256);
    m.def(
        "scan",
        [](const GpuArray& a, const std::string& fold, int axis, py::handle dtype, int64_t chunk) {
            const DType t = dtype_from_object(dtype);
            if (t < 0) throw TypeError("gpupy cannot scan into dtype " + std::string(py::str(dtype)));
            const int ax = normalize_axis(axis, a.ndim());
            NodeView v = cast_view(axes_last(a, {ax}), t);
            NodeView r = scan_last(v, fold_op(fold), t, chunk);
            // Move the scanned axis back where it was: a view.
            std::vector<int> perm;
            for (int d = 0, k = 0; d < a.ndim(); ++d) perm.push_back(d == ax ? a.ndim() - 1 : k++);
            return transpose(owning(r), perm);
        },
        py::arg("array"), py::arg("fold"), py::arg("axis"), py::arg("dtype"), py::arg("chunk") = 256);
    m.def(
        "concatenate",
        [](const std::vector<GpuArray>& arrays, int axis, py::handle dtype) {
            if (arrays.empty()) throw ValueError("need at least one array to concatenate");
            const DType t = dtype_from_object(dtype);
            if (t < 0) throw TypeError("gpupy cannot hold dtype " + std::string(py::str(dtype)));
            const int nd = arrays[0].ndim();
            if (nd == 0) throw ValueError("zero-dimensional arrays cannot be concatenated");
            const int ax = normalize_axis(axis, nd);
            std::vector<NodeView> parts;
            for (size_t i = 0; i < arrays.size(); ++i) {
                const GpuArray& p = arrays[i];
                if (p.ndim() != nd) {
                    throw ValueError("all the input array dimensions except for the concatenation axis must match exactly, "
                                     "but along dimension 0, the array at index 0 has " +
                                     std::to_string(nd) + " dimension(s) and the array at index " + std::to_string(i) +
                                     " has " + std::to_string(p.ndim()) + " dimension(s)");
                }
                for (int d = 0; d < nd; ++d) {
                    if (d != ax && p.geom.shape[d] != arrays[0].geom.shape[d]) {
                        throw ValueError("all the input array dimensions except for the concatenation axis must match "
                                         "exactly, but along dimension " + std::to_string(d) + ", the array at index 0 has size " +
                                         std::to_string(arrays[0].geom.shape[d]) + " and the array at index " + std::to_string(i) +
                                         " has size " + std::to_string(p.geom.shape[d]));
                    }
                }
                NodeView v = p.node_view();
                v.geom = swap0(v.geom, ax);
                parts.push_back(std::move(v));
            }
            NodeView joined = concat0(std::move(parts), t);
            GpuArray r = owning(joined);
            r.geom = swap0(r.geom, ax);
            return r;
        },
        py::arg("arrays"), py::arg("axis"), py::arg("dtype"));
    m.def(
        "remap",
        [](const GpuArray& a, py::handle shape, std::vector<int64_t> div, std::vector<int64_t> mod) {
            const Dims s = shape_from_python(shape);
            const int nd = static_cast<int>(s.size());
            if (a.ndim() != nd || static_cast<int>(div.size()) != nd || static_cast<int>(mod.size()) != nd)
                throw ValueError("remap: operand, shape, div and mod must have the same number of dimensions");
            for (int d = 0; d < nd; ++d) {
                if (div[d] < 1 || mod[d] < 0) throw ValueError("remap: div must be >= 1 and mod >= 0");
                int64_t reach = s[d] > 0 ? (s[d] - 1) / div[d] : 0;
                if (mod[d]) reach = std::min(reach, mod[d] - 1);
                if (s[d] > 0 && reach >= a.geom.shape[d]) throw ValueError("remap reads outside its operand");
            }
            RemapParams p{Dims(div.begin(), div.end()), Dims(mod.begin(), mod.end())};
            return GpuArray::of(NodeFactory::remap(a.dtype(), s, a.node_view(), p));
        },
        py::arg("array"), py::arg("shape"), py::arg("div"), py::arg("mod"));
}

}  // namespace gpupy
