"""Runs one example as `python EXAMPLE ARGS...` would, then checks it used the installed gpupy.

    python run_example.py PREFIX EXAMPLE.py [ARG]...

For tools/check_wheel.sh. The example runs as __main__ with sys.argv and
sys.path[0] as if started directly. Afterwards gpupy must have been
imported, from inside PREFIX (the virtual environment): an example that
never imported gpupy (run with arguments that select NumPy, say) proves
nothing about the wheel and fails the check.
"""

import os
import runpy
import sys
import time


def main():
    prefix, example, *args = sys.argv[1:]
    prefix = os.path.realpath(prefix)
    example = os.path.abspath(example)
    sys.argv = [example, *args]
    sys.path[0] = os.path.dirname(example)
    start = time.perf_counter()
    try:
        runpy.run_path(example, run_name="__main__")
    except SystemExit as exc:
        if exc.code not in (None, 0):
            raise
    elapsed = time.perf_counter() - start
    gpupy = sys.modules.get("gpupy")
    if gpupy is None:
        sys.exit(f"run_example: {os.path.basename(example)} {' '.join(args)} never imported gpupy")
    if not os.path.realpath(gpupy.__file__).startswith(prefix + os.sep):
        sys.exit(f"run_example: gpupy was imported from {gpupy.__file__}, not from {prefix}")
    stats = gpupy.stats()
    print(f"run_example: {os.path.basename(example)} ran in {elapsed:.1f} s with gpupy from {prefix} "
          f"(driver {gpupy.driver()}, {stats['evaluations']} evaluations, {stats['fallbacks']} fallbacks)")


if __name__ == "__main__":
    main()
