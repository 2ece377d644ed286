"""Functions gpupy runs as NumPy's own call on the host values, counted as
host placements rather than fallbacks (gpupy/_placement.py, host_function):
insert, delete, resize, polyfit, correlate, convolve, ufunc.reduceat,
mgrid and ogrid.

Each case runs with NumPy and with gpupy on the same values, the inputs
given as gpupy arrays, NumPy arrays, lists, strided and reversed views,
broadcast views and lazy expressions: the results are NumPy's (values,
dtype, shape; gpupy arrays where NumPy gives arrays), bad input raises
NumPy's exception with NumPy's message, and each call counts one host
placement and no fallback. The `gpu` fixture runs every test on each
driver with the fallback mode "raise", where any fallback is an error.
"""

import numpy as np
import pytest

import gpupy as gp

# --- the inputs, in every form a script may give them ----------------------------------------------


def _lazy(g):
    """A lazy expression with g's values (evaluated when NumPy reads it)."""
    return g & True if g.dtype == np.bool_ else g * 1


# kind -> (gpupy's input, NumPy's input) for an ndarray of values x; both
# have the same values (and None where the kind does not apply to x).
KINDS = {
    "gpupy": lambda x: (gp.asarray(x), x),
    "numpy": lambda x: (x, x),
    "list": lambda x: (x.tolist(), x.tolist()),
    "strided": lambda x: (gp.asarray(np.repeat(x, 2, axis=0))[::2], np.repeat(x, 2, axis=0)[::2]) if x.ndim else None,
    "reversed": lambda x: (gp.asarray(np.ascontiguousarray(x[::-1]))[::-1], x) if x.ndim else None,
    "broadcast": lambda x: ((gp.broadcast_to(gp.asarray(x[:1]), x.shape), np.broadcast_to(x[:1], x.shape))
                            if x.ndim and len(x) else None),
    "lazy": lambda x: (_lazy(gp.asarray(x)), x),
}


def _forms(kind, arrays):
    """(gpupy's inputs, NumPy's inputs) for the arrays of a case, or None."""
    pairs = [KINDS[kind](np.asarray(a)) for a in arrays]
    if any(p is None for p in pairs):
        return None
    return [p[0] for p in pairs], [p[1] for p in pairs]


# --- comparing with NumPy ------------------------------------------------------------------------

def _outcome(fn):
    try:
        return "value", fn()
    except Exception as exc:  # noqa: BLE001 -- NumPy's exception, whatever its class, is the oracle
        return "error", exc


def assert_same_result(got, want):
    if isinstance(want, tuple):
        assert type(got) is tuple and len(got) == len(want), (got, want)
        for g, w in zip(got, want):
            assert_same_result(g, w)
        return
    if isinstance(want, np.ndarray):
        if gp._convert.is_supported(want.dtype):
            assert isinstance(got, gp.GpuArray), type(got)
        got = np.asarray(got)
        assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
        np.testing.assert_array_equal(got, want, strict=True)
        return
    assert type(got) is type(want) and (got == want or (got != got and want != want)), (got, want)


def check(name, fn, arrays, kind, count=1):
    """fn(xp, *inputs) gives NumPy's result or exception with gpupy, counted
    as `count` host placements under `name` and no fallback."""
    gp_inputs, np_inputs = _forms(kind, arrays)  # (cases() made only kinds that apply)
    want = _outcome(lambda: fn(np, *np_inputs))
    gp.reset_stats()
    got = _outcome(lambda: fn(gp, *gp_inputs))
    stats = gp.stats()
    assert got[0] == want[0], (got, want)
    if want[0] == "error":
        assert type(got[1]) is type(want[1]) and str(got[1]) == str(want[1]), (got[1], want[1])
    else:
        assert_same_result(got[1], want[1])
    assert stats["fallbacks"] == 0, stats["fallbacks_by_function"]
    assert stats["host_placements_by_function"].get(name, 0) == count, stats["host_placements_by_function"]


def cases(table):
    """pytest parameters (fn, arrays, kind) from {id: (fn, arrays)}: each
    case in every input kind that applies to its arrays (a 0-d array has
    no strided or reversed form, an empty one no broadcast form)."""
    return [pytest.param(fn, arrays, kind, id=f"{case_id}-{kind}") for case_id, (fn, arrays) in table.items()
            for kind in ALL_KINDS if _forms(kind, arrays) is not None]


ALL_KINDS = list(KINDS)

I64 = np.arange(10)
F32 = np.linspace(-2, 3, 9, dtype=np.float32)
F64 = np.array([1.5, -0.0, np.nan, np.inf, 2.25, -7.0])
BOOL = np.array([True, False, True, True, False])
U8 = np.arange(6, dtype=np.uint8)
M2 = np.arange(12.0).reshape(3, 4)
I2 = np.arange(12, dtype=np.int32).reshape(4, 3)
EMPTY = np.array([], dtype=np.float64)
ZERO_D = np.array(5.0)

# --- insert ----------------------------------------------------------------------------------------

INSERT = {
    "int-middle": (lambda xp, a: xp.insert(a, 5, 7), [I64]),
    "int-float-value": (lambda xp, a: xp.insert(a, 2, 1.75), [I64]),
    "int-start": (lambda xp, a: xp.insert(a, 0, -1), [I64]),
    "int-end": (lambda xp, a: xp.insert(a, 10, -1), [I64]),
    "int-negative": (lambda xp, a: xp.insert(a, -3, 99), [I64]),
    "int-most-negative": (lambda xp, a: xp.insert(a, -10, 99), [I64]),
    "axis-0": (lambda xp, a: xp.insert(a, 4, 2.5, axis=0), [F32]),
    "axis-minus-1": (lambda xp, a: xp.insert(a, 4, 2.5, axis=-1), [F32]),
    "float-nan": (lambda xp, a: xp.insert(a, 1, float("nan")), [F64]),
    "bool": (lambda xp, a: xp.insert(a, 2, False), [BOOL]),
    "bool-int-value": (lambda xp, a: xp.insert(a, 2, 3), [BOOL]),
    "uint8-value": (lambda xp, a: xp.insert(a, 2, 255), [U8]),
    "list-of-positions": (lambda xp, a: xp.insert(a, [1, 3, 3], [10, 20, 30]), [I64]),
    "unsorted-positions": (lambda xp, a: xp.insert(a, [5, 1, -1], 0), [I64]),
    "slice": (lambda xp, a: xp.insert(a, slice(1, 7, 2), -5), [I64]),
    "array-of-positions": (lambda xp, a: xp.insert(a, np.array([2, 2]), [8, 9]), [I64]),
    "one-element-list": (lambda xp, a: xp.insert(a, [4], 8), [I64]),
    "empty-positions": (lambda xp, a: xp.insert(a, [], 8), [I64]),
    "several-values": (lambda xp, a: xp.insert(a, 3, [7, 8, 9]), [I64]),
    "values-array": (lambda xp, a, v: xp.insert(a, 2, v), [F32, np.array([1.0, 2.0], np.float32)]),
    "positions-array": (lambda xp, a, i: xp.insert(a, i, 0.5), [F32, np.array([0, 3, 9])]),
    "2d-flattened": (lambda xp, a: xp.insert(a, 5, -1.0), [M2]),
    "2d-row": (lambda xp, a: xp.insert(a, 1, [7, 8, 9, 10], axis=0), [M2]),
    "2d-row-broadcast": (lambda xp, a: xp.insert(a, 1, 5, axis=0), [M2]),
    "2d-column": (lambda xp, a: xp.insert(a, [1], [[1], [2], [3]], axis=1), [M2]),
    "2d-columns": (lambda xp, a: xp.insert(a, [0, 2], 9, axis=1), [I2]),
    "empty": (lambda xp, a: xp.insert(a, 0, 1.0), [EMPTY]),
    "0d": (lambda xp, a: xp.insert(a, 0, 1.0), [ZERO_D]),
    # bad input: NumPy's exception
    "out-of-range": (lambda xp, a: xp.insert(a, 11, 1), [I64]),
    "out-of-range-negative": (lambda xp, a: xp.insert(a, -11, 1), [I64]),
    "float-position": (lambda xp, a: xp.insert(a, 1.5, 1), [I64]),
    "2d-positions": (lambda xp, a: xp.insert(a, [[1]], 1), [I64]),
    "value-overflow": (lambda xp, a: xp.insert(a, 0, 300), [U8]),
    "bad-axis": (lambda xp, a: xp.insert(a, 0, 1.0, axis=2), [M2]),
    "bad-axis-1d": (lambda xp, a: xp.insert(a, 0, 1.0, axis=1), [I64]),
    "bad-values-shape": (lambda xp, a: xp.insert(a, 1, [1, 2], axis=0), [M2]),
}


@pytest.mark.parametrize("fn, arrays, kind", cases(INSERT))
def test_insert(gpu, fn, arrays, kind):
    check("insert", fn, arrays, kind)


# --- delete ----------------------------------------------------------------------------------------

MASK10 = np.array([True, False] * 5)

DELETE = {
    "int": (lambda xp, a: xp.delete(a, 5), [I64]),
    "first": (lambda xp, a: xp.delete(a, 0), [I64]),
    "last": (lambda xp, a: xp.delete(a, 9), [I64]),
    "negative": (lambda xp, a: xp.delete(a, -1), [I64]),
    "most-negative": (lambda xp, a: xp.delete(a, -10), [I64]),
    "axis-0": (lambda xp, a: xp.delete(a, 3, axis=0), [F32]),
    "axis-minus-1": (lambda xp, a: xp.delete(a, 3, axis=-1), [F32]),
    "float": (lambda xp, a: xp.delete(a, 2), [F64]),
    "bool": (lambda xp, a: xp.delete(a, 1), [BOOL]),
    "numpy-integer": (lambda xp, a: xp.delete(a, np.int64(4)), [I64]),
    "list": (lambda xp, a: xp.delete(a, [0, 2, 2, -1]), [I64]),
    "one-element-list": (lambda xp, a: xp.delete(a, [3]), [I64]),
    "empty-list": (lambda xp, a: xp.delete(a, []), [I64]),
    "slice": (lambda xp, a: xp.delete(a, slice(None, None, 3)), [I64]),
    "slice-negative-step": (lambda xp, a: xp.delete(a, slice(8, 1, -2)), [I64]),
    "slice-empty": (lambda xp, a: xp.delete(a, slice(5, 5)), [I64]),
    "mask": (lambda xp, a: xp.delete(a, MASK10), [I64]),
    "positions-array": (lambda xp, a, i: xp.delete(a, i), [F32, np.array([0, 4, 8])]),
    "2d-flattened": (lambda xp, a: xp.delete(a, 7), [M2]),
    "2d-row": (lambda xp, a: xp.delete(a, 1, axis=0), [M2]),
    "2d-columns": (lambda xp, a: xp.delete(a, [0, 2], axis=1), [I2]),
    "2d-column-slice": (lambda xp, a: xp.delete(a, slice(1, None), axis=1), [M2]),
    "0d-empty-list": (lambda xp, a: xp.delete(a, []), [ZERO_D]),
    # bad input: NumPy's exception
    "out-of-range": (lambda xp, a: xp.delete(a, 10), [I64]),
    "out-of-range-negative": (lambda xp, a: xp.delete(a, -11), [I64]),
    "list-out-of-range": (lambda xp, a: xp.delete(a, [1, 10]), [I64]),
    "float-position": (lambda xp, a: xp.delete(a, 1.5), [I64]),
    "mask-wrong-length": (lambda xp, a: xp.delete(a, np.ones(3, bool)), [I64]),
    "bad-axis": (lambda xp, a: xp.delete(a, 0, axis=3), [M2]),
    "empty": (lambda xp, a: xp.delete(a, 0), [EMPTY]),
}


@pytest.mark.parametrize("fn, arrays, kind", cases(DELETE))
def test_delete(gpu, fn, arrays, kind):
    check("delete", fn, arrays, kind)


# --- resize ----------------------------------------------------------------------------------------

RESIZE = {
    "grow": (lambda xp, a: xp.resize(a, (3, 7)), [I64]),
    "shrink": (lambda xp, a: xp.resize(a, 4), [F32]),
    "same": (lambda xp, a: xp.resize(a, (3, 4)), [M2]),
    "2d-to-1d": (lambda xp, a: xp.resize(a, 25), [M2]),
    "to-0d": (lambda xp, a: xp.resize(a, ()), [I64]),
    "to-empty": (lambda xp, a: xp.resize(a, (2, 0)), [I64]),
    "from-empty": (lambda xp, a: xp.resize(a, (2, 3)), [EMPTY]),
    "from-0d": (lambda xp, a: xp.resize(a, (2, 2)), [ZERO_D]),
    "bool": (lambda xp, a: xp.resize(a, 8), [BOOL]),
    "numpy-integer-shape": (lambda xp, a: xp.resize(a, np.int64(3)), [F64]),
    # bad input: NumPy's exception
    "negative": (lambda xp, a: xp.resize(a, -1), [I64]),
    "negative-dimension": (lambda xp, a: xp.resize(a, (2, -1)), [I64]),
}


@pytest.mark.parametrize("fn, arrays, kind", cases(RESIZE))
def test_resize(gpu, fn, arrays, kind):
    check("resize", fn, arrays, kind)


# --- correlate and convolve ---------------------------------------------------------------------

SIGNAL = np.array([1.0, 2.5, -3.0, 0.5, 4.0, 1.0, -2.0])
KERNEL = np.array([0.25, 0.5, -1.0])
ISIGNAL = np.array([3, 1, 4, 1, 5, 9, 2, 6])
IKERNEL = np.array([1, -2, 1])

SLIDING = {}
for _name in ("correlate", "convolve"):
    SLIDING.update({
        f"{_name}-default": (lambda xp, a, v, f=_name: getattr(xp, f)(a, v), [SIGNAL, KERNEL]),
        f"{_name}-valid": (lambda xp, a, v, f=_name: getattr(xp, f)(a, v, "valid"), [SIGNAL, KERNEL]),
        f"{_name}-same": (lambda xp, a, v, f=_name: getattr(xp, f)(a, v, mode="same"), [SIGNAL, KERNEL]),
        f"{_name}-full": (lambda xp, a, v, f=_name: getattr(xp, f)(a, v, mode="full"), [SIGNAL, KERNEL]),
        f"{_name}-kernel-longer": (lambda xp, a, v, f=_name: getattr(xp, f)(v, a, mode="full"), [SIGNAL, KERNEL]),
        f"{_name}-int": (lambda xp, a, v, f=_name: getattr(xp, f)(a, v, mode="same"), [ISIGNAL, IKERNEL]),
        f"{_name}-float32": (lambda xp, a, v, f=_name: getattr(xp, f)(a, v, "full"),
                             [SIGNAL.astype(np.float32), KERNEL.astype(np.float32)]),
        f"{_name}-mixed": (lambda xp, a, v, f=_name: getattr(xp, f)(a, v, "full"), [ISIGNAL, KERNEL]),
        f"{_name}-bool": (lambda xp, a, v, f=_name: getattr(xp, f)(a, v, "full"), [BOOL, BOOL[:2]]),
        f"{_name}-one-element": (lambda xp, a, v, f=_name: getattr(xp, f)(a, v), [SIGNAL[:1], KERNEL[:1]]),
        f"{_name}-0d": (lambda xp, a, v, f=_name: getattr(xp, f)(a, v), [ZERO_D, KERNEL]),
        # bad input: NumPy's exception
        f"{_name}-empty-first": (lambda xp, a, v, f=_name: getattr(xp, f)(a, v), [EMPTY, KERNEL]),
        f"{_name}-empty-second": (lambda xp, a, v, f=_name: getattr(xp, f)(a, v), [SIGNAL, EMPTY]),
        f"{_name}-2d": (lambda xp, a, v, f=_name: getattr(xp, f)(a, v), [M2, KERNEL]),
        f"{_name}-bad-mode": (lambda xp, a, v, f=_name: getattr(xp, f)(a, v, mode="middle"), [SIGNAL, KERNEL]),
    })
del _name


@pytest.mark.parametrize("fn, arrays, kind", cases(SLIDING))
def test_correlate_and_convolve(gpu, fn, arrays, kind):
    check(fn.__defaults__[0], fn, arrays, kind)  # (the function's name, bound as a default)


# --- polyfit ---------------------------------------------------------------------------------------

X = np.linspace(-1, 2, 12)
Y = 0.5 * X ** 3 - X + 0.25 + np.sin(7 * X) * 0.01
Y2 = np.stack([Y, 2 * Y - 1], axis=1)
W = np.linspace(1, 2, 12)

POLYFIT = {
    "line": (lambda xp, x, y: xp.polyfit(x, y, 1), [X, Y]),
    "cubic": (lambda xp, x, y: xp.polyfit(x, y, 3), [X, Y]),
    "degree-0": (lambda xp, x, y: xp.polyfit(x, y, 0), [X, Y]),
    "float32": (lambda xp, x, y: xp.polyfit(x, y, 2), [X.astype(np.float32), Y.astype(np.float32)]),
    "int": (lambda xp, x, y: xp.polyfit(x, y, 2), [np.arange(8), np.arange(8) ** 2 - 3]),
    "two-columns": (lambda xp, x, y: xp.polyfit(x, y, 2), [X, Y2]),
    "weights": (lambda xp, x, y, w: xp.polyfit(x, y, 2, w=w), [X, Y, W]),
    "full": (lambda xp, x, y: xp.polyfit(x, y, 2, full=True), [X, Y]),
    "full-rcond": (lambda xp, x, y: xp.polyfit(x, y, 2, rcond=1e-3, full=True), [X, Y]),
    "cov": (lambda xp, x, y: xp.polyfit(x, y, 2, cov=True), [X, Y]),
    "cov-unscaled": (lambda xp, x, y, w: xp.polyfit(x, y, 2, w=w, cov="unscaled"), [X, Y, W]),
    "cov-two-columns": (lambda xp, x, y: xp.polyfit(x, y, 1, cov=True), [X, Y2]),
    "positional": (lambda xp, x, y, w: xp.polyfit(x, y, 2, None, False, w), [X, Y, W]),
    # bad input: NumPy's exception
    "negative-degree": (lambda xp, x, y: xp.polyfit(x, y, -1), [X, Y]),
    "empty": (lambda xp, x, y: xp.polyfit(x, y, 1), [EMPTY, EMPTY]),
    "2d-x": (lambda xp, x, y: xp.polyfit(x, y, 1), [M2, Y[:4]]),
    "lengths-differ": (lambda xp, x, y: xp.polyfit(x, y, 1), [X, Y[:5]]),
    "3d-y": (lambda xp, x, y: xp.polyfit(x, y, 1), [X, np.zeros((12, 2, 2))]),
    "weights-length": (lambda xp, x, y, w: xp.polyfit(x, y, 1, w=w), [X, Y, W[:3]]),
    "cov-too-few-points": (lambda xp, x, y: xp.polyfit(x, y, 2, cov=True), [X[:3], Y[:3]]),
}


@pytest.mark.parametrize("fn, arrays, kind", cases(POLYFIT))
def test_polyfit(gpu, fn, arrays, kind):
    check("polyfit", fn, arrays, kind)


def test_polyfit_warns_as_numpy(gpu):
    """A fit of more coefficients than the points determine: NumPy's
    RankWarning, from NumPy's own call."""
    x, y = np.array([0.0, 0.0, 1.0]), np.array([1.0, 2.0, 3.0])
    with pytest.warns(np.exceptions.RankWarning) as want:
        expected = np.polyfit(x, y, 2)
    with pytest.warns(np.exceptions.RankWarning) as got:
        result = gp.polyfit(gp.asarray(x), gp.asarray(y), 2)
    assert [str(w.message) for w in got] == [str(w.message) for w in want]
    assert_same_result(result, expected)


# --- ufunc.reduceat ------------------------------------------------------------------------------

R = np.array([3, 1, 4, 1, 5, 9, 2, 6, 5, 3], dtype=np.int32)
RF = np.array([0.5, -1.5, 2.0, np.nan, 4.0, -0.0, 1e30, 2.5], dtype=np.float32)
R2 = np.arange(24.0).reshape(4, 6) - 7

REDUCEAT = {}
for _ufunc in ("add", "multiply", "maximum", "minimum", "subtract", "logical_and", "bitwise_or", "fmax"):
    REDUCEAT[f"{_ufunc}-int32"] = (lambda xp, a, u=_ufunc: getattr(xp, u).reduceat(a, [0, 4, 1, 5, 9]), [R])
    REDUCEAT[f"{_ufunc}-bool"] = (lambda xp, a, u=_ufunc: getattr(xp, u).reduceat(a, [0, 2, 4]), [BOOL])
for _ufunc in ("add", "multiply", "maximum", "minimum", "fmin"):
    REDUCEAT[f"{_ufunc}-float32"] = (lambda xp, a, u=_ufunc: getattr(xp, u).reduceat(a, [0, 3, 3, 6]), [RF])
REDUCEAT.update({
    "add-axis-1": (lambda xp, a: xp.add.reduceat(a, [0, 2, 5], axis=1), [R2]),
    "maximum-axis-0": (lambda xp, a: xp.maximum.reduceat(a, [1, 0, 3], axis=0), [R2]),
    "add-dtype": (lambda xp, a: xp.add.reduceat(a, [0, 5], dtype=np.int64), [R]),
    "add-float64-dtype": (lambda xp, a: xp.add.reduceat(a, [0, 5], 0, np.float64), [R]),
    "add-index-array": (lambda xp, a, i: xp.add.reduceat(a, i), [R, np.array([0, 6, 2])]),
    "add-empty-indices": (lambda xp, a: xp.add.reduceat(a, []), [R]),
    "add-float-indices": (lambda xp, a: xp.add.reduceat(a, [0.5]), [R]),
    "add-empty-array": (lambda xp, a: xp.add.reduceat(a, []), [EMPTY]),
    # bad input: NumPy's exception
    "add-index-out-of-range": (lambda xp, a: xp.add.reduceat(a, [0, 99]), [R]),
    "add-negative-index": (lambda xp, a: xp.add.reduceat(a, [-1]), [R]),
    "add-0d": (lambda xp, a: xp.add.reduceat(a, [0]), [ZERO_D]),
    "add-bad-axis": (lambda xp, a: xp.add.reduceat(a, [0], axis=1), [R]),
    "sin-unary": (lambda xp, a: xp.sin.reduceat(a, [0]), [RF]),
    "add-2d-indices": (lambda xp, a: xp.add.reduceat(a, [[0, 1]]), [R]),
})
del _ufunc


@pytest.mark.parametrize("case_id, kind", [(case_id, kind) for case_id, (_, arrays) in REDUCEAT.items()
                                            for kind in ALL_KINDS if _forms(kind, arrays) is not None])
def test_reduceat(gpu, case_id, kind):
    fn, arrays = REDUCEAT[case_id]
    check(case_id.split("-")[0] + ".reduceat", fn, arrays, kind)


def test_reduceat_reached_through_numpy(gpu):
    """numpy.add.reduceat(g, ...) (__array_ufunc__) is gpupy's placement."""
    g = gp.asarray(R)
    result = np.maximum.reduceat(g, [0, 3])
    assert isinstance(result, gp.GpuArray)
    assert_same_result(result, np.maximum.reduceat(R, [0, 3]))
    assert gp.stats()["host_placements_by_function"] == {"maximum.reduceat": 1}
    assert gp.stats()["fallbacks"] == 0


@pytest.mark.parametrize("how", ["keyword", "positional", "tuple"])
def test_reduceat_out_is_written(gpu, how):
    """out= (keyword, positional or a one-tuple) receives NumPy's result,
    which is the out array itself, as in NumPy."""
    g = gp.asarray(R)
    out = gp.zeros(3, dtype=np.int64)
    if how == "keyword":
        result = gp.add.reduceat(g, [0, 4, 1], out=out)
    elif how == "positional":
        result = gp.add.reduceat(g, [0, 4, 1], 0, None, out)
    else:
        result = gp.add.reduceat(g, [0, 4, 1], out=(out,))
    expected = np.add.reduceat(R, [0, 4, 1], out=np.zeros(3, dtype=np.int64))
    assert result is out
    assert_same_result(out, expected)
    assert gp.stats()["host_placements_by_function"] == {"add.reduceat": 1}
    assert gp.stats()["fallbacks"] == 0


def test_reduceat_out_of_wrong_shape_raises_numpys_error(gpu):
    out = gp.zeros(5, dtype=np.int64)
    with pytest.raises(ValueError) as got:
        gp.add.reduceat(gp.asarray(R), [0, 4, 1], out=out)
    with pytest.raises(ValueError) as want:
        np.add.reduceat(R, [0, 4, 1], out=np.zeros(5, dtype=np.int64))
    assert str(got.value) == str(want.value)
    np.testing.assert_array_equal(np.asarray(out), np.zeros(5, dtype=np.int64))


def test_host_ufuncs_reduceat_stays_a_fallback(gpu):
    """gcd has no device op: its reduceat, like its calls, is NumPy's, counted."""
    with gp.fallback_mode("silent"):
        gp.reset_stats()
        result = gp.gcd.reduceat(gp.asarray(R), [0, 4])
    assert_same_result(result, np.gcd.reduceat(R, [0, 4]))
    assert gp.stats()["fallbacks_by_function"] == {"gcd.reduceat": 1}


# --- mgrid and ogrid ---------------------------------------------------------------------------

GRIDS = {
    "2d": lambda g: g[0:3, 0:4],
    "1d": lambda g: g[0:5],
    "1d-stop-only": lambda g: g[:4],
    "start-step": lambda g: g[2:11:3],
    "negative-step": lambda g: g[5:0:-1],
    "negative-step-2d": lambda g: g[3:-3:-2, 0:2],
    "float-step": lambda g: g[-1:1:0.5],
    "float-stop": lambda g: g[0:2.5],
    "float-bounds-2d": lambda g: g[0:1:0.25, -1:1:0.5],
    "complex-step": lambda g: g[0:1:5j],
    "complex-step-2d": lambda g: g[0:1:3j, 0:2:5j],
    "complex-one-point": lambda g: g[2:7:1j],
    "complex-and-int": lambda g: g[0:3, 0:1:4j],
    "3d": lambda g: g[0:2, 0:3, 0:4],
    "empty": lambda g: g[1:1],
    "empty-2d": lambda g: g[0:3, 2:2],
    "numpy-integers": lambda g: g[np.int32(0):np.int64(4)],
    "numpy-float": lambda g: g[0:np.float32(1.5):np.float32(0.5)],
    "one-slice-tuple": lambda g: g[0:3,],
    # bad input: NumPy's exception
    "zero-step": lambda g: g[0:3:0],
    "zero-step-2d": lambda g: g[0:3, 0:3:0],
    "string": lambda g: g["a":3],
    "no-stop": lambda g: g[0:],
    "no-stop-2d": lambda g: g[0:2, 0:],
}


@pytest.mark.parametrize("helper", ["mgrid", "ogrid"])
@pytest.mark.parametrize("case_id", list(GRIDS))
def test_grids(gpu, helper, case_id):
    want = _outcome(lambda: GRIDS[case_id](getattr(np, helper)))
    gp.reset_stats()
    got = _outcome(lambda: GRIDS[case_id](getattr(gp, helper)))
    assert got[0] == want[0], (got, want)
    if want[0] == "error":
        assert type(got[1]) is type(want[1]) and str(got[1]) == str(want[1])
    else:
        assert_same_result(got[1], want[1])
    stats = gp.stats()
    assert stats["fallbacks"] == 0
    assert stats["host_placements_by_function"] == {helper: 1}


@pytest.mark.parametrize("helper", ["mgrid", "ogrid"])
def test_grid_bounds_from_gpupy_arrays(gpu, helper):
    """A bound that is a gpupy array (a reduction's result) is taken as
    NumPy takes a 0-d array."""
    n = gp.asarray(np.array([1, 4, 2])).max()
    got = getattr(gp, helper)[0:n, 0.5:n:0.5]
    want = getattr(np, helper)[0:np.int64(4), 0.5:np.int64(4):0.5]
    assert_same_result(got, want)
    got = getattr(gp, helper)[0:n]
    assert_same_result(got, getattr(np, helper)[0:np.array(4)])
    assert gp.stats()["fallbacks"] == 0
    assert gp.stats()["host_placements_by_function"] == {helper: 2}


def test_grids_are_not_fallbacks_and_r_c_still_are(gpu):
    assert not gp.is_fallback(gp.mgrid) and not gp.is_fallback(gp.ogrid)
    assert gp.is_fallback(gp.r_) and gp.is_fallback(gp.c_)
    with gp.fallback_mode("silent"):
        gp.reset_stats()
        r = gp.r_[gp.arange(3), 7]
        c = gp.c_[gp.arange(3), gp.arange(3)]
    assert_same_result(r, np.r_[np.arange(3), 7])
    assert_same_result(c, np.c_[np.arange(3), np.arange(3)])
    assert gp.stats()["fallbacks_by_function"] == {"r_": 1, "c_": 1}


# --- the entry points and the mechanism ------------------------------------------------------------

def test_numpy_functions_on_gpupy_arrays_reach_the_placements(gpu):
    """numpy.insert(g, ...) (__array_function__) is gpupy's placement too."""
    g, k = gp.asarray(SIGNAL), gp.asarray(KERNEL)
    results = [np.insert(g, 2, 1.0), np.insert(g, [1, 2], 1.0), np.delete(g, 3), np.delete(g, [0, 1]),
               np.resize(g, 9), np.correlate(g, k), np.convolve(g, k), np.polyfit(g, g * 2, 1)]
    assert all(isinstance(r, gp.GpuArray) for r in results)
    assert gp.stats()["fallbacks"] == 0
    assert gp.stats()["host_placements_by_function"] == {"insert": 2, "delete": 2, "resize": 1, "correlate": 1,
                                                          "convolve": 1, "polyfit": 1}


def test_placements_are_counted_per_call(gpu):
    g = gp.asarray(I64)
    for i in range(5):
        g = gp.insert(g, i, -i)
        g = gp.delete(g, 0)
    np_a = I64
    for i in range(5):
        np_a = np.delete(np.insert(np_a, i, -i), 0)
    assert_same_result(g, np_a)
    assert gp.stats()["host_placements_by_function"] == {"insert": 5, "delete": 5}
    gp.reset_stats()
    assert gp.stats()["host_placements_by_function"] == {}


def test_results_are_new_arrays(gpu):
    """A result is never the argument's memory: writing into it leaves the
    argument as it was (as NumPy's new arrays do)."""
    g = gp.asarray(np.arange(6.0))
    for result in (gp.insert(g, 1, 9.0), gp.delete(g, 1), gp.delete(g, []), gp.resize(g, 6),
                   gp.delete(g, slice(3, 3))):
        result[...] = -1
    np.testing.assert_array_equal(np.asarray(g), np.arange(6.0))


def test_a_result_that_views_an_argument_becomes_its_view(gpu):
    """host_function keeps NumPy's views: a result NumPy made as a view of
    an argument is a view of that gpupy array (a write through it reaches
    the argument, as in NumPy)."""
    placed = gp._placement.host_function("view_test", lambda a, *, step: a[1::step])
    g = gp.asarray(np.arange(8.0))
    view = placed(g, step=2)
    assert isinstance(view, gp.GpuArray)
    np.testing.assert_array_equal(np.asarray(view), np.arange(8.0)[1::2])
    view[0] = 100.0
    assert float(g[1]) == 100.0
    keyword_view = placed(a=g, step=3)  # the array given by keyword
    keyword_view[1] = -5.0
    assert float(g[4]) == -5.0
    assert gp.stats()["host_placements_by_function"] == {"view_test": 2}


def test_host_dtypes_stay_numpys(gpu):
    """A result of a dtype gpupy does not hold (complex) is NumPy's array."""
    x = np.array([1 + 2j, 3 - 1j, 0.5j])
    got = gp.insert(x, 1, 2j)
    assert type(got) is np.ndarray
    np.testing.assert_array_equal(got, np.insert(x, 1, 2j))
    got = gp.convolve(gp.asarray(SIGNAL), x)
    assert type(got) is np.ndarray
    np.testing.assert_array_equal(got, np.convolve(SIGNAL, x))
    assert gp.stats()["fallbacks"] == 0


# --- argmin / argmax of a whole array: NumPy's on the host values at once -------------------------

ARG_VALUES = {
    "floats with a NaN": np.array([3.0, 1.0, np.nan, 0.0, np.nan]),
    "ties": np.array([2, 0, 5, 0, 5], np.int32),
    "matrix": np.array([[1.5, 7.0], [-2.0, 7.0]], np.float32),
    "0-d": np.array(4.0),
    "bools": np.array([False, True, True]),
    "signed zeros": np.array([0.0, -0.0, 1.0, -0.0, -1.0, -1.0], np.float32),
    "infinities then NaN": np.array([np.inf, -np.inf, np.nan]),
    "uint64 extremes": np.array([2**64 - 1, 0, 2**63, 0, 2**64 - 1], np.uint64),
}


@pytest.mark.parametrize("name", ["argmin", "argmax"])
@pytest.mark.parametrize("values, kind", [(v, k) for v in sorted(ARG_VALUES) for k in ("gpupy", "strided", "reversed", "lazy")
                                          if KINDS[k](ARG_VALUES[v]) is not None])
def test_arg_extreme_of_a_whole_array(gpu, name, values, kind):
    # `argmin(abs(e - symbols))` in a loop over samples: where data work
    # is placed on the host (a CPU renderer), NumPy's arg-reduction, one
    # host placement, a gpupy scalar as gpupy's reductions give; else the
    # device's formulation, no placement. NumPy's result either way.
    g, h = KINDS[kind](ARG_VALUES[values])
    want = getattr(np, name)(h)
    for i, call in enumerate((lambda: getattr(gp, name)(g), lambda: getattr(g, name)())):
        gp.reset_stats()
        got = call()
        assert isinstance(got, gp.ndarray) and got.shape == () and got.dtype == np.asarray(want).dtype
        assert int(got) == int(want)
        s = gp.stats()
        assert s["fallbacks"] == 0
        on_host = gp._core.products_on_host()
        assert s["host_placements_by_function"] == ({name: 1} if on_host else {}), s["host_placements_by_function"]
        # Values already on the host are searched in one pass in C++ (lazy
        # ones are evaluated by the first call, which hands them to NumPy).
        on_host_already = kind != "lazy" or i > 0
        assert s["direct_host_ops"] == (1 if on_host and on_host_already else 0), (kind, i, s["direct_host_ops"])


# --- scans below 2^20 elements: NumPy's own accumulate on the host values -------------------------

def _scan_cases():
    rng = np.random.default_rng(5)
    overflow_after_inf = np.zeros(300, np.float32)
    overflow_after_inf[0] = -np.inf  # the running sum is -inf from here on
    overflow_after_inf[256:258] = 3e38  # a later chunk's own partial sums overflow to +inf
    nan_then_opposite_infinities = np.zeros(400, np.float32)
    nan_then_opposite_infinities[3] = np.nan
    nan_then_opposite_infinities[300:302] = [np.inf, -np.inf]  # makes no NaN after a NaN: NumPy warns of nothing
    return {
        "float32 rounding": rng.random(100_000).astype(np.float32),
        "float64 rows": rng.standard_normal((300, 700)),
        "overflow after an infinity": overflow_after_inf,
        "NaN then opposite infinities": nan_then_opposite_infinities,
        "int8 widened": rng.integers(-100, 100, 5000).astype(np.int8),
    }


@pytest.mark.parametrize("fn", ["cumsum", "cumprod", "add.accumulate", "maximum.accumulate"])
@pytest.mark.parametrize("case", sorted(_scan_cases()))
def test_scans_are_numpys_own_where_data_work_is_on_the_host(gpu, fn, case):
    # NumPy's accumulate is sequential: its rounding, and the infinities and
    # NaNs of its running sum, are what a chunked scan cannot reproduce (it
    # reassociates: a chunk's partial sums overflow to +inf after a -inf,
    # NaN where NumPy has -inf). Where data work is placed on the host, a
    # scan of fewer than 2^20 elements is NumPy's own: its values bit for
    # bit, its warnings, one host placement; on a device, the chunked scan.
    h = _scan_cases()[case]
    if fn == "cumprod" and h.dtype.kind == "f":
        h = (1 + h / 1e4).astype(h.dtype)  # products that stay finite for the rounding case
    call = {"cumsum": lambda m, x: m.cumsum(x, axis=-1), "cumprod": lambda m, x: m.cumprod(x, axis=-1),
            "add.accumulate": lambda m, x: m.add.accumulate(x, axis=-1),
            "maximum.accumulate": lambda m, x: m.maximum.accumulate(x, axis=-1)}[fn]
    want_warnings = gpu.warnings_of(lambda: call(np, h))
    want = call(np, h)
    gp.reset_stats()
    got_warnings = gpu.warnings_of(lambda: np.asarray(call(gp, gp.asarray(h))))
    got = np.asarray(call(gp, gp.asarray(h)))
    assert got.dtype == want.dtype and got.shape == want.shape
    if gp._core.products_on_host():
        np.testing.assert_array_equal(got, want)
        assert got_warnings == want_warnings
        assert gp.stats()["host_placements_by_function"] == {fn: 2}, gp.stats()["host_placements_by_function"]
    else:
        assert set(got_warnings) <= set(want_warnings) or case.startswith(("overflow", "NaN"))
        assert gp.stats()["host_placements_by_function"] == {}


def test_a_scan_of_two_million_elements_stays_chunked(gpu):
    # Above 2^20 elements the chunked scan's threads beat NumPy's sequential
    # one (a cumsum of a reversed view of 2,000,000 float64: 3x): no
    # placement, NumPy's values within a float sum's rounding -- each of
    # the n - 1 additions of either order off by at most half an ulp of a
    # partial sum, every partial sum of these positive values at most the
    # sum itself: 2 (n - 1) eps relative, both orders together.
    h = np.random.default_rng(6).random(2_000_000)
    gp.reset_stats()
    got = np.asarray(gp.cumsum(gp.asarray(h)[::-1]))
    assert gp.stats()["host_placements_by_function"] == {}
    np.testing.assert_allclose(got, np.cumsum(h[::-1]), rtol=2 * (h.size - 1) * np.finfo(h.dtype).eps)
