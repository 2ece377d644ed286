#include "ir_validation.hpp"

#include "gpupy/op_meta.hpp"

namespace gpupy_driver {

int32_t operand_dtype(const gpupy_ir& ir, const gpupy_ir_instr& in) {
    if (gpupy::op_is_leaf(in.op)) return in.dtype;
    const int k = in.op == GPUPY_OP_WHERE ? 1 : 0;
    return ir.instr[in.arg[k]].dtype;
}

namespace {

// What a remapped map needs for gpupy_map_coordinate to stay inside the
// extent its edge mode names.
std::string remap_error(const gpupy_index_map& m, int ndim) {
    for (int d = 0; d < ndim; ++d) {
        const std::string dim = " in dimension " + std::to_string(d);
        if (m.div[d] < 1) return "div < 1" + dim;
        if (m.mod[d] < 0) return "mod < 0" + dim;
        switch (m.edge[d]) {
        case GPUPY_EDGE_WRAP:
            if (m.shift[d] < 0) return "negative shift of a wrapped coordinate" + dim;
            break;
        case GPUPY_EDGE_CLAMP:
            if (m.mod[d] < 1) return "clamped coordinate without an extent" + dim;
            break;
        case GPUPY_EDGE_REFLECT:
        case GPUPY_EDGE_SYMMETRIC:
            if (m.mod[d] < (m.edge[d] == GPUPY_EDGE_REFLECT ? 2 : 1)) return "mirrored extent too small" + dim;
            if (m.shift[d] < 0) return "negative shift of a mirrored coordinate" + dim;
            break;
        default:
            return "unknown edge " + std::to_string(m.edge[d]) + dim;
        }
    }
    return "";
}

}  // namespace

std::string ir_structure_error(const gpupy_ir& ir, bool require_blocks) {
    if (ir.ninstr < 1 || !ir.instr) return "empty IR";
    if (ir.ndim < 0 || ir.ndim > GPUPY_MAX_DIMS) return "ndim " + std::to_string(ir.ndim) + " out of range";
    for (int d = 0; d < ir.ndim; ++d) {
        if (ir.shape[d] < 1) return "shape[" + std::to_string(d) + "] = " + std::to_string(ir.shape[d]);
    }
    if (ir.start < 0 || ir.count < 0 || ir.dst_offset < 0) return "negative start, count or dst_offset";
    for (int i = 0; i < ir.ninstr; ++i) {
        const gpupy_ir_instr& in = ir.instr[i];
        // Built only for a message: this loop runs for every instruction of
        // every eval_ir and check_ir.
        auto where = [&] { return "instruction " + std::to_string(i) + " (" + gpupy::op_name(in.op) + "): "; };
        if (!gpupy::op_valid(in.op)) return where() + "unknown op " + std::to_string(in.op);
        if (!gpupy::dtype_valid(in.dtype)) return where() + "bad dtype " + std::to_string(in.dtype);
        const int arity = gpupy::op_arity(in.op);
        for (int k = 0; k < arity; ++k) {
            if (in.arg[k] < 0 || in.arg[k] >= i) return where() + "operand " + std::to_string(k) + " is not an earlier instruction";
        }
        if ((in.op == GPUPY_OP_LOAD || in.op == GPUPY_OP_INDEX) && (in.flags & GPUPY_INSTR_REMAPPED)) {
            if (std::string e = remap_error(in.map, ir.ndim); !e.empty()) return where() + e;
        }
        switch (in.op) {
        case GPUPY_OP_GATHER:
            if (ir.instr[in.arg[0]].dtype != GPUPY_INT64) return where() + "the index is not INT64";
            [[fallthrough]];
        case GPUPY_OP_LOAD:
            if (in.nblocks < 1 || in.nblocks > GPUPY_MAX_LEAF_BLOCKS) return where() + "nblocks " + std::to_string(in.nblocks);
            if (in.block_elems < 1) return where() + "block_elems < 1";
            for (int b = 0; require_blocks && b < in.nblocks; ++b) {
                if (!in.blocks[b]) return where() + "null block";
            }
            continue;
        case GPUPY_OP_INDEX:
            if (in.div < 1) return where() + "INDEX div < 1";
            continue;
        case GPUPY_OP_CONST:
            continue;
        case GPUPY_OP_CAST:
            continue;  // any operand dtype, any result dtype
        default:
            break;
        }
        const int32_t in_dtype = operand_dtype(ir, in);
        for (int k = 0; k < arity; ++k) {
            const int32_t want = (in.op == GPUPY_OP_WHERE && k == 0) ? GPUPY_BOOL : in_dtype;
            if (ir.instr[in.arg[k]].dtype != want) return where() + "operand dtypes differ";
        }
        if (in.dtype != gpupy::op_result_dtype(in.op, in_dtype)) return where() + "wrong result dtype";
    }
    if (ir.noutputs < 1 || ir.noutputs > GPUPY_MAX_OUTPUTS) return "noutputs " + std::to_string(ir.noutputs);
    const bool reduction = ir.reduce_op != GPUPY_OP_NONE;
    for (int k = 0; k < ir.noutputs; ++k) {
        if (ir.output[k] < 0 || ir.output[k] >= ir.ninstr) return "output " + std::to_string(k) + " is not an instruction";
        for (int j = 0; j < k && !reduction; ++j) {  // (a reduction may fold one instruction two ways)
            if (ir.output[j] == ir.output[k]) return "outputs " + std::to_string(j) + " and " + std::to_string(k) + " are one instruction";
        }
    }
    if (reduction) {
        if (ir.noutputs > 1 && ir.reduce_mode != GPUPY_REDUCE_CHUNKS) return "a scan with more than one output";
        for (int k = 1; k < ir.noutputs; ++k) {
            if (!gpupy::op_folds(ir.output_reduce_op[k])) return "output " + std::to_string(k) + "'s reduce op does not fold";
        }
        if (ir.reduce_ndim < 1 || ir.reduce_ndim > ir.ndim) return "reduce_ndim out of range";
        if (ir.reduce_chunk < 1) return "reduce_chunk < 1";
        if (ir.reduce_mode != GPUPY_REDUCE_CHUNKS && ir.reduce_mode != GPUPY_REDUCE_PREFIX) return "bad reduce_mode";
        if (!gpupy::op_folds(ir.reduce_op)) return "reduce_op is not an op that folds";
    }
    if (ir.ncheck < 0 || (ir.ncheck > 0 && (!ir.check || !ir.check_flags))) return "bad floating-point checks";
    if (ir.check_folds) {
        if (!reduction || !ir.fold_flags) return "fold checks without a reduction or their flags";
        if (ir.check_folds >> ir.noutputs) return "a fold check of an output the IR does not have";
        for (int k = 0; k < ir.noutputs; ++k) {
            // (The drivers look again only at outputs that are not finite.)
            const int32_t op = k ? ir.output_reduce_op[k] : ir.reduce_op;
            if (((ir.check_folds >> k) & 1u) && !gpupy_fold_checkable(op, ir.instr[ir.output[k]].dtype))
                return "a fold check of output " + std::to_string(k) + ", not a float ADD or MULTIPLY";
        }
    }
    for (int k = 0; k < ir.ncheck; ++k) {
        const int32_t i = ir.check[k];
        if (i < 0 || i >= ir.ninstr || gpupy::op_is_leaf(ir.instr[i].op) || ir.instr[i].op == GPUPY_OP_GATHER)
            return "check " + std::to_string(k) + " is not an operation";
    }
    return "";
}

std::string destinations_error(const gpupy_ir& ir, gpupy_block* const* dst, const int32_t* dst_dtypes) {
    for (int k = 0; k < ir.noutputs; ++k) {
        if (ir.instr[ir.output[k]].dtype != dst_dtypes[k])
            return "output " + std::to_string(k) + "'s dtype differs from its destination block's";
        for (int j = 0; j < k; ++j) {
            if (dst[j] == dst[k]) return "two outputs share a destination block";
        }
    }
    for (int i = 0; i < ir.ninstr; ++i) {
        const gpupy_ir_instr& in = ir.instr[i];
        for (int b = 0; b < in.nblocks && reads_blocks(in); ++b) {
            for (int k = 0; k < ir.noutputs; ++k) {
                if (in.blocks[b] == dst[k]) return "a destination is also read by instruction " + std::to_string(i);
            }
        }
    }
    return "";
}

}  // namespace gpupy_driver
