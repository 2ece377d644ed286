#include "core/graph/op_table.hpp"

#include <unordered_map>

namespace gpupy {

const char* op_display_name(OpCode op) {
    switch (op) {
    case CORE_OP_REDUCE: return "reduce";
    case CORE_OP_CONCAT: return "concatenate";
    case CORE_OP_REMAP: return "remap";
    default: return op_numpy_name(op);
    }
}

OpCode op_from_numpy_name(const std::string& name) {
    static const std::unordered_map<std::string, OpCode> by_name = [] {
        std::unordered_map<std::string, OpCode> m;
        for (const gpupy_op_row& r : gpupy_op_rows) m[r.numpy_name] = r.code;
        return m;
    }();
    auto it = by_name.find(name);
    return it == by_name.end() ? GPUPY_OP_NONE : it->second;
}

}  // namespace gpupy
