// gpupy GLSL float32 math library: shared helpers.
//
// Conventions (see README.md): every function is preceded by a marker line
// "// @function NAME [requires DEP ...]"; public functions are gp_<numpy
// name>, helpers gp__<name>.  No #version, no globals.
//
// Why `precise` everywhere: the error-free transformations below (TwoSum,
// Veltkamp splitting, residuals such as (a - p) - e) are only exact if the
// compiler evaluates them literally.  Measured on Mesa llvmpipe: without
// `precise`, (1 - (1 + x)) + x is folded to 0.  GLSL promises literal
// evaluation only for values that feed a `precise` variable, so every
// intermediate that matters is stored in one, and functions return only
// `precise` values.
//
// Why no fma() for exactness: GLSL 4.50 allows fma() to be a separate multiply
// and add, and Mesa llvmpipe 22.3 does exactly that (fma(a, b, -a*b) is 0).
// Exact products therefore use Dekker's algorithm (gp__two_prod), which needs
// only correctly rounded * and + (guaranteed by GLSL).  fma() is still used in
// polynomial evaluation, where fused or not only changes the last bit of a
// small term.
//
// Denormals: compute shaders on llvmpipe keep denormal inputs and results,
// but the builtin ldexp() flushes denormal results, so results are scaled
// with gp__ldexp (two exact power-of-two multiplies).  Hardware that flushes
// denormals in arithmetic will flush them here too.

// @function gp__isnan
// Bit test: immune to compilers that assume no NaNs.
bool gp__isnan(float x) {
    return (floatBitsToUint(x) & 0x7fffffffu) > 0x7f800000u;
}

// @function gp__isinf
bool gp__isinf(float x) {
    return (floatBitsToUint(x) & 0x7fffffffu) == 0x7f800000u;
}

// @function gp__signbit
bool gp__signbit(float x) {
    return (floatBitsToUint(x) & 0x80000000u) != 0u;
}

// @function gp__copysign
// |x| with the sign bit of s (bitwise, so it works for 0, inf and NaN).
float gp__copysign(float x, float s) {
    return uintBitsToFloat((floatBitsToUint(x) & 0x7fffffffu) |
                           (floatBitsToUint(s) & 0x80000000u));
}

// @function gp__inf
float gp__inf() {
    return uintBitsToFloat(0x7f800000u);
}

// @function gp__nan
float gp__nan() {
    return uintBitsToFloat(0x7fc00000u);
}

// @function gp__ldexp
// x * 2^n for n in [-252, 254], with a single rounding (only when the result
// is denormal) and correct overflow to inf.  2^n is split in two normal
// factors; the first product is exact for the |x| >= 2^-50 used here.
float gp__ldexp(float x, int n) {
    int n1 = n >> 1;
    int n2 = n - n1;
    precise float y = x * intBitsToFloat((n1 + 127) << 23);
    precise float r = y * intBitsToFloat((n2 + 127) << 23);
    return r;
}

// @function gp__ldexp_df requires gp__ldexp gp__two_sum
// (hi + lo) * 2^k rounded once, for hi in [0.5, 4], |lo| < ulp(hi), k >= -253.
// Normal results: hi + lo is rounded, then scaled exactly.  Denormal results
// (hi < C = 2^(-126-k)): rounding hi + lo first and again when scaling could
// be off by one ulp, so hi + lo is rounded directly to the denormal grid
// 2^(-149-k) = ulp(C) by adding C with an exact TwoSum and removing it again
// (exact); scaling that grid value by 2^k is then exact.
float gp__ldexp_df(float hi, float lo, int k) {
    if (k <= -126) {
        precise float C = intBitsToFloat(min(1 - k, 254) << 23);
        if (hi < C) {
            vec2 s = gp__two_sum(C, hi);
            precise float t = s.x + (s.y + lo);
            precise float u = t - C;
            return gp__ldexp(u, k);
        }
    }
    precise float v = hi + lo;
    return gp__ldexp(v, k);
}

// @function gp__two_sum
// Knuth's TwoSum: s + e == a + b exactly, |e| <= ulp(s)/2 (no overflow).
vec2 gp__two_sum(float a, float b) {
    precise float s = a + b;
    precise float bb = s - a;
    precise float e = (a - (s - bb)) + (b - bb);
    return vec2(s, e);
}

// @function gp__fast_two_sum
// Dekker's Fast2Sum: exact when exponent(a) >= exponent(b) or a == 0.
vec2 gp__fast_two_sum(float a, float b) {
    precise float s = a + b;
    precise float e = b - (s - a);
    return vec2(s, e);
}

// @function gp__split
// Veltkamp split: a == h + l with h and l of at most 12 significant bits, so
// products of halves are exact.  Valid for |a| < 2^115 (4097 a must not
// overflow); callers keep their operands in range (gp_fmod prescales).
vec2 gp__split(float a) {
    precise float c = 4097.0 * a;
    precise float h = c - (c - a);
    precise float l = a - h;
    return vec2(h, l);
}

// @function gp__two_prod requires gp__split
// Dekker's TwoProduct: p + e == a * b exactly for |a|, |b| < 2^115, barring
// underflow of the error term (|a b| > ~2^-100) and overflow of the product.
// With a constant operand its split is folded at compile time.
vec2 gp__two_prod(float a, float b) {
    precise float p = a * b;
    vec2 as = gp__split(a);
    vec2 bs = gp__split(b);
    precise float e = ((as.x * bs.x - p) + as.x * bs.y + as.y * bs.x) + as.y * bs.y;
    return vec2(p, e);
}

// @function gp__sqr requires gp__split
// a^2 == p + e exactly: TwoProduct with a single split.
vec2 gp__sqr(float a) {
    precise float p = a * a;
    vec2 s = gp__split(a);
    precise float e = ((s.x * s.x - p) + 2.0 * s.x * s.y) + s.y * s.y;
    return vec2(p, e);
}

// @function gp__df_mul requires gp__two_prod gp__fast_two_sum
// Double-float product (a.x + a.y) * (b.x + b.y), relative error ~2^-45,
// normalized result.
vec2 gp__df_mul(vec2 a, vec2 b) {
    vec2 p = gp__two_prod(a.x, b.x);
    precise float e = p.y + (a.x * b.y + a.y * b.x);
    return gp__fast_two_sum(p.x, e);
}

// @function gp__sqrt_rn requires gp__sqr
// sqrt(x) correctly rounded (as NumPy's IEEE sqrt) where GLSL's sqrt() is
// only accurate to a few ulp: the builtin root, then steps of one ulp
// towards x while the neighbour's square is closer to x. The residual
// x - r^2 is exact up to its last rounding (gp__sqr's p + e is r^2 exactly,
// and x - p is exact by Sterbenz), and neighbouring residuals differ by
// about 2 r ulp(r), so the comparison never errs; no tie exists (the square
// of a midpoint needs 50 bits). Inputs outside [2^-100, 2^100] keep the
// builtin root (the error term would under- or overflow).
float gp__sqrt_rn(float x) {
    precise float r = sqrt(x);
    if (x > 7.88860905e-31 && x < 1.2676506e30) {
        vec2 p = gp__sqr(r);
        precise float d = (x - p.x) - p.y;
        for (int k = 0; k < 4; ++k) {
            // x - r^2 > 0: r is too small.
            float n = uintBitsToFloat(d > 0.0 ? floatBitsToUint(r) + 1u : floatBitsToUint(r) - 1u);
            vec2 q = gp__sqr(n);
            precise float dn = (x - q.x) - q.y;
            if (!(abs(dn) < abs(d))) break;
            r = n;
            d = dn;
        }
    }
    return r;
}

// @function gp__div_rn requires gp__two_prod
// a / b correctly rounded (as NumPy's IEEE division) even where GLSL's `/` is
// only accurate to 2.5 ulp (NVIDIA): one residual-based correction step.
// Operands/quotients outside [2^-100, 2^100] keep the builtin quotient (the
// residual would under- or overflow); on llvmpipe `/` is already exact.
float gp__div_rn(float a, float b) {
    precise float q = a / b;
    float aa = abs(a), ab = abs(b), aq = abs(q);
    if (aa > 7.88860905e-31 && aa < 1.2676506e30 && ab > 7.88860905e-31 &&
        ab < 1.2676506e30 && aq > 7.88860905e-31 && aq < 1.2676506e30) {
        vec2 p = gp__two_prod(q, b);
        precise float r = (a - p.x) - p.y;   // a - q*b, a - p.x exact (Sterbenz)
        precise float q1 = q + r / b;
        q = q1;
    }
    return q;
}
