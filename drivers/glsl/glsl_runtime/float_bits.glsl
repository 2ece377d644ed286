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
