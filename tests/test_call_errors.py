"""Bad input raises NumPy's exception at NumPy's statement, and input NumPy
accepts gives NumPy's dtype and values -- the cases a differential fuzzer
found answered differently (the call computed, raised later, or raised
another class)."""

import numpy as np
import pytest

import gpupy as gp

B = np.array([True, False, True])

CASES = {
    "clip with a string bound": lambda m: m.clip(m.ones(3), "a", 2),
    "arange to infinity": lambda m: m.arange(float("inf")),
    "arange from 0 to infinity": lambda m: m.arange(0, float("inf")),
    "arange to minus infinity": lambda m: m.arange(-float("inf")),
    "arange of NaN": lambda m: m.arange(float("nan")),
    "arange of 1e30 elements": lambda m: m.arange(1e30),
    "tile by a negative count": lambda m: m.tile(m.ones(3), -1),
    "tile by a negative count in a tuple": lambda m: m.tile(m.ones(3), (2, -1)),
    "repeat by a negative count": lambda m: m.repeat(m.ones(3), -1),
    "zeros of a negative length": lambda m: m.zeros(-1),
    "ones with a negative dimension": lambda m: m.ones((2, -1)),
    "full of a negative length": lambda m: m.full(-3, 1.0),
    "reshape to any negative length": lambda m: m.ones(6).reshape(2, -5),
    "reshape with two unknown lengths": lambda m: m.ones(6).reshape(-2, -1),
    "a ufunc's out= read-only": lambda m: m.add(m.ones(3), 1, out=m.broadcast_to(m.zeros(3), (3,))),
    "a ufunc's out= read-only and of the wrong dtype": lambda m: m.add(m.ones(3), 1.5, out=m.broadcast_to(
        m.zeros(3, m.int8), (3,))),
    "a reduction's out= read-only": lambda m: m.sum(m.ones(3), out=m.broadcast_to(m.zeros(()), ())),
    "clip of int8 below its range": lambda m: m.clip(m.ones(3, m.int8), -1000, 5),
    "clip of int8 above its range": lambda m: m.clip(m.ones(3, m.int8), 0, 1000),
    "clip of uint8 with -1": lambda m: m.clip(m.ones(3, m.uint8), -1, 5),
    "clip of int8 to a minimum above its range": lambda m: m.clip(m.ones(3, m.int8), 1000, None),
    "clip without bounds": lambda m: m.clip(m.ones(3, m.int8), None, None),
    "clip of bools with an int and a float64 array": lambda m: m.clip(m.asarray(B), 0, m.asarray(
        np.array([0.5, 0.2, 0.1]))),
    "bool ** 2 is NumPy's square": lambda m: m.asarray(B) ** 2,
    "bool ** 2 of an or with a tiny float": lambda m: m.logical_or(m.asarray(B), 1e-45) ** 2,
    "power(bool, 2) is power's": lambda m: m.power(m.asarray(B), 2),
    "copyto from extra leading ones": lambda m: _copyto(m, np.ones((1, 1, 3)), m.zeros(3)),
    "copyto of (1, 1) into (3,)": lambda m: _copyto(m, np.ones((1, 1)), m.zeros(3)),
    "copyto of (1,) into ()": lambda m: _copyto(m, np.ones(1), m.zeros(())),
    "copyto of a mask with extra leading ones": lambda m: m.copyto(m.zeros(3), 1.0, where=np.ones((1, 3), bool)),
    "copyto of a uint8 scalar into int8": lambda m: _copyto(m, np.uint8(255), m.zeros(4, m.int8)),
    "copyto that does not broadcast": lambda m: _copyto(m, np.ones((2, 1, 3)), m.zeros(3)),
    "setitem of extra leading ones": lambda m: _setitem(m.zeros(3), np.ones((1, 1, 3))),
    "setitem of (1, 1) into (3,)": lambda m: _setitem(m.zeros(3), np.ones((1, 1))),
}


def _copyto(m, src, dst):
    m.copyto(dst, src)
    return dst


def _setitem(dst, value):
    dst[...] = value
    return dst


@pytest.mark.parametrize("name", list(CASES))
def test_bad_input_and_edge_cases_are_numpys(gpu, silent_fallback, name):
    case = CASES[name]
    try:
        want = case(np)
    except Exception as e:  # noqa: BLE001 -- NumPy's behaviour is the oracle
        with pytest.raises(type(e)):
            case(gp)
        return
    got = case(gp)
    assert isinstance(got, gp.GpuArray)
    gpu.assert_same(got, want)
