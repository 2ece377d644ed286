// How each gpupy dtype is stored in a texture and held in GLSL.
//
// One table, indexed by enum gpupy_dtype, that every other part of the
// driver reads: textures (internal format, upload format/type, bytes per
// element), code generation (GLSL register type, sampler type, image format,
// how a texel becomes a register value and back).
#ifndef GPUPY_OPENGL_DTYPE_FORMATS_HPP
#define GPUPY_OPENGL_DTYPE_FORMATS_HPP

#include <GL/glew.h>

#include "gpupy/driver.hpp"

namespace gpupy_gl {

enum class DtypeKind { Bool, Signed, Unsigned, Float };

struct DtypeFormat {
    const char* numpy_name;
    int itemsize;            // bytes per element on the host (NumPy layout)
    DtypeKind kind;
    int bits;                // value width: 8, 16, 32 or 64 (bool: 8)
    bool needs_int64;        // GLSL needs GL_ARB_gpu_shader_int64
    bool needs_fp64;         // GLSL needs double arithmetic
    GLenum internal_format;  // texture storage
    GLenum upload_format;    // glTextureSubImage2D / glGetTextureSubImage format
    GLenum upload_type;      // ... and type; one texel == one host element
    const char* glsl_type;   // register type in generated code
    const char* sampler;     // sampler type read with texelFetch
    const char* image_format;  // layout qualifier of the destination image
    const char* image_type;    // image2D / iimage2D / uimage2D
};

const DtypeFormat& dtype_format(int dtype);
bool dtype_valid(int dtype);

}  // namespace gpupy_gl

#endif
