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

namespace gpupy_gl {

struct FloatBehaviour {
    bool f32_subnormals = true;  // kept in arithmetic (false: flushed to zero)
    bool f32_division_exact = true;
    bool f32_sqrt_exact = true;
    bool f64_division_exact = true;
    bool f64_sqrt_exact = true;
};

// Runs the probe with the current context; `fp64`: also float64. Returns
// "" or why it could not run (the caller then assumes nothing is exact).
std::string probe_float_behaviour(bool fp64, FloatBehaviour* out);

// Applies GPUPY_GL_FLOAT_PROBE, a comma-separated list of findings to
// pretend (subnormals_flushed, division_inexact, sqrt_inexact): the tests
// use it to run the paths a GPU takes on a CPU renderer. Returns "" or the
// unknown word.
std::string pretend_float_findings(const char* spec, FloatBehaviour* b);

}  // namespace gpupy_gl

#endif
