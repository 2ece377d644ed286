// gpupy GLSL float32 math library: exponentials, logarithms, power, cbrt.
// Coefficients: tools/glsl_math/fit_coefficients.py.

// @function gp__expm1_kernel
// e^(rh + rl) - 1 = rh + t for |rh| <= 0.347 (ln2/2 plus slack), |rl| <=
// ulp(rh)/2.  Returns vec2(rh, t) unevaluated: rh is exact, |t| < 0.07, so the
// callers can add 1 (or not) exactly before the final rounding.  Polynomial:
// e^r = 1 + r + r^2 Q(r), Q minimax of degree 5 (error 2^-33 relative).
// The rl term uses e^(rh+rl) ~ e^rh (1 + rl).
vec2 gp__expm1_kernel(float rh, float rl) {
    const float EXP_Q0 = 5.000000000e-01;
    const float EXP_Q1 = 1.666666567e-01;
    const float EXP_Q2 = 4.166646302e-02;
    const float EXP_Q3 = 8.333571255e-03;
    const float EXP_Q4 = 1.393510145e-03;
    const float EXP_Q5 = 1.973958715e-04;
    precise float q = fma(fma(fma(fma(fma(EXP_Q5, rh, EXP_Q4), rh, EXP_Q3), rh, EXP_Q2),
                              rh, EXP_Q1), rh, EXP_Q0);
    precise float r2 = rh * rh;
    precise float t = fma(r2, q, fma(rh, rl, rl));
    return vec2(rh, t);
}

// @function gp__expm1_kernel_df requires gp__df_mul gp__fast_two_sum
// Accurate variant of gp__expm1_kernel: e^(rh + rl) - 1 as a normalized
// double-float with relative error ~2^-40 (the plain kernel's float tail
// limits it to ~2^-28, enough for exp but not where the result is later
// cancelled: expm1 with k != 0, sinh, logaddexp near 0).  Horner in
// double-float for the Taylor coefficients 1, 1/2, 1/6, 1/24 (r^k c_k above
// 2^-14), float for the rest: e^r - 1 = r + r^2/2 + r^3/6 + r^4/24 + r^5 P(r),
// P minimax of degree 4 (2^-43).
vec2 gp__expm1_kernel_df(float rh, float rl) {
    const float EXPM1_P0 = 8.333332837e-03;
    const float EXPM1_P1 = 1.388886478e-03;
    const float EXPM1_P2 = 1.984224364e-04;
    const float EXPM1_P3 = 2.485430741e-05;
    const float EXPM1_P4 = 2.711640263e-06;
    const float SIXTH_H = 1.666666716e-01;
    const float SIXTH_L = -4.967053879e-09;
    const float TWENTYFOURTH_H = 4.166666791e-02;
    const float TWENTYFOURTH_L = -1.241763470e-09;
    vec2 r = vec2(rh, rl);
    precise float P = fma(fma(fma(fma(EXPM1_P4, rh, EXPM1_P3), rh, EXPM1_P2), rh, EXPM1_P1),
                          rh, EXPM1_P0);
    vec2 v = gp__fast_two_sum(TWENTYFOURTH_H, rh * P);       // 1/24 + r P
    precise float vl = v.y + TWENTYFOURTH_L;
    v = gp__df_mul(r, vec2(v.x, vl));                        // r (1/24 + r P)
    vec2 s = gp__fast_two_sum(SIXTH_H, v.x);                 // 1/6 + ...
    precise float sl = s.y + (v.y + SIXTH_L);
    v = gp__df_mul(r, vec2(s.x, sl));
    s = gp__fast_two_sum(0.5, v.x);                          // 1/2 + ...
    sl = s.y + v.y;
    v = gp__df_mul(r, vec2(s.x, sl));                        // r/2 + ...
    s = gp__fast_two_sum(1.0, v.x);                          // 1 + r/2 + ...
    sl = s.y + v.y;
    return gp__df_mul(r, vec2(s.x, sl));
}

// @function gp__exp_reduce requires gp__two_sum
// x = k ln2 + (rh + rl), k = rint(x / ln2) (returned in k), |rh| <= 0.347.
// Cody-Waite: ln2 = LN2_16_HI (16 bits, so k*HI is exact for |k| < 256) + LO;
// x - k*HI is exact (Sterbenz), and the rounding of k*LO (< 2^-34 absolute)
// is the only error.  Valid for |x| < 180.
vec2 gp__exp_reduce(float x, out int k) {
    const float LOG2E_F = 1.442695022e+00;
    const float LN2_16_HI = 6.931457520e-01;
    const float LN2_16_LO = 1.428606765e-06;
    precise float kf = roundEven(x * LOG2E_F);
    precise float r1 = x - kf * LN2_16_HI;
    precise float r2 = kf * LN2_16_LO;
    k = int(kf);
    return gp__two_sum(r1, -r2);
}

// @function gp_exp requires gp__exp_reduce gp__expm1_kernel gp__fast_two_sum gp__ldexp_df gp__isnan
// exp(x) = 2^k e^r.  The sum 1 + rh + t is done as an exact Fast2Sum plus
// the small tail, and rounded once together with the power-of-two scaling
// (gp__ldexp_df), so denormal results are not rounded twice.
float gp_exp(float x) {
    if (gp__isnan(x)) return x;
    precise float xc = clamp(x, -110.0, 100.0);  // beyond: 0 or inf via scaling
    int k;
    vec2 r = gp__exp_reduce(xc, k);
    vec2 s = gp__expm1_kernel(r.x, r.y);
    vec2 h = gp__fast_two_sum(1.0, s.x);
    precise float tail = h.y + s.y;
    return gp__ldexp_df(h.x, tail, k);
}

// @function gp_exp2 requires gp__two_prod gp__fast_two_sum gp__expm1_kernel gp__ldexp_df gp__isnan
// exp2(x) = 2^k 2^r, k = rint(x), r = x - k exact in [-1/2, 1/2];
// 2^r = e^(r ln2) with r*ln2 formed as an exact double-float product.
float gp_exp2(float x) {
    const float LN2_H = 6.931471825e-01;
    const float LN2_L = -1.904654212e-09;
    if (gp__isnan(x)) return x;
    precise float xc = clamp(x, -160.0, 140.0);
    precise float kf = roundEven(xc);
    precise float r = xc - kf;
    vec2 p = gp__two_prod(r, LN2_H);
    precise float pl = p.y + r * LN2_L;
    vec2 u = gp__fast_two_sum(p.x, pl);
    vec2 s = gp__expm1_kernel(u.x, u.y);
    vec2 h = gp__fast_two_sum(1.0, s.x);
    precise float tail = h.y + s.y;
    return gp__ldexp_df(h.x, tail, int(kf));
}

// @function gp_expm1 requires gp__exp_reduce gp__expm1_kernel_df gp__fast_two_sum gp__two_sum gp__ldexp gp__isnan gp__inf
// expm1(x) = 2^k (1 + s) - 1 with s = e^r - 1 from the accurate kernel.  For
// k = 0 the kernel value is the answer.  Otherwise 2^k (1 + s) is kept as an
// exact double-float and 1 is subtracted with TwoSum, so the only rounding is
// the final one.  Overflow exactly where exp overflows (x > 88.7228317).
float gp_expm1(float x) {
    if (gp__isnan(x) || x == 0.0) return x;   // keeps -0
    if (x > 88.72283172607422) return gp__inf();
    precise float xc = max(x, -40.0);          // expm1(-40) rounds to -1
    int k;
    vec2 r = gp__exp_reduce(xc, k);
    vec2 s = gp__expm1_kernel_df(r.x, r.y);
    if (k == 0) {
        precise float e0 = s.x + s.y;
        return e0;
    }
    vec2 h = gp__fast_two_sum(1.0, s.x);
    precise float lo = h.y + s.y;
    precise float H = gp__ldexp(h.x, k);       // exact: k in [-58, 128]
    precise float L = gp__ldexp(lo, k);
    vec2 d = gp__two_sum(H, -1.0);
    precise float e = d.x + (d.y + L);
    return e;
}

// @function gp__log1p_kernel requires gp__fast_two_sum gp__two_prod gp__sqr gp__df_mul gp__fdiv
// log1p(f) as a double-float (relative error ~2^-42) for f in
// [sqrt(1/2)-1, sqrt(2)-1].  log1p(f) = 2 atanh(s) with s = f/(2+f), |s| <=
// 0.1716: = 2s + s z (2/3 + 2z/5 + z^2 RB(z)), z = s^2, RB minimax of degree
// 2 (2^-43).  s is a double-float (quotient plus exact residual); the terms
// s^3 (up to 1% of the result) and s^5 (0.02%) are double-float too, so
// that power and logaddexp can use the result as an extended-precision
// logarithm.
vec2 gp__log1p_kernel(float f) {
    const float LOG_RB0 = 2.857159972e-01;
    const float LOG_RB1 = 2.219800800e-01;
    const float LOG_RB2 = 1.927076727e-01;
    const float TWO_THIRDS_H = 6.666666865e-01;
    const float TWO_THIRDS_L = -1.986821552e-08;
    const float TWO_FIFTHS_H = 4.000000060e-01;
    const float TWO_FIFTHS_L = -5.960464566e-09;
    vec2 d = gp__fast_two_sum(2.0, f);              // 2 + f exactly
    precise float sh = gp__fdiv(f, d.x);
    vec2 p = gp__two_prod(sh, d.x);
    precise float res = ((f - p.x) - p.y) - sh * d.y;  // f - sh (2+f)
    precise float sl = gp__fdiv(res, d.x);
    vec2 z = gp__sqr(sh);
    precise float zl = z.y + 2.0 * sh * sl;
    precise float R = fma(fma(LOG_RB2, z.x, LOG_RB1), z.x, LOG_RB0);
    vec2 a = gp__two_prod(z.x, TWO_FIFTHS_H);       // 2z/5
    precise float al = a.y + (z.x * TWO_FIFTHS_L + zl * TWO_FIFTHS_H);
    vec2 c = gp__fast_two_sum(TWO_THIRDS_H, a.x);
    precise float cl = c.y + ((TWO_THIRDS_L + al) + z.x * z.x * R);
    vec2 sz = gp__df_mul(vec2(sh, sl), vec2(z.x, zl));
    vec2 q = gp__df_mul(sz, vec2(c.x, cl));
    vec2 r = gp__fast_two_sum(2.0 * sh, q.x);
    precise float rl = r.y + (2.0 * sl + q.y);
    return gp__fast_two_sum(r.x, rl);
}

// @function gp__log1p_kernel_fast requires gp__fast_two_sum gp__two_prod gp__fdiv
// Cheaper gp__log1p_kernel for results that are only rounded to float
// (gp_log, gp_log2, gp_log10, ...): log1p(f) = 2s + s z (2/3 + z R(z)), R
// minimax of degree 2 (2^-36.8), the s^3 term, < 1% of the result, in plain
// float: relative error ~2^-29 instead of ~2^-40, still
// enough for ~0.54 ulp (measured) after the final rounding.  s itself stays a
// double-float (its rounding error would otherwise be the whole ulp).
vec2 gp__log1p_kernel_fast(float f) {
    const float LOG_R0 = 4.000015259e-01;
    const float LOG_R1 = 2.854709327e-01;
    const float LOG_R2 = 2.341950834e-01;
    const float TWO_THIRDS_H = 6.666666865e-01;
    vec2 d = gp__fast_two_sum(2.0, f);              // 2 + f exactly
    precise float sh = gp__fdiv(f, d.x);
    vec2 p = gp__two_prod(sh, d.x);
    precise float res = ((f - p.x) - p.y) - sh * d.y;
    precise float sl = gp__fdiv(res, d.x);
    precise float z = sh * sh;
    precise float c = fma(fma(fma(LOG_R2, z, LOG_R1), z, LOG_R0), z, TWO_THIRDS_H);
    precise float q = sh * z * c;
    vec2 r = gp__fast_two_sum(2.0 * sh, q);
    precise float rl = r.y + 2.0 * sl;
    return gp__fast_two_sum(r.x, rl);
}

// @function gp__log_decomp
// For finite x > 0 (denormals included): x = 2^k (1 + f) with 1 + f in
// [sqrt(1/2), sqrt(2)), f = (1+f) - 1 exact (Sterbenz).  Returns vec2(k, f).
// The mantissa window starts at sqrt(1/2) (0x3f3504f3) so that |log1p(f)| <=
// ln2/2 and log(x) never cancels between k ln2 and log1p(f).
vec2 gp__log_decomp(float x) {
    int kadj = 0;
    float xs = x;
    if (x < 1.17549435e-38) {           // denormal: scale by 2^25
        xs = x * 33554432.0;
        kadj = -25;
    }
    int ix = floatBitsToInt(xs) - 0x3f3504f3;
    int k = (ix >> 23) + kadj;
    float m = intBitsToFloat((ix & 0x007fffff) + 0x3f3504f3);
    precise float f = m - 1.0;
    return vec2(float(k), f);
}

// @function gp__log_combine requires gp__fast_two_sum
// k ln2 + lp + extra as a normalized double-float, for |lp| <= ln2/2 + tiny
// and tiny |extra|.  k*LN2_16_HI is exact (|k| < 256); when k != 0 it
// dominates lp, so Fast2Sum is exact.
vec2 gp__log_combine(float k, vec2 lp, float extra) {
    const float LN2_16_HI = 6.931457520e-01;
    const float LN2_16_LO = 1.428606765e-06;
    precise float kh = k * LN2_16_HI;
    vec2 s = gp__fast_two_sum(kh, lp.x);
    precise float lo = s.y + (k * LN2_16_LO + (lp.y + extra));
    return gp__fast_two_sum(s.x, lo);
}

// @function gp__log_df requires gp__log_decomp gp__log1p_kernel gp__log1p_kernel_fast gp__log_combine gp__fdiv
// log(w.x + w.y) as a double-float, w.x finite > 0, |w.y| <= ulp(w.x).
// log(wx + wy) = log(wx) + wy/wx (the next term is below 2^-48).
// accurate: ~2^-40 relative (gp__log1p_kernel) instead of ~2^-29 (the
// argument is a constant at every call site, so the other kernel is dead
// code after inlining).
vec2 gp__log_df(vec2 w, bool accurate) {
    vec2 kf = gp__log_decomp(w.x);
    vec2 lp = accurate ? gp__log1p_kernel(kf.y) : gp__log1p_kernel_fast(kf.y);
    precise float extra = gp__fdiv(w.y, w.x);
    return gp__log_combine(kf.x, lp, extra);
}

// @function gp__log1p_df requires gp__log1p_kernel gp__log1p_kernel_fast gp__two_sum gp__fast_two_sum gp__log_df gp__fdiv
// log1p(t.x + t.y) as a double-float for t.x > -1, |t.y| <= ulp(t.x).  Inside
// the kernel's range f = t.x is used directly (no rounding of 1 + t);
// outside, 1 + t is formed exactly as a double-float first.  `accurate` as
// in gp__log_df.
vec2 gp__log1p_df(vec2 t, bool accurate) {
    if (t.x >= -0.29289320 && t.x <= 0.41421356) {
        vec2 lp = accurate ? gp__log1p_kernel(t.x) : gp__log1p_kernel_fast(t.x);
        precise float c = gp__fdiv(t.y, 1.0 + t.x);
        precise float lo = lp.y + c;
        return gp__fast_two_sum(lp.x, lo);
    }
    vec2 u = gp__two_sum(1.0, t.x);
    precise float ul = u.y + t.y;
    vec2 un = gp__fast_two_sum(u.x, ul);
    return gp__log_df(un, accurate);
}

// @function gp__log_special requires gp__isnan gp__inf gp__nan
// Shared special cases of the log family: returns true and sets r for
// x <= 0, NaN and +inf (log(+-0) = -inf, log(x<0) = NaN, log(inf) = inf).
bool gp__log_special(float x, out float r) {
    r = x;
    if (gp__isnan(x)) return true;
    if (x == 0.0) { r = -gp__inf(); return true; }
    if (x < 0.0) { r = gp__nan(); return true; }
    if (x == gp__inf()) return true;
    return false;
}

// @function gp_log requires gp__log_special gp__log_decomp gp__log1p_kernel_fast gp__log_combine
// log(x) = k ln2 + log1p(f), evaluated as a double-float and rounded once.
float gp_log(float x) {
    float sp;
    if (gp__log_special(x, sp)) return sp;
    vec2 kf = gp__log_decomp(x);
    vec2 lp = gp__log1p_kernel_fast(kf.y);
    vec2 r = gp__log_combine(kf.x, lp, 0.0);
    precise float y = r.x + r.y;
    return y;
}

// @function gp_log2 requires gp__log_special gp__log_decomp gp__log1p_kernel_fast gp__df_mul gp__fast_two_sum
// log2(x) = k + log1p(f) log2(e), with the product in double-float; exact for
// powers of two.  |k| >= 1 dominates |log1p(f) log2 e| <= 1/2, so the final
// Fast2Sum is exact.
float gp_log2(float x) {
    const float LOG2E_H = 1.442695022e+00;
    const float LOG2E_L = 1.925963034e-08;
    float sp;
    if (gp__log_special(x, sp)) return sp;
    vec2 kf = gp__log_decomp(x);
    vec2 lp = gp__log1p_kernel_fast(kf.y);
    vec2 m = gp__df_mul(lp, vec2(LOG2E_H, LOG2E_L));
    vec2 s = gp__fast_two_sum(kf.x, m.x);
    precise float y = s.x + (s.y + m.y);
    return y;
}

// @function gp_log10 requires gp__log_special gp__log_decomp gp__log1p_kernel_fast gp__df_mul gp__fast_two_sum
// log10(x) = k log10(2) + log1p(f) log10(e) in double-float (k*HI exact).
float gp_log10(float x) {
    const float LOG10_2_16_HI = 3.010330200e-01;
    const float LOG10_2_16_LO = -3.024355465e-06;
    const float LOG10E_H = 4.342944920e-01;
    const float LOG10E_L = -1.010304995e-08;
    float sp;
    if (gp__log_special(x, sp)) return sp;
    vec2 kf = gp__log_decomp(x);
    vec2 lp = gp__log1p_kernel_fast(kf.y);
    vec2 m = gp__df_mul(lp, vec2(LOG10E_H, LOG10E_L));
    precise float kh = kf.x * LOG10_2_16_HI;
    vec2 s = gp__fast_two_sum(kh, m.x);
    precise float y = s.x + (s.y + (kf.x * LOG10_2_16_LO + m.y));
    return y;
}

// @function gp_log1p requires gp__isnan gp__inf gp__nan gp__log1p_df
// log1p(x): see gp__log1p_df.  |x| < 2^-24 returns x (x - x^2/2 rounds to x),
// which also keeps -0 and denormals exact.
float gp_log1p(float x) {
    if (gp__isnan(x)) return x;
    if (abs(x) < 5.96046448e-08) return x;
    if (x == -1.0) return -gp__inf();
    if (x < -1.0) return gp__nan();
    if (x == gp__inf()) return x;
    vec2 r = gp__log1p_df(vec2(x, 0.0), false);
    precise float y = r.x + r.y;
    return y;
}

// @function gp_logaddexp requires gp__isnan gp__isinf gp__two_sum gp__fast_two_sum gp__exp_reduce gp__expm1_kernel_df gp__ldexp gp__log1p_df
// log(e^x + e^y) = m + log1p(e^-d), m = max, d = |x - y| >= 0, NumPy's
// formula, but with d kept exact (TwoSum), e^-d and log1p in double-float and
// the final sum rounded once: absolute error ~2^-37 max(1, |m|), so results
// near 0 (e^x + e^y ~ 1, where the float formula cancels catastrophically)
// keep ~2^-37 absolute accuracy instead of NumPy's ~2^-24.  x == y gives x + ln2 (also for infinities), NaN propagates.
float gp_logaddexp(float x, float y) {
    const float LN2_H = 6.931471825e-01;
    const float LN2_L = -1.904654212e-09;
    if (gp__isnan(x) || gp__isnan(y)) {
        precise float n = x + y;
        return n;
    }
    if (x == y) {
        if (gp__isinf(x)) return x;
        vec2 s = gp__two_sum(x, LN2_H);
        precise float r = s.x + (s.y + LN2_L);
        return r;
    }
    float m = max(x, y);
    float n = min(x, y);
    // n = -inf or e^-d < 2^-150: m + 0 (NumPy: -0 + log1p(0) = +0).
    if (gp__isinf(m) || gp__isinf(n)) {
        return (m == 0.0) ? 0.0 : m;   // compilers fold m + 0.0 to m
    }
    vec2 d = gp__two_sum(m, -n);
    if (d.x > 104.0) {
        return (m == 0.0) ? 0.0 : m;   // compilers fold m + 0.0 to m
    }
    // e^-d: reduce -d.x, fold -d.y into the low part.
    int k;
    vec2 r = gp__exp_reduce(-d.x, k);
    vec2 rr = gp__two_sum(r.x, r.y - d.y);
    vec2 s = gp__expm1_kernel_df(rr.x, rr.y);
    vec2 h = gp__fast_two_sum(1.0, s.x);
    precise float lo = h.y + s.y;
    precise float Eh = gp__ldexp(h.x, k);
    precise float El = gp__ldexp(lo, k);
    vec2 E = gp__fast_two_sum(Eh, El);
    vec2 L = gp__log1p_df(E, true);
    vec2 t = gp__two_sum(m, L.x);
    precise float res = t.x + (t.y + L.y);
    return res;
}

// @function gp_logaddexp2 requires gp__isnan gp__isinf gp__two_sum gp__two_prod gp__fast_two_sum gp__expm1_kernel_df gp__ldexp gp__log1p_df gp__df_mul
// log2(2^x + 2^y) = m + log1p(2^-d) log2(e), as gp_logaddexp; x == y gives
// x + 1 (NumPy).
float gp_logaddexp2(float x, float y) {
    const float LN2_H = 6.931471825e-01;
    const float LN2_L = -1.904654212e-09;
    const float LOG2E_H = 1.442695022e+00;
    const float LOG2E_L = 1.925963034e-08;
    if (gp__isnan(x) || gp__isnan(y)) {
        precise float n = x + y;
        return n;
    }
    if (x == y) {
        precise float r = x + 1.0;
        return r;
    }
    float m = max(x, y);
    float n = min(x, y);
    if (gp__isinf(m) || gp__isinf(n)) {
        return (m == 0.0) ? 0.0 : m;   // compilers fold m + 0.0 to m
    }
    vec2 d = gp__two_sum(m, -n);
    if (d.x > 151.0) {                              // 2^-d < 2^-150
        return (m == 0.0) ? 0.0 : m;   // compilers fold m + 0.0 to m
    }
    // 2^-d = 2^k 2^r, k = rint(-d.x), r = (-d.x - k) - d.y (first part exact).
    precise float kf = roundEven(-d.x);
    precise float r0 = -d.x - kf;
    vec2 r = gp__two_sum(r0, -d.y);
    vec2 p = gp__two_prod(r.x, LN2_H);
    precise float pl = p.y + (r.x * LN2_L + r.y * LN2_H);
    vec2 u = gp__fast_two_sum(p.x, pl);
    vec2 s = gp__expm1_kernel_df(u.x, u.y);
    vec2 h = gp__fast_two_sum(1.0, s.x);
    precise float lo = h.y + s.y;
    int k = int(kf);
    precise float Eh = gp__ldexp(h.x, k);
    precise float El = gp__ldexp(lo, k);
    vec2 E = gp__fast_two_sum(Eh, El);
    vec2 L = gp__df_mul(gp__log1p_df(E, true), vec2(LOG2E_H, LOG2E_L));
    vec2 t = gp__two_sum(m, L.x);
    precise float res = t.x + (t.y + L.y);
    return res;
}

// @function gp_power requires gp__isnan gp__isinf gp__copysign gp__inf gp__nan gp__log_decomp gp__log1p_kernel gp__df_mul gp__fast_two_sum gp__two_sum gp__two_prod gp__expm1_kernel gp__ldexp_df
// C99/NumPy powf: special cases first (pow(x, +-0) = 1 even for NaN x,
// pow(1, y) = 1 even for NaN y, (-1)^+-inf = 1, signed zeros and infinities,
// negative base: real result for integer y with the sign of (-1)^y, NaN
// otherwise).  General case: |x|^y = 2^w, w = y log2|x|, with log2|x| as a
// double-float (~2^-40 relative) and w = y * log2|x| as an exact-product
// double-float, so the error in w stays below 2^-30 absolute even at |w| ~
// 150; then 2^w = 2^n 2^r as in gp_exp2.
float gp_power(float x, float y) {
    const float LOG2E_H = 1.442695022e+00;
    const float LOG2E_L = 1.925963034e-08;
    const float LN2_H = 6.931471825e-01;
    const float LN2_L = -1.904654212e-09;
    if (y == 0.0) return 1.0;
    if (x == 1.0) return 1.0;
    if (gp__isnan(x) || gp__isnan(y)) {
        precise float n = x + y;
        return n;
    }
    float ax = abs(x), ay = abs(y);
    bool yint = ay >= 16777216.0 || floor(ay) == ay;
    bool yodd = ay < 16777216.0 && yint && (int(ay) & 1) == 1;
    if (gp__isinf(y)) {
        if (ax == 1.0) return 1.0;                  // (-1)^+-inf
        return ((ax > 1.0) == (y > 0.0)) ? gp__inf() : 0.0;
    }
    if (ax == 0.0) {
        if (y < 0.0) return yodd ? gp__copysign(gp__inf(), x) : gp__inf();
        return yodd ? x : 0.0;
    }
    if (gp__isinf(x)) {
        if (y < 0.0) return yodd ? gp__copysign(0.0, x) : 0.0;
        return yodd ? x : gp__inf();
    }
    if (x < 0.0 && !yint) return gp__nan();
    float sgn = (x < 0.0 && yodd) ? -1.0 : 1.0;
    // |y| > 2^32 with x != 1 always over- or underflows (|log2 x| >= 2^-24
    // * 1.44), and such y are even, so clamping keeps sign and outcome.
    float yc = clamp(y, -4294967296.0, 4294967296.0);
    vec2 kf = gp__log_decomp(ax);
    vec2 lp = gp__log1p_kernel(kf.y);
    vec2 m = gp__df_mul(lp, vec2(LOG2E_H, LOG2E_L));
    vec2 L = gp__fast_two_sum(kf.x, m.x);          // log2|x| = L.x + L.y
    precise float Ll = L.y + m.y;
    vec2 w = gp__two_prod(yc, L.x);
    precise float wl = w.y + yc * Ll;
    vec2 W = gp__fast_two_sum(w.x, wl);
    if (W.x > 200.0) return sgn * gp__inf();
    if (W.x < -200.0) return gp__copysign(0.0, sgn);
    precise float nf = roundEven(W.x);
    precise float r0 = W.x - nf;                    // exact
    vec2 r = gp__two_sum(r0, W.y);
    vec2 p = gp__two_prod(r.x, LN2_H);
    precise float pl = p.y + (r.x * LN2_L + r.y * LN2_H);
    vec2 u = gp__fast_two_sum(p.x, pl);
    vec2 s = gp__expm1_kernel(u.x, u.y);
    vec2 h = gp__fast_two_sum(1.0, s.x);
    precise float tail = h.y + s.y;
    precise float res = sgn * gp__ldexp_df(h.x, tail, int(nf));
    return res;
}

// @function gp_cbrt requires gp__isnan gp__isinf gp__two_prod gp__copysign gp__fdiv
// cbrt(x): exponent-bits initial guess (error < 4%), three Newton steps in
// float, then one Newton step whose residual y^3 - a is computed exactly
// (double-float cube), so the result is rounded once (~0.5 ulp).  Exact
// cubes give exact results.  Tiny and huge |x| are scaled by 2^(+-99) first.
float gp_cbrt(float x) {
    if (gp__isnan(x) || gp__isinf(x) || x == 0.0) return x;
    float a = abs(x);
    float post = 1.0;
    // Small (incl. denormal): scale by 2^99 so that the exact cube's error
    // terms do not underflow.
    if (a < 7.88860905e-31) { a *= 6.33825300e+29; post = 1.16415322e-10; } // 2^-100, 2^99, 2^-33
    // Large: scale by 2^-99 so that y^3 (~a) cannot overflow in the exact cube.
    if (a > 1.2676506e30) { a *= 1.57772181e-30; post = 8.58993459e+09; } // 2^100, 2^-99, 2^33
    float y = uintBitsToFloat(floatBitsToUint(a) / 3u + 0x2a555555u);
    y = y + (gp__fdiv(a, y * y) - y) * (1.0 / 3.0);
    y = y + (gp__fdiv(a, y * y) - y) * (1.0 / 3.0);
    y = y + (gp__fdiv(a, y * y) - y) * (1.0 / 3.0);
    vec2 y2 = gp__two_prod(y, y);
    vec2 y3 = gp__two_prod(y2.x, y);
    precise float y3l = y3.y + y2.y * y;
    precise float res = (y3.x - a) + y3l;          // y^3 - a; y3.x - a exact
    precise float yc = y - gp__fdiv(res, 3.0 * y2.x);
    precise float r = yc * post;
    return gp__copysign(r, x);
}
