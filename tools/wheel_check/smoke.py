"""Checks an installed gpupy from the outside, for tools/check_wheel.sh.

    python smoke.py --prefix VENV --expect-driver opengl|software [--reason TEXT]

Run with the virtual environment's Python from a directory outside the
source tree. It checks that

* `import gpupy` works, prints nothing when OpenGL is used and exactly one
  line saying why when it falls back to the software driver (the line must
  contain TEXT, given with --reason);
* `python -m gpupy` prints the configuration: the expected driver, the
  driver libraries inside VENV, and the reason when OpenGL is unavailable;
* GPUPY_DRIVER=opengl is an error exactly when OpenGL is unavailable, and
  GPUPY_DRIVER=software always works;
* gpupy, its core and its drivers come from VENV, __version__ matches the
  installed distribution's metadata, and a small computation on the driver
  equals NumPy's.

Exits non-zero with the reasons on any failure.
"""

import argparse
import importlib.metadata
import os
import subprocess
import sys

FALLBACK_PREFIX = "gpupy: OpenGL driver unavailable ("

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
    return condition


def run(code_or_module, env_extra=None, module=False):
    env = dict(os.environ)
    env.pop("GPUPY_DRIVER", None)
    env.update(env_extra or {})
    args = [sys.executable, "-m", code_or_module] if module else [sys.executable, "-c", code_or_module]
    return subprocess.run(args, capture_output=True, text=True, env=env, timeout=300)


def inside(path, prefix):
    path, prefix = os.path.realpath(path), os.path.realpath(prefix)
    return path.startswith(prefix + os.sep)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--prefix", required=True, help="the virtual environment gpupy must come from")
    parser.add_argument("--expect-driver", required=True, choices=("opengl", "software"))
    parser.add_argument("--reason", default="", help="text the fallback line must contain")
    opts = parser.parse_args()
    fallback = opts.expect_driver == "software"

    # 1. import gpupy: silent with OpenGL, one line why without.
    p = run("import gpupy; print(gpupy.driver())")
    lines = p.stderr.splitlines()
    if check(p.returncode == 0, f"import gpupy failed:\n{p.stderr}"):
        check(p.stdout.strip() == opts.expect_driver,
              f"import gpupy chose driver {p.stdout.strip()!r}, expected {opts.expect_driver!r}")
        if fallback:
            check(len(lines) == 1 and lines[0].startswith(FALLBACK_PREFIX) and opts.reason in lines[0],
                  f"import gpupy should print exactly one line starting {FALLBACK_PREFIX!r} and "
                  f"containing {opts.reason!r}; it printed:\n{p.stderr}")
        else:
            check(not lines, f"import gpupy printed to stderr with OpenGL available:\n{p.stderr}")
    print(f"import gpupy: driver {p.stdout.strip()}" + (f"; stderr: {lines[0]}" if lines else "; stderr empty"))

    # 2. python -m gpupy
    p = run("gpupy", module=True)
    if check(p.returncode == 0, f"python -m gpupy failed:\n{p.stderr}"):
        out = p.stdout.splitlines()
        check(f"driver: {opts.expect_driver}" in out, f"python -m gpupy does not say 'driver: {opts.expect_driver}'")
        libdirs = [line.split(":", 1)[1].strip() for line in out if line.startswith("driver libraries:")]
        check(len(libdirs) == 1 and inside(libdirs[0], opts.prefix),
              f"python -m gpupy: driver libraries {libdirs} are not inside {opts.prefix}")
        reason_lines = [line for line in out if line.startswith("opengl unavailable:")]
        if fallback:
            check(len(reason_lines) == 1 and opts.reason in reason_lines[0],
                  "python -m gpupy does not say why OpenGL is unavailable")
            check(len(p.stderr.splitlines()) == 1, f"python -m gpupy: expected one line on stderr:\n{p.stderr}")
        else:
            check(not reason_lines and not p.stderr, "python -m gpupy reports OpenGL unavailable")
        print("python -m gpupy:")
        print("\n".join("    " + line for line in out[:4] + ["..."] + out[-5:]))

    # 3. An explicit GPUPY_DRIVER: opengl fails loudly without GL; software always works.
    p = run("import gpupy; print(gpupy.driver())", {"GPUPY_DRIVER": "opengl"})
    if fallback:
        check(p.returncode != 0 and "DriverError" in p.stderr and opts.reason in p.stderr,
              f"GPUPY_DRIVER=opengl should fail with a DriverError naming {opts.reason!r}; "
              f"rc {p.returncode}, stderr:\n{p.stderr}")
        print(f"GPUPY_DRIVER=opengl: fails as it should ({p.stderr.strip().splitlines()[-1] if p.stderr else ''})")
    else:
        check(p.returncode == 0 and p.stdout.strip() == "opengl" and not p.stderr,
              f"GPUPY_DRIVER=opengl: rc {p.returncode}, stdout {p.stdout!r}, stderr:\n{p.stderr}")
    p = run("import gpupy; print(gpupy.driver())", {"GPUPY_DRIVER": "software"})
    check(p.returncode == 0 and p.stdout.strip() == "software" and not p.stderr,
          f"GPUPY_DRIVER=software: rc {p.returncode}, stdout {p.stdout!r}, stderr:\n{p.stderr}")

    # 4. In this process: where everything comes from, the version, a computation.
    import numpy as np

    import gpupy
    from gpupy import _core

    for what, path in (("gpupy", gpupy.__file__), ("gpupy._core", _core.__file__),
                       ("driver libraries", _core.driver_library_dir())):
        check(inside(path, opts.prefix), f"{what} comes from {path}, not from {opts.prefix}")
    dist_version = importlib.metadata.version("gpupy")
    check(gpupy.__version__ == dist_version,
          f"gpupy.__version__ {gpupy.__version__} != installed metadata version {dist_version}")
    check(gpupy.driver() == opts.expect_driver, f"driver {gpupy.driver()}, expected {opts.expect_driver}")

    gpupy.set_fallback("raise")
    # Small evaluations would go to the host engine by the driver's cost
    # model; this check is about the installed driver, so it gets them all.
    gpupy.set_host_threshold(0)
    gpupy.reset_stats()
    x = np.linspace(-4, 4, 100_000, dtype=np.float32)
    g = gpupy.asarray(x)
    got = np.asarray((g * 3 - 1) * (g + 2))
    expected = (x * 3 - 1) * (x + 2)
    check(got.dtype == expected.dtype and np.array_equal(got, expected),
          "(x*3-1)*(x+2) on the driver differs from NumPy's")
    total = float(gpupy.sum(g * g))
    check(abs(total - float(np.sum(x.astype(np.float64) ** 2))) <= 1e-3 * total, f"sum(x*x) = {total} is wrong")
    stats = gpupy.stats()
    check(stats["evaluations"] > 0 and stats["fallbacks"] == 0,
          f"the computation did not run on the driver: {stats}")
    print(f"in-process: gpupy {gpupy.__version__} from {os.path.dirname(gpupy.__file__)}, "
          f"driver {gpupy.driver()}, {stats['evaluations']} evaluations, computation equals NumPy's")

    if failures:
        print("\nsmoke check FAILED:", file=sys.stderr)
        for f in failures:
            print(f"  - {f}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
