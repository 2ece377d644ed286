// float64 square roots correctly rounded (as NumPy's) where the device's
// double sqrt() is not (the float probe measures it; NVIDIA's is not), the
// way glsl_math's gp__sqrt_rn does it for float32: x = xs * 4^k with xs in
// [1, 4), the builtin root of xs, then steps of one ulp (at most 8) while the
// neighbour's exact residual xs - r^2 is smaller, and the root scaled back
// by 2^k (exact: the root of a double is normal).

// @function gpo_fsqrt_f64
// The builtin root; in a GPU-like build (GPUPY_LOOSE_SQRT, see
// glsl_codegen.hpp) moved by -2..2 ulp for a normal result, as a hash of
// x's bits picks: what a device may return.
double gpo_fsqrt_f64(double x) {
    precise double r = sqrt(x);
#ifdef GPUPY_LOOSE_SQRT
    uvec2 u = unpackDouble2x32(r);
    uint e = u.y & 0x7ff00000u;
    if (e > 0x00100000u && e < 0x7fe00000u) {
        uvec2 b = unpackDouble2x32(x);
        uint h = (b.x ^ (b.y * 0x2545f491u)) * 0x9e3779b1u;
        h ^= h >> 16;
        h *= 0x85ebca6bu;
        h ^= h >> 13;
        uint k = h % 5u;  // 0..4: -2..2 ulp
        uint lo = u.x + k;
        u.y += lo < u.x ? 1u : 0u;
        u.x = lo;
        u.y -= u.x < 2u ? 1u : 0u;
        u.x -= 2u;
        r = packDouble2x32(u);
    }
#endif
    return r;
}

// @function gpo_two_prod_f64
// a * b = p + e exactly (Dekker, splitting at 2^27 + 1; no fma needed),
// for |a|, |b| well inside the range (here: in [1, 4)).
dvec2 gpo_two_prod_f64(double a, double b) {
    precise double p = a * b;
    precise double ta = 134217729.0lf * a;
    precise double ah = ta - (ta - a);
    precise double al = a - ah;
    precise double tb = 134217729.0lf * b;
    precise double bh = tb - (tb - b);
    precise double bl = b - bh;
    precise double e = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
    return dvec2(p, e);
}

// @function gpo_sqrt_rn_f64 requires gpo_fsqrt_f64 gpo_two_prod_f64
// Zeros, negatives, infinities and NaN keep the builtin root (IEEE's
// values; gpo_sqrt_guard_f64 makes negatives NaN). They are told apart,
// and a subnormal x is normalised, by integer operations on the bits: the
// device's double arithmetic is never asked about a subnormal (an H200
// returned the roots of subnormals one ulp low where they were compared
// with zero and scaled by a product with 2^128).
double gpo_sqrt_rn_f64(double x) {
    precise double r = gpo_fsqrt_f64(x);
    uvec2 u = unpackDouble2x32(x);
    if ((u.y & 0x80000000u) != 0u || (u.x | u.y) == 0u || u.y >= 0x7ff00000u) return r;
    int e = int(u.y >> 20) - 1023;
    uint hi = u.y & 0x000fffffu, lo = u.x;
    if (e == -1023) {
        // x = m 2^-1074 with m < 2^52: shifted left by s so that its
        // leading one is the implicit bit 52, x = 1.f 2^(-1022 - s).
        int s = 52 - (hi != 0u ? 32 + findMSB(hi) : findMSB(lo));
        if (s >= 32) {
            hi = lo << (s - 32);
            lo = 0u;
        } else {
            hi = (hi << s) | (lo >> (32 - s));
            lo = lo << s;
        }
        hi &= 0x000fffffu;
        e = -1022 - s;
    }
    int k = e >> 1;
    precise double xs = packDouble2x32(uvec2(lo, hi | (uint(1023 + e - 2 * k) << 20)));
    precise double rs = gpo_fsqrt_f64(xs);
    dvec2 p = gpo_two_prod_f64(rs, rs);
    precise double d = (xs - p.x) - p.y;
    for (int i = 0; i < 8; ++i) {
        // xs - rs^2 > 0: rs is too small. rs lies in [1, 2], so a step of
        // the bits is a step of one ulp.
        uvec2 b = unpackDouble2x32(rs);
        if (d > 0.0lf) {
            b.x += 1u;
            b.y += b.x == 0u ? 1u : 0u;
        } else {
            b.y -= b.x == 0u ? 1u : 0u;
            b.x -= 1u;
        }
        double n = packDouble2x32(b);
        dvec2 q = gpo_two_prod_f64(n, n);
        precise double dn = (xs - q.x) - q.y;
        if (!(abs(dn) < abs(d))) break;
        rs = n;
        d = dn;
    }
    precise double root = rs * packDouble2x32(uvec2(0u, uint(k + 1023) << 20));
    return root;
}
