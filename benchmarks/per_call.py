"""What one small call costs: gpupy against NumPy, call by call.

A drop-in must be within a few tenths of a microsecond of NumPy's cost per
call at small sizes, or a Python loop over rows, elements or random draws
runs slower under gpupy than under NumPy whatever the device does. Each
row is one common small-array call, written once and run with `xp` =
numpy and `xp` = gpupy on the same data (gpupy's inputs already gpupy
arrays, as in a script written with `import gpupy as np`):

  scalar read         a[i] of a 1,000-element float32 array
  scalar to Python    float(a[i])
  row read            m[i] of a 1,000 x 4 array
  row iteration step  one step of `for row in m`
  one-element write   a[i] = 2.5
  slice write         a[10:20] = 2.5
  small ufunc         a16 + b16 (16 float32 elements)
  small reduction     a32.sum() (32 elements)
  small arg-reduction a32.argmin()
  mask of 32          a32[mask32]
  asarray out         numpy.asarray(a16)
  compare with tuple  (m[i] == (1, 0, 1, 1)).all() on a boolean 1,000 x 4 array
  one random draw     xp.random.randint(0, 10)
  insert              xp.insert(big, 5, 1.0) on 400,000 float64 elements
  delete              xp.delete(big, 5) on the same

Every call's result is checked against NumPy's first. Each is timed in
batches (`--calls` calls per batch, the garbage collector off), NumPy and
gpupy alternating batch by batch, and the median batch's time per call is
reported with gpupy's excess over NumPy in microseconds and the ratio.
gpupy's counters over the timed batches say what it did: fallbacks,
evaluations, eager NumPy ops (small work NumPy computes at once).

    python benchmarks/per_call.py                      # the table
    python benchmarks/per_call.py --only scalar_read,small_ufunc --batches 15
    python benchmarks/per_call.py --plot per_call.png  # a bar chart too
    python benchmarks/per_call.py --json per_call.json
"""

import argparse
import gc
import json
import statistics
import sys
import time

import numpy

from common import import_gpupy

gpupy = import_gpupy()

# A call is within reach of NumPy's when it costs at most this much more.
BUDGET_US = 0.3


def data(xp):
    rng = numpy.random.default_rng(7)
    a = rng.random(1000, dtype=numpy.float32)
    m = rng.random((1000, 4), dtype=numpy.float32)
    bits = rng.random((1000, 4)) < 0.5
    a16, b16 = rng.random(16, dtype=numpy.float32), rng.random(16, dtype=numpy.float32)
    a32 = rng.random(32, dtype=numpy.float32)
    mask32 = rng.random(32) < 0.5
    big = rng.random(400_000)
    return {k: xp.asarray(v) for k, v in dict(a=a, m=m, bits=bits, a16=a16, b16=b16, a32=a32, mask32=mask32,
                                             big=big).items()}


def row_iterator(m):
    """A `for row in m` loop, one step per call (restarting at the end)."""
    while True:
        for row in m:
            yield row


# name -> (description, make(xp, d) -> a function of no arguments returning the call's result)
CALLS = {
    "scalar_read": ("a[i]", lambda xp, d: lambda: d["a"][417]),
    "scalar_to_python": ("float(a[i])", lambda xp, d: lambda: float(d["a"][417])),
    "row_read": ("m[i]", lambda xp, d: lambda: d["m"][417]),
    "row_iteration": ("one step of for row in m", lambda xp, d: row_iterator(d["m"]).__next__),
    "element_write": ("a[i] = 2.5", lambda xp, d: lambda: d["a"].__setitem__(417, 2.5)),
    "slice_write": ("a[10:20] = 2.5", lambda xp, d: lambda: d["a"].__setitem__(slice(10, 20), 2.5)),
    "small_ufunc": ("a16 + b16", lambda xp, d: lambda: d["a16"] + d["b16"]),
    "small_reduction": ("a32.sum()", lambda xp, d: lambda: d["a32"].sum()),
    "small_arg_reduction": ("a32.argmin()", lambda xp, d: lambda: d["a32"].argmin()),
    "mask_32": ("a32[mask32]", lambda xp, d: lambda: d["a32"][d["mask32"]]),
    "asarray_out": ("numpy.asarray(a16)", lambda xp, d: lambda: numpy.asarray(d["a16"])),
    "compare_tuple": ("(bits[i] == (1, 0, 1, 1)).all()",
                      lambda xp, d: lambda: (d["bits"][417] == (True, False, True, True)).all()),
    "random_draw": ("random.randint(0, 10)", lambda xp, d: lambda: xp.random.randint(0, 10)),
    "insert": ("insert(big, 5, 1.0), 400,000 elements", lambda xp, d: lambda: xp.insert(d["big"], 5, 1.0)),
    "delete": ("delete(big, 5), 400,000 elements", lambda xp, d: lambda: xp.delete(d["big"], 5)),
}


def as_numpy(value):
    """A call's result as NumPy sees it (gpupy results read back)."""
    if value is None:
        return None
    return numpy.asarray(value)


def check(name):
    """gpupy's result of the call equals NumPy's (random draws: in range);
    returns a problem or None."""
    got = as_numpy(CALLS[name][1](gpupy, data(gpupy))())
    want = as_numpy(CALLS[name][1](numpy, data(numpy))())
    if name == "random_draw":
        return None if 0 <= int(got) < 10 else f"draw {got} outside [0, 10)"
    if got is None and want is None:
        return None
    if got.shape != want.shape or got.dtype != want.dtype or not numpy.array_equal(got, want):
        return f"gpupy gave {got!r}, NumPy {want!r}"
    return None


def batch_seconds(fn, calls):
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t0) / calls


def measure(name, calls, batches):
    """Median time per call of each module, alternating batches."""
    fns = {xp.__name__: CALLS[name][1](xp, data(xp)) for xp in (numpy, gpupy)}
    for fn in fns.values():  # warm-up (caches, first-use costs)
        batch_seconds(fn, max(1, calls // 10))
    times = {k: [] for k in fns}
    gpupy.reset_stats()
    before = gpupy.stats()
    gc.collect()
    gc_was = gc.isenabled()
    gc.disable()
    try:
        for _ in range(batches):
            for k, fn in fns.items():
                times[k].append(batch_seconds(fn, calls))
    finally:
        if gc_was:
            gc.enable()
    after = gpupy.stats()
    total = calls * batches
    counters = {k: (after[k] - before.get(k, 0)) / total
                for k in ("fallbacks", "evaluations", "host_engine_evaluations", "eager_numpy_ops")}
    np_s, gp_s = (statistics.median(times[k]) for k in ("numpy", "gpupy"))
    return {"call": name, "what": CALLS[name][0], "numpy_us": np_s * 1e6, "gpupy_us": gp_s * 1e6,
            "excess_us": (gp_s - np_s) * 1e6, "ratio": gp_s / np_s, **{k + "_per_call": v for k, v in counters.items()}}


def table(rows):
    out = ["| call | NumPy | gpupy | gpupy − NumPy | gpupy / NumPy | within 0.3 µs | per call: fallbacks · evaluations · eager NumPy ops |",
           "|---|---:|---:|---:|---:|---|---|"]
    for r in rows:
        if "problem" in r:
            out.append(f"| {r['what']} | | | | | WRONG: {r['problem']} | |")
            continue
        out.append(f"| {r['what']} | {r['numpy_us']:.2f} µs | {r['gpupy_us']:.2f} µs | {r['excess_us']:+.2f} µs | "
                   f"{r['ratio']:.2f}x | {'yes' if r['excess_us'] <= BUDGET_US else 'no'} | "
                   f"{r['fallbacks_per_call']:.2g} · {r['evaluations_per_call'] + r['host_engine_evaluations_per_call']:.2g}"
                   f" · {r['eager_numpy_ops_per_call']:.2g} |")
    return "\n".join(out)


def plot(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in rows if "problem" not in r]
    fig, ax = plt.subplots(figsize=(8, 0.35 * len(rows) + 1.2))
    y = range(len(rows))
    ax.barh([i + 0.2 for i in y], [r["numpy_us"] for r in rows], height=0.4, label="NumPy")
    ax.barh([i - 0.2 for i in y], [r["gpupy_us"] for r in rows], height=0.4, label="gpupy")
    ax.set_yticks(list(y), [r["what"] for r in rows], fontsize=8)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel("µs per call (log scale)")
    ax.legend()
    ax.set_title("Cost per call, small arrays")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--only", help="comma-separated calls (default: all): " + ", ".join(CALLS))
    p.add_argument("--calls", type=int, default=2000, help="calls per batch (default 2000)")
    p.add_argument("--batches", type=int, default=9, help="batches per module (default 9)")
    p.add_argument("--json", metavar="FILE", help="write the rows as JSON")
    p.add_argument("--plot", metavar="FILE", help="write a bar chart (matplotlib)")
    args = p.parse_args(argv)
    names = args.only.split(",") if args.only else list(CALLS)
    unknown = [n for n in names if n not in CALLS]
    if unknown:
        p.error(f"unknown calls {unknown}; known: {', '.join(CALLS)}")
    rows = []
    for name in names:
        problem = check(name)
        if problem:
            rows.append({"call": name, "what": CALLS[name][0], "problem": problem})
            continue
        # insert/delete move 400,000 elements: fewer calls per batch.
        calls = max(1, args.calls // 200) if name in ("insert", "delete") else args.calls
        rows.append(measure(name, calls, args.batches))
    print(f"gpupy {gpupy.__version__} (driver {gpupy.driver()}), NumPy {numpy.__version__}, "
          f"Python {sys.version.split()[0]}; median of {args.batches} batches per call")
    print()
    print(table(rows))
    within = sum(1 for r in rows if "problem" not in r and r["excess_us"] <= BUDGET_US)
    print()
    print(f"{within} of {len(rows)} calls within {BUDGET_US} µs of NumPy's")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    if args.plot:
        plot(rows, args.plot)
    return 1 if any("problem" in r for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
