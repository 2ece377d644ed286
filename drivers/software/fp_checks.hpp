// The software driver's floating-point error checks (gpupy_ir.check): the
// gpupy_fp_flag bits one instruction's values show over a run of points,
// found from its values and its operands'.
//
// Most runs hold no NaN or infinity at all, so the values are first
// scanned for a non-finite float alone (one vectorised pass over memory
// just written, in cache); operands are looked at only where one is found.
#pragma once

#include <cstdint>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "gpupy/driver.hpp"
#include "gpupy/dtype_meta.hpp"

namespace gpupy_sw {

// n values of one operand, of `dtype`.
struct CheckedOperand {
    const char* data;
    int32_t dtype;
};

namespace fp_detail {

template <class T>
using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;

template <class T>
inline Bits<T> bits(T v) {
    Bits<T> b;
    std::memcpy(&b, &v, sizeof b);
    return b;
}

// All ones where `test` holds, as an integer mask (vectorises as compares).
template <class T>
inline Bits<T> mask(bool test) {
    return Bits<T>(0) - static_cast<Bits<T>>(test);
}

// Non-zero where v was made not finite -- not finite from finite operands
// x and y, or a NaN from operands without one -- as opposed to carried
// from its operands (missing values in the data). Integer masks, so that
// the loops it is ORed in vectorise (about half again a simple loop's
// time with AVX2).
template <class T>
inline Bits<T> made_bits(T v, T x, T y) {
    const T in = (x - x) + (y - y);  // NaN where an operand is not finite
    return (bits(T(v - v)) & mask<T>(in == in)) | (mask<T>(v != v) & mask<T>((x == x) & (y == y)));
}

// v - v is +0.0 for a finite v and NaN otherwise: ORing its bits finds
// any NaN or infinity in a loop that vectorises on SSE2 and AVX2 alike.
template <class T>
bool any_nonfinite(const T* v, int n) {
    Bits<T> found = 0;
    for (int k = 0; k < n; ++k) found |= bits(T(v[k] - v[k]));
    return found != 0;
}

// Value k of a float operand, widened.
inline double float_at(const CheckedOperand& o, int k) {
    if (o.dtype == GPUPY_FLOAT16) {
        gpupy::float16 h;
        std::memcpy(&h, o.data + 2 * static_cast<size_t>(k), 2);
        return static_cast<float>(h);
    }
    if (o.dtype == GPUPY_FLOAT32) {
        float f;
        std::memcpy(&f, o.data + 4 * static_cast<size_t>(k), 4);
        return f;
    }
    double d;
    std::memcpy(&d, o.data + 8 * static_cast<size_t>(k), 8);
    return d;
}

// The flags of one value from its float operands' NaN, infinity and zero.
inline uint32_t classify(bool nan, bool nan_in, bool inf_in, bool zero_in) {
    if (nan) return nan_in ? 0 : GPUPY_FP_NAN;
    if (nan_in || inf_in) return 0;
    return zero_in ? GPUPY_FP_INF_AT_ZERO : GPUPY_FP_INF;
}

// The flags of n values whose operands all have the result's own type
// (the ops' common case): one loop without a branch or a conversion per
// element. Called where any_made found a value made not finite.
template <class T>
uint32_t same_type_flags(int32_t op, const T* r, const CheckedOperand* ops, int nops, int n) {
    const T* a = reinterpret_cast<const T*>(ops[0].data);
    const T* b = nops > 1 ? reinterpret_cast<const T*>(ops[1].data) : a;
    const T big = std::numeric_limits<T>::max();
    const bool any_nan = gpupy_fp_flags_every_nan(op);
    uint32_t made_nan = 0, inf_zero = 0, inf = 0;
    for (int k = 0; k < n; ++k) {
        const T v = r[k], x = a[k], y = b[k];
        const bool nan = v != v, nonfinite = !(v - v == T(0));
        const bool nan_in = (x != x) | (y != y);
        const bool inf_in = (std::fabs(x) > big) | (std::fabs(y) > big);
        const bool zero_in = (x == T(0)) | (y == T(0));
        made_nan |= nan & (!nan_in | any_nan);
        const bool made_inf = nonfinite & !nan & !nan_in & !inf_in;
        inf_zero |= made_inf & zero_in;
        inf |= made_inf & !zero_in;
    }
    return (made_nan ? GPUPY_FP_NAN : 0) | (inf_zero ? GPUPY_FP_INF_AT_ZERO : 0) | (inf ? GPUPY_FP_INF : 0);
}

// Whether any of n values was made not finite (made_bits).
template <class T>
bool any_made(const T* r, const T* a, const T* b, int n) {
    Bits<T> found = 0;
    for (int k = 0; k < n; ++k) found |= made_bits(r[k], a[k], b[k]);
    return found != 0;
}

template <class T>
uint32_t float_flags(int32_t op, const T* r, const CheckedOperand* ops, int nops, int n) {
    if (!any_nonfinite(r, n)) return 0;
    constexpr int32_t own = sizeof(T) == 4 ? GPUPY_FLOAT32 : GPUPY_FLOAT64;
    if (nops <= 2 && ops[0].dtype == own && (nops == 1 || ops[1].dtype == own)) {
        const T* a = reinterpret_cast<const T*>(ops[0].data);
        const T* b = nops > 1 ? reinterpret_cast<const T*>(ops[1].data) : a;
        // Values carried from the operands (NaN-filled data) cost one
        // vectorised pass, no classification.
        if (!gpupy_fp_flags_every_nan(op) && !any_made(r, a, b, n)) return 0;
        return same_type_flags(op, r, ops, nops, n);
    }
    uint32_t flags = 0;
    for (int k = 0; k < n; ++k) {
        const T v = r[k];
        const bool nan = v != v;
        if (!nan && (v - v) == (v - v)) continue;  // finite
        bool nan_in = false, inf_in = false, zero_in = false;
        for (int j = 0; j < nops; ++j) {
            if (!gpupy::dtype_is_float(ops[j].dtype)) continue;
            const double x = float_at(ops[j], k);
            nan_in = nan_in || x != x;
            inf_in = inf_in || (x == x && (x - x) != (x - x));
            zero_in = zero_in || x == 0.0;
        }
        flags |= classify(nan, nan_in && !gpupy_fp_flags_every_nan(op), inf_in, zero_in);
    }
    return flags;
}

template <class T>
bool any_zero(const char* data, int n) {
    const T* v = reinterpret_cast<const T*>(data);
    bool found = false;
    for (int k = 0; k < n; ++k) found |= v[k] == T(0);
    return found;
}

// Any point where a / b is the dtype's minimum over -1.
template <class T>
bool any_min_over_minus_one(const char* a, const char* b, int n) {
    const T* x = reinterpret_cast<const T*>(a);
    const T* y = reinterpret_cast<const T*>(b);
    bool found = false;
    for (int k = 0; k < n; ++k) found |= x[k] == std::numeric_limits<T>::min() && y[k] == T(-1);
    return found;
}

template <class T>
uint32_t integer_flags(int32_t op, const CheckedOperand* ops, int nops, int n) {
    const CheckedOperand& d = ops[nops >= 2 ? 1 : 0];  // the divisor
    uint32_t flags = any_zero<T>(d.data, n) ? GPUPY_FP_ZERO_DIVISOR : 0;
    if constexpr (std::is_signed_v<T>) {
        if (op == GPUPY_OP_FLOOR_DIVIDE && nops == 2 && any_min_over_minus_one<T>(ops[0].data, ops[1].data, n))
            flags |= GPUPY_FP_INT_OVERFLOW;
    }
    return flags;
}

// float16 values, classified as the floats they widen to exactly (NaN,
// infinity and zero kept): the result and every float16 operand widened
// into a buffer of this thread's, then float_flags.
inline uint32_t float16_flags(int32_t op, const char* result, const CheckedOperand* ops, int nops, int n) {
    // Most runs hold no NaN or infinity: all exponent bits set, found on
    // the bits in one pass that vectorises, before any widening.
    const auto* bits = reinterpret_cast<const uint16_t*>(result);
    uint16_t all_ones = 0;
    for (int k = 0; k < n; ++k) all_ones |= static_cast<uint16_t>((bits[k] & 0x7c00u) == 0x7c00u);
    if (!all_ones) return 0;
    thread_local std::vector<float> wide;
    wide.resize(static_cast<size_t>(n) * static_cast<size_t>(1 + nops));
    auto widen = [&](const char* data, int slot) {
        float* w = wide.data() + static_cast<size_t>(slot) * static_cast<size_t>(n);
        const auto* h = reinterpret_cast<const gpupy::float16*>(data);
        for (int k = 0; k < n; ++k) w[k] = h[k];
        return reinterpret_cast<const char*>(w);
    };
    CheckedOperand widened[3];
    for (int j = 0; j < nops && j < 3; ++j) {
        widened[j] = ops[j].dtype == GPUPY_FLOAT16 ? CheckedOperand{widen(ops[j].data, 1 + j), GPUPY_FLOAT32} : ops[j];
    }
    return float_flags(op, reinterpret_cast<const float*>(widen(result, 0)), widened, nops, n);
}

}  // namespace fp_detail

// The gpupy_fp_flag bits of n values of `dtype` at `result`, computed by
// `op` from operands ops[0 .. nops - 1] (n values each, at the same points).
inline uint32_t fp_flags(int32_t op, int32_t dtype, const char* result, const CheckedOperand* ops, int nops, int n) {
    using namespace fp_detail;
    if (nops < 1) return 0;
    switch (dtype) {
    case GPUPY_FLOAT32: return float_flags(op, reinterpret_cast<const float*>(result), ops, nops, n);
    case GPUPY_FLOAT64: return float_flags(op, reinterpret_cast<const double*>(result), ops, nops, n);
    case GPUPY_FLOAT16: return float16_flags(op, result, ops, nops, n);
    case GPUPY_INT8: return integer_flags<int8_t>(op, ops, nops, n);
    case GPUPY_UINT8: return integer_flags<uint8_t>(op, ops, nops, n);
    case GPUPY_INT16: return integer_flags<int16_t>(op, ops, nops, n);
    case GPUPY_UINT16: return integer_flags<uint16_t>(op, ops, nops, n);
    case GPUPY_INT32: return integer_flags<int32_t>(op, ops, nops, n);
    case GPUPY_UINT32: return integer_flags<uint32_t>(op, ops, nops, n);
    case GPUPY_INT64: return integer_flags<int64_t>(op, ops, nops, n);
    case GPUPY_UINT64: return integer_flags<uint64_t>(op, ops, nops, n);
    default: return 0;  // bool
    }
}

}  // namespace gpupy_sw
