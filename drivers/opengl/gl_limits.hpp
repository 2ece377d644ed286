// The GL limits and capabilities the driver depends on, queried once at init.
#ifndef GPUPY_OPENGL_GL_LIMITS_HPP
#define GPUPY_OPENGL_GL_LIMITS_HPP

#include <cstdint>
#include <string>

namespace gpupy_gl {

struct GlLimits {
    std::string vendor, renderer, gl_version, glsl_version;
    int max_texture_size = 0;               // GL_MAX_TEXTURE_SIZE
    int max_compute_texture_units = 0;      // GL_MAX_COMPUTE_TEXTURE_IMAGE_UNITS
    int max_compute_uniform_components = 0; // GL_MAX_COMPUTE_UNIFORM_COMPONENTS
    int max_compute_image_uniforms = 0;     // GL_MAX_COMPUTE_IMAGE_UNIFORMS
    int max_work_group_count[3] = {0, 0, 0};  // GL_MAX_COMPUTE_WORK_GROUP_COUNT x, y, z
    bool fp64 = false;   // ARB_gpu_shader_fp64 (double arithmetic; no transcendentals)
    bool int64 = false;  // ARB_gpu_shader_int64
    int64_t device_memory_bytes = 0;  // NVX_gpu_memory_info where present, else 0

    // Queries the current context.
    void query();
};

}  // namespace gpupy_gl

#endif
