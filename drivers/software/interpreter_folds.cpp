// The interpreter's reductions: the body's values folded into each output
// in order (one output's chunk, a scan's running value, several outputs at
// once), and the fold checks that look at a body again where a result is
// not finite.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <tuple>
#include <utility>

#include "chunk_interpreter.hpp"
#include "fp_checks.hpp"
#include "kernels.hpp"

namespace gpupy_sw {
namespace GPUPY_SW_VARIANT {

namespace {

// Folds n values into *acc with a binary op's kernel.
template <class K, int Arity, class T>
bool fold_dispatch(T* acc, const T* v, int n) {
    if constexpr (Arity != 2) {
        return false;
    } else if constexpr (!std::is_same_v<computed_t<T>, T>) {
        // float16: each step in float, rounded to float16, as NumPy's
        // float16 loop run element by element (its sums and products the
        // bindings hand to NumPy itself: py_structural.cpp).
        using C = computed_t<T>;
        if constexpr (!K::template ok<C>) {
            return false;
        } else if constexpr (!std::is_same_v<decltype(K::template f<C>(C{}, C{})), C>) {
            return false;
        } else {
            T a = *acc;
            for (int i = 0; i < n; ++i) a = T(K::template f<C>(C(a), C(v[i])));
            *acc = a;
            return true;
        }
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
    } else if constexpr (!std::is_same_v<computed_t<T>, T>) {
        for (int64_t r = 0; r < rows; ++r) {  // float16: one row at a time
            out[r] = identity;
            if (!fold_dispatch<K, Arity, T>(&out[r], v + r * len, static_cast<int>(len))) return false;
        }
        return true;
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

}  // namespace

bool Interpreter::reduce(Block* const* outputs) {
    const int last = ir_.output[0];
    Block* dst = outputs[0];
    char* out = dst->data + ir_.dst_offset * itemsize(dst->dtype);
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
    if constexpr (!gpupy::is_float_v<T>) {
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
    if constexpr (!gpupy::is_float_v<T>) {
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

}  // namespace GPUPY_SW_VARIANT
}  // namespace gpupy_sw
