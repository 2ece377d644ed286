#!/usr/bin/env python3
"""gpupy benchmark harness: one command, one process, everything side by side.

    python benchmarks/run.py --quick              # a few minutes
    python benchmarks/run.py                      # the full set (see docs/performance.md for its run time)
    python benchmarks/run.py --write-docs         # also regenerate docs/performance.md's results + plot
    python benchmarks/run.py --suite distmap --grids 512 --points 10,100

Suites: distmap (thesis 5.2 / A.3, Figure 5.2), sphere (A.1), elementwise
(numexpr-style expressions), overheads, coldstart (a second process).
Needs numpy; numexpr and matplotlib (benchmarks/requirements.txt) and g++
with EGL/OpenGL headers are used when present and reported missing if not.
"""

import argparse
import contextlib
import io
import json
import os
import platform
import sys
import time
from dataclasses import asdict

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402

from common import Settings, foreign_load_now  # noqa: E402

SUITES = ("distmap", "sphere", "elementwise", "overheads", "coldstart")


def import_gpupy():
    """gpupy from the environment, else from this checkout (in-place build)."""
    try:
        import gpupy
    except ImportError:
        sys.path.insert(0, ROOT)
        import gpupy
    return gpupy


class Env:
    """What is available to benchmark, and the options that select cases."""

    def __init__(self, args):
        self.problems = []
        self.gpupy = import_gpupy()
        self.gpupy_root = os.path.dirname(os.path.dirname(os.path.abspath(self.gpupy.__file__)))
        self.gpupy_drivers = []
        for drv in args.drivers.split(","):
            try:
                self.gpupy.use_driver(drv)
                self.gpupy_drivers.append(drv)
            except Exception as exc:
                self.problems.append(f"gpupy driver {drv} unavailable: {exc}")
        try:
            import numexpr
            self.numexpr = numexpr
        except ImportError:
            self.numexpr = None
            self.problems.append("numexpr not installed (pip install -r benchmarks/requirements.txt)")
        self.cpu_libs = {}
        self.glsl = None
        # (the loop's points are a uniform array of vec2, each element a
        # vec4 register: 512 of them, as 1,024 exceeded NVIDIA's 1,024
        # constant registers and the shader did not link on an H200)
        self.glsl_modes = [("loop", 512), ("unrolled", 128), ("unrolled-nanmin", 128)]
        if "distmap" in args.suites or "elementwise" in args.suites:
            import native
            builds = [] if args.no_cpp or "distmap" not in args.suites else [("c++", native.CPU_FLAGS), ("c++-omp", native.CPU_FLAGS + ["-fopenmp"])]
            if args.native and not args.no_cpp:
                builds.append(("c++-native", native.CPU_FLAGS + ["-march=native"]))
            for name, flags in builds:
                try:
                    self.cpu_libs[name] = native.CpuDistanceMap(flags)
                except Exception as exc:
                    self.problems.append(f"{name} unavailable: {exc}")
            if not args.no_glsl:
                try:
                    self.glsl = native.GlslDistanceMap()
                except Exception as exc:
                    self.problems.append(f"hand-written GLSL unavailable: {exc}")
        ints = lambda s: tuple(int(float(v)) for v in s.split(",")) if s else None  # noqa: E731
        self.grids = ints(args.grids)
        self.points = ints(args.points)
        self.sphere_sizes = ints(args.sphere_sizes)
        self.elementwise_sizes = ints(args.sizes)
        self.expressions = args.expr.split(";") if args.expr else None

    def use_driver(self, name, device_only=False):
        """Selects the driver; device_only: no host engine (gpupy's cost model
        would run small or low-arithmetic work on the host)."""
        if self.gpupy.driver() != name:
            self.gpupy.use_driver(name)
        if hasattr(self.gpupy, "set_host_threshold"):
            self.gpupy.set_host_threshold(0 if device_only else None)

    @property
    def has_host_engine(self):
        return hasattr(self.gpupy, "set_host_threshold")


def machine_description(env):
    d = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    d["cpu"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    d["cpu"] = d.get("cpu") or platform.processor() or platform.machine()
    d["cores"] = os.cpu_count()
    try:
        with open("/proc/meminfo") as f:
            d["memory_gib"] = round(int(f.readline().split()[1]) / 2**20, 1)
    except (OSError, ValueError, IndexError):
        pass
    d["os"] = platform.platform()
    d["python"] = platform.python_version()
    d["numpy"] = np.__version__
    d["numexpr"] = env.numexpr.__version__ if env.numexpr else None
    import native
    d["cxx"] = native.compiler_version()
    d["cxx_flags"] = " ".join(native.CPU_FLAGS)
    if env.glsl is not None:
        d["glsl_renderer"] = env.glsl.renderer
    gp = env.gpupy
    drv = gp.driver()
    configs = {}
    for name in env.gpupy_drivers:
        env.use_driver(name)
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            gp.show_config()
        configs[name] = buf.getvalue()
    env.use_driver(drv)
    d["gpupy_config"] = configs
    d["gpupy_version"] = getattr(gp, "__version__", "?")
    for line in configs.get("opengl", "").splitlines():
        line = line.strip()
        for key in ("renderer", "gl_version", "glsl_version", "shader_stage"):
            if line.startswith(key + ":"):
                d[key] = line.split(":", 1)[1].strip()
    try:
        import subprocess
        where = env.gpupy_root
        rev = subprocess.run(["git", "-C", where, "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True).stdout.strip()
        if not rev:  # gpupy imported from a copy (e.g. a snapshot of an in-place build): name this checkout
            where = ROOT
            rev = subprocess.run(["git", "-C", where, "rev-parse", "--short", "HEAD"], capture_output=True,
                                 text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", where, "status", "--porcelain", "--", "src", "drivers", "gpupy"],
                               capture_output=True, text=True).stdout.strip()
        d["gpupy_commit"] = rev + (" (+ uncommitted changes)" if dirty else "")
        if where != env.gpupy_root:
            d["gpupy_commit"] += f"; gpupy imported from {env.gpupy_root}"
    except OSError:
        pass
    d["lp_num_threads"] = os.environ.get("LP_NUM_THREADS")
    return d


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="small sizes, fewer repetitions (a few minutes)")
    p.add_argument("--suite", default=",".join(SUITES), help=f"comma-separated subset of {','.join(SUITES)}")
    p.add_argument("--drivers", default="opengl,software", help="gpupy drivers to run")
    p.add_argument("--grids", help="distance map grid sizes, e.g. 512,2048")
    p.add_argument("--points", help="distance map |S| values, e.g. 10,100,1000,5000")
    p.add_argument("--sphere-sizes", help="shaded sphere sizes, e.g. 512,2048")
    p.add_argument("--sizes", help="elementwise sizes, e.g. 1e3,1e5,1e7")
    p.add_argument("--expr", help="only these elementwise expressions (';'-separated, as printed)")
    p.add_argument("--reps", type=int, help="warm repetitions per case (default 5, quick 3)")
    p.add_argument("--budget", type=float, help="seconds of warm runs per case before stopping early (default 30, quick 8)")
    p.add_argument("--max-run-seconds", type=float,
                   help="distance map runs predicted longer than this are extrapolated, not run (default 600, quick 30)")
    p.add_argument("--wait-quiet", type=float, default=0.0, metavar="SECONDS",
                   help="before each case, wait up to SECONDS for other processes to use < 0.3 cores (shared machines)")
    p.add_argument("--native", action="store_true", help="also a C++ build with -march=native (reported separately)")
    p.add_argument("--no-cpp", action="store_true", help="skip the C++ versions")
    p.add_argument("--no-glsl", action="store_true", help="skip the hand-written GLSL version")
    p.add_argument("--write-docs", action="store_true", help="regenerate the results section of docs/performance.md and the plot")
    p.add_argument("--json", help="write all raw results to this file")
    p.add_argument("--from-json", metavar="FILE",
                   help="measure nothing: print (and with --write-docs, write) the report of a --json file")
    p.add_argument("--quiet", action="store_true")
    p.add_argument("--child-coldstart", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    args.suites = [s.strip() for s in args.suite.split(",") if s.strip()]
    for s in args.suites:
        if s not in SUITES:
            p.error(f"unknown suite {s!r}")
    return args


def main(argv=None):
    args = parse_args(argv)
    if args.child_coldstart:
        import coldstart
        coldstart.child_main(import_gpupy)
        return 0
    if args.from_json:
        import report
        with open(args.from_json) as f:
            saved = json.load(f)
        results = [report.result_from_dict(d) for d in saved["results"]]
        text = report.render(results, saved["machine"], saved["extra"])
        print(text, flush=True)
        if args.write_docs:
            report.write_docs(results, saved["machine"], saved["extra"], text)
        return 0
    settings = Settings(quick=args.quick, verbose=not args.quiet)
    settings.reps = args.reps or (3 if args.quick else 5)
    settings.budget_s = args.budget if args.budget is not None else (8.0 if args.quick else 30.0)
    settings.max_run_s = args.max_run_seconds or (30.0 if args.quick else 600.0)
    settings.native = args.native
    settings.wait_quiet_s = args.wait_quiet

    started = time.time()
    t0 = time.perf_counter()
    env = Env(args)
    machine = machine_description(env)
    machine["foreign_load_at_start"] = foreign_load_now(1.0)
    print(f"gpupy benchmarks — {machine['cpu']}, {machine['cores']} cores; gpupy {machine.get('gpupy_commit', '')}; "
          f"{machine.get('renderer', 'no OpenGL')} {machine.get('gl_version', '')}", flush=True)
    print(f"mode: {'quick' if args.quick else 'full'}; warm reps ≤ {settings.reps}, budget {settings.budget_s:.0f} s/case, "
          f"runs predicted over {settings.max_run_s:.0f} s are estimated; other processes were using "
          f"{machine['foreign_load_at_start']:.2f} cores at start", flush=True)
    for problem in env.problems:
        print(f"note: {problem}", flush=True)

    results = []
    extra = {}
    for suite in args.suites:
        ts = time.perf_counter()
        print(f"\n== {suite}", flush=True)
        if suite == "coldstart":
            import coldstart
            try:
                extra["coldstart"] = coldstart.run(env, settings)
            except Exception as exc:
                extra["coldstart"] = {"failed": f"{type(exc).__name__}: {exc}"}
                print(f"  coldstart FAILED: {exc}", flush=True)
        else:
            module = __import__(suite)
            results.extend(module.run(env, settings))
        extra.setdefault("suite_seconds", {})[suite] = time.perf_counter() - ts
    machine["foreign_load_at_end"] = foreign_load_now(1.0)
    extra["total_seconds"] = time.perf_counter() - t0
    extra["started"] = time.strftime("%Y-%m-%d %H:%M", time.localtime(started))
    extra["mode"] = "quick" if args.quick else "full"
    extra["command"] = "python benchmarks/run.py " + " ".join(argv if argv is not None else sys.argv[1:])
    extra["problems"] = env.problems
    extra["settings"] = asdict(settings)

    import report
    text = report.render(results, machine, extra)
    print("\n" + text, flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": machine, "extra": extra, "results": [report.result_dict(r) for r in results]},
                      f, indent=1, default=str)
    if args.write_docs:
        report.write_docs(results, machine, extra, text)
    if env.glsl is not None:
        env.glsl.lib.hg_shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
