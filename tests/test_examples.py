"""The thesis's demos (examples/) give the same images with gpupy as with
NumPy, on every available driver, with nothing running in NumPy behind
gpupy's back.

Each example runs in this process (runpy, with sys.argv set as a user's
command line would), once importing NumPy and once gpupy, on a small grid;
the images must agree to within one grey level on at most 0.1% of the
pixels (the thesis says "identical"; a value that lands within an ulp of a
rounding boundary of the 8-bit conversion may go either way).

The `gpu` fixture (conftest.py) runs each gpupy test once per available
driver in fallback mode "raise". Where gpupy still hands a function to
NumPy for a reason written down in KNOWN_FALLBACKS, the test runs in
"silent" mode instead and checks that exactly the documented functions
fell back: a new fallback fails, and so does a documented one that no
longer happens (so that the list cannot go stale).
"""

import io
import os
import runpy
import sys
import tokenize
from pathlib import Path

import numpy as np
import pytest

import gpupy as gp
from fresh_python import run_python

PIL_Image = pytest.importorskip("PIL.Image")

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

# Image agreement: at most 1 grey level apart, on at most 0.1% of pixels.
MAX_LEVELS = 1
MAX_FRACTION = 0.001

# example -> {function: why gpupy still runs it in NumPy}
KNOWN_FALLBACKS = {
    "shaded_sphere": {},
    # max(distMin.flat): in Python 3 `from gpupy import *` binds max to
    # gpupy.max (the thesis, on Python 2 and old NumPy, got the builtin),
    # and it reduces on the device.
    "distance_map": {},
}


def run_example(name, monkeypatch, *argv):
    """Runs examples/<name>.py as `python <name>.py argv...` would."""
    monkeypatch.delenv("GPUPY_EXAMPLE_NUMPY", raising=False)
    monkeypatch.setattr(sys, "argv", [str(EXAMPLES / f"{name}.py"), *map(str, argv)])
    runpy.run_path(str(EXAMPLES / f"{name}.py"), run_name="__main__")


def run_gpupy_example(name, monkeypatch, *argv):
    """Runs the example's gpupy path under the fallback policy above."""
    known = KNOWN_FALLBACKS[name]
    if not known:
        run_example(name, monkeypatch, *argv)  # fallback mode "raise" (gpu fixture)
        return
    previous = gp.get_fallback()
    gp.set_fallback("silent")
    gp.reset_stats()
    try:
        run_example(name, monkeypatch, *argv)
        fell_back = gp.stats()["fallbacks_by_function"]
    finally:
        gp.set_fallback(previous)
    unexpected = sorted(set(fell_back) - set(known))
    assert not unexpected, f"{name}: gpupy ran {unexpected} in NumPy ({fell_back})"
    gone = sorted(set(known) - set(fell_back))
    assert not gone, f"{name}: {gone} no longer fall back to NumPy: remove them from KNOWN_FALLBACKS"


def load_image(path):
    with PIL_Image.open(path) as img:
        return np.asarray(img).astype(np.int16)


def assert_images_agree(got_path, expected_path):
    got, expected = load_image(got_path), load_image(expected_path)
    assert got.shape == expected.shape, f"image shape {got.shape} != NumPy's {expected.shape}"
    diff = np.abs(got - expected)
    if diff.ndim == 3:
        diff = diff.max(axis=2)  # a pixel differs if any channel does
    pixels = diff.size
    differing = int(np.count_nonzero(diff))
    too_far = int(np.count_nonzero(diff > MAX_LEVELS))
    allowed = int(MAX_FRACTION * pixels)
    assert too_far == 0 and differing <= allowed, (
        f"{differing} of {pixels} pixels differ from NumPy's image (at most {allowed} may, by at most "
        f"{MAX_LEVELS} level); {too_far} differ by more than {MAX_LEVELS}, largest difference {int(diff.max())}")


# --- shaded sphere (appendix A.1) -----------------------------------------------------------------

@pytest.mark.parametrize("size", [(128, 128), (96, 64)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_shaded_sphere(gpu, tmp_path, monkeypatch, size):
    ref, out = tmp_path / "numpy.png", tmp_path / "gpupy.png"
    run_example("shaded_sphere", monkeypatch, "--numpy", "--size", *size, "-o", ref)
    run_gpupy_example("shaded_sphere", monkeypatch, "--size", *size, "-o", out)
    assert load_image(out).shape == (size[0], size[1], 3)  # x runs down the image, as in the thesis
    assert_images_agree(out, ref)


def test_shaded_sphere_is_a_numpy_program():
    """Thesis figure 3.1: the only code naming gpupy is the import."""
    source = (EXAMPLES / "shaded_sphere.py").read_text()
    lines = source.splitlines()
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    uses = [lines[t.start[0] - 1].strip() for t in tokens if t.type == tokenize.NAME and t.string == "gpupy"]
    assert uses == ["import gpupy as np"], uses


def test_shaded_sphere_env_switch(tmp_path, monkeypatch):
    """GPUPY_EXAMPLE_NUMPY=1 selects NumPy like --numpy does."""
    monkeypatch.setattr(sys, "argv", ["shaded_sphere.py", "--size", "32", "32", "-o", str(tmp_path / "s.png")])
    monkeypatch.setenv("GPUPY_EXAMPLE_NUMPY", "1")
    result = runpy.run_path(str(EXAMPLES / "shaded_sphere.py"), run_name="__main__")
    assert result["np"] is np
    assert (tmp_path / "s.png").exists()


# --- distance map (appendix A.3) ------------------------------------------------------------------

def run_distance_maps(gpu_monkeypatch, tmp_path, *argv):
    """Image and raw values from NumPy and from gpupy for one command line."""
    paths = {k: tmp_path / f"{k}.{ext}" for k, ext in
             (("n", "png"), ("g", "png"), ("nr", "dat"), ("gr", "dat"))}
    run_example("distance_map", gpu_monkeypatch, *argv, "-o", paths["n"], "-r", paths["nr"])
    run_gpupy_example("distance_map", gpu_monkeypatch, "-g", *argv, "-o", paths["g"], "-r", paths["gr"])
    return paths


@pytest.mark.parametrize("expo", ["2", "3"])
def test_distance_map(gpu, tmp_path, monkeypatch, expo):
    n_grid, n_pt = 64, 12
    p = run_distance_maps(monkeypatch, tmp_path, "-w", n_grid, "-p", n_pt, "-s", 2007, "-e", expo)
    assert load_image(p["g"]).shape == (n_grid, n_grid)
    assert_images_agree(p["g"], p["n"])
    # -r: raw float32 values, 255 * scaled distance (thesis table 5.3 measures these).
    raw_n, raw_g = np.fromfile(p["nr"], np.float32), np.fromfile(p["gr"], np.float32)
    assert raw_g.size == raw_n.size == n_grid * n_grid
    assert raw_n.min() >= 0 and raw_n.max() == np.float32(255)
    # Each pixel is a handful of ops (power, add, power, minimum, divide,
    # multiply) each within ~2 ulp of NumPy's: a few 1e-7 relative.
    rel = np.abs(raw_g.astype(np.float64) - raw_n) / np.maximum(raw_n, 1e-30)
    assert rel.max() < 2e-6, f"raw values: max relative error {rel.max():.3g} against NumPy's"


def test_distance_map_seed(tmp_path, monkeypatch):
    """-s seeds the points: the same seed draws the same map, another seed
    another one (NumPy only: this tests the example's generator)."""
    maps = []
    for i, seed in enumerate(["5", "5", "6"]):
        out = tmp_path / f"{i}.dat"
        run_example("distance_map", monkeypatch, "-w", 32, "-p", 4, "-s", seed, "-r", out)
        maps.append(np.fromfile(out, np.float32))
    assert np.array_equal(maps[0], maps[1])
    assert not np.array_equal(maps[0], maps[2])


def test_distance_map_partitioned(software, tmp_path, monkeypatch):
    """The software driver with tiny limits (three operations per
    evaluation, 1000-element blocks) partitions every expression and cuts
    the grid into many blocks: the image must not change."""
    software.option("max_ops", 3)
    gp.set_block_size(1000)
    p = run_distance_maps(monkeypatch, tmp_path, "-w", 48, "-p", 6, "-s", 11)
    assert_images_agree(p["g"], p["n"])
    assert gp.stats()["collapses"] > 0


# --- from the command line ------------------------------------------------------------------------

@pytest.mark.parametrize("example,args", [
    ("shaded_sphere", ["--size", "64", "64"]),
    ("distance_map", ["-g", "-w", "64", "-p", "5", "-s", "3"]),
], ids=["shaded_sphere", "distance_map"])
def test_command_line(gpu, tmp_path, example, args):
    """A user's command line in a fresh process: gpupy picks the driver from
    GPUPY_DRIVER, nothing falls back (GPUPY_FALLBACK=raise), no warnings.
    (A device that flushes float32 subnormals says so on stderr unless the
    user chose; this user has: tests/test_float_behaviour.py covers the note.)"""
    out = tmp_path / "out.png"
    env = dict(os.environ, GPUPY_DRIVER=gpu.name, GPUPY_FALLBACK="raise", GPUPY_FLOAT32_SUBNORMALS="flush")
    env.pop("GPUPY_EXAMPLE_NUMPY", None)
    proc = run_python(["-W", "error", str(EXAMPLES / f"{example}.py"), *args, "-o", str(out)], env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == "" and out.exists()


def test_distance_map_says_its_options():
    """-h/--help prints the options and exits 0; an unknown option says so
    with them, and exits non-zero, without a traceback."""
    script = str(EXAMPLES / "distance_map.py")
    for flag in ("-h", "--help"):
        r = run_python([script, flag], timeout=120)
        assert r.returncode == 0, r.stderr
        assert "-p N      number of random points" in r.stdout
    r = run_python([script, "--bad"], timeout=120)
    assert r.returncode != 0
    assert "option --bad not recognized" in r.stderr and "-w N" in r.stderr
    assert "Traceback" not in r.stderr
