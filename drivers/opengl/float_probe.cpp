#include "float_probe.hpp"

#include "glsl_library.hpp"
#include "gpupy/float16.hpp"
#include "program_cache.hpp"

#include <GL/glew.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace gpupy_gl {

namespace {

// Operands: random normal values of moderate exponent (no overflow or
// underflow in a quotient), enough that an operator accurate to 2.5 ulp
// shows in some of them, and two products whose exact result is subnormal.
constexpr int kPairs32 = 4096;
constexpr int kPairs64 = 1024;

struct Rng {
    uint64_t s = 0x9e3779b97f4a7c15ull;
    uint64_t next() {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        return s;
    }
};

using gpupy::bits_of;
using gpupy::float_from_bits;

const char* kShader = R"(
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer In32 { uint in32[]; };
layout(std430, binding = 1) writeonly buffer Out32 { uint out32[]; };
#ifdef PROBE_FP64
layout(std430, binding = 2) readonly buffer In64 { uvec2 in64[]; };
layout(std430, binding = 3) writeonly buffer Out64 { uvec2 out64[]; };
#endif
uniform int u_n32;
uniform int u_n64;
void main() {
    int i = int(gl_GlobalInvocationID.x);
    if (i < u_n32) {
        precise float a = uintBitsToFloat(in32[2 * i]);
        precise float b = uintBitsToFloat(in32[2 * i + 1]);
        precise float q = gp__fdiv(a, b);
        precise float s = gp__fsqrt(a);
        precise float m = gp__ftz(gp__ftz(a) * gp__ftz(b));
        out32[3 * i] = floatBitsToUint(q);
        out32[3 * i + 1] = floatBitsToUint(s);
        out32[3 * i + 2] = floatBitsToUint(m);
    }
#ifdef PROBE_FP64
    if (i < u_n64) {
        precise double a = packDouble2x32(in64[2 * i]);
        precise double b = packDouble2x32(in64[2 * i + 1]);
        precise double q = a / b;
        precise double s = gpo_fsqrt_f64(a);
        out64[2 * i] = unpackDouble2x32(q);
        out64[2 * i + 1] = unpackDouble2x32(s);
    }
#endif
}
)";

}  // namespace

std::string probe_float_behaviour(bool fp64, const gpupy_glsl::GpuLikeFloats& gpu_like, FloatBehaviour* out) {
    Rng rng;
    // float32 operands: sign, exponent within 2^-20..2^20, any mantissa.
    auto normal32 = [&](bool positive) {
        const uint64_t r = rng.next();
        const uint32_t sign = positive ? 0u : static_cast<uint32_t>(r >> 63) << 31;
        const uint32_t exponent = 127u - 20u + static_cast<uint32_t>((r >> 23) % 41u);
        return float_from_bits(sign | (exponent << 23) | static_cast<uint32_t>(r & 0x7fffffu));
    };
    std::vector<uint32_t> in32(2 * kPairs32);
    for (int i = 0; i < kPairs32; ++i) {
        in32[2 * i] = bits_of(normal32(true));  // positive: its sqrt is checked
        in32[2 * i + 1] = bits_of(normal32(false));
    }
    // The last two pairs make subnormal products: FLT_MIN * 0.5 (a
    // subnormal result) and the smallest subnormal * 1 (a subnormal operand).
    const int sub0 = kPairs32 - 2, sub1 = kPairs32 - 1;
    in32[2 * sub0] = bits_of(float_from_bits(0x00800000u));
    in32[2 * sub0 + 1] = bits_of(0.5f);
    in32[2 * sub1] = 1u;
    in32[2 * sub1 + 1] = bits_of(1.0f);

    std::vector<uint64_t> in64(fp64 ? 2 * kPairs64 : 0);
    for (int i = 0; i < (fp64 ? kPairs64 : 0); ++i) {
        for (int k = 0; k < 2; ++k) {
            const uint64_t r = rng.next();
            const uint64_t sign = k == 0 ? 0 : (r >> 63) << 63;
            const uint64_t exponent = 1023u - 40u + (r >> 52) % 81u;
            in64[2 * i + k] = sign | (exponent << 52) | (rng.next() & 0xfffffffffffffull);
        }
    }

    std::string why;
    // float32's operators as the library's shaders use them (built GPU-like
    // where asked).
    gpupy_glsl::ShaderFunctions fns;
    for (const char* fn : {"gp__fdiv", "gp__fsqrt"}) fns.use(fn);
    if (fp64) fns.use("gpo_fsqrt_f64");
    std::string library;
    for (const std::string& fn : fns.order) library += gpupy_glsl::GlslLibrary::embedded().text(fn);
    const std::string source = std::string("#version 450\n") + gpupy_glsl::gpu_like_defines(gpu_like) +
                               (fp64 ? "#define PROBE_FP64\n" : "") + library + kShader;
    const GLuint prog = build_compute_program(source, why);
    if (!prog) return "the float probe: " + why.substr(0, why.find('\n'));
    GLuint buf[4] = {0, 0, 0, 0};
    glCreateBuffers(4, buf);
    glNamedBufferData(buf[0], static_cast<GLsizeiptr>(in32.size() * 4), in32.data(), GL_STATIC_DRAW);
    glNamedBufferData(buf[1], static_cast<GLsizeiptr>(3 * kPairs32 * 4), nullptr, GL_DYNAMIC_READ);
    glNamedBufferData(buf[2], static_cast<GLsizeiptr>(fp64 ? in64.size() * 8 : 16), fp64 ? in64.data() : nullptr,
                      GL_STATIC_DRAW);
    glNamedBufferData(buf[3], static_cast<GLsizeiptr>(fp64 ? 2 * kPairs64 * 8 : 16), nullptr, GL_DYNAMIC_READ);
    for (GLuint k = 0; k < 4; ++k) glBindBufferBase(GL_SHADER_STORAGE_BUFFER, k, buf[k]);
    glUseProgram(prog);
    glUniform1i(glGetUniformLocation(prog, "u_n32"), kPairs32);
    glUniform1i(glGetUniformLocation(prog, "u_n64"), fp64 ? kPairs64 : 0);
    glDispatchCompute((kPairs32 + 63) / 64, 1, 1);
    glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT);
    std::vector<uint32_t> out32(3 * kPairs32);
    std::vector<uint64_t> out64(fp64 ? 2 * kPairs64 : 0);
    glGetNamedBufferSubData(buf[1], 0, static_cast<GLsizeiptr>(out32.size() * 4), out32.data());
    if (fp64) glGetNamedBufferSubData(buf[3], 0, static_cast<GLsizeiptr>(out64.size() * 8), out64.data());
    glUseProgram(0);
    for (GLuint k = 0; k < 4; ++k) glBindBufferBase(GL_SHADER_STORAGE_BUFFER, k, 0);
    glDeleteBuffers(4, buf);
    glDeleteProgram(prog);
    if (glGetError() != GL_NO_ERROR) return "the float probe raised a GL error";

    FloatBehaviour b;
    for (int i = 0; i < kPairs32; ++i) {
        const float a = float_from_bits(in32[2 * i]), d = float_from_bits(in32[2 * i + 1]);
        if (i == sub0 || i == sub1) {
            if (out32[3 * i + 2] != bits_of(a * d)) b.f32_subnormals = false;
            continue;
        }
        if (out32[3 * i] != bits_of(a / d)) b.f32_division_exact = false;
        if (out32[3 * i + 1] != bits_of(std::sqrt(a))) b.f32_sqrt_exact = false;
    }
    for (int i = 0; i < (fp64 ? kPairs64 : 0); ++i) {
        double a, d;
        std::memcpy(&a, &in64[2 * i], 8);
        std::memcpy(&d, &in64[2 * i + 1], 8);
        if (out64[2 * i] != bits_of(a / d)) b.f64_division_exact = false;
        if (out64[2 * i + 1] != bits_of(std::sqrt(a))) b.f64_sqrt_exact = false;
    }
    *out = b;
    return "";
}

namespace {

// GPUPY_GL_FLOAT_PROBE's words, each the flag it sets, in describe()'s order.
struct GpuLikeWord {
    const char* word;
    bool gpupy_glsl::GpuLikeFloats::*flag;
};
constexpr GpuLikeWord kGpuLikeWords[] = {
    {"subnormals_flushed", &gpupy_glsl::GpuLikeFloats::flush_subnormals},
    {"division_inexact", &gpupy_glsl::GpuLikeFloats::loose_division},
    {"sqrt_inexact", &gpupy_glsl::GpuLikeFloats::loose_sqrt},
    {"float64_division_inexact", &gpupy_glsl::GpuLikeFloats::float64_division_inexact},
};

}  // namespace

std::string gpu_like_floats(const char* spec, gpupy_glsl::GpuLikeFloats* out) {
    if (!spec) return "";
    std::string s(spec), word;
    for (size_t i = 0; i <= s.size(); ++i) {
        if (i < s.size() && s[i] != ',') {
            word += s[i];
            continue;
        }
        if (!word.empty()) {
            const auto known = std::find_if(std::begin(kGpuLikeWords), std::end(kGpuLikeWords),
                                            [&](const GpuLikeWord& w) { return word == w.word; });
            if (known == std::end(kGpuLikeWords)) return word;
            out->*known->flag = true;
        }
        word.clear();
    }
    return "";
}

std::string gpu_like_words(const gpupy_glsl::GpuLikeFloats& g) {
    std::string s;
    for (const GpuLikeWord& w : kGpuLikeWords) {
        if (g.*w.flag) s += std::string(s.empty() ? "" : ",") + w.word;
    }
    return s.empty() ? "no" : s;
}

std::string gpu_like_vocabulary() {
    std::string s;
    for (const GpuLikeWord& w : kGpuLikeWords) s += std::string(s.empty() ? "'" : ", '") + w.word + "'";
    return s;
}

void apply_gpu_like_float64(const gpupy_glsl::GpuLikeFloats& gpu_like, FloatBehaviour* b) {
    if (gpu_like.float64_division_inexact) b->f64_division_exact = false;
}

}  // namespace gpupy_gl
