// The tiled matrix product: a second code form for one shape of IR.
//
// The core lowers every contraction (matmul, dot, tensordot, a user's
// `(a[:, :, None] * b[None]).sum(1)`) to the same reduction IR: over a
// domain (batch..., i, j, k), the product of a LOAD that does not move
// with j (A[..., i, k]) and a LOAD that does not move with i
// (B[..., k, j]), each possibly cast, folded with ADD over k in chunks.
// The generic code gives every output its own loop over k and reads each
// operand element n (or m) times from texture memory. The tiled forms have
// a work group compute a 64 x 64 tile of outputs instead, each invocation
// a block of them in registers (register blocking):
//   shared memory (for GPUs): 16 x 16 invocations; per step of 16 k the
//     group stages a 64 x 16 panel of A and a 16 x 64 panel of B in shared
//     memory, packed as 4-vectors (C$'s float4 blocking), and each
//     invocation accumulates a 4 x 4 block from one vec4 of A and one of B
//     per k. Every element read from a texture serves 64 outputs.
//   registers (for CPU renderers): 8 x 8 invocations, each with an 8 x 8
//     block, reading 8 elements of A and 8 of B per k straight from the
//     textures. llvmpipe runs a shared-memory load a lane at a time but a
//     texel fetch as one vector gather: there this form is ~4.5x the
//     speed of the other (docs/performance.md).
// The driver picks the form its device suits (CodegenOptions).
//
// The sum for each output still runs over k in increasing order within
// its chunk, as the IR says; the products are not marked `precise`, so a
// device may fuse each multiply-add (as BLAS does on the host).
#ifndef GPUPY_GLSL_GLSL_CONTRACTION_HPP
#define GPUPY_GLSL_GLSL_CONTRACTION_HPP

#include <cstdint>
#include <string>

#include "glsl_codegen.hpp"

namespace gpupy_glsl {

// Which instructions of a matched IR play which part.
struct ContractionForm {
    int a_load = -1, b_load = -1;  // the LOADs of A (constant over j) and B (constant over i)
    int a_cast = -1, b_cast = -1;  // a CAST of each to the product's dtype, or -1
    int batch_ndim = 0;            // domain dimensions before i, j, k
};

// Output tile of one work group (rows i x columns j) and the k step.
constexpr int kContractionTile = 64;
constexpr int kContractionStep = 16;

// True if `ir` is a contraction the tiled form computes: a chunked ADD
// fold over the last dimension of a domain of 3 or more dimensions, whose
// body is MULTIPLY (float32 or float64) of two LOADs (each optionally cast
// to that dtype) that are plain strided views in one block each, A's
// stride over j and B's over i zero, with 32-bit output positions.
bool match_contraction(const gpupy_ir& ir, ContractionForm* form);

// Where one evaluation of a matched IR starts and how many work groups it
// dispatches: its output range [start, start + count) covers batches
// first_batch..first_batch + batches - 1 and, within a single batch, rows
// from first_row on.
struct ContractionGrid {
    int64_t groups[3] = {0, 0, 0};  // x over column tiles, y over row tiles, z over (batch, chunk)
    int64_t first_row = 0;
    int64_t first_batch = 0;
};
ContractionGrid contraction_grid(const gpupy_ir& ir);

// The compute shader of a matched IR. It reads the same u_p[] layout as
// the generic form (`layout`, 32-bit) plus two slots at layout.tile: the
// grid's first_row and first_batch.
std::string contraction_source(const gpupy_ir& ir, const ContractionForm& form, const ParamLayout& layout,
                               const CodegenOptions& opt, ShaderFunctions& fns);

}  // namespace gpupy_glsl

#endif
