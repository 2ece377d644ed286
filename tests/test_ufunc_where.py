"""`where=` on every ufunc, on the device: f of every
element, written through the mask. With out=, NumPy leaves out's other
elements as they were; without, they are undefined (gpupy's are zero), and
NumPy warns that they are."""

import warnings

import numpy as np
import pytest

import gpupy as gp

FLOAT_DTYPES = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))

UNARY = ["negative", "absolute", "sqrt", "exp", "log", "sin", "floor", "isnan", "logical_not"]
BINARY = ["add", "subtract", "multiply", "divide", "power", "maximum", "fmin", "floor_divide", "less", "arctan2",
          "logical_and", "hypot"]


def _operands(dtype, n=64):
    rng = np.random.default_rng(7)
    a = (rng.random(n) * 4 + 0.5).astype(dtype)
    b = (rng.random(n) * 3 - 1).astype(dtype)
    mask = rng.random(n) > 0.4
    return a, b, mask


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("name", UNARY + BINARY)
def test_where_with_out_matches_numpy(gpu, silent_fallback, name, dtype):
    a, b, mask = _operands(dtype)
    uf = getattr(np, name)
    args = (a,) if uf.nin == 1 else (a, b)
    want_dtype = uf(*args).dtype
    start = np.full(a.shape, -7, want_dtype)
    want = start.copy()
    with np.errstate(all="ignore"):
        uf(*args, out=want, where=mask)
    out = gp.asarray(start)
    gp.reset_stats()
    got = getattr(gp, name)(*(gp.asarray(x) for x in args), out=out, where=gp.asarray(mask))
    assert got is out
    gpu.assert_same(out, want, ulp=4)
    if dtype == np.float32:  # every one of these a device op: nothing ran in NumPy
        assert gp.stats()["fallbacks"] == 0


def test_safe_divide_idiom(gpu):
    a = gp.arange(4.0)
    b = gp.asarray([0.0, 1.0, 0.0, 2.0])
    c = gp.zeros(4)
    assert gp.divide(a, b, out=c, where=b != 0) is c
    gpu.assert_same(c, np.array([0.0, 1.0, 0.0, 1.5]))
    d = np.divide(a, b, out=gp.full(4, -1.0), where=b != 0)  # NumPy's ufunc on gpupy arrays: the same
    gpu.assert_same(d, np.array([-1.0, 1.0, -1.0, 1.5]))


def test_where_broadcasts_and_takes_lists(gpu):
    out = gp.zeros((2, 3))
    gp.add(gp.ones(3), 1, out=out, where=[True, False, True])
    gpu.assert_same(out, np.array([[2.0, 0.0, 2.0], [2.0, 0.0, 2.0]]))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = gp.add(gp.ones(3), 1, where=gp.asarray([True, False, True]))
    assert r.shape == (3,) and float(r[0]) == 2.0 and float(r[2]) == 2.0
    assert any("where" in str(w.message) and w.category is UserWarning for w in caught)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gp.add(gp.ones(3), 1, out=None, where=gp.asarray([True, False, True]))  # out=None: no warning, as NumPy


def test_where_errors_are_numpys(gpu, silent_fallback):
    with pytest.raises(TypeError, match="Cannot cast"):
        gp.add(gp.ones(3), 1, out=gp.zeros(3), where=gp.asarray([1, 0, 1]))
    with pytest.raises(TypeError, match="Cannot cast ufunc 'divide' output"):
        gp.divide(gp.ones(3), 2.0, out=gp.zeros(3, np.int64), where=gp.asarray([True, False, True]))


def test_where_with_number_operands_stays_gpupys(gpu):
    # Two numbers: the ufunc's value is NumPy's at once, written through the
    # mask by gpupy. (NumPy 2.4 itself crashes on this call with where=.)
    out = gp.zeros(3, bool)
    gp.not_equal(np.uint32(5), -1, out=out, where=gp.asarray([True, False, True]))
    gpu.assert_same(out, np.array([True, False, True]))


def test_a_mask_keeps_numpys_warnings(gpu):
    # NumPy never computes the elements a mask leaves out, so never warns of
    # them; gpupy computes every element, and checks only those it keeps.
    a, b = np.arange(4, dtype=np.float32), np.array([0.0, 1.0, 0.0, 2.0], np.float32)
    for call in (lambda xp, x, y: xp.divide(x, y, out=xp.zeros(4, np.float32), where=y != 0),
                 lambda xp, x, y: xp.log(y, out=xp.zeros(4, np.float32), where=y > 0),
                 lambda xp, x, y: xp.arctanh(y / 2, out=xp.zeros(4, np.float32), where=y < 2),
                 lambda xp, x, y: xp.divide(x, y, out=xp.zeros(4), where=x > 1)):  # a zero kept: warned
        want = gpu.warnings_of(lambda: call(np, a, b))
        got = gpu.warnings_of(lambda: np.asarray(call(gp, gp.asarray(a), gp.asarray(b))))
        assert got == want
    assert gpu.warnings_of(lambda: np.divide(a, b, out=np.zeros(4), where=a > 1)) == [
        "divide by zero encountered in divide"]


@pytest.mark.parametrize("x, divisor", [(np.array([4, 5], np.int8), 0), (np.array([4, 5], np.int8), np.int8(0)),
                                        (np.array([1.5, 2.0], np.float16), 0.0),
                                        (np.array([1.5, 2.0], np.float16), np.float16(0))], ids=str)
def test_a_mask_keeps_numpys_warnings_with_number_operands(gpu, silent_fallback, x, divisor):
    # The numbers beside arrays are masked too (the differential fuzzer's
    # `floor_divide(x, 0, out=x, where=False)` warned), as arrays of the
    # loop's dtype: the result's dtype stays NumPy's.
    for mask in (False, np.array([False, False]), np.array([True, False])):
        def call(xp):
            out = xp.asarray(np.full(2, 7, x.dtype))
            return xp.floor_divide(xp.asarray(x), divisor, out=out, where=mask)
        want = gpu.warnings_of(lambda: call(np))
        got = gpu.warnings_of(lambda: np.asarray(call(gp)))
        assert got == want, (mask, got, want)
        with np.errstate(all="ignore"):
            gpu.assert_same(call(gp), call(np))


def test_a_mask_over_a_python_bool_stays_gpupys(gpu):
    x = np.array([1, 2], np.int8)
    for xp in (np, gp):
        out = xp.asarray(np.zeros(2, np.int8))
        xp.add(xp.asarray(x), True, out=out, where=np.array([True, False]))
        assert np.array_equal(np.asarray(out), [2, 0])
    assert gp.stats()["fallbacks"] == 0


def test_a_mask_over_numbers_keeps_numpys_types(gpu):
    # Numbers only are computed over the mask where errors are looked for;
    # a Python number stays weak beside a NumPy scalar (found by the fuzzer).
    for lib in (np, gp):
        with pytest.raises(OverflowError, match="out of bounds for uint8"):
            lib.add(np.uint8(0), -1, out=lib.asarray(np.int8(0)), where=False)
    out = gp.zeros(3)
    assert gpu.warnings_of(lambda: np.asarray(gp.divide(0, 0.0, out=out, where=gp.asarray([False, True, False])))) == \
        gpu.warnings_of(lambda: np.divide(0, 0.0, out=np.zeros(3), where=np.array([False, True, False]))) == [
            "invalid value encountered in divide"]
    assert gpu.warnings_of(lambda: np.asarray(gp.divide(0, 0.0, out=out, where=gp.zeros(3, bool)))) == []


def test_a_mask_over_python_ints_converts_them_as_numpy_does(gpu):
    # Python numbers only go to their common default type first, mask or
    # not: 2**63 beside another int does not fit int64 (NumPy's
    # OverflowError), beside a float it is a float64 (found by the
    # differential campaign: gpupy made the mask's operands first, of types
    # of their own, and raised nothing).
    for lib in (np, gp):
        for where in (False, lib.asarray(np.zeros((3, 3), bool))):
            with pytest.raises(OverflowError, match="Python int too large"):
                lib.add(0, 2 ** 63, out=lib.asarray(np.zeros((3, 3), np.int8)), where=where)
    mask = np.array([True, False, True])
    want = np.add(2 ** 63, 1.5, out=np.zeros(3), where=mask)
    got = gp.add(2 ** 63, 1.5, out=gp.zeros(3), where=gp.asarray(mask))
    np.testing.assert_array_equal(np.asarray(got), want)
    # A lone Python int too large for int64 is a uint64 there, no error.
    for lib in (np, gp):
        out = lib.asarray(np.zeros(2, np.int8))
        lib.negative(2 ** 63, out=out, where=lib.asarray(np.zeros(2, bool)))
        np.testing.assert_array_equal(np.asarray(out), [0, 0])
    # NumPy checks the output's dtype first: its casting error, not the
    # conversion's (found by the campaign).
    for lib in (np, gp):
        with pytest.raises(TypeError, match="Cannot cast ufunc 'divide' output"):
            lib.divide(0, 2 ** 63, out=lib.asarray(np.zeros(0, bool)), where=lib.asarray(np.zeros((), bool)))
