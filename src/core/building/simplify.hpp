// Constant folding: the simplification pass.
//
// It runs on each elementwise node as the node is built, so every node of a
// graph has been through it once, as a pass over the finished graph would
// do, without walking the graph again. An op whose operands all have one
// value everywhere (constants, and the constant arrays of full()/zeros()
// and earlier folds) is computed on that one value, on the host, with the
// kernels that evaluate it anyway, and becomes a constant array:
// `full(n, 2) * 3 + 1` reaches a shader as one constant, not two operations
// on uniforms. Exact under NumPy's semantics: only ops whose results IEEE
// arithmetic fixes bit for bit are folded (not the math-library functions,
// whose last bit may differ between the host and a device), and nothing is
// reassociated ((x + 1) + 2 is not x + 3 in floating point).
//
// Identities that depend on a constant's value (x * 1, x - 0) are not
// applied, although exact: they would make a program's structure depend on
// the value, so a loop computing `(a - i) * b` from i = 0 would compile a
// second program for i = 0 -- milliseconds, against one operation saved
// per element.
#pragma once

#include <vector>

#include "core/execution/fp_errors.hpp"
#include "core/graph/node.hpp"

namespace gpupy {

// The node `op` over `operands` simplifies to, or null if none: a constant
// array of the folded value. The fold's one value is checked for the
// floating-point errors `fp` names, as the op's values would have been.
NodeRef simplified(OpCode op, DType out, const Dims& shape, const std::vector<NodeView>& operands,
                   const FpWarnings& fp = {});

}  // namespace gpupy
