#include "gl_limits.hpp"

#include <GL/glew.h>

namespace gpupy_gl {

static std::string gl_string(GLenum name) {
    const GLubyte* s = glGetString(name);
    return s ? reinterpret_cast<const char*>(s) : "";
}

static bool has_extension(const char* name) {
    GLint n = 0;
    glGetIntegerv(GL_NUM_EXTENSIONS, &n);
    for (GLint i = 0; i < n; ++i) {
        const GLubyte* e = glGetStringi(GL_EXTENSIONS, i);
        if (e && std::string(reinterpret_cast<const char*>(e)) == name) return true;
    }
    return false;
}

void GlLimits::query() {
    vendor = gl_string(GL_VENDOR);
    renderer = gl_string(GL_RENDERER);
    gl_version = gl_string(GL_VERSION);
    glsl_version = gl_string(GL_SHADING_LANGUAGE_VERSION);
    glGetIntegerv(GL_MAX_TEXTURE_SIZE, &max_texture_size);
    glGetIntegerv(GL_MAX_COMPUTE_TEXTURE_IMAGE_UNITS, &max_compute_texture_units);
    glGetIntegerv(GL_MAX_COMPUTE_UNIFORM_COMPONENTS, &max_compute_uniform_components);
    glGetIntegerv(GL_MAX_COMPUTE_IMAGE_UNIFORMS, &max_compute_image_uniforms);
    glGetIntegeri_v(GL_MAX_COMPUTE_WORK_GROUP_COUNT, 0, &max_work_group_count[0]);
    glGetIntegeri_v(GL_MAX_COMPUTE_WORK_GROUP_COUNT, 1, &max_work_group_count[1]);
    glGetIntegeri_v(GL_MAX_COMPUTE_WORK_GROUP_COUNT, 2, &max_work_group_count[2]);
    // GL 4.0 made fp64 core, but the extension string is what drivers use to
    // say the hardware really runs it.
    fp64 = has_extension("GL_ARB_gpu_shader_fp64");
    int64 = has_extension("GL_ARB_gpu_shader_int64") && glProgramUniform1i64vARB != nullptr &&
            glProgramUniform1ui64vARB != nullptr;
    if (has_extension("GL_NVX_gpu_memory_info")) {
        GLint kib = 0;
        glGetIntegerv(0x9047 /* GPU_MEMORY_INFO_DEDICATED_VIDMEM_NVX */, &kib);
        device_memory_bytes = static_cast<int64_t>(kib) * 1024;
    }
    while (glGetError() != GL_NO_ERROR) {
    }
}

}  // namespace gpupy_gl
