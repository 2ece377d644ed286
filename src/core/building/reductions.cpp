#include "core/building/reductions.hpp"

#include <algorithm>
#include <string>

#include "core/building/elementwise.hpp"
#include "core/building/movement.hpp"
#include "core/building/views.hpp"
#include "core/graph/memory_order.hpp"
#include "core/graph/node_factory.hpp"
#include "core/runtime/errors.hpp"
#include "core/runtime/runtime.hpp"

namespace gpupy {

// The binary op a reduction folds with: a row of ops.def with a FOLD value.
OpCode fold_op(const std::string& name) {
    const OpCode op = op_from_numpy_name(name);
    if (!op_folds(op)) throw ValueError("gpupy has no device reduction for '" + name + "'");
    return op;
}

namespace {

// A chunk size: at most `requested`, at most a block (a chunk must not
// span more than two blocks of the domain), at least 1.
int64_t chunk_for(int64_t requested, int64_t inner) {
    const int64_t B = Runtime::get().cache().block_size();
    return std::max<int64_t>(1, std::min({requested, inner, B}));
}

// `v` stored contiguously (a copy node) and viewed as `rows` x `cols`.
NodeView as_rows(const NodeView& v, int64_t rows, int64_t cols) {
    NodeRef copy = NodeFactory::expression(GPUPY_OP_CAST, v.node->dtype(), v.geom.shape, {v});
    const Dims flat{rows, cols};
    return NodeView{copy, ViewGeometry{0, flat, c_strides(flat)}};
}

// Folds the last `ndim` dims of `v` (shape outer ++ inner) down to one
// value per outer index, chunk by chunk: a chain of REDUCE nodes, each
// reading many elements per output (not Accelerator's four).
NodeView reduce_trailing(NodeView v, int ndim, OpCode fold, DType t, int64_t chunk, const FpWarnings& fp) {
    const Dims shape = v.geom.shape;
    const Dims outer(shape.begin(), shape.end() - ndim);
    int64_t inner = 1;
    for (size_t d = outer.size(); d < shape.size(); ++d) inner *= shape[d];
    if (shape.size() > GPUPY_MAX_DIMS && inner > 0 && shape_size(outer) > 0) {
        // A reduction's domain is its operand, and an IR holds at most
        // GPUPY_MAX_DIMS dims: store the operand contiguously first (an
        // elementwise pass, whose domain folds), read it as (outer, inner).
        NodeView flat = as_rows(v, shape_size(outer), inner);
        NodeView r = reduce_trailing(flat, 1, fold, t, chunk, fp);
        r.geom = ViewGeometry{r.geom.offset, outer, c_strides(outer)};
        return r;
    }
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
        mark_fp_checks(r.get(), fp);
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

// `v` as a node stored in `order`: `v` itself where its node is already
// stored so, else a copy.
NodeView stored_in(NodeView v, DType t, const MemoryOrder& order) {
    if (order.empty() || is_identity_view(permuted(v.geom, order), v.node->shape())) return v;
    const Dims shape = v.geom.shape;
    NodeRef copy = NodeFactory::expression(GPUPY_OP_CAST, t, permuted_shape(shape, order), {permuted(std::move(v), order)});
    return NodeView{copy, ViewGeometry{0, shape, order_strides(shape, order)}};
}

// The transpose (views.hpp) that lists a node's leading n axes -- the
// operand's axes order[0], ..., order[n - 1] -- in the operand's own order.
std::vector<int> kept_positions(const MemoryOrder& order, int n) {
    std::vector<int> pos(static_cast<size_t>(n));
    for (int k = 0; k < n; ++k) pos[static_cast<size_t>(k)] = k;
    std::sort(pos.begin(), pos.end(), [&](int x, int y) { return order[static_cast<size_t>(x)] < order[static_cast<size_t>(y)]; });
    return pos;
}

// Inclusive scan with `fold` along the last dim of `v` (any shape, ndim >=
// 1), its result stored in `out` (memory_order.hpp: NumPy's layout of the
// result, in v's numbering of the axes; empty: C order).
NodeView scan_last(NodeView v, OpCode fold, DType t, int64_t chunk_req, const FpWarnings& fp,
                   const MemoryOrder& out = {}) {
    const Dims shape = v.geom.shape;
    const int nd = static_cast<int>(shape.size());
    const int64_t n = shape.back();
    if (shape_size(shape) == 0) {
        NodeRef empty = NodeFactory::expression(GPUPY_OP_CAST, t, permuted_shape(shape, out), {permuted(v, out)});
        return NodeView{empty, ViewGeometry{0, shape, order_strides(shape, out)}};
    }
    if (nd > GPUPY_MAX_DIMS) {
        // As in reduce_trailing: scan the operand stored as (outer, n).
        NodeView r = scan_last(as_rows(v, shape_size(shape) / n, n), fold, t, chunk_req, fp);
        r.geom = ViewGeometry{r.geom.offset, shape, c_strides(shape)};
        return stored_in(r, t, out);
    }
    const int64_t chunk = chunk_for(chunk_req, n);
    ReduceParams p;
    p.fold = fold;
    p.mode = GPUPY_REDUCE_PREFIX;
    p.ndim = 1;
    p.chunk = chunk;
    p.identity = op_fold_start(fold, t);
    NodeView local{NodeFactory::reduce(t, shape, v, p), identity_view(shape)};
    mark_fp_checks(local.node.get(), fp);
    if (n <= chunk) return stored_in(local, t, out);
    // Totals of whole chunks, scanned (recursively: far fewer of them),
    // shifted by one chunk: what every element of a chunk must add.
    Dims outer(shape.begin(), shape.end() - 1);
    const int64_t nchunks = (n + chunk - 1) / chunk;
    ReduceParams q = p;
    q.mode = GPUPY_REDUCE_CHUNKS;
    Dims tshape = outer;
    tshape.push_back(nchunks);
    NodeView totals{NodeFactory::reduce(t, tshape, v, q), identity_view(tshape)};
    mark_fp_checks(totals.node.get(), fp);
    NodeView running = scan_last(totals, fold, t, chunk_req, fp);
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
    RemapParams rp = RemapParams::identity(nd);
    rp.div[last] = chunk;
    NodeView carry{NodeFactory::remap(t, shape, exclusive, rp), identity_view(shape)};
    // The last step is elementwise: it writes the result in `out` at no cost.
    NodeRef sum = NodeFactory::expression(fold, t, permuted_shape(shape, out), {permuted(carry, out), permuted(local, out)});
    mark_fp_checks(sum.get(), fp);
    return NodeView{sum, ViewGeometry{0, shape, order_strides(shape, out)}};
}

}  // namespace

GpuArray reduce(const GpuArray& a, OpCode fold, const std::vector<int64_t>& axes, DType t, int64_t chunk,
                const FpWarnings& fp) {
    std::vector<int> ax;
    std::vector<bool> seen(a.ndim(), false);
    for (int64_t h : axes) {
        const int n = normalize_axis(h, a.ndim());
        if (seen[n]) throw ValueError("duplicate value in 'axis'");
        seen[n] = true;
        ax.push_back(n);
    }
    if (ax.empty()) {
        // Folding nothing: each value folded into the start value, as NumPy
        // does (a float sum of -0.0 is +0.0, 0.0 + -0.0).
        const MemoryOrder order = order_of(a.geom);
        const NodeView x = cast_view(permuted(a.node_view(), order), t);
        const NodeView start = constant_view(NodeFactory::constant(t, op_fold_start(fold, t)), x.geom.shape);
        return of_ordered(elementwise(fold, t, x.geom.shape, {start, x}, fp), order);
    }
    // The folded axes last, the kept ones in the operand's memory order: the
    // result is laid out as NumPy lays out a reduction's (the kept axes'
    // order in the operand), and the fold reads its operand in that order.
    const MemoryOrder order = with_axes_last(order_of(a.geom), a.ndim(), ax);
    NodeView v = cast_view(permuted(a.node_view(), order), t);
    NodeView r = reduce_trailing(v, static_cast<int>(ax.size()), fold, t, chunk, fp);
    // The result's axes back in the operand's order: a view.
    return transpose(GpuArray::of_view(r), kept_positions(order, a.ndim() - static_cast<int>(ax.size())));
}

GpuArray scan(const GpuArray& a, OpCode fold, int64_t axis, DType t, int64_t chunk, const FpWarnings& fp) {
    const int nd = a.ndim();
    const int ax = normalize_axis(axis, nd);
    // The scan runs along its last axis, the others in the operand's memory
    // order; its result is laid out in the operand's order (NumPy's), which
    // need not have the scanned axis last.
    const MemoryOrder own = order_of(a.geom);
    const MemoryOrder order = with_axes_last(own, nd, {ax});
    MemoryOrder out(static_cast<size_t>(nd));  // `own` in the scan's numbering of the axes
    for (int k = 0; k < nd; ++k) {
        const int d = own.empty() ? k : own[static_cast<size_t>(k)];
        out[static_cast<size_t>(k)] = static_cast<int>(std::find(order.begin(), order.end(), d) - order.begin());
    }
    NodeView v = cast_view(permuted(a.node_view(), order), t);
    NodeView r = scan_last(v, fold, t, chunk, fp, out);
    return transpose(GpuArray::of_view(r), kept_positions(order, nd));
}

}  // namespace gpupy
