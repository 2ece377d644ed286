// NumPy's dtype resolution for a ufunc's operands, asked of NumPy once per
// signature and then remembered.
#pragma once

#include <vector>

#include "bindings/py_operands.hpp"

namespace gpupy {

// The loop NumPy runs: its operand dtypes and its result's.
struct Loop {
    DType in[3];
    DType out;
    bool representable;  // all loop dtypes are gpupy dtypes
};

// Asks NumPy which loop `op` uses for these operands (NEP 50: Python int
// and float operands are "weak"), remembering the answer per signature.
Loop resolve_loop(OpCode op, const std::vector<Operand>& ops);

}  // namespace gpupy
