"""What NumPy's floating-point warnings cost gpupy: each expression under
NumPy's default error state (divide, over and invalid "warn": every ufunc
checked as it is computed) against np.errstate(all="ignore") (nothing
checked), with NumPy's own time in the same run, per driver and placement.

Fresh expressions each repetition (a new constant), so nothing is reused
from an earlier evaluation; gpupy's time ends when the result is a NumPy
array. The values are all finite, the common case; `--nan` makes every
97th element of one operand NaN (missing values, carried through every op
without an error: the checks must not slow down on them).

    python benchmarks/fp_checks.py
    python benchmarks/fp_checks.py --drivers software --n 4000000 --reps 9
"""

import argparse
import statistics
import time
import warnings

import numpy

from common import import_gpupy

gpupy = import_gpupy()

EXPRESSIONS = {
    "arithmetic chain": lambda xp, x, y, k: ((x + k) * 2 + y) * 0.5 - x,
    "divide and sqrt": lambda xp, x, y, k: xp.sqrt(x / (y + k)) + x,
    "exp and log": lambda xp, x, y, k: xp.log(xp.exp(x * k) + y),
    "stencil": lambda xp, x, y, k: x[1:-1] + k * (x[2:] + x[:-2] - 2 * x[1:-1]),
    # Reductions and scans: their folds are checked too (the body's ops as above).
    "sum of products": lambda xp, x, y, k: xp.sum(x * (y + k)),
    "running sum": lambda xp, x, y, k: xp.cumsum(x + k),
}


def timed(fn, reps):
    times = []
    for r in range(reps):
        start = time.perf_counter()
        numpy.asarray(fn(r))
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1 << 20)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--drivers", default="software,opengl")
    ap.add_argument("--nan", action="store_true")
    args = ap.parse_args()
    rng = numpy.random.default_rng(0)
    print(f"{args.n} elements; median of {args.reps}; ratios: checked (NumPy's default state) / unchecked")
    print(f"{'driver':9s} {'placement':9s} {'dtype':8s} {'expression':17s} {'NumPy':>9s} {'unchecked':>10s} "
          f"{'checked':>9s} {'ratio':>6s} {'checked ops':>11s}")
    for driver in args.drivers.split(","):
        try:
            gpupy.use_driver(driver)
        except Exception as e:  # noqa: BLE001 - a driver this machine lacks
            print(f"{driver}: not available ({e})")
            continue
        for placement in ("host", "device"):
            gpupy.set_placement(placement)
            for dtype in (numpy.float32, numpy.float64):
                x_h = rng.random(args.n).astype(dtype) + 1
                y_h = rng.random(args.n).astype(dtype) + 1
                if args.nan:
                    x_h[::97] = numpy.nan
                x, y = gpupy.asarray(x_h), gpupy.asarray(y_h)
                for name, expr in EXPRESSIONS.items():
                    with numpy.errstate(all="ignore"):
                        t_numpy = timed(lambda r: expr(numpy, x_h, y_h, dtype(1 + r / 16)), args.reps)

                    def run(r, mode):
                        with numpy.errstate(all=mode, under="ignore"):
                            # (a new constant each time: nothing reused)
                            return expr(gpupy, x, y, dtype(1 + r / 16 + (0.5 if mode == "warn" else 0)))
                    try:
                        t_off = timed(lambda r: run(r, "ignore"), args.reps)
                        gpupy.reset_stats()
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore", RuntimeWarning)
                            t_on = timed(lambda r: run(r, "warn"), args.reps)
                    except gpupy.FallbackError:
                        continue
                    checked = gpupy.stats()["checked_ops"]
                    print(f"{driver:9s} {placement:9s} {numpy.dtype(dtype).name:8s} {name:17s} {t_numpy * 1e3:7.2f}ms "
                          f"{t_off * 1e3:8.2f}ms {t_on * 1e3:7.2f}ms {t_on / t_off:6.2f} {checked:11d}")
        gpupy.set_placement("auto")


if __name__ == "__main__":
    main()
