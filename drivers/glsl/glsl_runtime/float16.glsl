// float16 in shaders: each value held in a float register (a float16 value
// exactly) and stored as its 16 bits in an r16ui texel. Rounding is done on
// the float's bits in integer arithmetic, ties to even, with NumPy's NaN
// payloads: GLSL leaves packHalf2x16's rounding to the implementation and
// may flush float16 subnormals it unpacks.

// @function gpo_f16_bits
uint gpo_f16_bits(float x) {
    uint f = floatBitsToUint(x);
    uint sign = (f >> 16) & 0x8000u;
    uint mag = f & 0x7fffffffu;
    if (mag >= 0x7f800000u) {  // infinity, or a NaN keeping its top payload bits
        if (mag == 0x7f800000u) return sign | 0x7c00u;
        uint kept = 0x7c00u + ((mag & 0x007fffffu) >> 13);
        return sign | (kept == 0x7c00u ? 0x7c01u : kept);
    }
    if (mag >= 0x477ff000u) return sign | 0x7c00u;  // 65520 and above
    uint e = mag >> 23;
    if (e < 113u) {  // below 2^-14: a multiple of 2^-24
        uint shift = 126u - e;
        if (shift > 24u) return sign;
        uint m = (mag & 0x007fffffu) | (e != 0u ? 0x00800000u : 0u);
        uint q = m >> shift;
        uint rest = m & ((1u << shift) - 1u);
        uint halfway = 1u << (shift - 1u);
        if (rest > halfway || (rest == halfway && (q & 1u) != 0u)) q += 1u;
        return sign | q;
    }
    uint q = ((e - 112u) << 10) | ((mag & 0x007fffffu) >> 13);
    uint rest = mag & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (q & 1u) != 0u)) q += 1u;  // may carry into the exponent
    return sign | q;
}
// @function gpo_f16_value
float gpo_f16_value(uint h) {
    uint sign = (h & 0x8000u) << 16;
    uint e = (h >> 10) & 0x1fu;
    uint m = h & 0x3ffu;
    if (e == 0x1fu) return uintBitsToFloat(sign | 0x7f800000u | (m << 13));
    if (e != 0u) return uintBitsToFloat(sign | ((e + 112u) << 23) | (m << 13));
    // Zero or a subnormal, m * 2^-24: a normal float32, exact.
    precise float v = float(m) * uintBitsToFloat(0x33800000u);
    return uintBitsToFloat(floatBitsToUint(v) | sign);
}
// @function gpo_round_f16 requires gpo_f16_bits gpo_f16_value
float gpo_round_f16(float x) { return gpo_f16_value(gpo_f16_bits(x)); }
// @function gpo_f16_from_f64 requires gpo_f16_bits gpo_f16_value gpo_round_f16
// A double rounded to float16 once: first to float rounded to odd (toward
// zero, the lowest bit set where bits were lost), which keeps the second
// rounding correct (24 bits >= 11 + 2). Either neighbour GLSL's float()
// gives serves: one away from zero is stepped back.
// A NaN keeps the top ten bits of its payload, as NumPy's conversion does.
float gpo_f16_from_f64(double x) {
    uvec2 w = unpackDouble2x32(x);  // (low word, high word)
    if ((w.y & 0x7ff00000u) == 0x7ff00000u && ((w.y & 0xfffffu) | w.x) != 0u) {
        uint kept = 0x7c00u + ((w.y & 0xfffffu) >> 10);
        return gpo_f16_value(((w.y >> 16) & 0x8000u) | (kept == 0x7c00u ? 0x7c01u : kept));
    }
    float f = float(x);
    if ((floatBitsToUint(f) & 0x7fffffffu) != 0x7f800000u && double(f) != x) {
        uint b = floatBitsToUint(f);
        if (abs(double(f)) > abs(x)) b -= 1u;
        f = uintBitsToFloat(b | 1u);
    }
    return gpo_round_f16(f);
}
