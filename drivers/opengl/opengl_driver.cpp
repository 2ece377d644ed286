// The OpenGL driver's entry point: the gpupy_driver_api table.
//
// Each function either touches GL, and then binds the driver's context to
// the calling thread for its duration (context_binding.hpp), or works on
// driver memory only (get_method, resources, check_ir, reporting); calls
// never overlap (the core serialises them). C++ exceptions stop here and
// become GPUPY_ERROR with last_error() set.
#include <GL/glew.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <sstream>
#include <string>
#include <unistd.h>

#include "block_textures.hpp"
#include "context_binding.hpp"
#include "gpupy/driver.hpp"
#include "gpupy/op_meta.hpp"
#include "texture_formats.hpp"
#include "egl_context.hpp"
#include "float_probe.hpp"
#include "gl_errors.hpp"
#include "gl_limits.hpp"
#include "glsl_codegen.hpp"
#include "ir_validation.hpp"
#include "glsl_contraction.hpp"
#include "glsl_library.hpp"
#include "glsl_ops.hpp"
#include "program_cache.hpp"
#include "options.hpp"
#include "resources.hpp"

namespace gpupy_gl {
namespace {

using namespace gpupy_glsl;  // the shared GLSL generator (drivers/glsl)
using gpupy_driver::is_default;
using gpupy_driver::kUnlimited;
using gpupy_driver::parse_integer;

constexpr int64_t kDefaultMaxInstructions = 1000;  // see resources.hpp

struct Driver {
    EglContext egl;
    GlLimits gl;
    DeviceCaps caps;
    BlockTextures blocks;
    ProgramCache programs;
    ResourceLimits limits;
    std::string debug_append, debug_append_unkeyed;  // set_option: test hooks
    bool tiled_products = true;  // set_option "tiled_products"
    bool shared_tiles = true;    // (on a CPU renderer: registers; set at init)
    bool roll_loops = true;      // set_option "roll_loops" (loop_rolling.hpp)
    int64_t first_run_ns = 0;
    // llvmpipe/softpipe: OpenGL on the CPU (see drv_prefers_host).
    bool cpu_renderer = false;
    FloatBehaviour floats;         // measured at init (float_probe.hpp)
    GpuLikeFloats gpu_like;        // GPUPY_GL_FLOAT_PROBE: shaders built as a GPU's
    // GPUPY_GL_CHECK_PROGRAM_KEYS (the test suite sets it): every program
    // found in the cache is generated again and compared (program_for).
    bool check_program_keys = false;
    bool check_program_keys_by_default = false;  // GPUPY_GL_CHECK_PROGRAM_KEYS, read at init
    std::string float_probe_note;  // why the probe could not run, if so
    // GPUPY_FLOAT32_SUBNORMALS: "flush" (float32 on the device, subnormals
    // flushed: the default where the device flushes, said in describe()),
    // "exact" (float32 on the host where the device flushes).
    std::string float32_policy;
    std::string last_error, description;
    // The checks' flags (gpupy_ir.check): one buffer, grown as needed.
    GLuint check_buffer = 0;
    int64_t check_capacity = 0;  // uints

    ResourceLimits gl_limits() const {
        ResourceLimits l;
        l.slot[kTextures] = gl.max_compute_texture_units;
        l.slot[kUniforms] = gl.max_compute_uniform_components - kFixedUniformComponents;
        l.slot[kInstructions] = kUnlimited;
        l.slot[kOps] = kUnlimited;
        return l;
    }
    // The tiled product's form the device suits: registers on a CPU renderer
    // (it loads shared memory a lane at a time), shared memory on a GPU --
    // and in a GPU-like build, which runs a GPU's form anywhere.
    // A tuning run's finding (set_option "measured_tiles", from the cost
    // model's calibration) wins over the rule.
    int measured_shared_tiles = -1;  // -1: none, 0: registers, 1: shared
    bool tiles_chosen = false;       // set_option "tiled_products" named a form
    bool default_shared_tiles() const {
        return measured_shared_tiles >= 0 ? measured_shared_tiles == 1 : !cpu_renderer || gpu_like.any();
    }
    CodegenOptions codegen_options() const {
        CodegenOptions o;
        o.texture_width = blocks.width();
        o.caps = caps;
        o.debug_append = debug_append;
        o.debug_append_unkeyed = debug_append_unkeyed;
        o.tiled_products = tiled_products;
        o.shared_tiles = shared_tiles;
        o.roll_loops = roll_loops;
        o.gpu_like = gpu_like;
        // (a device that flushes by itself is built as one that is told to:
        // GpuLikeFloats says why)
        o.gpu_like.flush_subnormals = gpu_like.flush_subnormals || !floats.f32_subnormals;
        return o;
    }
};

Driver* D(void* ctx) { return static_cast<Driver*>(ctx); }

// GPUPY_GL_CHECK_PROGRAM_KEYS: "1" checks, "0" (or unset) does not.
// Returns "" or why the setting is wrong.
std::string check_program_keys_from_environment(bool* check) {
    std::string value;
    const std::string why = gpupy_driver::env_choice("GPUPY_GL_CHECK_PROGRAM_KEYS", {"0", "1"}, &value);
    *check = value == "1";
    return why;
}

// Runs `body` with the context current, turning exceptions into
// GPUPY_ERROR.
template <class F>
int with_context(Driver* d, F body) {
    ContextBinding bind(d->egl.display, d->egl.context);
    if (!bind.ok()) {
        d->last_error = "opengl driver: " + bind.error();
        return GPUPY_ERROR;
    }
    try {
        return body();
    } catch (const std::exception& e) {
        d->last_error = std::string("opengl driver: ") + e.what();
        return GPUPY_ERROR;
    }
}

int64_t default_memory_budget(const GlLimits& gl) {
    // A dedicated-memory size where the driver reports one (NVIDIA), else
    // half the host's RAM (llvmpipe and integrated GPUs use host memory).
    if (gl.device_memory_bytes > 0) return gl.device_memory_bytes / 10 * 8;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? static_cast<int64_t>(pages) * page / 2 : 0;
}

// Measures the device's float arithmetic (with the new context current)
// and sets what the generator may rely on. Returns "" or why the settings
// are wrong.
std::string apply_float_behaviour(Driver* d) {
    const std::string probe = gpupy_driver::env_text("GPUPY_GL_FLOAT_PROBE");
    if (!gpu_like_floats(probe.c_str(), &d->gpu_like).empty()) {
        return "GPUPY_GL_FLOAT_PROBE must be a comma-separated list of " + gpu_like_vocabulary() + ", got '" +
               probe + "'";
    }
    d->float_probe_note = probe_float_behaviour(d->caps.fp64, d->gpu_like, &d->floats);
    if (!d->float_probe_note.empty()) {
        // Nothing measured: assume the least GLSL promises.
        d->floats = FloatBehaviour{false, false, false, false, false};
    }
    apply_gpu_like_float64(d->gpu_like, &d->floats);
    std::string p;  // "" (unset) means "flush"
    if (std::string why = gpupy_driver::env_choice("GPUPY_FLOAT32_SUBNORMALS", {"flush", "exact"}, &p); !why.empty())
        return why;
    d->float32_policy = p;
    // A GPU's float32 speed is what most users come for, and subnormals are
    // rare: float32 stays on the device unless the user asks for NumPy's
    // subnormals, which only the host keeps on such a device.
    d->caps.float32 = d->floats.f32_subnormals || p != "exact";
    d->caps.f32_division_exact = d->floats.f32_division_exact;
    d->caps.f32_sqrt_exact = d->floats.f32_sqrt_exact;
    d->caps.f64_division_exact = d->floats.f64_division_exact;
    d->caps.f64_sqrt_exact = d->floats.f64_sqrt_exact;
    return "";
}

int drv_init(void** ctx, char* errbuf, size_t errlen) {
    *ctx = nullptr;
    Driver* d = nullptr;
    std::string why;
    try {
        d = new Driver();
        // create() makes the new context current; the binding restores the
        // thread's previous state afterwards.
        EGLContext previous = eglGetCurrentContext();
        EGLDisplay previous_display = eglGetCurrentDisplay();
        EGLSurface previous_draw = eglGetCurrentSurface(EGL_DRAW), previous_read = eglGetCurrentSurface(EGL_READ);
        why = d->egl.create();
        if (why.empty()) {
            d->gl.query();
            d->caps.fp64 = d->gl.fp64;
            d->caps.int64 = d->gl.int64;
            why = apply_float_behaviour(d);
            if (why.empty()) why = check_program_keys_from_environment(&d->check_program_keys_by_default);
            d->check_program_keys = d->check_program_keys_by_default;
            for (const char* cpu : {"llvmpipe", "softpipe", "swrast"}) {
                if (d->gl.renderer.find(cpu) != std::string::npos) d->cpu_renderer = true;
            }
            d->shared_tiles = d->default_shared_tiles();
            int width = std::min(kDefaultTextureWidth, d->gl.max_texture_size);
            d->blocks.configure(width, d->gl.max_texture_size, default_memory_budget(d->gl));
            eglMakeCurrent(d->egl.display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
        }
        if (previous != EGL_NO_CONTEXT) eglMakeCurrent(previous_display, previous_draw, previous_read, previous);
    } catch (const std::exception& e) {
        why = std::string("opengl driver: ") + e.what();
    }
    if (why.empty() && d->gl.max_compute_texture_units < 1) why = "OpenGL: no texture units for compute shaders";
    if (!why.empty()) {
        if (d) {
            d->egl.destroy();
            delete d;
        }
        if (errbuf && errlen) std::snprintf(errbuf, errlen, "%s", why.c_str());
        return GPUPY_ERROR;
    }
    d->limits = d->gl_limits();
    d->limits.slot[kInstructions] = kDefaultMaxInstructions;
    *ctx = d;
    return GPUPY_OK;
}

void drv_cleanup(void* ctx) {
    Driver* d = D(ctx);
    if (!d) return;
    {
        ContextBinding bind(d->egl.display, d->egl.context);
        if (bind.ok()) {
            d->blocks.free_all();
            d->programs.clear();
            if (d->check_buffer) glDeleteBuffers(1, &d->check_buffer);
        }
    }
    d->egl.destroy();
    delete d;
}

int drv_get_method(void* ctx, int32_t op, int32_t dtype) {
    return op_supported(op, dtype, D(ctx)->caps) ? 1 : 0;
}

int drv_block_alloc(void* ctx, int32_t dtype, int64_t nelems, gpupy_block** out) {
    Driver* d = D(ctx);
    if (!out) {
        d->last_error = "block_alloc: null out";
        return GPUPY_ERROR;
    }
    *out = nullptr;
    if (gpupy::dtype_valid(dtype) && !op_supported(GPUPY_OP_LOAD, dtype, d->caps)) {
        d->last_error = std::string("block_alloc: dtype ") + gpupy::dtype_name(dtype) + " not supported";
        return GPUPY_ERROR;
    }
    return with_context(d, [&] { return d->blocks.alloc(dtype, nelems, out, d->last_error); });
}

void drv_block_free(void* ctx, gpupy_block* block) {
    Driver* d = D(ctx);
    if (block) with_context(d, [&] {
        d->blocks.free(block);
        return GPUPY_OK;
    });
}

int drv_block_read(void* ctx, gpupy_block* block, int64_t offset, int64_t count, void* dst) {
    Driver* d = D(ctx);
    return with_context(d, [&] { return d->blocks.read(block, offset, count, dst, d->last_error); });
}

int drv_block_write(void* ctx, gpupy_block* block, int64_t offset, int64_t count, const void* src) {
    Driver* d = D(ctx);
    return with_context(d, [&] { return d->blocks.write(block, offset, count, src, d->last_error); });
}

int drv_check_ir(void* ctx, const gpupy_ir* ir, gpupy_resources* out) {
    Driver* d = D(ctx);
    if (!ir || !out) {
        d->last_error = "check_ir: null argument";
        return GPUPY_ERROR;
    }
    try {
        GeneratedShader shader;
        CodegenOptions opt = d->codegen_options();
        opt.require_blocks = false;
        std::string err = generate_shader(*ir, opt, false, shader);
        if (!err.empty()) {
            d->last_error = "check_ir: " + err;
            return GPUPY_ERROR;
        }
        resource_exact(*ir, shader, *out);
        return gpupy_driver::resources_fit(*out, d->limits) ? 1 : 0;
    } catch (const std::exception& e) {
        d->last_error = std::string("check_ir: ") + e.what();
        return GPUPY_ERROR;
    }
}

void set_constant(GLuint prog, GLint loc, int dtype, const gpupy_scalar& v) {
    if (loc < 0) return;  // the compiler dropped an unused constant
    switch (dtype) {
        case GPUPY_BOOL: glProgramUniform1ui(prog, loc, v.i != 0 ? 1u : 0u); break;
        case GPUPY_INT8: case GPUPY_INT16: case GPUPY_INT32:
            glProgramUniform1i(prog, loc, static_cast<GLint>(v.i));
            break;
        case GPUPY_UINT8: case GPUPY_UINT16: case GPUPY_UINT32:
            glProgramUniform1ui(prog, loc, static_cast<GLuint>(v.i));
            break;
        case GPUPY_INT64: glProgramUniform1i64ARB(prog, loc, v.i); break;
        case GPUPY_UINT64: glProgramUniform1ui64ARB(prog, loc, v.u); break;
        case GPUPY_FLOAT32: case GPUPY_FLOAT16: glProgramUniform1f(prog, loc, static_cast<float>(v.f)); break;
        case GPUPY_FLOAT64: glProgramUniform1d(prog, loc, v.f); break;
    }
}

// A rolled loop's constants: value c of the array is copy c's CONST, held
// as set_constant holds a scalar, `lanes` to a vector (the last padded).
void set_constant_array(GLuint prog, GLint loc, const gpupy_ir& ir, const GeneratedShader::ConstArray& a) {
    if (loc < 0) return;
    const GLsizei vectors = static_cast<GLsizei>((a.instrs.size() + a.lanes - 1) / a.lanes);
    const size_t n = static_cast<size_t>(vectors) * a.lanes;
    auto values = [&](auto zero, auto convert) {
        std::vector<decltype(zero)> v(n, zero);
        for (size_t c = 0; c < a.instrs.size(); ++c) v[c] = convert(ir.instr[a.instrs[c]].value);
        return v;
    };
    switch (a.dtype) {
        case GPUPY_FLOAT32: case GPUPY_FLOAT16:
            glProgramUniform4fv(prog, loc, vectors, values(0.0f, [](const gpupy_scalar& s) { return static_cast<float>(s.f); }).data());
            break;
        case GPUPY_FLOAT64:
            glProgramUniform2dv(prog, loc, vectors, values(0.0, [](const gpupy_scalar& s) { return s.f; }).data());
            break;
        case GPUPY_INT64:
            glProgramUniform2i64vARB(prog, loc, vectors,
                                     values(GLint64{0}, [](const gpupy_scalar& s) { return static_cast<GLint64>(s.i); }).data());
            break;
        case GPUPY_UINT64:
            glProgramUniform2ui64vARB(prog, loc, vectors,
                                      values(GLuint64{0}, [](const gpupy_scalar& s) { return static_cast<GLuint64>(s.u); }).data());
            break;
        case GPUPY_BOOL:
            glProgramUniform4uiv(prog, loc, vectors, values(0u, [](const gpupy_scalar& s) { return s.i != 0 ? 1u : 0u; }).data());
            break;
        case GPUPY_UINT8: case GPUPY_UINT16: case GPUPY_UINT32:
            glProgramUniform4uiv(prog, loc, vectors,
                                 values(0u, [](const gpupy_scalar& s) { return static_cast<GLuint>(s.i); }).data());
            break;
        default:
            glProgramUniform4iv(prog, loc, vectors, values(0, [](const gpupy_scalar& s) { return static_cast<GLint>(s.i); }).data());
    }
}

// Binds the checks' buffer at kCheckBinding with its first n flags zeroed.
void bind_zeroed_checks(Driver* d, int n) {
    if (n > d->check_capacity) {
        if (d->check_buffer) glDeleteBuffers(1, &d->check_buffer);
        glCreateBuffers(1, &d->check_buffer);
        d->check_capacity = std::max<int64_t>(n, 64);
        glNamedBufferData(d->check_buffer, static_cast<GLsizeiptr>(d->check_capacity * 4), nullptr, GL_DYNAMIC_READ);
    }
    const uint32_t zero = 0;
    glClearNamedBufferSubData(d->check_buffer, GL_R32UI, 0, static_cast<GLsizeiptr>(n) * 4, GL_RED_INTEGER,
                              GL_UNSIGNED_INT, &zero);
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, kCheckBinding, d->check_buffer);
}

// The program for `ir` under `opt` (`shader` holds its key): cached, or
// generated and built.
Program* program_for(Driver* d, const gpupy_ir& ir, const CodegenOptions& opt, GeneratedShader& shader) {
    std::string err;
    Program* prog = d->programs.find(shader.key);
    if (prog) {
        ++d->programs.cache_hits;
        if (d->check_program_keys) {
            // The key is written beside the code writer, not derived from
            // it: a decision of the writer the key leaves out would reuse
            // a program for code that differs. The test suite regenerates
            // the source of every program it finds and compares.
            GeneratedShader again;
            err = generate_shader(ir, opt, true, again);
            if (err.empty() && again.source != prog->shader.source) {
                d->last_error = "eval_ir: two programs share one key (GPUPY_GL_CHECK_PROGRAM_KEYS): the key leaves "
                                "out something the code writer decides";
                return nullptr;
            }
        }
    } else {
        err = generate_shader(ir, opt, true, shader);
        if (!err.empty()) {
            d->last_error = "eval_ir: " + err;
            return nullptr;
        }
        prog = d->programs.get_or_build(std::move(shader), err);
        if (!prog) {
            d->last_error = "eval_ir: " + err;
            return nullptr;
        }
    }
    return prog;
}

// The flags the checks' buffer holds for `ir`: its checked instructions',
// then one per output for its checked folds (gpupy_ir.check_folds).
int check_slots(const gpupy_ir& ir) {
    return ir.ncheck + (ir.reduce_op != GPUPY_OP_NONE && ir.check_folds ? ir.noutputs : 0);
}

// One dispatch of `prog` over `ir` into dst; the checks' flags
// (check_slots of them) into `found`.
int dispatch(Driver* d, Program* prog, const gpupy_ir& ir, gpupy_block* const* dst, uint32_t* found) {
    const GeneratedShader& sh = prog->shader;
    clear_gl_errors();
    std::vector<int64_t> params;
    fill_params(ir, sh.layout, sh.wide_index, params);
    if (sh.wide_index) {
        glProgramUniform1i64vARB(prog->id, prog->params_location, static_cast<GLsizei>(params.size()),
                                 reinterpret_cast<const GLint64*>(params.data()));
    } else {
        std::vector<GLint> p32(params.size());
        // Two's complement truncation: LOAD bases and strides are used
        // modulo 2^32 on the GL side (see needs_wide_index).
        for (size_t i = 0; i < params.size(); ++i) p32[i] = static_cast<GLint>(static_cast<uint32_t>(params[i]));
        glProgramUniform1iv(prog->id, prog->params_location, static_cast<GLsizei>(p32.size()), p32.data());
    }
    for (size_t c = 0; c < sh.const_instrs.size(); ++c) {
        const gpupy_ir_instr& in = ir.instr[sh.const_instrs[c]];
        set_constant(prog->id, prog->const_locations[c], in.dtype, in.value);
    }
    for (size_t c = 0; c < sh.const_arrays.size(); ++c) set_constant_array(prog->id, prog->array_locations[c], ir, sh.const_arrays[c]);
    for (int k = 0; k < ir.noutputs && ir.reduce_op != GPUPY_OP_NONE; ++k)
        set_constant(prog->id, prog->ident_location[k], dst[k]->dtype, k ? ir.output_identity[k] : ir.reduce_identity);

    int unit = 0;
    for (int i = 0; i < ir.ninstr; ++i) {
        const gpupy_ir_instr& in = ir.instr[i];
        if (!gpupy_driver::reads_blocks(in)) continue;
        for (int b = 0; b < in.nblocks; ++b) glBindTextureUnit(unit++, in.blocks[b]->texture);
    }
    glUseProgram(prog->id);
    for (int k = 0; k < ir.noutputs; ++k) {
        glBindImageTexture(k, dst[k]->texture, 0, GL_FALSE, 0, GL_WRITE_ONLY, texture_format(dst[k]->dtype).internal_format);
    }
    const int slots = check_slots(ir);
    if (slots > 0) bind_zeroed_checks(d, slots);

    // Work groups of 64 invocations, spread over y where x runs out; a
    // tiled product's over its tiles.
    int64_t groups = (ir.count + 63) / 64;
    int64_t gx = std::min<int64_t>(groups, d->gl.max_work_group_count[0]);
    int64_t gy = (groups + gx - 1) / gx, gz = 1;
    if (sh.tiled) {
        const ContractionGrid grid = contraction_grid(ir);
        gx = grid.groups[0];
        gy = grid.groups[1];
        gz = grid.groups[2];
    }
    if (gx > d->gl.max_work_group_count[0] || gy > d->gl.max_work_group_count[1] ||
        gz > d->gl.max_work_group_count[2]) {
        d->last_error = "eval_ir: count too large for one dispatch";
        return GPUPY_ERROR;
    }
    auto t0 = std::chrono::steady_clock::now();
    glDispatchCompute(static_cast<GLuint>(gx), static_cast<GLuint>(gy), static_cast<GLuint>(gz));
    // Later shaders read the result with texelFetch; block_read with
    // glGetTextureSubImage.
    glMemoryBarrier(GL_TEXTURE_FETCH_BARRIER_BIT | GL_TEXTURE_UPDATE_BARRIER_BIT | GL_SHADER_IMAGE_ACCESS_BARRIER_BIT);
    if (!prog->has_run) {
        glFinish();  // the JIT runs now, at the first dispatch
        prog->has_run = true;
        d->first_run_ns += std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
    }
    if (slots > 0) {
        // The flags are wanted now (the core reports them when the
        // evaluation ends): this read waits for the dispatch.
        glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT);
        glGetNamedBufferSubData(d->check_buffer, 0, static_cast<GLsizeiptr>(slots) * 4, found);
    }
    GLenum e = glGetError();
    if (e != GL_NO_ERROR) {
        d->last_error = "eval_ir: " + gl_error_name(e) + " dispatching the program";
        clear_gl_errors();
        return GPUPY_ERROR;
    }
    return GPUPY_OK;
}

int eval_with_context(Driver* d, const gpupy_ir& ir, gpupy_block* const* dst) {
    if (ir.ninstr < 1 || !ir.instr) {
        d->last_error = "eval_ir: empty IR";
        return GPUPY_ERROR;
    }
    CodegenOptions opt = d->codegen_options();
    GeneratedShader shader;
    std::string err = generate_shader(ir, opt, false, shader);
    if (!err.empty()) {
        d->last_error = "eval_ir: " + err;
        return GPUPY_ERROR;
    }
    int32_t dst_dtypes[GPUPY_MAX_OUTPUTS];
    for (int k = 0; k < ir.noutputs; ++k) {
        if (!d->blocks.owns(dst[k])) {
            d->last_error = "eval_ir: destination " + std::to_string(k) + " is not a live block of this driver";
            return GPUPY_ERROR;
        }
        if (ir.dst_offset + ir.count > dst[k]->nelems) {
            d->last_error = "eval_ir: output range outside the destination block";
            return GPUPY_ERROR;
        }
        dst_dtypes[k] = dst[k]->dtype;
    }
    if (std::string e = gpupy_driver::destinations_error(ir, dst, dst_dtypes); !e.empty()) {
        d->last_error = "eval_ir: " + e;
        return GPUPY_ERROR;
    }
    for (int i = 0; i < ir.ninstr; ++i) {
        const gpupy_ir_instr& in = ir.instr[i];
        if (!gpupy_driver::reads_blocks(in)) continue;
        for (int b = 0; b < in.nblocks && b < GPUPY_MAX_LEAF_BLOCKS; ++b) {
            gpupy_block* blk = in.blocks[b];
            if (!d->blocks.owns(blk) || blk->dtype != in.dtype) {
                d->last_error = "eval_ir: instruction " + std::to_string(i) + " reads a block that is not a live " +
                                gpupy::dtype_name(in.dtype) + " block";
                return GPUPY_ERROR;
            }
        }
    }
    Program* prog = program_for(d, ir, opt, shader);
    if (!prog) return GPUPY_ERROR;
    if (ir.count == 0) return GPUPY_OK;
    const int slots = check_slots(ir);
    std::vector<uint32_t> found(static_cast<size_t>(std::max(slots, 1)), 0u);
    if (int rc = dispatch(d, prog, ir, dst, found.data()); rc != GPUPY_OK) return rc;
    if (slots == 0) return GPUPY_OK;
    // The checks ran in their quick form: whether a value was made not
    // finite, without a branch (the full form's branches cost a CPU
    // renderer half again the time of a chain of additions). Where one
    // was, the evaluation runs again in the full form, which names the
    // error (the same values again).
    if (std::all_of(found.begin(), found.end(), [](uint32_t f) { return f == 0; })) return GPUPY_OK;
    opt.detailed_checks = true;
    GeneratedShader detailed;
    if (std::string e = generate_shader(ir, opt, false, detailed); !e.empty()) {
        d->last_error = "eval_ir: " + e;
        return GPUPY_ERROR;
    }
    prog = program_for(d, ir, opt, detailed);
    if (!prog) return GPUPY_ERROR;
    if (int rc = dispatch(d, prog, ir, dst, found.data()); rc != GPUPY_OK) return rc;
    for (int k = 0; k < ir.ncheck; ++k) ir.check_flags[k] |= found[k];
    for (int k = ir.ncheck; k < slots; ++k) ir.fold_flags[k - ir.ncheck] |= found[k];
    return GPUPY_OK;
}

int drv_eval_ir(void* ctx, const gpupy_ir* ir, gpupy_block* const* dst) {
    Driver* d = D(ctx);
    if (!ir) {
        d->last_error = "eval_ir: null IR";
        return GPUPY_ERROR;
    }
    return with_context(d, [&] { return eval_with_context(d, *ir, dst); });
}

void drv_resource_get(void* ctx, const gpupy_ir_instr* node, gpupy_resources* out) {
    (void)ctx;
    if (node && out) resource_upper_bound(*node, *out);
}
void drv_resource_zero(void*, gpupy_resources* r) { gpupy_driver::resources_zero(r); }
void drv_resource_add(void*, gpupy_resources* acc, const gpupy_resources* r) { gpupy_driver::resources_add(acc, r); }
void drv_resource_sub(void*, gpupy_resources* acc, const gpupy_resources* r) { gpupy_driver::resources_sub(acc, r); }
int drv_resource_check(void* ctx, const gpupy_resources* r) { return gpupy_driver::resources_fit(*r, D(ctx)->limits) ? 1 : 0; }

const char* drv_last_error(void* ctx) { return D(ctx)->last_error.c_str(); }

const char* drv_describe(void* ctx) {
    Driver* d = D(ctx);
    std::ostringstream s;
    std::string math;
    for (const auto& kv : GlslLibrary::embedded().functions()) {
        if (kv.first.rfind("gp_", 0) == 0) math += (math.empty() ? "" : " ") + kv.first;
    }
    auto limit = [](int64_t v) { return v >= kUnlimited ? std::string("unlimited") : std::to_string(v); };
    s << "driver: opengl\n"
      << "egl_platform: " << d->egl.platform << "\n"
      << "vendor: " << d->gl.vendor << "\n"
      << "renderer: " << d->gl.renderer << "\n"
      << "cpu_renderer: " << (d->cpu_renderer ? "yes" : "no") << "\n"
      << "gpu_like_floats: " << gpu_like_words(d->gpu_like) << "\n"
      << "check_program_keys: " << (d->check_program_keys ? "yes" : "no") << "\n"
      << "tiled_products: "
      << (!d->tiled_products ? "off"
          : std::string(d->shared_tiles ? "shared" : "registers") +
                (d->tiles_chosen ? " (set)" : d->measured_shared_tiles >= 0 ? " (measured)" : " (the device's rule)"))
      << "\n"
      << "gl_version: " << d->gl.gl_version << "\n"
      << "glsl_version: " << d->gl.glsl_version << "\n"
      << "shader_stage: compute\n"
      << "block_texture_width: " << d->blocks.width() << "\n"
      << "max_block_elems: " << d->blocks.max_block_elems() << "\n"
      << "max_texture_size: " << d->gl.max_texture_size << "\n"
      << "max_compute_texture_image_units: " << d->gl.max_compute_texture_units << "\n"
      << "max_compute_uniform_components: " << d->gl.max_compute_uniform_components << "\n"
      << "max_compute_image_uniforms: " << d->gl.max_compute_image_uniforms << "\n"
      << "max_compute_work_group_count: " << d->gl.max_work_group_count[0] << " " << d->gl.max_work_group_count[1]
      << " " << d->gl.max_work_group_count[2] << "\n"
      << "fp64: " << (d->caps.fp64 ? "yes" : "no") << "\n"
      << "float32_subnormals: "
      << (d->floats.f32_subnormals       ? "kept"
          : d->float32_policy == "exact" ? "flushed by the device (float32 runs on the host)"
          : d->float32_policy == "flush" ? "flushed (accepted)"
                                         : "flushed (GPUPY_FLOAT32_SUBNORMALS=exact keeps them, on the host)")
      << "\n"
      << "float32_division: " << (d->floats.f32_division_exact ? "exact" : "approximate (corrected)") << "\n"
      << "float32_sqrt: " << (d->floats.f32_sqrt_exact ? "exact" : "approximate (corrected)") << "\n"
      << "float64_division: " << (!d->caps.fp64 ? "none" : d->floats.f64_division_exact ? "exact" : "approximate (on the host)") << "\n"
      << "float64_sqrt: " << (!d->caps.fp64 ? "none" : d->floats.f64_sqrt_exact ? "exact" : "approximate (corrected)") << "\n"
      << "int64: " << (d->caps.int64 ? "yes" : "no") << "\n"
      << "limit_textures: " << limit(d->limits.slot[kTextures]) << "\n"
      << "limit_uniform_components: " << limit(d->limits.slot[kUniforms]) << "\n"
      << "limit_instructions: " << limit(d->limits.slot[kInstructions]) << "\n"
      << "limit_ops: " << limit(d->limits.slot[kOps]) << "\n"
      << "memory_budget_bytes: " << d->blocks.budget_bytes() << "\n"
      << "memory_used_bytes: " << d->blocks.used_bytes() << "\n"
      << "memory_spare_bytes: " << d->blocks.spare_bytes() << "\n"
      << "textures_reused: " << d->blocks.textures_reused() << "\n"
      << "shader_cache_dir: " << d->egl.shader_cache_dir << "\n"
      << "glsl_math_functions: " << (math.empty() ? "none" : math) << "\n";
    if (!d->float_probe_note.empty()) s << "float_probe: " << d->float_probe_note << "\n";
    if (!GlslLibrary::embedded_errors().empty()) {
        std::string errs = GlslLibrary::embedded_errors();
        for (char& c : errs) if (c == '\n') c = ';';
        s << "glsl_library_errors: " << errs << "\n";
    }
    d->description = s.str();
    return d->description.c_str();
}

int drv_set_option(void* ctx, const char* key, const char* value) {
    Driver* d = D(ctx);
    std::string k = key ? key : "", v = value ? value : "";
    auto fail = [&](const std::string& why) {
        d->last_error = "set_option(" + k + ", " + v + "): " + why;
        return GPUPY_ERROR;
    };
    if (k == "debug_glsl_append") {
        d->debug_append = v;
        return GPUPY_OK;
    }
    if (k == "check_program_keys") {
        // (GPUPY_GL_CHECK_PROGRAM_KEYS's value by default; the calibration
        // turns it off while it measures: it costs a code generation per
        // evaluation, which no user's process pays.)
        if (is_default(value)) {
            d->check_program_keys = d->check_program_keys_by_default;
        } else if (v == "0" || v == "1") {
            d->check_program_keys = v == "1";
        } else {
            return fail("expected 0, 1 or default");
        }
        return GPUPY_OK;
    }
    if (k == "debug_glsl_append_unkeyed") {
        d->debug_append_unkeyed = is_default(value) ? "" : v;
        return GPUPY_OK;
    }
    if (k == "roll_loops") {
        // 1 / default: a repetition of the same instructions with other
        // constants (a Python loop's terms) becomes a loop in the shader.
        if (v == "0" || v == "1" || is_default(value)) d->roll_loops = v != "0";
        else return fail("expected 0, 1 or 'default'");
        return GPUPY_OK;
    }
    if (k == "measured_tiles") {
        // The form a tuning run found faster on this device ("shared" or
        // "registers"); "default": the rule above. Takes effect where the
        // form is the default one.
        if (is_default(value)) d->measured_shared_tiles = -1;
        else if (v == "shared" || v == "registers") d->measured_shared_tiles = v == "shared";
        else return fail("expected shared, registers or 'default'");
        if (!d->tiles_chosen) d->shared_tiles = d->default_shared_tiles();
        return GPUPY_OK;
    }
    if (k == "tiled_products") {
        // 1 / default: the form the device suits (shared memory on a GPU,
        // registers on a CPU renderer); or one of them by name; 0: none.
        if (v == "0") d->tiled_products = false;
        else if (v == "1" || is_default(value))
            d->tiled_products = true, d->tiles_chosen = false, d->shared_tiles = d->default_shared_tiles();
        else if (v == "shared" || v == "registers")
            d->tiled_products = true, d->tiles_chosen = true, d->shared_tiles = v == "shared";
        else return fail("expected 0, 1, shared, registers or 'default'");
        return GPUPY_OK;
    }
    const ResourceLimits gl = d->gl_limits();
    struct LimitKey { const char* name; int slot; int64_t dflt; };
    const LimitKey keys[] = {{"max_textures", kTextures, gl.slot[kTextures]},
                             {"max_uniform_components", kUniforms, gl.slot[kUniforms]},
                             {"max_instructions", kInstructions, kDefaultMaxInstructions},
                             {"max_ops", kOps, kUnlimited}};
    for (const LimitKey& lk : keys) {
        if (k != lk.name) continue;
        if (is_default(value)) {
            d->limits.slot[lk.slot] = lk.dflt;
            return GPUPY_OK;
        }
        int64_t n;
        if (!parse_integer(value, &n) || n < 1) return fail("expected a positive integer or 'default'");
        if (n > gl.slot[lk.slot]) return fail("above the device limit " + std::to_string(gl.slot[lk.slot]));
        d->limits.slot[lk.slot] = n;
        return GPUPY_OK;
    }
    if (k == "max_bytes") {
        int64_t n;
        if (is_default(value)) n = default_memory_budget(d->gl);
        else if (!parse_integer(value, &n) || n < 0) return fail("expected bytes >= 0 (0: no budget) or 'default'");
        // (with the context: spares beyond the new budget are deleted)
        return with_context(d, [&] {
            d->blocks.set_budget_bytes(n);
            return GPUPY_OK;
        });
    }
    if (k == "block_width") {
        int64_t n;
        if (is_default(value)) n = std::min(kDefaultTextureWidth, d->gl.max_texture_size);
        else if (!parse_integer(value, &n) || n < 1 || n > d->gl.max_texture_size) return fail("expected 1..GL_MAX_TEXTURE_SIZE");
        if (d->blocks.live_blocks() != 0) return fail("blocks are allocated; free them first");
        return with_context(d, [&] {
            d->blocks.configure(static_cast<int>(n), d->gl.max_texture_size, d->blocks.budget_bytes());
            return GPUPY_OK;
        });
    }
    return fail("unknown option (known: max_ops, max_textures, max_instructions, max_uniform_components, "
                "max_bytes, block_width, tiled_products, measured_tiles, roll_loops, debug_glsl_append)");
}

// The cost model behind prefers_host. Measured on llvmpipe (2 cores,
// docs/performance.md): every compute invocation costs ~7-10 ns whatever
// it reads (texelFetch, imageLoad or SSBO alike), where the host engine
// streams an operation over an element in ~0.1 ns; a dispatch plus its
// readback costs ~50 us. So on a CPU renderer the device only pays off for
// arithmetic-heavy expressions (the distance map: thousands of operations
// per element), and on a real GPU only for work large enough to hide the
// dispatch and transfer.
constexpr int64_t kAlwaysHostElements = int64_t{1} << 12;
constexpr int64_t kCpuRendererMinOps = 48;

int drv_prefers_host(void* ctx, int64_t elements, int64_t ops) {
    Driver* d = D(ctx);
    if (elements <= kAlwaysHostElements) return 1;
    if (d->cpu_renderer) return ops < kCpuRendererMinOps ? 1 : 0;
    return elements < GPUPY_SMALL_WORK_ELEMENTS ? 1 : 0;
}

void drv_get_counters(void* ctx, gpupy_driver_counters* out) {
    Driver* d = D(ctx);
    std::memset(out, 0, sizeof *out);
    out->programs_compiled = d->programs.programs_compiled;
    out->program_cache_hits = d->programs.cache_hits;
    out->compile_ns = d->programs.compile_ns;
    out->first_run_ns = d->first_run_ns;
}

// glDispatchCompute returns once the work is queued; glFinish waits for it.
int drv_finish(void* ctx) {
    return with_context(D(ctx), [] {
        glFinish();
        return GPUPY_OK;
    });
}

const gpupy_driver_api kApi = {
    GPUPY_DRIVER_ABI_VERSION, "opengl",
    drv_init, drv_cleanup, drv_get_method,
    drv_block_alloc, drv_block_free, drv_block_read, drv_block_write,
    drv_check_ir, drv_eval_ir,
    drv_resource_get, drv_resource_zero, drv_resource_add, drv_resource_sub, drv_resource_check,
    drv_last_error, drv_describe, drv_set_option, drv_get_counters,
    nullptr,  // block_wrap: device memory is not host memory
    drv_prefers_host,
    nullptr,  // offer_host_loop: this driver computes on the device
    drv_finish,
    gpupy::gpupy_op_rows, gpupy::gpupy_num_op_rows,
    gpupy::gpupy_dtype_rows, gpupy::gpupy_num_dtype_rows,
};

}  // namespace
}  // namespace gpupy_gl

extern "C" __attribute__((visibility("default"))) const gpupy_driver_api* gpupy_driver_entry(void) {
    return &gpupy_gl::kApi;
}
