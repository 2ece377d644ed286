"""benchmarks/gpu.py, the benchmark tools/gpu_check.sh runs on a lent GPU,
still runs end to end here: at its smallest sizes (--tiny) on this
machine's OpenGL, every section ends well, prints its table and writes its
rows as CSV, with the counters that say it measured what it claims (inputs
on the device, nothing uploaded while timed, each repetition evaluated);
and a section that fails says why while the others still run. No timing is
checked, only that there is one.

Skipped where the OpenGL driver does not start or the hand-written GLSL it
compares against (benchmarks/native, g++ with the EGL/GL development
files) cannot be built.
"""

import csv
import math
import os
import sys
from pathlib import Path

import pytest

from fresh_python import run_python

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
SCRIPT = BENCHMARKS / "gpu.py"


@pytest.fixture(scope="module")
def hand_written_glsl():
    # benchmarks/ is not a package: on the path only while native loads
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import native
    finally:
        del sys.path[0]
    try:
        native.build("distmap_glsl.cpp", ["-O2"], native.GL_LIBS)
    except native.BuildError as exc:
        pytest.skip(f"the hand-written GLSL does not build here: {str(exc).strip().splitlines()[0]}")


def run_benchmark(*args):
    env = dict(os.environ, GPUPY_DRIVER="opengl")
    return run_python([str(SCRIPT), "--tiny", *map(str, args)], env=env, timeout=600)


def rows_of(path, kind):
    """The rows of one kind in a section's CSV (beside them: "load", the
    cores other processes used, and any "skipped" or "failed")."""
    with open(path, newline="") as f:
        return [r for r in csv.DictReader(f) if r["kind"] == kind]


def number(text):
    """A finite, positive number (a time, a rate)."""
    x = float(text)
    assert math.isfinite(x) and x > 0, text
    return x


def test_every_section_runs_and_writes_its_rows(opengl, hand_written_glsl, tmp_path):
    out = run_benchmark("--csv", tmp_path / "csv", "--plot", tmp_path / "plots", "--machine", "the test machine")
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-4000:]
    assert "machine: the test machine" in out.stdout and "device: " in out.stdout
    for section in ("bandwidth", "matmul", "shaders", "seeds"):
        assert f"== {section}: " in out.stdout
        assert f"-- {section}: ok" in out.stdout

    bandwidth = rows_of(tmp_path / "csv" / "bandwidth.csv", "bandwidth")
    impls = {r["impl"] for r in bandwidth}
    for impl in ("device copy", "hand-written 2*a + 3*b (ssbo)", "hand-written 2*a + 3*b (texture)",
                 "gpupy 2*a + 3*b", "gpupy 2*a + 3*b checked", "gpupy a*b + c", "gpupy a*b + c checked",
                 "NumPy 2*a + 3*b", "NumPy a*b + c"):
        assert impl in impls
    for r in bandwidth:
        number(r["gb_s"])
        if r["impl"].startswith("gpupy"):
            # resident: nothing uploaded while timed, one element read back;
            # every repetition an evaluation (the last read adds one)
            assert int(r["bytes_uploaded"]) == 0 and int(r["bytes_downloaded"]) == 4, r
            assert 1 <= float(r["evaluations_per_rep"]) < 2, r
            assert int(r["fallbacks"]) == 0 and int(r["evictions"]) == 0, r

    peak = rows_of(tmp_path / "csv" / "matmul.csv", "peak")
    assert len(peak) == 1 and number(peak[0]["gflops"])
    products = rows_of(tmp_path / "csv" / "matmul.csv", "matmul")
    assert {r["impl"] for r in products} >= {"NumPy", "gpupy", "hand-written direct-8x8-16x8-tbo",
                                            "hand-written tiled-8x8-16x16-k8"}
    for r in products:
        number(r["tflops"])
        if r["impl"] == "gpupy":
            assert int(r["bytes_uploaded"]) == 0 and float(r["evaluations_per_rep"]) >= 1, r
            assert int(r["host_placements"]) == 0 and int(r["fallbacks"]) == 0, r

    shaders = rows_of(tmp_path / "csv" / "shaders.csv", "shader")
    distance = {r["impl"] for r in shaders if r["workload"] == "distance map"}
    assert distance >= {"numpy", "gpupy-opengl", "glsl-unrolled", "glsl-unrolled-nanmin"}
    life = [r for r in shaders if r["workload"].startswith("life")]
    assert {r["placement"] for r in life} == {"device", "default"}
    for r in shaders:
        number(r["seconds"])
    for r in life:
        number(r["hand_written_seconds"])
        number(r["numpy_seconds"])

    seeds = rows_of(tmp_path / "csv" / "seeds.csv", "seed")
    assert {(r["workload"], r["placement"]) for r in seeds} == {
        (w, p) for w in ("life", "gauss5x5", "saxpy", "matmul") for p in ("default", "device")}
    for r in seeds:
        assert r["valid"] == "True" and int(r["fallbacks"]) == 0, r
        number(r["ratio"])

    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert "plots skipped: matplotlib is not installed" in out.stdout
    else:
        assert sorted(p.name.rsplit("-", 1)[-1] for p in (tmp_path / "plots").glob("*.png")) == \
            ["bandwidth.png", "matmul.png"]


def test_a_failing_section_says_why_and_the_others_still_run(opengl, hand_written_glsl):
    out = run_benchmark("--only", "matmul,seeds", "--hand-matmul", "no-such-configuration", "--seeds", "saxpy")
    assert out.returncode == 1, out.stdout[-4000:] + out.stderr[-4000:]
    assert "FAILED: hand-written product: ValueError: no configuration 'no-such-configuration'" in out.stdout
    assert "-- matmul: failed: " in out.stdout
    assert "-- seeds: ok" in out.stdout
