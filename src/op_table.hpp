// The op table (ops.def) as data the core can query.
#pragma once

#include <string>

#include "driver.hpp"

namespace gpupy {

using OpCode = int32_t;  // enum gpupy_op

// Core-only opcodes: nodes the core evaluates specially; never in an IR list.
enum CoreOp : int32_t {
    // A chunked reduction (gpupy_ir reduction modes); see reduction.hpp.
    CORE_OP_REDUCE = GPUPY_NUM_OPS,
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
