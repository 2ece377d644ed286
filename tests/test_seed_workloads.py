"""The seed workloads of the systems gpupy descends from (Accelerator's image
kernels, Barracuda's vector kernels, C$'s matrix product:
benchmarks/seeds.py) give NumPy's results with gpupy, at tiny sizes (32x32
images, 2^8-element vectors, 16x16 matrices).

Each workload runs once per available driver (`gpu` fixture), with the
placement left as it is and with every evaluation forced onto the device
(gpupy.set_placement("device")). The benchmark's own comparison decides:
exact for Life and the integer results, its float32 tolerances otherwise.
Some of them may still hand a function to NumPy (today: rotate's gather
with integer index arrays, img[iy, ix]); they run in fallback mode "silent",
and this file does not count fallbacks: the benchmark reports them.
"""

import sys
from pathlib import Path

import numpy as np
import pytest

import gpupy as gp

# benchmarks/ is not a package: its folder is on the path only while seeds
# and its own imports load (a module name of it, such as programs, would
# otherwise hide the fuzzer's).
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
try:
    import seeds
finally:
    del sys.path[0]


@pytest.fixture(params=["default", "device"])
def placement(request):
    """The placement a test runs under, put back afterwards."""
    if request.param == "default":
        yield gp.get_placement()
        return
    previous = gp.set_placement(request.param)
    try:
        yield request.param
    finally:
        gp.set_placement(previous)


@pytest.mark.parametrize("name", list(seeds.SEEDS))
def test_matches_numpy(gpu, placement, name):
    spec = seeds.SEEDS[name]
    inputs = spec.inputs(spec.sizes.tiny)
    want = seeds.as_numpy(spec.fn(np, *inputs))
    with gp.fallback_mode("silent"):
        got = seeds.as_numpy(spec.fn(gp, *inputs))
    valid, error, problem = seeds.compare(got, want, *spec.tolerance(spec.sizes.tiny))
    assert valid, f"{name} on {gpu.name}, placement {placement}: {problem}"


@pytest.mark.parametrize("name", list(seeds.SEEDS))
def test_inputs_left_unchanged(name):
    """A workload that wrote into its input would time a different problem
    on each repetition (NumPy's xp.asarray does not copy)."""
    spec = seeds.SEEDS[name]
    inputs = spec.inputs(spec.sizes.tiny)
    spec.fn(np, *inputs)
    for before, after in zip(spec.inputs(spec.sizes.tiny), inputs):
        np.testing.assert_array_equal(before, after)
