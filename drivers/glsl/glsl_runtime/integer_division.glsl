// NumPy's integer floor_divide, remainder, fmod and power.
//
// GLSL leaves / and % undefined for negative operands and for division by
// zero, so the signed versions divide magnitudes as unsigned numbers and
// fix the sign themselves. NumPy's rules: floor division rounds toward
// -infinity, remainder takes the divisor's sign, fmod the dividend's;
// x // 0 == x % 0 == fmod(x, 0) == 0; MIN // -1 wraps to MIN. Narrow
// dtypes (int8, int16) use the 32-bit versions; the caller wraps the result.

// @function gpo_floor_divide_i32
int gpo_floor_divide_i32(int a, int b) {
    if (b == 0) return 0;
    uint ua = a < 0 ? 0u - uint(a) : uint(a);
    uint ub = b < 0 ? 0u - uint(b) : uint(b);
    uint q = ua / ub;
    if ((a < 0) != (b < 0)) {
        if (ua - q * ub != 0u) q += 1u;
        return int(0u - q);
    }
    return int(q);
}
// @function gpo_remainder_i32
int gpo_remainder_i32(int a, int b) {
    if (b == 0) return 0;
    uint ua = a < 0 ? 0u - uint(a) : uint(a);
    uint ub = b < 0 ? 0u - uint(b) : uint(b);
    uint r = ua % ub;
    if (r != 0u && (a < 0) != (b < 0)) r = ub - r;
    return b < 0 ? int(0u - r) : int(r);
}
// @function gpo_fmod_i32
int gpo_fmod_i32(int a, int b) {
    if (b == 0) return 0;
    uint ua = a < 0 ? 0u - uint(a) : uint(a);
    uint ub = b < 0 ? 0u - uint(b) : uint(b);
    uint r = ua % ub;
    return a < 0 ? int(0u - r) : int(r);
}
// @function gpo_power_u32
uint gpo_power_u32(uint a, uint b) {
    uint r = 1u;
    while (b != 0u) {
        if ((b & 1u) != 0u) r *= a;
        a *= a;
        b >>= 1;
    }
    return r;
}

// @function gpo_floor_divide_i64
int64_t gpo_floor_divide_i64(int64_t a, int64_t b) {
    if (b == 0l) return 0l;
    uint64_t ua = a < 0l ? 0ul - uint64_t(a) : uint64_t(a);
    uint64_t ub = b < 0l ? 0ul - uint64_t(b) : uint64_t(b);
    uint64_t q = ua / ub;
    if ((a < 0l) != (b < 0l)) {
        if (ua - q * ub != 0ul) q += 1ul;
        return int64_t(0ul - q);
    }
    return int64_t(q);
}
// @function gpo_remainder_i64
int64_t gpo_remainder_i64(int64_t a, int64_t b) {
    if (b == 0l) return 0l;
    uint64_t ua = a < 0l ? 0ul - uint64_t(a) : uint64_t(a);
    uint64_t ub = b < 0l ? 0ul - uint64_t(b) : uint64_t(b);
    uint64_t r = ua % ub;
    if (r != 0ul && (a < 0l) != (b < 0l)) r = ub - r;
    return b < 0l ? int64_t(0ul - r) : int64_t(r);
}
// @function gpo_fmod_i64
int64_t gpo_fmod_i64(int64_t a, int64_t b) {
    if (b == 0l) return 0l;
    uint64_t ua = a < 0l ? 0ul - uint64_t(a) : uint64_t(a);
    uint64_t ub = b < 0l ? 0ul - uint64_t(b) : uint64_t(b);
    uint64_t r = ua % ub;
    return a < 0l ? int64_t(0ul - r) : int64_t(r);
}
// @function gpo_power_u64
uint64_t gpo_power_u64(uint64_t a, uint64_t b) {
    uint64_t r = 1ul;
    while (b != 0ul) {
        if ((b & 1ul) != 0ul) r *= a;
        a *= a;
        b >>= 1;
    }
    return r;
}

// @function gpo_udiv31
// floor(n / d) for 0 <= n < 2^31, from the pair (m, l) the host computes for
// d (Granlund & Montgomery: l = ceil(log2 d), m = floor(2^(31+l) / d) + 1):
// (n * m) >> (31 + l) with the 64-bit product of umulExtended. Unlike
// integer division by a uniform, which llvmpipe runs one lane at a time
// (x86 has no SIMD divide; measured ~100 cycles per element for two index
// leaves), this vectorises.
uint gpo_udiv31(uint n, uint m, uint l) {
    uint hi, lo;
    umulExtended(n, m, hi, lo);
    return l == 0u ? ((hi << 1u) | (lo >> 31u)) : (hi >> (l - 1u));
}
