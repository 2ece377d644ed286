// The software driver: the thesis's 14 driver functions on the CPU, with no
// dependencies. It is the reference for semantics, the default where no GL
// exists, and the test driver: its limits can be made tiny (one operation
// per evaluation, a few bytes of "device" memory) so that partitioning and
// eviction are exercised by small programs (thesis 4.11).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <string>
#include <thread>

#include "gpupy/driver.hpp"
#include "gpupy/op_meta.hpp"
#include "interpreter.hpp"
#include "ir_validation.hpp"
#include "options.hpp"
#include "resource_slots.hpp"

namespace gpupy_sw {
namespace {

// An option's value and its default, the environment's (read once, at
// init: "default" puts back what the driver started with).
struct Context {
    int64_t max_ops;    // IR operations one evaluation may hold
    int threads;        // threads one evaluation may use
    int64_t max_bytes;  // simulated device memory; 0 = unlimited
    int64_t default_max_ops, default_threads, default_max_bytes;
    int64_t used_bytes = 0;
    HostLoops offered;       // every loop taken (offer_host_loop)
    bool use_offered = true;  // option "host_loops"
    std::string error;
    std::string description;
};

Context* ctx_of(void* p) { return static_cast<Context*>(p); }

// Only operations (slot 0) are limited.
gpupy_driver::ResourceLimits limits_of(const Context* c) {
    gpupy_driver::ResourceLimits l;
    l.slot[0] = c->max_ops;
    return l;
}

// No limit on fusion unless asked for (tests set 1 to force partitioning).
constexpr int64_t kDefaultMaxOps = std::numeric_limits<int32_t>::max();

// Resource slots: 0 = operations (non-leaf instructions, and the fold of a
// reduction), 1 = leaves. Only operations are limited.
int64_t count_ops(const gpupy_ir& ir) {
    int64_t ops = ir.reduce_op == GPUPY_OP_NONE ? 0 : 1;
    for (int i = 0; i < ir.ninstr; ++i) {
        const int op = ir.instr[i].op;
        if (op != GPUPY_OP_LOAD && op != GPUPY_OP_INDEX && op != GPUPY_OP_CONST) ++ops;
    }
    return ops;
}

// The structure of an IR (drivers/common): a malformed IR is an error,
// never a crash. (Leaf blocks may be null in check_ir: the core checks IR
// before it has uploaded anything.) What the interpreter can compute it
// checks as it goes.
bool validate(Context* c, const gpupy_ir& ir, bool need_blocks) {
    const std::string err = gpupy_driver::ir_structure_error(ir, need_blocks);
    if (err.empty()) return true;
    c->error = "malformed IR: " + err;
    return false;
}

int sw_init(void** ctx, char* errbuf, size_t errlen) {
    auto* c = new (std::nothrow) Context();
    if (!c) {
        std::snprintf(errbuf, errlen, "out of memory");
        return GPUPY_ERROR;
    }
    const unsigned cores = std::thread::hardware_concurrency();
    for (const std::string& why :
         {gpupy_driver::env_integer("GPUPY_SOFTWARE_MAX_OPS", kDefaultMaxOps, 1, &c->default_max_ops),
          gpupy_driver::env_integer("GPUPY_SOFTWARE_MAX_BYTES", 0, 0, &c->default_max_bytes),  // 0: unlimited
          gpupy_driver::env_integer("GPUPY_SOFTWARE_THREADS", cores ? cores : 1, 1, &c->default_threads)}) {
        if (why.empty()) continue;
        std::snprintf(errbuf, errlen, "%s", why.c_str());
        delete c;
        return GPUPY_ERROR;
    }
    c->max_ops = c->default_max_ops;
    c->max_bytes = c->default_max_bytes;
    c->threads = static_cast<int>(c->default_threads);
    *ctx = c;
    return GPUPY_OK;
}

void sw_cleanup(void* ctx) { delete ctx_of(ctx); }

int sw_get_method(void*, int32_t op, int32_t dtype) { return supports(op, dtype); }

int sw_block_alloc(void* ctx, int32_t dtype, int64_t nelems, gpupy_block** out) {
    Context* c = ctx_of(ctx);
    const int item = itemsize(dtype);
    if (item == 0 || nelems < 0) {
        c->error = "block_alloc: bad dtype or size";
        return GPUPY_ERROR;
    }
    const int64_t bytes = nelems * item;
    if (c->max_bytes && c->used_bytes + bytes > c->max_bytes) {
        c->error = "block_alloc: " + std::to_string(bytes) + " bytes would exceed max_bytes (" +
                   std::to_string(c->max_bytes) + ")";
        return GPUPY_ERROR_NOMEM;
    }
    auto* b = new (std::nothrow) Block{dtype, nelems, static_cast<char*>(std::malloc(static_cast<size_t>(bytes ? bytes : 1))), true};
    if (!b || !b->data) {
        if (b) std::free(b->data);
        delete b;
        c->error = "block_alloc: out of host memory";
        return GPUPY_ERROR_NOMEM;
    }
    c->used_bytes += bytes;
    *out = reinterpret_cast<gpupy_block*>(b);
    return GPUPY_OK;
}

void sw_block_free(void* ctx, gpupy_block* block) {
    auto* b = reinterpret_cast<Block*>(block);
    if (!b) return;
    if (b->owns_data) {
        ctx_of(ctx)->used_bytes -= b->nelems * itemsize(b->dtype);
        std::free(b->data);
    }
    delete b;
}

// Host memory used in place: the core's host engine for small work.
int sw_block_wrap(void* ctx, int32_t dtype, int64_t nelems, void* host, gpupy_block** out) {
    Context* c = ctx_of(ctx);
    if (itemsize(dtype) == 0 || nelems < 0 || !host) {
        c->error = "block_wrap: bad dtype, size or pointer";
        return GPUPY_ERROR;
    }
    auto* b = new (std::nothrow) Block{dtype, nelems, static_cast<char*>(host), false};
    if (!b) return GPUPY_ERROR_NOMEM;
    *out = reinterpret_cast<gpupy_block*>(b);
    return GPUPY_OK;
}

bool in_range(Context* c, const Block* b, int64_t offset, int64_t count) {
    if (offset < 0 || count < 0 || offset + count > b->nelems) {
        c->error = "element range [" + std::to_string(offset) + ", " + std::to_string(offset + count) +
                   ") outside a block of " + std::to_string(b->nelems);
        return false;
    }
    return true;
}

int sw_block_read(void* ctx, gpupy_block* block, int64_t offset, int64_t count, void* dst) {
    auto* b = reinterpret_cast<Block*>(block);
    if (!in_range(ctx_of(ctx), b, offset, count)) return GPUPY_ERROR;
    const int item = itemsize(b->dtype);
    std::memcpy(dst, b->data + offset * item, static_cast<size_t>(count * item));
    return GPUPY_OK;
}

int sw_block_write(void* ctx, gpupy_block* block, int64_t offset, int64_t count, const void* src) {
    auto* b = reinterpret_cast<Block*>(block);
    if (!in_range(ctx_of(ctx), b, offset, count)) return GPUPY_ERROR;
    const int item = itemsize(b->dtype);
    std::memcpy(b->data + offset * item, src, static_cast<size_t>(count * item));
    return GPUPY_OK;
}

int sw_check_ir(void* ctx, const gpupy_ir* ir, gpupy_resources* out) {
    std::memset(out, 0, sizeof *out);
    if (!validate(ctx_of(ctx), *ir, false)) return GPUPY_ERROR;
    out->slot[0] = count_ops(*ir);
    out->slot[1] = ir->ninstr - out->slot[0];
    return gpupy_driver::resources_fit(*out, limits_of(ctx_of(ctx))) ? 1 : 0;
}

int sw_eval_ir(void* ctx, const gpupy_ir* ir, gpupy_block* const* dst) {
    Context* c = ctx_of(ctx);
    if (!validate(c, *ir, true)) return GPUPY_ERROR;
    Block* outputs[GPUPY_MAX_OUTPUTS];
    int32_t dtypes[GPUPY_MAX_OUTPUTS];
    for (int k = 0; k < ir->noutputs; ++k) {
        outputs[k] = reinterpret_cast<Block*>(dst[k]);
        if (!outputs[k]) {
            c->error = "null destination block";
            return GPUPY_ERROR;
        }
        dtypes[k] = outputs[k]->dtype;
    }
    if (std::string err = gpupy_driver::destinations_error(*ir, dst, dtypes); !err.empty()) {
        c->error = err;
        return GPUPY_ERROR;
    }
    const int64_t ops = count_ops(*ir);
    if (ops > c->max_ops) {
        // The core's partitioner must never send more than check_ir allows.
        c->error = "IR holds " + std::to_string(ops) + " operations, max_ops is " + std::to_string(c->max_ops);
        return GPUPY_ERROR;
    }
    if (!interpret(*ir, outputs, &c->error, c->threads, c->use_offered ? &c->offered : nullptr))
        return GPUPY_ERROR;
    return GPUPY_OK;
}

void sw_resource_get(void*, const gpupy_ir_instr* node, gpupy_resources* out) {
    std::memset(out, 0, sizeof *out);
    const int op = node->op;
    if (op == GPUPY_OP_LOAD || op == GPUPY_OP_INDEX || op == GPUPY_OP_CONST) out->slot[1] = 1;
    else out->slot[0] = 1;
}

void sw_resource_zero(void*, gpupy_resources* r) { gpupy_driver::resources_zero(r); }
void sw_resource_add(void*, gpupy_resources* acc, const gpupy_resources* r) { gpupy_driver::resources_add(acc, r); }
void sw_resource_sub(void*, gpupy_resources* acc, const gpupy_resources* r) { gpupy_driver::resources_sub(acc, r); }

int sw_resource_check(void* ctx, const gpupy_resources* r) { return gpupy_driver::resources_fit(*r, limits_of(ctx_of(ctx))) ? 1 : 0; }

const char* sw_last_error(void* ctx) { return ctx_of(ctx)->error.c_str(); }

const char* sw_describe(void* ctx) {
    Context* c = ctx_of(ctx);
    c->description = "device: CPU (software driver)\n";
    c->description += "max_ops: " + std::to_string(c->max_ops) + "\n";
    c->description += "max_bytes: " + (c->max_bytes ? std::to_string(c->max_bytes) : std::string("unlimited")) + "\n";
    c->description += "chunk: " + std::to_string(kMinChunk) + ".." + std::to_string(kMaxChunk) + " elements (as registers fit " + std::to_string(kRegisterBytes >> 10) + " KiB)\n";
    c->description += "threads: " + std::to_string(c->threads) + "\n";
    c->description += std::string("kernels: ") + (__builtin_cpu_supports("avx2") ? "avx2" : "baseline") + "\n";
    std::string loops;
    for (int op = 0; op < GPUPY_NUM_OPS; ++op) {
        for (int t = 0; t < GPUPY_NUM_DTYPES; ++t) {
            if (c->offered.find(op, t))
                loops += (loops.empty() ? "" : " ") + std::string(gpupy::op_numpy_name(op)) + "/" + gpupy::dtype_name(t);
        }
    }
    // NumPy's loops taken (offer_host_loop); "off: ..." while disabled.
    c->description += "host_loops: " + std::string(c->use_offered ? "" : "off: ") + (loops.empty() ? "none" : loops) + "\n";
    return c->description.c_str();
}

int sw_set_option(void* ctx, const char* key, const char* value) {
    Context* c = ctx_of(ctx);
    int64_t v = 0;
    const bool number = gpupy_driver::parse_integer(value, &v);
    const bool reset = gpupy_driver::is_default(value);
    if (std::strcmp(key, "max_ops") == 0 && (reset || (number && v >= 1))) {
        c->max_ops = reset ? c->default_max_ops : v;
        return GPUPY_OK;
    }
    if (std::strcmp(key, "threads") == 0 && (reset || (number && v >= 1))) {
        c->threads = static_cast<int>(reset ? c->default_threads : v);
        return GPUPY_OK;
    }
    if (std::strcmp(key, "max_bytes") == 0 && (reset || (number && v >= 0))) {
        c->max_bytes = reset ? c->default_max_bytes : v;
        return GPUPY_OK;
    }
    if (std::strcmp(key, "host_loops") == 0 && (reset || !std::strcmp(value, "on") || !std::strcmp(value, "off"))) {
        c->use_offered = std::strcmp(value, "off") != 0;
        return GPUPY_OK;
    }
    c->error = std::string("unknown option or bad value; options: max_ops (>= 1), max_bytes (>= 0, 0 = unlimited), "
                           "threads (>= 1), host_loops (on, off), or \"default\" for any of them");
    return GPUPY_ERROR;
}

void sw_get_counters(void*, gpupy_driver_counters* out) { std::memset(out, 0, sizeof *out); }

int sw_offer_host_loop(void* ctx, int32_t op, int32_t dtype, gpupy_host_loop loop, void* data) {
    if (op < 0 || op >= GPUPY_NUM_OPS || dtype < 0 || dtype >= GPUPY_NUM_DTYPES || !loop) return 0;
    if (!wants_host_loop(op, dtype)) return 0;
    ctx_of(ctx)->offered.entry[op][dtype] = {loop, data};
    return 1;
}

const gpupy_driver_api kApi = {
    GPUPY_DRIVER_ABI_VERSION, "software",
    sw_init, sw_cleanup, sw_get_method,
    sw_block_alloc, sw_block_free, sw_block_read, sw_block_write,
    sw_check_ir, sw_eval_ir,
    sw_resource_get, sw_resource_zero, sw_resource_add, sw_resource_sub, sw_resource_check,
    sw_last_error, sw_describe, sw_set_option, sw_get_counters,
    sw_block_wrap,
    nullptr,  // prefers_host: the software driver computes on the host already
    sw_offer_host_loop,
    nullptr,  // finish: eval_ir returns once its work is done
    gpupy::gpupy_op_rows, gpupy::gpupy_num_op_rows,
    gpupy::gpupy_dtype_rows, gpupy::gpupy_num_dtype_rows,
};

}  // namespace
}  // namespace gpupy_sw

extern "C" __attribute__((visibility("default"))) const gpupy_driver_api* gpupy_driver_entry(void) {
    return &gpupy_sw::kApi;
}
