"""`dtype=` and `signature=` on gpupy's ufuncs (ufunc._with_loop): the loop
NumPy picks for the operands' dtypes runs on the device with the operands
cast to its inputs -- NumPy's values and dtypes bit for bit, NumPy's errors
(casting rules, Python ints out of the loop's range) in NumPy's order, and
no fallback. Dask calls `np.divide(a, b, dtype=...)` in every mean.
"""

import numpy as np
import pytest

import gpupy as gp

OPERANDS = {
    "int32": np.arange(-3, 3, dtype=np.int32),
    "float64": np.linspace(-2, 2, 6),
    "float32": np.linspace(-2, 2, 6).astype(np.float32),
    "bool": np.array([0, 1, 1, 0, 1, 0], bool),
    "uint8": np.arange(6, dtype=np.uint8),
}
NUMBERS = {"int": 3, "float": 2.5, "big int": 2**40}


def outcome(call):
    try:
        return call(), None
    except Exception as e:  # noqa: BLE001 - the exception is what is compared
        return None, e


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "true_divide", "maximum", "less", "logical_and",
                                  "negative", "absolute"])
def test_dtype_and_signature_give_numpys_loop(gpu, name):
    numpy_ufunc, gpupy_ufunc = getattr(np, name), getattr(gp, name)
    seconds = list(OPERANDS) + list(NUMBERS) if numpy_ufunc.nin == 2 else [None]
    signatures = ["dd->d", "ff->f"] if numpy_ufunc.nin == 2 else ["d->d"]
    checked = 0
    for first in OPERANDS:
        for second in seconds:
            host = (OPERANDS[first],) if second is None else (OPERANDS[first], OPERANDS.get(second, NUMBERS.get(second)))
            device = tuple(gp.asarray(x) if isinstance(x, np.ndarray) else x for x in host)
            for casting in ("same_kind", "unsafe"):
                # (dtype objects too: np.dtype("float64") == None, as np.dtype(None) is float64)
                dtypes = ("f8", "f4", "i8", "i1", "?", np.dtype("float64"), np.float32, np.dtype(bool))
                for asked in [dict(dtype=d) for d in dtypes] + [dict(signature=s) for s in signatures]:
                    with np.errstate(all="ignore"):
                        want, numpy_error = outcome(lambda: numpy_ufunc(*host, casting=casting, **asked))
                        got, gpupy_error = outcome(lambda: np.asarray(gpupy_ufunc(*device, casting=casting, **asked)))
                    where = f"{name}({first}, {second}, casting={casting}, {asked})"
                    if isinstance(gpupy_error, gp.FallbackError):
                        # Only where the call without dtype= is not run on the
                        # device either (a comparison with a Python int out of
                        # the array's range).
                        assert outcome(lambda: gpupy_ufunc(*device))[1].__class__ is gp.FallbackError, where
                        continue
                    if numpy_error is not None:
                        assert type(gpupy_error) is type(numpy_error) and str(gpupy_error) == str(numpy_error), where
                    else:
                        assert gpupy_error is None, f"{where}: {gpupy_error!r}"
                        assert got.dtype == want.dtype and np.array_equal(got, want, equal_nan=True), where
                    checked += 1
    assert checked >= 60


def test_out_and_where_combine_with_dtype(gpu):
    a, b = np.arange(6, dtype=np.int32), np.array([1, 0, 2, 0, 4, 5], np.int32)
    out = gp.zeros(6, np.float32)
    result = gp.divide(gp.asarray(a), gp.asarray(b), out=out, where=gp.asarray(b != 0), dtype=np.float32)
    want = np.zeros(6, np.float32)
    np.divide(a, b, out=want, where=b != 0, dtype=np.float32)
    assert result is out
    np.testing.assert_array_equal(np.asarray(out), want)
    assert gp.stats()["fallbacks"] == 0


def test_numbers_only_are_numpys_scalars(gpu):
    """With no array among the operands NumPy types a Python int as int64
    (not as a weak scalar) and gives a scalar at once; so does gpupy."""
    calls = [lambda m: m.negative(255, dtype=np.int8), lambda m: m.negative(0, dtype=np.uint8),
             lambda m: m.add(3, 2.5, dtype=np.float32), lambda m: m.multiply(2**40, 3, signature="dd->d"),
             lambda m: m.less(1, 2.5, dtype=bool)]
    for call in calls:
        want, numpy_error = outcome(lambda: call(np))
        got, gpupy_error = outcome(lambda: call(gp))
        if numpy_error is not None:
            assert type(gpupy_error) is type(numpy_error) and str(gpupy_error) == str(numpy_error)
        else:
            assert gpupy_error is None and type(got) is type(want) and got == want
    assert gp.stats()["fallbacks"] == 0
