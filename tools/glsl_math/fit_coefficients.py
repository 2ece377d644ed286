#!/usr/bin/env python3
"""Derive the polynomial coefficients used in drivers/glsl/glsl_math/*.glsl.

Each kernel polynomial P(v) is fitted in the minimax sense to a target g(x)
with an error weight w(x) chosen so that w*(P - g) is the error that P
contributes to the *final* function value, relative to that value.  The fit
is a discrete Lawson (iteratively reweighted least squares) minimax on a
dense Chebyshev-distributed grid, with the targets evaluated in mpmath at 50
digits.  Coefficients are then rounded to float32 one at a time, low order
first, refitting the remaining higher-order ones after each rounding (the
low-order coefficients matter most, and the refit lets the higher ones absorb
the rounding error of the lower ones).

Usage:  python3 tools/glsl_math/fit_coefficients.py          (prints GLSL)
Needs:  numpy, mpmath (dev-only).
"""
import sys
import numpy as np
import mpmath as mp

mp.mp.dps = 50
NPTS = 3000


def f32(v):
    return float(np.float32(v))


def lawson(V, G, W, deg, fixed, iters=400):
    """min_c max_i |W_i (sum_k c_k V_i^k - G_i)| with c_k fixed for k in fixed."""
    free = [k for k in range(deg + 1) if k not in fixed]
    scale = np.max(np.abs(V))
    A = np.stack([(V / scale) ** k for k in free], axis=1) * W[:, None]
    rhs = (G - sum(fixed[k] * V ** k for k in fixed)) * W
    lw = np.ones(len(V)) / len(V)
    best = None
    for _ in range(iters):
        sw = np.sqrt(lw)
        c, *_ = np.linalg.lstsq(A * sw[:, None], rhs * sw, rcond=None)
        err = np.abs(A @ c - rhs)
        m = err.max()
        if best is None or m < best[0]:
            best = (m, c.copy())
        lw = lw * err
        s = lw.sum()
        if s == 0:
            break
        lw /= s
    m, c = best
    coef = dict(fixed)
    for k, ck in zip(free, c):
        coef[k] = ck / scale ** k
    return [coef[k] for k in range(deg + 1)]


def fit(name, xs, g, w, v, deg, exact=None):
    """Fit P of degree deg in variable v(x) to g(x) with weight w(x).

    exact: {k: value} coefficients that are fixed (already exact floats)."""
    X = [mp.mpf(x) for x in xs]
    G = np.array([float(g(x)) for x in X])
    W = np.array([float(w(x)) for x in X])
    V = np.array([float(v(x)) for x in X])
    fixed = dict(exact or {})
    for k in range(deg + 1):
        if k in fixed:
            continue
        c = lawson(V, G, W, deg, fixed)
        fixed[k] = f32(c[k])
    coefs = [fixed[k] for k in range(deg + 1)]
    # Error of the float32 polynomial, evaluated exactly (mpmath) on a
    # denser grid than the fit used.
    X2 = cheb(float(min(xs)), float(max(xs)), 4 * NPTS)
    e = 0.0
    for x in X2:
        x = mp.mpf(x)
        vv = mp.mpf(float(v(x)))
        p = mp.mpf(0)
        for ck in reversed(coefs):
            p = p * vv + mp.mpf(ck)
        e = max(e, abs(float(w(x) * (p - g(x)))))
    return name, coefs, e


def cheb(a, b, n):
    k = np.arange(n)
    x = np.cos(np.pi * (k + 0.5) / n)
    return list(0.5 * (a + b) + 0.5 * (b - a) * x)


def glsl(v):
    """float32 literal that any correct string->float conversion maps back to
    the same float (9 significant digits of the exact float value)."""
    return "%.9e" % np.float32(v)


def split_f32(v, bits=24):
    """v = hi + lo with hi having `bits` significant bits, lo = float32(v - hi)."""
    v = mp.mpf(v)
    e = int(mp.floor(mp.log(abs(v), 2)))
    q = mp.mpf(2) ** (e - bits + 1)
    hi = mp.nint(v / q) * q
    return float(hi), f32(v - hi)


def print_constants():
    """Constants used by the kernels, split into float32 pieces."""
    pi = mp.pi
    out = []
    def df(name, v):
        hi = f32(v)
        lo = f32(mp.mpf(v) - hi)
        out.append((name + "_H", hi))
        out.append((name + "_L", lo))
    def hl(name, v, bits):
        hi, lo = split_f32(v, bits)
        out.append((name + "_HI", hi))
        out.append((name + "_LO", lo))
    hl("LN2_16", mp.log(2), 16)          # k*LN2_16_HI exact for |k| < 256
    hl("LOG10_2_16", mp.log10(2), 16)
    df("LN2", mp.log(2))
    df("LOG2E", 1 / mp.log(2))
    df("LOG10E", 1 / mp.log(10))
    df("TWO_THIRDS", mp.mpf(2) / 3)
    df("TWO_FIFTHS", mp.mpf(2) / 5)
    df("SIXTH", mp.mpf(1) / 6)
    df("TWENTYFOURTH", mp.mpf(1) / 24)
    df("PIO2", pi / 2)
    df("PIO4", pi / 4)
    df("PI", pi)
    out.append(("LOG2E_F", f32(1 / mp.log(2))))
    out.append(("TWO_OVER_PI_F", f32(2 / pi)))
    p1 = f32(pi / 2)
    p2 = f32(pi / 2 - p1)
    p3 = f32(pi / 2 - p1 - p2)
    out += [("PIO2_1", p1), ("PIO2_2", p2), ("PIO2_3", p3)]
    for n, v in out:
        assert float(np.float32(glsl(v))) == v, n
        print(f"const float {n} = {glsl(v)};")
    # Bits of 2/pi for Payne-Hanek reduction: word j (j >= 1) holds bits
    # 32(j-1)+1 .. 32j after the binary point; word 0 is the zero padding
    # for the (always zero) bits at and before the binary point.
    mp.mp.dps = 120
    words = [0]
    v = 2 / mp.pi
    for j in range(1, 8):
        words.append(int(mp.floor(v * mp.mpf(2) ** (32 * j))) % 2 ** 32)
    mp.mp.dps = 50
    print("const uint TWO_OVER_PI_BITS[8] = uint[8](" +
          ", ".join("0x%08xu" % w for w in words) + ");")


def main():
    fits = []
    # exp: e^r = 1 + r + r^2 Q(r), |r| <= ln2/2 (+ margin for the df input).
    R = 0.3470
    fits.append(fit("EXP_Q", cheb(-R, R, NPTS),
                    lambda r: (mp.exp(r) - 1 - r) / r ** 2,
                    lambda r: r ** 2 / mp.exp(r), lambda r: r, 5,
                    exact={0: 0.5}))
    # accurate expm1 kernel: e^r - 1 = r + r^2/2 + r^3/6 + r^4/24 + r^5 P(r),
    # the first terms evaluated in double-float (gp__expm1_kernel_df).
    fits.append(fit("EXPM1_P", cheb(-R, R, NPTS),
                    lambda r: (mp.exp(r) - 1 - r - r * r / 2 - r ** 3 / 6 - r ** 4 / 24) / r ** 5,
                    lambda r: r ** 5 / mp.exp(r), lambda r: r, 4))
    # log: log1p(f) = 2s + s z (2/3 + z R(z)), s = f/(2+f), z = s^2,
    # f in [sqrt(1/2)-1, sqrt(2)-1] -> |s| <= 0.17158.
    S = 0.17160
    fits.append(fit("LOG_R", cheb(1e-4, S, NPTS),
                    lambda s: 2 * (mp.atanh(s) / s - 1 - s * s / 3) / s ** 4,
                    lambda s: s ** 4 / 2, lambda s: s * s, 2))
    # double-float kernel (gp__log1p_kernel): 2/3 and 2/5 z are evaluated in
    # double-float, the rest is z^2 RB(z).
    fits.append(fit("LOG_RB", cheb(1e-4, S, NPTS),
                    lambda s: 2 * (mp.atanh(s) / s - 1 - s * s / 3 - s ** 4 / 5) / s ** 6,
                    lambda s: s ** 6 / 2, lambda s: s * s, 2))
    # sin(r) = r + r^3 S(r^2), cos(r) = 1 - r^2/2 + r^4 C(r^2), |r| <= 0.8
    # (pi/4 plus the slack of rounding k = rint(x*2/pi) in float).
    T = 0.8
    # double-float sin kernel: sin r = r - r^3/6 + r^5 T(r^2) (-r^3/6 exact-ish)
    fits.append(fit("SIN_T", cheb(1e-4, T, NPTS),
                    lambda r: (mp.sin(r) - r + r ** 3 / 6) / r ** 5,
                    lambda r: r ** 5 / mp.sin(r), lambda r: r * r, 2))
    fits.append(fit("COS_C", cheb(1e-4, T, NPTS),
                    lambda r: (mp.cos(r) - 1 + r * r / 2) / r ** 4,
                    lambda r: r ** 4 / mp.cos(r), lambda r: r * r, 3))
    # atan(t) = t + t^3 A(t^2), |t| <= tan(pi/8) = 0.41421.
    A = 0.41430
    fits.append(fit("ATAN_A", cheb(1e-4, A, NPTS),
                    lambda t: (mp.atan(t) - t) / t ** 3,
                    lambda t: t ** 3 / mp.atan(t), lambda t: t * t, 5))
    # asin(x) = x + x^3 B(x^2), |x| <= 0.5.
    fits.append(fit("ASIN_B", cheb(1e-4, 0.5, NPTS),
                    lambda x: (mp.asin(x) - x) / x ** 3,
                    lambda x: x ** 3 / mp.asin(x), lambda x: x * x, 6))
    # sinh(x) = x + x^3 H(x^2), |x| <= 1.
    fits.append(fit("SINH_H", cheb(1e-4, 1.0, NPTS),
                    lambda x: (mp.sinh(x) - x) / x ** 3,
                    lambda x: x ** 3 / mp.sinh(x), lambda x: x * x, 3))
    print_constants()
    for name, coefs, err in fits:
        print(f"// {name}: weighted max error {err:.3e} (2^{np.log2(err):.1f})")
        for k, c in enumerate(coefs):
            print(f"const float {name}{k} = {glsl(c)};")
    return 0


if __name__ == "__main__":
    sys.exit(main())
