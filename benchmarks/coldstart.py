"""Second run in a new process: what do caches across processes save?

The harness spawns two fresh Python processes in turn, both running the same
program (distance map 512² |S|=100, shaded sphere 512², the elementwise
expressions at 10^5) twice on gpupy's OpenGL driver, all of it on the
device (set_host_threshold(0): the host engine would otherwise take the
small parts, which then compile nothing), with
MESA_SHADER_CACHE_DIR pointing at one new, empty directory:

  process 1  cold: Mesa's on-disk shader cache is empty
  process 2  the same program again, the cache now filled by process 1

Each reports its import time, and for both iterations the wall time and
gpupy.stats() (programs_compiled, compile_seconds, first_run_seconds).
Besides, the number of files Mesa added to its cache directory during each
process says whether the second process made the GL implementation compile
anything new. "Compile overhead" is iteration 1 minus iteration 2.
"""

import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def _files_in(path):
    n = size = 0
    for root, _, files in os.walk(path):
        for f in files:
            n += 1
            try:
                size += os.path.getsize(os.path.join(root, f))
            except OSError:
                pass
    return n, size


def child_main(import_gpupy):
    """Runs in the spawned process: prints one JSON line."""
    t0 = time.perf_counter()
    gp = import_gpupy()  # with the OpenGL driver's initialisation (EGL context)
    t_import = time.perf_counter() - t0
    sys.path.insert(0, HERE)
    import distmap
    import elementwise
    import sphere

    gp.use_driver("opengl")
    if hasattr(gp, "set_host_threshold"):
        gp.set_host_threshold(0)  # every part on the device, so every part has a program to compile
    pts = distmap.make_points(512, 100)
    data = elementwise.inputs(10**5)
    ks = {f"k{i}": float(v) for i, v in enumerate(elementwise.COEFFS)}
    iterations = []
    for it in range(2):
        gp.reset_stats()
        t = time.perf_counter()
        distmap.thesis_program(gp, 512, pts)
        sphere.thesis_program(gp, 512, 512)
        g = {k: gp.array(v) for k, v in data.items()}
        for expr, _ in elementwise.EXPRESSIONS:
            np.asarray(eval(expr, {**elementwise.namespace(gp), **ks}, g))
        del g
        wall = time.perf_counter() - t
        s = gp.stats()
        iterations.append({"wall": wall, **{k: s[k] for k in ("programs_compiled", "program_cache_hits",
                                                              "compile_seconds", "first_run_seconds", "evaluations")}})
    print("COLDSTART " + json.dumps({"import": t_import, "iterations": iterations}), flush=True)


def spawn(env):
    r = subprocess.run([sys.executable, os.path.join(HERE, "run.py"), "--child-coldstart"], env=env,
                       capture_output=True, text=True, timeout=1800)
    for line in r.stdout.splitlines():
        if line.startswith("COLDSTART "):
            return json.loads(line[len("COLDSTART "):])
    raise RuntimeError(f"child process failed (rc {r.returncode}): {r.stderr.strip()[-2000:]}")


def run(env, settings):
    """Returns a dict with both processes' measurements."""
    with tempfile.TemporaryDirectory(prefix="gpupy-bench-mesa-cache-") as cache:
        child_env = dict(os.environ)
        child_env["MESA_SHADER_CACHE_DIR"] = cache
        child_env["GPUPY_DRIVER"] = "opengl"
        child_env["PYTHONPATH"] = os.pathsep.join(p for p in [env.gpupy_root, child_env.get("PYTHONPATH")] if p)
        out = {}
        for label in ("process 1 (empty Mesa cache)", "process 2 (same program again)"):
            before = _files_in(cache)
            t = time.perf_counter()
            info = spawn(child_env)
            info["process_wall"] = time.perf_counter() - t
            after = _files_in(cache)
            info["mesa_cache_new_files"] = after[0] - before[0]
            info["mesa_cache_new_bytes"] = after[1] - before[1]
            out[label] = info
            it1, it2 = info["iterations"]
            print(f"  coldstart {label:<32} import {info['import']:.2f} s  it1 {it1['wall']:.2f} s  it2 {it2['wall']:.2f} s"
                  f"  compiled {it1['programs_compiled']}  compile {it1['compile_seconds']:.2f} s"
                  f"  first_run {it1['first_run_seconds']:.2f} s  new Mesa cache files {info['mesa_cache_new_files']}",
                  flush=True)
    return out
