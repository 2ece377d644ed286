// Makes the driver's EGL context current on the calling thread for the
// duration of one driver call.
//
// An EGL context can be current in only one thread at a time, and the core
// may call the driver from any thread (never two calls at once). Two designs
// were measured on this 2-core llvmpipe machine (drivers/opengl/bench):
//   - a dedicated GL thread owning the context, each call handed over with
//     a mutex + condition variable: 66 us per call (futex wake-up latency);
//   - make-current before the call and release after it, on the caller's
//     thread: about 1 us per call.
// So the driver binds per call. To leave the caller's thread as it found
// it, the binding saves and restores the thread's current EGL API, display,
// surfaces and context (a user's own GL context keeps working). Nested
// calls (a driver function calling another) bind once.
#ifndef GPUPY_OPENGL_CONTEXT_BINDING_HPP
#define GPUPY_OPENGL_CONTEXT_BINDING_HPP

#include <EGL/egl.h>

#include <string>

namespace gpupy_gl {

class ContextBinding {
public:
    // Binds (display, context) to this thread until destruction. ok() is
    // false (and error() says why) if eglMakeCurrent failed.
    ContextBinding(EGLDisplay display, EGLContext context);
    ~ContextBinding();
    ContextBinding(const ContextBinding&) = delete;
    ContextBinding& operator=(const ContextBinding&) = delete;

    bool ok() const { return ok_; }
    const std::string& error() const { return error_; }

private:
    bool ok_ = false, bound_ = false;
    std::string error_;
    EGLenum prev_api_ = EGL_NONE;
    EGLDisplay prev_display_ = EGL_NO_DISPLAY, display_ = EGL_NO_DISPLAY;
    EGLSurface prev_draw_ = EGL_NO_SURFACE, prev_read_ = EGL_NO_SURFACE;
    EGLContext prev_context_ = EGL_NO_CONTEXT;
};

}  // namespace gpupy_gl

#endif
