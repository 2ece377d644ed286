#include "interpreter.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <memory>
#include <tuple>
#include <utility>
#include <vector>

#include "fp_checks.hpp"
#include "gpupy/numpy_casts.hpp"
#include "kernels.hpp"
#include "worker_pool.hpp"

// This file is compiled twice: for the x86-64 baseline and, as
// interpreter_avx2.cpp, with AVX2 (GPUPY_SW_VARIANT=avx2); interpret()
// picks at run time. Same source, same semantics, wider loops.
#ifndef GPUPY_SW_VARIANT
#define GPUPY_SW_VARIANT baseline
#endif

namespace gpupy_sw {


namespace GPUPY_SW_VARIANT {

namespace {

// Calls fn(T{}) with T the C++ type of `dtype` (dtype_meta.hpp).
template <class Fn>
bool with_type(int32_t dtype, Fn&& fn) {
    return gpupy::with_ctype<bool>(dtype, std::forward<Fn>(fn));
}

using gpupy::scalar_as;

// What a kernel's loop finds for the floating-point checks, in the same
// pass while the values are in registers (a scan afterwards reads the
// chunk back, and cost simple arithmetic half its speed):
enum class Watch {
    None,
    // Whether any value written is NaN or infinite: ORs the bits of v - v
    // (0.0 for a finite v, a NaN otherwise); free against the loop's own
    // loads and stores.
    NonFinite,
    // Whether any value was made so -- not finite from finite operands, or
    // a NaN from operands without one -- so that NaNs and infinities the
    // data carries (missing values) send nothing to the classification:
    // a second pass over the chunk just written (fp_detail::any_made),
    // used once a chunk of the op met a value not finite.
    Made,
};

// Writes value(i) to o[i] for i < n, x and y being the operands (y = x for
// unary ops), finding into *seen what `watch` asks (not None).
template <class R, class T, class Value>
void fill_watched(R* o, const T* x, const T* y, int n, Watch watch, bool* seen, Value&& value) {
    if constexpr (std::is_same_v<T, R>) {
        if (watch == Watch::Made) {
            // The op's own loop as it is, then one pass over the chunk just
            // written: the masks inside the loop keep some kernels, sqrt's,
            // from vectorising.
            for (int i = 0; i < n; ++i) o[i] = value(i);
            *seen = fp_detail::any_made(o, x, y, n);
            return;
        }
    }
    fp_detail::Bits<R> found = 0;
    for (int i = 0; i < n; ++i) {
        const R v = value(i);
        o[i] = v;
        found |= fp_detail::bits(R(v - v));
    }
    *seen = found != 0;
}

// `watch`/`seen`: where watch is not None and the result is a float, the
// loop also finds what Watch says into *seen.
template <class K, int Arity, class T>
bool run_kernel(const void* a, const void* b, void* out, int n, Watch watch, bool* seen) {
    if constexpr (!K::template ok<T>) {
        return false;
    } else if constexpr (Arity == 1) {
        const T* x = static_cast<const T*>(a);
        using R = decltype(K::template f<T>(T{}));
        R* o = static_cast<R*>(out);
        if constexpr (std::is_floating_point_v<R>) {
            if (watch != Watch::None) {
                fill_watched(o, x, x, n, watch, seen, [&](int i) { return K::template f<T>(x[i]); });
                return true;
            }
        }
        for (int i = 0; i < n; ++i) o[i] = K::template f<T>(x[i]);
        return true;
    } else {
        const T* x = static_cast<const T*>(a);
        const T* y = static_cast<const T*>(b);
        using R = decltype(K::template f<T>(T{}, T{}));
        R* o = static_cast<R*>(out);
        if constexpr (std::is_floating_point_v<R>) {
            if (watch != Watch::None) {
                fill_watched(o, x, y, n, watch, seen, [&](int i) { return K::template f<T>(x[i], y[i]); });
                return true;
            }
        }
        for (int i = 0; i < n; ++i) o[i] = K::template f<T>(x[i], y[i]);
        return true;
    }
}

template <class K, int Arity>
bool dispatch_kernel(int32_t dtype, const void* a, const void* b, void* out, int n, Watch watch, bool* seen) {
    if constexpr (Arity == 3 || std::is_same_v<K, K_CAST> || std::is_same_v<K, K_GATHER>) {
        return false;  // handled by the interpreter
    } else {
        return with_type(dtype, [&](auto t) { return run_kernel<K, Arity, decltype(t)>(a, b, out, n, watch, seen); });
    }
}

// `watch`, `seen`: as for run_kernel; *seen is left alone for results that
// are not floats.
bool run_op(int32_t op, int32_t dtype, const void* a, const void* b, void* out, int n, Watch watch = Watch::None,
            bool* seen = nullptr) {
    switch (op) {
#define GPUPY_OP(NAME, CODE, NUMPY_NAME, ARITY, FLAGS, FOLD) \
    case GPUPY_OP_##NAME:                        \
        return dispatch_kernel<K_##NAME, ARITY>(dtype, a, b, out, n, watch, seen);
#include "gpupy/ops.def"
#undef GPUPY_OP
    }
    return false;
}

template <class K>
int supported_by(int32_t dtype) {
    return with_type(dtype, [](auto t) { return K::template ok<decltype(t)>; }) ? 1 : 0;
}

// Folds n values into *acc with a binary op's kernel.
template <class K, int Arity, class T>
bool fold_dispatch(T* acc, const T* v, int n) {
    if constexpr (Arity != 2) {
        return false;
    } else if constexpr (!K::template ok<T>) {
        return false;
    } else {
        using R = decltype(K::template f<T>(T{}, T{}));
        if constexpr (!std::is_same_v<R, T>) {
            return false;
        } else {
            T a = *acc;
            for (int i = 0; i < n; ++i) a = K::template f<T>(a, v[i]);
            *acc = a;
            return true;
        }
    }
}

template <class T>
bool fold(int32_t op, T* acc, const T* v, int n) {
    switch (op) {
#define GPUPY_OP(NAME, CODE, NUMPY_NAME, ARITY, FLAGS, FOLD) \
    case GPUPY_OP_##NAME:                        \
        return fold_dispatch<K_##NAME, ARITY, T>(acc, v, n);
#include "gpupy/ops.def"
#undef GPUPY_OP
    }
    return false;
}

// A CHUNKS reduction's outputs: rows of `nchunks` outputs, output f
// folding the domain points [first, end) of one chunk of its row (the
// last chunk of a row may be shorter); consecutive outputs read
// consecutive points.
struct ChunkLayout {
    int64_t inner, chunk, nchunks;
    ChunkLayout(int64_t inner_points, int64_t chunk_points)
        : inner(inner_points), chunk(chunk_points), nchunks((inner_points + chunk_points - 1) / chunk_points) {}
    std::pair<int64_t, int64_t> points_of(int64_t f) const {
        const int64_t row = f / nchunks, c = f % nchunks;
        return {row * inner + c * chunk, row * inner + std::min(inner, c * chunk + chunk)};
    }
};

// Outputs folded side by side by fold_rows.
constexpr int kFoldLanes = 8;

// Folds `rows` consecutive runs of `len` values each (row r at v + r * len)
// into out[r], each from `identity` and in order: the bits of one fold per
// row. One fold is a chain of dependent operations (a float add waits ~4
// cycles for the one before); kFoldLanes rows advanced together are that
// many independent chains, which the CPU overlaps.
template <class K, int Arity, class T>
bool fold_rows_dispatch(T identity, const T* v, int64_t len, int64_t rows, T* out) {
    if constexpr (Arity != 2) {
        return false;
    } else if constexpr (!K::template ok<T>) {
        return false;
    } else if constexpr (!std::is_same_v<decltype(K::template f<T>(T{}, T{})), T>) {
        return false;
    } else {
        int64_t r = 0;
        for (; r + kFoldLanes <= rows; r += kFoldLanes) {
            T acc[kFoldLanes];
            for (int g = 0; g < kFoldLanes; ++g) acc[g] = identity;
            const T* base = v + r * len;
            for (int64_t i = 0; i < len; ++i) {
                for (int g = 0; g < kFoldLanes; ++g) acc[g] = K::template f<T>(acc[g], base[g * len + i]);
            }
            for (int g = 0; g < kFoldLanes; ++g) out[r + g] = acc[g];
        }
        for (; r < rows; ++r) {  // the rows left: one at a time
            out[r] = identity;
            fold_dispatch<K, Arity, T>(&out[r], v + r * len, static_cast<int>(len));
        }
        return true;
    }
}

template <class T>
bool fold_rows(int32_t op, T identity, const T* v, int64_t len, int64_t rows, T* out) {
    switch (op) {
#define GPUPY_OP(NAME, CODE, NUMPY_NAME, ARITY, FLAGS, FOLD) \
    case GPUPY_OP_##NAME:                        \
        return fold_rows_dispatch<K_##NAME, ARITY, T>(identity, v, len, rows, out);
#include "gpupy/ops.def"
#undef GPUPY_OP
    }
    return false;
}

// Register memory, kept per thread between evaluations. Fresh, it cost
// more than the work: the registers of a few instructions are several
// hundred KB, which malloc serves from new pages (mmap) that fault in on
// first touch -- ~100 us per evaluation here, against ~50 us for NumPy to
// compare 400,000 doubles. Interpreters may nest on one thread, so each
// takes a whole spare block and gives it back when it ends.
class RegisterBlock {
public:
    explicit RegisterBlock(size_t words) {
        auto& spares = spare_blocks();
        for (size_t i = 0; i < spares.size(); ++i) {
            if (spares[i].first >= words) {
                words_ = spares[i].first;
                data_ = std::move(spares[i].second);
                spares.erase(spares.begin() + static_cast<std::ptrdiff_t>(i));
                return;
            }
        }
        words_ = words;
        data_.reset(new uint64_t[words]);
    }
    ~RegisterBlock() {
        auto& spares = spare_blocks();
        if (spares.size() < kSpares) spares.emplace_back(words_, std::move(data_));
    }
    RegisterBlock(const RegisterBlock&) = delete;
    RegisterBlock& operator=(const RegisterBlock&) = delete;
    uint64_t* data() const { return data_.get(); }

private:
    static constexpr size_t kSpares = 4;
    static std::vector<std::pair<size_t, std::unique_ptr<uint64_t[]>>>& spare_blocks() {
        thread_local std::vector<std::pair<size_t, std::unique_ptr<uint64_t[]>>> spares;
        return spares;
    }
    size_t words_ = 0;
    std::unique_ptr<uint64_t[]> data_;
};

class Interpreter {
public:
    Interpreter(const gpupy_ir& ir, std::string* error, const HostLoops* loops)
        : ir_(ir), error_(error), loops_(loops), chunk_(chunk_for(ir)),
          block_(static_cast<size_t>(ir.ninstr) * static_cast<size_t>(chunk_)) {
        nd_ = ir.ndim;
        for (int d = 0; d < nd_; ++d) shape_[d] = ir.shape[d];
        idx_.reset(new int64_t[static_cast<size_t>(chunk_)]);
        regs_.resize(static_cast<size_t>(ir.ninstr));
        ptr_.resize(static_cast<size_t>(ir.ninstr));
        for (int i = 0; i < ir.ninstr; ++i) {
            regs_[i] = block_.data() + static_cast<size_t>(i) * static_cast<size_t>(chunk_);
            ptr_[i] = reinterpret_cast<char*>(regs_[i]);
        }
        check_slot_.assign(static_cast<size_t>(ir.ninstr), -1);
        met_nonfinite_.assign(static_cast<size_t>(ir.ninstr), 0);
        for (int k = 0; k < ir.ncheck; ++k) check_slot_[ir.check[k]] = k;
        found_.assign(static_cast<size_t>(ir.ncheck), 0u);
        // Constants are the same at every point: fill their registers once.
        // So is a load of one element broadcast over the whole domain (a
        // 0-d array: `r1 <= radius` with r1 = radius.max() * i / n); read
        // per chunk, it was a strided copy with stride 0 per element, most
        // of such an evaluation's time.
        same_.assign(static_cast<size_t>(ir.ninstr), 0);
        for (int i = 0; i < ir.ninstr; ++i) {
            const gpupy_ir_instr& in = ir.instr[i];
            if (in.op == GPUPY_OP_LOAD && broadcast_element(in)) {
                const auto* b = reinterpret_cast<const Block*>(in.blocks[0]);
                const int64_t off = in.map.base - in.block_first;
                if (off < 0 || off >= b->nelems) continue;  // eval_points reports it
                same_[i] = with_type(in.dtype, [&](auto t) {
                    using T = decltype(t);
                    T v;
                    std::memcpy(&v, b->data + off * sizeof(T), sizeof(T));
                    std::fill(reg<T>(i), reg<T>(i) + chunk_, v);
                    return true;
                });
                continue;
            }
            if (in.op != GPUPY_OP_CONST) continue;
            same_[i] = 1;
            with_type(in.dtype, [&](auto t) {
                using T = decltype(t);
                T* r = reg<T>(i);
                std::fill(r, r + chunk_, scalar_as<T>(in.value));
                return true;
            });
        }
    }

    bool run(Block* const* outputs);
    bool fold_chunks_several(Block* const* outputs, int64_t inner, int64_t chunk);
    // The checks' flags found so far (gpupy_ir.check), added to the IR's
    // check_flags; other threads may be adding theirs at the same time.
    void report_checks() const {
        for (int k = 0; k < ir_.ncheck; ++k) {
            if (found_[k]) __atomic_fetch_or(&ir_.check_flags[k], found_[k], __ATOMIC_RELAXED);
        }
        for (int k = 0; k < ir_.noutputs; ++k) {
            if (fold_found_[k]) __atomic_fetch_or(&ir_.fold_flags[k], fold_found_[k], __ATOMIC_RELAXED);
        }
    }

private:
    // A load whose index map is the same element at every point.
    bool broadcast_element(const gpupy_ir_instr& in) const {
        if (in.nblocks != 1 || (in.flags & GPUPY_INSTR_REMAPPED)) return false;
        for (int d = 0; d < nd_; ++d) {
            if (in.map.stride[d] != 0 && shape_[d] > 1) return false;
        }
        return true;
    }
    static int chunk_for(const gpupy_ir& ir) {
        const int64_t fit = kRegisterBytes / (8 * static_cast<int64_t>(ir.ninstr));
        // (A reduction's outputs fold consecutive chunks, evaluated together.)
        const int64_t points = ir.reduce_op == GPUPY_OP_NONE
                                   ? ir.count
                                   : std::max<int64_t>(ir.reduce_chunk, 1) * std::max<int64_t>(ir.count, 1);
        // No larger than the work at hand (registers are filled per call).
        return static_cast<int>(std::max<int64_t>(1, std::min(std::clamp<int64_t>(fit, kMinChunk, kMaxChunk), points)));
    }

    template <class T>
    T* reg(int i) {
        return reinterpret_cast<T*>(regs_[i]);
    }
    bool fail(const std::string& msg) {
        *error_ = msg;
        return false;
    }
    // Evaluates every instruction at domain points [p0, p0 + n); the last
    // one straight into `direct` when given (else into its register).
    // Afterwards ptr_[i] is where instruction i's n values are.
    bool eval_points(int64_t p0, int n, char* direct = nullptr);
    // Fold checks (gpupy_ir.check_folds): whether output k's folds are
    // checked, and the flags of its output element `result`, folded from
    // the values of instruction `body` at domain points [p, q): only a
    // value that is not finite needs its body values looked at again
    // (evaluated once more: the rare case).
    bool fold_checked(int k) const { return (ir_.check_folds >> k) & 1u; }
    template <class T>
    bool check_fold(int k, T result, int body, int64_t p, int64_t q);
    // The same for a scan's outputs at points [f, end), out[0..): each
    // folds the chunk's body values from point cs up to its own.
    template <class T>
    bool check_scan_folds(const T* out, int body, int64_t cs, int64_t f, int64_t end);
    // Evaluates the body again at points [p, q), calling see(point, value)
    // with whether any value so far was NaN or infinite (the fold checks'
    // rare path).
    template <class T, class See>
    bool revisit_body(int body, int64_t p, int64_t q, See&& see);
    // Element index of the map at each of the n points from p0.
    void map_indices(const gpupy_ir_instr& in, int64_t p0, int n, int64_t* out);
    bool load(const gpupy_ir_instr& in, const int64_t* idx, int n, void* out);
    // A strided view of one block (slices, transposes, broadcasts), or a
    // remapped one whose innermost dimension is read one element per point
    // (rolls and pads): copied a row of the domain at a time, each row a
    // few runs of one memcpy or one typed strided loop -- no index per
    // element (stencils and Life's rolls read this way).
    bool rows_loadable(const gpupy_ir_instr& in) const;
    bool load_rows(const gpupy_ir_instr& in, int64_t p0, int n, void* out);
    // load_rows of a plain (not remapped) view, T being its item's size;
    // `first` is the element index of the map's base in the block, pt the
    // first point's coordinates.
    template <class T>
    bool load_plain_rows(const T* src, int64_t nelems, int64_t first, const gpupy_index_map& m, int64_t* pt, int n,
                         T* out);

    const gpupy_ir& ir_;
    std::string* error_;
    const HostLoops* loops_;
    int nd_;
    int64_t shape_[GPUPY_MAX_DIMS];
    int chunk_;
    // chunk_ elements of up to 8 bytes each; uninitialised (every element is
    // written before it is read).
    RegisterBlock block_;
    std::vector<uint64_t*> regs_;  // chunk_ words each, in block_
    // Per instruction, where the current chunk's values are: its register,
    // or for a contiguous load the block memory itself (no copy).
    std::vector<char*> ptr_;
    // Per instruction: its register holds one value at every point, filled
    // at the start (a constant, or a load of one element broadcast over the
    // domain). An offered loop reads it with step 0, as NumPy reads a
    // scalar operand: half the bytes of `r1 <= radius`.
    std::vector<char> same_;
    std::unique_ptr<int64_t[]> idx_;
    // Per instruction: its index in ir_.check, or -1 (not checked).
    std::vector<int> check_slot_;
    std::vector<uint32_t> found_;  // per check: gpupy_fp_flag bits found
    uint32_t fold_found_[GPUPY_MAX_OUTPUTS] = {};  // per output: its folds' flags
    std::vector<char> met_nonfinite_;  // per instruction: a chunk's values were not all finite
};

void Interpreter::map_indices(const gpupy_ir_instr& in, int64_t p0, int n, int64_t* out) {
    const gpupy_index_map& m = in.map;
    if (in.flags & GPUPY_INSTR_CONTIGUOUS) {
        for (int k = 0; k < n; ++k) out[k] = m.base + p0 + k;
        return;
    }
    int64_t pt[GPUPY_MAX_DIMS];
    int64_t rem = p0;
    for (int d = nd_ - 1; d >= 0; --d) {
        pt[d] = shape_[d] ? rem % shape_[d] : 0;
        rem = shape_[d] ? rem / shape_[d] : 0;
    }
    const bool remapped = in.flags & GPUPY_INSTR_REMAPPED;
    if (!remapped && nd_ > 0) {
        // A run along the innermost dimension is an arithmetic sequence:
        // its first index, then a step (a broadcast or an arange read
        // across rows of 16 spent most of its evaluation computing each
        // index from all its coordinates).
        const int last = nd_ - 1;
        const int64_t step = m.stride[last];
        for (int k = 0; k < n;) {
            const int64_t run = std::min<int64_t>(n - k, shape_[last] - pt[last]);
            int64_t first = m.base;
            for (int d = 0; d < nd_; ++d) first += pt[d] * m.stride[d];
            for (int64_t j = 0; j < run; ++j) out[k + j] = first + j * step;
            k += static_cast<int>(run);
            pt[last] += run;
            for (int d = last; d > 0 && pt[d] >= shape_[d]; --d) {  // carry into the outer dimensions
                pt[d] = 0;
                ++pt[d - 1];
            }
        }
        return;
    }
    if (nd_ == 0) {
        for (int k = 0; k < n; ++k) out[k] = m.base;
        return;
    }
    // Remapped: a run along the innermost dimension shares the outer
    // dimensions' offset, and its coordinate is stepped rather than divided
    // per element (a roll's or a pad's read costs an add and a compare).
    const int last = nd_ - 1;
    const int64_t div = m.div[last] < 1 ? 1 : m.div[last], mod = m.mod[last], stride = m.stride[last];
    const int32_t edge = m.edge[last];
    const int64_t period = edge == GPUPY_EDGE_REFLECT ? 2 * mod - 2 : edge == GPUPY_EDGE_SYMMETRIC ? 2 * mod : mod;
    const int64_t top = edge == GPUPY_EDGE_SYMMETRIC ? 2 * mod - 1 : period;
    for (int k = 0; k < n;) {
        const int64_t run = std::min<int64_t>(n - k, shape_[last] - pt[last]);
        int64_t outer = m.base;
        for (int d = 0; d < last; ++d) outer += gpupy_map_coordinate(pt[d], m.div[d], m.shift[d], m.mod[d], m.edge[d]) * m.stride[d];
        int64_t r = pt[last] % div;
        int64_t c = pt[last] / div + m.shift[last];  // before the edge
        int64_t t = period > 0 && edge != GPUPY_EDGE_CLAMP ? c % period : c;  // periodic edges: c within its period
        for (int64_t j = 0; j < run; ++j) {
            int64_t coord;
            switch (edge) {
            case GPUPY_EDGE_CLAMP: coord = c < 0 ? 0 : c >= mod ? mod - 1 : c; break;
            case GPUPY_EDGE_REFLECT:
            case GPUPY_EDGE_SYMMETRIC: coord = period > 0 ? std::min(t, top - t) : 0; break;
            default: coord = t;
            }
            out[k + j] = outer + coord * stride;
            if (++r == div) {
                r = 0;
                ++c;
                if (++t == period) t = 0;
            }
        }
        k += static_cast<int>(run);
        pt[last] += run;
        for (int d = last; d > 0 && pt[d] >= shape_[d]; --d) {  // carry into the outer dimensions
            pt[d] = 0;
            ++pt[d - 1];
        }
    }
}

bool Interpreter::load(const gpupy_ir_instr& in, const int64_t* idx, int n, void* out) {
    const int item = itemsize(in.dtype);
    char* o = static_cast<char*>(out);
    if (in.nblocks < 1) return fail("LOAD without blocks");
    const auto* b0 = reinterpret_cast<const Block*>(in.blocks[0]);
    if (in.nblocks == 1) {
        const int64_t first = in.block_first;
        // A run of consecutive indices is one memcpy.
        if (n > 0 && idx[n - 1] - idx[0] == n - 1 && (in.flags & GPUPY_INSTR_CONTIGUOUS)) {
            const int64_t off = idx[0] - first;
            if (off < 0 || off + n > b0->nelems) return fail("LOAD index outside its block");
            std::memcpy(o, b0->data + off * item, static_cast<size_t>(n) * item);
            return true;
        }
        // Runs of consecutive indices (a roll's or a pad's rows between
        // their wraps) are one memcpy each.
        for (int k = 0; k < n;) {
            const int64_t off = idx[k] - first;
            int j = 1;
            while (k + j < n && idx[k + j] == idx[k] + j) ++j;
            if (off < 0 || off + j > b0->nelems) return fail("LOAD index outside its block");
            std::memcpy(o + k * item, b0->data + off * item, static_cast<size_t>(j) * item);
            k += j;
        }
        return true;
    }
    for (int k = 0; k < n; ++k) {
        const int64_t local = idx[k] - in.block_first;
        const int64_t bi = local / in.block_elems, off = local % in.block_elems;
        if (local < 0 || bi >= in.nblocks) return fail("LOAD index outside its blocks");
        const auto* b = reinterpret_cast<const Block*>(in.blocks[bi]);
        if (off >= b->nelems) return fail("LOAD index outside its block");
        std::memcpy(o + k * item, b->data + off * item, item);
    }
    return true;
}

template <class T>
void copy_strided(T* out, const T* in, int64_t stride, int64_t n) {
    for (int64_t k = 0; k < n; ++k) out[k] = in[k * stride];
}

// A run of the innermost dimension of a remapped read: from coordinate c
// (before the edge) on, `length` points whose coordinates are `first`,
// first + step, ... (step 1, -1 or 0: a clamped edge repeats its element).
// gpupy_map_coordinate's rule, one run at a time instead of per point.
struct EdgeRun {
    int64_t first, step, length;
};

EdgeRun edge_run(int64_t c, int64_t mod, int32_t edge) {
    constexpr int64_t kEndless = INT64_MAX;
    // c % period, without the division where c is within the first period
    // (every run but a wrapped roll's or a pad's second; a division cost
    // more than copying a 512-element row).
    auto within = [c](int64_t period) { return c < period ? c : c % period; };
    switch (edge) {
    case GPUPY_EDGE_CLAMP:
        if (c < 0) return {0, 0, -c};
        if (c >= mod) return {mod - 1, 0, kEndless};
        return {c, 1, mod - c};
    case GPUPY_EDGE_REFLECT: {
        const int64_t period = 2 * mod - 2;
        if (period <= 0) return {0, 0, kEndless};
        const int64_t t = within(period);
        if (t < mod - 1) return {t, 1, mod - 1 - t};  // up to the last element
        return {period - t, -1, period - t};          // back down to element 1
    }
    case GPUPY_EDGE_SYMMETRIC: {
        const int64_t t = within(2 * mod);
        if (t < mod) return {t, 1, mod - t};
        return {2 * mod - 1 - t, -1, 2 * mod - t};
    }
    default:
        if (!mod) return {c, 1, kEndless};
        const int64_t t = within(mod);
        return {t, 1, mod - t};
    }
}

template <class T>
void copy_run(T* out, const T* in, int64_t stride, int64_t n) {
    if (stride == 1) {  // a short row: a loop costs less than a call to memcpy
        for (int64_t k = 0; k < n; ++k) out[k] = in[k];
    } else if (stride == 0) {
        std::fill(out, out + n, *in);
    } else {
        copy_strided(out, in, stride, n);
    }
}

// Copies n elements of `item` bytes, `step` elements apart in the source
// (negative: backwards; 0: one element repeated; 1: a memcpy unless short).
void copy_elements(char* dst, const char* src, int64_t step, int64_t n, int item) {
    if (step == 1 && n * item > 64) {
        std::memcpy(dst, src, static_cast<size_t>(n) * item);
        return;
    }
    switch (item) {
    case 1: copy_run(reinterpret_cast<uint8_t*>(dst), reinterpret_cast<const uint8_t*>(src), step, n); break;
    case 2: copy_run(reinterpret_cast<uint16_t*>(dst), reinterpret_cast<const uint16_t*>(src), step, n); break;
    case 4: copy_run(reinterpret_cast<uint32_t*>(dst), reinterpret_cast<const uint32_t*>(src), step, n); break;
    case 8: copy_run(reinterpret_cast<uint64_t*>(dst), reinterpret_cast<const uint64_t*>(src), step, n); break;
    default:
        for (int64_t j = 0; j < n; ++j) std::memcpy(dst + j * item, src + j * step * item, item);
    }
}

bool Interpreter::rows_loadable(const gpupy_ir_instr& in) const {
    if (in.nblocks != 1) return false;
    if (!(in.flags & GPUPY_INSTR_REMAPPED) || nd_ == 0) return true;
    // Remapped: the innermost dimension must step one coordinate per point
    // (div 1); the outer ones may be anything.
    return in.map.div[nd_ - 1] <= 1;
}

bool Interpreter::load_rows(const gpupy_ir_instr& in, int64_t p0, int n, void* out) {
    const gpupy_index_map& m = in.map;
    const auto* b = reinterpret_cast<const Block*>(in.blocks[0]);
    const int item = itemsize(in.dtype);
    char* o = static_cast<char*>(out);
    if (nd_ == 0) {
        const int64_t off = m.base - in.block_first;
        if (n > 1 || off < 0 || off >= b->nelems) return n == 0 || fail("LOAD index outside its block");
        if (n == 1) std::memcpy(o, b->data + off * item, item);
        return true;
    }
    const bool remapped = in.flags & GPUPY_INSTR_REMAPPED;
    const int last = nd_ - 1;
    int64_t pt[GPUPY_MAX_DIMS];
    int64_t rem = p0;
    for (int d = last; d >= 0; --d) {
        pt[d] = shape_[d] ? rem % shape_[d] : 0;
        rem = shape_[d] ? rem / shape_[d] : 0;
    }
    if (!remapped) {
        auto rows = [&](auto* typed_out) {
            using T = std::remove_pointer_t<decltype(typed_out)>;
            return load_plain_rows(reinterpret_cast<const T*>(b->data), b->nelems, m.base - in.block_first, m, pt, n,
                                   typed_out);
        };
        switch (item) {
        case 1: return rows(reinterpret_cast<uint8_t*>(o));
        case 2: return rows(reinterpret_cast<uint16_t*>(o));
        case 4: return rows(reinterpret_cast<uint32_t*>(o));
        case 8: return rows(reinterpret_cast<uint64_t*>(o));
        default: return fail("bad LOAD dtype");
        }
    }
    const int64_t stride = m.stride[last];
    // Copies `count` elements whose first has index `first` and the others
    // follow `step` elements apart, checked against the block.
    auto copy_checked = [&](char* dst, int64_t first, int64_t step, int64_t count) {
        const int64_t end = first + (count - 1) * step;
        if (std::min(first, end) < 0 || std::max(first, end) >= b->nelems) return fail("LOAD index outside its block");
        copy_elements(dst, b->data + first * item, step, count, item);
        return true;
    };
    // The outer dimensions' share of the row's element offset, each
    // dimension's term recomputed only when its coordinate moves.
    int64_t term[GPUPY_MAX_DIMS];
    auto term_of = [&](int d) {
        return gpupy_map_coordinate(pt[d], m.div[d], m.shift[d], m.mod[d], m.edge[d]) * m.stride[d];
    };
    int64_t outer = m.base - in.block_first;
    for (int d = 0; d < last; ++d) outer += (term[d] = term_of(d));
    for (int k = 0; k < n;) {
        const int64_t run = std::min<int64_t>(n - k, shape_[last] - pt[last]);
        char* dst = o + static_cast<int64_t>(k) * item;
        // The innermost coordinates of this row, a run of the edge at a time.
        for (int64_t j = 0; j < run;) {
            const EdgeRun r = edge_run(pt[last] + j + m.shift[last], m.mod[last], m.edge[last]);
            const int64_t count = std::min(r.length, run - j);
            if (!copy_checked(dst + j * item, outer + r.first * stride, r.step * stride, count)) return false;
            j += count;
        }
        k += static_cast<int>(run);
        pt[last] += run;
        for (int d = last; d > 0 && pt[d] >= shape_[d]; --d) {  // carry into the outer dimensions
            pt[d] = 0;
            ++pt[d - 1];
            for (int e = d - 1; e <= d && e < last; ++e) {  // the dimensions whose coordinate moved
                outer -= term[e];
                outer += (term[e] = term_of(e));
            }
        }
    }
    return true;
}

// Rows of at most this many elements are copied a column at a time.
constexpr int64_t kShortRow = 4;

template <class T>
bool Interpreter::load_plain_rows(const T* src, int64_t nelems, int64_t first, const gpupy_index_map& m, int64_t* pt,
                                  int n, T* out) {
    const int last = nd_ - 1;
    const int64_t stride = m.stride[last];
    // The element offset of the row's first point, kept as the points
    // advance (a reduction over 8 x 8 tiles reads rows of 8: recomputing it
    // from every coordinate, and a memcpy call, per row cost more than the
    // copy).
    int64_t offset = first;
    for (int d = 0; d < nd_; ++d) offset += pt[d] * m.stride[d];
    const int64_t width = shape_[last];
    for (int k = 0; k < n;) {
        if (width <= kShortRow && nd_ >= 2 && pt[last] == 0) {
            // Rows of a few elements (the channels of stack(axis=-1), read
            // from planes): whole rows of the next dimension at a time,
            // element j of every row together -- the per-row bookkeeping
            // cost ~10x the copy of 3 values.
            const int64_t rows = std::min<int64_t>((n - k) / width, shape_[last - 1] - pt[last - 1]);
            if (rows >= 2) {
                const int64_t step = m.stride[last - 1];
                const int64_t down = (rows - 1) * step, across = (width - 1) * stride;
                const int64_t lo = offset + std::min<int64_t>(0, down) + std::min<int64_t>(0, across);
                const int64_t hi = offset + std::max<int64_t>(0, down) + std::max<int64_t>(0, across);
                if (lo < 0 || hi >= nelems) return fail("LOAD index outside its block");
                for (int64_t j = 0; j < width; ++j) {
                    const T* from = src + offset + j * stride;
                    T* to = out + k + j;
                    for (int64_t r = 0; r < rows; ++r) to[r * width] = from[r * step];
                }
                offset += rows * step;
                k += static_cast<int>(rows * width);
                pt[last - 1] += rows;
                for (int d = last - 1; d > 0 && pt[d] >= shape_[d]; --d) {  // carry into the outer dimensions
                    offset += m.stride[d - 1] - shape_[d] * m.stride[d];
                    pt[d] = 0;
                    ++pt[d - 1];
                }
                continue;
            }
        }
        const int64_t run = std::min<int64_t>(n - k, shape_[last] - pt[last]);
        const int64_t end = offset + (run - 1) * stride;
        if (std::min(offset, end) < 0 || std::max(offset, end) >= nelems) return fail("LOAD index outside its block");
        const T* from = src + offset;
        T* to = out + k;
        if (stride == 1 && run > 16) {
            std::memcpy(to, from, static_cast<size_t>(run) * sizeof(T));
        } else {
            for (int64_t j = 0; j < run; ++j) to[j] = from[j * stride];
        }
        offset += run * stride;
        k += static_cast<int>(run);
        pt[last] += run;
        for (int d = last; d > 0 && pt[d] >= shape_[d]; --d) {  // carry into the outer dimensions
            offset += m.stride[d - 1] - shape_[d] * m.stride[d];
            pt[d] = 0;
            ++pt[d - 1];
        }
    }
    return true;
}

bool Interpreter::eval_points(int64_t p0, int n, char* direct) {
    const int last = ir_.output[0];
    for (int i = 0; i < ir_.ninstr; ++i) {
        const gpupy_ir_instr& in = ir_.instr[i];
        char* own = reinterpret_cast<char*>(regs_[i]);
        void* out = (i == last && direct && in.op != GPUPY_OP_LOAD && in.op != GPUPY_OP_CONST) ? direct : own;
        ptr_[i] = static_cast<char*>(out);
        switch (in.op) {
        case GPUPY_OP_CONST:
            break;
        case GPUPY_OP_LOAD: {
            if (same_[i]) break;  // filled at the start
            if ((in.flags & GPUPY_INSTR_CONTIGUOUS) && in.nblocks == 1) {
                // Consecutive elements of one block: read them in place.
                const auto* b = reinterpret_cast<const Block*>(in.blocks[0]);
                const int64_t off = in.map.base + p0 - in.block_first;
                if (off < 0 || off + n > b->nelems) return fail("LOAD index outside its block");
                ptr_[i] = b->data + off * itemsize(in.dtype);
                break;
            }
            if (rows_loadable(in)) {
                if (!load_rows(in, p0, n, out)) return false;
                break;
            }
            map_indices(in, p0, n, idx_.get());
            if (!load(in, idx_.get(), n, out)) return false;
            break;
        }
        case GPUPY_OP_INDEX: {
            map_indices(in, p0, n, idx_.get());
            if (in.div > 1 || in.mod) {  // (the loop without them vectorises)
                for (int k = 0; k < n; ++k) {
                    int64_t v = in.div > 1 ? idx_[k] / in.div : idx_[k];
                    if (in.mod) v %= in.mod;
                    idx_[k] = v;
                }
            }
            with_type(in.dtype, [&](auto t) {
                using T = decltype(t);
                T* r = static_cast<T*>(out);
                const int64_t* v = idx_.get();
                const int count = n;  // (a local: a byte store could alias a captured n)
                for (int k = 0; k < count; ++k) r[k] = gpupy::numpy_cast<T>(v[k]);
                return true;
            });
            break;
        }
        case GPUPY_OP_CAST: {
            const int32_t from = ir_.instr[in.arg[0]].dtype;
            const void* a = ptr_[in.arg[0]];
            bool ok = with_type(from, [&](auto f) {
                using F = decltype(f);
                return with_type(in.dtype, [&](auto t) {
                    using T = decltype(t);
                    const F* x = static_cast<const F*>(a);
                    T* r = static_cast<T*>(out);
                    // A local count: through the captured n every byte store
                    // could change it, and the loop ran a byte at a time.
                    const int count = n;
                    for (int k = 0; k < count; ++k) r[k] = gpupy::numpy_cast<T>(x[k]);
                    return true;
                });
            });
            if (!ok) return fail("bad CAST dtypes");
            break;
        }
        case GPUPY_OP_GATHER: {
            // The index values, kept inside the bound blocks (the core
            // checked them; nothing outside is ever read), then a LOAD's read.
            if (in.nblocks < 1) return fail("GATHER without blocks");
            const auto* tail = reinterpret_cast<const Block*>(in.blocks[in.nblocks - 1]);
            const int64_t lo = in.block_first, hi = lo + (in.nblocks - 1) * in.block_elems + tail->nelems - 1;
            if (hi < lo) return fail("GATHER from empty blocks");
            const int64_t* where = reinterpret_cast<const int64_t*>(ptr_[in.arg[0]]);
            for (int k = 0; k < n; ++k) idx_[k] = std::min(std::max(where[k], lo), hi);
            if (!load(in, idx_.get(), n, out)) return false;
            break;
        }
        case GPUPY_OP_WHERE: {
            // A select by element width, both sides read and combined by a
            // mask: a loop the compiler vectorises (a memcpy call per
            // element, then a branch per element, were most of a masked
            // reduction's time).
            const uint8_t* c = reinterpret_cast<const uint8_t*>(ptr_[in.arg[0]]);
            const char* x = ptr_[in.arg[1]];
            const char* y = ptr_[in.arg[2]];
            auto select = [&](auto word) {
                using W = decltype(word);
                const W* xs = reinterpret_cast<const W*>(x);
                const W* ys = reinterpret_cast<const W*>(y);
                W* r = static_cast<W*>(out);
                const int count = n;  // (a local: a byte store could alias a captured n)
                for (int k = 0; k < count; ++k) {
                    const W keep = static_cast<W>(0) - static_cast<W>(c[k] != 0);  // all ones where c
                    r[k] = static_cast<W>((xs[k] & keep) | (ys[k] & static_cast<W>(~keep)));
                }
            };
            switch (itemsize(in.dtype)) {
            case 1: select(uint8_t{}); break;
            case 2: select(uint16_t{}); break;
            case 4: select(uint32_t{}); break;
            case 8: select(uint64_t{}); break;
            default: return fail("bad WHERE dtype");
            }
            break;
        }
        default: {
            const int32_t dt = ir_.instr[in.arg[0]].dtype;
            const void* a = ptr_[in.arg[0]];
            const void* b = in.arg[1] >= 0 ? ptr_[in.arg[1]] : nullptr;
            if (const HostLoops::Entry* e = loops_ ? loops_->find(in.op, dt) : nullptr) {
                // Operands, then the result: n contiguous elements each.
                char* args[3] = {const_cast<char*>(static_cast<const char*>(a)),
                                 const_cast<char*>(static_cast<const char*>(b)), nullptr};
                int64_t steps[3] = {same_[in.arg[0]] ? 0 : itemsize(dt),
                                    b && same_[in.arg[1]] ? 0 : itemsize(dt), 0};
                const int nin = b ? 2 : 1;
                args[nin] = static_cast<char*>(out);
                steps[nin] = itemsize(in.dtype);
                const int64_t count = n;
                e->loop(args, &count, steps, e->data);
                break;
            }
            if (check_slot_[i] >= 0 && gpupy::dtype_is_float(in.dtype)) {
                // Once a chunk met a value not finite (data with NaNs), the
                // kernel tells made from carried, so that carried ones cost
                // no classification.
                // (logaddexp's every NaN is flagged: gpupy_fp_flag.)
                const Watch watch =
                    met_nonfinite_[i] && !gpupy_fp_flags_every_nan(in.op) ? Watch::Made : Watch::NonFinite;
                bool seen = true;
                if (!run_op(in.op, dt, a, b, out, n, watch, &seen)) return fail("op not supported for this dtype");
                if (!seen) continue;  // nothing for the check to find
                met_nonfinite_[i] = 1;
                break;
            }
            if (!run_op(in.op, dt, a, b, out, n)) return fail("op not supported for this dtype");
        }
        }
        if (const int slot = check_slot_[i]; slot >= 0) {
            CheckedOperand operands[3];
            const int arity = gpupy::op_arity(in.op);
            for (int k = 0; k < arity; ++k) operands[k] = {ptr_[in.arg[k]], ir_.instr[in.arg[k]].dtype};
            found_[slot] |= fp_flags(in.op, in.dtype, ptr_[i], operands, arity, n);
        }
    }
    return true;
}

bool Interpreter::run(Block* const* outputs) {
    const int last = ir_.output[0];
    Block* dst = outputs[0];
    const int item = itemsize(dst->dtype);
    for (int k = 0; k < ir_.noutputs; ++k) {
        if (ir_.dst_offset + ir_.count > outputs[k]->nelems) return fail("output range outside the destination");
    }
    char* out = dst->data + ir_.dst_offset * item;
    if (ir_.reduce_op == GPUPY_OP_NONE) {
        for (int64_t done = 0; done < ir_.count; done += chunk_) {
            const int n = static_cast<int>(std::min<int64_t>(chunk_, ir_.count - done));
            char* target = out + done * item;
            if (!eval_points(ir_.start + done, n, target)) return false;
            if (ptr_[last] != target) std::memcpy(target, ptr_[last], static_cast<size_t>(n) * item);
            for (int k = 1; k < ir_.noutputs; ++k) {  // the other outputs: their instructions' values
                const int at = ir_.output[k], size = itemsize(ir_.instr[at].dtype);
                std::memcpy(outputs[k]->data + (ir_.dst_offset + done) * size, ptr_[at], static_cast<size_t>(n) * size);
            }
        }
        return true;
    }
    int64_t inner = 1;
    for (int d = nd_ - ir_.reduce_ndim; d < nd_; ++d) inner *= shape_[d];
    const int64_t chunk = ir_.reduce_chunk;
    if (chunk <= 0 || inner <= 0) return fail("bad reduction geometry");
    if (ir_.noutputs > 1) return fold_chunks_several(outputs, inner, chunk);
    return with_type(dst->dtype, [&](auto t) {
        using T = decltype(t);
        T* o = reinterpret_cast<T*>(out);
        const T identity = scalar_as<T>(ir_.reduce_identity);
        // Folds body values at domain points [p, q) into acc; when `each`
        // is set, stores the running value after each point (scan).
        auto fold_range = [&](T* acc, int64_t p, int64_t q, T* each) -> bool {
            while (p < q) {
                const int n = static_cast<int>(std::min<int64_t>(chunk_, q - p));
                if (!eval_points(p, n)) return false;
                const T* v = reinterpret_cast<const T*>(ptr_[last]);
                if (each) {
                    for (int k = 0; k < n; ++k) {
                        if (!fold(ir_.reduce_op, acc, v + k, 1)) return fail("fold op not supported");
                        each[k] = *acc;
                    }
                    each += n;
                } else if (!fold(ir_.reduce_op, acc, v, n)) {
                    return fail("fold op not supported");
                }
                p += n;
            }
            return true;
        };
        if (ir_.reduce_mode == GPUPY_REDUCE_CHUNKS) {
            // Output f folds the points of its chunk, and the chunks of
            // consecutive outputs are consecutive points: the body is
            // evaluated chunk_ points at a time across outputs, each
            // output's values folded in order (as one output at a time
            // would: the same bits). An 8 x 8 tile's 64 values no longer
            // cost one evaluation of the list each.
            const ChunkLayout layout(inner, chunk);
            const int64_t nchunks = layout.nchunks;
            auto points_of = [&](int64_t f) { return layout.points_of(f); };
            const int64_t end = ir_.start + ir_.count;
            const int64_t last_point = points_of(end - 1).second;
            int64_t f = ir_.start;
            auto [p, q] = points_of(f);
            T acc = identity;
            while (f < end) {
                const int n = static_cast<int>(std::min<int64_t>(chunk_, last_point - p));
                if (!eval_points(p, n)) return false;
                const T* v = reinterpret_cast<const T*>(ptr_[last]);
                for (int i = 0; i < n;) {
                    // Whole outputs of one row, each a full chunk, inside
                    // this batch: folded side by side. (A full chunk still
                    // to fold is an output not yet begun.)
                    if (q - p == chunk) {
                        const int64_t row_left = nchunks - f % nchunks - (inner % chunk != 0);
                        const int64_t whole = std::min({(n - i) / chunk, row_left, end - f});
                        if (whole >= 2) {
                            if (!fold_rows(ir_.reduce_op, identity, v + i, chunk, whole, o + (f - ir_.start)))
                                return fail("fold op not supported");
                            i += static_cast<int>(whole * chunk);
                            f += whole;
                            if (f < end) std::tie(p, q) = points_of(f);
                            continue;
                        }
                    }
                    const int m = static_cast<int>(std::min<int64_t>(n - i, q - p));
                    if (!fold(ir_.reduce_op, &acc, v + i, m)) return fail("fold op not supported");
                    i += m;
                    p += m;
                    if (p == q) {  // output f is complete
                        o[f - ir_.start] = acc;
                        acc = identity;
                        if (++f < end) std::tie(p, q) = points_of(f);
                    }
                }
            }
            // The fold checks evaluate the body again, so they come after.
            for (f = ir_.start; fold_checked(0) && f < end; ++f) {
                const auto [first, after] = points_of(f);
                if (!check_fold(0, o[f - ir_.start], last, first, after)) return false;
            }
            return true;
        }
        // PREFIX: runs of outputs in one chunk of one row share a running value.
        int64_t f = ir_.start;
        const int64_t end = ir_.start + ir_.count;
        while (f < end) {
            const int64_t row = f / inner, r = f % inner;
            const int64_t cs = (r / chunk) * chunk;
            const int64_t run_end = std::min(end, row * inner + std::min(inner, cs + chunk));
            T acc = identity;
            // Values before f within the chunk only feed the running value.
            if (!fold_range(&acc, row * inner + cs, f, nullptr)) return false;
            if (!fold_range(&acc, f, run_end, o + (f - ir_.start))) return false;
            if (fold_checked(0) && !check_scan_folds(o + (f - ir_.start), last, row * inner + cs, f, run_end))
                return false;
            f = run_end;
        }
        return true;
    });
}

}  // namespace

// A reduction with several outputs (CHUNKS mode): each output's
// accumulator folds its own instruction's values with its own op, over the
// same chunks, from one evaluation of the list per run of points.
bool Interpreter::fold_chunks_several(Block* const* outputs, int64_t inner, int64_t chunk) {
    // As the single output's CHUNKS loop (run): the body is evaluated
    // chunk_ points at a time across outputs, each output's accumulators
    // folding its own points in order (the bits of one output at a time).
    if (ir_.count <= 0) return true;
    const ChunkLayout layout(inner, chunk);
    auto points_of = [&](int64_t f) { return layout.points_of(f); };
    auto for_each_output = [&](auto&& fn) {
        for (int k = 0; k < ir_.noutputs; ++k) {
            const bool ok = with_type(outputs[k]->dtype, [&](auto t) { return fn(k, t); });
            if (!ok) return false;
        }
        return true;
    };
    alignas(8) unsigned char acc[GPUPY_MAX_OUTPUTS][8];
    auto start_output = [&] {
        for_each_output([&](int k, auto t) {
            using T = decltype(t);
            *reinterpret_cast<T*>(acc[k]) = scalar_as<T>(k ? ir_.output_identity[k] : ir_.reduce_identity);
            return true;
        });
    };
    const int64_t end = ir_.start + ir_.count;
    const int64_t last_point = points_of(end - 1).second;
    int64_t f = ir_.start;
    auto [p, q] = points_of(f);
    start_output();
    while (f < end) {
        const int n = static_cast<int>(std::min<int64_t>(chunk_, last_point - p));
        if (!eval_points(p, n)) return false;
        for (int i = 0; i < n;) {
            const int m = static_cast<int>(std::min<int64_t>(n - i, q - p));
            const bool ok = for_each_output([&](int k, auto t) {
                using T = decltype(t);
                const int32_t op = k ? ir_.output_reduce_op[k] : ir_.reduce_op;
                return fold(op, reinterpret_cast<T*>(acc[k]), reinterpret_cast<const T*>(ptr_[ir_.output[k]]) + i, m);
            });
            if (!ok) return fail("fold op not supported");
            i += m;
            p += m;
            if (p == q) {  // output f is complete
                for (int k = 0; k < ir_.noutputs; ++k) {
                    const int size = itemsize(outputs[k]->dtype);
                    std::memcpy(outputs[k]->data + (ir_.dst_offset + f - ir_.start) * size, acc[k],
                                static_cast<size_t>(size));
                }
                if (++f < end) {
                    std::tie(p, q) = points_of(f);
                    start_output();
                }
            }
        }
    }
    // The fold checks evaluate the body again, so they come after.
    for (f = ir_.start; f < end; ++f) {
        const auto [first, after] = points_of(f);
        const bool ok = for_each_output([&](int k, auto t) {
            using T = decltype(t);
            if (!fold_checked(k)) return true;
            const T result = reinterpret_cast<const T*>(outputs[k]->data)[ir_.dst_offset + f - ir_.start];
            return check_fold(k, result, ir_.output[k], first, after);
        });
        if (!ok) return false;
    }
    return true;
}

template <class T, class See>
bool Interpreter::revisit_body(int body, int64_t p, int64_t q, See&& see) {
    bool body_nan = false, body_inf = false;
    while (p < q) {
        const int n = static_cast<int>(std::min<int64_t>(chunk_, q - p));
        if (!eval_points(p, n)) return false;
        const T* v = reinterpret_cast<const T*>(ptr_[body]);
        for (int i = 0; i < n; ++i, ++p) {
            body_nan |= std::isnan(v[i]);
            body_inf |= std::isinf(v[i]);
            see(p, body_nan, body_inf);
        }
    }
    return true;
}

template <class T>
bool Interpreter::check_scan_folds(const T* out, int body, int64_t cs, int64_t f, int64_t end) {
    if constexpr (!std::is_floating_point_v<T>) {
        return true;
    } else {
        if (std::all_of(out, out + (end - f), [](T x) { return std::isfinite(x); })) return true;
        return revisit_body<T>(body, cs, end, [&](int64_t p, bool body_nan, bool body_inf) {
            if (p < f) return;
            const T x = out[p - f];
            fold_found_[0] |= gpupy_fold_flags(std::isnan(x), std::isinf(x), body_nan, body_inf);
        });
    }
}

template <class T>
bool Interpreter::check_fold(int k, T result, int body, int64_t p, int64_t q) {
    if constexpr (!std::is_floating_point_v<T>) {
        return true;
    } else {
        if (std::isfinite(result)) return true;
        bool nan = false, inf = false;
        const bool ok = revisit_body<T>(body, p, q, [&](int64_t, bool body_nan, bool body_inf) {
            nan = body_nan;
            inf = body_inf;
        });
        if (!ok) return false;
        fold_found_[k] |= gpupy_fold_flags(std::isnan(result), std::isinf(result), nan, inf);
        return true;
    }
}

bool interpret_range(const gpupy_ir& ir, Block* const* dst, std::string* error, const HostLoops* loops,
                     const PieceSource* pieces) {
    gpupy_ir piece = ir;  // the interpreter reads this one: each piece's range is set here
    Interpreter in(piece, error, loops);
    if (!pieces) {
        if (!in.run(dst)) return false;
    } else {
        while ((*pieces)(&piece)) {
            if (!in.run(dst)) return false;
        }
    }
    in.report_checks();
    return true;
}

}  // namespace GPUPY_SW_VARIANT

#ifndef GPUPY_SW_SECONDARY_VARIANT
namespace avx2 {
bool interpret_range(const gpupy_ir& ir, Block* const* dst, std::string* error, const HostLoops* loops,
                     const PieceSource* pieces);
}

namespace {

bool run_range(const gpupy_ir& ir, Block* const* dst, std::string* error, const HostLoops* loops,
               const PieceSource* pieces = nullptr) {
    static const bool avx2 = __builtin_cpu_supports("avx2");
    return avx2 ? avx2::interpret_range(ir, dst, error, loops, pieces)
                : baseline::interpret_range(ir, dst, error, loops, pieces);
}

}  // namespace

bool wants_host_loop(int32_t op, int32_t dtype) {
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
        return baseline::supported_by<K_##NAME>(dtype);
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
#endif  // GPUPY_SW_SECONDARY_VARIANT

}  // namespace gpupy_sw
