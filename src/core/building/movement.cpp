#include "core/building/movement.hpp"

#include <string>
#include <utility>

#include "core/building/elementwise.hpp"
#include "core/building/views.hpp"
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
    std::vector<NodeView> parts;
    for (const GpuArray& p : arrays) {
        NodeView v = p.node_view();
        v.geom = swap0(v.geom, ax);
        parts.push_back(std::move(v));
    }
    NodeView joined = concat0(std::move(parts), t);
    GpuArray r = GpuArray::of_view(joined);
    r.geom = swap0(r.geom, ax);
    // NumPy's result is C-ordered, so its reshapes are views of it that see
    // later writes; joined along another axis than 0 it is a swapped view
    // here, so it gets the C layout of its own (a lazy copy, fused).
    const Dims c = c_strides(r.geom.shape);
    for (int d = 0; d < nd; ++d) {
        if (r.geom.shape[d] > 1 && r.geom.strides[d] != c[d]) return lazy_copy(r);
    }
    return r;
}

GpuArray remap(const GpuArray& a, const Dims& shape, const Dims& div, const Dims& mod) {
    const Dims& s = shape;
    const int nd = static_cast<int>(s.size());
    if (a.ndim() != nd || static_cast<int>(div.size()) != nd || static_cast<int>(mod.size()) != nd)
        throw ValueError("remap: operand, shape, div and mod must have the same number of dimensions");
    for (int d = 0; d < nd; ++d) {
        if (div[d] < 1 || mod[d] < 0) throw ValueError("remap: div must be >= 1 and mod >= 0");
        int64_t reach = s[d] > 0 ? (s[d] - 1) / div[d] : 0;
        if (mod[d]) reach = std::min(reach, mod[d] - 1);
        if (s[d] > 0 && reach >= a.geom.shape[d]) throw ValueError("remap reads outside its operand");
    }
    RemapParams p{div, mod};
    return GpuArray::of(NodeFactory::remap(a.dtype(), s, a.node_view(), p));
}

}  // namespace gpupy
