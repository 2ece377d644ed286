#include "egl_context.hpp"

#include <GL/glew.h>
#include <EGL/eglext.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

#include "options.hpp"

namespace gpupy_gl {

static std::string egl_error_name(EGLint e) {
    switch (e) {
        case EGL_SUCCESS: return "EGL_SUCCESS";
        case EGL_NOT_INITIALIZED: return "EGL_NOT_INITIALIZED";
        case EGL_BAD_ACCESS: return "EGL_BAD_ACCESS";
        case EGL_BAD_ALLOC: return "EGL_BAD_ALLOC";
        case EGL_BAD_ATTRIBUTE: return "EGL_BAD_ATTRIBUTE";
        case EGL_BAD_CONFIG: return "EGL_BAD_CONFIG";
        case EGL_BAD_CONTEXT: return "EGL_BAD_CONTEXT";
        case EGL_BAD_DISPLAY: return "EGL_BAD_DISPLAY";
        case EGL_BAD_MATCH: return "EGL_BAD_MATCH";
        case EGL_BAD_PARAMETER: return "EGL_BAD_PARAMETER";
        default: {
            char buf[32];
            std::snprintf(buf, sizeof buf, "EGL error 0x%x", (unsigned)e);
            return buf;
        }
    }
}

// mkdir -p; true if `path` ends up an existing directory we may write.
static bool make_writable_dir(const std::string& path) {
    for (size_t pos = 1; pos <= path.size(); ++pos) {
        if (pos == path.size() || path[pos] == '/') {
            std::string prefix = path.substr(0, pos);
            if (mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST) return false;
        }
    }
    return access(path.c_str(), W_OK | X_OK) == 0;
}

std::string ensure_shader_cache_dir() {
    using gpupy_driver::env_text;
    if (std::string dir = env_text("MESA_SHADER_CACHE_DIR"); !dir.empty()) return dir;
    // Mesa's default: $XDG_CACHE_HOME/mesa_shader_cache, else
    // $HOME/.cache/mesa_shader_cache.
    std::string fallback_root;
    if (std::string xdg = env_text("XDG_CACHE_HOME"); !xdg.empty()) {
        fallback_root = xdg;
    } else if (std::string home = env_text("HOME"); !home.empty()) {
        fallback_root = home + "/.cache";
    }
    if (!fallback_root.empty()) {
        std::string dflt = fallback_root + "/mesa_shader_cache";
        if (make_writable_dir(dflt)) return dflt;
    }
    const std::string tmp = env_text("TMPDIR");
    std::string dir = (tmp.empty() ? std::string("/tmp") : tmp) + "/gpupy-mesa-shader-cache-" +
                      std::to_string(static_cast<long>(getuid()));
    if (!make_writable_dir(dir)) return "";
    setenv("MESA_SHADER_CACHE_DIR", dir.c_str(), 0);
    return dir;
}

// The EGL device platform: device `wanted` of EGL's list, or (wanted < 0)
// the first device that gives a display. *count is the list's length.
static EGLDisplay device_display(int64_t wanted, EGLint* count) {
    *count = 0;
    auto query_devices =
        reinterpret_cast<PFNEGLQUERYDEVICESEXTPROC>(eglGetProcAddress("eglQueryDevicesEXT"));
    if (!query_devices) return EGL_NO_DISPLAY;
    EGLDeviceEXT devices[16];
    if (!query_devices(16, devices, count)) return EGL_NO_DISPLAY;
    for (EGLint i = 0; i < *count; ++i) {
        if (wanted >= 0 && i != wanted) continue;
        EGLDisplay d = eglGetPlatformDisplay(EGL_PLATFORM_DEVICE_EXT, devices[i], nullptr);
        if (d == EGL_NO_DISPLAY) continue;
        EGLint major = 0, minor = 0;
        if (eglInitialize(d, &major, &minor)) return d;
    }
    return EGL_NO_DISPLAY;
}

std::string EglContext::create() {
    shader_cache_dir = ensure_shader_cache_dir();

    std::string client_exts = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS) ?: "";
    EGLint major = 0, minor = 0;
    // GPUPY_EGL_DEVICE=<n>: the n-th EGL device (0-based), for one process
    // per GPU (a Dask worker each); -1 when unset.
    int64_t wanted = -1;
    if (std::string why = gpupy_driver::env_integer("GPUPY_EGL_DEVICE", -1, 0, &wanted); !why.empty()) return why;
    if (wanted >= 0) {
        // A device asked for by number: that device or nothing.
        EGLint count = 0;
        if (client_exts.find("EGL_EXT_platform_device") != std::string::npos) display = device_display(wanted, &count);
        if (display == EGL_NO_DISPLAY) {
            return "libEGL: GPUPY_EGL_DEVICE=" + std::to_string(wanted) + " but EGL lists " + std::to_string(count) +
                   " device(s) (numbered from 0), or that one gives no display";
        }
        platform = "device " + std::to_string(wanted);
    }
    if (display == EGL_NO_DISPLAY && client_exts.find("EGL_MESA_platform_surfaceless") != std::string::npos) {
        display = eglGetPlatformDisplay(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, nullptr);
        if (display != EGL_NO_DISPLAY && eglInitialize(display, &major, &minor)) {
            platform = "surfaceless";
        } else {
            display = EGL_NO_DISPLAY;
        }
    }
    if (display == EGL_NO_DISPLAY && client_exts.find("EGL_EXT_platform_device") != std::string::npos) {
        EGLint count = 0;
        display = device_display(-1, &count);
        if (display != EGL_NO_DISPLAY) platform = "device";
    }
    if (display == EGL_NO_DISPLAY) {
        return "libEGL: no headless display (neither EGL_MESA_platform_surfaceless nor an "
               "EGL device could be initialised)";
    }
    if (!eglBindAPI(EGL_OPENGL_API)) {
        std::string why = "libEGL: desktop OpenGL API not available (" + egl_error_name(eglGetError()) + ")";
        destroy();
        return why;
    }
    // Prefer a context without a config (EGL_KHR_no_config_context): we
    // render into textures only. Otherwise any config that supports OpenGL.
    EGLConfig config = nullptr;
    std::string display_exts = eglQueryString(display, EGL_EXTENSIONS) ?: "";
    if (display_exts.find("EGL_KHR_no_config_context") == std::string::npos &&
        display_exts.find("EGL_MESA_configless_context") == std::string::npos) {
        const EGLint attrs[] = {EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT, EGL_NONE};
        EGLint n = 0;
        if (!eglChooseConfig(display, attrs, &config, 1, &n) || n < 1) {
            destroy();
            return "libEGL: no EGL config supports desktop OpenGL";
        }
    }
    const EGLint ctx_attrs[] = {EGL_CONTEXT_MAJOR_VERSION, 4, EGL_CONTEXT_MINOR_VERSION, 5,
                                EGL_CONTEXT_OPENGL_PROFILE_MASK, EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT,
                                EGL_NONE};
    context = eglCreateContext(display, config, EGL_NO_CONTEXT, ctx_attrs);
    if (context == EGL_NO_CONTEXT) {
        std::string why = "libEGL: no OpenGL 4.5 core context (" + egl_error_name(eglGetError()) + ")";
        destroy();
        return why;
    }
    if (!eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, context)) {
        std::string why = "libEGL: cannot make the context current without a surface (" +
                          egl_error_name(eglGetError()) + ")";
        destroy();
        return why;
    }
    // Debian's GLEW is built for GLX: under EGL glewInit() loads every entry
    // point and then fails its GLX display check with
    // GLEW_ERROR_NO_GLX_DISPLAY (4). With our context current that is
    // success. glewExperimental stays off: on glvnd it makes every name
    // "available" and the extension flags lie.
    GLenum glew = glewInit();
    if (glew != GLEW_OK && glew != 4 /* GLEW_ERROR_NO_GLX_DISPLAY */) {
        std::string why = std::string("GLEW: ") + reinterpret_cast<const char*>(glewGetErrorString(glew));
        destroy();
        return why;
    }
    if (!glDispatchCompute || !glTextureStorage2D || !glGetTextureSubImage || !glBindTextureUnit) {
        destroy();
        return "OpenGL: compute shaders or direct state access (GL 4.5) entry points missing";
    }
    GLint gl_major = 0, gl_minor = 0;
    glGetIntegerv(GL_MAJOR_VERSION, &gl_major);
    glGetIntegerv(GL_MINOR_VERSION, &gl_minor);
    if (gl_major * 10 + gl_minor < 45) {
        destroy();
        return "OpenGL: context is " + std::to_string(gl_major) + "." + std::to_string(gl_minor) +
               ", 4.5 needed";
    }
    return "";
}

void EglContext::destroy() {
    if (display == EGL_NO_DISPLAY) return;
    eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    if (context != EGL_NO_CONTEXT) eglDestroyContext(display, context);
    context = EGL_NO_CONTEXT;
    // eglTerminate would also tear down other users of the same display
    // (displays are shared per platform/device in a process), so the
    // display stays initialised; releasing this thread's state is enough.
    eglReleaseThread();
    display = EGL_NO_DISPLAY;
}

}  // namespace gpupy_gl
