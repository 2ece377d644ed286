#include "core/building/movement.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "core/building/elementwise.hpp"
#include "core/building/views.hpp"
#include "core/graph/memory_order.hpp"
#include "core/graph/node_factory.hpp"
#include "core/runtime/errors.hpp"

namespace gpupy {

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

Dims concatenated_shape(const std::vector<GpuArray>& arrays, int axis) {
    if (arrays.empty()) throw ValueError("need at least one array to concatenate");
    const int nd = arrays[0].ndim();
    if (nd == 0) throw ValueError("zero-dimensional arrays cannot be concatenated");
    const int ax = normalize_axis(axis, nd);
    Dims shape = arrays[0].geom.shape;
    shape[ax] = 0;
    for (size_t i = 0; i < arrays.size(); ++i) {
        const GpuArray& p = arrays[i];
        if (p.ndim() != nd) {
            throw ValueError("all the input arrays must have same number of dimensions, but the array at index 0 has " +
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
        shape[ax] += p.geom.shape[ax];
    }
    return shape;
}

GpuArray concatenate(const std::vector<GpuArray>& arrays, int axis, DType t) {
    concatenated_shape(arrays, axis);  // NumPy's refusals
    const int nd = arrays[0].ndim();
    const int ax = normalize_axis(axis, nd);
    // The layout NumPy gives the result (memory_order.hpp), so that its
    // reshapes are views where NumPy's are. The parts are joined along
    // the node's first axis: the joined axis first, the others in that
    // order; where the layout has another axis first, a lazy copy (fused)
    // lays the result out.
    std::vector<const ViewGeometry*> geoms;
    for (const GpuArray& p : arrays) geoms.push_back(&p.geom);
    MemoryOrder order = joined_order(geoms);
    if (order.empty()) {
        for (int d = 0; d < nd; ++d) order.push_back(d);
    }
    MemoryOrder joined_first{ax};
    for (int d : order) {
        if (d != ax) joined_first.push_back(d);
    }
    std::vector<NodeView> parts;
    for (const GpuArray& p : arrays) parts.push_back(permuted(p.node_view(), joined_first));
    NodeView joined = concat0(std::move(parts), t);
    GpuArray r = GpuArray::of_view(joined);
    std::vector<int> back(static_cast<size_t>(nd));
    for (int k = 0; k < nd; ++k) back[static_cast<size_t>(joined_first[static_cast<size_t>(k)])] = k;
    r.geom = permuted(r.geom, back);
    if (joined_first == order && is_identity_view(permuted(r.geom, order), r.node()->shape())) return r;
    return copy_as(r, t, order);
}

namespace {

bool identity_dim(const RemapParams& p, size_t d) {
    return p.div[d] == 1 && p.mod[d] == 0 && p.shift[d] == 0 && p.edge[d] == GPUPY_EDGE_WRAP;
}

bool is_roll_dim(const RemapParams& p, size_t d) {
    return p.div[d] == 1 && p.mod[d] > 0 && p.edge[d] == GPUPY_EDGE_WRAP;
}

// p applied to the result of q (a REMAP node's parameters) as one remap of
// q's operand, where each dimension is remapped by at most one of them or
// both are rolls over the same extent (a torus stencil's roll(roll(x, 1,
// 0), 1, 1) reads x once). Empty if they do not compose.
std::optional<RemapParams> composed(const RemapParams& p, const RemapParams& q) {
    RemapParams r = q;
    for (size_t d = 0; d < p.div.size(); ++d) {
        if (identity_dim(p, d)) continue;
        if (identity_dim(q, d)) {
            r.div[d] = p.div[d];
            r.mod[d] = p.mod[d];
            r.shift[d] = p.shift[d];
            r.edge[d] = p.edge[d];
        } else if (is_roll_dim(p, d) && is_roll_dim(q, d) && p.mod[d] == q.mod[d]) {
            r.shift[d] = (p.shift[d] + q.shift[d]) % p.mod[d];
        } else {
            return std::nullopt;
        }
    }
    return r;
}

// The largest coordinate dimension d of the remap reads (for outputs of
// extent s > 0), or -1 where one is negative.
int64_t reach(const RemapParams& p, size_t d, int64_t s) {
    const int64_t last = (s - 1) / p.div[d] + p.shift[d];
    switch (p.edge[d]) {
        case GPUPY_EDGE_CLAMP: return p.mod[d] - 1;
        case GPUPY_EDGE_REFLECT:
        case GPUPY_EDGE_SYMMETRIC: return p.shift[d] < 0 ? -1 : p.mod[d] - 1;
        default:
            if (p.shift[d] < 0) return -1;
            return p.mod[d] ? std::min(last, p.mod[d] - 1) : last;
    }
}

int64_t floor_mod(int64_t a, int64_t n) { return ((a % n) + n) % n; }

}  // namespace

GpuArray remap(const GpuArray& a, const Dims& shape, RemapParams p) {
    const size_t nd = shape.size();
    if (p.shift.empty()) p.shift.assign(nd, 0);
    if (p.edge.empty()) p.edge.assign(nd, GPUPY_EDGE_WRAP);
    if (a.geom.shape.size() != nd || p.div.size() != nd || p.mod.size() != nd || p.shift.size() != nd ||
        p.edge.size() != nd)
        throw ValueError("remap: operand, shape, div, mod, shift and edge must have the same number of dimensions");
    for (size_t d = 0; d < nd; ++d) {
        // (tile and repeat by a negative count: NumPy's error, at the call)
        if (shape[d] < 0) throw ValueError("negative dimensions are not allowed");
        if (p.div[d] < 1 || p.mod[d] < 0) throw ValueError("remap: div must be >= 1 and mod >= 0");
        const int32_t e = p.edge[d];
        if (e < GPUPY_EDGE_WRAP || e > GPUPY_EDGE_SYMMETRIC) throw ValueError("remap: unknown edge mode");
        if (e != GPUPY_EDGE_WRAP && p.mod[d] < (e == GPUPY_EDGE_REFLECT ? 2 : 1))
            throw ValueError("remap: the edge mode needs a larger mod");
        if (shape[d] > 0) {
            const int64_t r = reach(p, d, shape[d]);
            if (r < 0 || r >= a.geom.shape[d]) throw ValueError("remap reads outside its operand");
        }
    }
    const Node* x = a.node_view().node.get();
    // (A remap written in place has dropped its operand: its values are
    // its own storage now, read as any array's.)
    if (x->op() == CORE_OP_REMAP && x->children().size() == 1 && is_identity_view(a.geom, x->shape())) {
        if (std::optional<RemapParams> r = composed(p, x->remap_params()))
            return GpuArray::of(NodeFactory::remap(a.dtype(), shape, x->children().at(0), *r));
    }
    return GpuArray::of(NodeFactory::remap(a.dtype(), shape, a.node_view(), p));
}

GpuArray gather(const GpuArray& a, const GpuArray& index) {
    if (index.dtype() != GPUPY_INT64) throw ValueError("gather: the index must be int64");
    const NodeRef& source = a.node_view().node;
    if (source->kind() == NodeKind::Constant) {  // one value everywhere
        NodeView c = constant_view(source, index.geom.shape);
        return GpuArray::of(NodeFactory::expression(GPUPY_OP_CAST, a.dtype(), index.geom.shape, {c}));
    }
    NodeView whole{source, identity_view(source->shape())};
    return GpuArray::of(
        NodeFactory::expression(GPUPY_OP_GATHER, a.dtype(), index.geom.shape, {index.node_view(), std::move(whole)}));
}

GpuArray roll(const GpuArray& a, const Dims& shifts) {
    const size_t nd = a.geom.shape.size();
    if (shifts.size() != nd) throw ValueError("roll: one shift per dimension");
    RemapParams p = RemapParams::identity(nd);
    for (size_t d = 0; d < nd; ++d) {
        const int64_t n = a.geom.shape[d];
        if (n == 0 || floor_mod(shifts[d], n) == 0) continue;
        // Element m reads m - shift, wrapped: a non-negative shift of n - s.
        p.mod[d] = n;
        p.shift[d] = floor_mod(-shifts[d], n);
    }
    return remap(a, a.geom.shape, std::move(p));
}

GpuArray pad(const GpuArray& a, const Dims& before, const Dims& after, int32_t edge) {
    const size_t nd = a.geom.shape.size();
    if (before.size() != nd || after.size() != nd) throw ValueError("pad: one width pair per dimension");
    Dims shape = a.geom.shape;
    RemapParams p = RemapParams::identity(nd);
    for (size_t d = 0; d < nd; ++d) {
        const int64_t n = a.geom.shape[d];
        if (before[d] < 0 || after[d] < 0) throw ValueError("index can't contain negative values");
        shape[d] = n + before[d] + after[d];
        if (before[d] == 0 && after[d] == 0) continue;
        if (n == 0) throw ValueError("can't extend empty axis " + std::to_string(d) + " using modes other than 'constant' or 'empty'");
        int32_t e = edge;
        if (e == GPUPY_EDGE_REFLECT && n == 1) e = GPUPY_EDGE_CLAMP;  // one element reflects onto itself
        p.mod[d] = n;
        p.edge[d] = e;
        // Element m reads m - before, brought back inside as the edge says;
        // the periodic edges get a non-negative shift (drivers' remainders
        // truncate).
        const int64_t period = e == GPUPY_EDGE_WRAP ? n : e == GPUPY_EDGE_REFLECT ? 2 * n - 2 : 2 * n;
        p.shift[d] = e == GPUPY_EDGE_CLAMP ? -before[d] : floor_mod(-before[d], period);
    }
    return remap(a, shape, std::move(p));
}

}  // namespace gpupy
