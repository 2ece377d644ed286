"""A Python loop that folds many terms into one value (the distance map's
`m = minimum(dist(p), m)`, a polynomial built term by term) reaches the
OpenGL driver as one long instruction list in which the same instructions
repeat with other constants. The code writer turns such a repetition into a
loop over uniform arrays (drivers/glsl/loop_rolling.hpp), so the shader no
longer grows with the number of terms. The loop must compute exactly what
the straight list does: every value, every NaN, every warning and error
NumPy gives, whichever copy produces it -- and a repetition that is not a
clean chain (a copy's constant NaN where the others are finite, a middle
term read again later) must still evaluate right."""
import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

import gpupy as gp
from fresh_python import PACKAGE_PARENT

ROOT = Path(__file__).resolve().parents[1]


def distance_map(xp, n, points):
    i, j = xp.indices((n, n), dtype=xp.float32)
    m = None
    for x, y in points:
        d = xp.sqrt((i - xp.float32(x)) ** 2 + (j - xp.float32(y)) ** 2)
        m = d if m is None else xp.minimum(d, m)
    return m


def horner(xp, x, coefficients):
    acc = x * 0 + coefficients[0]
    for c in coefficients[1:]:
        acc = acc * x + c
    return acc


def points(count, n, seed=7):
    rng = np.random.default_rng(seed)
    return [(float(n * rng.random()), float(n * rng.random())) for _ in range(count)]


@pytest.mark.parametrize("roll", ["1", "0"])
def test_the_distance_map_is_numpys_rolled_or_straight(opengl, roll):
    opengl.option("roll_loops", roll)
    pts = points(40, 48)
    got = np.asarray(distance_map(gp, 48, pts))
    want = distance_map(np, 48, pts)
    opengl.assert_same(got, want, gpu_array=False)


def test_a_copy_whose_constant_is_nan_keeps_numpys_nan(opengl):
    # What the writer may assume of a constant (never NaN) must hold for
    # every copy the loop's body serves.
    pts = points(30, 32)
    pts[17] = (float("nan"), 3.0)
    with np.errstate(invalid="ignore"):
        want = distance_map(np, 32, pts)
        got = np.asarray(distance_map(gp, 32, pts))
    assert np.isnan(want).all()
    opengl.assert_same(got, want, gpu_array=False)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32,
                                   np.uint64])
def test_a_polynomial_built_term_by_term(opengl, dtype):
    x_np = np.linspace(-1.5, 1.5, 3001).astype(dtype) if np.dtype(dtype).kind == "f" else \
        np.arange(-1500, 1501).astype(dtype)
    # Each term its own constant (equal constants are one node, read by
    # every copy from before the loop; distinct ones are the loop's arrays).
    terms = [0.5 + k / 8 for k in range(40)] if np.dtype(dtype).kind == "f" else [(3 * k + 1) % 97 for k in range(40)]
    coefficients = [dtype(c) for c in terms]
    with np.errstate(over="ignore"):
        want = horner(np, x_np, coefficients)
        got = np.asarray(horner(gp, gp.asarray(x_np), coefficients))
    opengl.assert_same(got, want, gpu_array=False)


def test_a_chain_of_boolean_constants(opengl):
    x_np = np.linspace(-2, 2, 999, dtype=np.float32)

    def run(xp, x):
        acc = x > 0
        for k in range(48):
            acc = xp.logical_xor(acc, xp.bool_(k % 3 == 0)) | (x > xp.float32(k / 100))
        return acc

    opengl.assert_same(run(gp, gp.asarray(x_np)), run(np, x_np))


def test_an_overflow_in_one_copy_warns_as_numpy(opengl):
    x_np = np.linspace(1.0, 2.0, 500, dtype=np.float32)
    coefficients = [np.float32(1.0)] * 40
    coefficients[29] = np.float32(3e38)  # only this term overflows

    def run(xp, x):
        return np.asarray(horner(xp, x, coefficients))

    want_warnings = opengl.warnings_of(lambda: run(np, x_np))
    assert want_warnings, "the case must overflow"
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        got = run(gp, gp.asarray(x_np))
    with np.errstate(over="ignore", invalid="ignore"):
        want = run(np, x_np)
    opengl.assert_same(got, want, gpu_array=False)
    assert sorted({str(w.message) for w in seen if w.category is RuntimeWarning}) == want_warnings


def test_a_middle_term_read_again_after_the_chain(opengl):
    # Not a clean chain: the loop may cover the copies before the term read
    # again, or none; the values are NumPy's either way.
    def run(xp, x):
        acc = x
        kept = None
        for k in range(1, 41):
            acc = xp.minimum(xp.abs(x - xp.float32(k) / 7), acc)
            if k == 20:
                kept = acc
        return acc * 2 + kept

    x_np = np.linspace(-3, 9, 777, dtype=np.float32)
    opengl.assert_same(run(gp, gp.asarray(x_np)), run(np, x_np))


def test_a_reduction_of_a_chain(opengl):
    pts = points(36, 40)
    want = distance_map(np, 40, pts).sum(axis=1, dtype=np.float64)
    got = np.asarray(distance_map(gp, 40, pts).sum(axis=1, dtype=np.float64))
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_the_shader_of_a_long_chain_is_a_loop_and_does_not_grow_with_it(opengl, tmp_path):
    # Program sources as the driver writes them (GPUPY_GL_DUMP_SHADERS), in
    # a fresh process: 40 and 80 terms give loops of the same size.
    script = textwrap.dedent("""
        import sys
        import numpy as np
        import gpupy as gp
        sys.path.insert(0, sys.argv[1])
        from test_loop_rolling import distance_map, points
        gp.use_driver("opengl")
        gp.set_placement("device")
        gp.set_eager_threshold(0)
        gp.set_driver_option("roll_loops", sys.argv[3])
        pts = points(int(sys.argv[2]), 32)
        np.testing.assert_array_equal(np.asarray(distance_map(gp, 32, pts)), distance_map(np, 32, pts))
    """)
    sizes = {}
    for terms, roll in ((40, "1"), (80, "1"), (40, "0")):
        dump = tmp_path / f"{terms}-{roll}"
        dump.mkdir()
        # (The gpupy under test, installed or built in place: not the tree's.)
        env = dict(os.environ, GPUPY_GL_DUMP_SHADERS=str(dump), PYTHONPATH=PACKAGE_PARENT)
        subprocess.run([sys.executable, "-c", script, str(ROOT / "tests"), str(terms), roll], env=env, check=True,
                       timeout=300, cwd=tmp_path)
        sources = [p.read_text() for p in dump.iterdir()]
        chains = [s for s in sources if "sqrt" in s]
        assert chains, sources
        sizes[terms, roll] = max(len(s) for s in chains)
        looped = [s for s in chains if "for (int it0 = 0;" in s]
        assert bool(looped) == (roll == "1")
    assert sizes[40, "1"] * 2 < sizes[40, "0"]
    assert sizes[80, "1"] < sizes[40, "1"] * 1.2
