// The op table (ops.def) as data the core can query.
#pragma once

#include <string>

#include "driver.hpp"

namespace gpupy {

using OpCode = int32_t;  // enum gpupy_op

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

struct OpInfo {
    const char* name;        // enum name, e.g. "ADD"
    const char* numpy_name;  // e.g. "add"
    int arity;
    int flags;               // gpupy_op_flags
};

// Info for any opcode (leaves and core ops included).
const OpInfo& op_info(OpCode op);
inline bool op_is_commutative(OpCode op) { return op_info(op).flags & GPUPY_OPF_COMMUTATIVE; }
inline bool op_is_predicate(OpCode op) { return op_info(op).flags & GPUPY_OPF_PREDICATE; }
// The opcode whose numpy_name is `name`, or GPUPY_OP_NONE.
OpCode op_from_numpy_name(const std::string& name);

}  // namespace gpupy
