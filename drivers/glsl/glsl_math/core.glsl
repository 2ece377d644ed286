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

// @function gp__ftz
// x as NVIDIA's float32 arithmetic leaves it, in shaders built to behave as
// a GPU that flushes float32 subnormals (GLSL allows it; NVIDIA's compute
// shaders do): a subnormal becomes a zero of its sign, and a NaN that
// device's one NaN, 0x7fffffff (which NaN an operation returns is the
// device's choice; x86 keeps the operand's). The OpenGL driver builds them
// so where the device flushes, and on any device when GPUPY_GL_FLOAT_PROBE
// names subnormals_flushed, so that a CPU renderer can test what such a GPU
// returns; elsewhere this is x.
float gp__ftz(float x) {
#ifdef GPUPY_FLUSH_SUBNORMALS
    uint u = floatBitsToUint(x);
    if ((u & 0x7f800000u) == 0u) return uintBitsToFloat(u & 0x80000000u);
    return (u & 0x7fffffffu) > 0x7f800000u ? uintBitsToFloat(0x7fffffffu) : x;
#else
    return x;
#endif
}

// @function gp__loosen
// A normal result q moved by -k..k ulp, as a hash of `h` (the operands'
// bits) picks: what GLSL lets `/` (2.5 ulp) and sqrt() return, and no
// device has to. Results near the ends of the exponent range stay as they
// are, so that the step cannot reach a subnormal or infinity.
float gp__loosen(float q, uint h, uint k) {
    uint u = floatBitsToUint(q);
    uint e = u & 0x7f800000u;
    if (e <= 0x00800000u || e >= 0x7f000000u) return q;
    h *= 0x9e3779b1u;
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    return uintBitsToFloat(u + uint(int(h % (2u * k + 1u)) - int(k)));
}

// @function gp__fdiv requires gp__ftz gp__loosen
// a / b for the library: GLSL's operator, which a device may round to 2.5
// ulp. The library's routines correct for that (gp__div_rn's residual
// step, the double-float quotients' low parts). A device's `/` may also be
// a times the reciprocal of b (NVIDIA's is), and where |b| > 2^126 that
// reciprocal is subnormal, which such a device flushes: inf / FLT_MAX came
// out NaN and 7.5 / FLT_MAX zero on an H200. Such a divisor is divided by 4
// first and the quotient after (exact, but where the quotient is
// subnormal; a quotient of such a divisor is below 4, so never overflows).
// Shaders built to behave as such a device (GPUPY_GL_FLOAT_PROBE=
// division_inexact) really compute a times a reciprocal flushed whatever
// the build flushes, as NVIDIA's is (1.5 ulp), and move the quotient one
// ulp more (GLSL's 2.5 ulp), so that the corrections are tested on any
// device, and flush subnormal operands and results where that is built in.
float gp__fdiv(float a, float b) {
    precise float fa = gp__ftz(a), fb = gp__ftz(b);
    bool huge = abs(fb) > 8.50705917e37;  // 2^126
    precise float d = huge ? fb * 0.25 : fb;
#ifdef GPUPY_LOOSE_DIVISION
    precise float r = 1.0 / d;
    r = (floatBitsToUint(r) & 0x7f800000u) == 0u ? uintBitsToFloat(floatBitsToUint(r) & 0x80000000u) : r;
    precise float q = fa * r;
    q = gp__loosen(q, floatBitsToUint(a) ^ (floatBitsToUint(b) * 0x27d4eb2du), 1u);
#else
    precise float q = fa / d;
#endif
    if (huge) q = q * 0.25;
    return gp__ftz(q);
}

// @function gp__fsqrt requires gp__ftz gp__loosen
// sqrt(x) for the library: GLSL's builtin, about 3 ulp where a device
// chooses; loose by up to 2 ulp in shaders built to behave so
// (GPUPY_GL_FLOAT_PROBE=sqrt_inexact), as gp__fdiv.
float gp__fsqrt(float x) {
    precise float r = sqrt(gp__ftz(x));
#ifdef GPUPY_LOOSE_SQRT
    r = gp__loosen(r, floatBitsToUint(x) * 0x2545f491u, 2u);
#endif
    return gp__ftz(r);
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

// @function gp__sqrt_rn requires gp__sqr gp__fsqrt
// sqrt(x) correctly rounded (as NumPy's IEEE sqrt) where GLSL's sqrt() is
// only accurate to a few ulp. x = xs * 4^k with xs in [1, 4), so that
// sqrt(x) = sqrt(xs) * 2^k exactly (a subnormal x is first scaled by 2^64);
// sqrt(xs) is the builtin root, then steps of one ulp towards xs while the
// neighbour's square is closer to xs (at most 8: the builtin's few ulp,
// plus 2 where a GPU-like build loosens a device's already loose root).
// The residual xs - r^2 is exact up to its last rounding (gp__sqr's p + e
// is r^2 exactly, and xs - p is exact by Sterbenz), and neighbouring
// residuals differ by about 2 r ulp(r), so the comparison never errs; no
// tie exists (the square of a midpoint needs 50 bits). The root of a
// float32 is normal, so the scaling back is exact.
// Zeros, negatives, infinities and NaN keep the builtin root (IEEE's values;
// gpo_sqrt_guard makes negatives NaN).
float gp__sqrt_rn(float x) {
    precise float r = gp__fsqrt(x);
    if (!(x > 0.0) || floatBitsToUint(x) >= 0x7f800000u) return r;
    precise float xa = x;
    int bias = 0;
    if (floatBitsToUint(x) < 0x00800000u) {
        xa = x * 18446744073709551616.0;  // 2^64: exact
        bias = -32;
    }
    int e = int(floatBitsToUint(xa) >> 23) - 127;
    int k = e >> 1;
    precise float xs = uintBitsToFloat((floatBitsToUint(xa) & 0x007fffffu) | (uint(127 + e - 2 * k) << 23));
    precise float rs = gp__fsqrt(xs);
    vec2 p = gp__sqr(rs);
    precise float d = (xs - p.x) - p.y;
    for (int i = 0; i < 8; ++i) {
        // xs - rs^2 > 0: rs is too small.
        float n = uintBitsToFloat(d > 0.0 ? floatBitsToUint(rs) + 1u : floatBitsToUint(rs) - 1u);
        vec2 q = gp__sqr(n);
        precise float dn = (xs - q.x) - q.y;
        if (!(abs(dn) < abs(d))) break;
        rs = n;
        d = dn;
    }
    precise float root = rs * intBitsToFloat((k + bias + 127) << 23);
    return root;
}

// @function gp__div_rn requires gp__two_prod gp__fdiv gp__ldexp gp__ldexp_df
// a / b correctly rounded (as NumPy's IEEE division) even where GLSL's `/` is
// only accurate to 2.5 ulp (NVIDIA). |a| = ma 2^na and |b| = mb 2^nb with ma,
// mb in [1, 2) (a subnormal operand first scaled by 2^64); ma / mb in
// (0.5, 2) is the builtin quotient, then steps of one ulp (at most 8, as
// gp__sqrt_rn) while the neighbour's residual ma - h mb is smaller (exact
// up to its last rounding: gp__two_prod, and Sterbenz), as gp__sqrt_rn; a
// correction h + r / mb would err where the quotient lies within 2^-48 of
// a midpoint (2^24 / FLT_MAX does). The result is h * 2^(na - nb): exact
// where it is normal, and rounded once with the remainder r / mb where it
// is subnormal (gp__ldexp_df). Zero, infinite and NaN operands keep the
// builtin quotient (IEEE's special values; a zero divisor is handled by
// gpo_quotient); on llvmpipe `/` is already exact.
float gp__div_rn(float a, float b) {
    precise float q = gp__fdiv(a, b);
    uint ua = floatBitsToUint(a) & 0x7fffffffu, ub = floatBitsToUint(b) & 0x7fffffffu;
    if (ua == 0u || ub == 0u || ua >= 0x7f800000u || ub >= 0x7f800000u) return q;
    int na = 0, nb = 0;
    precise float aa = uintBitsToFloat(ua), ab = uintBitsToFloat(ub);
    if (ua < 0x00800000u) {
        aa = aa * 18446744073709551616.0;  // 2^64: exact
        na = -64;
    }
    if (ub < 0x00800000u) {
        ab = ab * 18446744073709551616.0;
        nb = -64;
    }
    na += int(floatBitsToUint(aa) >> 23) - 127;
    nb += int(floatBitsToUint(ab) >> 23) - 127;
    precise float ma = uintBitsToFloat((floatBitsToUint(aa) & 0x007fffffu) | 0x3f800000u);
    precise float mb = uintBitsToFloat((floatBitsToUint(ab) & 0x007fffffu) | 0x3f800000u);
    precise float h = gp__fdiv(ma, mb);
    vec2 p = gp__two_prod(h, mb);
    precise float r = (ma - p.x) - p.y;
    for (int i = 0; i < 8; ++i) {
        // ma - h mb > 0: h is too small.
        float n = uintBitsToFloat(r > 0.0 ? floatBitsToUint(h) + 1u : floatBitsToUint(h) - 1u);
        vec2 pn = gp__two_prod(n, mb);
        precise float rn = (ma - pn.x) - pn.y;
        if (!(abs(rn) < abs(r))) break;
        h = n;
        r = rn;
    }
    // A normal result is h scaled exactly (adding the remainder would round
    // h again); a subnormal one is h + r / mb rounded once to its grid.
    int k = clamp(na - nb, -252, 254);
    bool subnormal = k <= -126 && h < uintBitsToFloat(uint(min(1 - k, 254)) << 23);
    float m = subnormal ? gp__ldexp_df(h, gp__fdiv(r, mb), k) : gp__ldexp(h, k);
    uint sign = (floatBitsToUint(a) ^ floatBitsToUint(b)) & 0x80000000u;
    return uintBitsToFloat(floatBitsToUint(m) | sign);
}

