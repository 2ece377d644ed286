#include "glsl_params.hpp"

#include <algorithm>
#include <limits>

#include "glsl_contraction.hpp"

namespace gpupy_glsl {

namespace {

// Slots of a GATHER in u_p[]: its blocks' first element, the last element
// it may read (relative to that) and block_elems.
constexpr int kGatherSlots = 3;

// Multiplier and shift that divide 31-bit numerators by d exactly
// (Granlund & Montgomery, "Division by invariant integers using
// multiplication"): floor(n / d) == (n * m) >> (31 + l) for 0 <= n < 2^31.
void magic31(int64_t d, int64_t* m, int64_t* l) {
    if (d < 1) d = 1;
    if (d > 2147483647) d = 2147483647;
    int64_t shift = 0;
    while ((int64_t{1} << shift) < d) ++shift;
    const uint64_t mult = (uint64_t{1} << (31 + shift)) / static_cast<uint64_t>(d) + 1;
    *m = static_cast<int64_t>(mult);  // < 2^32: uploaded as its bit pattern
    *l = shift;
}

// Clamps a count-like value (shape, div, mod) into the index type: values
// beyond it behave like "no limit" for coordinates that fit.
int64_t clamp_count(int64_t v, bool wide) {
    int64_t hi = wide ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int32_t>::max();
    return v > hi ? hi : v;
}

}  // namespace

int map_slots(const gpupy_ir_instr& in, int ndim, bool wide) {
    int n = 1;
    if (!contiguous(in)) n += ndim * (remapped(in) ? 4 : 1);
    if (in.op == GPUPY_OP_LOAD) return n + 1;
    return n + 2 + (wide ? 0 : 4);
}

ParamLayout make_layout(const gpupy_ir& ir, bool wide) {
    ParamLayout l;
    int next = l.shape + ir.ndim;
    if (!wide) {
        l.shape_magic = next;
        next += 2 * ir.ndim;
    }
    if (ir.reduce_op != GPUPY_OP_NONE) {
        l.reduce = next;
        next += 3;
    }
    l.leaf.assign(ir.ninstr, -1);
    for (int i = 0; i < ir.ninstr; ++i) {
        if (ir.instr[i].op == GPUPY_OP_GATHER) {
            l.leaf[i] = next;
            next += kGatherSlots;
        }
        if (!has_map(ir.instr[i])) continue;
        l.leaf[i] = next;
        next += map_slots(ir.instr[i], ir.ndim, wide);
    }
    l.zero = next++;
    l.total = next;
    return l;
}

void fill_params(const gpupy_ir& ir, const ParamLayout& l, bool wide, std::vector<int64_t>& out) {
    out.assign(l.total, 0);
    out[l.start] = ir.start;
    out[l.count] = ir.count;
    out[l.dst_offset] = ir.dst_offset;
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < ir.ndim; ++d) {
        out[l.shape + d] = clamp_count(ir.shape[d], wide);
        (d < ir.ndim - ir.reduce_ndim ? outer : inner) *= ir.shape[d];
        if (l.shape_magic >= 0) magic31(ir.shape[d], &out[l.shape_magic + 2 * d], &out[l.shape_magic + 2 * d + 1]);
    }
    if (l.reduce >= 0) {
        out[l.reduce] = inner;
        out[l.reduce + 1] = (inner + ir.reduce_chunk - 1) / ir.reduce_chunk;
        out[l.reduce + 2] = clamp_count(ir.reduce_chunk, wide);
    }
    (void)outer;
    if (l.tile >= 0) {
        const ContractionGrid g = contraction_grid(ir);
        out[l.tile] = g.first_row;
        out[l.tile + 1] = g.first_batch;
    }
    for (int i = 0; i < ir.ninstr; ++i) {
        const gpupy_ir_instr& in = ir.instr[i];
        if (in.op != GPUPY_OP_GATHER) continue;
        const int s = l.leaf[i];
        out[s] = in.block_first;
        out[s + 1] = clamp_count(std::max<int64_t>(in.value.i, 1) - 1, wide);  // the last element bound
        out[s + 2] = in.block_elems;
    }
    for (int i = 0; i < ir.ninstr; ++i) {
        const gpupy_ir_instr& in = ir.instr[i];
        int s = l.leaf[i];
        if (s < 0 || !has_map(in)) continue;  // (a GATHER's slots are written above)
        // LOAD addresses are relative to the first block; in 32-bit mode
        // they are taken modulo 2^32 (the GL side wraps the same way).
        out[s] = in.op == GPUPY_OP_LOAD ? in.map.base - in.block_first : in.map.base;
        int next = s + 1;
        if (!contiguous(in)) {
            for (int d = 0; d < ir.ndim; ++d) out[next + d] = in.map.stride[d];
            next += ir.ndim;
            if (remapped(in)) {
                for (int d = 0; d < ir.ndim; ++d) {
                    out[next + d] = clamp_count(in.map.div[d] < 1 ? 1 : in.map.div[d], wide);
                    int64_t m = in.map.mod[d];
                    out[next + ir.ndim + d] = m == 0 ? clamp_count(std::numeric_limits<int64_t>::max(), wide)
                                                     : clamp_count(m, wide);
                    out[next + 2 * ir.ndim + d] = in.map.shift[d];
                }
                next += 3 * ir.ndim;
            }
        }
        if (in.op == GPUPY_OP_LOAD) {
            out[next] = in.block_elems;
        } else {
            out[next] = clamp_count(in.div, wide);
            out[next + 1] = in.mod == 0 ? clamp_count(std::numeric_limits<int64_t>::max(), wide) : clamp_count(in.mod, wide);
            if (!wide) {
                magic31(out[next], &out[next + 2], &out[next + 3]);
                magic31(out[next + 1], &out[next + 4], &out[next + 5]);
            }
        }
    }
}

}  // namespace gpupy_glsl
