#include "context_binding.hpp"

#include <cstdio>

namespace gpupy_gl {

ContextBinding::ContextBinding(EGLDisplay display, EGLContext context) : display_(display) {
    prev_api_ = eglQueryAPI();
    if (prev_api_ != EGL_OPENGL_API) eglBindAPI(EGL_OPENGL_API);
    prev_context_ = eglGetCurrentContext();
    if (prev_context_ == context) {  // a nested call: already ours
        ok_ = true;
        return;
    }
    prev_display_ = eglGetCurrentDisplay();
    prev_draw_ = eglGetCurrentSurface(EGL_DRAW);
    prev_read_ = eglGetCurrentSurface(EGL_READ);
    if (!eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, context)) {
        char buf[96];
        std::snprintf(buf, sizeof buf, "eglMakeCurrent failed (EGL error 0x%x)", static_cast<unsigned>(eglGetError()));
        error_ = buf;
        if (prev_api_ != EGL_OPENGL_API && prev_api_ != EGL_NONE) eglBindAPI(prev_api_);
        return;
    }
    ok_ = bound_ = true;
}

ContextBinding::~ContextBinding() {
    if (bound_) {
        if (prev_context_ != EGL_NO_CONTEXT) {
            eglMakeCurrent(prev_display_, prev_draw_, prev_read_, prev_context_);
        } else {
            eglMakeCurrent(display_, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
        }
    }
    if (prev_api_ != EGL_OPENGL_API && prev_api_ != EGL_NONE) eglBindAPI(prev_api_);
}

}  // namespace gpupy_gl
