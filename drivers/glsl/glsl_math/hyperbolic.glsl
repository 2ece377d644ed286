// gpupy GLSL float32 math library: hyperbolic functions and their inverses.
// Coefficients: tools/glsl_math/fit_coefficients.py.

// @function gp__exp_pair requires gp__exp_reduce gp__expm1_kernel gp__fast_two_sum gp__two_prod gp__fdiv
// For 0 <= x < 100: e^x = 2^k (E.x + E.y) and e^-x = 2^-k (R.x + R.y),
// E and R normalized double-floats in [0.7, 1.42] (R = 1/E with an exact
// residual).  Returns vec4(E, R).  E comes from the plain exp kernel
// (relative error ~2^-28): sinh and cosh use it without cancellation beyond
// a factor 1.6, which keeps them within 0.61 ulp at a third of the cost of
// the double-float kernel.
vec4 gp__exp_pair(float x, out int k) {
    vec2 r = gp__exp_reduce(x, k);
    vec2 s = gp__expm1_kernel(r.x, r.y);
    vec2 h = gp__fast_two_sum(1.0, s.x);
    precise float hl = h.y + s.y;
    vec2 E = gp__fast_two_sum(h.x, hl);
    precise float rh = gp__fdiv(1.0, E.x);
    vec2 p = gp__two_prod(rh, E.x);
    precise float res = ((1.0 - p.x) - p.y) - rh * E.y;
    precise float rl = res * rh;
    return vec4(E, rh, rl);
}

// @function gp_sinh requires gp__isnan gp__inf gp__copysign gp__exp_pair gp__two_sum gp__ldexp
// |x| < 1/2: x + x^3 H(x^2), H minimax degree 3 (2^-31.6; the tail is < 4%
// of the result, so its float rounding adds < 0.04 ulp).  |x| >= 1/2 (k >= 1):
// sinh = 2^(k-1) (E - 2^-2k R) in double-float; E - R/4 cancels at most a
// factor 1.6 (at x = 1/2), and the scaling by 2^(k-1) lets sinh reach its own overflow
// threshold (89.4) although e^x overflows at 88.7.
float gp_sinh(float x) {
    const float SINH_H0 = 1.666666716e-01;
    const float SINH_H1 = 8.333310485e-03;
    const float SINH_H2 = 1.984289556e-04;
    const float SINH_H3 = 2.782213187e-06;
    if (gp__isnan(x)) return x;
    float ax = abs(x);
    if (ax < 2.44140625e-04) return x;            // 2^-12: keeps -0, denormals
    if (ax > 90.0) return gp__copysign(gp__inf(), x);
    if (ax < 0.5) {
        precise float z = x * x;
        precise float H = fma(fma(fma(SINH_H3, z, SINH_H2), z, SINH_H1), z, SINH_H0);
        precise float y = fma(x * z, H, x);
        return y;
    }
    int k;
    vec4 ER = gp__exp_pair(ax, k);
    float f = intBitsToFloat((127 - 2 * min(k, 60)) << 23);   // 2^-2k (beyond: negligible)
    vec2 d = gp__two_sum(ER.x, -f * ER.z);
    precise float lo = d.y + (ER.y - f * ER.w);
    precise float y = d.x + lo;
    return gp__copysign(gp__ldexp(y, k - 1), x);
}

// @function gp_cosh requires gp__isnan gp__inf gp__exp_pair gp__two_sum gp__ldexp
// cosh = 2^(k-1) (E + 2^-2k R): no cancellation, one final rounding.
float gp_cosh(float x) {
    if (gp__isnan(x)) return x;
    float ax = abs(x);
    if (ax > 90.0) return gp__inf();
    if (ax < 2.44140625e-04) return 1.0;          // cosh x rounds to 1
    int k;
    vec4 ER = gp__exp_pair(ax, k);
    float f = intBitsToFloat((127 - 2 * min(k, 60)) << 23);
    vec2 d = gp__two_sum(ER.x, f * ER.z);
    precise float lo = d.y + (ER.y + f * ER.w);
    precise float y = d.x + lo;
    return gp__ldexp(y, k - 1);
}

// @function gp_tanh requires gp__isnan gp__copysign gp__exp_reduce gp__expm1_kernel gp__fast_two_sum gp__two_sum gp__two_prod gp__ldexp gp__fdiv
// tanh|x| = E / (E + 2), E = expm1(2|x|) as a double-float (see gp_expm1,
// but with the plain exp kernel: 2^k(1+s) - 1 magnifies its ~2^-28 error up
// to 3.4x for k = 1, hence <= 0.75 ulp instead of 0.5 at ~1.7x the speed),
// quotient residual-corrected.  No cancellation for small x (E ~ 2x is
// accurate relatively) unlike 1 - 2/(e^2x + 1).  |x| > 9.1: +-1.
float gp_tanh(float x) {
    if (gp__isnan(x)) return x;
    float ax = abs(x);
    if (ax < 2.44140625e-04) return x;            // 2^-12: tanh x rounds to x
    if (ax > 9.1) return gp__copysign(1.0, x);
    int k;
    vec2 r = gp__exp_reduce(2.0 * ax, k);
    vec2 s = gp__expm1_kernel(r.x, r.y);
    vec2 E;
    if (k == 0) {
        E = gp__fast_two_sum(s.x, s.y);
    } else {
        vec2 h = gp__fast_two_sum(1.0, s.x);
        precise float lo = h.y + s.y;
        precise float H = gp__ldexp(h.x, k);      // exact, k <= 27
        precise float L = gp__ldexp(lo, k);
        vec2 d = gp__two_sum(H, -1.0);
        precise float dl = d.y + L;
        E = gp__fast_two_sum(d.x, dl);
    }
    vec2 D = gp__two_sum(E.x, 2.0);
    precise float Dl = D.y + E.y;
    precise float qh = gp__fdiv(E.x, D.x);
    vec2 p = gp__two_prod(qh, D.x);
    precise float res = ((E.x - p.x) - p.y) + (E.y - qh * Dl);
    precise float y = qh + gp__fdiv(res, D.x);
    return gp__copysign(y, x);
}

// @function gp__sqrt_df requires gp__sqr gp__fdiv gp__fsqrt
// sqrt(u.x + u.y) as an unevaluated pair (relative error ~2^-46), u.x > 0;
// one residual correction, so an approximate builtin sqrt is fine.
vec2 gp__sqrt_df(vec2 u) {
    precise float sh = gp__fsqrt(u.x);
    vec2 p = gp__sqr(sh);
    precise float res = ((u.x - p.x) - p.y) + u.y;
    precise float sl = gp__fdiv(res, 2.0 * sh);
    return vec2(sh, sl);
}

// @function gp_arcsinh requires gp__isnan gp__isinf gp__sqr gp__two_sum gp__fast_two_sum gp__sqrt_df gp__log_df gp__log_decomp gp__log1p_kernel_fast gp__log_combine
// asinh|x| = log(|x| + sqrt(x^2 + 1)) with the argument as a double-float
// (exact square, exact +1, corrected sqrt), then gp__log_df; for small x the
// argument is 1 + ~x and log keeps relative accuracy because f = w.x - 1 is
// exact and w.y carries the rest.  |x| > 2^12: log(2|x|) = (k+1) ln2 +
// log1p(f) (the dropped 1/(4x^2) is < 2^-26 relative), no overflow.
float gp_arcsinh(float x) {
    if (gp__isnan(x) || gp__isinf(x)) return x;
    float ax = abs(x);
    if (ax < 2.44140625e-04) return x;            // 2^-12
    precise float y;
    if (ax > 4096.0) {
        vec2 kf = gp__log_decomp(ax);
        vec2 L = gp__log_combine(kf.x + 1.0, gp__log1p_kernel_fast(kf.y), 0.0);
        y = L.x + L.y;
    } else {
        vec2 q = gp__sqr(ax);
        vec2 u = gp__two_sum(q.x, 1.0);
        precise float ul = u.y + q.y;
        vec2 un = gp__fast_two_sum(u.x, ul);
        vec2 s = gp__sqrt_df(un);
        vec2 w = gp__two_sum(ax, s.x);
        precise float wl = w.y + s.y;
        vec2 L = gp__log_df(gp__fast_two_sum(w.x, wl), false);
        y = L.x + L.y;
    }
    // The sign by comparison, not gp__copysign: on llvmpipe (LLVM 15) the
    // bitwise copysign came out wrong when x was converted from int16 in the
    // same program (the conformance tests caught it). |x| >= 2^-12 here, so
    // neither -0 nor NaN needs the bits.
    return x < 0.0 ? -y : y;
}

// @function gp_arccosh requires gp__isnan gp__nan gp__sqr gp__two_sum gp__fast_two_sum gp__sqrt_df gp__log_df gp__log_decomp gp__log1p_kernel_fast gp__log_combine
// acosh x = log(x + sqrt(x^2 - 1)), argument as a double-float (x^2 - 1 is
// exact: exact square, Sterbenz-exact or TwoSum subtraction); x > 2^12:
// log(2x).  x < 1: NaN.
float gp_arccosh(float x) {
    if (gp__isnan(x)) return x;
    if (x < 1.0) return gp__nan();
    if (x == 1.0) return 0.0;
    precise float y;
    if (x > 4096.0) {                             // includes +inf
        if (x == uintBitsToFloat(0x7f800000u)) return x;
        vec2 kf = gp__log_decomp(x);
        vec2 L = gp__log_combine(kf.x + 1.0, gp__log1p_kernel_fast(kf.y), 0.0);
        y = L.x + L.y;
    } else {
        vec2 q = gp__sqr(x);
        vec2 u = gp__two_sum(q.x, -1.0);
        precise float ul = u.y + q.y;
        vec2 un = gp__fast_two_sum(u.x, ul);
        vec2 s = gp__sqrt_df(un);
        vec2 w = gp__two_sum(x, s.x);
        precise float wl = w.y + s.y;
        vec2 L = gp__log_df(gp__fast_two_sum(w.x, wl), false);
        y = L.x + L.y;
    }
    return y;
}

// @function gp_arctanh requires gp__isnan gp__nan gp__inf gp__copysign gp__two_sum gp__two_prod gp__log1p_df gp__fdiv
// atanh|x| = log1p(2|x| / (1 - |x|)) / 2 with the quotient as a
// residual-corrected double-float and log1p in double-float.
float gp_arctanh(float x) {
    if (gp__isnan(x)) return x;
    float ax = abs(x);
    if (ax > 1.0) return gp__nan();
    if (ax == 1.0) return gp__copysign(gp__inf(), x);
    if (ax < 2.44140625e-04) return x;            // 2^-12
    vec2 d = gp__two_sum(1.0, -ax);
    precise float num = 2.0 * ax;
    precise float th = gp__fdiv(num, d.x);
    vec2 p = gp__two_prod(th, d.x);
    precise float res = ((num - p.x) - p.y) - th * d.y;
    precise float tl = gp__fdiv(res, d.x);
    vec2 L = gp__log1p_df(vec2(th, tl), false);
    precise float y = 0.5 * (L.x + L.y);
    return gp__copysign(y, x);
}
