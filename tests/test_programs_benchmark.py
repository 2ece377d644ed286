"""benchmarks/programs.py's loop programs, small: each gives NumPy's
result under gpupy (exactly where its work is exact, within the program's
tolerance otherwise), with no fallback. Times are the benchmark's, never
asserted here."""

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

import gpupy as gp

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def _programs():
    sys.path.insert(0, str(BENCHMARKS))  # (programs.py imports its sibling common.py)
    try:
        spec = importlib.util.spec_from_file_location("programs_under_test", BENCHMARKS / "programs.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(BENCHMARKS))
    return module


PROGRAMS = _programs().PROGRAMS

# program -> the small size it runs at here
SMALL = {
    "symbol_decisions": dict(n=60),
    "rows_match_pattern": dict(n=80),
    "column_distances": dict(d=5, m=7),
    "spring_forces": dict(n=6, steps=4),
    "mandelbrot_masks": dict(n=24, iterations=12),
    "image_channels": dict(n=20),
    "reversed_cumsum": dict(n=1000),
    "syrk_lower": dict(n=9, m=4),
    "csr_matvec": dict(n=40, per_row=3, products=2),
    "random_walk": dict(n=200),
    "maze_binary_tree": dict(h=6, w=7),
    "sorted_container": dict(n=3000, adds=20, removals=15),
}


@pytest.mark.parametrize("name", list(SMALL))
def test_loop_programs_give_numpys_results(gpu, name):
    fn, rtol, atol = PROGRAMS[name]
    want = np.asarray(fn(np, **SMALL[name]))
    with gp.fallback_mode("silent"):
        got = np.asarray(fn(gp, **SMALL[name]))
    assert got.shape == want.shape and got.dtype == want.dtype
    if rtol == 0 and atol == 0:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
    # What ran in NumPy is only what this driver cannot run in float64 (the
    # OpenGL driver's cos of image_channels); nothing of the programs' own
    # calls is a fallback.
    fallbacks = gp.stats()["fallbacks_by_function"]
    assert all(not gpu.declares(op, np.float64) for op in fallbacks), fallbacks


def test_container_and_draw_programs_are_host_placements(gpu):
    """The array-backed container's insert/delete and the one-value draws
    are NumPy's own calls, counted as host placements."""
    fn = PROGRAMS["sorted_container"][0]
    fn(gp, **SMALL["sorted_container"])
    placed = gp.stats()["host_placements_by_function"]
    assert placed["insert"] == 20 and placed["delete"] == 15
    gp.reset_stats()
    PROGRAMS["random_walk"][0](gp, n=50)
    assert gp.stats()["host_placements_by_function"]["random.Generator.integers"] == 49
