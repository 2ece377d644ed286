// The chunk interpreter of one build of the software driver's interpreter
// (interpreter_builds.hpp): the registers and the state of one evaluation,
// shared by the files that define its parts -- the loads and their
// addressing (interpreter_loads.cpp), the evaluation loop
// (interpreter_eval.cpp) and the folds of reductions
// (interpreter_folds.cpp).
#pragma once

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gpupy/numpy_casts.hpp"
#include "interpreter_builds.hpp"

namespace gpupy_sw {
namespace GPUPY_SW_VARIANT {

// Calls fn(T{}) with T the C++ type of `dtype` (dtype_meta.hpp).
template <class Fn>
bool with_type(int32_t dtype, Fn&& fn) {
    return gpupy::with_ctype<bool>(dtype, std::forward<Fn>(fn));
}

using gpupy::scalar_as;

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

    // Evaluates the IR's range into the outputs (interpreter_eval.cpp).
    bool run(Block* const* outputs);
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
    // run() for a reduction: folds the body's values into the outputs
    // (interpreter_folds.cpp).
    bool reduce(Block* const* outputs);
    bool fold_chunks_several(Block* const* outputs, int64_t inner, int64_t chunk);
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

}  // namespace GPUPY_SW_VARIANT
}  // namespace gpupy_sw
