"""Fixed costs: what a user pays regardless of the arithmetic.

  build one lazy op     `a + b` on gpupy arrays, no evaluation (hash-consing
                        finds the same node every time), and a chain
                        `x = x + 1.0` (a new node each time)
  tiny evaluation       `2*a + 3*b` on 100 elements to a NumPy array with a
                        warm program cache: the per-evaluation overhead
  upload included       `2*a + 3*b` at 10^7 when a and b start as NumPy
                        arrays each time (gpupy.array inside the timing)
  first vs warm         a program structure this process has not seen yet:
                        first run, warm run, and stats() compile_seconds /
                        first_run_seconds (the JIT runs at the first
                        dispatch, so first_run_seconds holds JIT + one run)
"""

import time

import numpy as np

from common import Result, fmt_time, gpupy_stats, log, run_case


def per_call(fn, n, repeats=7):
    """Median and min over `repeats` of the time per call of n calls."""
    per = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        per.append((time.perf_counter() - t0) / n)
    per.sort()
    return per


def build_rows(results, gp, impl, n_calls):
    big = gp.array(np.ones(10**6, dtype=np.float32))
    big2 = gp.array(np.ones(10**6, dtype=np.float32))

    r = Result("overhead", "build one lazy op: a + b (same node, hash-consed)", impl)
    r.times = per_call(lambda: big + big2, n_calls)
    results.append(r)

    def chain():
        x = big
        for _ in range(n_calls):
            x = x + 1.0
        return x

    r = Result("overhead", "build one lazy op: x = x + 1.0 (new node each)", impl)
    r.times = [t / n_calls for t in per_call(chain, 1, repeats=5)]
    results.append(r)


def run(env, settings):
    results = []
    n_calls = 2000 if settings.quick else 10000
    variants = [(drv, False) for drv in env.gpupy_drivers]
    if "opengl" in env.gpupy_drivers and env.has_host_engine:
        variants.append(("opengl", True))  # the device path itself, without gpupy's host engine
    for drv, dev in variants:
        env.use_driver(drv, device_only=dev)
        gp = env.gpupy
        impl = f"gpupy-{drv}" + ("-dev" if dev else "")
        if not dev:
            build_rows(results, gp, impl, n_calls)
        small = {k: gp.array(np.linspace(0, 1, 100, dtype=np.float32) + i) for i, k in enumerate("ab")}

        np.asarray(2 * small["a"] + 3 * small["b"])  # compile, upload
        r = Result("overhead", "evaluate tiny expression (100 elements, warm)", impl)
        gp.reset_stats()
        r.times = per_call(lambda: np.asarray(2 * small["a"] + 3 * small["b"]), max(200, n_calls // 20))
        r.stats_warm = gpupy_stats(gp)
        results.append(r)
        del small

        host = {k: np.random.default_rng(i).random(10**7, dtype=np.float32) for i, k in enumerate("ab")}
        r = Result("overhead", "2*a + 3*b at 10^7, upload included", impl, params={"n": 10**7})
        run_case(r, lambda clock: np.asarray(2 * gp.array(host["a"]) + 3 * gp.array(host["b"])), settings,
                 check=lambda v: (bool(np.allclose(v, 2 * host["a"] + 3 * host["b"], rtol=1e-6)), 0.0, 0.0), gp=gp)
        results.append(r)
        del host

        # A program structure no other benchmark uses.
        a = gp.array(np.linspace(0.1, 1, 10**5, dtype=np.float32))
        b = gp.array(np.linspace(1, 2, 10**5, dtype=np.float32))
        np.asarray(a + b)  # upload outside the timing
        r = Result("overhead", "first vs warm: new program (cosh(a)*b - tanh(b)/a + 0.37), 10^5", impl)
        run_case(r, lambda clock: np.asarray(gp.cosh(a) * b - gp.tanh(b) / a + 0.37), settings, gp=gp)
        results.append(r)
        del a, b

    # NumPy and numexpr references for the tiny evaluation
    a = np.linspace(0, 1, 100, dtype=np.float32)
    b = a + 1
    r = Result("overhead", "evaluate tiny expression (100 elements, warm)", "numpy")
    r.times = per_call(lambda: 2 * a + 3 * b, 10000)
    results.append(r)
    if env.numexpr is not None:
        ne = env.numexpr
        r = Result("overhead", "evaluate tiny expression (100 elements, warm)", "numexpr")
        r.times = per_call(lambda: ne.evaluate("2*a + 3*b", local_dict={"a": a, "b": b}), 5000)
        results.append(r)
    x = np.ones(10**6, dtype=np.float32)
    r = Result("overhead", "build one lazy op: a + b (same node, hash-consed)", "numpy (eager, 100 elements)")
    r.times = per_call(lambda: a + b, 10000)
    results.append(r)
    host = {k: np.random.default_rng(i).random(10**7, dtype=np.float32) for i, k in enumerate("ab")}
    r = Result("overhead", "2*a + 3*b at 10^7, upload included", "numpy")
    run_case(r, lambda clock: 2 * host["a"] + 3 * host["b"], settings)
    results.append(r)
    del x, host
    for r in results:
        log(settings, f"  overhead {r.case:<70} {r.impl:<28} median {fmt_time(r.median):>9}  min {fmt_time(r.best):>9}"
                      + (f"  first {fmt_time(r.first)}" if r.first else ""))
    return results
