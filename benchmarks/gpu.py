#!/usr/bin/env python3
"""What gpupy gets out of the device, against what the device itself does,
with NumPy on the CPU beside it in the same run: one script for a machine
with a GPU (tools/gpu_check.sh runs it), known to work on llvmpipe with
--quick before a GPU is there.

Sections (--only picks some), each in a process of its own under its own
time limit (--limit-seconds), so that one that fails or hangs is reported
and the others still run; the exit status is 1 if any failed:

  bandwidth  Elementwise work on inputs the device already holds, the result
             left there: gpupy's `2*a + 3*b` and `a*b + c` (float32, 2^20 ..
             2^26 elements) with placement "device", R evaluations in a row
             and one read of a single element at the end (GL runs behind
             the caller: the read waits for all of them), each a new
             expression (a constant in it differs a little: gpupy shares
             equal expressions), with NumPy's error checks off and on
             (NumPy's default error state). GB/s =
             bytes read + written per evaluation / time per evaluation,
             against the device's own copy bandwidth (a buffer copied into
             another by the driver, no shader) and a hand-written `2*a + 3*b`
             timed the same way, both measured in C++ up to glFinish, and
             NumPy's time for the same expressions.
  matmul     float32 A @ B, n = 512 .. 8192: gpupy's product with placement
             "device" on inputs it holds, the hand-written GLSL product
             (distmap_glsl.cpp's hg_matmul_*, two configurations) on inputs
             uploaded once, and NumPy's BLAS; TFLOP/s = 2 n^3 / time,
             against the device's float32 peak as measured here by a
             hand-written kernel of independent vec4 fma chains.
  shaders    gpupy against hand-written shaders on the same GL: the distance
             map (benchmarks/distmap.py through run.py's setup, 512² and
             2048², 100 and 1000 points) and Life (benchmarks/seeds.py's,
             10 steps at 1024², the device forced and default placement),
             each as a user's program is timed (from NumPy data to a NumPy
             result).
  seeds      a few seed workloads of benchmarks/seeds.py (--seeds) with
             default placement and with the device forced.

--quick: 2^16 .. 2^20 elements, n = 128 and 256, the distance map at 128²
with 100 points, Life at 256². Sizes that would not finish within a
section's limit are left out and listed. gpupy runs on the OpenGL driver (GPUPY_DRIVER=opengl unless set).
Every gpupy result is checked against NumPy's.

    python benchmarks/gpu.py                  # full sizes (on a GPU; the limits add up to 104 s)
    python benchmarks/gpu.py --quick          # small sizes (llvmpipe)
    python benchmarks/gpu.py --quick --csv DIR --plot DIR --machine "2-core VM, llvmpipe"
    python benchmarks/gpu.py --tiny           # the smallest sizes (tests/test_benchmarks_gpu.py)
    python benchmarks/gpu.py --only matmul --limit-seconds 120
"""

import argparse
import csv
import itertools
import json
import math
import os
import platform
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

from common import fmt_time  # (benchmarks/ is on the path: this script's folder)

HERE = Path(__file__).resolve().parent
SECTIONS = ("bandwidth", "matmul", "shaders", "seeds")
ROW_PREFIX = "@row "  # a child's result lines on its stdout; everything else goes to stderr

# Each section's time limit in seconds per mode: the full set's add up to
# 104 s, within the 120 s of its 8 minutes that tools/gpu_check.sh gives it.
LIMITS = {"full": {"bandwidth": 26, "matmul": 36, "shaders": 20, "seeds": 22},
          "quick": {"bandwidth": 90, "matmul": 90, "shaders": 90, "seeds": 90},
          "tiny": {"bandwidth": 60, "matmul": 60, "shaders": 60, "seeds": 60}}
# A section's process starts Python, imports gpupy and NumPy and sets up a
# GL context before its clock can do anything: it stops starting new work
# this long before its limit, the parent kills it this long after.
MARGIN_S = 3.0

SIZES = {
    "full": {"bandwidth": [2 ** k for k in range(20, 27)], "matmul": [512, 1024, 2048, 4096, 8192],
             "distmap": [512, 2048], "points": [100, 1000], "life": [1024]},
    "quick": {"bandwidth": [2 ** k for k in range(16, 21)], "matmul": [128, 256],
              "distmap": [128], "points": [100], "life": [256]},
    "tiny": {"bandwidth": [2 ** 12, 2 ** 14], "matmul": [32, 64], "distmap": [64], "points": [10], "life": [64]},
}
SEED_WORKLOADS = "life,gauss5x5,saxpy,matmul"
HAND_MATMUL = "default,tiled-8x8-16x16-k8"  # the fastest on llvmpipe, and the shared-memory one a GPU wants

EXPRESSIONS = {
    # name: (reads per element, writes per element, gpupy(a, b, c, eps), numpy(a, b, c))
    "2*a + 3*b": (2, 1, lambda a, b, c, eps: (2.0 + eps) * a + 3.0 * b, lambda a, b, c: 2.0 * a + 3.0 * b),
    "a*b + c": (3, 1, lambda a, b, c, eps: a * b + (c + eps), lambda a, b, c: a * b + c),
}


def mode_of(args):
    return "tiny" if args.tiny else "quick" if args.quick else "full"


# ---------------------------------------------------------------- child side

class Child:
    """A section running in its own process: rows to the parent, a clock
    against the section's deadline."""

    def __init__(self, args, rows_out):
        self.args = args
        self.mode = mode_of(args)
        self.deadline = args.deadline
        self.rows_out = rows_out
        self.failures = []

    def left(self):
        return self.deadline - time.time()

    def fits(self, predicted_s):
        """Whether work predicted to take `predicted_s` ends before the
        deadline."""
        return predicted_s < self.left()

    def row(self, **fields):
        self.rows_out.write(ROW_PREFIX + json.dumps(fields) + "\n")
        self.rows_out.flush()

    def skipped(self, what, predicted_s):
        self.row(kind="skipped", what=what, predicted_s=predicted_s)
        log(f"  {what}: left out (~{predicted_s:.1f} s predicted, {max(0.0, self.left()):.1f} s left)")

    def fail(self, what, exc):
        text = f"{what}: {type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"
        self.failures.append(text)
        self.row(kind="failed", what=text)
        log("  FAILED " + text)


def log(*parts):
    print(*parts, file=sys.stderr, flush=True)


def repetitions(one_s, target_s, most=200):
    """How many repetitions make about target_s, from one that took one_s."""
    return max(2, min(most, int(math.ceil(target_s / max(one_s, 1e-7)))))


def target_s(mode):
    return {"full": 0.25, "quick": 0.1, "tiny": 0.02}[mode]


def glsl_or_reason():
    """The hand-written GLSL library (benchmarks/native), or why not."""
    import native
    try:
        return native.GlslDistanceMap(), None
    except Exception as exc:  # noqa: BLE001 -- no g++, no EGL headers, no context: said in the output
        return None, f"{type(exc).__name__}: {str(exc).strip().splitlines()[0]}"


def device_settings(gp, largest_bytes):
    """Every evaluation on the device (placement "device", no host engine,
    nothing computed by NumPy at once), and a cache that holds a section's
    arrays without evicting them."""
    gp.set_placement("device")
    gp.set_host_threshold(0)
    gp.set_eager_threshold(0)
    gp.set_cache_bytes(max(gp.cache_bytes(), 8 * largest_bytes))


def counters(gp):
    s = gp.stats()
    return {k: s[k] for k in ("evaluations", "bytes_uploaded", "bytes_downloaded", "evictions", "fallbacks",
                              "host_placements", "programs_compiled")}


FRESH = itertools.count(1)  # a number no earlier call of time_gpupy's make() was given


def time_gpupy(gp, make, reps):
    """Seconds per evaluation of `reps` results of make(k) left on the
    device, one element of the last read back at the end (the wait for
    all of them); and gpupy's counters over the timed run.

    gpupy shares equal expressions: one built again while the first is
    alive, or its result still held, is not evaluated again. make(k) is
    given a new k each time to build a different expression from where
    that matters (the counters show evaluations per repetition). A result
    is dropped as soon as it is evaluated, as each output would be in a
    loop that keeps only the last.
    """
    from gpupy import _core
    import numpy
    gp.reset_stats()
    start = time.perf_counter()
    for _ in range(reps - 1):
        _core.evaluate_on_device(make(next(FRESH)))
    last = make(next(FRESH))
    _core.evaluate_on_device(last)
    numpy.asarray(last[(0,) * (last.ndim - 1) + (slice(0, 1),)] * 1)
    seconds = (time.perf_counter() - start) / reps
    return seconds, counters(gp)


def best_of(batches, fn):
    """The fastest of `batches` calls of fn() -> (seconds, extra)."""
    return min((fn() for _ in range(batches)), key=lambda t: t[0])


def sizes_in_time(child, sizes, growth, what, progress=None):
    """The sizes whose work fits what is left of the section's time, each
    predicted to take `growth` times the one before it (the first: nothing
    predicted); a size that does not fit is reported as left out (`what(n)`
    names it). `progress`, a format with one field: a line logged with
    each size's seconds."""
    previous_s = None
    for n in sizes:
        predicted = 0.0 if previous_s is None else growth * previous_s
        if not child.fits(predicted):
            child.skipped(what(n), predicted)
            continue
        started = time.perf_counter()
        yield n
        previous_s = time.perf_counter() - started
        if progress:
            log(f"  {progress.format(n)}: {previous_s:.1f} s")


def section_bandwidth(child):
    import numpy
    import gpupy as gp

    sizes = child.args.bandwidth_sizes or SIZES[child.mode]["bandwidth"]
    device_settings(gp, 4 * max(sizes))
    glsl, reason = glsl_or_reason()
    if glsl is None:
        child.fail("hand-written GLSL unavailable (no copy bandwidth, no hand-written kernel)", RuntimeError(reason))
    target = target_s(child.mode)
    rng = numpy.random.default_rng(7)
    # A size costs about twice the one before.
    for n in sizes_in_time(child, sizes, 2.5, lambda n: f"bandwidth at {n} elements", "bandwidth {}"):
        host = [rng.random(n, dtype=numpy.float32) for _ in range(3)]
        nbytes = 4 * n
        if glsl is not None:
            try:
                glsl.copy_prepare(nbytes)
                one = glsl.copy_time(1)
                reps = repetitions(one, target, most=1000)
                seconds = min(glsl.copy_time(reps) for _ in range(2)) / reps
                child.row(kind="bandwidth", impl="device copy", elements=n, bytes=2 * nbytes, reps=reps,
                          seconds=seconds, gb_s=2 * nbytes / seconds / 1e9)
                glsl.copy_prepare(4)  # the buffers go (their memory is the cache's now)
                for layout in ("ssbo", "texture"):
                    glsl.ew_prepare(host[0], host[1], layout)
                    if not numpy.allclose(glsl.ew_run(), 2.0 * host[0] + 3.0 * host[1], rtol=1e-6):
                        raise RuntimeError(f"the hand-written 2*a + 3*b ({layout}) differs from NumPy")
                    one = glsl.ew_time(1)
                    reps = repetitions(one, target, most=1000)
                    seconds = min(glsl.ew_time(reps) for _ in range(2)) / reps
                    child.row(kind="bandwidth", impl=f"hand-written 2*a + 3*b ({layout})", elements=n,
                              bytes=3 * nbytes, reps=reps, seconds=seconds, gb_s=3 * nbytes / seconds / 1e9)
                glsl.ew_prepare(host[0][:1], host[1][:1], "ssbo")
            except Exception as exc:  # noqa: BLE001 -- reported; gpupy's rows still run
                child.fail(f"hand-written at {n} elements", exc)
        try:
            # Copies the device holds as its own (gp.asarray would share
            # NumPy's memory, which gpupy keeps watching for writes).
            a, b, c = (gp.array(h) for h in host)
            for x in (a, b, c):
                gp._core.evaluate_on_device(x)
            for name, (reads, writes, on_gpupy, on_numpy) in EXPRESSIONS.items():
                moved = (reads + writes) * nbytes
                want = on_numpy(*host)
                t_numpy = []
                for checked in (False, True):
                    state = numpy.errstate() if checked else numpy.errstate(all="ignore")
                    with state:
                        # Each repetition's constant differs (by more than
                        # float32's spacing near 2, so that it is a new
                        # expression; see time_gpupy).
                        def make(k):
                            return on_gpupy(a, b, c, k * 2.0 ** -20)

                        got = numpy.asarray(make(0))  # compiles; checked against NumPy
                        if not numpy.allclose(got, want, rtol=1e-5, atol=1e-6):
                            raise RuntimeError(f"gpupy's {name} differs from NumPy")
                        del got
                        one, _ = time_gpupy(gp, make, 2)
                        reps = repetitions(one, target)
                        seconds, stats = best_of(2, lambda: time_gpupy(gp, make, reps))
                    child.row(kind="bandwidth", impl=f"gpupy {name}" + (" checked" if checked else ""),
                              elements=n, bytes=moved, reps=reps, seconds=seconds, gb_s=moved / seconds / 1e9,
                              evaluations_per_rep=round(stats["evaluations"] / reps, 2),
                              bytes_uploaded=stats["bytes_uploaded"], bytes_downloaded=stats["bytes_downloaded"],
                              evictions=stats["evictions"], fallbacks=stats["fallbacks"])
                    # NumPy, the same expression, as a loop that drops each result
                    with numpy.errstate(all="ignore"):
                        one = timed_numpy(lambda: on_numpy(*host), 1)
                        t_numpy.append(timed_numpy(lambda: on_numpy(*host), repetitions(one, target, most=50)))
                seconds = min(t_numpy)
                child.row(kind="bandwidth", impl=f"NumPy {name}", elements=n, bytes=moved, seconds=seconds,
                          gb_s=moved / seconds / 1e9)
            del a, b, c
        except Exception as exc:  # noqa: BLE001
            child.fail(f"gpupy at {n} elements", exc)


def timed_numpy(fn, reps):
    """Seconds per call of fn(), `reps` calls in a row."""
    start = time.perf_counter()
    for _ in range(reps):
        fn()
    return (time.perf_counter() - start) / reps


def gpupy_product_forms(gp):
    """(implementation name, the driver's tiled_products option) for
    gpupy's product: the form the driver picks, then, on the OpenGL
    driver, the other tiled form."""
    forms = [("gpupy", "default")]
    if gp.driver() == "opengl":
        # The form in use ("tiled_products: shared (measured)"): the one the
        # calibration measured faster here, else the driver's rule.
        line = next((l for l in gp._core.driver_describe().splitlines() if l.startswith("tiled_products:")), "")
        picked_shared = line.split(":", 1)[-1].split()[:1] == ["shared"]
        forms.append(("gpupy, register form" if picked_shared else "gpupy, shared-memory form",
                      "registers" if picked_shared else "shared"))
    return forms


def section_matmul(child):
    import numpy
    import gpupy as gp

    sizes = child.args.matmul_sizes or SIZES[child.mode]["matmul"]
    device_settings(gp, 4 * max(sizes) ** 2)
    target = target_s(child.mode)
    glsl, reason = glsl_or_reason()
    configs = []
    if glsl is None:
        child.fail("hand-written GLSL unavailable (no peak, no hand-written product)", RuntimeError(reason))
    else:
        try:
            best = None
            for chains in (2, 4, 8):
                gflops, seconds, flops, groups = glsl.peak_gflops(chains=chains, min_seconds=min(0.05, 2 * target))
                log(f"  peak with {chains} vec4 chains: {gflops:.1f} GFLOP/s")
                if best is None or gflops > best[0]:
                    best = (gflops, seconds, flops, chains, groups)
            gflops, seconds, flops, chains, groups = best
            child.row(kind="peak", impl="measured float32 peak", gflops=gflops, tflops=gflops / 1e3,
                      seconds=seconds, flops=flops, chains=chains, groups=groups, local=256)
        except Exception as exc:  # noqa: BLE001
            child.fail("peak kernel", exc)
        names = glsl.matmul_configs()
        for name in child.args.hand_matmul.split(","):
            name = glsl.matmul_default_config() if name == "default" else name
            if name not in names:
                child.fail("hand-written product", ValueError(f"no configuration {name!r}; known: {', '.join(names)}"))
            elif name not in configs:
                configs.append(name)
    rng = numpy.random.default_rng(11)
    last = {}  # implementation -> (n, seconds of one product) at the largest n it ran

    def fits(impl, n):
        """Whether impl at n fits what is left: about five products (the
        first, an estimate, two timed at least), each (n / m)^3 the time of
        one at the last size m it ran."""
        predicted = 0.0
        if impl in last:
            m, seconds = last[impl]
            predicted = 5 * seconds * (n / m) ** 3
        if child.fits(predicted):
            return True
        child.skipped(f"{impl} at n = {n}", predicted)
        return False

    for n in sizes:
        host_a, host_b = (rng.random((n, n), dtype=numpy.float32) for _ in range(2))
        flops = 2.0 * n ** 3
        want = None
        rtol = max(1e-5, float(numpy.finfo(numpy.float32).eps) * math.sqrt(n))  # sums of n terms in another order

        def check(got, what):
            if not numpy.allclose(got, want, rtol=rtol, atol=rtol * n / 4):
                raise RuntimeError(f"{what} differs from NumPy at n = {n}: max |error| "
                                   f"{float(numpy.max(numpy.abs(got - want))):.3g}")

        if fits("NumPy", n):
            start = time.perf_counter()
            want = numpy.matmul(host_a, host_b)  # (the warm-up)
            one = time.perf_counter() - start
            reps = repetitions(one, target, most=20)
            # NumPy's BLAS threads wait for a core on a busy machine: the
            # fastest of a few batches where they are short
            seconds = min(timed_numpy(lambda: numpy.matmul(host_a, host_b), reps)
                          for _ in range(3 if one < 0.1 else 1))
            last["NumPy"] = (n, seconds)
            child.row(kind="matmul", impl="NumPy", n=n, reps=reps, seconds=seconds, tflops=flops / seconds / 1e12)
        # gpupy's product in the form the driver picks for its device, and
        # in the other tiled form (registers on a GPU, shared memory on a
        # CPU renderer): which one suits a GPU is measured, not assumed.
        for impl, form in gpupy_product_forms(gp):
            if not fits(impl, n):
                continue
            try:
                gp.set_driver_option("tiled_products", form)
                a, b = gp.array(host_a), gp.array(host_b)
                for x in (a, b):
                    gp._core.evaluate_on_device(x)
                with numpy.errstate(all="ignore"):
                    got = numpy.asarray(a @ b)  # compiles
                    if want is not None:
                        check(got, f"{impl}'s product")
                    del got
                    # The same a @ b each time: dropped once evaluated, it
                    # is evaluated again when built again (a new constant
                    # in it would cost a pass over an input).
                    one, _ = time_gpupy(gp, lambda k: a @ b, 2)
                    reps = repetitions(one, target)
                    seconds, stats = time_gpupy(gp, lambda k: a @ b, reps)
                last[impl] = (n, seconds)
                child.row(kind="matmul", impl=impl, n=n, reps=reps, seconds=seconds,
                          tflops=flops / seconds / 1e12, evaluations_per_rep=round(stats["evaluations"] / reps, 2),
                          bytes_uploaded=stats["bytes_uploaded"], bytes_downloaded=stats["bytes_downloaded"],
                          evictions=stats["evictions"], host_placements=stats["host_placements"],
                          fallbacks=stats["fallbacks"])
                del a, b
            except Exception as exc:  # noqa: BLE001
                child.fail(f"{impl} at n = {n}", exc)
            finally:
                gp.set_driver_option("tiled_products", "default")
        for name in configs:
            impl = f"hand-written {name}"
            if not fits(impl, n):
                continue
            try:
                glsl.matmul_prepare(n, name)
                start = time.perf_counter()
                got = glsl.matmul_run(host_a, host_b)  # uploads A and B; the JIT
                one = time.perf_counter() - start
                if want is not None:
                    check(got, impl)
                del got
                reps = repetitions(min(one, glsl.matmul_time(1)), target, most=50)
                seconds = glsl.matmul_time(reps) / reps
                last[impl] = (n, seconds)
                child.row(kind="matmul", impl=impl, n=n, reps=reps, seconds=seconds, tflops=flops / seconds / 1e12)
            except Exception as exc:  # noqa: BLE001
                child.fail(f"{impl} at n = {n}", exc)
        log(f"  matmul {n}: " + ", ".join(f"{k} {t * 1e3:.3g} ms" for k, (m, t) in last.items() if m == n))


def section_shaders(child):
    import gpupy as gp
    import seeds
    import distmap
    import run as harness
    from common import Settings

    args = child.args
    glsl, reason = glsl_or_reason()
    if glsl is None:
        child.fail("hand-written GLSL unavailable", RuntimeError(reason))
        return
    grids = args.distmap_grids or SIZES[child.mode]["distmap"]
    points = args.distmap_points or SIZES[child.mode]["points"]
    # run.py's setup of the distance map: gpupy on OpenGL (default
    # placement), the hand-written shader in two forms, NumPy as the
    # reference; no C++ or numexpr (they compare CPUs, timed elsewhere).
    env_args = argparse.Namespace(drivers="opengl", suites=["distmap"], no_cpp=True, native=False, no_glsl=True,
                                  grids=None, points=None, sphere_sizes=None, sizes=None, expr=None)
    env = harness.Env(env_args)
    env.numexpr = None
    env.glsl = glsl
    env.glsl_modes = [("unrolled", 128), ("unrolled-nanmin", 128)]
    # NumPy's runs over a few seconds are extrapolated from fewer points
    # (linear in them), as run.py does: 2048² with 1000 points takes NumPy
    # ~20 s on a fast CPU.
    settings = Settings(quick=child.mode != "full", reps=3, budget_s=2.0, max_run_s=5.0, verbose=True)
    # (16x the pixels, but NumPy's longest runs are extrapolated)
    for n in sizes_in_time(child, grids, 4, lambda n: f"distance map at {n}²"):
        env.grids, env.points = (n,), tuple(points)
        stdout = sys.stdout
        sys.stdout = sys.stderr  # run.py's progress lines
        try:
            results = distmap.run(env, settings)
        finally:
            sys.stdout = stdout
        for r in results:
            first_stats = getattr(r, "stats_first", None) or {}
            child.row(kind="shader", workload="distance map", size=f"{n}²", n=n, points=r.params["S"], impl=r.impl,
                      seconds=r.typical, estimated=r.estimated is not None, failed=r.failed,
                      first_seconds=getattr(r, "first", None), compile_seconds=first_stats.get("compile_seconds"),
                      jit_seconds=first_stats.get("first_run_seconds"),
                      valid=None if r.ok is None else bool(r.ok))
            if r.failed:
                child.fail(f"distance map {r.case} {r.impl}", RuntimeError(r.failed))
            elif r.ok is False:
                child.fail(f"distance map {r.case} {r.impl}", RuntimeError(f"differs from NumPy (error {r.error:.2g})"))
    reps = 3
    for n in args.life_sizes or SIZES[child.mode]["life"]:
        if not child.fits(0.0):
            child.skipped(f"Life at {n}²", 0.0)
            continue
        for placement in ("device", "auto"):
            previous = gp.set_placement(placement)
            try:
                row = seeds.measure("life", n, reps)
                if "failed" in row:
                    raise RuntimeError(row["failed"])
                if not row["valid"]:
                    raise RuntimeError(f"differs from NumPy: {row['problem']}")
                seeds.measure_hand_written(row, reps)
                child.row(kind="shader", workload="life (10 steps)", size=row["size"], n=n, points=None,
                          placement="default" if placement == "auto" else placement, impl="gpupy-opengl",
                          seconds=row["gpupy_median"], numpy_seconds=row["numpy_median"],
                          hand_written=row["hand_written"], hand_written_seconds=row["hand_written_median"],
                          evaluations=row["evaluations"], host_engine_evaluations=row["host_engine_evaluations"],
                          fallbacks=row["fallbacks"], valid=True)
            except Exception as exc:  # noqa: BLE001
                child.fail(f"life {n}² placement {placement}", exc)
            finally:
                gp.set_placement(previous)


def section_seeds(child):
    import gpupy as gp
    import seeds

    names = child.args.seeds.split(",")
    unknown = [n for n in names if n not in seeds.SEEDS]
    if unknown:
        child.fail("seeds", ValueError(f"unknown workloads {unknown}; known: {', '.join(seeds.SEEDS)}"))
        return
    reps = 1 if child.mode == "tiny" else 3
    longest = 0.0
    for name in names:
        spec = seeds.SEEDS[name]
        sizes = (spec.sizes.tiny,) if child.mode == "tiny" else spec.sizes.chosen(child.mode == "quick", False)
        for n in sizes:
            # a row takes about twice the longest before it (larger sizes come later)
            if not child.fits(2 * longest):
                child.skipped(f"{name} {seeds.size_label(spec.sizes, n)}", 2 * longest)
                continue
            started = time.perf_counter()
            for placement in ("auto", "device"):
                previous = gp.set_placement(placement)
                try:
                    row = seeds.measure(name, n, reps)
                finally:
                    gp.set_placement(previous)
                keep = ("workload", "size", "n", "numpy_median", "gpupy_median", "ratio", "valid", "max_error",
                        "evaluations", "host_engine_evaluations", "eager_numpy_ops", "fallbacks", "host_placements",
                        "failed")
                child.row(kind="seed", placement="default" if placement == "auto" else placement,
                          **{k: row.get(k) for k in keep})
                if "failed" in row or not row.get("valid"):
                    child.fail(f"{name} {row['size']} placement {placement}",
                               RuntimeError(row.get("failed") or row.get("problem") or "invalid"))
            longest = max(longest, time.perf_counter() - started)


def describe_device(child):
    """The driver and device gpupy finds, for the header."""
    import numpy
    import gpupy as gp
    device = {}
    for line in gp._core.driver_describe().splitlines():
        key, _, value = line.partition(":")
        device[key.strip()] = value.strip()
    child.row(kind="describe", driver=gp.driver(), device=device, gpupy=gp.__version__, numpy=numpy.__version__,
              python=platform.python_version(), block_size=gp.block_size())


CHILDREN = {"bandwidth": section_bandwidth, "matmul": section_matmul, "shaders": section_shaders,
            "seeds": section_seeds, "describe": describe_device}


def child_main(args):
    # The rows go to the parent on this process's stdout; whatever else is
    # printed (by us, by run.py's harness, by C code) goes to stderr.
    rows_out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.path.insert(0, str(HERE))
    from common import LoadMeter, import_gpupy
    child = Child(args, rows_out)
    # On a shared machine the CPU's figures (NumPy's, and llvmpipe's) move
    # with what other processes take: said with each section.
    with LoadMeter() as load:
        try:
            import_gpupy()  # this checkout's in-place build, else as installed (as seeds.py and run.py take it)
            CHILDREN[args.child](child)
        except Exception as exc:  # noqa: BLE001 -- the section's failure, said to the parent
            child.fail(args.child, exc)
    if load.foreign is not None:
        child.row(kind="load", cores=load.foreign)
    rows_out.flush()
    return 1 if child.failures else 0


# ---------------------------------------------------------------- parent side

def machine_label(args):
    if args.machine:
        return args.machine
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), cpu)
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}"


def git_commit():
    try:
        out = subprocess.run(["git", "-C", str(HERE), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
        return out.stdout.strip() or "unknown"
    except OSError:
        return "unknown"


def run_section(name, argv, limit, env):
    """Runs one section's process; (rows, status, seconds)."""
    started = time.time()
    deadline = started + limit - MARGIN_S
    cmd = [sys.executable, str(Path(__file__).resolve()), *argv, "--child", name, "--deadline", repr(deadline)]
    # In this process's group (a signal that ends this run, such as
    # gpu_check.sh's `timeout`, ends it too). After a kill, what it printed
    # is read for a few seconds at most: a process stuck in a driver call
    # may take long to go.
    child = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=None)
    timed_out = False
    try:
        out, _ = child.communicate(timeout=limit + MARGIN_S)
    except subprocess.TimeoutExpired:
        timed_out = True
        child.kill()
        try:
            out, _ = child.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            out = b""
    rc = child.returncode
    rows = []
    for line in out.decode(errors="replace").splitlines():
        if line.startswith(ROW_PREFIX):
            rows.append(json.loads(line[len(ROW_PREFIX):]))
    took = time.time() - started
    if timed_out:
        status = f"cut at {limit + MARGIN_S:.0f} s"
    elif rc != 0:
        failures = [r["what"] for r in rows if r.get("kind") == "failed"]
        status = "failed: " + ("; ".join(failures) if failures else f"exit {rc}")
    else:
        status = "ok"
    return rows, status, took


# --- tables

def fmt_num(x, digits=3):
    if x is None:
        return "—"
    if x == 0:
        return "0"
    return f"{x:.{digits}g}" if abs(x) < 10 ** digits else f"{x:.0f}"


def fmt_ratio(x):
    """A ratio with two significant digits below 0.1 (the device's share
    of its copy bandwidth at small sizes), two decimals above."""
    if x is None:
        return "—"
    return f"{x:.2g}" if x < 0.1 else f"{x:.2f}"


def table(headers, rows):
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) if rows else len(str(h))
              for i, h in enumerate(headers)]

    def line(cells):
        return "| " + " | ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w)
                                  for i, (c, w) in enumerate(zip(cells, widths))) + " |"

    return "\n".join([line(headers), "|" + "|".join("-" * (w + 2) for w in widths) + "|"] + [line(r) for r in rows])


def by(rows, kind):
    return [r for r in rows if r.get("kind") == kind]


def size_label(n):
    return f"2^{n.bit_length() - 1}" if n & (n - 1) == 0 else str(n)


def report_bandwidth(rows):
    data = by(rows, "bandwidth")
    impls = []
    for r in data:
        if r["impl"] not in impls:
            impls.append(r["impl"])
    sizes = sorted({r["elements"] for r in data})
    cell = {(r["impl"], r["elements"]): r for r in data}
    out = ["GB/s = bytes read + written per evaluation / time per evaluation (float32; gpupy's and the "
           "hand-written results stay on the device)", ""]
    out.append(table(["elements", *impls], [[size_label(n), *(fmt_num(cell[(i, n)]["gb_s"]) if (i, n) in cell else "—"
                                                               for i in impls)] for n in sizes]))
    ratios = []
    for n in sizes:
        copy = cell.get(("device copy", n))
        for name in EXPRESSIONS:
            for suffix in ("", " checked"):
                g = cell.get((f"gpupy {name}{suffix}", n))
                npy = cell.get((f"NumPy {name}", n))
                hand = cell.get(("hand-written 2*a + 3*b (texture)", n)) if name == "2*a + 3*b" else None
                if g is None:
                    continue
                ratios.append([size_label(n), name + suffix, fmt_time(g["seconds"]),
                               fmt_ratio(g["gb_s"] / copy["gb_s"]) if copy else "—",
                               fmt_ratio(g["gb_s"] / hand["gb_s"]) if hand else "",
                               fmt_ratio(npy["seconds"] / g["seconds"]) + "x" if npy else "—",
                               g.get("evaluations_per_rep", "—"), g.get("bytes_uploaded", "—"),
                               g.get("bytes_downloaded", "—"), g.get("evictions", "—")])
    if ratios:
        out += ["", table(["elements", "gpupy", "per evaluation", "of copy", "of hand-written (texture)",
                           "NumPy/gpupy", "evaluations/rep", "bytes up", "bytes down", "evictions"], ratios)]
    return out


def report_matmul(rows):
    out = []
    peak = by(rows, "peak")
    peak_tflops = peak[0]["tflops"] if peak else None
    if peak:
        p = peak[0]
        out.append(f"device float32 peak, measured here: {p['gflops']:.1f} GFLOP/s (hand-written kernel: "
                   f"{p['chains']} independent vec4 fma chains per invocation, {p['groups']} work groups of "
                   f"{p['local']}, {p['flops']:.3g} flops in {fmt_time(p['seconds'])})")
    else:
        out.append("device float32 peak: not measured")
    data = by(rows, "matmul")
    impls = []
    for r in data:
        if r["impl"] not in impls:
            impls.append(r["impl"])
    sizes = sorted({r["n"] for r in data})
    cell = {(r["impl"], r["n"]): r for r in data}
    headers = ["n"]
    for i in impls:
        headers += [f"{i} TFLOP/s", "of peak"] if i != "NumPy" else ["NumPy TFLOP/s"]
    headers.append("gpupy/NumPy")
    table_rows = []
    for n in sizes:
        line = [str(n)]
        for i in impls:
            r = cell.get((i, n))
            line.append(fmt_num(r["tflops"]) if r else "—")
            if i != "NumPy":
                line.append(f"{r['tflops'] / peak_tflops:.1%}" if r and peak_tflops else "—")
        g, npy = cell.get(("gpupy", n)), cell.get(("NumPy", n))
        line.append(fmt_ratio(npy["seconds"] / g["seconds"]) + "x" if g and npy else "—")
        table_rows.append(line)
    out += ["", "TFLOP/s = 2 n^3 / time per product (float32; inputs on the device, product left there; NumPy: "
            "BLAS on the CPU)", "", table(headers, table_rows)]
    counts = [[str(r["n"]), r["evaluations_per_rep"], r["bytes_uploaded"], r["bytes_downloaded"], r["evictions"],
               r["host_placements"], r["fallbacks"]] for r in data if r["impl"] == "gpupy"]
    if counts:
        out += ["", "gpupy's counters over the timed products:", "",
                table(["n", "evaluations/product", "bytes up", "bytes down", "evictions", "host placements",
                       "fallbacks"], counts)]
    return out


def report_shaders(rows):
    data = by(rows, "shader")
    out = ["as a user's program is timed: from NumPy data to a NumPy result (upload and readback included)", ""]
    dm = [r for r in data if r["workload"] == "distance map"]
    cases = []
    for r in dm:
        if (r["n"], r["points"]) not in cases:
            cases.append((r["n"], r["points"]))
    cell = {(r["n"], r["points"], r["impl"]): r for r in dm}
    lines = []
    for n, s in cases:
        def t(impl):
            r = cell.get((n, s, impl))
            if r is None or r["seconds"] is None:
                return None, "—"
            return r["seconds"], fmt_time(r["seconds"]) + (" (est.)" if r["estimated"] else "")
        t_np, np_text = t("numpy")
        t_gp, gp_text = t("gpupy-opengl")
        t_fast, fast_text = t("glsl-unrolled")
        t_exact, exact_text = t("glsl-unrolled-nanmin")
        ratio = (lambda a, b: f"{a / b:.2f}" if a and b else "—")
        lines.append([f"distance map {n}², {s} points", np_text, gp_text, fast_text, exact_text,
                      ratio(t_gp, t_fast), ratio(t_gp, t_exact), (ratio(t_np, t_gp) + "x") if t_np and t_gp else "—"])
    if lines:
        out.append(table(["case", "NumPy", "gpupy", "hand-written", "hand-written, NumPy's NaN rule",
                          "gpupy / hand-written", "gpupy / hand-written (NaN rule)", "NumPy/gpupy"], lines))
    # gpupy's first run apart: how much of it was compiling its programs
    # and their first dispatch (the driver's JIT, one run included).
    first = [r for r in dm if r["impl"] == "gpupy-opengl" and r.get("first_seconds") is not None]
    if first:
        out += ["", table(["gpupy's first run", "first run", "compile", "first dispatches", "warm"],
                          [[f"distance map {r['size']}, {r['points']} points", fmt_time(r["first_seconds"]),
                            fmt_time(r.get("compile_seconds")), fmt_time(r.get("jit_seconds")),
                            fmt_time(r["seconds"]) if r["seconds"] is not None and not r["estimated"] else "—"]
                           for r in first])]
    life = [r for r in data if r["workload"].startswith("life")]
    if life:
        out += ["", table(["Life (10 steps)", "placement", "NumPy", "gpupy", "hand-written", "gpupy / hand-written",
                           "NumPy/gpupy", "evaluations device/host"],
                          [[r["size"], r["placement"], fmt_time(r["numpy_seconds"]), fmt_time(r["seconds"]),
                            fmt_time(r["hand_written_seconds"]), f"{r['seconds'] / r['hand_written_seconds']:.2f}",
                            f"{r['numpy_seconds'] / r['seconds']:.2f}x",
                            f"{r['evaluations']}/{r['host_engine_evaluations']}"] for r in life])]
    return out


def report_seeds(rows):
    data = by(rows, "seed")
    keys = []
    for r in data:
        if (r["workload"], r["size"]) not in keys:
            keys.append((r["workload"], r["size"]))
    cell = {(r["workload"], r["size"], r["placement"]): r for r in data}
    lines = []
    for w, s in keys:
        line = [w, s]
        valid, fallbacks = True, 0
        # NumPy is timed beside each placement's runs (seeds.measure): its
        # own figure is the one each ratio is of.
        for placement in ("default", "device"):
            r = cell.get((w, s, placement))
            valid = valid and bool(r and r.get("valid"))
            fallbacks += (r or {}).get("fallbacks") or 0
            if r is None or r.get("failed"):
                line += ["FAILED" if r else "—", "—", "—", "—"]
                continue
            line += [fmt_time(r["numpy_median"]), fmt_time(r["gpupy_median"]), f"{r['ratio']:.2f}x",
                     f"{r['evaluations']}/{r['host_engine_evaluations']}"]
        lines.append(line + ["yes" if valid else "NO", fallbacks])
    return ["NumPy/gpupy: above 1, gpupy is faster (benchmarks/seeds.py's timing: inputs from NumPy, results to "
            "NumPy; evaluations on the device/host engine)", "",
            table(["workload", "size", "NumPy", "gpupy default", "NumPy/gpupy", "evaluations", "NumPy",
                   "gpupy device", "NumPy/gpupy", "evaluations", "valid", "fallbacks"], lines)]


REPORTS = {"bandwidth": ("Resident elementwise work against the device's copy bandwidth", report_bandwidth),
           "matmul": ("Matrix products against the device's measured float32 peak", report_matmul),
           "shaders": ("The distance map and Life against hand-written shaders", report_shaders),
           "seeds": ("Seed workloads, default placement and the device forced", report_seeds)}


# --- files

def slug(text):
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40] or "unknown"


def write_csv(directory, name, rows, header_lines):
    data = [r for r in rows if r.get("kind") not in ("skipped", "failed")]
    skipped = [r for r in rows if r.get("kind") in ("skipped", "failed")]
    directory.mkdir(parents=True, exist_ok=True)
    fields = []
    for r in data + skipped:
        fields += [k for k in r if k not in fields]
    path = directory / f"{name}.csv"
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["section", *fields])
        w.writeheader()
        for r in data + skipped:
            w.writerow({"section": name, **r})
    (directory / "run.txt").write_text("\n".join(header_lines) + "\n")
    return path


def plot(directory, prefix, rows, title):
    """bandwidth.png and matmul.png; None with the reason if matplotlib is
    not installed."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None, "matplotlib is not installed"
    directory.mkdir(parents=True, exist_ok=True)
    written = []

    def save(fig, ax, xlabel, ylabel, what, name):
        """Log-log axes, labels, legend; writes the figure and returns its path."""
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(f"{what}\n{title}", fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
        path = directory / f"{prefix}-{name}.png"
        fig.tight_layout()
        fig.savefig(path, dpi=80)
        plt.close(fig)
        return path

    bw = by(rows.get("bandwidth", []), "bandwidth")
    if bw:
        fig, ax = plt.subplots(figsize=(8, 5))
        for impl in dict.fromkeys(r["impl"] for r in bw):
            pts = sorted((r["elements"], r["gb_s"]) for r in bw if r["impl"] == impl)
            style = {"color": "black", "linewidth": 2.5} if impl == "device copy" else \
                {"linestyle": "--" if impl.endswith("checked") or impl.startswith("NumPy") else "-", "marker": "o"}
            label = impl + (" (CPU)" if impl.startswith("NumPy") else "")
            ax.plot([p[0] for p in pts], [p[1] for p in pts], label=label, **style)
        written.append(save(fig, ax, "float32 elements", "GB/s (bytes read + written / time)",
                            "Resident elementwise work", "bandwidth"))
    mm = by(rows.get("matmul", []), "matmul")
    if mm:
        fig, ax = plt.subplots(figsize=(8, 5))
        for impl in dict.fromkeys(r["impl"] for r in mm):
            pts = sorted((r["n"], r["tflops"]) for r in mm if r["impl"] == impl)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o",
                    label="NumPy BLAS (CPU)" if impl == "NumPy" else impl, linestyle="--" if impl == "NumPy" else "-")
        peak = by(rows.get("matmul", []), "peak")
        if peak:
            ax.axhline(peak[0]["tflops"], color="black", linewidth=2.5,
                       label=f"device float32 peak, measured ({peak[0]['gflops']:.4g} GFLOP/s)")
        written.append(save(fig, ax, "n (n x n float32)", "TFLOP/s (2 n^3 / time)", "Matrix products", "matmul"))
    return written, None


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                epilog="\n\n".join(__doc__.split("\n\n")[1:]),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="small sizes (llvmpipe)")
    p.add_argument("--tiny", action="store_true", help="the smallest sizes, for the test")
    p.add_argument("--only", help="comma-separated sections (" + ",".join(SECTIONS) + ")")
    p.add_argument("--limit-seconds", type=float,
                   help="each section's time limit (default: full " +
                        ", ".join(f"{k} {v}" for k, v in LIMITS["full"].items()) + "; --quick/--tiny 90/60 each)")
    p.add_argument("--csv", metavar="DIR", help="write each section's rows to DIR/<section>.csv (and DIR/run.txt)")
    p.add_argument("--plot", metavar="DIR", help="draw DIR/<device>-bandwidth.png and -matmul.png (matplotlib)")
    p.add_argument("--machine", help="the machine's description in the output and the plots' titles "
                                     "(default: the CPU model and core count)")
    ints = lambda s: [int(float(v)) for v in s.split(",")]  # noqa: E731
    p.add_argument("--bandwidth-sizes", type=ints, metavar="N,N", help="elements (default: full 2^20..2^26)")
    p.add_argument("--matmul-sizes", type=ints, metavar="N,N", help="n (default: full 512..8192)")
    p.add_argument("--distmap-grids", type=ints, metavar="N,N", help="default: full 512,2048")
    p.add_argument("--distmap-points", type=ints, metavar="S,S", help="default: full 100,1000")
    p.add_argument("--life-sizes", type=ints, metavar="N,N", help="default: full 1024")
    p.add_argument("--seeds", default=SEED_WORKLOADS, help=f"seed workloads (default {SEED_WORKLOADS})")
    p.add_argument("--hand-matmul", default=HAND_MATMUL,
                   help="hand-written product configurations (distmap_glsl.cpp's kMatmulConfigs; 'default': the "
                        f"fastest on llvmpipe; default {HAND_MATMUL})")
    p.add_argument("--child", choices=(*SECTIONS, "describe"), help=argparse.SUPPRESS)
    p.add_argument("--deadline", type=float, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    args.sections = args.only.split(",") if args.only else list(SECTIONS)
    unknown = [s for s in args.sections if s not in SECTIONS]
    if unknown:
        p.error(f"unknown sections {unknown}; known: {', '.join(SECTIONS)}")
    return args


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    if args.child:
        return child_main(args)
    env = dict(os.environ)
    env.setdefault("GPUPY_DRIVER", "opengl")
    env["PYTHONUNBUFFERED"] = "1"
    mode = mode_of(args)
    started = time.time()
    # (in a process of its own too: a driver that hangs at start must not
    # hold this one)
    rows, status, _ = run_section("describe", argv, 120, env)
    info = next((r for r in rows if r.get("kind") == "describe"), None)
    renderer = (info or {}).get("device", {}).get("renderer", "unknown")
    header = [f"gpupy GPU benchmark ({mode}), {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(started))}",
              f"machine: {machine_label(args)}"]
    if info:
        header += [f"device: {renderer} | {info['device'].get('gl_version', '?')} (gpupy driver {info['driver']})",
                   f"gpupy {info['gpupy']} (commit {git_commit()}), NumPy {info['numpy']}, Python {info['python']}, "
                   f"block size {info['block_size']} elements"]
    header.append("command: python benchmarks/gpu.py " + shlex.join(argv))
    print("\n".join(header), flush=True)
    if info is None:
        print(f"\ngpupy did not start: {status}", flush=True)
        return 1
    if info["driver"] != "opengl":
        print(f"\nnote: gpupy runs on the {info['driver']} driver, not OpenGL: the device figures are that driver's")
    # Builds the hand-written GLSL once here (g++), so that the sections
    # find it in the cache rather than each compiling it.
    sys.path.insert(0, str(HERE))
    import native
    try:
        native.build("distmap_glsl.cpp", ["-O2"], native.GL_LIBS)
    except native.BuildError as exc:
        print(f"\nnote: the hand-written GLSL does not build here ({str(exc).splitlines()[0]})", flush=True)

    section_argv = [a for a in argv]
    all_rows, summary, failed = {}, [], 0
    for name in args.sections:
        limit = args.limit_seconds or LIMITS[mode][name]
        title, report = REPORTS[name]
        print(f"\n== {name}: {title} (limit {limit:.0f} s)", flush=True)
        rows, status, took = run_section(name, section_argv, limit, env)
        all_rows[name] = rows
        try:
            lines = report(rows)
        except Exception as exc:  # noqa: BLE001 -- a table that cannot be drawn is a failed section
            lines = [f"(no table: {type(exc).__name__}: {exc})"]
            status = "failed" if status == "ok" else status
        print("\n".join(lines), flush=True)
        for r in rows:
            if r.get("kind") == "load" and r["cores"] >= 0.25:
                print(f"other processes used {r['cores']:.2f} cores meanwhile (of {os.cpu_count()})")
            elif r.get("kind") == "skipped":
                print(f"left out: {r['what']} (~{r['predicted_s']:.1f} s predicted, past the limit)")
            elif r.get("kind") == "failed":
                print(f"FAILED: {r['what']}")
        if status != "ok":
            failed += 1
        print(f"-- {name}: {status}, {took:.0f} s", flush=True)
        summary.append(f"{name:10s} {status} ({took:.0f} s)")
        if args.csv:
            write_csv(Path(args.csv), name, rows, header)
    if args.csv:
        print(f"\nCSV: {args.csv}/")
    if args.plot:
        prefix = slug(renderer) + ("" if mode == "full" else f"-{mode}")
        title = f"{renderer}; {machine_label(args)}; {time.strftime('%Y-%m-%d', time.gmtime(started))}"
        written, why = plot(Path(args.plot), prefix, all_rows, title)
        print(f"plots: {', '.join(map(str, written))}" if written else f"plots skipped: {why or 'nothing to draw'}")
    print(f"\nsummary ({time.time() - started:.0f} s):\n  " + "\n  ".join(summary))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
