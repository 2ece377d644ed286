// The op table as the core sees it: the shared metadata of ops.def
// (op_meta.hpp) plus the core-only opcodes, which are never in an IR list.
#pragma once

#include <string>

#include "gpupy/op_meta.hpp"

namespace gpupy {

using OpCode = int32_t;  // enum gpupy_op, or a CoreOp

// Core-only opcodes: nodes the core evaluates specially; never in an IR list.
enum CoreOp : int32_t {
    // A chunked reduction (the IR's reduction modes) over trailing operand
    // dimensions; never fused into its consumer.
    CORE_OP_REDUCE = GPUPY_NUM_OPS,
    // Operands joined along axis 0: each fills a contiguous range of the
    // result; evaluated part by part into one block, never fused.
    CORE_OP_CONCAT,
    // One operand read through per-dimension (index / div) % mod, as repeat
    // and tile read; becomes a REMAPPED load of the operand's storage.
    CORE_OP_REMAP,
    CORE_NUM_OPS,
};

// The NumPy-facing name of any opcode, core ops included ("add",
// "reduce", "concatenate", "remap"), for messages and introspection.
const char* op_display_name(OpCode op);
// The opcode whose numpy_name is `name`, or GPUPY_OP_NONE.
OpCode op_from_numpy_name(const std::string& name);

}  // namespace gpupy
