// What the device's float arithmetic guarantees, measured once at init.
//
// GLSL lets an implementation flush subnormals to zero and round `/` to 2.5
// ulp and sqrt() to about 3; llvmpipe does neither, NVIDIA's driver does
// both. NumPy rounds correctly and keeps subnormals, so the generator must
// know which promise the device keeps: one small compute shader runs the
// operations on chosen operands and the host compares the bits with its
// own IEEE results.
#ifndef GPUPY_OPENGL_FLOAT_PROBE_HPP
#define GPUPY_OPENGL_FLOAT_PROBE_HPP

#include <string>

#include "glsl_codegen.hpp"  // GpuLikeFloats

namespace gpupy_gl {

struct FloatBehaviour {
    bool f32_subnormals = true;  // kept in arithmetic (false: flushed to zero)
    bool f32_division_exact = true;
    bool f32_sqrt_exact = true;
    bool f64_division_exact = true;
    bool f64_sqrt_exact = true;
};

// Runs the probe with the current context; `fp64`: also float64. Its
// shader is built as `gpu_like` says, with the library's gp__fdiv,
// gp__fsqrt and gp__ftz (a GPU-like build: what such a device does is
// then what the probe finds). Returns "" or why it could not run (the
// caller then assumes nothing is exact).
std::string probe_float_behaviour(bool fp64, const gpupy_glsl::GpuLikeFloats& gpu_like, FloatBehaviour* out);

// Reads GPUPY_GL_FLOAT_PROBE, a comma-separated list of the findings a
// GPU-like build shows: subnormals_flushed (float32), division_inexact
// (float32) and sqrt_inexact (float32 and float64) build the shaders as
// such a GPU's arithmetic behaves, so that the tests run on a CPU renderer
// the code a GPU runs and get what it may return; float64_division_inexact
// is a finding only (an inexact float64 division is left to the host, so
// the device never runs it). An NVIDIA H200 showed all but that one.
// Returns "" or the unknown word.
std::string gpu_like_floats(const char* spec, gpupy_glsl::GpuLikeFloats* out);

// The words gpu_like_floats took, comma-separated ("no": none), for
// describe().
std::string gpu_like_words(const gpupy_glsl::GpuLikeFloats& gpu_like);
// Every word gpu_like_floats takes, quoted and comma-separated (for the
// error that names them).
std::string gpu_like_vocabulary();

// The float64 finding a GPU-like build names.
void apply_gpu_like_float64(const gpupy_glsl::GpuLikeFloats& gpu_like, FloatBehaviour* b);

}  // namespace gpupy_gl

#endif
