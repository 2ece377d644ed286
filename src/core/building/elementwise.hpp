// Building elementwise expressions (thesis 4.4): operands cast to the loop
// dtypes NumPy resolves and broadcast to the result's shape, then one
// hash-consed node, after the algebraic rewrites (rewrites.hpp).
#pragma once

#include <vector>

#include "core/execution/fp_errors.hpp"
#include "core/graph/array.hpp"
#include "core/graph/node_factory.hpp"

namespace gpupy {

// `v` as dtype t: a constant is converted now (NumPy's unsafe cast rules),
// anything else is read through a CAST node.
NodeView cast_view(NodeView v, DType t);
// A constant node converted to dtype t.
NodeRef cast_constant(const Node* c, DType t);
// `v` read as if broadcast to `shape` (right-aligned, stride 0 along new or
// stretched dimensions). The caller has checked that it broadcasts.
NodeView broadcast_view(NodeView v, const Dims& shape);

// The node computing `op` with result dtype `out` over `operands`, each
// already of its loop dtype and of `shape`. Applies the rewrites that keep
// NumPy's values (|x|^2 -> x^2). `fp`: the floating-point errors its values
// are checked for (execution/fp_errors.hpp), a folded constant's included.
NodeRef elementwise(OpCode op, DType out, const Dims& shape, std::vector<NodeView> operands,
                    const FpWarnings& fp = {});

// `a` copied as dtype t into a new array laid out in `order`
// (memory_order.hpp): a lazy CAST node, or a's own node, shared, where it
// holds those values in that order already.
GpuArray copy_as(const GpuArray& a, DType t, const std::vector<int>& order);
// a.astype(t): a copy in a's own order (NumPy's order="K").
GpuArray astype(const GpuArray& a, DType t);
// A copy in C order (a reshape that cannot be a view).
GpuArray lazy_copy(const GpuArray& a);
// A new array of `shape` filled with `value` (of dtype t): a CAST of a
// broadcast constant, so that every such array is its own value and can be
// written to.
GpuArray filled(const Dims& shape, DType t, gpupy_scalar value);

}  // namespace gpupy
