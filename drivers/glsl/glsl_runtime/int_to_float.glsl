// 64-bit integer to float conversion, correctly rounded as C's (and so
// NumPy's) casts are. llvmpipe's own int64/uint64 -> double conversion was
// measured off by one ulp for values below 2^53, so the value is split into
// 32-bit halves, each converted exactly, and added once (one rounding).
// For float32, the value is first rounded to odd at 53 bits (the low bits
// that do not fit set a sticky bit), which makes the final rounding to 24
// bits correct despite the two steps.

// @function gpo_cvt_f64_u64
double gpo_cvt_f64_u64(uint64_t x) {
    return double(uint(x >> 32)) * 4294967296.0lf + double(uint(x & 0xfffffffful));
}
// @function gpo_cvt_f64_i64
double gpo_cvt_f64_i64(int64_t x) {
    return double(int(x >> 32)) * 4294967296.0lf + double(uint(uint64_t(x) & 0xfffffffful));
}
// @function gpo_round_odd_53 requires gpo_cvt_f64_u64
double gpo_round_odd_53(uint64_t m) {
    // m >= 2^53 keeps its top 53 bits, the rest ORed into the lowest kept.
    int k = 0;
    for (uint64_t t = m >> 53; t != 0ul; t >>= 1) ++k;
    uint64_t kept = m >> uint(k);
    if ((m & ((1ul << uint(k)) - 1ul)) != 0ul) kept |= 1ul;
    return gpo_cvt_f64_u64(kept) * double(1ul << uint(k));
}
// @function gpo_cvt_f32_u64 requires gpo_round_odd_53
float gpo_cvt_f32_u64(uint64_t x) { return float(gpo_round_odd_53(x)); }
// @function gpo_cvt_f32_i64 requires gpo_round_odd_53
float gpo_cvt_f32_i64(int64_t x) {
    // |x| as uint64_t (wraps correctly for INT64_MIN), then the sign.
    uint64_t m = x < 0l ? uint64_t(-x) : uint64_t(x);
    float r = float(gpo_round_odd_53(m));
    return x < 0l ? -r : r;
}
