// A hand-written GLSL compute shader for the distance map (thesis A.3), on
// the same GL implementation gpupy uses: the comparison Accelerator made
// against hand-written pixel shaders. Built by benchmarks/native.py (g++ -O3,
// -lEGL -lOpenGL) and called through ctypes, so Python's perf_counter times
// it like every other version.
//
// Its own headless EGL context (surfaceless Mesa platform, else the default
// display), OpenGL 4.5 core. The running minimum lives in an n x n R32F
// texture bound as an image; the points are uniforms, CHUNK per dispatch:
// The minimum is written `d < m ? d : m`: llvmpipe's min() builtin carries
// GL's NaN rule and measured about 2x slower per point (CPU time, 2048²,
// 256 points: 0.48-0.70 s with min(), 0.29-0.30 s with the select).
//   mode 0 "loop":     for (k < count) over uniform vec2 P[CHUNK]
//                      (what one writes first; on llvmpipe a dynamic index
//                      into a uniform array is a per-lane gather)
//   mode 1 "unrolled": CHUNK straight-line statements reading P[0..CHUNK-1]
//                      at constant indices; the last chunk is padded with
//                      copies of its last point (the minimum is unchanged)
//   mode 2 "unrolled-nanmin": mode 1 with NumPy's NaN-propagating minimum
//                      (isnan tests before the comparison), separately
//                      computed squares and no contraction (`precise`), as
//                      an exact translation of the NumPy program must do:
//                      what gpupy's generated code could reach per point
// One run = clear to +inf, one dispatch per chunk, read the texture back,
// then max and scaling on the host (255 * (d / max), as the NumPy program).
// Each call makes the context current and restores the caller's binding
// afterwards (gpupy's OpenGL driver, in the same process, does the same).
//
// Also here: Accelerator's Life and separable 5x5 Gaussian written by hand
// (hg_stencil_*), and C$'s float32 matrix product (hg_matmul_*, the
// reference for gpupy's tiled product), for benchmarks/seeds.py. And, as a
// floor for memory-bound elementwise work: `2*a + 3*b` over
// n float32 with a and b resident on the device, one dispatch and the
// readback of the result, in two layouts: "ssbo" (linear buffers) and
// "texture" (R32F textures 4096 wide read with texelFetch, written with
// imageStore, as gpupy's blocks).
//
// And what the device itself can do, for benchmarks/gpu.py, each timed in
// here with a steady clock up to glFinish (the device's time, no readback):
// its copy bandwidth (hg_copy_*: one buffer copied into another by the
// driver), its float32 arithmetic peak (hg_peak_*: long chains of
// independent vec4 fma), and 2*a + 3*b and the product repeated on inputs
// the device holds, their results left there (hg_ew_time, hg_matmul_time).
#define GL_GLEXT_PROTOTYPES 1
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GL/glcorearb.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace {

struct State {
    EGLDisplay display = EGL_NO_DISPLAY;
    EGLContext context = EGL_NO_CONTEXT;
    GLuint program = 0;
    GLuint texture = 0;
    GLint pts_location = -1, count_location = -1;
    int n = 0, mode = -1, chunk = 0, local = 8;
    std::string renderer;
};
State g;

void set_error(char* err, int len, const std::string& msg) {
    if (err && len > 0) {
        std::snprintf(err, static_cast<size_t>(len), "%s", msg.c_str());
    }
}

// Binds our context for the duration of one call; restores the previous one.
class Bind {
public:
    Bind() {
        prev_api_ = eglQueryAPI();
        eglBindAPI(EGL_OPENGL_API);
        prev_ctx_ = eglGetCurrentContext();
        prev_dpy_ = eglGetCurrentDisplay();
        prev_draw_ = eglGetCurrentSurface(EGL_DRAW);
        prev_read_ = eglGetCurrentSurface(EGL_READ);
        ok_ = eglMakeCurrent(g.display, EGL_NO_SURFACE, EGL_NO_SURFACE, g.context) == EGL_TRUE;
    }
    ~Bind() {
        if (prev_ctx_ != EGL_NO_CONTEXT) {
            eglMakeCurrent(prev_dpy_, prev_draw_, prev_read_, prev_ctx_);
        } else {
            eglMakeCurrent(g.display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
        }
        if (prev_api_ != EGL_NONE) eglBindAPI(prev_api_);
    }
    bool ok() const { return ok_; }

private:
    bool ok_ = false;
    EGLenum prev_api_ = EGL_NONE;
    EGLContext prev_ctx_ = EGL_NO_CONTEXT;
    EGLDisplay prev_dpy_ = EGL_NO_DISPLAY;
    EGLSurface prev_draw_ = EGL_NO_SURFACE, prev_read_ = EGL_NO_SURFACE;
};

std::string shader_source(int mode, int chunk, int local) {
    std::string s = "#version 450\n";
    s += "layout(local_size_x = " + std::to_string(local) + ", local_size_y = " + std::to_string(local) +
         ") in;\n";
    s += "layout(r32f, binding = 0) uniform restrict image2D u_min;\n";
    s += "uniform vec2 u_pts[" + std::to_string(chunk) + "];\n";
    s += "uniform int u_count;\n";
    s += "void main() {\n";
    // No early return for the invocations past the edge: on llvmpipe,
    // uniforms read after a divergent return become per-lane gathers
    // (GL_NOTES). They compute a clamped pixel and skip only the store.
    s += "  ivec2 size = imageSize(u_min);\n";
    s += "  ivec2 g = min(ivec2(gl_GlobalInvocationID.xy), size - 1);\n";
    s += "  bool inside = all(lessThan(ivec2(gl_GlobalInvocationID.xy), size));\n";
    // Texel (column j, row i): x is the row index (numpy.fromfunction's
    // first argument), y the column index.
    s += "  float x = float(g.y), y = float(g.x);\n";
    s += std::string(mode == 2 ? "  precise" : " ") + " float m = imageLoad(u_min, g).r;\n";
    if (mode == 0) {
        s += "  for (int k = 0; k < u_count; ++k) {\n";
        s += "    float dx = x - u_pts[k].x, dy = y - u_pts[k].y;\n";
        s += "    float d = sqrt(dx * dx + dy * dy);\n";
        s += "    m = d < m ? d : m;\n";
        s += "  }\n";
    } else if (mode == 1) {
        for (int k = 0; k < chunk; ++k) {
            std::string p = "u_pts[" + std::to_string(k) + "]";
            s += "  { float dx = x - " + p + ".x, dy = y - " + p + ".y; float d = sqrt(dx * dx + dy * dy); "
                 "m = d < m ? d : m; }\n";
        }
    } else {
        // minimum(d, m) as NumPy: a NaN operand wins (the first one).
        s += "  precise float d, dx, dy, dx2, dy2;\n";
        for (int k = 0; k < chunk; ++k) {
            std::string p = "u_pts[" + std::to_string(k) + "]";
            s += "  dx = x - " + p + ".x; dx2 = dx * dx; dy = y - " + p + ".y; dy2 = dy * dy; d = sqrt(dx2 + dy2);\n";
            s += "  m = isnan(d) ? d : (isnan(m) ? m : (d < m ? d : m));\n";
        }
    }
    s += "  if (inside) imageStore(u_min, g, vec4(m));\n";
    s += "}\n";
    return s;
}

// Compiles and links one compute shader; 0 with `error` set on failure.
GLuint build_compute_program(const std::string& src, std::string& error) {
    const char* text = src.c_str();
    GLuint shader = glCreateShader(GL_COMPUTE_SHADER);
    glShaderSource(shader, 1, &text, nullptr);
    glCompileShader(shader);
    GLint ok = 0;
    glGetShaderiv(shader, GL_COMPILE_STATUS, &ok);
    if (!ok) {
        char log[4096];
        glGetShaderInfoLog(shader, sizeof log, nullptr, log);
        error = std::string("compile: ") + log;
        glDeleteShader(shader);
        return 0;
    }
    GLuint program = glCreateProgram();
    glAttachShader(program, shader);
    glLinkProgram(program);
    glDeleteShader(shader);
    glGetProgramiv(program, GL_LINK_STATUS, &ok);
    if (!ok) {
        char log[4096];
        glGetProgramInfoLog(program, sizeof log, nullptr, log);
        error = std::string("link: ") + log;
        glDeleteProgram(program);
        return 0;
    }
    return program;
}

// Seconds from issuing `work` (GL commands) until the device has finished
// it: GL returns before the device runs what it was given, so the clock
// stops after glFinish. The caller finishes earlier work first.
template <class Work>
double time_until_finished(Work work) {
    const auto start = std::chrono::steady_clock::now();
    work();
    glFinish();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

bool compile_program(int mode, int chunk, int local, std::string& error) {
    GLuint program = build_compute_program(shader_source(mode, chunk, local), error);
    if (!program) return false;
    if (g.program) glDeleteProgram(g.program);
    g.program = program;
    g.pts_location = glGetUniformLocation(program, "u_pts");
    g.count_location = glGetUniformLocation(program, "u_count");
    return true;
}

}  // namespace

extern "C" {

int hg_init(char* err, int len) {
    if (g.context != EGL_NO_CONTEXT) return 0;
    auto get_platform_display =
        reinterpret_cast<PFNEGLGETPLATFORMDISPLAYEXTPROC>(eglGetProcAddress("eglGetPlatformDisplayEXT"));
    if (get_platform_display) {
        g.display = get_platform_display(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, nullptr);
    }
    EGLint major = 0, minor = 0;
    if (g.display == EGL_NO_DISPLAY || !eglInitialize(g.display, &major, &minor)) {
        g.display = eglGetDisplay(EGL_DEFAULT_DISPLAY);
        if (g.display == EGL_NO_DISPLAY || !eglInitialize(g.display, &major, &minor)) {
            set_error(err, len, "no EGL display");
            return 1;
        }
    }
    EGLenum prev_api = eglQueryAPI();
    if (!eglBindAPI(EGL_OPENGL_API)) {
        set_error(err, len, "eglBindAPI(EGL_OPENGL_API) failed");
        return 1;
    }
    const EGLint config_attribs[] = {EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT, EGL_NONE};
    EGLConfig config = nullptr;
    EGLint nconfig = 0;
    eglChooseConfig(g.display, config_attribs, &config, 1, &nconfig);
    const EGLint context_attribs[] = {EGL_CONTEXT_MAJOR_VERSION, 4, EGL_CONTEXT_MINOR_VERSION, 5,
                                      EGL_CONTEXT_OPENGL_PROFILE_MASK, EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT,
                                      EGL_NONE};
    g.context = eglCreateContext(g.display, nconfig > 0 ? config : EGL_NO_CONFIG_KHR, EGL_NO_CONTEXT,
                                 context_attribs);
    if (prev_api != EGL_NONE) eglBindAPI(prev_api);
    if (g.context == EGL_NO_CONTEXT) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "eglCreateContext failed (0x%x)", static_cast<unsigned>(eglGetError()));
        set_error(err, len, buf);
        return 1;
    }
    Bind bind;
    if (!bind.ok()) {
        set_error(err, len, "eglMakeCurrent failed");
        return 1;
    }
    const char* r = reinterpret_cast<const char*>(glGetString(GL_RENDERER));
    const char* v = reinterpret_cast<const char*>(glGetString(GL_VERSION));
    g.renderer = std::string(r ? r : "?") + " | " + (v ? v : "?");
    return 0;
}

const char* hg_describe() { return g.renderer.c_str(); }

// Allocates the n x n image and compiles the program for (mode, chunk).
// Compilation only: the JIT happens at the first dispatch (GL_NOTES).
int hg_prepare(int n, int mode, int chunk, int local, char* err, int len) {
    Bind bind;
    if (!bind.ok()) {
        set_error(err, len, "eglMakeCurrent failed");
        return 1;
    }
    if (mode != g.mode || chunk != g.chunk || local != g.local || !g.program) {
        std::string error;
        if (!compile_program(mode, chunk, local, error)) {
            set_error(err, len, error);
            return 1;
        }
        g.mode = mode;
        g.chunk = chunk;
        g.local = local;
    }
    if (n != g.n || !g.texture) {
        if (g.texture) glDeleteTextures(1, &g.texture);
        glCreateTextures(GL_TEXTURE_2D, 1, &g.texture);
        glTextureStorage2D(g.texture, 1, GL_R32F, n, n);
        g.n = n;
    }
    GLenum e = glGetError();
    if (e != GL_NO_ERROR) {
        set_error(err, len, "GL error " + std::to_string(e) + " in prepare");
        return 1;
    }
    return 0;
}

// One distance map: px/py hold npts float32 coordinates, out n*n floats.
int hg_run(const float* px, const float* py, int npts, float* out, char* err, int len) {
    Bind bind;
    if (!bind.ok()) {
        set_error(err, len, "eglMakeCurrent failed");
        return 1;
    }
    const int n = g.n, chunk = g.chunk;
    const float inf = std::numeric_limits<float>::infinity();
    glClearTexImage(g.texture, 0, GL_RED, GL_FLOAT, &inf);
    glUseProgram(g.program);
    glBindImageTexture(0, g.texture, 0, GL_FALSE, 0, GL_READ_WRITE, GL_R32F);
    std::vector<float> pts(2 * static_cast<size_t>(chunk));
    const GLuint groups = static_cast<GLuint>((n + g.local - 1) / g.local);
    for (int first = 0; first < npts; first += chunk) {
        const int count = npts - first < chunk ? npts - first : chunk;
        for (int k = 0; k < chunk; ++k) {
            const int src = first + (k < count ? k : count - 1);
            pts[2 * k] = px[src];
            pts[2 * k + 1] = py[src];
        }
        glUniform2fv(g.pts_location, chunk, pts.data());
        glUniform1i(g.count_location, count);
        glMemoryBarrier(GL_SHADER_IMAGE_ACCESS_BARRIER_BIT);
        glDispatchCompute(groups, groups, 1);
    }
    glMemoryBarrier(GL_TEXTURE_UPDATE_BARRIER_BIT);
    glGetTextureImage(g.texture, 0, GL_RED, GL_FLOAT, static_cast<GLsizei>(sizeof(float) * n * n), out);
    GLenum e = glGetError();
    if (e != GL_NO_ERROR) {
        set_error(err, len, "GL error " + std::to_string(e) + " in run");
        return 1;
    }
    const size_t total = static_cast<size_t>(n) * n;
    float mx = 0.0f;
    for (size_t i = 0; i < total; ++i) mx = out[i] > mx ? out[i] : mx;
    for (size_t i = 0; i < total; ++i) out[i] = 255.0f * ((out[i] - 0.0f) / (mx - 0.0f));
    return 0;
}

// ---------------------------------------------------------------- 2*a + 3*b

namespace {
struct Elementwise {
    int n = 0, layout = -1, width = 4096, rows = 0;
    GLuint program = 0;
    GLuint buffers[3] = {0, 0, 0};
    GLuint textures[3] = {0, 0, 0};
    GLint n_location = -1;
};
Elementwise ew;

void ew_release() {
    if (ew.program) glDeleteProgram(ew.program);
    glDeleteBuffers(3, ew.buffers);
    glDeleteTextures(3, ew.textures);
    ew = Elementwise{};
}

bool ew_compile(int layout, std::string& error) {
    std::string src = "#version 450\nlayout(local_size_x = 64) in;\nuniform int u_n;\n";
    if (layout == 0) {
        src +=
            "layout(std430, binding = 0) readonly restrict buffer A { float a[]; };\n"
            "layout(std430, binding = 1) readonly restrict buffer B { float b[]; };\n"
            "layout(std430, binding = 2) writeonly restrict buffer O { float o[]; };\n"
            "void main() {\n"
            "  int i = int(gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * 64u);\n"
            "  if (i < u_n) o[i] = 2.0 * a[i] + 3.0 * b[i];\n"
            "}\n";
    } else {
        src +=
            "layout(binding = 0) uniform sampler2D u_a;\n"
            "layout(binding = 1) uniform sampler2D u_b;\n"
            "layout(r32f, binding = 0) writeonly restrict uniform image2D u_o;\n"
            "void main() {\n"
            "  ivec2 p = ivec2(gl_GlobalInvocationID.xy);\n"
            "  if (p.y * 4096 + p.x >= u_n) return;\n"
            "  float v = 2.0 * texelFetch(u_a, p, 0).r + 3.0 * texelFetch(u_b, p, 0).r;\n"
            "  imageStore(u_o, p, vec4(v));\n"
            "}\n";
    }
    ew.program = build_compute_program(src, error);
    if (!ew.program) return false;
    ew.n_location = glGetUniformLocation(ew.program, "u_n");
    return true;
}
}  // namespace

// layout 0: SSBOs, 1: textures. Uploads a and b (n floats each).
int hg_ew_prepare(const float* a, const float* b, int n, int layout, char* err, int len) {
    Bind bind;
    if (!bind.ok()) {
        set_error(err, len, "eglMakeCurrent failed");
        return 1;
    }
    ew_release();
    std::string error;
    if (!ew_compile(layout, error)) {
        set_error(err, len, error);
        return 1;
    }
    ew.n = n;
    ew.layout = layout;
    const GLsizeiptr bytes = static_cast<GLsizeiptr>(sizeof(float)) * n;
    if (layout == 0) {
        glCreateBuffers(3, ew.buffers);
        glNamedBufferData(ew.buffers[0], bytes, a, GL_STATIC_DRAW);
        glNamedBufferData(ew.buffers[1], bytes, b, GL_STATIC_DRAW);
        glNamedBufferData(ew.buffers[2], bytes, nullptr, GL_DYNAMIC_READ);
    } else {
        ew.rows = (n + ew.width - 1) / ew.width;
        glCreateTextures(GL_TEXTURE_2D, 3, ew.textures);
        const float* src[2] = {a, b};
        std::vector<float> last(ew.width, 0.0f);
        for (int t = 0; t < 3; ++t) {
            glTextureStorage2D(ew.textures[t], 1, GL_R32F, ew.width, ew.rows);
            if (t == 2) break;
            const int full = n / ew.width, rest = n % ew.width;
            if (full) glTextureSubImage2D(ew.textures[t], 0, 0, 0, ew.width, full, GL_RED, GL_FLOAT, src[t]);
            if (rest) {
                std::memcpy(last.data(), src[t] + static_cast<size_t>(full) * ew.width, sizeof(float) * rest);
                glTextureSubImage2D(ew.textures[t], 0, 0, full, ew.width, 1, GL_RED, GL_FLOAT, last.data());
            }
        }
    }
    GLenum e = glGetError();
    if (e != GL_NO_ERROR) {
        set_error(err, len, "GL error " + std::to_string(e) + " in ew_prepare");
        return 1;
    }
    return 0;
}

namespace {
// One dispatch of 2*a + 3*b over the prepared inputs, its result left on
// the device.
void ew_dispatch() {
    glUseProgram(ew.program);
    glUniform1i(ew.n_location, ew.n);
    if (ew.layout == 0) {
        for (GLuint i = 0; i < 3; ++i) glBindBufferBase(GL_SHADER_STORAGE_BUFFER, i, ew.buffers[i]);
        const GLuint groups = static_cast<GLuint>((ew.n + 63) / 64);
        const GLuint gx = groups < 32768u ? groups : 32768u;
        glDispatchCompute(gx, (groups + gx - 1) / gx, 1);
    } else {
        glBindTextureUnit(0, ew.textures[0]);
        glBindTextureUnit(1, ew.textures[1]);
        glBindImageTexture(0, ew.textures[2], 0, GL_FALSE, 0, GL_WRITE_ONLY, GL_R32F);
        glDispatchCompute(static_cast<GLuint>(ew.width / 64), static_cast<GLuint>(ew.rows), 1);
    }
}
}  // namespace

// out = 2*a + 3*b, read back into out (n floats).
int hg_ew_run(float* out, char* err, int len) {
    Bind bind;
    if (!bind.ok()) {
        set_error(err, len, "eglMakeCurrent failed");
        return 1;
    }
    ew_dispatch();
    if (ew.layout == 0) {
        glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT);
        glGetNamedBufferSubData(ew.buffers[2], 0, static_cast<GLsizeiptr>(sizeof(float)) * ew.n, out);
    } else {
        glMemoryBarrier(GL_TEXTURE_UPDATE_BARRIER_BIT);
        const int full = ew.n / ew.width, rest = ew.n % ew.width;
        if (full) {
            glGetTextureSubImage(ew.textures[2], 0, 0, 0, 0, ew.width, full, 1, GL_RED, GL_FLOAT,
                                 static_cast<GLsizei>(sizeof(float) * full * ew.width), out);
        }
        if (rest) {
            std::vector<float> last(ew.width);
            glGetTextureSubImage(ew.textures[2], 0, 0, full, 0, ew.width, 1, 1, GL_RED, GL_FLOAT,
                                 static_cast<GLsizei>(sizeof(float) * ew.width), last.data());
            std::memcpy(out + static_cast<size_t>(full) * ew.width, last.data(), sizeof(float) * rest);
        }
    }
    GLenum e = glGetError();
    if (e != GL_NO_ERROR) {
        set_error(err, len, "GL error " + std::to_string(e) + " in ew_run");
        return 1;
    }
    return 0;
}

// 2*a + 3*b `reps` times in a row with the result left on the device (the
// work of an elementwise expression whose inputs and result stay there):
// *seconds is the time from the first dispatch to glFinish, after one
// untimed dispatch (the JIT and first touch of the output).
int hg_ew_time(int reps, double* seconds, char* err, int len) {
    Bind bind;
    if (!bind.ok()) {
        set_error(err, len, "eglMakeCurrent failed");
        return 1;
    }
    if (!ew.program) {
        set_error(err, len, "ew_time before ew_prepare");
        return 1;
    }
    ew_dispatch();
    glFinish();
    *seconds = time_until_finished([&] {
        for (int r = 0; r < reps; ++r) ew_dispatch();
    });
    GLenum e = glGetError();
    if (e != GL_NO_ERROR) {
        set_error(err, len, "GL error " + std::to_string(e) + " in ew_time");
        return 1;
    }
    return 0;
}

namespace {

// Accelerator's stencils written by hand, for the seed workloads
// (benchmarks/seeds.py): n x n images as textures, one dispatch per pass,
// 8x8 work groups, neighbours read with texelFetch at wrapped (Life) or
// clamped (Gaussian) coordinates, ping-ponging between two textures.
//   kind 0 "life": uint8 cells (R8UI), `steps` generations on a torus
//   kind 1 "gauss5x5": float32 (R32F), the separable 5x5 binomial filter
//          (1 4 6 4 1)/16 with edge-clamped borders: a row pass, then a
//          column pass, summed in the seed's order with `precise`
struct Stencil {
    int kind = -1, n = 0, steps = 0;
    GLuint program[2] = {0, 0};
    GLuint textures[2] = {0, 0};
};
Stencil st;

void stencil_release() {
    for (GLuint p : st.program) {
        if (p) glDeleteProgram(p);
    }
    glDeleteTextures(2, st.textures);
    st = Stencil{};
}

std::string stencil_source(int kind, int pass) {
    std::string s = "#version 450\nlayout(local_size_x = 8, local_size_y = 8) in;\n";
    s += "uniform int u_n;\n";
    if (kind == 0) {
        s += "layout(binding = 0) uniform usampler2D u_in;\n"
             "layout(r8ui, binding = 0) writeonly restrict uniform uimage2D u_out;\n"
             "void main() {\n"
             "  ivec2 p = ivec2(gl_GlobalInvocationID.xy);\n"
             "  if (p.x >= u_n || p.y >= u_n) return;\n"
             "  uint count = 0u;\n"
             "  for (int dy = -1; dy <= 1; ++dy)\n"
             "    for (int dx = -1; dx <= 1; ++dx)\n"
             "      if (dx != 0 || dy != 0) count += texelFetch(u_in, (p + ivec2(dx, dy) + u_n) % u_n, 0).r;\n"
             "  uint alive = texelFetch(u_in, p, 0).r;\n"
             "  uint next = (count == 3u || (alive == 1u && count == 2u)) ? 1u : 0u;\n"
             "  imageStore(u_out, p, uvec4(next));\n"
             "}\n";
        return s;
    }
    const std::string axis = pass == 0 ? "ivec2(k - 2, 0)" : "ivec2(0, k - 2)";
    s += "layout(binding = 0) uniform sampler2D u_in;\n"
         "layout(r32f, binding = 0) writeonly restrict uniform image2D u_out;\n"
         "const float w[5] = float[5](1.0 / 16.0, 4.0 / 16.0, 6.0 / 16.0, 4.0 / 16.0, 1.0 / 16.0);\n"
         "void main() {\n"
         "  ivec2 p = ivec2(gl_GlobalInvocationID.xy);\n"
         "  if (p.x >= u_n || p.y >= u_n) return;\n"
         "  precise float sum = 0.0;\n"
         "  for (int k = 0; k < 5; ++k) {\n"
         "    precise float term = w[k] * texelFetch(u_in, clamp(p + " + axis + ", 0, u_n - 1), 0).r;\n"
         "    sum += term;\n"
         "  }\n"
         "  imageStore(u_out, p, vec4(sum));\n"
         "}\n";
    return s;
}

void stencil_dispatch(GLuint program, GLuint from, GLuint to, GLenum format) {
    glUseProgram(program);
    glUniform1i(glGetUniformLocation(program, "u_n"), st.n);
    glBindTextureUnit(0, from);
    glBindImageTexture(0, to, 0, GL_FALSE, 0, GL_WRITE_ONLY, format);
    const GLuint groups = static_cast<GLuint>((st.n + 7) / 8);
    glDispatchCompute(groups, groups, 1);
    glMemoryBarrier(GL_TEXTURE_FETCH_BARRIER_BIT | GL_TEXTURE_UPDATE_BARRIER_BIT);
}

}  // namespace

// Compiles the stencil `kind` for n x n images and allocates its textures.
int hg_stencil_prepare(int kind, int n, int steps, char* err, int len) {
    Bind bind;
    if (!bind.ok()) {
        set_error(err, len, "eglMakeCurrent failed");
        return 1;
    }
    stencil_release();
    st.kind = kind;
    st.n = n;
    st.steps = steps;
    std::string error;
    for (int pass = 0; pass < (kind == 0 ? 1 : 2); ++pass) {
        st.program[pass] = build_compute_program(stencil_source(kind, pass), error);
        if (!st.program[pass]) {
            set_error(err, len, error);
            return 1;
        }
    }
    glCreateTextures(GL_TEXTURE_2D, 2, st.textures);
    for (GLuint t : st.textures) {
        glTextureStorage2D(t, 1, kind == 0 ? GL_R8UI : GL_R32F, n, n);
        // (an integer texture with the default linear filter is incomplete:
        // texelFetch would read zeros)
        glTextureParameteri(t, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
        glTextureParameteri(t, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    }
    GLenum e = glGetError();
    if (e != GL_NO_ERROR) {
        set_error(err, len, "GL error " + std::to_string(e) + " in stencil_prepare");
        return 1;
    }
    return 0;
}

// One run as gpupy's is timed: upload `in` (n x n uint8 or float32), the
// passes, read the result back into `out`.
int hg_stencil_run(const void* in, void* out, char* err, int len) {
    Bind bind;
    if (!bind.ok()) {
        set_error(err, len, "eglMakeCurrent failed");
        return 1;
    }
    const bool life = st.kind == 0;
    const GLenum format = life ? GL_R8UI : GL_R32F, channel = life ? GL_RED_INTEGER : GL_RED;
    const GLenum type = life ? GL_UNSIGNED_BYTE : GL_FLOAT;
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glTextureSubImage2D(st.textures[0], 0, 0, 0, st.n, st.n, channel, type, in);
    int at = 0;
    const int passes = life ? st.steps : 2;
    for (int k = 0; k < passes; ++k) {
        stencil_dispatch(st.program[life ? 0 : k], st.textures[at], st.textures[1 - at], format);
        at = 1 - at;
    }
    const GLsizei bytes = static_cast<GLsizei>(st.n) * st.n * (life ? 1 : 4);
    glGetTextureImage(st.textures[at], 0, channel, type, bytes, out);
    GLenum e = glGetError();
    if (e != GL_NO_ERROR) {
        set_error(err, len, "GL error " + std::to_string(e) + " in stencil_run");
        return 1;
    }
    return 0;
}

// ------------------------------------------------------------------- A @ B

namespace {

// C = A @ B for n x n float32 matrices written by hand, the reference for
// gpupy's generated tiled product (benchmarks/seeds.py --native), after
// C$'s float4 blocking: every invocation accumulates a register block of
// 4*mq x 4*nq outputs as vec4s, reading A and B a vec4 (4 columns) at a
// time. Two families:
//   "tiled-": what one writes for a GPU. The work group stages A's and B's
//       blocks for the next tk values of k in shared memory, waits at a
//       barrier and multiplies out of shared memory (matmul_tiled_source).
//   "direct-": no shared memory; each invocation reads its rows of A and
//       columns of B itself (matmul_direct_source), as C$'s pixel shaders
//       did, leaving reuse to the texture cache.
// A and B are read from vec4 SSBOs ("ssbo"), RGBA32F 2-D textures ("tex")
// or RGBA32F texture buffers over plain buffers ("tbo": texelFetch on a
// 1-D index, so no 16384-texel side limit); C is written to a vec4 SSBO.
// Rows are ld = n rounded up to 4 floats (n % 4 != 0: padded with zeros on
// the host), so any n works: reads past the edge are clamped and replaced
// by zeros, stores past it skipped. Accumulation in float with fma, k in
// increasing order within each output.
//
// Measured on the 2-core llvmpipe machine (Mesa 22.3.6, LLVM 15, 256 bits),
// one run = upload A and B, the dispatch, read C back (hg_matmul_run);
// GFLOP/s as median / best of 7 runs at n = 256 and 512, of 3 at 1024, the
// machine quiet (the medians of the short runs vary by up to 2x from run
// to run there: the best is the steadier figure):
//                              n = 256       512        1024
//   direct-8x8-16x8-tbo        17.5/24.9  22.8/31.2  29.5/31.2   <- kept
//   direct-8x4-16x8-tbo        16.7/28.0  18.2/32.1  29.7/31.4
//   direct-8x8-8x8-tbo         18.9/29.2  19.4/33.6  25.4/27.8
//   direct-8x8-16x16-tbo       14.6/17.9  17.0/20.8  28.8/29.3
//   direct-8x8-8x8-tex         10.7/16.1  11.1/17.9  16.5/17.5
//   direct-8x8-4x4-tex          7.8/8.9    8.5/10.4  10.3/10.3
//   direct-8x8-8x8-ssbo         2.0/2.2    2.1/2.2    2.3/2.3
//   tiled-16x16-4x4-k16         0.87/0.93  0.90/0.94  0.93/0.95
//   tiled-8x8-8x8-k16           1.53/1.67  1.71/1.75  1.69/1.69
//   tiled-16x16-8x8-k8          1.68/1.72  1.76/1.87  1.81/1.82
//   tiled-64x1-16x4-k16         1.18/1.21  1.27/1.31  1.20/1.27
//   tiled-8x8-8x8-k16-tex       1.71/1.73  1.77/1.95  1.85/1.87
//   tiled-8x8-16x16-k8          2.96/3.02  3.15/3.30  3.01/3.22
//   tiled-8x8-16x16-k8-tbo      3.25/3.65  3.42/3.66  3.48/3.66
// (NumPy's BLAS on the same machine: ~75 / ~105 / ~150 GFLOP/s.)
// Why shared memory loses here: llvmpipe runs 8 invocations as one SIMD
// vector, and in this Mesa a load from shared memory or an SSBO is a scalar
// loop over the 8 lanes, per component, with a branch on each lane's
// execution mask; texelFetch is a vector gather. The tiled shaders are
// bound by their reads from the tiles: halving the reads per fma
// (16x16 blocks) doubles their speed, the source of the tiles (ssbo, tex,
// tbo) hardly matters, and letting a whole group share its rows so that
// the reads of As have constant addresses (tiled-64x1) gains nothing, as
// this Mesa has no uniform-address path for shared loads. Reading the
// matrices as texture buffers straight from the k loop avoids both slow
// paths and is ~8x faster than the best tiled shader. On a GPU the tiled
// family is the one to try first (select it with hg_matmul_configure, or
// `seeds.py --native --native-matmul tiled-8x8-16x16-k8`).
enum MatmulSource { kSsbo, kTexture2D, kTextureBuffer };

struct MatmulConfig {
    const char* name;
    int lx, ly;           // work group size
    int mq, nq;           // each invocation: 4*mq rows x 4*nq columns of C
    int tk;               // k step of the shared tiles (a multiple of 4); 0: no shared tiles
    MatmulSource source;  // how A and B are read
};

const MatmulConfig kMatmulConfigs[] = {
    {"direct-8x8-16x8-tbo", 8, 8, 4, 2, 0, kTextureBuffer},
    {"direct-8x4-16x8-tbo", 8, 4, 4, 2, 0, kTextureBuffer},
    {"direct-8x8-8x8-tbo", 8, 8, 2, 2, 0, kTextureBuffer},
    {"direct-8x8-16x16-tbo", 8, 8, 4, 4, 0, kTextureBuffer},
    {"direct-8x8-8x8-tex", 8, 8, 2, 2, 0, kTexture2D},
    {"direct-8x8-4x4-tex", 8, 8, 1, 1, 0, kTexture2D},
    {"direct-8x8-8x8-ssbo", 8, 8, 2, 2, 0, kSsbo},
    {"tiled-16x16-4x4-k16", 16, 16, 1, 1, 16, kSsbo},
    {"tiled-8x8-8x8-k16", 8, 8, 2, 2, 16, kSsbo},
    {"tiled-16x16-8x8-k8", 16, 16, 2, 2, 8, kSsbo},
    {"tiled-64x1-16x4-k16", 64, 1, 4, 1, 16, kSsbo},
    {"tiled-8x8-8x8-k16-tex", 8, 8, 2, 2, 16, kTexture2D},
    {"tiled-8x8-16x16-k8", 8, 8, 4, 4, 8, kSsbo},
    {"tiled-8x8-16x16-k8-tbo", 8, 8, 4, 4, 8, kTextureBuffer},
};
const int kMatmulConfigCount = static_cast<int>(sizeof kMatmulConfigs / sizeof kMatmulConfigs[0]);
// The configuration hg_matmul_prepare compiles unless told otherwise: the
// fastest above (direct-8x4-16x8-tbo and direct-8x8-8x8-tbo are as fast
// within the noise; this one was the steadiest at n = 1024).
const int kMatmulDefault = 0;

struct Matmul {
    int n = 0, ld = 0, config = -1;
    GLuint program = 0;
    GLuint buffers[3] = {0, 0, 0};  // A and B (SSBOs, texture buffers' storage), C
    GLuint textures[2] = {0, 0};    // A and B (2-D textures, texture buffers)
    GLint n_location = -1, ld4_location = -1;
    std::vector<float> staging;     // n % 4 != 0: rows padded to ld
    bool uploaded = false;          // A and B are on the device (hg_matmul_run)
};
Matmul mm;
int mm_choice = kMatmulDefault;

void matmul_release() {
    if (mm.program) glDeleteProgram(mm.program);
    glDeleteBuffers(3, mm.buffers);
    glDeleteTextures(2, mm.textures);
    mm = Matmul{};
}

std::string str(int v) { return std::to_string(v); }

// The declarations every variant shares: A and B behind a_at/b_at(row,
// quad) (the vec4 of columns 4q..4q+3), C a vec4 SSBO.
std::string matmul_header(const MatmulConfig& c) {
    std::string s = "#version 450\n";
    s += "layout(local_size_x = " + str(c.lx) + ", local_size_y = " + str(c.ly) + ") in;\n";
    s += "uniform int u_n;\nuniform int u_ld4;\n";  // ld4: a row's length in vec4s
    if (c.source == kSsbo) {
        s += "layout(std430, binding = 0) readonly restrict buffer A { vec4 a[]; };\n"
             "layout(std430, binding = 1) readonly restrict buffer B { vec4 b[]; };\n"
             "vec4 a_at(int row, int q) { return a[row * u_ld4 + q]; }\n"
             "vec4 b_at(int row, int q) { return b[row * u_ld4 + q]; }\n";
    } else if (c.source == kTexture2D) {
        s += "layout(binding = 0) uniform sampler2D u_a;\n"
             "layout(binding = 1) uniform sampler2D u_b;\n"
             "vec4 a_at(int row, int q) { return texelFetch(u_a, ivec2(q, row), 0); }\n"
             "vec4 b_at(int row, int q) { return texelFetch(u_b, ivec2(q, row), 0); }\n";
    } else {
        s += "layout(binding = 0) uniform samplerBuffer u_a;\n"
             "layout(binding = 1) uniform samplerBuffer u_b;\n"
             "vec4 a_at(int row, int q) { return texelFetch(u_a, row * u_ld4 + q); }\n"
             "vec4 b_at(int row, int q) { return texelFetch(u_b, row * u_ld4 + q); }\n";
    }
    s += "layout(std430, binding = 2) writeonly restrict buffer C { vec4 c[]; };\n";
    return s;
}

// Invocation (tx, ty) of the group owns row quads ty + ly*i (i < mq) and
// column quads tx + lx*j (j < nq) of the group's tile: accumulator accIRJ
// is row 4*(ty + ly*I) + R, columns 4*(tx + lx*J)..+3.
std::string acc_name(int i, int r, int j) { return "acc" + str(i) + str(r) + str(j); }

std::string matmul_store(const MatmulConfig& c) {
    std::string s;
    for (int i = 0; i < c.mq; ++i)
        for (int r = 0; r < 4; ++r)
            for (int j = 0; j < c.nq; ++j) {
                const std::string row = "row0 + 4 * (ty + " + str(c.ly * i) + ") + " + str(r);
                const std::string q = "q0 + tx + " + str(c.lx * j);
                s += "  if (" + row + " < u_n && " + q + " < u_ld4) c[(" + row + ") * u_ld4 + " + q + "] = " +
                     acc_name(i, r, j) + ";\n";
            }
    return s;
}

// The GPU's way: shared tiles. Per k step the group copies A's 4*mq*ly x tk
// block (transposed: As[k][quad] holds 4 rows of column k) and B's tk x
// 4*nq*lx block into shared memory, every invocation a few vec4s, out of
// range read as zeros (a clamped read and a select: no divergent branch);
// then each invocation reads mq + nq vec4s per k for 4*mq*nq vec4 fma.
// Neighbouring invocations read neighbouring vec4s of Bs (no bank
// conflicts), invocations of one row the same vec4 of As (a broadcast).
std::string matmul_tiled_source(const MatmulConfig& c) {
    const int bm4 = c.mq * c.ly, bn4 = c.nq * c.lx, threads = c.lx * c.ly, tk4 = c.tk / 4;
    std::string s = matmul_header(c);
    s += "shared vec4 As[" + str(c.tk) + "][" + str(bm4) + "];\n";
    s += "shared vec4 Bs[" + str(c.tk) + "][" + str(bn4) + "];\n";
    s += "vec4 tile_read(bool inside, vec4 v) { return inside ? v : vec4(0.0); }\n";
    s += "void main() {\n";
    s += "  int tx = int(gl_LocalInvocationID.x), ty = int(gl_LocalInvocationID.y);\n";
    s += "  int tid = ty * " + str(c.lx) + " + tx;\n";
    s += "  int row0 = int(gl_WorkGroupID.y) * " + str(4 * bm4) + ";\n";
    s += "  int q0 = int(gl_WorkGroupID.x) * " + str(bn4) + ";\n";  // the tile's first column quad
    for (int i = 0; i < c.mq; ++i)
        for (int r = 0; r < 4; ++r)
            for (int j = 0; j < c.nq; ++j) s += "  vec4 " + acc_name(i, r, j) + " = vec4(0.0);\n";
    s += "  for (int k0 = 0; k0 < u_n; k0 += " + str(c.tk) + ") {\n";
    const int count_a = 4 * bm4 * tk4, count_b = c.tk * bn4;
    for (int e0 = 0; e0 < count_a; e0 += threads) {
        s += e0 + threads > count_a ? "    if (tid + " + str(e0) + " < " + str(count_a) + ") {\n" : "    {\n";
        s += "      int e = tid + " + str(e0) + ", r = e / " + str(tk4) + ", kq = e % " + str(tk4) + ";\n";
        s += "      int row = row0 + r, q = (k0 >> 2) + kq;\n";
        s += "      vec4 v = tile_read(row < u_n && q < u_ld4, a_at(min(row, u_n - 1), min(q, u_ld4 - 1)));\n";
        s += "      As[4 * kq][r >> 2][r & 3] = v.x; As[4 * kq + 1][r >> 2][r & 3] = v.y;\n";
        s += "      As[4 * kq + 2][r >> 2][r & 3] = v.z; As[4 * kq + 3][r >> 2][r & 3] = v.w;\n";
        s += "    }\n";
    }
    for (int e0 = 0; e0 < count_b; e0 += threads) {
        s += e0 + threads > count_b ? "    if (tid + " + str(e0) + " < " + str(count_b) + ") {\n" : "    {\n";
        s += "      int e = tid + " + str(e0) + ", kk = e / " + str(bn4) + ", p = e % " + str(bn4) + ";\n";
        s += "      int row = k0 + kk, q = q0 + p;\n";
        s += "      Bs[kk][p] = tile_read(row < u_n && q < u_ld4, b_at(min(row, u_n - 1), min(q, u_ld4 - 1)));\n";
        s += "    }\n";
    }
    s += "    barrier();\n";
    // k unrolled: constant addresses into the tiles (with ly == 1 the
    // reads of As are the same for the whole group).
    const std::string ty = c.ly > 1 ? "ty + " : "";
    const char* comp = "xyzw";
    for (int k = 0; k < c.tk; ++k) {
        const std::string ks = str(k);
        for (int i = 0; i < c.mq; ++i)
            s += "    vec4 a" + ks + "_" + str(i) + " = As[" + ks + "][" + ty + str(c.ly * i) + "];\n";
        for (int j = 0; j < c.nq; ++j)
            s += "    vec4 b" + ks + "_" + str(j) + " = Bs[" + ks + "][tx + " + str(c.lx * j) + "];\n";
        for (int i = 0; i < c.mq; ++i)
            for (int r = 0; r < 4; ++r)
                for (int j = 0; j < c.nq; ++j) {
                    const std::string acc = acc_name(i, r, j);
                    s += "    " + acc + " = fma(vec4(a" + ks + "_" + str(i) + "." + comp[r] + "), b" + ks + "_" +
                         str(j) + ", " + acc + ");\n";
                }
    }
    s += "    barrier();\n";
    s += "  }\n";
    s += matmul_store(c);
    s += "}\n";
    return s;
}

// No shared memory (C$'s float4 blocking as its pixel shaders did it): each
// invocation reads its own 4*mq rows of A and 4*nq columns of B, 4 k at a
// time: per step 4*mq + 4*nq vec4 reads for 16*mq*nq vec4 fma.
std::string matmul_direct_source(const MatmulConfig& c) {
    std::string s = matmul_header(c);
    s += "void main() {\n";
    s += "  int tx = int(gl_LocalInvocationID.x), ty = int(gl_LocalInvocationID.y);\n";
    s += "  int row0 = int(gl_WorkGroupID.y) * " + str(4 * c.mq * c.ly) + ";\n";
    s += "  int q0 = int(gl_WorkGroupID.x) * " + str(c.nq * c.lx) + ";\n";
    // Rows and quads past the edge read clamped (their results are not
    // stored).
    for (int i = 0; i < c.mq; ++i)
        for (int r = 0; r < 4; ++r) {
            s += "  int ar" + str(i) + str(r) + " = min(row0 + 4 * (ty + " + str(c.ly * i) + ") + " + str(r) +
                 ", u_n - 1);\n";
            for (int j = 0; j < c.nq; ++j) s += "  vec4 " + acc_name(i, r, j) + " = vec4(0.0);\n";
        }
    for (int j = 0; j < c.nq; ++j) s += "  int bq" + str(j) + " = min(q0 + tx + " + str(c.lx * j) + ", u_ld4 - 1);\n";
    s += "  for (int kq = 0; kq < u_ld4; ++kq) {\n";
    for (int i = 0; i < c.mq; ++i)
        for (int r = 0; r < 4; ++r) s += "    vec4 a" + str(i) + str(r) + " = a_at(ar" + str(i) + str(r) + ", kq);\n";
    const char* comp = "xyzw";
    for (int k = 0; k < 4; ++k) {
        // B's rows past n (n % 4 != 0) read as zeros: A's padding is zero,
        // but 0 * inf would not be.
        s += "    int bk" + str(k) + " = 4 * kq + " + str(k) + ";\n";
        for (int j = 0; j < c.nq; ++j)
            s += "    vec4 b" + str(k) + str(j) + " = bk" + str(k) + " < u_n ? b_at(min(bk" + str(k) +
                 ", u_n - 1), bq" + str(j) + ") : vec4(0.0);\n";
        for (int i = 0; i < c.mq; ++i)
            for (int r = 0; r < 4; ++r)
                for (int j = 0; j < c.nq; ++j) {
                    const std::string acc = acc_name(i, r, j);
                    s += "    " + acc + " = fma(vec4(a" + str(i) + str(r) + "." + comp[k] + "), b" + str(k) +
                         str(j) + ", " + acc + ");\n";
                }
    }
    s += "  }\n";
    s += matmul_store(c);
    s += "}\n";
    return s;
}

}  // namespace

// The configurations measured (for benchmarks/native.py): their number, and
// each one's name.
int hg_matmul_configs() { return kMatmulConfigCount; }

const char* hg_matmul_config_name(int index) {
    return index >= 0 && index < kMatmulConfigCount ? kMatmulConfigs[index].name : "";
}

// The default configuration (the fastest measured here).
int hg_matmul_default() { return kMatmulDefault; }

// Chooses the configuration the next hg_matmul_prepare compiles.
int hg_matmul_configure(int index, char* err, int len) {
    if (index < 0 || index >= kMatmulConfigCount) {
        set_error(err, len, "no matmul configuration " + std::to_string(index));
        return 1;
    }
    mm_choice = index;
    return 0;
}

// Compiles the product for n x n float32 matrices and allocates A, B, C.
int hg_matmul_prepare(int n, char* err, int len) {
    Bind bind;
    if (!bind.ok()) {
        set_error(err, len, "eglMakeCurrent failed");
        return 1;
    }
    matmul_release();
    if (n < 1) {
        set_error(err, len, "matmul of " + std::to_string(n) + "x" + std::to_string(n) + " matrices");
        return 1;
    }
    const MatmulConfig& c = kMatmulConfigs[mm_choice];
    const int ld = (n + 3) / 4 * 4;
    GLint limit = 0;
    if (c.source == kTexture2D) glGetIntegerv(GL_MAX_TEXTURE_SIZE, &limit);
    if (c.source == kTextureBuffer) glGetIntegerv(GL_MAX_TEXTURE_BUFFER_SIZE, &limit);
    const long long texels = c.source == kTexture2D ? std::max(n, ld / 4) : static_cast<long long>(n) * (ld / 4);
    if (c.source != kSsbo && texels > limit) {
        set_error(err, len, std::string(c.name) + ": " + std::to_string(n) + "x" + std::to_string(n) +
                                " exceeds the texture limit " + std::to_string(limit));
        return 1;
    }
    std::string error;
    mm.program = build_compute_program(c.tk ? matmul_tiled_source(c) : matmul_direct_source(c), error);
    if (!mm.program) {
        set_error(err, len, std::string(c.name) + ": " + error);
        return 1;
    }
    mm.n_location = glGetUniformLocation(mm.program, "u_n");
    mm.ld4_location = glGetUniformLocation(mm.program, "u_ld4");
    mm.config = mm_choice;
    mm.n = n;
    mm.ld = ld;
    const GLsizeiptr bytes = static_cast<GLsizeiptr>(sizeof(float)) * n * ld;
    glCreateBuffers(3, mm.buffers);
    for (int t = 0; t < 3; ++t) {
        if (t < 2 && c.source == kTexture2D) continue;
        glNamedBufferStorage(mm.buffers[t], bytes, nullptr, GL_DYNAMIC_STORAGE_BIT);
    }
    if (c.source == kTexture2D) {
        glCreateTextures(GL_TEXTURE_2D, 2, mm.textures);
        for (GLuint t : mm.textures) {
            glTextureStorage2D(t, 1, GL_RGBA32F, ld / 4, n);
            glTextureParameteri(t, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
            glTextureParameteri(t, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
        }
    } else if (c.source == kTextureBuffer) {
        glCreateTextures(GL_TEXTURE_BUFFER, 2, mm.textures);
        for (int t = 0; t < 2; ++t) glTextureBuffer(mm.textures[t], GL_RGBA32F, mm.buffers[t]);
    }
    if (ld != n) mm.staging.assign(static_cast<size_t>(n) * ld, 0.0f);
    GLenum e = glGetError();
    if (e != GL_NO_ERROR) {
        set_error(err, len, "GL error " + std::to_string(e) + " in matmul_prepare");
        return 1;
    }
    return 0;
}

namespace {
// a (n x n) as rows of mm.ld floats: the array itself when n is a multiple
// of 4, else mm.staging with zeros on the right.
const float* matmul_rows(const float* a) {
    if (mm.ld == mm.n) return a;
    for (int i = 0; i < mm.n; ++i) {
        std::memcpy(mm.staging.data() + static_cast<size_t>(i) * mm.ld, a + static_cast<size_t>(i) * mm.n,
                    sizeof(float) * mm.n);
    }
    return mm.staging.data();
}
}  // namespace

namespace {
// The product's inputs onto the device.
void matmul_upload(const float* a, const float* b) {
    const MatmulConfig& cfg = kMatmulConfigs[mm.config];
    const int n = mm.n, ld = mm.ld;
    const GLsizeiptr bytes = static_cast<GLsizeiptr>(sizeof(float)) * n * ld;
    const float* src[2] = {a, b};
    for (int t = 0; t < 2; ++t) {
        const float* rows = matmul_rows(src[t]);
        if (cfg.source == kTexture2D) {
            glTextureSubImage2D(mm.textures[t], 0, 0, 0, ld / 4, n, GL_RGBA, GL_FLOAT, rows);
        } else {
            glNamedBufferSubData(mm.buffers[t], 0, bytes, rows);
        }
    }
}

// One dispatch of the product over what the device holds, C left there.
void matmul_dispatch() {
    const MatmulConfig& cfg = kMatmulConfigs[mm.config];
    const int n = mm.n, ld = mm.ld;
    glUseProgram(mm.program);
    glUniform1i(mm.n_location, n);
    glUniform1i(mm.ld4_location, ld / 4);
    for (GLuint t = 0; t < 2; ++t) {
        if (cfg.source == kSsbo) {
            glBindBufferBase(GL_SHADER_STORAGE_BUFFER, t, mm.buffers[t]);
        } else {
            glBindTextureUnit(t, mm.textures[t]);
        }
    }
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 2, mm.buffers[2]);
    const int bm = 4 * cfg.mq * cfg.ly, bn4 = cfg.nq * cfg.lx;
    glDispatchCompute(static_cast<GLuint>((ld / 4 + bn4 - 1) / bn4), static_cast<GLuint>((n + bm - 1) / bm), 1);
}
}  // namespace

// C = A @ B (n x n float32, row-major) as gpupy's runs are timed: upload A
// and B, one dispatch, read C back.
int hg_matmul_run(const float* a, const float* b, float* c, char* err, int len) {
    Bind bind;
    if (!bind.ok()) {
        set_error(err, len, "eglMakeCurrent failed");
        return 1;
    }
    if (!mm.program) {
        set_error(err, len, "matmul_run before matmul_prepare");
        return 1;
    }
    const int n = mm.n, ld = mm.ld;
    const GLsizeiptr bytes = static_cast<GLsizeiptr>(sizeof(float)) * n * ld;
    matmul_upload(a, b);
    matmul_dispatch();
    glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT);
    if (ld == n) {
        glGetNamedBufferSubData(mm.buffers[2], 0, bytes, c);
    } else {
        glGetNamedBufferSubData(mm.buffers[2], 0, bytes, mm.staging.data());
        for (int i = 0; i < n; ++i) {
            std::memcpy(c + static_cast<size_t>(i) * n, mm.staging.data() + static_cast<size_t>(i) * ld,
                        sizeof(float) * n);
        }
    }
    mm.uploaded = true;
    GLenum e = glGetError();
    if (e != GL_NO_ERROR) {
        set_error(err, len, "GL error " + std::to_string(e) + " in matmul_run");
        return 1;
    }
    return 0;
}

// The product `reps` times in a row over the inputs the last hg_matmul_run
// uploaded, C left on the device (inputs resident, as gpupy's product with
// placement "device" on arrays it holds): *seconds from the first dispatch
// to glFinish, after one untimed dispatch.
int hg_matmul_time(int reps, double* seconds, char* err, int len) {
    Bind bind;
    if (!bind.ok()) {
        set_error(err, len, "eglMakeCurrent failed");
        return 1;
    }
    if (!mm.program || !mm.uploaded) {
        set_error(err, len, "matmul_time before matmul_run");
        return 1;
    }
    matmul_dispatch();
    glFinish();
    *seconds = time_until_finished([&] {
        for (int r = 0; r < reps; ++r) matmul_dispatch();
    });
    GLenum e = glGetError();
    if (e != GL_NO_ERROR) {
        set_error(err, len, "GL error " + std::to_string(e) + " in matmul_time");
        return 1;
    }
    return 0;
}

// ------------------------------------------------- what the device can do

namespace {

// The device's own copy bandwidth: one buffer copied into another by the
// driver (glCopyNamedBufferSubData, no shader), the ceiling for work that
// reads and writes each byte once.
struct Copy {
    GLsizeiptr bytes = 0;
    GLuint buffers[2] = {0, 0};
};
Copy cp;

void copy_release() {
    glDeleteBuffers(2, cp.buffers);
    cp = Copy{};
}

// The device's float32 arithmetic peak: every invocation runs `chains`
// independent vec4 chains x = fma(x, m, a), `steps` steps of each written
// out in straight-line code (no loop: a loop's bookkeeping, and on
// llvmpipe its per-lane execution mask on every assignment, would count
// against the arithmetic); the work grows with the number of work groups.
// m and a are uniforms (nothing to fold at compile time); m is just below
// 1 and a small, so the values stay finite and normal. Independent chains
// keep every lane busy while each fma waits for its previous result (how
// many it takes differs: llvmpipe runs out of vector registers where a GPU
// wants more; the caller tries a few). The sum is stored (to one of
// kPeakLocal slots: the store is there only so that the work is not
// removed).
constexpr int kPeakLocal = 256, kPeakMaxGroupsX = 65535;
struct Peak {
    GLuint program = 0, buffer = 0;
    GLint mul_location = -1, add_location = -1;
};
Peak pk;

void peak_release() {
    if (pk.program) glDeleteProgram(pk.program);
    glDeleteBuffers(1, &pk.buffer);
    pk = Peak{};
}

std::string peak_source(int chains, int steps) {
    std::string s = "#version 450\nlayout(local_size_x = " + str(kPeakLocal) + ") in;\n";
    s += "uniform vec4 u_mul;\nuniform vec4 u_add;\n";
    s += "layout(std430, binding = 0) writeonly restrict buffer O { vec4 o[]; };\n";
    s += "void main() {\n";
    s += "  vec4 seed = vec4(float(gl_LocalInvocationIndex) * 1e-7);\n";
    for (int c = 0; c < chains; ++c) s += "  vec4 x" + str(c) + " = seed + vec4(" + str(c) + ".0);\n";
    for (int k = 0; k < steps; ++k)
        for (int c = 0; c < chains; ++c) s += "  x" + str(c) + " = fma(x" + str(c) + ", u_mul, u_add);\n";
    s += "  o[gl_LocalInvocationIndex] = ";
    for (int c = 0; c < chains; ++c) s += (c ? " + x" : "x") + str(c);
    s += ";\n}\n";
    return s;
}

}  // namespace

// Allocates two buffers of `bytes` (a source filled with a pattern, a
// destination), once per size.
int hg_copy_prepare(long long bytes, char* err, int len) {
    Bind bind;
    if (!bind.ok()) {
        set_error(err, len, "eglMakeCurrent failed");
        return 1;
    }
    copy_release();
    if (bytes < 4) {
        set_error(err, len, "copy of " + std::to_string(bytes) + " bytes");
        return 1;
    }
    cp.bytes = static_cast<GLsizeiptr>(bytes);
    glCreateBuffers(2, cp.buffers);
    const float pattern = 1.5f;
    for (GLuint b : cp.buffers) {
        glNamedBufferStorage(b, cp.bytes, nullptr, 0);
        // (touched once, so that no first-use allocation lands in the timing)
        glClearNamedBufferData(b, GL_R32F, GL_RED, GL_FLOAT, &pattern);
    }
    GLenum e = glGetError();
    if (e != GL_NO_ERROR) {
        set_error(err, len, "GL error " + std::to_string(e) + " in copy_prepare (" + std::to_string(bytes) +
                                " bytes)");
        copy_release();
        return 1;
    }
    return 0;
}

// `reps` copies of the whole source into the destination: *seconds from
// the first to glFinish, after one untimed copy. Bytes moved per copy:
// 2 x bytes (each byte read once and written once).
int hg_copy_time(int reps, double* seconds, char* err, int len) {
    Bind bind;
    if (!bind.ok()) {
        set_error(err, len, "eglMakeCurrent failed");
        return 1;
    }
    if (!cp.bytes) {
        set_error(err, len, "copy_time before copy_prepare");
        return 1;
    }
    glCopyNamedBufferSubData(cp.buffers[0], cp.buffers[1], 0, 0, cp.bytes);
    glFinish();
    *seconds = time_until_finished([&] {
        for (int r = 0; r < reps; ++r) glCopyNamedBufferSubData(cp.buffers[0], cp.buffers[1], 0, 0, cp.bytes);
    });
    GLenum e = glGetError();
    if (e != GL_NO_ERROR) {
        set_error(err, len, "GL error " + std::to_string(e) + " in copy_time");
        return 1;
    }
    return 0;
}

// Compiles the peak kernel: `chains` chains of `steps` fma each per
// invocation; returns its floating-point operations per invocation (an
// fma counted as 2) through *flops_per_invocation.
int hg_peak_prepare(int chains, int steps, double* flops_per_invocation, char* err, int len) {
    Bind bind;
    if (!bind.ok()) {
        set_error(err, len, "eglMakeCurrent failed");
        return 1;
    }
    peak_release();
    std::string error;
    pk.program = build_compute_program(peak_source(chains, steps), error);
    if (!pk.program) {
        set_error(err, len, "peak: " + error);
        return 1;
    }
    pk.mul_location = glGetUniformLocation(pk.program, "u_mul");
    pk.add_location = glGetUniformLocation(pk.program, "u_add");
    glCreateBuffers(1, &pk.buffer);
    glNamedBufferStorage(pk.buffer, static_cast<GLsizeiptr>(16) * kPeakLocal, nullptr, 0);
    *flops_per_invocation = 2.0 * 4 * chains * steps;
    GLenum e = glGetError();
    if (e != GL_NO_ERROR) {
        set_error(err, len, "GL error " + std::to_string(e) + " in peak_prepare");
        return 1;
    }
    return 0;
}

// One dispatch of the peak kernel over about `groups` work groups of
// kPeakLocal invocations (rows of up to kPeakMaxGroupsX): *seconds from
// the dispatch to glFinish (the first call also JITs: the caller times a
// later one), *invocations the number run.
int hg_peak_time(long long groups, double* seconds, double* invocations, char* err, int len) {
    Bind bind;
    if (!bind.ok()) {
        set_error(err, len, "eglMakeCurrent failed");
        return 1;
    }
    if (!pk.program) {
        set_error(err, len, "peak_time before peak_prepare");
        return 1;
    }
    const long long gx = std::min<long long>(std::max(groups, 1LL), kPeakMaxGroupsX);
    const long long gy = (std::max(groups, 1LL) + gx - 1) / gx;
    if (gy > kPeakMaxGroupsX) {
        set_error(err, len, "peak: " + std::to_string(groups) + " work groups");
        return 1;
    }
    glUseProgram(pk.program);
    glUniform4f(pk.mul_location, 0.999999f, 0.9999995f, 0.9999999f, 0.99999f);
    glUniform4f(pk.add_location, 1e-6f, 2e-6f, 3e-6f, 4e-6f);
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, pk.buffer);
    glFinish();
    *seconds = time_until_finished(
        [&] { glDispatchCompute(static_cast<GLuint>(gx), static_cast<GLuint>(gy), 1); });
    *invocations = static_cast<double>(gx) * gy * kPeakLocal;
    GLenum e = glGetError();
    if (e != GL_NO_ERROR) {
        set_error(err, len, "GL error " + std::to_string(e) + " in peak_time");
        return 1;
    }
    return 0;
}

void hg_shutdown() {
    if (g.context == EGL_NO_CONTEXT) return;
    {
        Bind bind;
        ew_release();
        stencil_release();
        matmul_release();
        copy_release();
        peak_release();
        if (g.texture) glDeleteTextures(1, &g.texture);
        if (g.program) glDeleteProgram(g.program);
        g.texture = g.program = 0;
    }
    eglDestroyContext(g.display, g.context);
    g.context = EGL_NO_CONTEXT;
    g.mode = -1;
    g.n = 0;
}

}  // extern "C"
