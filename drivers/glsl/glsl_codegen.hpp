// IR -> GLSL compute shader, its structure key and its uniform layout.
//
// One generated program evaluates one IR list into one destination block.
// Everything that varies between blocks of one expression, or between
// iterations of a Python loop, is a uniform: constants, index-map bases,
// strides, div/mod, the domain shape, start/count/dst_offset, the
// reduction's chunk and identity. The structure key names everything else
// (ops, dtypes, operand wiring, leaf kinds and flags, block counts, ndim,
// reduction op/mode/ndim, index width, texture width), so equal keys mean
// equal source and one compiled program serves them all.
#ifndef GPUPY_GLSL_GLSL_CODEGEN_HPP
#define GPUPY_GLSL_GLSL_CODEGEN_HPP

#include <cstdint>
#include <string>
#include <vector>

#include "gpupy/driver.hpp"
#include "glsl_ops.hpp"
#include "glsl_params.hpp"

namespace gpupy_glsl {

struct GeneratedShader {
    std::string key;
    std::string source;
    ParamLayout layout;
    bool wide_index = false;                // u_p and index arithmetic are int64
    std::vector<int> const_instrs;          // CONST instructions, uniform u_c<i>
    // A rolled loop's constants (loop_rolling.hpp): per constant of its
    // body, every copy's value in one uniform array, `lanes` to an element.
    struct ConstArray {
        std::string name;
        int dtype = 0;
        int lanes = 4;            // values per array element (a 4-component register)
        std::vector<int> instrs;  // copy c's CONST is value c
    };
    std::vector<ConstArray> const_arrays;
    int texture_units = 0;                  // samplers bound, in LOAD order
    int instruction_cost = 0;               // sum of op_cost
    int uniform_components = 0;             // of leaves and constants
    // The tiled matrix product form (glsl_contraction.hpp): dispatched as
    // contraction_grid() says, not one invocation per output.
    bool tiled = false;
};

// Shaders built to behave as a GPU whose float32 arithmetic is as loose as
// GLSL allows (flushed subnormals, `/` and sqrt() up to 2 ulp off; NVIDIA's
// GPUs do all three, and float64 sqrt() too), on any device: the OpenGL driver's test mode
// (GPUPY_GL_FLOAT_PROBE), so that a CPU renderer runs the code a GPU runs
// and returns what such a GPU may return. Each is a #define the library's
// gp__ftz, gp__fdiv and gp__fsqrt (glsl_math/core.glsl) read; with
// flush_subnormals the generated code also flushes every float32 value it
// loads, computes or folds. The OpenGL driver sets flush_subnormals on a
// device that flushes by itself too: its arithmetic flushes, but moves and
// bit operations keep a subnormal's bits, and the library's routines read
// bits (gp__div_rn scaled a subnormal operand that the device's product
// then flushed: FLT_MIN / 1e-45 gave 3.7e19 on an H200). Flushed in the
// code, an operand reaches them as the zero the device computes with, on
// a GPU as in the GPU-like build.
struct GpuLikeFloats {
    bool flush_subnormals = false;
    bool loose_division = false;
    bool loose_sqrt = false;
    // A finding only, for the driver: float64 division reported inexact
    // (the driver leaves it to the host; sqrt_inexact loosens float64's
    // root, which has a correctly rounded routine).
    bool float64_division_inexact = false;
    bool any() const { return flush_subnormals || loose_division || loose_sqrt; }
};

// The lines after #version that build a shader as `g` says.
std::string gpu_like_defines(const GpuLikeFloats& g);

// Texels per row of a block's texture, unless the device allows fewer (the
// OpenGL driver's block_width option sets another).
constexpr int kDefaultTextureWidth = 4096;

struct CodegenOptions {
    int texture_width = kDefaultTextureWidth;
    DeviceCaps caps;
    std::string debug_append;  // test hook: text appended to main()'s body
    // Test hook: the same, left out of the key on purpose -- a program key
    // that misses a decision, which GPUPY_GL_CHECK_PROGRAM_KEYS must catch.
    std::string debug_append_unkeyed;
    // check_ir sees IR before the core has bound blocks to its leaves.
    bool require_blocks = true;
    // Contractions in a tiled form where they match (driver option
    // "tiled_products"; off, they take the generic form, for comparisons),
    // staged through shared memory or read straight into registers
    // (glsl_contraction.hpp says which suits which device).
    bool tiled_products = true;
    bool shared_tiles = true;
    // Repetitions of the same instructions (a loop's terms) written as a
    // loop over uniform arrays (loop_rolling.hpp) rather than straight.
    bool roll_loops = true;
    // Floating-point checks (gpupy_ir.check) in their full form: the
    // gpupy_fp_flag bits. Off, float checks only find whether any value was
    // made not finite, without a branch (any non-zero flag: run the full
    // form for the bits).
    bool detailed_checks = false;
    GpuLikeFloats gpu_like;
};

// The shader storage buffer binding where a program ORs its checks'
// flags (gpupy_ir.check): uint u_checks[ncheck], zeroed before the dispatch.
constexpr int kCheckBinding = 0;

// Validates `ir` (structure only) and fills `out`; returns "" or the reason.
// Does not touch GL. Output k is written to the image at binding k.
std::string generate_shader(const gpupy_ir& ir, const CodegenOptions& opt, bool want_source, GeneratedShader& out);

// The index arithmetic must be 64-bit when a domain position or an INDEX
// leaf's value may not fit in int32 (LOAD offsets fit: blocks are smaller,
// and 32-bit wraparound arithmetic yields the right in-range offset).
bool needs_wide_index(const gpupy_ir& ir);

}  // namespace gpupy_glsl

#endif
