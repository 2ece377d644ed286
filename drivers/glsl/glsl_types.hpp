// How each gpupy dtype is held in GLSL: the register type of generated
// code, the sampler it is read through, the image it is written to, its
// value width and the extensions it needs. GLSL only: a driver maps these
// to its own storage (OpenGL: opengl/texture_formats.hpp).
//
// Narrow integers live in 32-bit registers (GLSL has no narrower
// arithmetic): the generator wraps every result back into range. 64-bit
// values are two 32-bit words in an RG32 texel, low word first, exactly as
// a little-endian host lays them out; shaders join them with packInt2x32 /
// packUint2x32 / packDouble2x32.
#ifndef GPUPY_GLSL_TYPES_HPP
#define GPUPY_GLSL_TYPES_HPP

#include <string>
#include <vector>

#include "gpupy/dtype_meta.hpp"

namespace gpupy_glsl {

using gpupy::DtypeKind;
using gpupy::dtype_valid;

struct GlslType {
    const char* numpy_name;
    DtypeKind kind;
    int bits;                  // value width: 8, 16, 32 or 64 (bool: 8)
    bool needs_int64;          // GLSL needs GL_ARB_gpu_shader_int64
    bool needs_fp64;           // GLSL needs double arithmetic
    const char* glsl_type;     // register type in generated code
    const char* sampler;       // sampler type read with texelFetch
    const char* image_format;  // layout qualifier of the destination image
    const char* image_type;    // image2D / iimage2D / uimage2D
};

const GlslType& glsl_type(int dtype);

// The GLSL expression reading a `dtype` value from texel `coord` (an
// ivec2 expression) of `sampler` (the dtype's sampler type); a float16
// read calls gpo_f16_value (texel_functions).
std::string texel_read(int dtype, const std::string& sampler, const std::string& coord);
// The 4-vector imageStore writes to hold value `v` in the dtype's image; a
// float16 store calls gpo_f16_bits (texel_functions).
std::string image_texel(int dtype, const std::string& v);
// The glsl_runtime functions texel_read and image_texel call for `dtype`.
std::vector<std::string> texel_functions(int dtype);

}  // namespace gpupy_glsl

#endif
