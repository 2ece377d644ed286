// IEEE-754 classification and sign handling on the bits, not on builtins:
// GLSL leaves isnan/isinf and abs/min/max on NaN and -0.0 loosely defined
// and optimisers may fold them away, while NumPy's answers are exact.

// @function gpo_isnan_f32
bool gpo_isnan_f32(float x) { return (floatBitsToUint(x) & 0x7fffffffu) > 0x7f800000u; }
// @function gpo_isinf_f32
bool gpo_isinf_f32(float x) { return (floatBitsToUint(x) & 0x7fffffffu) == 0x7f800000u; }
// @function gpo_isfinite_f32
bool gpo_isfinite_f32(float x) { return (floatBitsToUint(x) & 0x7fffffffu) < 0x7f800000u; }
// @function gpo_signbit_f32
bool gpo_signbit_f32(float x) { return (floatBitsToUint(x) >> 31) != 0u; }
// @function gpo_abs_f32
float gpo_abs_f32(float x) { return uintBitsToFloat(floatBitsToUint(x) & 0x7fffffffu); }
// @function gpo_copysign_f32
float gpo_copysign_f32(float x, float y) {
    return uintBitsToFloat((floatBitsToUint(x) & 0x7fffffffu) | (floatBitsToUint(y) & 0x80000000u));
}
// @function gpo_inf_f32
float gpo_inf_f32() { return uintBitsToFloat(0x7f800000u); }
// @function gpo_nan_f32
float gpo_nan_f32() { return uintBitsToFloat(0x7fc00000u); }

// @function gpo_isnan_f64
bool gpo_isnan_f64(double x) {
    uvec2 u = unpackDouble2x32(x);
    uint hi = u.y & 0x7fffffffu;
    return hi > 0x7ff00000u || (hi == 0x7ff00000u && u.x != 0u);
}
// @function gpo_isinf_f64
bool gpo_isinf_f64(double x) {
    uvec2 u = unpackDouble2x32(x);
    return (u.y & 0x7fffffffu) == 0x7ff00000u && u.x == 0u;
}
// @function gpo_isfinite_f64
bool gpo_isfinite_f64(double x) { return (unpackDouble2x32(x).y & 0x7fffffffu) < 0x7ff00000u; }
// @function gpo_signbit_f64
bool gpo_signbit_f64(double x) { return (unpackDouble2x32(x).y >> 31) != 0u; }
// @function gpo_abs_f64
double gpo_abs_f64(double x) {
    uvec2 u = unpackDouble2x32(x);
    return packDouble2x32(uvec2(u.x, u.y & 0x7fffffffu));
}
// @function gpo_copysign_f64
double gpo_copysign_f64(double x, double y) {
    uvec2 u = unpackDouble2x32(x);
    return packDouble2x32(uvec2(u.x, (u.y & 0x7fffffffu) | (unpackDouble2x32(y).y & 0x80000000u)));
}

// A quotient `q` of a / b, or NumPy's IEEE value where b is zero (+-inf
// with the sign of a times b's, NaN for 0/0 and NaN/0). GLSL leaves a
// division by zero undefined, and a compiler that proves a divisor zero
// (the comparison of a value with itself, folded to false, then cast) may
// fold the quotient to anything: it gave 0 on llvmpipe.
// @function gpo_quotient_f32
float gpo_quotient_f32(float a, float b, float q) {
    uint ua = floatBitsToUint(a);
    uint inf = ((ua ^ floatBitsToUint(b)) & 0x80000000u) | 0x7f800000u;
    bool undefined = (ua & 0x7fffffffu) == 0u || (ua & 0x7fffffffu) > 0x7f800000u;
    return (floatBitsToUint(b) & 0x7fffffffu) != 0u ? q : uintBitsToFloat(undefined ? 0x7fc00000u : inf);
}
// @function gpo_quotient_f64
double gpo_quotient_f64(double a, double b, double q) {
    uvec2 ua = unpackDouble2x32(a), ub = unpackDouble2x32(b);
    uint hi = ua.y & 0x7fffffffu;
    bool undefined = (hi | ua.x) == 0u || hi > 0x7ff00000u || (hi == 0x7ff00000u && ua.x != 0u);
    uint inf = ((ua.y ^ ub.y) & 0x80000000u) | 0x7ff00000u;
    bool zero = ((ub.y & 0x7fffffffu) | ub.x) == 0u;
    return !zero ? q : packDouble2x32(uvec2(0u, undefined ? 0x7ff80000u : inf));
}
// sqrt(x) as IEEE defines it for every x: GLSL leaves sqrt of a negative
// number undefined (NumPy's is NaN).
// @function gpo_sqrt_guard_f32
float gpo_sqrt_guard_f32(float x, float root) { return x < 0.0 ? uintBitsToFloat(0x7fc00000u) : root; }
// @function gpo_sqrt_guard_f64
double gpo_sqrt_guard_f64(double x, double root) { return x < 0.0lf ? packDouble2x32(uvec2(0u, 0x7ff80000u)) : root; }
