// IEEE binary16 ("half", NumPy's float16) as the core and the drivers that
// compute on the CPU hold it: 16 bits in memory, converted exactly to
// float32 to compute and rounded back to nearest-even, as NumPy's float16
// loops compute (each operation in float32, its result rounded to float16).
//
// The conversions are written out in integer arithmetic rather than with
// F16C instructions so that they give the same bits on every x86-64 CPU
// (the baseline has none) and match NumPy's own software conversion,
// NaN payloads included: a float NaN keeps the top ten bits of its
// payload, and one whose kept bits are all zero becomes 0x7c01 (still a
// NaN, never an infinity).
#ifndef GPUPY_FLOAT16_HPP
#define GPUPY_FLOAT16_HPP

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

namespace gpupy {

// The float16 bits nearest (ties to even) to the float whose bits are f.
constexpr uint16_t float16_bits_from_float_bits(uint32_t f) {
    const uint16_t sign = static_cast<uint16_t>((f >> 16) & 0x8000u);
    const uint32_t mag = f & 0x7fffffffu;
    if (mag >= 0x7f800000u) {  // infinity or NaN
        if (mag == 0x7f800000u) return sign | 0x7c00u;
        const uint16_t kept = static_cast<uint16_t>(0x7c00u + ((mag & 0x007fffffu) >> 13));
        return sign | (kept == 0x7c00u ? uint16_t{0x7c01u} : kept);
    }
    if (mag >= 0x477ff000u) return sign | 0x7c00u;  // 65520 and above round to infinity
    const uint32_t exponent = mag >> 23;
    if (exponent < 113) {
        // Below float16's smallest normal (2^-14): a multiple of 2^-24.
        // value = m * 2^(exponent - 150), in units of 2^-24: m >> shift.
        const uint32_t shift = 126 - exponent;
        if (shift > 24) return sign;  // below half the smallest subnormal (2^-25 ties to 0)
        const uint32_t m = (mag & 0x007fffffu) | (exponent ? 0x00800000u : 0u);
        uint32_t q = m >> shift;
        const uint32_t rest = m & ((1u << shift) - 1), halfway = 1u << (shift - 1);
        if (rest > halfway || (rest == halfway && (q & 1u))) ++q;
        return sign | static_cast<uint16_t>(q);  // (q == 0x400 is the smallest normal: right)
    }
    uint32_t q = ((exponent - 112) << 10) | ((mag & 0x007fffffu) >> 13);
    const uint32_t rest = mag & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (q & 1u))) ++q;  // may carry into the exponent: right
    return sign | static_cast<uint16_t>(q);
}

// The float16 bits nearest (ties to even) to the double whose bits are d,
// rounded once (through float32 would round twice).
constexpr uint16_t float16_bits_from_double_bits(uint64_t d) {
    const uint16_t sign = static_cast<uint16_t>((d >> 48) & 0x8000u);
    const uint64_t mag = d & 0x7fffffffffffffffull;
    if (mag >= 0x7ff0000000000000ull) {
        if (mag == 0x7ff0000000000000ull) return sign | 0x7c00u;
        const uint16_t kept = static_cast<uint16_t>(0x7c00u + ((mag & 0x000fffffffffffffull) >> 42));
        return sign | (kept == 0x7c00u ? uint16_t{0x7c01u} : kept);
    }
    if (mag >= 0x40effe0000000000ull) return sign | 0x7c00u;  // 65520 and above
    const uint64_t exponent = mag >> 52;
    if (exponent < 1009) {  // below 2^-14
        const uint64_t shift = 1051 - exponent;  // value in units of 2^-24: m >> shift
        if (shift > 53) return sign;
        const uint64_t m = (mag & 0x000fffffffffffffull) | (exponent ? 0x0010000000000000ull : 0u);
        uint64_t q = m >> shift;
        const uint64_t rest = m & ((uint64_t{1} << shift) - 1), halfway = uint64_t{1} << (shift - 1);
        if (rest > halfway || (rest == halfway && (q & 1u))) ++q;
        return sign | static_cast<uint16_t>(q);
    }
    uint64_t q = ((exponent - 1008) << 10) | ((mag & 0x000fffffffffffffull) >> 42);
    const uint64_t rest = mag & 0x3ffffffffffull, halfway = 0x20000000000ull;
    if (rest > halfway || (rest == halfway && (q & 1u))) ++q;
    return sign | static_cast<uint16_t>(q);
}

// The float bits of float16 bits h: exact (NaN payloads kept).
constexpr uint32_t float_bits_from_float16_bits(uint16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    const uint32_t exponent = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (exponent == 0x1f) return sign | 0x7f800000u | (m << 13);
    if (exponent != 0) return sign | ((exponent + 112) << 23) | (m << 13);
    if (m == 0) return sign;
    // A subnormal: normalise m * 2^-24.
    uint32_t e = 113;
    uint32_t mm = m;
    while (!(mm & 0x400u)) {
        mm <<= 1;
        --e;
    }
    return sign | (e << 23) | ((mm & 0x3ffu) << 13);
}

// The bits of a float or a double, and the float of bits.
inline uint32_t bits_of(float x) {
    uint32_t b;
    std::memcpy(&b, &x, sizeof b);
    return b;
}
inline uint64_t bits_of(double x) {
    uint64_t b;
    std::memcpy(&b, &x, sizeof b);
    return b;
}
inline float float_from_bits(uint32_t b) {
    float x;
    std::memcpy(&x, &b, sizeof x);
    return x;
}

// One float16 element. Converts to float exactly and from float or double
// by rounding to nearest-even, so generic code that computes in float and
// stores the result computes as NumPy's float16 loops do.
struct float16 {
    uint16_t bits;

    float16() = default;
    float16(float x) : bits(float16_bits_from_float_bits(bits_of(x))) {}  // NOLINT: implicit, like a float
    float16(double x) : bits(float16_bits_from_double_bits(bits_of(x))) {}  // NOLINT
    // (Through double: exact below 2^53, and every integer from 65520 on
    // is an infinity in float16 whichever way it is rounded.)
    template <class I, std::enable_if_t<std::is_integral_v<I>, int> = 0>
    float16(I v) : float16(static_cast<double>(v)) {}  // NOLINT
    static float16 from_bits(uint16_t b) {
        float16 h;
        h.bits = b;
        return h;
    }
    operator float() const { return float_from_bits(float_bits_from_float16_bits(bits)); }  // NOLINT
};
static_assert(sizeof(float16) == 2 && std::is_trivially_copyable_v<float16>, "float16 is its 16 bits");

// Floating point of any width gpupy holds: float16, float32, float64.
template <class T>
constexpr bool is_float_v = std::is_floating_point_v<T> || std::is_same_v<T, float16>;

}  // namespace gpupy

template <>
struct std::numeric_limits<gpupy::float16> {
    using T = gpupy::float16;
    static constexpr bool is_specialized = true;
    static constexpr bool is_signed = true;
    static constexpr bool is_integer = false;
    static constexpr bool is_exact = false;
    static constexpr bool has_infinity = true;
    static constexpr bool has_quiet_NaN = true;
    static constexpr bool is_iec559 = true;
    static constexpr int digits = 11;
    static constexpr int max_exponent = 16;
    static constexpr int min_exponent = -13;
    static T min() { return T::from_bits(0x0400); }         // 2^-14
    static T max() { return T::from_bits(0x7bff); }         // 65504
    static T lowest() { return T::from_bits(0xfbff); }      // -65504
    static T epsilon() { return T::from_bits(0x1400); }     // 2^-10
    static T denorm_min() { return T::from_bits(0x0001); }  // 2^-24
    static T infinity() { return T::from_bits(0x7c00); }
    static T quiet_NaN() { return T::from_bits(0x7e00); }
};

#endif  // GPUPY_FLOAT16_HPP
