"""Runs Python code in a fresh process against the gpupy under test.

The gpupy under test is the one this pytest process imported: installed in
site-packages, or an in-place build. A child started from the repository root
would otherwise import the source tree's gpupy/ first (``python -c`` puts the
working directory at the front of sys.path), which has no compiled _core in a
clean clone. So the child runs in the directory that holds the gpupy under
test, and that directory also leads PYTHONPATH.
"""
import os
import subprocess
import sys
from pathlib import Path

import gpupy as gp

PACKAGE_PARENT = str(Path(gp.__file__).resolve().parents[1])


def run_python(args, env=None, timeout=120):
    """Runs ``python *args`` with ``env`` (default: this process's) and returns
    the CompletedProcess with text stdout and stderr."""
    env = dict(os.environ if env is None else env)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (PACKAGE_PARENT, env.get("PYTHONPATH", "")) if p)
    return subprocess.run([sys.executable, *args], env=env, cwd=PACKAGE_PARENT,
                          capture_output=True, text=True, timeout=timeout)
