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
// (hg_stencil_*), for benchmarks/seeds.py. And, as a floor for memory-bound
// elementwise work: `2*a + 3*b` over
// n float32 with a and b resident on the device, one dispatch and the
// readback of the result, in two layouts: "ssbo" (linear buffers) and
// "texture" (R32F textures 4096 wide read with texelFetch, written with
// imageStore, as gpupy's blocks).
#define GL_GLEXT_PROTOTYPES 1
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GL/glcorearb.h>

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

// out = 2*a + 3*b, read back into out (n floats).
int hg_ew_run(float* out, char* err, int len) {
    Bind bind;
    if (!bind.ok()) {
        set_error(err, len, "eglMakeCurrent failed");
        return 1;
    }
    glUseProgram(ew.program);
    glUniform1i(ew.n_location, ew.n);
    if (ew.layout == 0) {
        for (GLuint i = 0; i < 3; ++i) glBindBufferBase(GL_SHADER_STORAGE_BUFFER, i, ew.buffers[i]);
        const GLuint groups = static_cast<GLuint>((ew.n + 63) / 64);
        const GLuint gx = groups < 32768u ? groups : 32768u;
        glDispatchCompute(gx, (groups + gx - 1) / gx, 1);
        glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT);
        glGetNamedBufferSubData(ew.buffers[2], 0, static_cast<GLsizeiptr>(sizeof(float)) * ew.n, out);
    } else {
        glBindTextureUnit(0, ew.textures[0]);
        glBindTextureUnit(1, ew.textures[1]);
        glBindImageTexture(0, ew.textures[2], 0, GL_FALSE, 0, GL_WRITE_ONLY, GL_R32F);
        glDispatchCompute(static_cast<GLuint>(ew.width / 64), static_cast<GLuint>(ew.rows), 1);
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

void hg_shutdown() {
    if (g.context == EGL_NO_CONTEXT) return;
    {
        Bind bind;
        ew_release();
        stencil_release();
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
