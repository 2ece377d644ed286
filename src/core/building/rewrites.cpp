#include "core/building/rewrites.hpp"

#include "core/graph/node_factory.hpp"

namespace gpupy {

PowerPlan plan_power(std::optional<double> e, bool flt) {
    if (e && *e == 2.0) return {GPUPY_OP_SQUARE, true, false};
    if (e && flt && *e == 0.5) return {GPUPY_OP_SQRT, true, false};
    if (e && flt && *e == -1.0) return {GPUPY_OP_RECIPROCAL, true, false};
    if (!flt && !(e && *e >= 0)) return {GPUPY_OP_POWER, false, true};
    return {GPUPY_OP_POWER, false, false};
}

NodeView without_absolute(NodeView v) {
    const Node* x = v.node.get();
    // An evaluated |x| has dropped its operand (its values are known): it
    // stays as it is.
    if (x->kind() != NodeKind::Expression || x->op() != GPUPY_OP_ABSOLUTE || !is_identity_view(v.geom, x->shape()) ||
        x->children().empty())
        return v;
    const NodeView& inner = x->children().at(0);
    return inner.node->dtype() == x->dtype() ? inner : v;
}

NodeRef mixed_sign_compare(OpCode op, const NodeView& a, const NodeView& b, DType a_dtype, const Dims& shape) {
    const bool a_unsigned = dtype_is_unsigned_int(a_dtype);
    const NodeView& u = a_unsigned ? a : b;
    const NodeView& sgn = a_unsigned ? b : a;
    // Rewrite as u OP' s, with OP' mirrored when the unsigned was on the right.
    OpCode mirrored = op;
    if (!a_unsigned) {
        switch (op) {
        case GPUPY_OP_LESS: mirrored = GPUPY_OP_GREATER; break;
        case GPUPY_OP_LESS_EQUAL: mirrored = GPUPY_OP_GREATER_EQUAL; break;
        case GPUPY_OP_GREATER: mirrored = GPUPY_OP_LESS; break;
        case GPUPY_OP_GREATER_EQUAL: mirrored = GPUPY_OP_LESS_EQUAL; break;
        default: break;
        }
    }
    const DType ut = u.node->dtype(), st = sgn.node->dtype();
    NodeView zero = constant_view(NodeFactory::constant(st, scalar_from_int(st, 0)), shape);
    NodeView negative{NodeFactory::expression(GPUPY_OP_LESS, GPUPY_BOOL, shape, {sgn, zero}), identity_view(shape)};
    NodeView s_as_u{NodeFactory::expression(GPUPY_OP_CAST, ut, shape, {sgn}), identity_view(shape)};
    NodeView same{NodeFactory::expression(mirrored, GPUPY_BOOL, shape, {u, s_as_u}), identity_view(shape)};
    // u > s and u >= s and u != s hold when s < 0; the others fail.
    const bool when_negative = mirrored == GPUPY_OP_GREATER || mirrored == GPUPY_OP_GREATER_EQUAL ||
                               mirrored == GPUPY_OP_NOT_EQUAL;
    NodeView fixed = constant_view(NodeFactory::constant(GPUPY_BOOL, scalar_from_int(GPUPY_BOOL, when_negative)), shape);
    return NodeFactory::expression(GPUPY_OP_WHERE, GPUPY_BOOL, shape, {negative, fixed, same});
}

}  // namespace gpupy
