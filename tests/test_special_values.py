"""Composed expressions over IEEE's special values, evaluated on the device.

A generated shader must not depend on what GLSL leaves undefined: a
division by zero, sqrt of a negative number, or infinities and NaNs that
reach an operation through a value the compiler can prove -- the
comparison of an array with itself is always false, and a compiler that
folds it sees a constant divisor of zero (it gave 0 where NumPy gives
inf). Every expression here is built from IEEE-exact operations, so the
device's values must be NumPy's bit for bit (any NaN for a NaN; the sign of
a zero where the driver promises it).
"""

import random
import warnings

import numpy as np
import pytest

import gpupy as gp

SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, 3.0, 1e30, -2.5e-3]
CONSTANTS = [0.0, -0.0, 1.0, -1.0, 2.0, 0.5, np.inf]


def _leaf(rng):
    kind = rng.randrange(5)
    if kind == 0:
        return "a"
    if kind == 1:
        return f"(a * 0 + float('{rng.choice(CONSTANTS)!r}'))"  # a's dtype; NaN where a is infinite
    if kind == 2:
        # An array compared with itself: a value a compiler may fold.
        cmp = rng.choice(["greater", "less", "equal", "not_equal", "greater_equal"])
        return f"m.{cmp}(a, a).astype(a.dtype)"
    if kind == 3:
        return "m.flip(a)"
    return "(a > 0).astype(a.dtype)"


UNARY = ["negative", "sqrt", "reciprocal", "square", "absolute", "floor", "ceil", "trunc", "rint", "sign"]
# (maximum, minimum and their NaN-ignoring kin leave the sign of a zero
# result open between +0 and -0, and copysign takes a NaN's sign, which
# IEEE leaves to the machine (x86's 0/0 is -NaN): not composed here.)
BINARY = ["add", "subtract", "multiply", "divide"]


def _expression(rng, depth):
    """The text of a random expression of `a` in the module `m`."""
    if depth == 0 or rng.random() < 0.25:
        return _leaf(rng)
    if rng.random() < 0.35:
        return f"m.{rng.choice(UNARY)}({_expression(rng, depth - 1)})"
    if rng.random() < 0.15:
        c, x, y = (_expression(rng, depth - 1) for _ in range(3))
        return f"m.where({c} > 0, {x}, {y})"
    return f"m.{rng.choice(BINARY)}({_expression(rng, depth - 1)}, {_expression(rng, depth - 1)})"


def _same(got, want, signed_zeros):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    nan = np.isnan(got) & np.isnan(want)
    bad = ~nan & (got != want)
    if signed_zeros:
        bad |= ~nan & (got == 0) & (want == 0) & (np.signbit(got) != np.signbit(want))
    return not bad.any()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_composed_expressions_over_special_values_on_the_device(gpu, dtype):
    old = gp.get_placement()
    gp.set_placement("device")
    try:
        values = np.array(SPECIAL, dtype=dtype)
        x = gp.array(values)
        rng = random.Random(20261127)
        failures = []
        for _ in range(150):
            expr = _expression(rng, 4)
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                want = eval(expr, {"m": np, "a": values})
                got = np.asarray(eval(expr, {"m": gp, "a": x}))
            if not _same(got, want, signed_zeros=gpu.name != "opengl"):
                failures.append(f"{expr}\n  gpupy {got}\n  NumPy {want}")
        assert not failures, "\n".join(failures[:3])
    finally:
        gp.set_placement(old)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_division_by_a_comparison_of_an_array_with_itself(gpu, dtype):
    # 3 / (x > x): the comparison is false everywhere, so the divisor is a
    # zero the shader compiler can prove; NumPy's quotient is inf, and
    # sinh and exp of it inf, not 0 and 1.
    old = gp.get_placement()
    gp.set_placement("device")
    try:
        h = np.array([0.0, 2.0, -1.0, np.nan], dtype=dtype)
        x = gp.array(h)
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            cases = [lambda m, a: 3 / (a > a), lambda m, a: -3 / (a > a), lambda m, a: (a > a) / (a > a),
                     lambda m, a: m.sqrt((a > a) - 1.0), lambda m, a: m.reciprocal((a != a).astype(dtype))]
            if gpu.declares("sinh", dtype) and gpu.declares("exp", dtype):  # (float32's on the device)
                cases += [lambda m, a: m.sinh(3 / (a > a).astype(a.dtype)), lambda m, a: m.exp(3 / (a > a).astype(a.dtype))]
            for f in cases:
                want = f(np, h)
                got = np.asarray(f(gp, x))
                assert got.dtype == want.dtype
                np.testing.assert_array_equal(got, want)
    finally:
        gp.set_placement(old)
