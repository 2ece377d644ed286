// How each gpupy dtype is stored in an OpenGL texture: internal format,
// and the format and type of the transfers, one texel per host element
// (NumPy's layout). What GLSL does with the values is glsl/glsl_types.hpp.
#ifndef GPUPY_OPENGL_TEXTURE_FORMATS_HPP
#define GPUPY_OPENGL_TEXTURE_FORMATS_HPP

#include <GL/glew.h>

#include "gpupy/dtype_meta.hpp"

namespace gpupy_gl {

struct TextureFormat {
    GLenum internal_format;  // texture storage (and the image unit's format)
    GLenum upload_format;    // glTextureSubImage2D / glGetTextureSubImage format
    GLenum upload_type;      // ... and type; one texel == one host element
};

const TextureFormat& texture_format(int dtype);

}  // namespace gpupy_gl

#endif
