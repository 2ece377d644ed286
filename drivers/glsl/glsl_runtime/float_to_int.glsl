// Float to integer conversion as NumPy's astype(casting="unsafe") does it
// on x86-64 (measured with NumPy 2.4): truncation toward zero; a value
// outside int32 (int64) or NaN becomes INT32_MIN (INT64_MIN); narrower
// dtypes take the low bits of the int32 result; unsigned targets of 32/64
// bits convert x >= 2^(N-1) as (x - 2^(N-1)) with the top bit flipped.
// GLSL's own conversion is undefined out of range, so the range tests come
// first.

// @function gpo_cvt_i32_f32
int gpo_cvt_i32_f32(float x) { return (x > -2147483648.0 && x < 2147483648.0) ? int(x) : int(0x80000000u); }
// @function gpo_cvt_u32_f32 requires gpo_cvt_i32_f32
uint gpo_cvt_u32_f32(float x) {
    return x >= 2147483648.0 ? uint(gpo_cvt_i32_f32(x - 2147483648.0)) ^ 0x80000000u
                             : uint(gpo_cvt_i32_f32(x));
}
// @function gpo_cvt_i64_f32
// Assembled from 32-bit halves: NVIDIA's int64_t(float) saturates at
// int32's range (an H200: 2^40 gave 2^31 - 1). Beyond 2^31 the value is an
// integer of at most 24 significant bits, so its high word (a floor of a
// product by 2^-32) and the low word left (below 2^32, a multiple of
// 2^8) are exact floats.
int64_t gpo_cvt_i64_f32(float x) {
    if (!(x >= -9223372036854775808.0 && x < 9223372036854775808.0)) return int64_t(0x8000000000000000ul);
    if (abs(x) < 2147483648.0) {
        int i = int(x);
        return packInt2x32(ivec2(i, i >> 31));
    }
    precise float high = floor(x * 2.3283064365386963e-10);  // x / 2^32
    precise float low = x - high * 4294967296.0;
    return packInt2x32(ivec2(int(uint(low)), int(high)));
}
// @function gpo_cvt_u64_f32 requires gpo_cvt_i64_f32
uint64_t gpo_cvt_u64_f32(float x) {
    return x >= 9223372036854775808.0 ? uint64_t(gpo_cvt_i64_f32(x - 9223372036854775808.0)) ^ 0x8000000000000000ul
                                      : uint64_t(gpo_cvt_i64_f32(x));
}
// @function gpo_cvt_i32_f64
int gpo_cvt_i32_f64(double x) { return (x > -2147483649.0lf && x < 2147483648.0lf) ? int(x) : int(0x80000000u); }
// @function gpo_cvt_u32_f64 requires gpo_cvt_i32_f64
uint gpo_cvt_u32_f64(double x) {
    return x >= 2147483648.0lf ? uint(gpo_cvt_i32_f64(x - 2147483648.0lf)) ^ 0x80000000u
                               : uint(gpo_cvt_i32_f64(x));
}
// @function gpo_cvt_i64_f64
int64_t gpo_cvt_i64_f64(double x) {
    return (x >= -9223372036854775808.0lf && x < 9223372036854775808.0lf) ? int64_t(x)
                                                                       : int64_t(0x8000000000000000ul);
}
// @function gpo_cvt_u64_f64 requires gpo_cvt_i64_f64
uint64_t gpo_cvt_u64_f64(double x) {
    return x >= 9223372036854775808.0lf ? uint64_t(gpo_cvt_i64_f64(x - 9223372036854775808.0lf)) ^ 0x8000000000000000ul
                                        : uint64_t(gpo_cvt_i64_f64(x));
}
