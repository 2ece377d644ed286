"""npbench's NumPy kernels with `import gpupy as np`, side by side with NumPy.

npbench (https://github.com/spcl/npbench) is not part of this repository
and nothing of it is copied here: clone it anywhere and name the checkout.

    git clone https://github.com/spcl/npbench ~/npbench
    python benchmarks/npbench_runner.py --npbench ~/npbench              # every kernel, preset S
    python benchmarks/npbench_runner.py --npbench ~/npbench --kernels atax,jacobi_2d --preset M

For each benchmark of npbench's bench_info/, the runner uses npbench's own
code as a library: its data generation for the preset (`Benchmark.get_data`)
and its validation (`utilities.validate`, with the benchmark's rtol, atol and
norm_error). The kernel file `<module>_numpy.py` is loaded twice: as written,
and with `numpy` resolved to gpupy, as a user's `import gpupy as np` would.
Each kernel runs in a child process of its own (killed at --timeout, so a
kernel that hangs or crashes is reported and the run goes on); in it, NumPy
and gpupy run side by side: a warm-up of each, then repetitions in turn
(NumPy, gpupy, NumPy, ...), each on fresh copies of the inputs, gpupy's
timed region ending when every output is evaluated. Reported per kernel:
median and minimum of both, the speed-up (NumPy's median / gpupy's), the
validation, and gpupy's counters for one run (device and host-engine
evaluations, fallbacks to NumPy and the functions behind them); then the
geometric mean of the speed-ups of validated kernels.
"""

import argparse
import builtins
import importlib.util
import json
import math
import subprocess
import statistics
import sys
import time
from pathlib import Path

import numpy as np


def load_by_path(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_kernel(path, func_name, numpy_module):
    """The kernel function of an npbench `_numpy.py` file, its `numpy`
    imports resolved to `numpy_module`."""
    real_import = builtins.__import__

    def import_(name, globals=None, locals=None, fromlist=(), level=0):
        if level == 0 and (name == "numpy" or name.startswith("numpy.")):
            target = numpy_module.__name__ + name[len("numpy"):]
            return real_import(target, globals, locals, fromlist, level)
        return real_import(name, globals, locals, fromlist, level)

    namespace = {"__name__": f"npbench_kernel_{numpy_module.__name__}", "__file__": str(path),
                 "__builtins__": {**vars(builtins), "__import__": import_}}
    code = compile(Path(path).read_text(), str(path), "exec")
    exec(code, namespace)  # noqa: S102 - the user's own npbench checkout
    return namespace[func_name]


class Npbench:
    """The user's npbench checkout, used as a library."""

    def __init__(self, root):
        self.root = Path(root).resolve()
        if not (self.root / "bench_info").is_dir() or not (self.root / "npbench").is_dir():
            raise SystemExit(f"{root} is not an npbench checkout (no bench_info/ or npbench/)")
        sys.path.insert(0, str(self.root))
        infra = self.root / "npbench" / "infrastructure"
        self.benchmark_module = load_by_path("npbench_infrastructure_benchmark", infra / "benchmark.py")
        self.utilities = load_by_path("npbench_infrastructure_utilities", infra / "utilities.py")

    def names(self):
        return sorted(p.stem for p in (self.root / "bench_info").glob("*.json"))

    def benchmark(self, name):
        return self.benchmark_module.Benchmark(name)

    def kernel_path(self, bench):
        info = bench.info
        return self.root / "npbench" / "benchmarks" / info["relative_path"] / f"{info['module_name']}_numpy.py"


def run_kernel(kernel, inputs, copy, flush):
    """One call on fresh copies of the array inputs; returns (seconds,
    outputs) with outputs = returned values + arrays written in place."""
    args = {k: (copy(v) if isinstance(v, np.ndarray) else v) for k, v in inputs["args"].items()}
    call_args = [args[a] for a in inputs["order"]]
    t0 = time.perf_counter()
    result = kernel(*call_args)
    outs = [] if result is None else (list(result) if isinstance(result, (tuple, list)) else [result])
    outs += [args[a] for a in inputs["inout"]]
    flush(outs)
    return time.perf_counter() - t0, outs


def measure(nb, name, preset, reps, gp):
    bench = nb.benchmark(name)
    info = bench.info
    row = {"kernel": name, "domain": info.get("domain", ""), "status": "ok"}
    try:
        data = bench.get_data(preset)
    except NotImplementedError:
        row["status"] = f"no {preset} preset"
        return row
    inputs = {"args": {a: data[a] for a in info["input_args"]}, "order": info["input_args"],
              "inout": info.get("output_args", [])}
    path = nb.kernel_path(bench)
    np_kernel = load_kernel(path, info["func_name"], np)
    gp_kernel = load_kernel(path, info["func_name"], gp)

    def np_copy(a):
        return a.copy()

    def gp_copy(a):
        return gp.array(a)

    def np_flush(outs):
        pass

    def gp_flush(outs):
        for o in outs:
            if isinstance(o, gp.GpuArray):
                o._flush()

    np_times, gp_times = [], []
    _, ref = run_kernel(np_kernel, inputs, np_copy, np_flush)
    try:
        _, got = run_kernel(gp_kernel, inputs, gp_copy, gp_flush)
    except Exception as e:  # noqa: BLE001 - reported per kernel
        row["status"] = f"error: {type(e).__name__}: {str(e).splitlines()[0][:120]}"
        return row
    got = [np.asarray(o) if isinstance(o, gp.GpuArray) else o for o in got]
    rtol, atol = info.get("rtol", 1e-5), info.get("atol", 1e-8)
    norm_error = info.get("norm_error", 1e-5)
    row["validated"] = bool(nb.utilities.validate(ref, got, "gpupy", rtol=rtol, atol=atol, norm_error=norm_error))
    for _ in range(reps):
        np_times.append(run_kernel(np_kernel, inputs, np_copy, np_flush)[0])
        gp.reset_stats()
        gp_times.append(run_kernel(gp_kernel, inputs, gp_copy, gp_flush)[0])
        stats = gp.stats()
    if np_times and gp_times:
        row.update(numpy_median=statistics.median(np_times), numpy_min=min(np_times),
                   gpupy_median=statistics.median(gp_times), gpupy_min=min(gp_times))
        row["speedup"] = row["numpy_median"] / row["gpupy_median"]
        row["counters"] = {k: stats[k] for k in ("evaluations", "host_engine_evaluations", "host_evaluations",
                                                 "fallbacks", "programs_compiled")}
        top = sorted(stats["fallbacks_by_function"].items(), key=lambda kv: -kv[1])[:3]
        row["fallback_functions"] = ", ".join(f"{k} x{v}" for k, v in top)
    return row


def fmt_time(t):
    if t is None:
        return "-"
    if t >= 1:
        return f"{t:.2f} s"
    if t >= 1e-3:
        return f"{t * 1e3:.3g} ms"
    return f"{t * 1e6:.3g} µs"


def report(rows, preset, driver):
    lines = [f"npbench preset {preset}, gpupy driver {driver}", "",
             "| kernel | NumPy median | gpupy median | speed-up | valid | evaluations device/host | fallbacks |",
             "|---|---:|---:|---:|---|---|---|"]
    speedups = []
    for r in rows:
        if "speedup" not in r:
            lines.append(f"| {r['kernel']} | - | - | - | {r['status']} | | |")
            continue
        valid = "yes" if r.get("validated") else "NO"
        if r.get("validated"):
            speedups.append(r["speedup"])
        c = r["counters"]
        fb = f"{c['fallbacks']}" + (f" ({r['fallback_functions']})" if c["fallbacks"] else "")
        status = "" if r["status"] == "ok" else f" ({r['status']})"
        lines.append(f"| {r['kernel']} | {fmt_time(r['numpy_median'])} | {fmt_time(r['gpupy_median'])} | "
                     f"{r['speedup']:.2f}x | {valid}{status} | {c['evaluations']}/{c['host_engine_evaluations']} | {fb} |")
    geo = math.exp(sum(math.log(s) for s in speedups) / len(speedups)) if speedups else float("nan")
    failed = [r["kernel"] for r in rows if not r.get("validated")]
    slow = [r["kernel"] for r in rows if r.get("speedup", 1) < 0.5]
    lines += ["", f"geometric mean speed-up over {len(speedups)} validated kernels: {geo:.2f}x",
              f"not validated or not run ({len(failed)}): {', '.join(failed) or 'none'}",
              f"below 0.5x ({len(slow)}): {', '.join(slow) or 'none'}"]
    return "\n".join(lines), geo


def child(args):
    """Measures one kernel in this (child) process; prints its row as JSON."""
    import gpupy as gp

    if args.driver:
        gp.use_driver(args.driver)
    nb = Npbench(args.npbench)
    row = measure(nb, args.child, args.preset, args.reps, gp)
    row["driver"] = gp.driver()
    print(json.dumps(row))


def run_child(args, name):
    cmd = [sys.executable, __file__, "--npbench", args.npbench, "--preset", args.preset, "--reps", str(args.reps),
           "--child", name] + (["--driver", args.driver] if args.driver else [])
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return {"kernel": name, "status": f"timeout ({args.timeout:g} s)"}
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return {"kernel": name, "status": f"failed (exit {proc.returncode}): {last[:160]}"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--npbench", required=True, help="path of an npbench checkout")
    parser.add_argument("--preset", default="S", help="npbench data preset: S, M, L or paper (default S)")
    parser.add_argument("--kernels", default="", help="comma-separated kernels (default: all)")
    parser.add_argument("--reps", type=int, default=5, help="timed repetitions of each (default 5)")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per kernel (default 300)")
    parser.add_argument("--driver", default=None, help="gpupy driver (default: gpupy's choice)")
    parser.add_argument("--json", help="write the rows to this file")
    parser.add_argument("--child", help=argparse.SUPPRESS)  # internal: measure this kernel here
    args = parser.parse_args(argv)
    if args.child:
        return child(args)

    nb = Npbench(args.npbench)
    names = args.kernels.split(",") if args.kernels else nb.names()
    rows = []
    for name in names:
        t0 = time.perf_counter()
        row = run_child(args, name)
        rows.append(row)
        extra = f"{row['speedup']:.2f}x" if "speedup" in row else row["status"]
        print(f"{name}: {extra} ({time.perf_counter() - t0:.1f} s)", file=sys.stderr, flush=True)
    driver = next((r["driver"] for r in rows if "driver" in r), args.driver or "?")
    text, geo = report(rows, args.preset, driver)
    print(text)
    if args.json:
        Path(args.json).write_text(json.dumps({"preset": args.preset, "driver": driver, "rows": rows,
                                               "geomean": geo}, indent=1))


if __name__ == "__main__":
    main()
