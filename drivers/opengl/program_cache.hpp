// Compiled compute programs, cached by the structure key of their IR.
//
// On llvmpipe the expensive step is not glCompileShader/glLinkProgram but
// the JIT at the first dispatch (GL_NOTES: 22 ms for 50 ops, 803 ms for
// 2000); Mesa's on-disk shader cache (egl_context.cpp makes sure it has a
// writable directory) keeps that machine code across processes, and this
// cache keeps the linked program within one, so each structure is built
// once per process.
#ifndef GPUPY_OPENGL_PROGRAM_CACHE_HPP
#define GPUPY_OPENGL_PROGRAM_CACHE_HPP

#include <GL/glew.h>

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "gpupy/driver.hpp"
#include "glsl_codegen.hpp"

namespace gpupy_gl {

using namespace gpupy_glsl;  // the shared GLSL generator (drivers/glsl)

struct Program {
    GLuint id = 0;
    GeneratedShader shader;          // layout, constants, source (for errors)
    GLint params_location = -1;
    GLint ident_location[GPUPY_MAX_OUTPUTS] = {-1, -1, -1, -1};  // u_ident, u_ident1, ... (a reduction's outputs)
    std::vector<GLint> const_locations;  // parallel to shader.const_instrs
    std::vector<GLint> array_locations;  // parallel to shader.const_arrays
    bool has_run = false;            // first dispatch (the JIT) timed yet?
};

class ProgramCache {
public:
    ~ProgramCache() { clear(); }
    // The program for `shader.key`, building it from `shader.source` if new.
    // nullptr on a compile/link failure, `error` holding the numbered source
    // around the failing line and the driver's log.
    Program* get_or_build(GeneratedShader&& shader, std::string& error);
    Program* find(const std::string& key);
    void clear();
    size_t size() const { return programs_.size(); }

    int64_t programs_compiled = 0;
    int64_t cache_hits = 0;
    int64_t compile_ns = 0;

private:
    void dump_source(const GeneratedShader& shader);
    std::unordered_map<std::string, std::unique_ptr<Program>> programs_;
};

// Compiles and links one compute shader: the program, or 0 with `error`
// holding the driver's log and the numbered source around the failing line.
GLuint build_compute_program(const std::string& source, std::string& error);

// "   12 | source line" lines around the lines an info log names (all lines
// if it names none), the named lines marked with ">>".
std::string numbered_source_excerpt(const std::string& source, const std::string& log);

}  // namespace gpupy_gl

#endif
