#!/usr/bin/env python3
"""float16 against NumPy: elementwise expressions, a transcendental, a cast
and reductions on float16 arrays gpupy already holds, at each size, with
the default placement on each driver.

NumPy computes float16 in float32 and rounds every result (as gpupy does),
so neither side has float16 hardware arithmetic on a CPU; what differs is
how each gets there. Prints the median time of each side, NumPy / gpupy
(above 1: gpupy faster), and where gpupy ran the work (stats(): the driver's
evaluations, the host engine's, NumPy's own calls on host values).

    python benchmarks/float16.py
    python benchmarks/float16.py --sizes 65536 1048576 --reps 9
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import import_gpupy  # noqa: E402

gp = import_gpupy()

CASES = [
    ("a + b", lambda xp, a, b: a + b),
    ("a * b + a", lambda xp, a, b: a * b + a),
    ("sqrt(a * a + b * b)", lambda xp, a, b: xp.sqrt(a * a + b * b)),
    ("sin(a)", lambda xp, a, b: xp.sin(a)),
    ("where(a > b, a, b)", lambda xp, a, b: xp.where(a > b, a, b)),
    ("a.astype(float32)", lambda xp, a, b: a.astype(np.float32)),
    ("a.mean()", lambda xp, a, b: a.mean()),
    ("a.max()", lambda xp, a, b: a.max()),
]


def median_seconds(fn, reps):
    fn()  # warm: programs compiled, inputs placed
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1 << 16, 1 << 20])
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--drivers", nargs="+", default=["software", "opengl"])
    args = parser.parse_args()

    rng = np.random.default_rng(16)
    print(f"# float16, default placement; median of {args.reps}; ratio = NumPy / gpupy")
    print("| driver | n | expression | NumPy ms | gpupy ms | ratio | driver evals | host engine | NumPy calls |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|")
    for driver in args.drivers:
        try:
            gp.use_driver(driver)
        except Exception as exc:  # noqa: BLE001 -- a driver this machine cannot start
            print(f"| {driver} | | unavailable: {exc} | | | | | | |")
            continue
        for n in args.sizes:
            a = (rng.random(n) * 4 + 0.1).astype(np.float16)
            b = (rng.random(n) * 4 + 0.1).astype(np.float16)
            ga, gb = gp.asarray(a), gp.asarray(b)
            for name, f in CASES:
                t_np = median_seconds(lambda: np.asarray(f(np, a, b)), args.reps)
                gp.reset_stats()
                t_gp = median_seconds(lambda: np.asarray(f(gp, ga, gb)), args.reps)
                s = gp.stats()
                numpy_calls = s["eager_numpy_ops"] + s["host_placements"]
                print(f"| {driver} | {n} | `{name}` | {t_np * 1e3:.3f} | {t_gp * 1e3:.3f} | {t_np / t_gp:.2f} | "
                      f"{s['evaluations']} | {s['host_engine_evaluations']} | {numpy_calls} |")


if __name__ == "__main__":
    main()
