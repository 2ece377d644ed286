// The integer parameters of a generated program: the uniform array u_p[]
// (index-map bases, strides, div/mod, the domain shape, start/count/
// dst_offset, the reduction's geometry), laid out by the IR's structure
// and filled with one IR's values before each dispatch.
#ifndef GPUPY_GLSL_GLSL_PARAMS_HPP
#define GPUPY_GLSL_GLSL_PARAMS_HPP

#include <cstdint>
#include <vector>

#include "gpupy/driver.hpp"

namespace gpupy_glsl {

// Where each integer parameter lives in the uniform array u_p[]. A pure
// function of the IR's structure, shared by the generator (which reads
// u_p[k] at these constant indices) and by eval (which fills the array).
struct ParamLayout {
    int start = 0, count = 1, dst_offset = 2, shape = 3;  // shape[d] at shape + d
    int reduce = -1;                 // I, nchunks, chunk at reduce + 0..2
    int shape_magic = -1;            // 32-bit mode: (m, l) of shape[d] at shape_magic + 2d
    int tile = -1;                   // tiled product: first row, first batch (glsl_contraction.hpp)
    int zero = -1;                   // always 0: gpo_opaque_zero, a zero the compiler cannot fold
    std::vector<int> leaf;           // per instruction: first slot of its map, or -1
    int total = 0;
};

// Index maps: LOAD and INDEX read their element index through one; it is
// contiguous (base + point), strided, or remapped (div, mod, shift, edge).
inline bool has_map(const gpupy_ir_instr& in) { return in.op == GPUPY_OP_LOAD || in.op == GPUPY_OP_INDEX; }
inline bool contiguous(const gpupy_ir_instr& in) { return (in.flags & GPUPY_INSTR_CONTIGUOUS) != 0; }
inline bool remapped(const gpupy_ir_instr& in) { return !contiguous(in) && (in.flags & GPUPY_INSTR_REMAPPED); }

// Slots one map takes in u_p[]: base; strides (and div, mod, shift) unless
// contiguous; then block_elems (LOAD) or value div, mod (INDEX), and with
// 32-bit index arithmetic the magic pairs of div and mod (see gpo_udiv31).
int map_slots(const gpupy_ir_instr& in, int ndim, bool wide);

// The layout of u_p[] for `ir`, with 64-bit (`wide`) or 32-bit index
// arithmetic.
ParamLayout make_layout(const gpupy_ir& ir, bool wide);

// The values of u_p[] for `ir` laid out as `layout`.
void fill_params(const gpupy_ir& ir, const ParamLayout& layout, bool wide, std::vector<int64_t>& out);

}  // namespace gpupy_glsl

#endif
