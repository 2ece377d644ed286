// gpupy GLSL float32 math library: exact remainders and floor division with
// NumPy's semantics (numpy/_core/src/npymath: npy_fmodf, npy_divmodf,
// npy_remainderf, npy_floor_dividef).

// @function gp_fmod requires gp__isnan gp__isinf gp__nan gp__copysign gp__ldexp gp__div_rn gp__two_prod
// C fmodf: the exact remainder a - trunc(a/b) b with the sign of a
// (fmod(x, 0) = fmod(inf, y) = NaN, fmod(x, inf) = x).  Computed exactly on
// the integer significands: |a| = ma 2^ea, |b| = mb 2^eb (24-bit integers,
// denormals included), r = ma mod mb, then for each of the ea - eb bits of
// exponent difference r = (r << s) mod mb, up to 8 bits per step so that
// r << s fits in 32 bits (at most 35 steps for the extreme 2^277 ratio, one
// step when |a/b| < 2^8).
// Fast path for quotients below 2^23 (b not tiny, a not huge): q =
// trunc(RN(a/b)) is trunc(a/b) or one more (RN is monotone and trunc(a/b)
// is representable), a - q b is then computed exactly with an exact product
// (a - p.x is Sterbenz-exact) and is the remainder or the remainder - b; the
// fix-up r + b is exact because the remainder is representable.  Uses the
// correctly rounded division gp__div_rn; everything else is exact.
float gp_fmod(float a, float b) {
    if (gp__isnan(a) || gp__isnan(b) || gp__isinf(a) || b == 0.0) return gp__nan();
    float ax = abs(a), ay = abs(b);
    if (ax < ay) return a;                        // includes b = +-inf
    if (ay >= 7.88860905e-31 && ax < 8.50705917e37 && ax < ay * 8388608.0) {  // 2^-100, 2^126, 2^23
        // Operands above 2^100 are scaled by 2^-64 (exact, and the remainder,
        // a multiple of ulp(b), stays far above the denormal range) so that
        // the exact product's splitting cannot overflow.
        bool big = ay > 1.2676506e30;
        precise float xs = big ? ax * 5.42101086e-20 : ax;
        precise float ys = big ? ay * 5.42101086e-20 : ay;
        precise float q = trunc(gp__div_rn(xs, ys));
        vec2 p = gp__two_prod(q, ys);
        precise float r = (xs - p.x) - p.y;
        if (r < 0.0) r = r + ys;
        precise float rr = big ? r * 1.84467441e19 : r;   // 2^64
        return gp__copysign(rr, a);
    }
    uint ua = floatBitsToUint(ax), ub = floatBitsToUint(ay);
    int ea = int(ua >> 23), eb = int(ub >> 23);
    uint ma = ua & 0x007fffffu, mb = ub & 0x007fffffu;
    if (ea == 0) ea = 1; else ma |= 0x00800000u;
    if (eb == 0) eb = 1; else mb |= 0x00800000u;
    uint r = ma % mb;
    int d = ea - eb;
    while (d > 0 && r != 0u) {
        int s = min(d, 8);
        r = (r << s) % mb;
        d -= s;
    }
    // |result| = r 2^(eb - 150), exactly representable (multiple of the
    // spacing of b, smaller than b); gp__ldexp multiplies exactly.
    precise float v = gp__ldexp(float(r), eb - 150);
    return gp__copysign(v, a);
}

// @function gp__divmod requires gp_fmod gp__div_rn gp__copysign gp__fdiv
// npy_divmodf for b != 0: returns vec2(floor_divide, remainder).
//   mod = fmod(a, b); div = (a - mod) / b;
//   if mod != 0 and sign(b) != sign(mod): mod += b, div -= 1
//   if mod == 0: mod = copysign(0, b)
//   floordiv = floor(div), +1 if div - floordiv > 1/2 (div is an integer
//   up to rounding); div == 0: floordiv = copysign(0, a/b).
// Every operation is a correctly rounded float operation, as in NumPy.
vec2 gp__divmod(float a, float b) {
    precise float mod = gp_fmod(a, b);
    precise float am = a - mod;
    precise float div = gp__div_rn(am, b);
    if (mod != 0.0) {
        if ((b < 0.0) != (mod < 0.0)) {
            mod = mod + b;
            div = div - 1.0;
        }
    } else {
        mod = gp__copysign(0.0, b);
    }
    precise float fd;
    if (div != 0.0) {
        fd = floor(div);
        if (div - fd > 0.5) fd = fd + 1.0;
    } else {
        precise float q = gp__fdiv(a, b);
        fd = gp__copysign(0.0, q);
    }
    return vec2(fd, mod);
}

// @function gp_remainder requires gp__divmod gp_fmod
// np.remainder (Python-style modulo, sign of the divisor); b == 0: NaN.
float gp_remainder(float a, float b) {
    if (b == 0.0) return gp_fmod(a, b);
    return gp__divmod(a, b).y;
}

// @function gp_floor_divide requires gp__divmod gp__isnan gp__nan gp__inf gp__signbit
// np.floor_divide; b == 0 gives a / b (+-inf, NaN for 0/0 and NaN), built
// explicitly because GLSL leaves division by zero undefined.
float gp_floor_divide(float a, float b) {
    if (b == 0.0) {
        if (a == 0.0 || gp__isnan(a)) return gp__nan();
        return (gp__signbit(a) != gp__signbit(b)) ? -gp__inf() : gp__inf();
    }
    return gp__divmod(a, b).x;
}
