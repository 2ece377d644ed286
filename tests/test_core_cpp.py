"""The core's C++ unit tests (tests/cpp), built and run from pytest.

They link the core library (src/core) with a fake driver: no Python, no GL.
The build goes to build/cpp-tests under the source tree, configured once
and rebuilt incrementally; every C++ test is one pytest case. They need
CMake and a C++17 compiler, which building gpupy from source needs anyway
(README); without them this module fails rather than skips.
"""

import fcntl
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "tests" / "cpp"
BUILD = ROOT / "build" / "cpp-tests"
BINARY = BUILD / "gpupy_core_tests"


def _clean_environment():
    """No GPUPY_* setting reaches the tests: they set what they test."""
    return {k: v for k, v in os.environ.items() if not k.startswith("GPUPY_")}


def _run(cmd, timeout):
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=_clean_environment())
    if proc.returncode != 0:
        pytest.fail(f"{' '.join(map(str, cmd))} failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}", pytrace=False)
    return proc.stdout


def _test_names():
    # The TEST(name) lines of tests/cpp, so that collection needs no build.
    names = []
    for source in sorted(SOURCE.glob("test_*.cpp")):
        for line in source.read_text().splitlines():
            if line.startswith("TEST(") and line.rstrip().endswith(") {"):
                names.append(line[len("TEST("):line.index(")")])
    return names


@pytest.fixture(scope="module")
def core_tests():
    cmake = shutil.which("cmake")
    if cmake is None:
        pytest.fail("the core's C++ tests need CMake and a C++17 compiler (README: apt-get install g++ cmake)",
                    pytrace=False)
    # One build at a time: parallel pytest workers (xdist) share the build
    # folder; the first builds, the others find it up to date.
    BUILD.parent.mkdir(parents=True, exist_ok=True)
    with open(BUILD.parent / "cpp-tests.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (BUILD / "CMakeCache.txt").exists():
            generator = ["-G", "Ninja"] if shutil.which("ninja") else []
            _run([cmake, "-S", SOURCE, "-B", BUILD, *generator], timeout=300)
        _run([cmake, "--build", BUILD, "--parallel", str(os.cpu_count() or 2)], timeout=900)
    listed = _run([BINARY, "--list"], timeout=60).split()
    return listed


def test_every_cpp_test_is_collected(core_tests):
    assert sorted(core_tests) == sorted(_test_names())
    assert len(core_tests) >= 20


@pytest.mark.parametrize("name", _test_names())
def test_cpp(core_tests, name):
    out = _run([BINARY, name], timeout=300)
    assert "1 tests, 0 failed" in out
