// Measurements behind the OpenGL driver's design choices. Not a test.
//   cmake --build <build> --target gpupy_opengl_bench
//   <build>/gpupy_opengl_bench <path to libgpupy_driver_opengl.so>
// Prints: init (context creation) time, per-call overhead of the GL-thread
// hand-off vs. make-current/release, upload and readback bandwidth (the
// driver's, and the same texture written and read through a mapped pixel
// buffer instead of client memory; a texture's allocation and deletion,
// which the driver's texture pool saves), compile and first-dispatch (JIT) time
// by shader size, cached-program reuse, and one fused elementwise
// evaluation.
#include <GL/glew.h>
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "gpupy/driver.hpp"

using Clock = std::chrono::steady_clock;
static double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

static gpupy_ir_instr leaf_load(gpupy_block* b, int64_t n) {
    gpupy_ir_instr in{};
    in.op = GPUPY_OP_LOAD;
    in.dtype = GPUPY_FLOAT32;
    in.arg[0] = in.arg[1] = in.arg[2] = -1;
    in.flags = GPUPY_INSTR_CONTIGUOUS;
    in.map.stride[0] = 1;
    in.nblocks = 1;
    in.blocks[0] = b;
    in.block_elems = n;
    return in;
}

// One 16 MB float32 texture written from and read into host memory the
// way the driver does it (client memory: the GL implementation copies),
// and through a persistently mapped buffer (memcpy into memory the GL can
// move by DMA, then a texture transfer from or to that buffer): whether a
// device's transfers are bound by the path or by the bus. On a context of
// its own; best of three, each ended by glFinish.
static void transfer_paths(EGLDisplay dpy, EGLContext cx) {
    if (!eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, cx)) return;
    GLenum glew = glewInit();  // (4: Debian's GLEW finds no GLX display; the entry points are loaded)
    if ((glew != GLEW_OK && glew != 4) || !glNamedBufferStorage || !glMapNamedBufferRange) {
        std::printf("transfer paths: GL 4.5 entry points missing\n");
        eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
        return;
    }
    const int width = 4096, rows = 1024;
    const GLsizeiptr bytes = static_cast<GLsizeiptr>(width) * rows * 4;
    std::vector<float> host(static_cast<size_t>(width) * rows, 1.5f), back(host.size());
    GLuint tex = 0, pbo = 0;
    glCreateTextures(GL_TEXTURE_2D, 1, &tex);
    glTextureStorage2D(tex, 1, GL_R32F, width, rows);
    const GLbitfield flags = GL_MAP_WRITE_BIT | GL_MAP_READ_BIT | GL_MAP_PERSISTENT_BIT | GL_MAP_COHERENT_BIT;
    glCreateBuffers(1, &pbo);
    glNamedBufferStorage(pbo, bytes, nullptr, flags);
    void* mapped = glMapNamedBufferRange(pbo, 0, bytes, flags);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    auto best_ms = [](auto run) {
        double best = 1e30;
        for (int rep = 0; rep < 4; ++rep) {  // the first warms
            auto t = Clock::now();
            run();
            glFinish();
            if (rep > 0) best = std::min(best, ms_since(t));
        }
        return best;
    };
    const double up_client = best_ms([&] {
        glTextureSubImage2D(tex, 0, 0, 0, width, rows, GL_RED, GL_FLOAT, host.data());
    });
    const double down_client = best_ms([&] {
        glGetTextureSubImage(tex, 0, 0, 0, 0, width, rows, 1, GL_RED, GL_FLOAT, static_cast<GLsizei>(bytes),
                             back.data());
    });
    double up_mapped = 0, down_mapped = 0;
    if (mapped) {
        up_mapped = best_ms([&] {
            std::memcpy(mapped, host.data(), static_cast<size_t>(bytes));
            glBindBuffer(GL_PIXEL_UNPACK_BUFFER, pbo);
            glTextureSubImage2D(tex, 0, 0, 0, width, rows, GL_RED, GL_FLOAT, nullptr);
            glBindBuffer(GL_PIXEL_UNPACK_BUFFER, 0);
        });
        down_mapped = best_ms([&] {
            glBindBuffer(GL_PIXEL_PACK_BUFFER, pbo);
            glGetTextureSubImage(tex, 0, 0, 0, 0, width, rows, 1, GL_RED, GL_FLOAT, static_cast<GLsizei>(bytes),
                                 nullptr);
            glBindBuffer(GL_PIXEL_PACK_BUFFER, 0);
            glFinish();
            std::memcpy(back.data(), mapped, static_cast<size_t>(bytes));
        });
    }
    const double mb = bytes / 1e6;  // MB per ms: GB/s
    std::printf("transfer paths, 16 MB float32 texture: upload from client memory %.2f ms (%.2f GB/s), "
                "through a mapped buffer %.2f ms (%.2f GB/s); readback into client memory %.2f ms (%.2f GB/s), "
                "through a mapped buffer %.2f ms (%.2f GB/s)%s\n",
                up_client, mb / up_client, up_mapped, up_mapped > 0 ? mb / up_mapped : 0.0, down_client,
                mb / down_client, down_mapped, down_mapped > 0 ? mb / down_mapped : 0.0,
                std::memcmp(back.data(), host.data(), static_cast<size_t>(bytes)) == 0 ? "" : " (values differ!)");
    // What the driver's texture pool saves each result: a 16 MB texture
    // allocated, written by a dispatch's worth of one texel, and deleted.
    const double alloc_ms = best_ms([&] {
        for (int k = 0; k < 10; ++k) {
            GLuint t = 0;
            glCreateTextures(GL_TEXTURE_2D, 1, &t);
            glTextureStorage2D(t, 1, GL_R32F, width, rows);
            glTextureSubImage2D(t, 0, 0, 0, 1, 1, GL_RED, GL_FLOAT, host.data());
            glDeleteTextures(1, &t);
        }
    }) / 10;
    std::printf("a 16 MB texture allocated, one texel written, deleted: %.1f us\n", alloc_ms * 1e3);
    if (mapped) glUnmapNamedBuffer(pbo);
    glDeleteBuffers(1, &pbo);
    glDeleteTextures(1, &tex);
    eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
}

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s libgpupy_driver_opengl.so\n", argv[0]);
        return 2;
    }
    void* lib = dlopen(argv[1], RTLD_NOW);
    if (!lib) {
        std::fprintf(stderr, "%s\n", dlerror());
        return 1;
    }
    auto entry = reinterpret_cast<gpupy_driver_entry_fn>(dlsym(lib, GPUPY_DRIVER_ENTRY_SYMBOL));
    const gpupy_driver_api* api = entry();
    void* ctx = nullptr;
    char err[512];
    auto t = Clock::now();
    if (api->init(&ctx, err, sizeof err) != GPUPY_OK) {
        std::fprintf(stderr, "init: %s\n", err);
        return 1;
    }
    std::printf("init (EGL display + 4.5 context + GLEW + limits): %.1f ms\n", ms_since(t));

    const int64_t n = 4096 * 1024;  // 4M elements, 16 MB
    gpupy_block *a, *b, *c, *dst;
    api->block_alloc(ctx, GPUPY_FLOAT32, n, &a);
    api->block_alloc(ctx, GPUPY_FLOAT32, n, &b);
    api->block_alloc(ctx, GPUPY_FLOAT32, n, &c);
    api->block_alloc(ctx, GPUPY_FLOAT32, n, &dst);
    std::vector<float> host(n, 1.5f);

    // Per-call overhead: a call that binds the context and does almost
    // nothing (read 0 elements) vs. a call that touches no GL (get_counters).
    const int calls = 20000;
    float one;
    t = Clock::now();
    for (int i = 0; i < calls; ++i) api->block_read(ctx, a, 0, 0, &one);
    double hop = ms_since(t) * 1000.0 / calls;
    gpupy_driver_counters cnt;
    t = Clock::now();
    for (int i = 0; i < calls; ++i) api->get_counters(ctx, &cnt);
    double inline_us = ms_since(t) * 1000.0 / calls;
    std::printf("per call: GL call (bind + release context) %.2f us, non-GL call %.3f us\n", hop, inline_us);

    // The bare EGL cost of make-current + release (the design alternative,
    // a dedicated GL thread with a condition-variable hand-off, measured
    // 66 us per call here).
    {
        EGLDisplay dpy = eglGetPlatformDisplay(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, nullptr);
        EGLint mj, mn;
        if (dpy != EGL_NO_DISPLAY && eglInitialize(dpy, &mj, &mn) && eglBindAPI(EGL_OPENGL_API)) {
            const EGLint attrs[] = {EGL_CONTEXT_MAJOR_VERSION, 4, EGL_CONTEXT_MINOR_VERSION, 5,
                                    EGL_CONTEXT_OPENGL_PROFILE_MASK, EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT, EGL_NONE};
            EGLContext cx = eglCreateContext(dpy, nullptr, EGL_NO_CONTEXT, attrs);
            if (cx != EGL_NO_CONTEXT) {
                t = Clock::now();
                for (int i = 0; i < calls; ++i) {
                    eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, cx);
                    eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
                }
                std::printf("per call: make-current + release %.2f us (nothing pending)\n",
                            ms_since(t) * 1000.0 / calls);
                transfer_paths(dpy, cx);
                eglDestroyContext(dpy, cx);
            }
        }
    }

    // Transfers.
    for (int rep = 0; rep < 2; ++rep) {
        t = Clock::now();
        api->block_write(ctx, a, 0, n, host.data());
        api->block_write(ctx, b, 0, n, host.data());
        api->block_write(ctx, c, 0, n, host.data());
        double up = ms_since(t);
        t = Clock::now();
        api->block_read(ctx, a, 0, n, host.data());
        double down = ms_since(t);
        std::printf("upload 3 x 16 MB: %.1f ms (%.2f GB/s); readback 16 MB: %.1f ms (%.2f GB/s)\n", up,
                    3 * 16.777216 / up, down, 16.777216 / down);
    }

    // Compile and JIT cost by size: a chain x = x * c_k + c_k' of N ops on
    // one 1-element load, new structure per size.
    gpupy_block* small;
    api->block_alloc(ctx, GPUPY_FLOAT32, 64, &small);
    float ones[64];
    for (float& v : ones) v = 1.0f;
    api->block_write(ctx, small, 0, 64, ones);
    gpupy_block* small_dst;
    api->block_alloc(ctx, GPUPY_FLOAT32, 64, &small_dst);
    for (int nops : {10, 50, 200, 500, 1000}) {
        std::vector<gpupy_ir_instr> ins;
        ins.push_back(leaf_load(small, 64));
        for (int k = 0; k < nops; ++k) {
            gpupy_ir_instr cst{};
            cst.op = GPUPY_OP_CONST;
            cst.dtype = GPUPY_FLOAT32;
            cst.arg[0] = cst.arg[1] = cst.arg[2] = -1;
            cst.value.f = 1.0 + k * 1e-3;
            ins.push_back(cst);
            gpupy_ir_instr op{};
            op.op = (k % 2) ? GPUPY_OP_ADD : GPUPY_OP_MULTIPLY;
            op.dtype = GPUPY_FLOAT32;
            op.arg[0] = static_cast<int>(ins.size()) - 2 - (k ? 0 : 0);
            op.arg[0] = k == 0 ? 0 : static_cast<int>(ins.size()) - 2;
            op.arg[1] = static_cast<int>(ins.size()) - 1;
            op.arg[2] = -1;
            ins.push_back(op);
        }
        gpupy_ir ir{};
        ir.ninstr = static_cast<int>(ins.size());
        ir.instr = ins.data();
        ir.noutputs = 1;
        ir.output[0] = ir.ninstr - 1;
        ir.ndim = 1;
        ir.shape[0] = 64;
        ir.count = 64;
        ir.reduce_op = GPUPY_OP_NONE;
        gpupy_driver_counters before, after;
        api->get_counters(ctx, &before);
        t = Clock::now();
        if (api->eval_ir(ctx, &ir, &small_dst) != GPUPY_OK) std::printf("eval failed: %s\n", api->last_error(ctx));
        api->block_read(ctx, small_dst, 0, 1, &one);
        double first = ms_since(t);
        api->get_counters(ctx, &after);
        ins[1].value.f = 2.0;  // new constant: same program
        t = Clock::now();
        api->eval_ir(ctx, &ir, &small_dst);
        api->block_read(ctx, small_dst, 0, 1, &one);
        double second = ms_since(t);
        std::printf("%4d ops: compile+link %.1f ms, first dispatch (JIT) %.1f ms, total first eval %.1f ms; "
                    "new constants, cached program: %.3f ms\n",
                    nops, (after.compile_ns - before.compile_ns) / 1e6, (after.first_run_ns - before.first_run_ns) / 1e6,
                    first, second);
    }

    // One fused elementwise evaluation on 4M elements: a * b + c.
    {
        gpupy_ir_instr ins[5] = {leaf_load(a, n), leaf_load(b, n), {}, leaf_load(c, n), {}};
        ins[2].op = GPUPY_OP_MULTIPLY; ins[2].dtype = GPUPY_FLOAT32; ins[2].arg[0] = 0; ins[2].arg[1] = 1; ins[2].arg[2] = -1;
        ins[4].op = GPUPY_OP_ADD; ins[4].dtype = GPUPY_FLOAT32; ins[4].arg[0] = 2; ins[4].arg[1] = 3; ins[4].arg[2] = -1;
        gpupy_ir ir{};
        ir.ninstr = 5;
        ir.instr = ins;
        ir.noutputs = 1;
        ir.output[0] = 4;
        ir.ndim = 1;
        ir.shape[0] = n;
        ir.count = n;
        ir.reduce_op = GPUPY_OP_NONE;
        for (int rep = 0; rep < 3; ++rep) {
            t = Clock::now();
            api->eval_ir(ctx, &ir, &dst);
            api->block_read(ctx, dst, 0, 1, &one);
            std::printf("a*b+c on 4M float32 (eval + 1-element read): %.1f ms\n", ms_since(t));
        }
    }
    api->cleanup(ctx);
    return 0;
}
