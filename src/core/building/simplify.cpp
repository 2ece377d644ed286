#include "core/building/simplify.hpp"

#include "core/building/elementwise.hpp"
#include "core/execution/evaluator.hpp"
#include "core/graph/node_factory.hpp"
#include "gpupy/numpy_casts.hpp"
#include "gpupy/op_meta.hpp"

namespace gpupy {

namespace {

// The constant a node equals everywhere, in the node's dtype, or null: a
// constant, or a cast of such a node (filled() and folding make constant
// arrays as the cast of a constant; the loops cast operands to their loop
// dtype). An evaluated cast still holding its constant counts too (the
// evaluator keeps a constant operand, and a write in place drops the
// operands: writes.cpp), so an array keeps folding after it was read.
NodeRef constant_value(const NodeView& v) {
    const Node* x = v.node.get();
    if (x->kind() == NodeKind::Constant) return v.node;
    if (x->kind() != NodeKind::Expression || x->op() != GPUPY_OP_CAST || x->children().size() != 1)
        return NodeRef();
    NodeRef inner = constant_value(x->children()[0]);
    return inner ? cast_constant(inner.get(), x->dtype()) : NodeRef();
}

bool foldable(OpCode op) {
    return op >= 0 && op < GPUPY_NUM_OPS && op != GPUPY_OP_INDEX && op != GPUPY_OP_LOAD && op != GPUPY_OP_CONST &&
           !op_is_math(op);
}

}  // namespace

NodeRef simplified(OpCode op, DType out, const Dims& shape, const std::vector<NodeView>& operands,
                   const FpWarnings& fp) {
    if (!foldable(op)) return NodeRef();
    std::vector<NodeView> values;
    for (const NodeView& v : operands) {
        NodeRef c = constant_value(v);
        if (!c) return NodeRef();
        values.push_back(constant_view(std::move(c), Dims{}));
    }
    // The op on the one value, evaluated as any 0-d expression is.
    NodeRef one = NodeFactory::expression(op, out, Dims{}, std::move(values));
    // (NumPy computes nothing for an empty result, so finds no error.)
    if (shape_size(shape) > 0) mark_fp_checks(one.get(), fp);
    ensure_host(NodeView{one, identity_view(Dims{})});
    const gpupy_scalar value = scalar_load(out, one->host_data());
    NodeView c = constant_view(NodeFactory::constant(out, value), shape);
    return NodeFactory::expression(GPUPY_OP_CAST, out, shape, {c});
}

}  // namespace gpupy
