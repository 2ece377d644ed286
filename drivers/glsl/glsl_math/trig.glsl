// gpupy GLSL float32 math library: circular functions and hypot.
// Coefficients: tools/glsl_math/fit_coefficients.py.

// @function gp__trig_reduce_large requires gp__two_prod gp__fast_two_sum
// Payne-Hanek reduction for finite |x| >= 2^-6 (used from 2^17 up):
// x = q (pi/2) + r, |r| <= pi/4, r returned as a double-float (relative
// error ~2^-40), q mod 4 in `quadrant`.  x = m 2^e with a 24-bit integer m;
// x (2/pi) mod 4 only needs the 96 bits of 2/pi starting at weight 2^(1-e)
// (earlier bits give multiples of 4), so N = m * window mod 2^96 is computed
// with 32-bit integer arithmetic; N / 2^94 = x (2/pi) mod 4 with absolute
// error < 2^-70, far below the smallest |x (2/pi) - q| of any float (~2^-30).
vec2 gp__trig_reduce_large(float x, out int quadrant) {
    const uint TWO_OVER_PI_BITS[8] = uint[8](0x00000000u, 0xa2f9836eu, 0x4e441529u, 0xfc2757d1u,
                                             0xf534ddc0u, 0xdb629599u, 0x3c439041u, 0xfe5163abu);
    const float PIO2_H = 1.570796371e+00;
    const float PIO2_L = -4.371138829e-08;
    uint ux = floatBitsToUint(x) & 0x7fffffffu;
    int e = int(ux >> 23) - 150;
    uint m = (ux & 0x007fffffu) | 0x00800000u;
    // Stream bit j of the table is the bit of weight 2^(31-j); the window
    // starts at weight 2^(1-e), i.e. j = e + 30.
    int j = e + 30;
    int w = j >> 5;
    int sh = j & 31;
    // Word selection by compare-and-select rather than indexing: a dynamic
    // index is a per-lane gather on SIMD implementations such as llvmpipe.
    uint t0 = TWO_OVER_PI_BITS[0], t1 = TWO_OVER_PI_BITS[1];
    uint t2 = TWO_OVER_PI_BITS[2], t3 = TWO_OVER_PI_BITS[3];
    for (int i = 1; i <= 4; i++) {
        bool sel = w == i;
        t0 = sel ? TWO_OVER_PI_BITS[i] : t0;
        t1 = sel ? TWO_OVER_PI_BITS[i + 1] : t1;
        t2 = sel ? TWO_OVER_PI_BITS[i + 2] : t2;
        t3 = sel ? TWO_OVER_PI_BITS[i + 3] : t3;
    }
    uint w0 = t0, w1 = t1, w2 = t2;
    if (sh != 0) {
        w0 = (t0 << sh) | (t1 >> (32 - sh));
        w1 = (t1 << sh) | (t2 >> (32 - sh));
        w2 = (t2 << sh) | (t3 >> (32 - sh));
    }
    uint h2, l2, h1, l1, c1, c2;
    umulExtended(m, w2, h2, l2);
    umulExtended(m, w1, h1, l1);
    uint n2 = l2;
    uint n1 = uaddCarry(l1, h2, c1);
    uint n0 = m * w0 + h1 + c1;
    // Round to the nearest quadrant; the rest is a signed fraction in
    // [-1/2, 1/2) quadrants: d0:n1:n2 as a 96-bit two's complement number.
    uint q = (n0 + 0x20000000u) >> 30;
    uint d0 = n0 - (q << 30);
    bool neg = int(d0) < 0;
    uint d1 = n1, d2 = n2;
    if (neg) {                        // negate the 96-bit number
        d2 = ~d2; d1 = ~d1; d0 = ~d0;
        d2 = uaddCarry(d2, 1u, c2);
        d1 = uaddCarry(d1, c2, c1);
        d0 = d0 + c1;
    }
    // Normalize: leading word and bit, then take 48 bits as two exact floats.
    int o = 0;
    if (d0 == 0u) { d0 = d1; d1 = d2; d2 = 0u; o = 32; }
    if (d0 == 0u) { d0 = d1; d1 = d2; d2 = 0u; o = 64; }
    int s = 31 - findMSB(d0);         // d0 == 0 only if x (2/pi) is an exact integer: impossible
    uint A = d0, B = d1;
    if (s != 0) {
        A = (d0 << s) | (d1 >> (32 - s));
        B = (d1 << s) | (d2 >> (32 - s));
    }
    // fraction = (A 2^32 + B) 2^(-62-o-s); top 24 and next 24 bits:
    float scale = intBitsToFloat((127 - o - s) << 23);      // 2^(-o-s), normal
    precise float fh = float(A >> 8) * 2.38418579e-07 * scale;               // 2^-22
    precise float fl = float(((A & 0xffu) << 16) | (B >> 16)) * 1.42108547e-14 * scale; // 2^-46
    // r = fraction * pi/2 as a double-float.
    vec2 p = gp__two_prod(fh, PIO2_H);
    precise float pl = p.y + (fh * PIO2_L + fl * PIO2_H);
    vec2 r = gp__fast_two_sum(p.x, pl);
    float sg = neg ? -1.0 : 1.0;
    int qi = int(q & 3u);
    if (x < 0.0) { sg = -sg; qi = -qi; }
    quadrant = qi & 3;
    return vec2(sg * r.x, sg * r.y);
}

// @function gp__trig_reduce requires gp__two_prod gp__two_sum gp__trig_reduce_large
// x = k (pi/2) + r for finite x, r as a double-float with |r| <= 0.8 (pi/4 plus
// the slack of computing k from x*(2/pi) in float), k mod 4 in `quadrant`.
// |x| < 2^17: Cody-Waite with pi/2 = P1 + P2 + P3 (72 bits); k*P1 and k*P2
// are exact double-float products, x - k*P1 is exact (Sterbenz), so the
// error is ~k 2^-73 + the rounding of k*P3, i.e. < 2^-55 absolute.
// Larger |x|: Payne-Hanek.
vec2 gp__trig_reduce(float x, out int quadrant) {
    const float TWO_OVER_PI_F = 6.366197467e-01;
    const float PIO2_1 = 1.570796371e+00;
    const float PIO2_2 = -4.371138829e-08;
    const float PIO2_3 = -1.715124510e-15;
    float ax = abs(x);
    if (ax <= 0.785398163) {
        quadrant = 0;
        return vec2(x, 0.0);
    }
    if (ax < 131072.0) {
        precise float k = roundEven(x * TWO_OVER_PI_F);
        vec2 a = gp__two_prod(k, PIO2_1);
        vec2 b = gp__two_prod(k, PIO2_2);
        precise float t = x - a.x;                 // exact
        vec2 s1 = gp__two_sum(t, -a.y);
        vec2 s2 = gp__two_sum(s1.x, -b.x);
        precise float lo = (s1.y + s2.y) - (b.y + k * PIO2_3);
        quadrant = int(k) & 3;
        return gp__two_sum(s2.x, lo);   // TwoSum: lo may rival s2.x when r is tiny
    }
    return gp__trig_reduce_large(x, quadrant);
}

// @function gp__sin_kernel requires gp__sqr gp__two_prod gp__fast_two_sum
// sin(rh + rl) for |rh| <= 0.8 as an unevaluated pair (s, tail):
// sin r = r - r^3/6 + r^5 T(r^2), T minimax of degree 2 (2^-36).  -r^3/6
// (up to 10% of the result) is formed as a double-float (exact square and
// cube, exact product by the split constant 1/6) and added to r with
// Fast2Sum; only r^5 T (< 0.4%) is rounded in float.  Compared with a
// plain r + r^3 S(r^2) in float this takes sin's worst error from 0.75 to
// ~0.53 ulp (cos and tan use this kernel too) for ~40 more flops.  The rl
// term uses sin(rh + rl) ~ sin rh + rl (1 - rh^2/2).
vec2 gp__sin_kernel(float rh, float rl) {
    const float SIN_T0 = 8.333330974e-03;
    const float SIN_T1 = -1.983961556e-04;
    const float SIN_T2 = 2.719641998e-06;
    const float SIXTH_H = 1.666666716e-01;
    const float SIXTH_L = -4.967053879e-09;
    vec2 z = gp__sqr(rh);                               // r^2
    vec2 c = gp__two_prod(rh, z.x);                     // r^3
    precise float cl = c.y + rh * z.y;
    vec2 a = gp__two_prod(c.x, SIXTH_H);                // r^3 / 6
    precise float al = a.y + (c.x * SIXTH_L + cl * SIXTH_H);
    vec2 s = gp__fast_two_sum(rh, -a.x);
    precise float T = fma(fma(SIN_T2, z.x, SIN_T1), z.x, SIN_T0);
    precise float tail = s.y + ((c.x * z.x * T - al) + fma(-0.5 * z.x, rl, rl));
    return vec2(s.x, tail);
}

// @function gp__cos_kernel requires gp__sqr gp__fast_two_sum
// cos(rh + rl) for |rh| <= 0.8 as an unevaluated pair (w, tail):
// cos r = 1 - r^2/2 + r^4 C(r^2), C minimax degree 3 (2^-36.9).  1 - rh^2/2
// is formed exactly (exact square, Fast2Sum), so only the small tail is
// rounded although r^2/2 is up to a third of the result (<= 0.75 ulp
// measured, like sin; the tail's float roundings are the remaining error).
vec2 gp__cos_kernel(float rh, float rl) {
    const float COS_C0 = 4.166666791e-02;
    const float COS_C1 = -1.388897654e-03;
    const float COS_C2 = 2.482041054e-05;
    const float COS_C3 = -2.870431217e-07;
    vec2 zz = gp__sqr(rh);
    precise float z = zz.x;
    precise float C = fma(fma(fma(COS_C3, z, COS_C2), z, COS_C1), z, COS_C0);
    vec2 w = gp__fast_two_sum(1.0, -0.5 * z);
    precise float tail = w.y + ((z * z * C - 0.5 * zz.y) - rh * rl);
    return vec2(w.x, tail);
}

// @function gp_sin requires gp__isnan gp__isinf gp__nan gp__trig_reduce gp__sin_kernel gp__cos_kernel
float gp_sin(float x) {
    if (gp__isnan(x)) return x;
    if (gp__isinf(x)) return gp__nan();
    if (abs(x) < 2.44140625e-04) return x;        // 2^-12: sin x rounds to x
    int q;
    vec2 r = gp__trig_reduce(x, q);
    vec2 v = ((q & 1) == 0) ? gp__sin_kernel(r.x, r.y) : gp__cos_kernel(r.x, r.y);
    precise float y = v.x + v.y;
    return (q & 2) == 0 ? y : -y;
}

// @function gp_cos requires gp__isnan gp__isinf gp__nan gp__trig_reduce gp__sin_kernel gp__cos_kernel
float gp_cos(float x) {
    if (gp__isnan(x)) return x;
    if (gp__isinf(x)) return gp__nan();
    int q;
    vec2 r = gp__trig_reduce(x, q);
    vec2 v = ((q & 1) == 0) ? gp__cos_kernel(r.x, r.y) : gp__sin_kernel(r.x, r.y);
    precise float y = v.x + v.y;
    return ((q + 1) & 2) == 0 ? y : -y;
}

// @function gp_tan requires gp__isnan gp__isinf gp__nan gp__trig_reduce gp__sin_kernel gp__cos_kernel gp__fast_two_sum gp__two_prod gp__fdiv
// tan = sin/cos (odd quadrants: -cos/sin) with numerator and denominator as
// double-floats and a residual-corrected quotient: the quotient adds almost
// nothing to the kernels' errors (<= 0.9 ulp measured), and no long
// polynomial for tan near pi/4 is needed.
float gp_tan(float x) {
    if (gp__isnan(x)) return x;
    if (gp__isinf(x)) return gp__nan();
    if (abs(x) < 2.44140625e-04) return x;        // 2^-12
    int q;
    vec2 r = gp__trig_reduce(x, q);
    vec2 sv = gp__sin_kernel(r.x, r.y);
    vec2 cv = gp__cos_kernel(r.x, r.y);
    vec2 s = gp__fast_two_sum(sv.x, sv.y);
    vec2 c = gp__fast_two_sum(cv.x, cv.y);
    vec2 num = s, den = c;
    if ((q & 1) == 1) { num = vec2(-c.x, -c.y); den = s; }
    precise float th = gp__fdiv(num.x, den.x);
    vec2 p = gp__two_prod(th, den.x);
    precise float res = ((num.x - p.x) - p.y) + (num.y - th * den.y);
    precise float y = th + gp__fdiv(res, den.x);
    return y;
}

// @function gp__atan_kernel
// atan(th + tl) for |th| <= 0.4143 (tan(pi/8)) as an unevaluated pair:
// atan t = t + t^3 A(t^2), A minimax degree 5 (2^-33.9); the tl term uses
// atan(th + tl) ~ atan th + tl / (1 + th^2).
vec2 gp__atan_kernel(float th, float tl) {
    const float ATAN_A0 = -3.333333135e-01;
    const float ATAN_A1 = 1.999980211e-01;
    const float ATAN_A2 = -1.427913159e-01;
    const float ATAN_A3 = 1.100958511e-01;
    const float ATAN_A4 = -8.283184469e-02;
    const float ATAN_A5 = 4.351195693e-02;
    precise float z = th * th;
    precise float A = fma(fma(fma(fma(fma(ATAN_A5, z, ATAN_A4), z, ATAN_A3), z, ATAN_A2),
                              z, ATAN_A1), z, ATAN_A0);
    precise float tail = fma(th * z, A, fma(-z, tl, tl));
    return vec2(th, tail);
}

// @function gp__atan_unit requires gp__two_sum gp__two_prod gp__fast_two_sum gp__atan_kernel gp__fdiv
// atan(t.x + t.y) for 0 <= t <= 1 as a normalized double-float.  Above
// tan(pi/8): atan t = pi/4 + atan((t-1)/(t+1)), with (t-1)/(t+1) as a
// residual-corrected double-float quotient.
vec2 gp__atan_unit(vec2 t) {
    const float PIO4_H = 7.853981853e-01;
    const float PIO4_L = -2.185569414e-08;
    if (t.x <= 0.41421356) {
        vec2 a = gp__atan_kernel(t.x, t.y);
        return gp__fast_two_sum(a.x, a.y);
    }
    vec2 n = gp__two_sum(t.x, -1.0);
    precise float nl = n.y + t.y;
    vec2 d = gp__two_sum(t.x, 1.0);
    precise float dl = d.y + t.y;
    precise float uh = gp__fdiv(n.x, d.x);
    vec2 p = gp__two_prod(uh, d.x);
    precise float res = ((n.x - p.x) - p.y) + (nl - uh * dl);
    precise float ul = gp__fdiv(res, d.x);
    vec2 a = gp__atan_kernel(uh, ul);
    vec2 s = gp__two_sum(PIO4_H, a.x);
    precise float lo = s.y + (a.y + PIO4_L);
    return gp__fast_two_sum(s.x, lo);
}

// @function gp_arctan requires gp__isnan gp__two_prod gp__two_sum gp__atan_unit gp__copysign gp__fdiv
// |x| <= 1: gp__atan_unit; |x| > 1: pi/2 - atan(1/|x|) with 1/|x| as a
// residual-corrected double-float.  No cancellation anywhere (result >= 0.39
// whenever a constant is added).
float gp_arctan(float x) {
    const float PIO2_H = 1.570796371e+00;
    const float PIO2_L = -4.371138829e-08;
    if (gp__isnan(x)) return x;
    float ax = abs(x);
    if (ax < 2.44140625e-04) return x;            // 2^-12: keeps -0, denormals
    precise float y;
    if (ax <= 1.0) {
        vec2 a = gp__atan_unit(vec2(ax, 0.0));
        y = a.x + a.y;
    } else {
        precise float th = gp__fdiv(1.0, ax);
        precise float tl = 0.0;
        if (ax < 67108864.0) {                    // 2^26; beyond, tl is irrelevant
            vec2 p = gp__two_prod(th, ax);
            precise float res = (1.0 - p.x) - p.y;
            tl = gp__fdiv(res, ax);
        }
        vec2 a = gp__atan_unit(vec2(th, tl));
        vec2 s = gp__two_sum(PIO2_H, -a.x);
        y = s.x + ((s.y - a.y) + PIO2_L);
    }
    return gp__copysign(y, x);
}

// @function gp_arctan2 requires gp__isnan gp__isinf gp__signbit gp__copysign gp__two_prod gp__two_sum gp__fast_two_sum gp__atan_unit gp__ldexp gp__fdiv gp__div_rn
// C99 atan2 special cases (signed zeros, infinities), then t = min/max of
// |x|, |y| as a residual-corrected double-float (operands scaled by a power
// of two so the exact product cannot overflow; below 2^-100, where
// atan t = t, the correctly rounded quotient), theta = atan(t), then
// pi/2 - theta and pi - theta in double-float as the octant requires.
float gp_arctan2(float y, float x) {
    const float PIO2_H = 1.570796371e+00;
    const float PIO2_L = -4.371138829e-08;
    const float PI_H = 3.141592741e+00;
    const float PI_L = -8.742277657e-08;
    if (gp__isnan(x) || gp__isnan(y)) {
        precise float n = x + y;
        return n;
    }
    float ax = abs(x), ay = abs(y);
    if (ay == 0.0 && ax == 0.0) {
        return gp__signbit(x) ? gp__copysign(PI_H, y) : y;
    }
    if (gp__isinf(ax) && gp__isinf(ay)) { ax = 1.0; ay = 1.0; }
    bool swap = ay > ax;
    float num = swap ? ax : ay;
    float den = swap ? ay : ax;
    precise float th = gp__fdiv(num, den);
    precise float tl = 0.0;
    if (th > 7.88860905e-31 && !gp__isinf(den)) {   // 2^-100; else atan t = t
        int e = int((floatBitsToUint(den) >> 23) & 0xffu) - 127;
        if (e < -126) e = -126;
        precise float dn = gp__ldexp(den, -e);
        precise float nn = gp__ldexp(num, -e);
        vec2 p = gp__two_prod(th, dn);
        precise float res = (nn - p.x) - p.y;
        tl = gp__fdiv(res, dn);
    } else if (!gp__isinf(den)) {
        // atan t = t here, so the quotient is the result: rounded correctly
        // (GLSL's `/` may be 2.5 ulp off; the residual above would underflow).
        th = gp__div_rn(num, den);
    }
    vec2 a = gp__atan_unit(vec2(th, tl));
    if (swap) {
        vec2 s = gp__two_sum(PIO2_H, -a.x);
        precise float lo = (s.y - a.y) + PIO2_L;
        a = gp__fast_two_sum(s.x, lo);
    }
    if (gp__signbit(x)) {
        vec2 s = gp__two_sum(PI_H, -a.x);
        precise float lo = (s.y - a.y) + PI_L;
        a = gp__fast_two_sum(s.x, lo);
    }
    precise float r = a.x + a.y;
    return gp__copysign(r, y);
}

// @function gp__asin_poly
// asin(x) = x + x^3 B(x^2) for |x| <= 1/2; returns B(z), minimax degree 6
// (2^-35.8).
float gp__asin_poly(float z) {
    const float ASIN_B0 = 1.666666716e-01;
    const float ASIN_B1 = 7.499949634e-02;
    const float ASIN_B2 = 4.465987161e-02;
    const float ASIN_B3 = 3.011295572e-02;
    const float ASIN_B4 = 2.460577339e-02;
    const float ASIN_B5 = 7.497195620e-03;
    const float ASIN_B6 = 3.466987982e-02;
    precise float b = fma(fma(fma(fma(fma(fma(ASIN_B6, z, ASIN_B5), z, ASIN_B4), z, ASIN_B3),
                                  z, ASIN_B2), z, ASIN_B1), z, ASIN_B0);
    return b;
}

// @function gp__asin_sqrt_half requires gp__sqr gp__asin_poly gp__fdiv gp__fsqrt
// For 1/2 < a <= 1: asin(s) with s = sqrt((1-a)/2) as an unevaluated pair.
// z = (1-a)/2 is exact, s = sqrt(z) is a double-float (residual-corrected,
// so an approximate sqrt is fine), and s^2 = z exactly feeds the polynomial.
vec2 gp__asin_sqrt_half(float a) {
    precise float z = (1.0 - a) * 0.5;
    precise float sh = gp__fsqrt(z);
    precise float sl = 0.0;
    if (sh > 0.0) {
        vec2 p = gp__sqr(sh);
        precise float res = (z - p.x) - p.y;
        sl = gp__fdiv(res, 2.0 * sh);
    }
    precise float tail = fma(sh * z, gp__asin_poly(z), sl);
    return vec2(sh, tail);
}

// @function gp_arcsin requires gp__isnan gp__nan gp__asin_poly gp__asin_sqrt_half gp__two_sum gp__copysign
// |x| <= 1/2: x + x^3 B(x^2).  |x| > 1/2: pi/2 - 2 asin(sqrt((1-|x|)/2)) in
// double-float (result >= pi/6, so the subtraction loses at most one bit,
// absorbed by the double-float).
float gp_arcsin(float x) {
    const float PIO2_H = 1.570796371e+00;
    const float PIO2_L = -4.371138829e-08;
    if (gp__isnan(x)) return x;
    float ax = abs(x);
    if (ax > 1.0) return gp__nan();
    if (ax < 2.44140625e-04) return x;            // 2^-12
    precise float y;
    if (ax <= 0.5) {
        precise float z = x * x;
        y = fma(x * z, gp__asin_poly(z), x);
        return y;
    }
    vec2 a = gp__asin_sqrt_half(ax);
    vec2 s = gp__two_sum(PIO2_H, -2.0 * a.x);
    y = s.x + ((s.y - 2.0 * a.y) + PIO2_L);
    return gp__copysign(y, x);
}

// @function gp_arccos requires gp__isnan gp__nan gp__asin_poly gp__asin_sqrt_half gp__two_sum
// |x| <= 1/2: pi/2 - asin(x); x > 1/2: 2 asin(sqrt((1-x)/2));
// x < -1/2: pi - 2 asin(sqrt((1+x)/2)); all sums in double-float.
float gp_arccos(float x) {
    const float PIO2_H = 1.570796371e+00;
    const float PIO2_L = -4.371138829e-08;
    const float PI_H = 3.141592741e+00;
    const float PI_L = -8.742277657e-08;
    if (gp__isnan(x)) return x;
    float ax = abs(x);
    if (ax > 1.0) return gp__nan();
    precise float y;
    if (ax <= 0.5) {
        precise float z = x * x;
        precise float t = x * z * gp__asin_poly(z);
        vec2 s = gp__two_sum(PIO2_H, -x);
        y = s.x + ((s.y - t) + PIO2_L);
        return y;
    }
    vec2 a = gp__asin_sqrt_half(ax);
    if (x > 0.0) {
        y = 2.0 * a.x + 2.0 * a.y;
        return y;
    }
    vec2 s = gp__two_sum(PI_H, -2.0 * a.x);
    y = s.x + ((s.y - 2.0 * a.y) + PI_L);
    return y;
}

// @function gp_hypot requires gp__isnan gp__isinf gp__inf gp__sqr gp__two_sum gp__fast_two_sum gp__ldexp gp__ldexp_df gp__fdiv gp__fsqrt
// sqrt(x^2 + y^2): hypot(+-inf, NaN) = inf (C99).  Both operands are scaled
// by 2^-e (e = exponent of the larger), squares and sum are exact
// double-floats, and the square root gets one residual correction, so the
// result is rounded once (~0.5 ulp) and never overflows or underflows early.
float gp_hypot(float x, float y) {
    float ax = abs(x), ay = abs(y);
    if (gp__isinf(ax) || gp__isinf(ay)) return gp__inf();
    if (gp__isnan(x) || gp__isnan(y)) {
        precise float n = x + y;
        return n;
    }
    float a = max(ax, ay);
    float b = min(ax, ay);
    if (b == 0.0) return a;
    int e = int(floatBitsToUint(a) >> 23) - 127;
    if (e < -126) e = -126;                       // denormal a: 2^126 scaling is exact
    precise float as = gp__ldexp(a, -e);
    precise float bs = gp__ldexp(b, -e);
    vec2 A = gp__sqr(as);
    vec2 B = gp__sqr(bs);
    vec2 S = gp__two_sum(A.x, B.x);
    precise float Sl = S.y + (A.y + B.y);
    vec2 Sn = gp__fast_two_sum(S.x, Sl);
    precise float sh = gp__fsqrt(Sn.x);
    vec2 p = gp__sqr(sh);
    precise float res = ((Sn.x - p.x) - p.y) + Sn.y;
    precise float rl = gp__fdiv(res, 2.0 * sh);
    return gp__ldexp_df(sh, rl, e);   // one rounding, also for denormal results
}
