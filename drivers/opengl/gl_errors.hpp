// Small helpers for turning GL error state into messages.
#ifndef GPUPY_OPENGL_GL_ERRORS_HPP
#define GPUPY_OPENGL_GL_ERRORS_HPP

#include <GL/glew.h>

#include <string>

namespace gpupy_gl {

inline std::string gl_error_name(GLenum e) {
    switch (e) {
        case GL_NO_ERROR: return "GL_NO_ERROR";
        case GL_INVALID_ENUM: return "GL_INVALID_ENUM";
        case GL_INVALID_VALUE: return "GL_INVALID_VALUE";
        case GL_INVALID_OPERATION: return "GL_INVALID_OPERATION";
        case GL_INVALID_FRAMEBUFFER_OPERATION: return "GL_INVALID_FRAMEBUFFER_OPERATION";
        case GL_OUT_OF_MEMORY: return "GL_OUT_OF_MEMORY";
        default: return "GL error " + std::to_string(e);
    }
}

// GL errors are sticky flags: drain them so the next check sees only the
// call it follows.
inline void clear_gl_errors() {
    for (int i = 0; i < 16 && glGetError() != GL_NO_ERROR; ++i) {
    }
}

}  // namespace gpupy_gl

#endif
