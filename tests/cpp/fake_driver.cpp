#include "fake_driver.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "gpupy/op_meta.hpp"

namespace fake {

namespace {

struct Block {
    int32_t dtype;
    int64_t nelems;
    std::vector<char> data;
};

std::string g_error;

bool computes(int32_t op) {
    switch (op) {
    case GPUPY_OP_LOAD:
    case GPUPY_OP_INDEX:
    case GPUPY_OP_CONST:
    case GPUPY_OP_CAST:
    case GPUPY_OP_ADD:
    case GPUPY_OP_SUBTRACT:
    case GPUPY_OP_MULTIPLY:
    case GPUPY_OP_MAXIMUM:
        return true;
    default:
        return false;
    }
}

int64_t count_ops(const gpupy_ir& ir) {
    int64_t n = ir.reduce_op == GPUPY_OP_NONE ? 0 : 1;
    for (int i = 0; i < ir.ninstr; ++i) n += gpupy::op_is_leaf(ir.instr[i].op) ? 0 : 1;
    return n;
}

double apply(int32_t op, double a, double b) {
    switch (op) {
    case GPUPY_OP_ADD: return a + b;
    case GPUPY_OP_SUBTRACT: return a - b;
    case GPUPY_OP_MULTIPLY: return a * b;
    case GPUPY_OP_MAXIMUM: return a > b ? a : b;
    default: return a;  // CAST float64 -> float64
    }
}

// The value of the IR's last instruction at domain point `n`.
double value_at(const gpupy_ir& ir, const int64_t* n) {
    std::vector<double> v(static_cast<size_t>(ir.ninstr));
    for (int i = 0; i < ir.ninstr; ++i) {
        const gpupy_ir_instr& in = ir.instr[i];
        int64_t idx = in.map.base;
        for (int d = 0; d < ir.ndim; ++d) {
            int64_t c = n[d] / in.map.div[d];
            if (in.map.mod[d]) c %= in.map.mod[d];
            idx += c * in.map.stride[d];
        }
        switch (in.op) {
        case GPUPY_OP_CONST: v[i] = in.value.f; break;
        case GPUPY_OP_INDEX: {
            int64_t x = idx / (in.div > 0 ? in.div : 1);
            if (in.mod) x %= in.mod;
            v[i] = static_cast<double>(x);
            break;
        }
        case GPUPY_OP_LOAD: {
            const int64_t local = idx - in.block_first;
            const int64_t bi = local / in.block_elems, off = local % in.block_elems;
            const Block* b = reinterpret_cast<const Block*>(in.blocks[bi]);
            std::memcpy(&v[i], b->data.data() + off * 8, 8);
            break;
        }
        default: v[i] = apply(in.op, v[in.arg[0]], in.arg[1] >= 0 ? v[in.arg[1]] : 0.0);
        }
    }
    return v.back();
}

void unravel(int64_t f, const gpupy_ir& ir, int64_t* n) {
    for (int d = ir.ndim - 1; d >= 0; --d) {
        n[d] = ir.shape[d] ? f % ir.shape[d] : 0;
        f = ir.shape[d] ? f / ir.shape[d] : 0;
    }
}

int init(void** ctx, char*, size_t) {
    *ctx = nullptr;
    return GPUPY_OK;
}
void cleanup(void*) {}
int get_method(void*, int32_t op, int32_t dtype) {
    if (op == GPUPY_OP_LOAD) return gpupy::dtype_valid(dtype);  // stores anything
    return computes(op) && dtype == GPUPY_FLOAT64;
}
int block_alloc(void*, int32_t dtype, int64_t nelems, gpupy_block** out) {
    const int64_t bytes = nelems * gpupy::dtype_itemsize(dtype);
    if (record().allocated_bytes + bytes > limits().max_bytes) return GPUPY_ERROR_NOMEM;
    auto* b = new Block{dtype, nelems, std::vector<char>(static_cast<size_t>(std::max<int64_t>(bytes, 1)))};
    record().allocated_bytes += bytes;
    record().peak_bytes = std::max(record().peak_bytes, record().allocated_bytes);
    *out = reinterpret_cast<gpupy_block*>(b);
    return GPUPY_OK;
}
void block_free(void*, gpupy_block* block) {
    auto* b = reinterpret_cast<Block*>(block);
    record().allocated_bytes -= b->nelems * gpupy::dtype_itemsize(b->dtype);
    delete b;
}
int block_read(void*, gpupy_block* block, int64_t offset, int64_t count, void* dst) {
    auto* b = reinterpret_cast<Block*>(block);
    const int item = gpupy::dtype_itemsize(b->dtype);
    std::memcpy(dst, b->data.data() + offset * item, static_cast<size_t>(count * item));
    return GPUPY_OK;
}
int block_write(void*, gpupy_block* block, int64_t offset, int64_t count, const void* src) {
    auto* b = reinterpret_cast<Block*>(block);
    const int item = gpupy::dtype_itemsize(b->dtype);
    std::memcpy(b->data.data() + offset * item, src, static_cast<size_t>(count * item));
    return GPUPY_OK;
}
int check_ir(void*, const gpupy_ir* ir, gpupy_resources* out) {
    ++record().check_ir_calls;
    std::memset(out, 0, sizeof *out);
    out->slot[0] = count_ops(*ir);
    return out->slot[0] <= limits().max_ops ? 1 : 0;
}
int eval_ir(void*, const gpupy_ir* ir, gpupy_block* const* dsts) {
    gpupy_block* dst = dsts[0];
    if (ir->noutputs != 1) {
        g_error = "the fake driver writes one output";
        return GPUPY_ERROR;
    }
    if (count_ops(*ir) > limits().max_ops) {
        g_error = "an evaluation beyond max_ops";
        return GPUPY_ERROR;
    }
    ++record().evaluations;
    record().instructions.push_back(ir->ninstr);
    auto* out = reinterpret_cast<Block*>(dst);
    double* o = reinterpret_cast<double*>(out->data.data()) + ir->dst_offset;
    int64_t n[GPUPY_MAX_DIMS];
    if (ir->reduce_op == GPUPY_OP_NONE) {
        for (int64_t f = 0; f < ir->count; ++f) {
            unravel(ir->start + f, *ir, n);
            o[f] = value_at(*ir, n);
        }
        return GPUPY_OK;
    }
    int64_t inner = 1;
    for (int d = ir->ndim - ir->reduce_ndim; d < ir->ndim; ++d) inner *= ir->shape[d];
    const int64_t chunk = ir->reduce_chunk;
    for (int64_t f = 0; f < ir->count; ++f) {
        const int64_t g = ir->start + f;
        int64_t r0, r1, row;
        if (ir->reduce_mode == GPUPY_REDUCE_CHUNKS) {
            const int64_t nchunks = (inner + chunk - 1) / chunk;
            row = g / nchunks;
            r0 = (g % nchunks) * chunk;
            r1 = std::min(inner, r0 + chunk);
        } else {
            row = g / inner;
            r1 = g % inner + 1;
            r0 = ((r1 - 1) / chunk) * chunk;
        }
        double acc = ir->reduce_identity.f;
        for (int64_t r = r0; r < r1; ++r) {
            unravel(row * inner + r, *ir, n);
            acc = apply(ir->reduce_op, acc, value_at(*ir, n));
        }
        o[f] = acc;
    }
    return GPUPY_OK;
}
void resource_get(void*, const gpupy_ir_instr* node, gpupy_resources* out) {
    std::memset(out, 0, sizeof *out);
    out->slot[0] = gpupy::op_is_leaf(node->op) ? 0 : 1;
}
void resource_zero(void*, gpupy_resources* r) { std::memset(r, 0, sizeof *r); }
void resource_add(void*, gpupy_resources* acc, const gpupy_resources* r) {
    for (int i = 0; i < GPUPY_RESOURCE_SLOTS; ++i) acc->slot[i] += r->slot[i];
}
void resource_sub(void*, gpupy_resources* acc, const gpupy_resources* r) {
    for (int i = 0; i < GPUPY_RESOURCE_SLOTS; ++i) acc->slot[i] -= r->slot[i];
}
int resource_check(void*, const gpupy_resources* r) { return r->slot[0] <= limits().max_ops; }
const char* last_error(void*) { return g_error.c_str(); }
const char* describe(void*) { return "device: fake (tests)\n"; }
int set_option(void*, const char*, const char*) { return GPUPY_ERROR; }
void get_counters(void*, gpupy_driver_counters* c) { std::memset(c, 0, sizeof *c); }

const gpupy_driver_api kApi = {
    GPUPY_DRIVER_ABI_VERSION, "fake",
    init, cleanup, get_method,
    block_alloc, block_free, block_read, block_write,
    check_ir, eval_ir,
    resource_get, resource_zero, resource_add, resource_sub, resource_check,
    last_error, describe, set_option, get_counters,
    nullptr, nullptr, nullptr, nullptr,  // block_wrap, prefers_host, offer_host_loop, finish
    gpupy::gpupy_op_rows, gpupy::gpupy_num_op_rows,
    gpupy::gpupy_dtype_rows, gpupy::gpupy_num_dtype_rows,
};

}  // namespace

Limits& limits() {
    static Limits l;
    return l;
}
Record& record() {
    static Record r;
    return r;
}
const gpupy_driver_api* api() { return &kApi; }

}  // namespace fake
