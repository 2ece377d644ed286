#include "op_table.hpp"

#include <unordered_map>

namespace gpupy {

namespace {

const OpInfo kLeafInfo[] = {
    {"LOAD", "", 0, 0},
    {"INDEX", "", 0, 0},
    {"CONST", "", 0, 0},
};

const OpInfo kTableInfo[] = {
#define GPUPY_OP(NAME, NUMPY_NAME, ARITY, FLAGS) {#NAME, NUMPY_NAME, ARITY, FLAGS},
#include "ops.def"
#undef GPUPY_OP
};

const OpInfo kReduceInfo = {"REDUCE", "reduce", 1, GPUPY_OPF_INTERNAL};
const OpInfo kConcatInfo = {"CONCAT", "concatenate", -1, GPUPY_OPF_INTERNAL};
const OpInfo kRemapInfo = {"REMAP", "remap", 1, GPUPY_OPF_INTERNAL};
const OpInfo kNoneInfo = {"NONE", "", 0, 0};

}  // namespace

const OpInfo& op_info(OpCode op) {
    if (op >= GPUPY_OP_LOAD && op <= GPUPY_OP_CONST) return kLeafInfo[op];
    if (op > GPUPY_OP_CONST && op < GPUPY_NUM_OPS) return kTableInfo[op - GPUPY_OP_CONST - 1];
    if (op == CORE_OP_REDUCE) return kReduceInfo;
    if (op == CORE_OP_CONCAT) return kConcatInfo;
    if (op == CORE_OP_REMAP) return kRemapInfo;
    return kNoneInfo;
}

OpCode op_from_numpy_name(const std::string& name) {
    static const std::unordered_map<std::string, OpCode> by_name = [] {
        std::unordered_map<std::string, OpCode> m;
        for (OpCode op = GPUPY_OP_CONST + 1; op < GPUPY_NUM_OPS; ++op) m[op_info(op).numpy_name] = op;
        return m;
    }();
    auto it = by_name.find(name);
    return it == by_name.end() ? GPUPY_OP_NONE : it->second;
}

}  // namespace gpupy
