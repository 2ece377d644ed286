"""np.errstate / np.seterr (issue 15, item 7): where NumPy's error state
asks to raise or to call on a floating-point error, gpupy's ufuncs and
operators run in NumPy, which detects the error (the device does not), so
the program sees NumPy's FloatingPointError or callback. Under the default
state (warn, or ignore) they stay on the device, without NumPy's
RuntimeWarning (docs/ecosystem.md, "Errors and warnings")."""

import numpy as np
import pytest

import gpupy as gp


@pytest.mark.parametrize("call, kind", [(lambda a, z: a / z, "divide by zero"), (lambda a, z: gp.log(z), "divide by zero"),
                                        (lambda a, z: gp.sqrt(-a - 1), "invalid value"),
                                        (lambda a, z: z / z, "invalid value"),
                                        (lambda a, z: (a + 1e300) * 1e300, "overflow"),
                                        (lambda a, z: gp.arange(3) // 0, "divide by zero")])
def test_raise_gives_numpys_floating_point_error(gpu, silent_fallback, call, kind):
    a, z = gp.arange(4.0), gp.zeros(4)
    with np.errstate(all="raise"):
        with pytest.raises(FloatingPointError, match=kind):
            call(a, z)
    with np.errstate(all="ignore"):
        call(a, z)  # and nothing without


def test_call_reaches_the_callback(gpu, silent_fallback):
    seen = []
    previous = np.seterrcall(lambda kind, flag: seen.append(kind))
    try:
        with gp.errstate(invalid="call"):
            r = gp.sqrt(gp.asarray([-1.0, 4.0]))
    finally:
        np.seterrcall(previous)
    assert seen == ["invalid value"]
    np.testing.assert_array_equal(np.asarray(r), [np.nan, 2.0])


def test_seterr_is_honoured_until_reset(gpu, silent_fallback):
    old = np.seterr(divide="raise")
    try:
        with pytest.raises(FloatingPointError):
            gp.arange(3.0) / 0
    finally:
        np.seterr(**old)
    np.testing.assert_array_equal(np.asarray(gp.ones(2) / gp.zeros(2)), [np.inf, np.inf])


def test_the_default_state_stays_on_the_device(gpu):
    # The gpu fixture refuses any fallback: under NumPy's default state the
    # division runs on the device (and gives NumPy's values).
    with np.errstate(all="ignore"):
        want = np.arange(4.0) / np.zeros(4)
    np.testing.assert_array_equal(np.asarray(gp.arange(4.0) / gp.zeros(4)), want)
    with np.errstate(divide="ignore"):
        np.testing.assert_array_equal(np.asarray(gp.arange(4.0) / gp.zeros(4)), want)


def test_in_place_under_raise_writes_then_raises(gpu, silent_fallback):
    target, want = gp.full(1 << 15, 1e300), np.full(1 << 15, 1e300)
    with np.errstate(over="raise"), pytest.raises(FloatingPointError, match="overflow"):
        target *= 1e308
    with np.errstate(over="raise"), pytest.raises(FloatingPointError, match="overflow"):
        want *= 1e308
    np.testing.assert_array_equal(np.asarray(target), want)
