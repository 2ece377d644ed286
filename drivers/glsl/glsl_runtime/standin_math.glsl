// Stand-ins for float32 functions that drivers/glsl/glsl_math/ does not
// (yet) provide as gp_<numpy_name>. The snippet table prefers gp_<name>;
// these gpo_<name> run only where it is missing. Functions whose builtins
// are far off NumPy (sin/cos/tan for large arguments, asin/acos/atan) have
// no stand-in: without glsl_math those ops are not declared. The rest are
// built on GLSL builtins, fixing NumPy's special values (inf, NaN, -0.0, negative bases)
// and the worst cancellations (near 0 and 1) with short series; their
// accuracy is measured by tests/drivers/test_codegen_conformance.py.
// GLSL's exp/log/pow builtins are themselves only accurate to a few 1e-6
// relative on llvmpipe.

// @function gpo_log1p_series
// log(1 + x) for |x| <= 0.5 as 2 atanh(s), s = x / (2 + x); |s| <= 1/3.
float gpo_log1p_series(float x) {
    precise float s = x / (2.0 + x);
    precise float s2 = s * s;
    precise float p = 1.0 / 19.0;
    p = p * s2 + 1.0 / 17.0;
    p = p * s2 + 1.0 / 15.0;
    p = p * s2 + 1.0 / 13.0;
    p = p * s2 + 1.0 / 11.0;
    p = p * s2 + 1.0 / 9.0;
    p = p * s2 + 1.0 / 7.0;
    p = p * s2 + 1.0 / 5.0;
    p = p * s2 + 1.0 / 3.0;
    precise float r = 2.0 * s + 2.0 * s * s2 * p;
    return r;
}
// @function gpo_expm1_series
// exp(x) - 1 for |x| <= 0.5 by Taylor series to x^10 (truncation < 1e-10).
float gpo_expm1_series(float x) {
    precise float p = 1.0 / 39916800.0;
    p = p * x + 1.0 / 3628800.0;
    p = p * x + 1.0 / 362880.0;
    p = p * x + 1.0 / 40320.0;
    p = p * x + 1.0 / 5040.0;
    p = p * x + 1.0 / 720.0;
    p = p * x + 1.0 / 120.0;
    p = p * x + 1.0 / 24.0;
    p = p * x + 1.0 / 6.0;
    p = p * x + 0.5;
    precise float r = x + x * x * p;
    return r;
}

// @function gpo_exp requires gpo_isnan_f32
float gpo_exp(float x) {
    if (gpo_isnan_f32(x)) return x;
    if (x > 88.72284) return uintBitsToFloat(0x7f800000u);
    if (x < -103.97208) return 0.0;
    // The builtin (and ldexp) flush denormal results; a multiplication by
    // 2^-25 keeps them.
    if (x < -87.0) return exp(x + 17.328679513998633) * 2.9802322387695312e-08;
    return exp(x);
}
// @function gpo_exp2 requires gpo_isnan_f32
float gpo_exp2(float x) {
    if (gpo_isnan_f32(x)) return x;
    if (x >= 128.0) return uintBitsToFloat(0x7f800000u);
    if (x < -150.0) return 0.0;
    if (x < -126.0) return exp2(x + 24.0) * 5.9604644775390625e-08;  // denormal results, * 2^-24
    return exp2(x);
}
// @function gpo_expm1 requires gpo_expm1_series gpo_exp
float gpo_expm1(float x) {
    if (abs(x) <= 0.5) return gpo_expm1_series(x);
    if (x < -20.0) return -1.0;
    precise float r = gpo_exp(x) - 1.0;
    return r;
}
// @function gpo_log requires gpo_isnan_f32 gpo_log1p_series
float gpo_log(float x) {
    if (gpo_isnan_f32(x) || x < 0.0) return uintBitsToFloat(0x7fc00000u);
    if (x == 0.0) return uintBitsToFloat(0xff800000u);
    if (x == uintBitsToFloat(0x7f800000u)) return x;
    if (x >= 0.5 && x <= 1.5) return gpo_log1p_series(x - 1.0);  // x - 1 is exact here
    // The builtin flushes denormals: scale them into the normal range.
    if (x < 1.17549435e-38) return log(x * 16777216.0) - 16.635532;
    return log(x);
}
// @function gpo_log2 requires gpo_log
float gpo_log2(float x) {
    if (x > 0.0 && x < uintBitsToFloat(0x7f800000u) && (x < 0.5 || x > 1.5)) {
        if (x < 1.17549435e-38) return log2(x * 16777216.0) - 24.0;
        return log2(x);
    }
    precise float r = gpo_log(x) * 1.44269504088896;
    return r;
}
// @function gpo_log10 requires gpo_log
float gpo_log10(float x) {
    precise float r = gpo_log(x) * 0.434294481903252;
    return r;
}
// @function gpo_log1p requires gpo_isnan_f32 gpo_log1p_series gpo_log
float gpo_log1p(float x) {
    if (gpo_isnan_f32(x)) return x;
    if (abs(x) <= 0.5) return gpo_log1p_series(x);
    precise float u = 1.0 + x;
    return gpo_log(u);
}
// @function gpo_logaddexp requires gpo_isnan_f32 gpo_log1p gpo_exp
float gpo_logaddexp(float x, float y) {
    if (x == y) {
        precise float r = x + 0.693147180559945;
        return r;
    }
    precise float d = x - y;
    if (gpo_isnan_f32(d)) return x + y;
    precise float r = d > 0.0 ? x + gpo_log1p(gpo_exp(-d)) : y + gpo_log1p(gpo_exp(d));
    return r;
}
// @function gpo_logaddexp2 requires gpo_isnan_f32 gpo_log1p gpo_exp2
float gpo_logaddexp2(float x, float y) {
    if (x == y) {
        precise float r = x + 1.0;
        return r;
    }
    precise float d = x - y;
    if (gpo_isnan_f32(d)) return x + y;
    precise float r = d > 0.0 ? x + 1.44269504088896 * gpo_log1p(gpo_exp2(-d))
                              : y + 1.44269504088896 * gpo_log1p(gpo_exp2(d));
    return r;
}

// @function gpo_power requires gpo_isnan_f32 gpo_isinf_f32
// C99 pow: pow(x, +-0) = 1 and pow(1, y) = 1 even for NaN; a negative base
// with an integral exponent takes the exponent's parity; a negative base
// with a non-integral exponent is NaN.
float gpo_power(float x, float y) {
    if (y == 0.0 || x == 1.0) return 1.0;
    if (gpo_isnan_f32(x) || gpo_isnan_f32(y)) return uintBitsToFloat(0x7fc00000u);
    float inf = uintBitsToFloat(0x7f800000u);
    float ax = abs(x), ay = abs(y);
    if (gpo_isinf_f32(y)) {
        if (ax == 1.0) return 1.0;
        return ((ax > 1.0) == (y > 0.0)) ? inf : 0.0;
    }
    bool y_integral = trunc(y) == y;
    bool y_odd = y_integral && ay < 16777216.0 && (ay - 2.0 * floor(ay * 0.5)) == 1.0;
    if (x == 0.0) {
        float r = y < 0.0 ? inf : 0.0;
        return y_odd ? uintBitsToFloat(floatBitsToUint(r) | (floatBitsToUint(x) & 0x80000000u)) : r;
    }
    float r;
    if (gpo_isinf_f32(x)) {
        r = y < 0.0 ? 0.0 : inf;
    } else if (x < 0.0 && !y_integral) {
        return uintBitsToFloat(0x7fc00000u);
    } else {
        // exp2(y * log2(ax)), guarding the builtin's over/underflow and
        // denormal bases (llvmpipe's log2 flushes them).
        precise float l = ax < 1.17549435e-38 ? log2(ax * 16777216.0) - 24.0 : log2(ax);
        precise float e = y * l;
        r = e >= 128.0 ? inf : (e < -150.0 ? 0.0 : (e < -126.0 ? exp2(e + 24.0) * 5.9604644775390625e-08 : exp2(e)));
    }
    return (x < 0.0 && y_odd) ? -r : r;
}
// @function gpo_cbrt requires gpo_isnan_f32
float gpo_cbrt(float x) {
    if (x == 0.0 || gpo_isnan_f32(x) || abs(x) == uintBitsToFloat(0x7f800000u)) return x;
    float ax = abs(x);
    bool tiny = ax < 1e-30;
    if (tiny) ax *= 6.338253001141147e29;  // 2^99: keeps log2 away from denormals
    precise float r = exp2(log2(ax) * (1.0 / 3.0));
    r = r - (r - ax / (r * r)) * (1.0 / 3.0);  // one Newton step
    if (tiny) r *= 1.1641532182693481e-10;  // 2^-33 = cbrt(2^-99)
    return x < 0.0 ? -r : r;
}

// @function gpo_hypot requires gpo_isnan_f32 gpo_isinf_f32
float gpo_hypot(float x, float y) {
    if (gpo_isinf_f32(x) || gpo_isinf_f32(y)) return uintBitsToFloat(0x7f800000u);
    if (gpo_isnan_f32(x) || gpo_isnan_f32(y)) return uintBitsToFloat(0x7fc00000u);
    float ax = abs(x), ay = abs(y);
    float m = max(ax, ay), n = min(ax, ay);
    if (m == 0.0) return 0.0;
    precise float r = n / m;
    precise float h = m * sqrt(1.0 + r * r);
    return h;
}
// @function gpo_sinh requires gpo_isnan_f32 gpo_expm1_series gpo_exp
float gpo_sinh(float x) {
    if (gpo_isnan_f32(x)) return x;
    float ax = abs(x);
    precise float r;
    if (ax <= 0.5) {
        // (e^x - e^-x) / 2 from expm1: e = expm1(x); (e + e / (e + 1)) / 2
        precise float e = gpo_expm1_series(ax);
        r = 0.5 * (e + e / (e + 1.0));
    } else {
        // exp(ax - ln2) = exp(ax) / 2 without overflowing where sinh does not.
        precise float e = gpo_exp(ax - 0.693147180559945);
        r = e - 0.25 / e;
    }
    return x < 0.0 ? -r : r;
}
// @function gpo_cosh requires gpo_isnan_f32 gpo_exp
float gpo_cosh(float x) {
    if (gpo_isnan_f32(x)) return x;
    precise float e = gpo_exp(abs(x) - 0.693147180559945);
    precise float r = e + 0.25 / e;
    return r;
}
// @function gpo_tanh requires gpo_isnan_f32 gpo_expm1
float gpo_tanh(float x) {
    if (gpo_isnan_f32(x)) return x;
    float ax = abs(x);
    if (ax > 9.1) return x < 0.0 ? -1.0 : 1.0;
    precise float e = gpo_expm1(2.0 * ax);
    precise float r = e / (e + 2.0);
    return x < 0.0 ? -r : (x == 0.0 ? x : r);
}
// @function gpo_arcsinh requires gpo_isnan_f32 gpo_log1p gpo_log
float gpo_arcsinh(float x) {
    if (gpo_isnan_f32(x) || abs(x) == uintBitsToFloat(0x7f800000u) || x == 0.0) return x;
    float ax = abs(x);
    precise float r;
    if (ax > 1e18) {
        r = gpo_log(ax) + 0.693147180559945;
    } else {
        precise float t = ax * ax;
        r = gpo_log1p(ax + t / (1.0 + sqrt(1.0 + t)));
    }
    return x < 0.0 ? -r : r;
}
// @function gpo_arccosh requires gpo_isnan_f32 gpo_log1p gpo_log
float gpo_arccosh(float x) {
    if (gpo_isnan_f32(x) || x < 1.0) return uintBitsToFloat(0x7fc00000u);
    if (x == uintBitsToFloat(0x7f800000u)) return x;
    precise float r;
    if (x > 1e18) {
        r = gpo_log(x) + 0.693147180559945;
    } else {
        precise float t = x - 1.0;
        r = gpo_log1p(t + sqrt(2.0 * t + t * t));
    }
    return r;
}
// @function gpo_arctanh requires gpo_isnan_f32 gpo_log1p
float gpo_arctanh(float x) {
    if (gpo_isnan_f32(x) || abs(x) > 1.0) return uintBitsToFloat(0x7fc00000u);
    if (abs(x) == 1.0) return uintBitsToFloat(floatBitsToUint(uintBitsToFloat(0x7f800000u)) | (floatBitsToUint(x) & 0x80000000u));
    if (x == 0.0) return x;
    float ax = abs(x);
    precise float r = 0.5 * gpo_log1p(2.0 * ax / (1.0 - ax));
    return x < 0.0 ? -r : r;
}
