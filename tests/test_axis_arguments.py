"""Axis arguments with NumPy's errors: every function that takes an axis
raises what NumPy raises for one that is not an integer (TypeError) or out
of range (AxisError, an IndexError and ValueError), through one rule
(gpupy/_axes.py, and index_value in the bindings)."""
import numpy as np
import pytest

import gpupy as gp

A = np.arange(24, dtype=np.float32).reshape(2, 3, 4)

# name: fn(xp, x, axis) for one axis argument
CALLS = {
    "sum": lambda xp, x, ax: xp.sum(x, axis=ax),
    "mean": lambda xp, x, ax: xp.mean(x, axis=ax),
    "max method": lambda xp, x, ax: x.max(axis=ax),
    "argmax": lambda xp, x, ax: xp.argmax(x, axis=ax),
    "cumsum": lambda xp, x, ax: xp.cumsum(x, axis=ax),
    "sort": lambda xp, x, ax: xp.sort(x, axis=ax),
    "argsort": lambda xp, x, ax: xp.argsort(x, axis=ax),
    "partition": lambda xp, x, ax: xp.partition(x, 1, axis=ax),
    "median": lambda xp, x, ax: xp.median(x, axis=ax),
    "take": lambda xp, x, ax: xp.take(x, [0], axis=ax),
    "take_along_axis": lambda xp, x, ax: xp.take_along_axis(x, xp.zeros((1, 1, 1), dtype=np.int64), axis=ax),
    "flip": lambda xp, x, ax: xp.flip(x, ax),
    "roll": lambda xp, x, ax: xp.roll(x, 1, axis=ax),
    "diff": lambda xp, x, ax: xp.diff(x, axis=ax),
    "repeat": lambda xp, x, ax: xp.repeat(x, 2, axis=ax),
    "split": lambda xp, x, ax: xp.split(x, 1, axis=ax),
    "expand_dims": lambda xp, x, ax: xp.expand_dims(x, ax),
    "stack": lambda xp, x, ax: xp.stack([x, x], axis=ax),
    "concatenate": lambda xp, x, ax: xp.concatenate([x, x], axis=ax),
    "moveaxis": lambda xp, x, ax: xp.moveaxis(x, ax, 0),
    "swapaxes": lambda xp, x, ax: xp.swapaxes(x, ax, 0),
    "swapaxes method": lambda xp, x, ax: x.swapaxes(0, ax),
    "transpose method": lambda xp, x, ax: x.transpose(ax, 0, 1),
}

BAD = {"float": 1.5, "numpy float": np.float64(1.0), "string": "1", "past the end": 7, "before the start": -8}


def outcome(fn):
    try:
        with np.errstate(all="ignore"):
            fn()
    except Exception as exc:  # noqa: BLE001 -- the class is compared
        return type(exc)
    return None


@pytest.mark.parametrize("bad", sorted(BAD))
@pytest.mark.parametrize("name", sorted(CALLS))
def test_a_bad_axis_raises_numpys_error(gpu, name, bad):
    call, axis = CALLS[name], BAD[bad]
    want = outcome(lambda: call(np, A, axis))
    got = outcome(lambda: call(gp, gp.asarray(A), axis))
    assert want is not None, "NumPy accepts it: not a bad axis"
    assert got is not None, f"gpupy accepted {axis!r}; NumPy raised {want.__name__}"
    assert issubclass(got, want), f"gpupy raised {got.__name__}, NumPy {want.__name__}"


@pytest.mark.parametrize("name", sorted(CALLS))
def test_an_integer_axis_of_any_kind_is_taken(gpu, name):
    for axis in (1, -1, np.int64(1), np.uint8(2)):
        want = outcome(lambda: CALLS[name](np, A, axis))
        got = outcome(lambda: CALLS[name](gp, gp.asarray(A), axis))
        assert got == want, (axis, got, want)
