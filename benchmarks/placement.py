#!/usr/bin/env python3
"""How well placement recovers from a cost model it cannot trust.

The distance map of the GpuPy thesis (512x512, 1,000 points by default) is
timed in fresh processes, each with its own cost-model directory, after:

  clean       a default process measured the model first;
  tiny run    a process with 64-element blocks and a 4 KiB cache (settings
              the README documents) was the first to use gpupy;
  4 at once   four processes used gpupy for the first time together;
  host x100   the saved model (the clean one, edited: "file") or the
              model a process loaded ("in process") prices every host-engine
              cost 100 times too high, so every decision favours the device:
              the process must notice that the other place wins. (The
              file's model may be out of the plausible range, and measured
              again: its source says which.)

Each row gives the median of runs 4-6 of a process (runs 1-3 warm it up),
over every repeat of the scenarios, and its ratio to "clean" (1.0: as fast
as with a clean model); each run's median over the repeats shows how fast
it recovers. The targets: at most 1.3 for every row.

    python benchmarks/placement.py                    # the active driver
    python benchmarks/placement.py --driver software  # or a named one
    python benchmarks/placement.py --grid 256 --points 200

A figure is only as good as the machine is quiet: run it alone.
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# The distance map, run `runs` times in one process; prints the times (s)
# and the model's source as JSON. (A child: {grid}, {points}, {runs}, {poison}
# and {host_costs} are filled in; with a poison, the host engine's costs are
# multiplied by it in the child's own model before it starts.)
CHILD = r"""
import json, time
import numpy as np
import gpupy as gp
poison = {poison}
if poison:
    from gpupy import _calibration
    p = dict(_calibration._state["parameters"])
    for k in {host_costs}:
        p[k] *= poison
    _calibration._state["parameters"] = p
    _calibration.hand_to_core()
n, points = {grid}, {points}
rng = np.random.default_rng(1)
pts = rng.random((points, 2)) * n
times, where = [], []
for run in range({runs}):
    before = gp.stats()["placements"]
    t0 = time.perf_counter()
    x = gp.fromfunction(lambda i, j: i, (n, n), dtype=np.float32)
    y = gp.fromfunction(lambda i, j: j, (n, n), dtype=np.float32)
    d = None
    for px, py in pts:
        e = ((x - float(px)) ** 2 + (y - float(py)) ** 2) ** 0.5
        d = e if d is None else gp.minimum(d, e)
    top = float(d.max())
    img = np.asarray(255 * d / top)
    times.append(time.perf_counter() - t0)
    after = gp.stats()["placements"]
    where.append({{place: {{why: n - before[place].get(why, 0) for why, n in after[place].items()
                          if n != before[place].get(why, 0)}} for place in ("host engine", "device")}})
s = gp.stats()
print(json.dumps({{"times": times, "source": gp.cost_model()["source"], "corrections": s["model_corrections"],
                   "placements": s["placements"], "placements_per_run": where,
                   "parameters": gp.cost_model()["parameters"], "feedback": gp.cost_model()["feedback"]}}))
"""


def child(cache_dir, grid, points, runs, poison=0, **env):
    e = dict(os.environ, GPUPY_CACHE_DIR=cache_dir, **env)
    e.pop("GPUPY_CALIBRATION", None)
    code = CHILD.format(grid=grid, points=points, runs=runs, poison=poison, host_costs=HOST_COSTS)
    out = subprocess.run([sys.executable, "-c", code], env=e, capture_output=True, text=True, timeout=1800)
    if out.returncode != 0:
        raise RuntimeError(out.stderr)
    return json.loads(out.stdout.strip().splitlines()[-1])


# The host engine's costs, multiplied by 100 in the "host x100" file.
HOST_COSTS = ("host_dispatch_ns", "host_ns_per_op", "host_ns_per_element_op", "host_ns_per_element_op_deep",
              "host_ns_per_element_math")


def first_use(cache_dir, **env):
    e = dict(os.environ, GPUPY_CACHE_DIR=cache_dir, **env)
    e.pop("GPUPY_CALIBRATION", None)
    return subprocess.Popen([sys.executable, "-c", "import gpupy as gp; print(gp.cost_model()['source'])"], env=e,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def settled(runs):
    """The median of runs 4-6 over every repeat."""
    return statistics.median(t for r in runs for t in r["times"][3:6])


def scenarios(root, args, env):
    """One repeat: each scenario's child, in a fresh cache directory."""
    def fresh(name):
        path = os.path.join(root, name)
        os.makedirs(path)
        return path

    out = {}
    clean = fresh("clean")
    first_use(clean, **env).communicate()
    out["clean"] = child(clean, args.grid, args.points, 6, **env)

    tiny = fresh("tiny")
    first_use(tiny, GPUPY_BLOCK_SIZE="64", GPUPY_CACHE_BYTES="4096", **env).communicate()
    out["tiny run"] = child(tiny, args.grid, args.points, 6, **env)

    together = fresh("together")
    procs = [first_use(together, **env) for _ in range(4)]
    for p in procs:
        p.communicate()
    out["4 at once"] = child(together, args.grid, args.points, 6, **env)

    poisoned = fresh("poisoned")
    for name in os.listdir(clean):
        if name.endswith(".json"):
            with open(os.path.join(clean, name)) as f:
                record = json.load(f)
            for k in HOST_COSTS:
                record["parameters"][k] *= 100
            with open(os.path.join(poisoned, name), "w") as f:
                json.dump(record, f)
    out["host x100 (file)"] = child(poisoned, args.grid, args.points, 6, **env)
    out["host x100 (in process)"] = child(clean, args.grid, args.points, 6, poison=100, **env)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--driver", help="GPUPY_DRIVER for the children (default: gpupy's own choice)")
    parser.add_argument("--grid", type=int, default=512)
    parser.add_argument("--points", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3, help="repeats of every scenario (default 3)")
    parser.add_argument("--json", help="write every child's report to this file")
    args = parser.parse_args(argv)
    env = {"GPUPY_DRIVER": args.driver} if args.driver else {}
    rows = {}
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory() as root:
            for name, report in scenarios(root, args, env).items():
                rows.setdefault(name, []).append(report)

    reference = settled(rows["clean"])
    print(f"distance map {args.grid}x{args.grid}, {args.points} points; driver {args.driver or 'default'}; "
          f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs; {args.repeat} repeats; "
          f"{time.strftime('%Y-%m-%d')}")
    print()
    print("| scenario | runs 4-6 (median) | vs clean | runs 1-6 (median of repeats) | corrections | models |")
    print("|---|---:|---:|---|---|---|")
    for name, runs in rows.items():
        t = settled(runs)
        every = ", ".join(f"{statistics.median(r['times'][k] for r in runs):.2f}" for k in range(6))
        corrections = ", ".join(str(r["corrections"]) for r in runs)
        sources = ", ".join(sorted({r["source"][:40] for r in runs}))
        print(f"| {name} | {t:.3f} s | {t / reference:.2f}x | {every} | {corrections} | {sources} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
