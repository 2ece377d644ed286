// Resource counting for the core's partitioner (thesis 4.7.4, 4.8).
//
// gpupy_resources is opaque to the core; for this driver its slots mean:
//
//   slot 0  TEXTURES      texture image units: one per block of every LOAD
//                         leaf. Limit: GL_MAX_COMPUTE_TEXTURE_IMAGE_UNITS
//                         (32 on llvmpipe), or lower via "max_textures".
//   slot 1  UNIFORMS      uniform components: u_p[] index parameters (per
//                         leaf map: base, strides, div/mod, block size; 2
//                         components each when indices are 64-bit) plus
//                         constants. Limit: GL_MAX_COMPUTE_UNIFORM_COMPONENTS
//                         (16384 on llvmpipe) less what every shader uses.
//   slot 2  INSTRUCTIONS  an instruction estimate: 1 per leaf or simple op,
//                         the statement count of the library function a math
//                         op calls (llvmpipe inlines every call). Limit 1000
//                         by default ("max_instructions"): GL_NOTES measured
//                         the llvmpipe JIT at ~22 ms for 50 ops, 153 ms for
//                         500 and 803 ms for 2000 on first dispatch, so ~1000
//                         keeps a new program's first run near 0.4 s while
//                         still fusing long expressions.
//   slot 3  OPS           non-leaf instructions. No GL limit (unlimited by
//                         default); "max_ops" lowers it so tests can force
//                         partitioning, e.g. one op per shader.
//   slots 4-7             unused (always 0).
//
// Every evaluation also writes one output image; GL guarantees at least 8
// compute image units, so outputs need no slot.
#ifndef GPUPY_OPENGL_RESOURCES_HPP
#define GPUPY_OPENGL_RESOURCES_HPP

#include <cstdint>

#include "gpupy/driver.hpp"
#include "glsl_codegen.hpp"
#include "resource_slots.hpp"

namespace gpupy_gl {

using namespace gpupy_glsl;  // the shared GLSL generator (drivers/glsl)

enum ResourceSlot { kTextures = 0, kUniforms = 1, kInstructions = 2, kOps = 3 };

using gpupy_driver::ResourceLimits;

// Uniform components every shader spends besides its leaves: start, count,
// dst_offset, the shape, the reduction's size/nchunks/chunk and identity,
// all possibly 64-bit.
constexpr int64_t kFixedUniformComponents = 2 * (3 + GPUPY_MAX_DIMS + 3) + 2;

void resource_upper_bound(const gpupy_ir_instr& node, gpupy_resources& out);
void resource_exact(const gpupy_ir& ir, const GeneratedShader& shader, gpupy_resources& out);


}  // namespace gpupy_gl

#endif
