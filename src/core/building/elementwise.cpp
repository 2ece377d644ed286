#include "core/building/elementwise.hpp"

#include <algorithm>
#include <cstring>
#include <memory>

#include "core/building/rewrites.hpp"
#include "core/building/simplify.hpp"
#include "core/graph/memory_order.hpp"
#include "core/graph/host_buffer.hpp"
#include "core/runtime/runtime.hpp"
#include "gpupy/numpy_casts.hpp"

namespace gpupy {

NodeRef cast_constant(const Node* c, DType t) {
    const DType from = c->dtype();
    const gpupy_scalar v = c->value();
    if (dtype_is_float(from)) return NodeFactory::constant(t, scalar_from_double(t, v.f));
    if (from == GPUPY_UINT64) return NodeFactory::constant(t, scalar_from_uint(t, v.u));
    return NodeFactory::constant(t, scalar_from_int(t, v.i));
}

NodeView cast_view(NodeView v, DType t) {
    if (v.node->dtype() == t) return v;
    if (v.node->kind() == NodeKind::Constant) {
        v.node = cast_constant(v.node.get(), t);
        return v;
    }
    NodeRef c = NodeFactory::expression(GPUPY_OP_CAST, t, v.geom.shape, {v});
    return NodeView{c, identity_view(v.geom.shape)};
}

NodeView broadcast_view(NodeView v, const Dims& shape) {
    v.geom.strides = broadcast_strides(v.geom.shape, v.geom.strides, shape);
    v.geom.shape = shape;
    return v;
}

NodeRef elementwise(OpCode op, DType out, const Dims& shape, std::vector<NodeView> operands, const FpWarnings& fp) {
    if (op == GPUPY_OP_SQUARE) operands[0] = without_absolute(std::move(operands[0]));
    if (NodeRef s = simplified(op, out, shape, operands, fp)) return s;
    NodeRef n = NodeFactory::expression(op, out, shape, std::move(operands));
    mark_fp_checks(n.get(), fp);
    return n;
}

GpuArray copy_as(const GpuArray& a, DType t, const MemoryOrder& order) {
    NodeView v = permuted(a.node_view(), order);
    // A copy of a whole node, in the order it is stored in, shares its
    // value: nothing to compute, and host values stay host values
    // (`pn = p.copy()` in a time loop). A write to either copies first
    // (writes.cpp: refcount > 1), as for any node that hash-consing shares.
    if (t == a.dtype() && a.node()->kind() != NodeKind::Constant && is_identity_view(v.geom, a.node()->shape()))
        return of_ordered(a.owner->node, order);
    const Dims stored = v.geom.shape;
    return of_ordered(NodeFactory::expression(GPUPY_OP_CAST, t, stored, {std::move(v)}), order);
}

GpuArray astype(const GpuArray& a, DType t) { return copy_as(a, t, like_order(a.geom)); }

GpuArray lazy_copy(const GpuArray& a) { return copy_as(a, a.dtype(), MemoryOrder{}); }

GpuArray filled(const Dims& shape, DType t, gpupy_scalar value) {
    const int64_t n = shape_size(shape);
    if (n > 0 && n <= Runtime::get().eager_elements()) {
        // Small: filled in host memory now, like the results of small ops
        // on host values (zeros_like(u) then b[1:-1, 1:-1] = ... in a loop
        // would otherwise evaluate the fill at the first write).
        const size_t item = static_cast<size_t>(dtype_itemsize(t));
        auto buf = std::make_shared<HostBuffer>(static_cast<size_t>(n) * item);
        char* p = buf->data();
        scalar_store(t, value, p);
        for (size_t done = item, total = static_cast<size_t>(n) * item; done < total; done *= 2)
            std::memcpy(p + done, p, std::min(done, total - done));
        return GpuArray::of(NodeFactory::array(t, shape, std::move(buf)));
    }
    NodeView c = constant_view(NodeFactory::constant(t, value), shape);
    return GpuArray::of(NodeFactory::expression(GPUPY_OP_CAST, t, shape, {c}));
}

}  // namespace gpupy
