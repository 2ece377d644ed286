// The interpreter's entry points: what it supports, and interpret(), which
// splits an evaluation across threads and runs the build of the
// interpreter the CPU can (interpreter_builds.hpp).
#include "interpreter.hpp"

#include <algorithm>
#include <atomic>
#include <string>
#include <vector>

#include "gpupy/numpy_casts.hpp"
#include "interpreter_builds.hpp"
#include "kernels.hpp"
#include "worker_pool.hpp"

namespace gpupy_sw {

namespace {

// 1 if kernel K takes operands of dtype (the same in both builds).
template <class K>
int supported_by(int32_t dtype) {
    return gpupy::with_ctype<bool>(dtype, [](auto t) { return K::template ok<computed_t<decltype(t)>>; }) ? 1 : 0;
}

bool run_range(const gpupy_ir& ir, Block* const* dst, std::string* error, const HostLoops* loops,
               const PieceSource* pieces = nullptr) {
    static const bool avx2 = __builtin_cpu_supports("avx2");
    return avx2 ? avx2::interpret_range(ir, dst, error, loops, pieces)
                : baseline::interpret_range(ir, dst, error, loops, pieces);
}

}  // namespace

bool wants_host_loop(int32_t op, int32_t dtype) {
    if (dtype == GPUPY_FLOAT16) return true;  // every op: NumPy's float16 loops are its semantics, and vectorised
    return (dtype == GPUPY_FLOAT32 || dtype == GPUPY_FLOAT64) && (gpupy::op_is_math(op) || gpupy::op_is_predicate(op));
}

int supports(int32_t op, int32_t dtype) {
    if (dtype < 0 || dtype >= GPUPY_NUM_DTYPES) return 0;
    switch (op) {
    case GPUPY_OP_LOAD:
    case GPUPY_OP_INDEX:
    case GPUPY_OP_CONST:
        return 1;
#define GPUPY_OP(NAME, CODE, NUMPY_NAME, ARITY, FLAGS, FOLD) \
    case GPUPY_OP_##NAME:                        \
        return supported_by<K_##NAME>(dtype);
#include "gpupy/ops.def"
#undef GPUPY_OP
    }
    return 0;
}

bool interpret(const gpupy_ir& ir, Block* const* dst, std::string* error, int threads, const HostLoops* loops) {
    if (ir.ninstr <= 0 || ir.ndim < 0 || ir.ndim > GPUPY_MAX_DIMS) {
        *error = "malformed IR";
        return false;
    }
    // Outputs are independent (a scan's output refolds its chunk from the
    // chunk's start), so large ranges split across threads.
    const int64_t points_per_output =
        ir.reduce_op != GPUPY_OP_NONE && ir.reduce_mode == GPUPY_REDUCE_CHUNKS ? std::max<int64_t>(ir.reduce_chunk, 1) : 1;
    const int64_t points = ir.count * points_per_output;
    const int64_t workers = std::min<int64_t>({threads, points / kMinPointsPerThread, ir.count});
    if (workers <= 1) return run_range(ir, dst, error, loops);
    const int64_t parts = std::min<int64_t>(workers * kPiecesPerThread, ir.count);
    const int64_t step = (ir.count + parts - 1) / parts;
    gpupy_ir sized = ir;
    sized.count = step;  // (the largest piece: it sizes each interpreter's registers)
    std::atomic<int64_t> next{0};
    const PieceSource take = [&](gpupy_ir* piece) {
        const int64_t begin = std::min(ir.count, next++ * step), end = std::min(ir.count, begin + step);
        if (begin >= end) return false;
        piece->start = ir.start + begin;
        piece->count = end - begin;
        piece->dst_offset = ir.dst_offset + begin;
        return true;
    };
    // One interpreter per worker, set up once, runs the pieces it takes.
    std::vector<std::string> errors(static_cast<size_t>(workers));
    std::vector<char> ok(static_cast<size_t>(workers), 0);
    run_parallel(workers, [&](int64_t w) { ok[w] = run_range(sized, dst, &errors[w], loops, &take); });
    for (int64_t w = 0; w < workers; ++w) {
        if (!ok[w]) {
            *error = errors[w];
            return false;
        }
    }
    return true;
}

}  // namespace gpupy_sw
