#include "resources.hpp"

#include <algorithm>
#include <vector>

#include "glsl_ops.hpp"
#include "ir_validation.hpp"

namespace gpupy_gl {

static int64_t max_op_cost(int op) {
    static const std::vector<int64_t> table = [] {
        std::vector<int64_t> t(GPUPY_NUM_OPS, 1);
        for (int o = GPUPY_OP_LOAD; o < GPUPY_NUM_OPS; ++o) {
            for (int d = 0; d < GPUPY_NUM_DTYPES; ++d) t[o] = std::max<int64_t>(t[o], op_cost(o, d));
        }
        return t;
    }();
    return op >= 0 && op < GPUPY_NUM_OPS ? table[op] : 1;
}

void resource_upper_bound(const gpupy_ir_instr& node, gpupy_resources& out) {
    for (auto& s : out.slot) s = 0;
    const bool leaf = node.op == GPUPY_OP_LOAD || node.op == GPUPY_OP_INDEX || node.op == GPUPY_OP_CONST;
    if (gpupy_driver::reads_blocks(node)) out.slot[kTextures] = node.nblocks;
    if (node.op == GPUPY_OP_LOAD || node.op == GPUPY_OP_INDEX) {
        // base + stride/div/mod/shift per dim (the most dims) + block size
        // or value div/mod; 2 components each if 64-bit.
        out.slot[kUniforms] = 2 * (1 + 4 * GPUPY_MAX_DIMS + 2);
    } else if (node.op == GPUPY_OP_CONST) {
        out.slot[kUniforms] = 2;
    }
    // An op's cost depends on its operand dtype, which the node gives only
    // when the op keeps the dtype; predicates and CAST change it, so their
    // bound is the op's most expensive dtype. (A loose bound costs the
    // partitioner exact checks, each a code generation.)
    const bool keeps_dtype = !leaf && node.op != GPUPY_OP_CAST && op_result_dtype(node.op, node.dtype) == node.dtype &&
                             node.dtype != GPUPY_BOOL;
    out.slot[kInstructions] = keeps_dtype ? op_cost(node.op, node.dtype) : max_op_cost(node.op);
    out.slot[kOps] = leaf ? 0 : 1;
}

void resource_exact(const gpupy_ir& ir, const GeneratedShader& shader, gpupy_resources& out) {
    for (auto& s : out.slot) s = 0;
    out.slot[kTextures] = shader.texture_units;
    out.slot[kUniforms] = shader.uniform_components;
    out.slot[kInstructions] = shader.instruction_cost;
    for (int i = 0; i < ir.ninstr; ++i) {
        int op = ir.instr[i].op;
        if (op != GPUPY_OP_LOAD && op != GPUPY_OP_INDEX && op != GPUPY_OP_CONST) ++out.slot[kOps];
    }
}

}  // namespace gpupy_gl
