// The interpreter's evaluation loop: every instruction of the IR over a
// chunk of domain points at a time, each op through its kernel (or a loop
// the core offered), with the floating-point checks found on the way.
#include <algorithm>
#include <cstring>

#include "chunk_interpreter.hpp"
#include "fp_checks.hpp"
#include "kernels.hpp"

namespace gpupy_sw {
namespace GPUPY_SW_VARIANT {

namespace {

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

// float16 operands: each element widened to float, the float kernel, and a
// float result rounded to float16 as it is stored (NumPy's float16 loops).
template <class K, int Arity>
void run_float16_kernel(const void* a, const void* b, void* out, int n) {
    using gpupy::float16;
    const float16* x = static_cast<const float16*>(a);
    const float16* y = static_cast<const float16*>(Arity == 1 ? a : b);
    auto value = [&](int i) {
        if constexpr (Arity == 1) return K::template f<float>(float(x[i]));
        else return K::template f<float>(float(x[i]), float(y[i]));
    };
    using R = decltype(value(0));
    using S = std::conditional_t<std::is_same_v<R, float>, float16, R>;
    S* o = static_cast<S*>(out);
    for (int i = 0; i < n; ++i) o[i] = S(value(i));
}

// `watch`/`seen`: where watch is not None and the result is a float32 or
// float64, the loop also finds what Watch says into *seen (else *seen is
// left as it is).
template <class K, int Arity, class T>
bool run_kernel(const void* a, const void* b, void* out, int n, Watch watch, bool* seen) {
    if constexpr (!K::template ok<computed_t<T>>) {
        return false;
    } else if constexpr (!std::is_same_v<computed_t<T>, T>) {
        run_float16_kernel<K, Arity>(a, b, out, n);
        return true;
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

}  // namespace

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
    return reduce(outputs);
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
}  // namespace gpupy_sw
