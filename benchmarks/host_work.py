#!/usr/bin/env python3
"""Host work per lazy node: what building and planning cost gpupy's calling
thread, against a NumPy call on a small array, on the thesis's distance map.

On a GPU the device work of the distance map is small (1.7 ms for a
hand-written shader at 512², 1,000 points, on an H200), so the time gpupy
spends on the host -- building the lazy expression in Python and C++,
then planning its evaluations -- decides the program's speed. This runs
benchmarks/distmap.py's thesis program with the device forced and prints,
from gpupy's own counters (stats(): nodes_created, planning_seconds,
evaluations, programs_compiled, program_cache_hits) and a clock around the
building:

  * microseconds per node created, building and planning, and their sum
    against NumPy's `a + b` on 16 float32 elements timed in the same run
    (the target: at most one such call per node);
  * the same per point of S (each point is one dist_array and one
    minimum: a few user-level operations, more nodes);
  * how many programs the evaluations compiled and how many they found
    in the cache (a repeated structure reuses its program).

    python benchmarks/host_work.py                  # 512², 1,000 points
    python benchmarks/host_work.py --grid 128 --points 100 --reps 3
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
from distmap import make_points, thesis_program  # noqa: E402


class BuildClock:
    """Marks the end of building (thesis_program calls mark("build"))."""

    def __init__(self):
        self.start = time.perf_counter()
        self.built = None

    def mark(self, name):
        if name == "build" and self.built is None:
            self.built = time.perf_counter() - self.start


def one_run(grid, points):
    gp.reset_stats()
    # (nodes_created counts from the start of the process: reset_stats
    # leaves it, so the run's nodes are the difference)
    nodes_before = gp.stats()["nodes_created"]
    clock = BuildClock()
    thesis_program(gp, grid, points, clock=clock)
    s = gp.stats()
    return {"build_s": clock.built, "planning_s": s["planning_seconds"], "nodes": s["nodes_created"] - nodes_before,
            "evaluations": s["evaluations"], "compiled": s["programs_compiled"],
            "cache_hits": s["program_cache_hits"]}


def numpy_small_call_s(reps=200_000):
    """Seconds per NumPy `a + b` on 16 float32 elements (best of 5)."""
    a = np.ones(16, np.float32)
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(reps):
            a + a  # noqa: B018 -- the call is what is timed
        best = min(best, (time.perf_counter() - t0) / reps)
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--grid", type=int, default=512)
    parser.add_argument("--points", type=int, default=1000)
    parser.add_argument("--reps", type=int, default=5, help="timed runs after two warm-up runs (median)")
    args = parser.parse_args()

    gp.set_placement("device")
    gp.set_host_threshold(0)
    gp.set_eager_threshold(0)
    points = make_points(args.grid, args.points)
    for _ in range(2):
        one_run(args.grid, points)
    runs = [one_run(args.grid, points) for _ in range(args.reps)]
    numpy_call = numpy_small_call_s()

    def median(key):
        return statistics.median(r[key] for r in runs)

    nodes = runs[-1]["nodes"]
    build, planning = median("build_s"), median("planning_s")
    renderer = next((ln.split(":", 1)[1].strip() for ln in gp._core.driver_describe().splitlines()
                     if ln.startswith("renderer:")), gp.driver())
    print(f"# host work per lazy node: distance map {args.grid}², {args.points} points, placement device, "
          f"driver {gp.driver()} ({renderer}); median of {args.reps} runs")
    print(f"nodes created per run      {nodes}")
    print(f"evaluations per run        {runs[-1]['evaluations']}  (programs compiled {runs[-1]['compiled']}, "
          f"found in the cache {runs[-1]['cache_hits']})")
    print(f"NumPy a + b, 16 float32    {numpy_call * 1e6:.3f} us")
    print()
    print("| | total | per node | per point | per node / NumPy call |")
    print("|---|---:|---:|---:|---:|")
    for name, seconds in (("building", build), ("planning", planning), ("both", build + planning)):
        print(f"| {name} | {seconds * 1e3:.2f} ms | {seconds / nodes * 1e6:.3f} us | "
              f"{seconds / args.points * 1e6:.1f} us | {seconds / nodes / numpy_call:.2f}x |")


if __name__ == "__main__":
    main()
