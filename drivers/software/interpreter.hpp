// The software driver's IR interpreter: evaluates a whole IR list per
// chunk of domain points (fused, like numexpr), never one operation per
// pass over memory.
#pragma once

#include <functional>
#include <string>

#include "gpupy/driver.hpp"
#include "gpupy/op_meta.hpp"

namespace gpupy_sw {

struct Block {
    int32_t dtype;
    int64_t nelems;
    char* data;
    bool owns_data;  // false for block_wrap blocks over host memory
};

// Domain points evaluated together (numexpr's reasoning): registers of
// chunk elements per instruction should stay in cache, yet each chunk pays
// a fixed dispatch cost per instruction. Measured here: a 7-instruction
// list over 4M floats took 7.4 ms with 512-element chunks and 2.5 ms with
// 8192. So the chunk is as large as keeps all registers within
// kRegisterBytes, between kMinChunk and kMaxChunk.
constexpr int kMinChunk = 256;
constexpr int kMaxChunk = 16384;
constexpr int64_t kRegisterBytes = int64_t{1} << 20;

// Below this many points per thread (outputs; a chunked reduction's output
// counts its chunk's points), handing work to another thread costs more
// than it saves (a wake-up and a wait, some us; a thread's first touches of
// its part in cache; 2^16 points take ~100 us or more).
constexpr int64_t kMinPointsPerThread = int64_t{1} << 16;
// An evaluation split across threads is cut into this many pieces per
// thread, taken in turn by whichever thread is free: a thread kept off its
// core for a while (BLAS's spinning workers, another process) delays the
// evaluation by a piece, not by its whole share.
constexpr int64_t kPiecesPerThread = 4;

// Inner loops the core offered (NumPy's own, offer_host_loop), by op and
// operand dtype; where one is set the interpreter calls it for that op
// instead of its own kernel.
struct HostLoops {
    struct Entry {
        gpupy_host_loop loop = nullptr;
        void* data = nullptr;
    };
    Entry entry[GPUPY_NUM_OPS][GPUPY_NUM_DTYPES];
    const Entry* find(int32_t op, int32_t dtype) const {
        const Entry& e = entry[op][dtype];
        return e.loop ? &e : nullptr;
    }
};

// Ops worth an offered loop, for float operands: those whose kernels call
// the C math library one element at a time, where NumPy's loops are
// vectorised (measured 5-60x faster for float32 here), and the predicates,
// whose bool results NumPy's loops pack with wider instructions than the
// compiler's (a float64 comparison 0.25 -> 0.1 ns an element here). The
// kernels of the other ops are compiled inline and vectorise as well.
// float16: every op. Its kernels widen and round an element at a time in
// integer arithmetic (1M additions: 14 ms here, NumPy's loop 3.9 ms; sin
// 24 ms against NumPy's vectorised 0.23 ms), and NumPy's loops are NumPy's
// float16 semantics by definition.
bool wants_host_loop(int32_t op, int32_t dtype);

// Bytes per element of dtype; 0 for an unknown dtype.
using gpupy::dtype_itemsize;
inline int itemsize(int32_t dtype) { return dtype_itemsize(dtype); }

// 1 if op runs with operands of dtype, else 0 (get_method).
int supports(int32_t op, int32_t dtype);

// The pieces of a split evaluation, handed out in turn: sets the range of
// its argument (start, count, dst_offset) to the next piece; false when
// none is left.
using PieceSource = std::function<bool(gpupy_ir*)>;

// Evaluates `ir` into its outputs' blocks dst[0 .. ir.noutputs - 1] using
// up to `threads` threads, calling the offered loops in `loops` (may be
// null); on failure returns false with *error set.
bool interpret(const gpupy_ir& ir, Block* const* dst, std::string* error, int threads, const HostLoops* loops);

}  // namespace gpupy_sw
