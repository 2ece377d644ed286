// A headless desktop OpenGL 4.5 core context on EGL, with GLEW loaded.
//
// No X server, no window, no surface: the surfaceless Mesa platform first
// (llvmpipe, Mesa GPU drivers), then the EGL device platform (the usual
// route on NVIDIA). create() leaves the context current on the calling
// thread; the driver then binds it per call (context_binding.hpp).
#ifndef GPUPY_OPENGL_EGL_CONTEXT_HPP
#define GPUPY_OPENGL_EGL_CONTEXT_HPP

#include <string>

#include <EGL/egl.h>

namespace gpupy_gl {

struct EglContext {
    EGLDisplay display = EGL_NO_DISPLAY;
    EGLContext context = EGL_NO_CONTEXT;
    std::string platform;          // "surfaceless" or "device"
    std::string shader_cache_dir;  // where Mesa keeps compiled shaders

    // Creates the context and makes it current; returns "" or a one-line reason.
    std::string create();
    void destroy();
};

// Points Mesa's on-disk shader cache at a writable directory when the user
// has not chosen one and the default location is not writable. Must run
// before the display is initialised (Mesa reads it then). Returns the
// directory in use ("" if unknown).
std::string ensure_shader_cache_dir();

}  // namespace gpupy_gl

#endif
