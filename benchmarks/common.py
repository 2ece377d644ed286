"""Timing, result records, correctness checks and machine load.

Every time is taken with time.perf_counter around a Python call that
returns the finished result as a NumPy array (for gpupy: building the
expression, evaluating it and reading it back). The first call of a case is
kept apart ("first run": compile and JIT land there); then warm repetitions
follow, and their median and minimum are reported.
"""

import gc
import os
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np


def import_gpupy():
    """This checkout's in-place build (tools/dev_build.sh, tools/gpu_check.sh)
    where it has one, else gpupy as installed: an older installation must
    not stand in for the code beside the script (a benchmark run from a
    checkout measured a stale site-packages copy so)."""
    root = Path(__file__).resolve().parents[1]
    if any((root / "gpupy").glob("_core*.so")):
        sys.path.insert(0, str(root))
    import gpupy
    return gpupy


@dataclass
class Settings:
    quick: bool = False
    reps: int = 5                 # warm repetitions (at most)
    budget_s: float = 30.0        # stop adding warm repetitions after this much warm time
    max_run_s: float = 600.0      # a single run predicted longer than this is estimated, not run
    native: bool = False          # also build the C++ version with -march=native
    wait_quiet_s: float = 0.0     # before each case, wait up to this long for other processes to go quiet
    quiet_cores: float = 0.3      # "quiet": other processes use less than this many cores
    verbose: bool = True


@dataclass
class Result:
    bench: str                    # "distmap", "sphere", "elementwise", "overhead"
    case: str                     # e.g. "512² |S|=1000"
    impl: str                     # "numpy", "gpupy-opengl", ...
    params: dict = field(default_factory=dict)
    first: float = None           # seconds, first run in this process
    times: list = field(default_factory=list)  # warm runs, seconds
    cpu_times: list = field(default_factory=list)  # CPU seconds of this process (all its threads) per warm run
    cpu_first: float = None       # ... of the first run
    error: float = None           # max |got - ref| / max |ref|
    bad_fraction: float = None    # share of elements outside tolerance
    ok: bool = None               # None: not checked (it is the reference)
    estimated: float = None       # seconds, extrapolated (not run)
    failed: str = None            # exception text
    phases: dict = field(default_factory=dict)  # gpupy: build/evaluate/readback of the median run
    stats_first: dict = field(default_factory=dict)  # gpupy.stats() delta over the first run
    stats_warm: dict = field(default_factory=dict)   # ... over the last warm run
    foreign_cpu: float = None     # CPU share used by other processes while this case ran (0..ncores)
    note: str = ""

    @property
    def median(self):
        return statistics.median(self.times) if self.times else None

    @property
    def cpu_median(self):
        return statistics.median(self.cpu_times) if self.cpu_times else self.cpu_first

    @property
    def best(self):
        return min(self.times) if self.times else None

    @property
    def typical(self):
        """The time a table shows: median of warm runs, else the single
        (first) run, else the estimate."""
        if self.times:
            return self.median
        if self.first is not None and not self.failed:
            return self.first
        return self.estimated


def log(settings, *args):
    if settings.verbose:
        print(*args, flush=True)


# ---------------------------------------------------------------- load

def _cpu_jiffies():
    """(busy, total) jiffies of the whole machine from /proc/stat."""
    try:
        with open("/proc/stat") as f:
            parts = f.readline().split()[1:]
    except OSError:
        return None
    vals = [int(v) for v in parts]
    idle = vals[3] + (vals[4] if len(vals) > 4 else 0)
    return sum(vals) - idle, sum(vals)


class LoadMeter:
    """CPU used by *other* processes while a case runs, in cores.

    Machine busy time (/proc/stat) minus this process's CPU time (its
    llvmpipe and OpenMP threads included) over the wall time. On a shared
    2-core machine a value near 1 means another process took a whole core
    and the timings of multi-threaded versions suffer most.
    """

    def __init__(self):
        self.hz = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100

    def __enter__(self):
        self.j0 = _cpu_jiffies()
        self.t0 = time.perf_counter()
        self.c0 = sum(os.times()[:2])
        return self

    def __exit__(self, *exc):
        self.foreign = None
        j1 = _cpu_jiffies()
        wall = time.perf_counter() - self.t0
        if self.j0 is None or j1 is None or wall <= 0.05:
            return False
        machine = (j1[0] - self.j0[0]) / self.hz
        ours = sum(os.times()[:2]) - self.c0
        self.foreign = max(0.0, (machine - ours) / wall)
        return False


def foreign_load_now(seconds=1.0):
    with LoadMeter() as m:
        time.sleep(seconds)
    return m.foreign


def wait_quiet(settings):
    """Waits (at most settings.wait_quiet_s) until other processes use less
    than settings.quiet_cores; returns the seconds waited."""
    if settings.wait_quiet_s <= 0:
        return 0.0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < settings.wait_quiet_s:
        load = foreign_load_now(0.5)
        if load is None or load < settings.quiet_cores:
            break
    return time.perf_counter() - t0


# ---------------------------------------------------------------- checks

def compare(got, ref, rtol, atol_rel=None, max_bad_fraction=0.0):
    """(ok, max error relative to max|ref|, fraction of elements outside tolerance).

    An element is outside when |got - ref| > atol + rtol * |ref|, atol being
    atol_rel * max|ref| (default rtol). NaNs must match NaNs.
    """
    got = np.asarray(got)
    ref = np.asarray(ref)
    if got.shape != ref.shape:
        return False, float("inf"), 1.0
    if got.dtype == bool or ref.dtype == bool:
        bad = got != ref
        frac = float(bad.mean()) if bad.size else 0.0
        return frac <= max_bad_fraction, frac, frac
    g = got.astype(np.float64)
    r = ref.astype(np.float64)
    nan_g, nan_r = np.isnan(g), np.isnan(r)
    finite = ~(nan_g | nan_r)
    scale = float(np.max(np.abs(r[finite]))) if finite.any() else 1.0
    scale = scale if scale > 0 else 1.0
    atol = (rtol if atol_rel is None else atol_rel) * scale
    diff = np.where(finite, np.abs(g - r), 0.0)
    bad = (nan_g != nan_r) | (diff > atol + rtol * np.abs(np.where(finite, r, 0.0)))
    same_inf = np.isinf(g) & np.isinf(r) & (np.sign(g) == np.sign(r))
    bad &= ~same_inf
    diff = np.where(same_inf, 0.0, diff)
    frac = float(bad.mean()) if bad.size else 0.0
    err = float(np.max(diff)) / scale if diff.size else 0.0
    return frac <= max_bad_fraction, err, frac


# ---------------------------------------------------------------- gpupy stats

STAT_KEYS = ("evaluations", "host_engine_evaluations", "programs_compiled", "program_cache_hits", "compile_seconds", "first_run_seconds",
             "check_ir_calls", "collapses", "blocks_uploaded", "blocks_downloaded", "bytes_uploaded",
             "bytes_downloaded", "blocks_packed", "evictions", "host_evaluations", "nodes_created",
             "nodes_shared", "fallbacks", "fallbacks_by_function")


def evals(stats):
    """'device/host engine' evaluation counts of a stats() delta."""
    if not stats:
        return "—"
    return f"{stats.get('evaluations', 0)}/{stats.get('host_engine_evaluations', 0)}"


def gpupy_stats(gp):
    s = gp.stats()
    return {k: s.get(k) for k in STAT_KEYS if k in s}


# ---------------------------------------------------------------- runner

class Clock:
    """Phase marks inside one run: clock.mark("build") etc."""

    def __init__(self):
        self.t0 = time.perf_counter()
        self.last = self.t0
        self.phases = {}

    def mark(self, name):
        now = time.perf_counter()
        self.phases[name] = self.phases.get(name, 0.0) + (now - self.last)
        self.last = now


def timed_call(fn, *args):
    """Runs fn(clock, *args); (seconds, value, phases, cpu seconds). The
    caller keeps the garbage collector off (see run_case).

    CPU seconds: time.process_time() of this process, all threads
    (llvmpipe's and OpenMP's included). On a busy shared machine it moves
    much less than wall time: a figure of the work done, not of the wait.
    """
    c0 = time.process_time()
    clock = Clock()
    value = fn(clock, *args)
    t = time.perf_counter() - clock.t0
    cpu = time.process_time() - c0
    return t, value, clock.phases, cpu


SHORT_BUDGET_S = 0.25   # fast cases repeat until this much warm time ...
SHORT_MAX_REPS = 200    # ... or this many runs


def _more(done, spent, settings, min_warm):
    """Whether to do another warm run."""
    if done < min_warm:
        return True
    if min_warm == 0 and done == 0:
        return False
    if spent >= settings.budget_s:
        return False
    if done < settings.reps:
        return True
    return spent < SHORT_BUDGET_S and done < SHORT_MAX_REPS


def run_case(result, fn, settings, *, check=None, gp=None, min_warm=1):
    """Fills result with a first run and warm runs of fn(clock).

    fn must return a NumPy array (the finished result). check(value) ->
    (ok, err, bad_fraction) is applied to the first and the last run. gp:
    the gpupy module, to record stats() deltas. Returns the first value.
    """
    first_value = None
    wait_quiet(settings)
    # The cyclic garbage collector stays off for the whole case (collected
    # once before): its pauses would land in random runs. Reference
    # counting still frees every run's arrays at once.
    gc.collect()
    gc_was_enabled = gc.isenabled()
    gc.disable()
    with LoadMeter() as meter:
        try:
            if gp is not None:
                gp.reset_stats()
            t, value, phases, result.cpu_first = timed_call(fn)
            result.first = t
            if gp is not None:
                result.stats_first = gpupy_stats(gp)
            first_value = value
            if check is not None:
                result.ok, result.error, result.bad_fraction = check(value)
            del value
            # Compiling and the first dispatch (JIT) of gpupy's new
            # programs, inside the first run.
            compiling = sum((result.stats_first or {}).get(k) or 0.0 for k in ("compile_seconds", "first_run_seconds"))
            if result.first > settings.budget_s and compiling < 0.5 * result.first:
                # One run longer than the whole warm budget: it is the figure
                # (compile and JIT are a small share of it). Where they are
                # most of it -- a GPU compiling long programs -- one warm run
                # still follows, or the figure would be the compiler's.
                min_warm = 0
                result.note = result.note or "single run (longer than the per-case budget)"
            warm_phases = []
            spent = 0.0
            while _more(len(result.times), spent, settings, min_warm):
                if gp is not None:
                    gp.reset_stats()
                t, value, phases, cpu = timed_call(fn)
                result.times.append(t)
                result.cpu_times.append(cpu)
                warm_phases.append((t, phases))
                spent += t
                if gp is not None:
                    result.stats_warm = gpupy_stats(gp)
                last = value
                del value
            if gp is not None and result.stats_warm and not any(
                    result.stats_warm.get(k) for k in ("evaluations", "host_engine_evaluations", "host_evaluations")):
                if result.stats_warm.get("eager_numpy_ops"):
                    result.note = (f"warm run computed in NumPy at once ({result.stats_warm['eager_numpy_ops']} "
                                   "small ops on host values), no evaluation")
                else:
                    result.note = "warm run evaluated nothing (a cached result was reused)"
            if warm_phases:
                med = sorted(warm_phases, key=lambda tp: tp[0])[len(warm_phases) // 2]
                result.phases = dict(med[1])
                if check is not None:
                    ok, err, frac = check(last)
                    result.ok = bool(result.ok and ok)
                    result.error = max(result.error, err)
                    result.bad_fraction = max(result.bad_fraction, frac)
                del last
        except Exception as exc:  # a failing implementation is a result, not a crash
            result.failed = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"
        finally:
            if gc_was_enabled:
                gc.enable()
    result.foreign_cpu = meter.foreign
    return first_value


# ---------------------------------------------------------------- formatting

def log_case(settings, label, name, res, bad_fraction=True):
    """The progress line of one finished case: times and the check's verdict."""
    if res.failed:
        status = "FAILED " + res.failed
    elif res.ok is None:
        status = ""
    elif res.ok:
        status = "ok"
    elif bad_fraction:
        status = f"WRONG (err {res.error:.2g}, {res.bad_fraction:.2g} off)"
    else:
        status = f"WRONG (err {res.error:.2g})"
    log(settings, f"  {label} {name:<15} first {fmt_time(res.first):>9}  "
                  f"median {fmt_time(res.median):>9}  min {fmt_time(res.best):>9}  {status}")


def fmt_time(t):
    if t is None:
        return "—"
    if t >= 100:
        return f"{t:.0f} s"
    if t >= 1:
        return f"{t:.2f} s"
    if t >= 1e-3:
        return f"{t * 1e3:.3g} ms"
    return f"{t * 1e6:.3g} µs"


def fmt_ratio(x):
    if x is None:
        return "—"
    if x >= 100:
        return f"{x:.0f}x"
    if x >= 10:
        return f"{x:.1f}x"
    return f"{x:.2f}x"


def table(headers, rows, align=None):
    """A Markdown table (also readable as plain text)."""
    cols = len(headers)
    widths = [max(len(str(headers[i])), *(len(str(r[i])) for r in rows)) if rows else len(str(headers[i]))
              for i in range(cols)]
    align = align or ["<"] + [">"] * (cols - 1)

    def line(cells):
        out = []
        for i, c in enumerate(cells):
            c = str(c)
            out.append(c.ljust(widths[i]) if align[i] == "<" else c.rjust(widths[i]))
        return "| " + " | ".join(out) + " |"

    sep = "|" + "|".join(("-" * (w + 1) + ":" if a == ">" else ":" + "-" * (w + 1)) for w, a in zip(widths, align)) + "|"
    return "\n".join([line(headers), sep] + [line(r) for r in rows])
