#!/usr/bin/env python3
"""Precision harness for drivers/glsl/glsl_math on headless EGL (llvmpipe).

Runs every gp_* function in a GLSL 4.50 compute shader over millions of
float32 inputs (random bit patterns, dense sampling of every binade, special
values, function-specific hard regions) and compares with
  (a) a high-precision reference: NumPy float64 (long double for
      logaddexp/logaddexp2) evaluated on the same float32 inputs; and
  (b) NumPy's own float32 ufunc.
Reports, per function: max/mean error in ulp of the exact value, max/mean
distance in ulp from the correctly rounded float32 result, max/mean distance
from NumPy float32, and mismatches in special values (NaN-ness, infinities,
the sign of zero).

Usage:  python3 tools/glsl_math/precision.py [--scale S] [--only exp,log] [--markdown]
Needs:  numpy, moderngl (pip) and an EGL/OpenGL 4.5 driver (Mesa llvmpipe
        is enough: libegl1 libgl1-mesa-dri).  Dev tool only: not part of the
        test suite.
"""
import argparse
import sys
import time
import re

import numpy as np

import glsl_lib

F32 = np.float32
RNG = np.random.default_rng(12345)
CHUNK = 1 << 21   # 32768 work groups of 64 (GL guarantees 65535 per dispatch)


# --------------------------------------------------------------------------
# GPU execution

class Runner:
    def __init__(self):
        import moderngl
        self.ctx = moderngl.create_standalone_context(backend="egl", require=450)
        self.funcs = glsl_lib.load()
        self.cache = {}

    def program(self, name, nargs, expr=None):
        key = (name, nargs, expr)
        if key not in self.cache:
            ins = "".join(
                f"layout(std430, binding={i}) readonly buffer In{i} {{ float x{i}[]; }};\n"
                for i in range(nargs))
            args = ", ".join(f"x{i}[i]" for i in range(nargs))
            call = expr or f"{name}({args})"
            src = ("#version 450\nlayout(local_size_x = 64) in;\n" + ins +
                   f"layout(std430, binding={nargs}) writeonly buffer Out {{ float y[]; }};\n" +
                   "uniform uint n;\n" +
                   (glsl_lib.assemble([name], self.funcs) if name else "") +
                   "void main() {\n  uint i = gl_GlobalInvocationID.x;\n"
                   f"  if (i < n) y[i] = {call};\n}}\n")
            self.cache[key] = self.ctx.compute_shader(src)
        return self.cache[key]

    def run(self, name, *xs, expr=None, repeat=1):
        prog = self.program(name, len(xs), expr)
        n = len(xs[0])
        out = np.empty(n, F32)
        elapsed = 0.0
        for s in range(0, n, CHUNK):
            m = min(CHUNK, n - s)
            bufs = [self.ctx.buffer(np.ascontiguousarray(x[s:s + m], F32).tobytes()) for x in xs]
            ob = self.ctx.buffer(reserve=m * 4)
            for i, b in enumerate(bufs):
                b.bind_to_storage_buffer(i)
            ob.bind_to_storage_buffer(len(xs))
            prog["n"] = m
            groups = (m + 63) // 64
            best = None
            for _ in range(repeat):        # best of `repeat` dispatches, same buffers
                t = time.perf_counter()
                prog.run(groups)
                self.ctx.finish()
                dt = time.perf_counter() - t
                best = dt if best is None else min(best, dt)
            elapsed += best
            out[s:s + m] = np.frombuffer(ob.read(), F32)
            for b in bufs + [ob]:
                b.release()
        return out, elapsed


# --------------------------------------------------------------------------
# Inputs

SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0,
                    1e-45, -1e-45, 1.1754944e-38, -1.1754944e-38, 1.1754942e-38,
                    3.4028235e38, -3.4028235e38, 3.0, -3.0, 10.0, 0.1, 100.0, 1e10, -1e10,
                    1e30, -1e30, 1e-30, -1e-30, np.pi, -np.pi, np.pi / 2, np.pi / 4,
                    2.5, -2.5, 0.25, 1e-8, -1e-8, 88.72283, 88.72284, -87.33655, -103.97208,
                    -103.972084, 89.41599, 9.01, 0.999, -0.999, 1.001, 2 ** 24, 2 ** 24 + 2,
                    -2 ** 24, 16777215.0, 0.75, -0.75, 7.0, -7.0], F32)


def bits_random(n):
    return RNG.integers(0, 2 ** 32, n, dtype=np.uint64).astype(np.uint32).view(F32)


def binades(lo_exp=-149, hi_exp=127, per=2048, signs=(1, -1)):
    """`per` random floats in every binade [2^e, 2^(e+1)) (denormal range as
    one region per power of two), both signs."""
    out = []
    for e in range(lo_exp, hi_exp + 1):
        m = RNG.random(per) + 1.0
        v = np.ldexp(m, e)
        for s in signs:
            out.append((s * v).astype(F32))
    return np.concatenate(out)


def near(centers, k=64):
    """Floats within +-k ulp of each center."""
    c = np.asarray(centers, F32).view(np.int32).astype(np.int64)
    off = np.arange(-k, k + 1)
    v = (c[:, None] + off[None, :]).ravel()
    v = v[(v > -2 ** 31) & (v < 2 ** 31)]
    return v.astype(np.int32).view(F32)


def uniform(lo, hi, n):
    return RNG.uniform(lo, hi, n).astype(F32)


def logu(lo, hi, n, signs=(1,)):
    v = np.exp(RNG.uniform(np.log(lo), np.log(hi), n))
    s = RNG.choice(np.array(signs, float), n)
    return (s * v).astype(F32)


def grid(a, b=None):
    b = a if b is None else b
    A, B = np.meshgrid(a, b, indexing="ij")
    return A.ravel().astype(F32), B.ravel().astype(F32)


def scaled(n, scale):
    return max(1, int(n * scale))


def unary_inputs(name, S):
    base = [SPECIAL, bits_random(scaled(2_000_000, S)), binades(per=scaled(4096, S))]
    extra = {
        "exp": [uniform(-104, 89, scaled(2e6, S)), near([88.72283, -87.33654, -103.97208, 0.0])],
        "exp2": [uniform(-150, 128, scaled(2e6, S)), near(np.arange(-150, 129, dtype=F32), 8)],
        "expm1": [uniform(-20, 89, scaled(2e6, S)), uniform(-1, 1, scaled(1e6, S))],
        "log": [logu(1e-3, 1e3, scaled(2e6, S)), near([1.0], 200000)],
        "log2": [logu(1e-3, 1e3, scaled(2e6, S)), near([1.0], 200000)],
        "log10": [logu(1e-3, 1e3, scaled(2e6, S)), near([1.0], 200000),
                  near(10.0 ** np.arange(-38, 39, dtype=np.float64), 4)],
        "log1p": [uniform(-1, 2, scaled(2e6, S)), near([-1.0, 0.41421356, -0.2928932], 1000)],
        "sin": [uniform(-10, 10, scaled(2e6, S)), logu(1, 2 ** 17, scaled(2e6, S), (1, -1)),
                near((np.arange(1, 200000) * (np.pi / 2)).astype(F32), 2)],
        "cos": [uniform(-10, 10, scaled(2e6, S)), logu(1, 2 ** 17, scaled(2e6, S), (1, -1)),
                near((np.arange(1, 200000) * (np.pi / 2)).astype(F32), 2)],
        "tan": [uniform(-10, 10, scaled(2e6, S)), logu(1, 2 ** 17, scaled(2e6, S), (1, -1)),
                near((np.arange(1, 200000) * (np.pi / 2)).astype(F32), 2)],
        "arcsin": [uniform(-1, 1, scaled(4e6, S)), near([1.0, -1.0, 0.5, -0.5], 10000)],
        "arccos": [uniform(-1, 1, scaled(4e6, S)), near([1.0, -1.0, 0.5, -0.5], 10000)],
        "arctan": [logu(1e-3, 1e3, scaled(4e6, S), (1, -1)), near([0.41421356, 2.4142137, 1.0], 10000)],
        "sinh": [uniform(-90, 90, scaled(2e6, S)), uniform(-2, 2, scaled(2e6, S)),
                 near([89.41599, 1.0, -1.0], 1000)],
        "cosh": [uniform(-90, 90, scaled(2e6, S)), uniform(-2, 2, scaled(2e6, S)),
                 near([89.41599, 0.3465736], 1000)],
        "tanh": [uniform(-10, 10, scaled(4e6, S)), uniform(-0.5, 0.5, scaled(1e6, S))],
        "arcsinh": [logu(1e-5, 1e5, scaled(4e6, S), (1, -1))],
        "arccosh": [logu(1, 1e5, scaled(4e6, S)), near([1.0], 100000)],
        "arctanh": [uniform(-1, 1, scaled(4e6, S)), near([1.0, -1.0], 100000)],
        "cbrt": [logu(1e-10, 1e10, scaled(4e6, S), (1, -1)),
                 (np.arange(1, 256, dtype=F32) ** 3).astype(F32)],
    }.get(name, [])
    return np.concatenate(base + extra)


def binary_inputs(name, S):
    sp = np.concatenate([SPECIAL, np.array([0.7, -0.7, 1.5, -1.5, 1e-40, -1e-40], F32)])
    gx, gy = grid(sp)
    r1, r2 = bits_random(scaled(2e6, S)), bits_random(scaled(2e6, S))
    xs, ys = [gx, r1], [gy, r2]
    b1 = binades(per=scaled(512, S))
    b2 = RNG.permutation(b1)
    xs.append(b1)
    ys.append(b2)
    n = scaled(2e6, S)
    if name == "power":
        xs += [logu(1e-3, 1e3, n), logu(0.9, 1.1, n), -logu(1e-2, 1e2, n),
               (1 + RNG.integers(-2000, 2000, n) * 2.0 ** -23).astype(F32)]
        ys += [uniform(-30, 30, n), uniform(-1000, 1000, n),
               RNG.integers(-60, 60, n).astype(F32), uniform(-2e7, 2e7, n)]
    elif name in ("logaddexp", "logaddexp2"):
        xs += [uniform(-100, 100, n), uniform(-2, 0, n)]
        ys += [uniform(-100, 100, n), uniform(-2, 0, n)]
        a = uniform(-3, 3, n)                 # pairs whose result is near 0
        t = np.exp(a.astype(np.float64)) if name == "logaddexp" else 2.0 ** a.astype(np.float64)
        ok = t < 1
        b = (np.log1p(-t[ok]) if name == "logaddexp" else np.log2(-np.expm1(np.log(t[ok])))).astype(F32)
        xs.append(a[ok])
        ys.append(b)
    elif name in ("arctan2", "hypot"):
        xs += [logu(1e-3, 1e3, n, (1, -1)), uniform(-1, 1, n)]
        ys += [logu(1e-3, 1e3, n, (1, -1)), uniform(-1, 1, n)]
    else:   # fmod, remainder, floor_divide
        xs += [uniform(-100, 100, n), logu(1e-3, 1e30, n, (1, -1)), uniform(-10, 10, n)]
        ys += [uniform(-10, 10, n), logu(1e-3, 1e3, n, (1, -1)),
               RNG.choice(np.array([0.1, 0.5, 1.0, 2.0, 3.0, -2.0, 2 * np.pi], F32), n)]
    return np.concatenate(xs), np.concatenate(ys)


# --------------------------------------------------------------------------
# References

LD = np.longdouble

UNARY = {
    # name: (numpy func, reference on float64)
    "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "log": np.log, "log2": np.log2,
    "log10": np.log10, "log1p": np.log1p, "sin": np.sin, "cos": np.cos, "tan": np.tan,
    "arcsin": np.arcsin, "arccos": np.arccos, "arctan": np.arctan, "sinh": np.sinh,
    "cosh": np.cosh, "tanh": np.tanh, "arcsinh": np.arcsinh, "arccosh": np.arccosh,
    "arctanh": np.arctanh, "cbrt": np.cbrt,
}
BINARY = {
    "power": (np.power, lambda a, b: np.power(a.astype(np.float64), b.astype(np.float64))),
    "arctan2": (np.arctan2, None), "hypot": (np.hypot, None),
    "logaddexp": (np.logaddexp, lambda a, b: np.logaddexp(a.astype(LD), b.astype(LD))),
    "logaddexp2": (np.logaddexp2, lambda a, b: np.logaddexp2(a.astype(LD), b.astype(LD))),
    "fmod": (np.fmod, None),
    # NumPy's float32 divmod algorithm *is* the specification here.
    "remainder": (np.remainder, lambda a, b: np.remainder(a, b)),
    "floor_divide": (np.floor_divide, lambda a, b: np.floor_divide(a, b)),
}


def ordered(x):
    """Order-preserving integer for float32 (+0 and -0 both map to 0)."""
    i = x.view(np.int32)
    return np.where(i < 0, -(i & 0x7fffffff), i).astype(np.int64)


def ulp_of_exact(ref):
    """ulp of float32 at the exact value (binade of |ref|, denormal floor)."""
    r = np.asarray(ref)
    if r.dtype == LD:
        with np.errstate(divide="ignore"):
            e = np.frexp(np.abs(r.astype(np.float64)))[1] - 1
        return np.ldexp(1.0, np.maximum(e, -126) - 23)
    e = ((r.astype(np.float64).view(np.int64) >> 52) & 0x7ff) - 1023
    e = np.maximum(e, -126) - 23
    return ((e + 1023) << 52).view(np.float64)


def special_mismatch(y, r):
    yn, rn = np.isnan(y), np.isnan(r)
    bad = yn != rn
    both = ~yn & ~rn
    yi, ri = np.isinf(y), np.isinf(r)
    bad |= both & (yi | ri) & (y != r)
    bad |= both & (y == 0) & (r == 0) & (np.signbit(y) != np.signbit(r))
    return bad


def compare(y, ref_hi, ref_np, inputs):
    """Statistics of GPU results y against the high-precision reference (float64
    or long double array) and against NumPy float32."""
    with np.errstate(all="ignore"):
        ref32 = ref_hi.astype(F32)
    st = {"n": len(y)}
    # Error vs the exact value, where the reference is finite in float32.
    fin = np.isfinite(ref32) & np.isfinite(y)
    if ref_hi.dtype == LD:
        err = (np.abs(y[fin].astype(LD) - ref_hi[fin]) / ulp_of_exact(ref_hi[fin]).astype(LD))
        err = err.astype(np.float64)
    else:   # float64 difference of a float32 and a float64 value: error 2^-53 relative
        rf = ref_hi[fin]
        err = np.abs(y[fin].astype(np.float64) - rf) / ulp_of_exact(rf)
    st["exact_max"] = float(err.max()) if err.size else 0.0
    st["exact_mean"] = float(err.mean()) if err.size else 0.0
    if err.size:
        w = np.flatnonzero(fin)[np.argmax(err)]
        st["exact_worst"] = tuple(float(v[w]) for v in inputs)
    for key, ref in (("cr", ref32), ("np", ref_np)):
        ok = ~np.isnan(y) & ~np.isnan(ref)
        d = np.abs(ordered(y[ok]) - ordered(ref[ok]))
        st[key + "_max"] = int(d.max()) if d.size else 0
        st[key + "_mean"] = float(d.mean()) if d.size else 0.0
        if d.size and d.max() > 0:
            w = np.flatnonzero(ok)[np.argmax(d)]
            st[key + "_worst"] = tuple(float(v[w]) for v in inputs) + (float(y[w]), float(ref[w]))
        st[key + "_special"] = int(special_mismatch(y, ref).sum())
        if st[key + "_special"]:
            w = np.flatnonzero(special_mismatch(y, ref))[0]
            st[key + "_special_ex"] = tuple(float(v[w]) for v in inputs) + (float(y[w]), float(ref[w]))
    return st


def exhaustive(runner, name, chunk=1 << 24):
    """All 2^32 float32 inputs of a unary function, streamed in chunks."""
    acc = {"n": 0, "exact_max": 0.0, "exact_sum": 0.0, "exact_n": 0, "cr_max": 0, "cr_sum": 0,
           "np_max": 0, "np_sum": 0, "cr_special": 0, "np_special": 0, "cmp_n": 0}
    t0 = time.time()
    for start in range(0, 1 << 32, chunk):
        x = np.arange(start, start + chunk, dtype=np.uint64).astype(np.uint32).view(F32)
        with np.errstate(all="ignore"):
            ref_np = UNARY[name](x)
            ref_hi = UNARY[name](x.astype(np.float64))
            y, _ = runner.run("gp_" + name, x)
            st = compare(y, ref_hi, ref_np, (x,))
        fin = np.isfinite(ref_hi.astype(F32)) & np.isfinite(y)
        m = int(fin.sum())
        acc["n"] += st["n"]
        acc["exact_max"] = max(acc["exact_max"], st["exact_max"])
        acc["exact_sum"] += st["exact_mean"] * m
        acc["exact_n"] += m
        ok = int((~np.isnan(y) & ~np.isnan(ref_np)).sum())
        for k in ("cr", "np"):
            if st[k + "_max"] > acc[k + "_max"]:
                acc[k + "_worst"] = st.get(k + "_worst")
            acc[k + "_max"] = max(acc[k + "_max"], st[k + "_max"])
            acc[k + "_sum"] += st[k + "_mean"] * ok
            acc[k + "_special"] += st[k + "_special"]
        acc["cmp_n"] += ok
    acc["exact_mean"] = acc["exact_sum"] / max(1, acc["exact_n"])
    acc["cr_mean"] = acc["cr_sum"] / max(1, acc["cmp_n"])
    acc["np_mean"] = acc["np_sum"] / max(1, acc["cmp_n"])
    acc["secs"] = time.time() - t0
    return acc


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scale", type=float, default=1.0, help="multiply sample counts")
    ap.add_argument("--only", default="", help="comma-separated function names")
    ap.add_argument("--markdown", action="store_true", help="print a markdown table")
    ap.add_argument("--verbose", action="store_true", help="print worst cases")
    ap.add_argument("--exhaustive", action="store_true",
                    help="unary functions: all 2^32 inputs instead of samples (minutes each)")
    args = ap.parse_args()
    only = set(filter(None, args.only.split(",")))
    runner = Runner()
    rows = []
    names = list(UNARY) + list(BINARY)
    for name in names:
        if only and name not in only:
            continue
        t0 = time.time()
        if args.exhaustive:
            if name not in UNARY:
                continue
            st = exhaustive(runner, name)
            st["name"] = name
            rows.append(st)
            print(f"{name:13s} all 2^32: exact max {st['exact_max']:6.3f} mean {st['exact_mean']:.3f} | "
                  f"CR max {st['cr_max']} mean {st['cr_mean']:.5f} special {st['cr_special']} | "
                  f"NumPy max {st['np_max']} mean {st['np_mean']:.5f} special {st['np_special']} "
                  f"({st['secs']:.0f}s)", flush=True)
            if args.verbose:
                print(f"    cr_worst: {st.get('cr_worst')}  np_worst: {st.get('np_worst')}")
            continue
        with np.errstate(all="ignore"):
            if name in UNARY:
                x = unary_inputs(name, args.scale)
                inputs = (x,)
                ref_np = UNARY[name](x)
                ref_hi = UNARY[name](x.astype(np.float64))
            else:
                a, b = binary_inputs(name, args.scale)
                inputs = (a, b)
                fnp, fref = BINARY[name]
                ref_np = fnp(a, b)
                ref_hi = fref(a, b) if fref else fnp(a.astype(np.float64), b.astype(np.float64))
            y, _ = runner.run("gp_" + name, *inputs)
            near0 = None
            if name.startswith("logaddexp"):
                # Results near 0 come from catastrophic cancellation
                # (e^x + e^y ~ 1): judged by absolute error, reported apart.
                near0 = np.abs(ref_hi.astype(np.float64)) < 2.0 ** -12
                near0 &= np.isfinite(ref_hi.astype(np.float64))
                keep = ~near0
                st = compare(y[keep], ref_hi[keep], ref_np[keep], tuple(v[keep] for v in inputs))
                r64 = ref_hi[near0].astype(np.float64)
                st["near0_n"] = int(near0.sum())
                if near0.any():
                    u = ulp_of_exact(r64)
                    st["near0_abs"] = float(np.max(np.abs(y[near0] - r64)))
                    st["near0_abs_np"] = float(np.max(np.abs(ref_np[near0] - r64)))
                    st["near0_ulp"] = float(np.max(np.abs(y[near0] - r64) / u))
                    st["near0_ulp_np"] = float(np.max(np.abs(ref_np[near0] - r64) / u))
                else:
                    st["near0_abs"] = st["near0_abs_np"] = st["near0_ulp"] = st["near0_ulp_np"] = 0.0
            else:
                st = compare(y, ref_hi, ref_np, inputs)
        st["name"] = name
        st["secs"] = time.time() - t0
        rows.append(st)
        line = (f"{name:13s} n={st['n']:>9d} exact max {st['exact_max']:6.3f} mean {st['exact_mean']:.3f} | "
                f"CR max {st['cr_max']} mean {st['cr_mean']:.4f} special {st['cr_special']} | "
                f"NumPy max {st['np_max']} mean {st['np_mean']:.4f} special {st['np_special']} "
                f"({st['secs']:.0f}s)")
        if "near0_n" in st:
            line += (f"\n    {st['near0_n']} results with |r| < 2^-12 (cancellation): max abs error "
                     f"{st['near0_abs']:.3g}, {st['near0_ulp']:.3g} ulp (NumPy f32: "
                     f"{st['near0_abs_np']:.3g}, {st['near0_ulp_np']:.3g} ulp)")
        print(line, flush=True)
        if args.verbose:
            for k in ("exact_worst", "cr_worst", "np_worst", "cr_special_ex", "np_special_ex"):
                if k in st:
                    print(f"    {k}: {st[k]}")
    if args.markdown:
        print()
        print("| function | samples | max ulp vs exact | mean ulp vs exact | max ulp vs CR | "
              "mean ulp vs CR | max ulp vs NumPy f32 | mean ulp vs NumPy f32 | special-value mismatches vs NumPy |")
        print("|---|---|---|---|---|---|---|---|---|")
        for st in rows:
            print(f"| {st['name']} | {st['n']:,} | {st['exact_max']:.3f} | {st['exact_mean']:.4f} | "
                  f"{st['cr_max']} | {st['cr_mean']:.5f} | {st['np_max']} | {st['np_mean']:.5f} | "
                  f"{st['np_special']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
