#!/usr/bin/env python3
"""Throughput of the glsl_math functions versus the GLSL builtins.

Each function is called K = 8 times per element (on slightly perturbed
arguments, summed) in a compute shader over N float32 inputs from a typical
range, so that arithmetic rather than memory traffic dominates; the same is
done with the GLSL builtin (or a simple builtin-based formula where GLSL has
no such function).  Reported: million calls per second and the time ratio.
The first dispatch (JIT) is excluded; the best of several dispatches,
interleaved between the two programs, is reported (other processes on a
shared machine disturb absolute numbers; the ratio is more stable).

Usage:  python3 tools/glsl_math/bench.py [--n 4194304] [--only exp,sin]
Needs:  numpy, moderngl, an EGL/OpenGL 4.5 driver.
"""
import argparse
import re
import sys
import time

import os

os.environ.setdefault("MESA_SHADER_CACHE_DISABLE", "true")   # measure real JIT time

import numpy as np

from precision import Runner, F32

RNG = np.random.default_rng(7)

# name: (builtin expression or None, input ranges)
CASES = {
    "exp": ("exp(x0[i])", [(-80, 80)]),
    "exp2": ("exp2(x0[i])", [(-120, 120)]),
    "expm1": ("exp(x0[i]) - 1.0", [(-5, 5)]),
    "log": ("log(x0[i])", [(1e-3, 1e3)]),
    "log2": ("log2(x0[i])", [(1e-3, 1e3)]),
    "log10": ("log(x0[i]) * 0.4342945", [(1e-3, 1e3)]),
    "log1p": ("log(1.0 + x0[i])", [(-0.5, 2)]),
    "logaddexp": ("max(x0[i], x1[i]) + log(1.0 + exp(-abs(x0[i] - x1[i])))", [(-10, 10), (-10, 10)]),
    "logaddexp2": ("max(x0[i], x1[i]) + log2(1.0 + exp2(-abs(x0[i] - x1[i])))", [(-10, 10), (-10, 10)]),
    "power": ("pow(x0[i], x1[i])", [(1e-2, 1e2), (-10, 10)]),
    "sin": ("sin(x0[i])", [(-100, 100)]),
    "cos": ("cos(x0[i])", [(-100, 100)]),
    "tan": ("tan(x0[i])", [(-100, 100)]),
    "arcsin": ("asin(x0[i])", [(-1, 1)]),
    "arccos": ("acos(x0[i])", [(-1, 1)]),
    "arctan": ("atan(x0[i])", [(-100, 100)]),
    "arctan2": ("atan(x0[i], x1[i])", [(-10, 10), (-10, 10)]),
    "hypot": ("length(vec2(x0[i], x1[i]))", [(-10, 10), (-10, 10)]),
    "sinh": ("sinh(x0[i])", [(-10, 10)]),
    "cosh": ("cosh(x0[i])", [(-10, 10)]),
    "tanh": ("tanh(x0[i])", [(-10, 10)]),
    "arcsinh": ("asinh(x0[i])", [(-100, 100)]),
    "arccosh": ("acosh(x0[i])", [(1, 100)]),
    "arctanh": ("atanh(x0[i])", [(-1, 1)]),
    "cbrt": ("sign(x0[i]) * pow(abs(x0[i]), 1.0 / 3.0)", [(-1e3, 1e3)]),
    "fmod": ("x0[i] - x1[i] * trunc(x0[i] / x1[i])", [(-100, 100), (0.5, 10)]),
    "remainder": ("mod(x0[i], x1[i])", [(-100, 100), (0.5, 10)]),
    "floor_divide": ("floor(x0[i] / x1[i])", [(-100, 100), (0.5, 10)]),
}


K = 8


def chained(call, nargs):
    """K calls of `call` (a format string over a0, a1) with perturbed args."""
    terms = []
    for j in range(K):
        args = {f"a{i}": f"(x{i}[i] * {1.0 + j * 1e-3!r})" for i in range(nargs)}
        terms.append("(" + call.format(**args) + ")")
    return " + ".join(terms)


def timed_pair(runner, prog_a, prog_b, xs, reps):
    """Best-of-`reps` dispatch times of two programs on the same buffers,
    interleaved so that load from other processes affects both alike."""
    bufs = [runner.ctx.buffer(x.tobytes()) for x in xs]
    out = runner.ctx.buffer(reserve=len(xs[0]) * 4)
    for i, b in enumerate(bufs):
        b.bind_to_storage_buffer(i)
    out.bind_to_storage_buffer(len(xs))
    groups = (len(xs[0]) + 63) // 64
    best = [1e9, 1e9]
    for p in (prog_a, prog_b):                       # JIT
        p["n"] = len(xs[0])
        p.run(groups)
        runner.ctx.finish()
    for _ in range(reps):
        for j, p in enumerate((prog_a, prog_b)):
            t = time.perf_counter()
            p.run(groups)
            runner.ctx.finish()
            best[j] = min(best[j], time.perf_counter() - t)
    for b in bufs + [out]:
        b.release()
    return best


def jit_ms(runner, name, nargs):
    """Compile + link + first dispatch of a shader with a single call, on a
    tiny input (Mesa's shader cache disabled by the caller for this)."""
    xs = [np.ones(64, F32)] * nargs
    t = time.perf_counter()
    runner.run(name, *xs)
    return (time.perf_counter() - t) * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1 << 22)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    only = set(filter(None, args.only.split(",")))
    runner = Runner()
    n = args.n
    print(f"{n} elements x {K} calls per dispatch; Mcalls/s (best of {args.reps}, interleaved)")
    print("| function | gp_ Mcalls/s | builtin Mcalls/s | gp_ time / builtin time | "
          "compile + first dispatch, 1 call (ms) |")
    print("|---|---|---|---|---|")
    for name, (builtin, ranges) in CASES.items():
        if only and name not in only:
            continue
        xs = [RNG.uniform(lo, hi, n).astype(F32) for lo, hi in ranges]
        nargs = len(ranges)
        tj = jit_ms(runner, "gp_" + name, nargs)
        gcall = "gp_" + name + "(" + ", ".join("{a%d}" % i for i in range(nargs)) + ")"
        bcall = re.sub(r"x(\d)\[i\]", r"{a\1}", builtin)
        pg = runner.program("gp_" + name, nargs, chained(gcall, nargs))
        pb = runner.program(None, nargs, chained(bcall, nargs))
        tg, tb = timed_pair(runner, pg, pb, xs, args.reps)
        print(f"| {name} | {K * n / tg / 1e6:.0f} | {K * n / tb / 1e6:.0f} | {tg / tb:.1f} | "
              f"{tj:.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
